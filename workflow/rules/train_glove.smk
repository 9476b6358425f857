# GloVe on the merged window store of methods.glove.window; one run per seed.
# Needs cooc.smk (the store and CORPUS_VOCAB / VOCAB_FLAGS).

from staticvec.train.cli import method_flags

GLOVE = config["methods"]["glove"]
ON_GPU = config.get("device") == "cuda"


rule train_glove:
    input:
        cooc=f"{R}/cooc/window{GLOVE['window']}.cooc",
        vocab=CORPUS_VOCAB,
    output:
        vectors=f"{R}/embeddings/glove/seed{{seed}}/vectors.bin",
        record=f"{R}/embeddings/glove/seed{{seed}}/vectors.json",
    log:
        "logs/train/glove/seed{seed}.log",
    benchmark:
        f"{R}/benchmarks/train/glove/seed{{seed}}.tsv"
    params:
        flags=method_flags("glove", GLOVE),
        checkpoint=f"{R}/embeddings/glove/seed{{seed}}/checkpoint.npz",  # survives a killed job; resumed
    threads: GLOVE["threads"]
    resources:
        mem_mb=8000,
        runtime=24 * 60,
        gpu=1 if ON_GPU else 0,
    shell:
        "staticvec train glove --cooc {input.cooc} --vocab {input.vocab} " + VOCAB_FLAGS +
        " {params.flags} --seed {wildcards.seed} --threads {threads} --device " + config.get("device", "auto") +
        " --checkpoint {params.checkpoint} --out {output.vectors} --record {output.record} > {log} 2>&1"
