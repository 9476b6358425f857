# SemGloVe (Gan et al.) co-occurrences from the teacher's attention and MLM predictions, per corpus
# shard (every builder variant of a shard in one job, reading its features once), merged, MLM pieces
# mapped to words, sdR restricted from GloVe's window counts; Table 5's pair counts. GloVe training
# on these stores: train_glove.smk. Builders: config cooc.semglove.
# Paths and flags: staticvec.cooc.semglove_plan.SemgloveRules. {frac}: '' or '.KofN' (Figure 2b).

from staticvec.cooc.semglove_plan import SemgloveRules

SG = SemgloveRules(config)
SG_GPU = 1 if config["teacher"].get("gpu") and SG.recompute else 0
SG_MEMORY_GB = config["cooc"]["semglove"].get("memory_gb", 2.0)
SG_MEMORY_MB = int(SG_MEMORY_GB * 1024 * 1.25) + 2048


def semglove_shard_flags(wildcards, input, output):
    source = f"--shard {input.shard}" if SG.recompute else f"--features {input.features}"
    head = f" --mlm-head {input.head}" if "head" in input.keys() else ""
    return source + head + " " + SG.shard_args({v: output[v] for v in SG.builders})


rule semglove_cooc_shard:
    input:
        unpack(lambda wc: SG.shard_inputs(wc.shard)),
    output:
        **SG.shard_outputs(),
    params:
        flags=semglove_shard_flags,
    log:
        f"{R}/logs/cooc/semglove/shards/{{shard}}.log",
    benchmark:
        f"{R}/benchmarks/cooc/semglove/shards/{{shard}}.tsv"
    wildcard_constraints:
        shard=r"\d{5}",
    threads: 2
    resources:
        mem_mb=SG_MEMORY_MB + (16000 if SG.recompute else 0),
        runtime=720 if SG.recompute else 120,
        **W.gpu_resources(SG_GPU == 1),
    shell:
        "staticvec cooc semglove {params.flags} --vocab {input.vocab} > {log} 2>&1"


rule semglove_merge_attention:
    input:
        lambda wc: SG.shard_stores(wc.variant),
    output:
        f"{SG.dir}/{{variant}}.cooc",
    log:
        f"{R}/logs/cooc/semglove/{{variant}}.merge.log",
    benchmark:
        f"{R}/benchmarks/cooc/semglove/{{variant}}.merge.tsv"
    wildcard_constraints:
        variant=SG.attention_regex,
    threads: 1
    resources:
        mem_mb=int(config["cooc"]["merge_memory_gb"] * 1024 * 1.25) + 1024,
        runtime=240,
    shell:
        "staticvec cooc merge {input} --memory-gb " + str(config["cooc"]["merge_memory_gb"]) +
        " --max-open " + str(config["cooc"]["max_open_files"]) + " --out {output} > {log} 2>&1"


use rule semglove_merge_attention as semglove_merge_attention_fraction with:
    # a corpus fraction's shard stores (still on the corpus vocabulary; subset below)
    input:
        lambda wc: SG.shard_stores(wc.variant, wc.frac),
    output:
        temp(SG.attention_merged("{variant}", "{frac}")),
    log:
        f"{R}/logs/cooc/semglove/{{variant}}{{frac}}.merge.log",
    benchmark:
        f"{R}/benchmarks/cooc/semglove/{{variant}}{{frac}}.merge.tsv"
    wildcard_constraints:
        variant=SG.attention_regex,
        frac=r"\.\d+of\d+",


rule semglove_attention_fraction_vocab:
    # an attention store of a corpus fraction on the fraction's own vocabulary (its words only)
    input:
        store=SG.attention_merged("{variant}", "{frac}"),
        source_vocab=SG.vocab(),
        vocab=lambda wc: SG.vocab(wc.frac),
    output:
        f"{SG.dir}/{{variant}}{{frac}}.cooc",
    params:
        vocab=" ".join(SG.vocab_args()),
    log:
        f"{R}/logs/cooc/semglove/{{variant}}{{frac}}.subset.log",
    wildcard_constraints:
        variant=SG.attention_regex,
        frac=r"\.\d+of\d+",
    threads: 1
    resources:
        mem_mb=int(config["cooc"]["merge_memory_gb"] * 1024 * 1.25) + 1024,
        runtime=240,
    shell:
        "staticvec cooc subset {input.store} --source-vocab {input.source_vocab} --vocab {input.vocab} {params.vocab}"
        " --memory-gb " + str(config["cooc"]["merge_memory_gb"]) + " --out {output} > {log} 2>&1"


