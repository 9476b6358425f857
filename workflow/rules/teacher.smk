# Teacher stage: one pass of a contextual model per corpus shard and feature set (resumable; a GPU
# job each on a cluster), the MLM head fitted on encoders without one, and the contextual baselines.
# Paths and flags come from staticvec.teacher.plan.TeacherPlan; every rule is one CLI call.

from pathlib import Path

from staticvec.teacher.plan import TeacherPlan

TP = TeacherPlan(config)
TEACHER_GPU = 1 if config["teacher"].get("gpu") else 0


def teacher_feature_inputs(wildcards):
    inputs = {"shard": TP.corpus_shard(wildcards.shard), "vocab": TP.vocab()}
    if TP.uses_fitted_head(wildcards.teacher, wildcards.fset):
        inputs["head"] = TP.mlm_head(wildcards.teacher)
    return inputs


def teacher_feature_args(wildcards, input):
    args = TP.feature_args(wildcards.teacher, wildcards.fset)
    return args + (f" --mlm-head {input.head}" if "head" in input.keys() else "")


def teacher_fit_head_args(wildcards):
    return TP.fit_head_args(wildcards.teacher)


def teacher_baseline_args(wildcards):
    return TP.baseline_args(wildcards.teacher)


def teacher_ase_features(wildcards):
    return TP.all_features(wildcards.teacher, config["teacher"]["ase"]["feature_set"], int(wildcards.k))


def teacher_ase_flags(wildcards):
    return TP.baseline_args(wildcards.teacher) + (" --fallback-word" if config["teacher"]["ase"].get("fallback_word") else "")


def parent_dir(wildcards, output):
    return str(Path(output[0]).parent)


wildcard_constraints:
    shard=r"\d{5}",
    k=r"\d+",


rule teacher_mlm_head:
    input:
        shards=TP.corpus_shards,
    output:
        head=f"{R}/teacher/{{teacher}}/mlm_head.pt",
        report=f"{R}/teacher/{{teacher}}/mlm_head.json",
    params:
        args=teacher_fit_head_args,
    log:
        "logs/teacher/{teacher}/mlm_head.log",
    benchmark:
        f"{R}/benchmarks/teacher/{{teacher}}/mlm_head.tsv"
    threads: 2
    resources:
        mem_mb=8000,
        runtime=120,
        gpu=TEACHER_GPU,
    shell:
        "staticvec teacher fit-mlm-head {params.args} --shards {input.shards} --out {output.head} --report {output.report} > {log} 2>&1"


rule teacher_features:
    input:
        unpack(teacher_feature_inputs),
    output:
        f"{R}/teacher/{{teacher}}/features/{{fset}}/{{shard}}/features.json",
    params:
        args=teacher_feature_args,
        out=parent_dir,
    log:
        "logs/teacher/{teacher}/features/{fset}/{shard}.log",
    benchmark:
        f"{R}/benchmarks/teacher/{{teacher}}/features/{{fset}}/{{shard}}.tsv"
    threads: 2
    resources:
        mem_mb=16000,
        runtime=720,
        gpu=TEACHER_GPU,
    shell:
        "staticvec teacher features {params.args} --shard {input.shard} --vocab {input.vocab} --out {params.out} > {log} 2>&1"


rule teacher_baseline_token:
    input:
        vocab=TP.vocab(),
    output:
        f"{R}/teacher/{{teacher}}/baselines/token.txt",
    params:
        args=teacher_baseline_args,
    log:
        "logs/teacher/{teacher}/baseline_token.log",
    benchmark:
        f"{R}/benchmarks/teacher/{{teacher}}/baseline_token.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "staticvec teacher baseline token {params.args} --vocab {input.vocab} --out {output} > {log} 2>&1"


rule teacher_baseline_word:
    input:
        vocab=TP.vocab(),
    output:
        f"{R}/teacher/{{teacher}}/baselines/word-{{layer}}.txt",
    params:
        args=teacher_baseline_args,
    log:
        "logs/teacher/{teacher}/baseline_word_{layer}.log",
    benchmark:
        f"{R}/benchmarks/teacher/{{teacher}}/baseline_word_{{layer}}.tsv"
    threads: 2
    resources:
        mem_mb=8000,
        runtime=60,
        gpu=TEACHER_GPU,
    shell:
        "staticvec teacher baseline word {params.args} --vocab {input.vocab} --layers {wildcards.layer} --out {output} > {log} 2>&1"


rule teacher_baseline_ase:
    input:
        vocab=TP.vocab(),
        features=teacher_ase_features,
    output:
        f"{R}/teacher/{{teacher}}/baselines/ase-{{k}}of{{n}}/ase.json",
    params:
        args=teacher_ase_flags,
        out=parent_dir,
    log:
        "logs/teacher/{teacher}/baseline_ase_{k}of{n}.log",
    benchmark:
        f"{R}/benchmarks/teacher/{{teacher}}/baseline_ase_{{k}}of{{n}}.tsv"
    threads: 2
    resources:
        mem_mb=16000,
        runtime=60,
    shell:
        "staticvec teacher baseline ase {params.args} --vocab {input.vocab} --features {input.features} --out {params.out} > {log} 2>&1"
