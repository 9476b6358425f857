# Co-occurrence stores: one counting job per corpus shard, then one merge job per store.
# Inputs follow the corpus stage's layout: <results>/corpus/shards/NNNNN.tsv.gz and the
# vocabulary <results>/corpus/vocab.tsv (the lead's staticvec.workflow helper names them).

COOC = config["cooc"]
CORPUS_SHARD_IDS = [f"{k:05d}" for k in range(config["corpus"]["shards"])]
CORPUS_VOCAB = f"{R}/corpus/vocab.tsv"
VOCAB_FLAGS = f"--min-count {config['corpus']['min_count']}" + (
    f" --max-vocab {config['corpus']['max_vocab']}" if config["corpus"].get("max_vocab") else ""
)
COOC_TMP = f"--tmp-dir {COOC['tmp_dir']}" if COOC.get("tmp_dir") else ""


rule cooc_window_shard:
    input:
        shard=f"{R}/corpus/shards/{{shard}}.tsv.gz",
        vocab=CORPUS_VOCAB,
    output:
        f"{R}/cooc/window{{window}}/shards/{{shard}}.cooc",
    log:
        f"logs/cooc/window{{window}}/{{shard}}.log",
    benchmark:
        f"{R}/benchmarks/cooc/window{{window}}/{{shard}}.tsv"
    wildcard_constraints:
        window=r"\d+",
    threads: 2  # one reads and looks up ids while the other counts
    resources:
        mem_mb=int(COOC["memory_gb"] * 1024 * 1.25) + 1024,
        runtime=240,
    shell:
        "staticvec cooc window --shards {input.shard} --vocab {input.vocab} " + VOCAB_FLAGS + " --window {wildcards.window}"
        " --memory-gb " + str(COOC["memory_gb"]) + " --max-open " + str(COOC["max_open_files"]) + " " + COOC_TMP +
        " --out {output} > {log} 2>&1"


rule cooc_window_merge:
    input:
        expand(f"{R}/cooc/window{{{{window}}}}/shards/{{shard}}.cooc", shard=CORPUS_SHARD_IDS),
    output:
        f"{R}/cooc/window{{window}}.cooc",
    log:
        f"logs/cooc/window{{window}}/merge.log",
    benchmark:
        f"{R}/benchmarks/cooc/window{{window}}/merge.tsv"
    wildcard_constraints:
        window=r"\d+",
    threads: 1
    resources:
        mem_mb=int(COOC["merge_memory_gb"] * 1024 * 1.25) + 1024,
        runtime=240,
    shell:
        "staticvec cooc merge {input} --memory-gb " + str(COOC["merge_memory_gb"]) +
        " --max-open " + str(COOC["max_open_files"]) + " " + COOC_TMP + " --out {output} > {log} 2>&1"
