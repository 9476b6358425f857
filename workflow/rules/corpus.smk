# Corpus stage: Wikipedia → tokenized input files (one job each) → budgeted equal shards,
# word counts, manifest → vocabularies.

import os


rule extract_dump:
    # pages-articles XML dump (or one part of a multistream dump: corpus.dump_parts) → wikiextractor <doc> files
    input:
        unpack(lambda wc: W.extract_inputs(wc.corpus_input)),
    output:
        directory(W.extracted_dir("{corpus_input}")),
    params:
        part=lambda wc: W.extract_flags(wc.corpus_input),
    threads: config["corpus"]["extract_processes"]
    resources:
        mem_mb=lambda wc, threads: 1000 + 500 * threads,
        runtime=lambda wc, input: W.extract_runtime(wc.corpus_input, input.size_mb),
    log:
        f"{R}/logs/corpus/extract/{{corpus_input}}.log",
    benchmark:
        f"{R}/benchmarks/corpus/extract/{{corpus_input}}.tsv"
    conda:
        CPU_ENV
    shell:
        "staticvec corpus extract-dump {input.dump} {params.part} --out {output} --processes {threads} > {log} 2>&1"


rule tokenize:
    # one input file → sentences of its paragraphs, lower-cased spaCy tokens, keep flags
    input:
        lambda wc: W.tokenize_source(wc.corpus_input),
    output:
        tokens=W.tokenized("{corpus_input}"),
        stats=W.tokenized_stats("{corpus_input}"),
    params:
        flags=W.tokenize_flags(),
    threads: 1
    resources:
        mem_mb=1500,
        runtime=lambda wc, input: W.tokenize_runtime(wc.corpus_input, input.size_mb),
    log:
        f"{R}/logs/corpus/tokenize/{{corpus_input}}.log",
    benchmark:
        f"{R}/benchmarks/corpus/tokenize/{{corpus_input}}.tsv"
    conda:
        CPU_ENV
    shell:
        "staticvec corpus tokenize {input} --out {output.tokens} --stats {output.stats} {params.flags}"
        " --processes {threads} > {log} 2>&1"


rule prepare_corpus:
    # token budget, equal shards (whole paragraphs), counts per shard, manifest
    input:
        tokens=[W.tokenized(i.id) for i in W.corpus_inputs()],
        stats=[W.tokenized_stats(i.id) for i in W.corpus_inputs()],
    output:
        shards=W.shards(),
        counts=[W.shard_counts(s) for s in W.shard_ids()],
        total=f"{W.corpus_dir}/counts.tsv",
        manifest=W.manifest,
    params:
        budget=W.budget_flag(),
        describe=W.corpus_description(),
        out_dir=lambda wc, output: os.path.dirname(output.total),
        shards=W.n_shards,
        min_count=config["corpus"]["min_count"],
    resources:
        mem_mb=2000,
        runtime=120,
    log:
        f"{R}/logs/corpus/prepare.log",
    benchmark:
        f"{R}/benchmarks/corpus/prepare.tsv"
    conda:
        CPU_ENV
    shell:
        "staticvec corpus prepare --tokenized {input.tokens} --stats {input.stats} --out-dir {params.out_dir}"
        " --shards {params.shards} {params.budget} --min-count {params.min_count}"
        " --describe {params.describe:q} > {log} 2>&1"


rule vocabulary:
    # of the whole corpus ({frac} empty) or of its first K of N shards ({frac} = .KofN): a corpus
    # fraction's embeddings hold only the words of the fraction (counted in it, min count applied)
    input:
        counts=lambda wc: [W.shard_counts(s) for s in W.frac_shard_ids(wc.frac)],
    output:
        f"{W.corpus_dir}/vocab.min{{min_count}}{{frac}}.tsv",
    wildcard_constraints:
        min_count=r"\d+",
        frac=r"(\.\d+of\d+)?",
    params:
        max_size=W.max_vocab_flag(),
    log:
        f"{R}/logs/corpus/vocab.min{{min_count}}{{frac}}.log",
    conda:
        CPU_ENV
    shell:
        "staticvec corpus vocab --counts {input.counts} --min-count {wildcards.min_count} {params.max_size}"
        " --out {output} > {log} 2>&1"
