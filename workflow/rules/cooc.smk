# Window co-occurrences (GloVe's definition): one counting job per corpus shard, then merges —
# of all shards, or of the first K of N for a corpus fraction. The store format is shared with
# SemGloVe's builders (staticvec.cooc.store).

COOC = config["cooc"]
COOC_FLAGS = W.flags({"memory_gb": COOC["memory_gb"], "max_open": COOC["max_open_files"],
                      **({"tmp_dir": COOC["tmp_dir"]} if COOC.get("tmp_dir") else {})})
MERGE_FLAGS = W.flags({"memory_gb": COOC["merge_memory_gb"], "max_open": COOC["max_open_files"],
                       **({"tmp_dir": COOC["tmp_dir"]} if COOC.get("tmp_dir") else {})})


rule cooc_window_shard:
    # with the vocabulary of the corpus ({frac} empty) or of the fraction the shard is counted for
    # ({frac} = .KofN): GloVe deletes out-of-vocabulary words before its window, so a fraction's
    # counts are those of glove.c run on the fraction alone
    input:
        shard=W.shard("{shard}"),
        vocab=lambda wc: W.vocab(frac=wc.frac),
    output:
        f"{R}/cooc/window{{window}}{{frac}}/shards/{{shard}}.cooc",
    params:
        vocab=W.vocab_flags(),
        flags=COOC_FLAGS,
    log:
        f"{R}/logs/cooc/window{{window}}{{frac}}/{{shard}}.log",
    benchmark:
        f"{R}/benchmarks/cooc/window{{window}}{{frac}}/{{shard}}.tsv"
    wildcard_constraints:
        window=r"\d+",
        frac=r"(\.\d+of\d+)?",
    threads: 2  # one reads and looks up ids while the other counts
    resources:
        mem_mb=int(COOC["memory_gb"] * 1024 * 1.25) + 1024,
        runtime=240,
    conda:
        CPU_ENV
    shell:
        "staticvec cooc window --shards {input.shard} --vocab {input.vocab} {params.vocab}"
        " --window {wildcards.window} {params.flags} --out {output} > {log} 2>&1"


rule cooc_window_merge:
    # all shards ({frac} empty) or the first K of N ({frac} = .KofN: Figure 2b, sdR on a fraction;
    # ids of the fraction's own vocabulary)
    input:
        lambda wc: [f"{R}/cooc/window{wc.window}{wc.frac}/shards/{s}.cooc" for s in W.frac_shard_ids(wc.frac)],
    output:
        f"{R}/cooc/window{{window}}{{frac}}.cooc",
    params:
        flags=MERGE_FLAGS,
    log:
        f"{R}/logs/cooc/window{{window}}{{frac}}.merge.log",
    benchmark:
        f"{R}/benchmarks/cooc/window{{window}}{{frac}}.merge.tsv"
    wildcard_constraints:
        window=r"\d+",
        frac=r"(\.\d+of\d+)?",
    threads: 1
    resources:
        mem_mb=int(COOC["merge_memory_gb"] * 1024 * 1.25) + 1024,
        runtime=240,
    conda:
        CPU_ENV
    shell:
        "staticvec cooc merge {input} {params.flags} --out {output} > {log} 2>&1"