rule semglove_merge_pieces:
    input:
        lambda wc: SG.shard_stores(wc.variant, wc.frac),
    output:
        f"{SG.dir}/{{variant}}/pieces{{frac}}.cooc",
    log:
        f"{R}/logs/cooc/semglove/{{variant}}/pieces{{frac}}.merge.log",
    benchmark:
        f"{R}/benchmarks/cooc/semglove/{{variant}}/pieces{{frac}}.merge.tsv"
    wildcard_constraints:
        variant=SG.mlm_regex,
        frac=SG.FRACTION_REGEX,
    threads: 1
    resources:
        mem_mb=int(config["cooc"]["merge_memory_gb"] * 1024 * 1.25) + 1024,
        runtime=240,
    shell:
        "staticvec cooc merge {input} --memory-gb " + str(config["cooc"]["merge_memory_gb"]) +
        " --max-open " + str(config["cooc"]["max_open_files"]) + " --out {output} > {log} 2>&1"


rule semglove_words:
    input:
        unpack(lambda wc: SG.words_inputs(wc.variant, wc.frac)),
    output:
        f"{SG.dir}/{{variant}}{{frac}}.cooc",
    params:
        flags=lambda wc: SG.words_args(wc.frac),
    log:
        f"{R}/logs/cooc/semglove/{{variant}}{{frac}}.words.log",
    benchmark:
        f"{R}/benchmarks/cooc/semglove/{{variant}}{{frac}}.words.tsv"
    wildcard_constraints:
        variant=SG.mlm_regex,
        frac=SG.FRACTION_REGEX,
    threads: 1
    resources:
        mem_mb=int(SG_MEMORY_GB * 1024 * 2) + 2048,
        runtime=240,
    shell:
        "staticvec cooc semglove-words {input.pieces} --vocab {input.vocab} {params.flags}"
        " --memory-gb " + str(SG_MEMORY_GB) + " --out {output} > {log} 2>&1"


rule semglove_restrict:
    input:
        pairs=lambda wc: SG.store(SG.variants[wc.variant]["pairs_of"], wc.frac),
        values=lambda wc: SG.window_store(wc.frac),
    output:
        f"{SG.dir}/{{variant}}{{frac}}.cooc",
    log:
        f"{R}/logs/cooc/semglove/{{variant}}{{frac}}.restrict.log",
    benchmark:
        f"{R}/benchmarks/cooc/semglove/{{variant}}{{frac}}.restrict.tsv"
    wildcard_constraints:
        variant=SG.restricted_regex,
        frac=SG.FRACTION_REGEX,
    threads: 1
    resources:
        mem_mb=4096,
        runtime=120,
    shell:
        "staticvec cooc restrict --values {input.values} --pairs {input.pairs} --out {output} > {log} 2>&1"


rule semglove_table5_counts:
    # X_ij of the paper's pairs under GloVe's window counts, sd and md (tables sheet: semglove_table5)
    input:
        unpack(lambda wc: {"glove": SG.window_store(), "vocab": SG.vocab(),
                           **{f"semglove_{v}": SG.store(v) for v in ("sd", "md") if v in SG.variants}}),
        pairs="resources/paper_tables/semglove_table5.csv",
    output:
        SG.table5(),
    params:
        stores=lambda wc, input: " ".join(f"--store {k} {v}" for k, v in input.items() if k not in ("vocab", "pairs")),
        vocab=" ".join(SG.vocab_args()),
    log:
        f"{R}/logs/cooc/semglove/table5.log",
    threads: 1
    resources:
        mem_mb=2048,
        runtime=10,
    shell:
        "staticvec cooc pair-counts --paper-table {input.pairs} --vocab {input.vocab} {params.vocab} {params.stores}"
        " --out {output} > {log} 2>&1"
