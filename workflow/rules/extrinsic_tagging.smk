# Extrinsic sequence labelling (SemGloVe Table 2, Wang et al. Table 3, Context-to-Vec Table 3):
# one BiLSTM-CRF job per embedding × task × seed, then one summary (mean ± std) per embedding × task.
# Settings come from config["tagging"]; data locations from config["resources"] (PTB WSJ, CoNLL-2003,
# OntoNotes when the user supplies them; CoNLL-2000 and UD EWT otherwise) via
# staticvec.evaluate.tagging.data. Integration points for the lead's Workflow helper (names assumed):
# W.embedding_file(emb) is the embedding file of sheet row `emb`; the open data sets are read from
# the mirror's eval/sequence folder (W.resource_dir may replace task_data_location's paths).

from staticvec.evaluate.tagging.data import tag_data_arguments, tagger_arguments

TAGGING = config.get("tagging", {})
TAG_SEEDS = TAGGING.get("seeds") or config.get("seeds", [1])


def teacher_spec(teacher_id):
    return config.get("teacher", {}).get("models", {}).get(teacher_id, teacher_id)


wildcard_constraints:
    task="chunk|pos|ner",
    seed=r"\d+",


ruleorder: tag_contextual > tag


rule tag:
    input:
        vectors=lambda wc: W.embedding_file(wc.emb),
    output:
        f"{R}/eval/{{emb}}/tagging/{{task}}/seed{{seed}}.json",
    log:
        "logs/eval/{emb}/tagging/{task}/seed{seed}.log",
    benchmark:
        f"{R}/benchmarks/eval/{{emb}}/tagging/{{task}}/seed{{seed}}.tsv"
    params:
        data=lambda wc: tag_data_arguments(config, wc.task),
        args=tagger_arguments(config),
    threads: TAGGING.get("threads", 2)
    resources:
        mem_mb=6000,
        runtime=60,
        gpu=1 if TAGGING.get("gpu", False) else 0,
    shell:
        "staticvec tag --vectors {input.vectors} --name {wildcards.emb} --task {wildcards.task} {params.data} --seed {wildcards.seed} --threads {threads} {params.args} --out {output} > {log} 2>&1"


# The papers' BERT-base row: the teacher's frozen per-token vectors through the same tagger.
rule tag_contextual:
    output:
        f"{R}/eval/contextual-{{teacher}}/tagging/{{task}}/seed{{seed}}.json",
    log:
        "logs/eval/contextual-{teacher}/tagging/{task}/seed{seed}.log",
    benchmark:
        f"{R}/benchmarks/eval/contextual-{{teacher}}/tagging/{{task}}/seed{{seed}}.tsv"
    params:
        teacher=lambda wc: teacher_spec(wc.teacher),
        layer=TAGGING.get("contextual_layer", -1),
        data=lambda wc: tag_data_arguments(config, wc.task),
        args=tagger_arguments(config),
    threads: TAGGING.get("threads", 2)
    resources:
        mem_mb=8000,
        runtime=90,
        gpu=1 if TAGGING.get("gpu", False) else 0,
    shell:
        "staticvec tag --teacher {params.teacher} --layer {params.layer} --name contextual-{wildcards.teacher} --task {wildcards.task} {params.data} --seed {wildcards.seed} --threads {threads} {params.args} --out {output} > {log} 2>&1"


rule tag_summary:
    input:
        lambda wc: expand(f"{R}/eval/{wc.emb}/tagging/{wc.task}/seed{{seed}}.json", seed=TAG_SEEDS),
    output:
        json=f"{R}/eval/{{emb}}/tagging/{{task}}.json",
        csv=f"{R}/eval/{{emb}}/tagging/{{task}}.csv",
    log:
        "logs/eval/{emb}/tagging/{task}.summary.log",
    benchmark:
        f"{R}/benchmarks/eval/{{emb}}/tagging/{{task}}.summary.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    shell:
        "staticvec tag-summary {input} --out {output.json} --csv {output.csv} > {log} 2>&1"
