# Distillation trainers: X2Static (sent/para), BERT + Skip-gram (and its Fig. 4/5 sweeps), Context-to-Vec.
# Each reads the teacher stage's per-shard features and writes <results>/embeddings/<name>/seed<N>/.
# Names, inputs and options come from staticvec.train.student_plan.StudentPlan; every rule is one CLI call.
# Needs R (results dir) and the teacher rules (teacher.smk) for the features.

from pathlib import Path

from staticvec.train.student_plan import StudentPlan

SP = StudentPlan(config)
STUDENT_GPU = 1 if config["teacher"].get("gpu") else 0
STUDENT_EMB = f"{R}/embeddings"


def student_inputs(method):
    def inputs(wildcards):
        return {"features": SP.features(method, wildcards.spec), "vocab": SP.vocab(method),
                "feature_vocab": SP.feature_vocab()}

    return inputs


def student_args(method):
    return lambda wildcards: SP.args(method, wildcards.spec)


def student_checkpoint(wildcards, output):
    return str(Path(output.vectors).parent / "checkpoint.pt")


wildcard_constraints:
    seed=r"\d+",


rule train_x2static:
    input:
        unpack(student_inputs("x2static")),
    output:
        vectors=f"{STUDENT_EMB}/x2static-{{spec}}/seed{{seed}}/vectors.bin",
        record=f"{STUDENT_EMB}/x2static-{{spec}}/seed{{seed}}/vectors.json",
    wildcard_constraints:
        spec=r"(sent|para)-[A-Za-z0-9_.-]+",
    params:
        args=student_args("x2static"),
        checkpoint=student_checkpoint,
    log:
        "logs/train/x2static-{spec}/seed{seed}.log",
    benchmark:
        f"{R}/benchmarks/train/x2static-{{spec}}/seed{{seed}}.tsv"
    threads: SP.threads("x2static")
    resources:
        mem_mb=8000,
        runtime=720,
        gpu=STUDENT_GPU,
    shell:
        "staticvec train x2static --features {input.features} --vocab {input.vocab} --feature-vocab {input.feature_vocab}"
        " {params.args} --seed {wildcards.seed} --checkpoint {params.checkpoint} --out {output.vectors} --record {output.record} > {log} 2>&1"


rule train_bert_sg:
    input:
        unpack(student_inputs("bert_sg")),
    output:
        vectors=f"{STUDENT_EMB}/bert_sg-{{spec}}/seed{{seed}}/vectors.bin",
        record=f"{STUDENT_EMB}/bert_sg-{{spec}}/seed{{seed}}/vectors.json",
        model=f"{STUDENT_EMB}/bert_sg-{{spec}}/seed{{seed}}/model.pt",
    wildcard_constraints:
        spec=r"[A-Za-z0-9_.-]+",
    params:
        args=student_args("bert_sg"),
        checkpoint=student_checkpoint,
    log:
        "logs/train/bert_sg-{spec}/seed{seed}.log",
    benchmark:
        f"{R}/benchmarks/train/bert_sg-{{spec}}/seed{{seed}}.tsv"
    threads: SP.threads("bert_sg")
    resources:
        mem_mb=8000,
        runtime=720,
        gpu=STUDENT_GPU,
    shell:
        "staticvec train bert-sg --features {input.features} --vocab {input.vocab} --feature-vocab {input.feature_vocab}"
        " {params.args} --seed {wildcards.seed} --checkpoint {params.checkpoint} --model {output.model}"
        " --out {output.vectors} --record {output.record} > {log} 2>&1"


rule bert_sg_attention:
    # Figure 7: the attention weights a_j of the trained model on the configured sentences
    input:
        model=f"{STUDENT_EMB}/bert_sg-{{spec}}/seed{{seed}}/model.pt",
    output:
        f"{STUDENT_EMB}/bert_sg-{{spec}}/seed{{seed}}/attention.json",
    wildcard_constraints:
        spec=r"[A-Za-z0-9_.-]+",
    params:
        args=lambda wildcards: SP.attention_args(wildcards.spec),
    log:
        "logs/train/bert_sg-{spec}/seed{seed}.attention.log",
    threads: 1
    resources:
        mem_mb=4000,
        runtime=15,
    shell:
        "staticvec train bert-sg-attention --model {input.model} {params.args} --out {output} > {log} 2>&1"


rule train_c2v:
    input:
        unpack(student_inputs("c2v")),
    output:
        vectors=f"{STUDENT_EMB}/c2v-{{spec}}/seed{{seed}}/vectors.bin",
        record=f"{STUDENT_EMB}/c2v-{{spec}}/seed{{seed}}/vectors.json",
        model=f"{STUDENT_EMB}/c2v-{{spec}}/seed{{seed}}/model.pt",
    wildcard_constraints:
        spec=r"[A-Za-z0-9_.-]+",
    params:
        args=student_args("c2v"),
        checkpoint=student_checkpoint,
    log:
        "logs/train/c2v-{spec}/seed{seed}.log",
    benchmark:
        f"{R}/benchmarks/train/c2v-{{spec}}/seed{{seed}}.tsv"
    threads: SP.threads("c2v")
    resources:
        mem_mb=8000,
        runtime=720,
        gpu=STUDENT_GPU,
    shell:
        "staticvec train c2v --features {input.features} --vocab {input.vocab} --feature-vocab {input.feature_vocab}"
        " {params.args} --seed {wildcards.seed} --checkpoint {params.checkpoint} --model {output.model}"
        " --out {output.vectors} --record {output.record} > {log} 2>&1"
