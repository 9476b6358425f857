# Corpus stage: Wikipedia → tokenized input files (one job each) → budgeted equal shards,
# word counts, manifest → vocabularies.


rule extract_dump:
    # pages-articles XML dump (or one part of a multistream dump: corpus.dump_parts) → wikiextractor <doc> files
    input:
        unpack(RF.extract_inputs),
    output:
        directory(W.extracted_dir("{corpus_input}")),
    params:
        part=RF.extract_flags,
    threads: RF.threads("extract_dump")
    resources:
        **RF.resources("extract_dump"),
    log:
        P.log("extract_dump"),
    benchmark:
        P.benchmark("extract_dump")
    conda:
        CPU_ENV
    shell:
        "staticvec corpus extract-dump {input.dump} {params.part} --out {output} --processes {threads} > {log} 2>&1"


rule tokenize:
    # one input file → sentences of its paragraphs, lower-cased spaCy tokens, keep flags
    input:
        RF.tokenize_source,
    output:
        tokens=W.tokenized("{corpus_input}"),
        stats=W.tokenized_stats("{corpus_input}"),
    params:
        flags=W.tokenize_flags(),
    threads: RF.threads("tokenize")
    resources:
        **RF.resources("tokenize"),
    log:
        P.log("tokenize"),
    benchmark:
        P.benchmark("tokenize")
    conda:
        CPU_ENV
    shell:
        "staticvec corpus tokenize {input} --out {output.tokens} --stats {output.stats} {params.flags}"
        " --processes {threads} > {log} 2>&1"


rule prepare_corpus:
    # token budget, equal shards (whole paragraphs), counts per shard, manifest
    input:
        tokens=W.tokenized_all(),
        stats=W.tokenized_stats_all(),
    output:
        shards=W.shards(),
        counts=W.shard_counts_all(),
        total=W.corpus_counts,
        manifest=W.manifest,
    params:
        budget=W.budget_flag(),
        describe=W.corpus_description(),
        out_dir=RF.corpus_out_dir,
        shards=W.n_shards,
        min_count=W.min_count,
    resources:
        **RF.resources("prepare_corpus"),
    log:
        P.log("prepare_corpus"),
    benchmark:
        P.benchmark("prepare_corpus")
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
        counts=RF.fraction_counts,
    output:
        W.vocab("{min_count}", "{frac}"),
    wildcard_constraints:
        min_count=r"\d+",
        frac=r"(\.\d+of\d+)?",
    params:
        max_size=W.max_vocab_flag(),
    log:
        P.log("vocabulary"),
    threads: RF.threads("vocabulary")
    resources:
        **RF.resources("vocabulary"),
    conda:
        CPU_ENV
    shell:
        "staticvec corpus vocab --counts {input.counts} --min-count {wildcards.min_count} {params.max_size}"
        " --out {output} > {log} 2>&1"
