# Skip-gram, CBOW and fastText through gensim, on the same shards and vocabulary as every other
# method: each sheet entry with method skipgram, cbow or fasttext, once per seed.

rule train_gensim_baseline:
    input:
        shards=RF.emb_shards,
        vocab=RF.emb_vocab,  # a corpus fraction's own vocabulary
    output:
        vectors=W.embedding("{emb}"),
        record=W.embedding_record("{emb}"),
    params:
        command=RF.train_command,
        method_params=RF.method_params,
        vocab=W.vocab_flags(),
    log:
        P.log("train"),
    benchmark:
        P.benchmark("train")
    wildcard_constraints:
        emb=W.rule_ids("train_gensim_baseline"),
    threads: RF.threads("train_gensim_baseline")
    resources:
        **RF.resources("train_gensim_baseline"),
    conda:
        CPU_ENV
    shell:
        "staticvec train {params.command} --shards {input.shards} --vocab {input.vocab} {params.vocab}"
        " {params.method_params} --seed {wildcards.seed} --threads {threads}"
        " --out {output.vectors} --record {output.record} > {log} 2>&1"


# Model2Vec (the model2vec library) from the entry's teacher: no corpus, only the vocabulary it is
# written over; the library's own model is kept beside the vectors. Seedless (one job, first seed).

rule train_model2vec:
    input:
        vocab=W.vocab(),
    output:
        vectors=W.embedding("{emb}"),
        record=W.embedding_record("{emb}"),
        model=directory(P.embedding_file("model2vec")),
    params:
        args=RF.teacher_job_args,
        method_params=RF.method_params,
        vocab=W.vocab_flags(),
    log:
        P.log("train"),
    benchmark:
        P.benchmark("train")
    wildcard_constraints:
        emb=W.rule_ids("train_model2vec"),
    threads: RF.threads("train_model2vec")
    resources:
        **RF.resources("train_model2vec"),
    conda:
        GPU_ENV
    shell:
        "staticvec train model2vec --vocab {input.vocab} {params.vocab} {params.args} {params.method_params} --threads {threads}"
        " --model-dir {output.model} --out {output.vectors} --record {output.record} > {log} 2>&1"
