# Skip-gram, CBOW and fastText through gensim on all corpus shards; one run per seed.
# Needs cooc.smk (CORPUS_SHARD_IDS / CORPUS_VOCAB / VOCAB_FLAGS).

from staticvec.train.cli import method_flags


rule train_gensim_baseline:
    input:
        shards=expand(f"{R}/corpus/shards/{{shard}}.tsv.gz", shard=CORPUS_SHARD_IDS),
        vocab=CORPUS_VOCAB,
    output:
        vectors=f"{R}/embeddings/{{method}}/seed{{seed}}/vectors.bin",
        record=f"{R}/embeddings/{{method}}/seed{{seed}}/vectors.json",
    log:
        "logs/train/{method}/seed{seed}.log",
    benchmark:
        f"{R}/benchmarks/train/{{method}}/seed{{seed}}.tsv"
    wildcard_constraints:
        method="skipgram|cbow|fasttext",
    params:
        command=lambda wc: "fasttext" if wc.method == "fasttext" else "word2vec",
        flags=lambda wc: method_flags(wc.method, config["methods"][wc.method]),
    threads: lambda wc: config["methods"][wc.method]["threads"]
    resources:
        mem_mb=8000,
        runtime=24 * 60,
    shell:
        "staticvec train {params.command} --shards {input.shards} --vocab {input.vocab} " + VOCAB_FLAGS +
        " {params.flags} --seed {wildcards.seed} --workers {threads}"
        " --out {output.vectors} --record {output.record} > {log} 2>&1"
