# GloVe, and SemGloVe (GloVe on a semantic co-occurrence store): every entry of the embeddings
# sheet with method glove or semglove, once per seed. The store is GloVe's window counts (of the
# entry's corpus fraction) or a SemGloVe builder variant (semglove.smk).

rule train_glove:
    input:
        cooc=RF.glove_store,
        vocab=RF.emb_vocab,  # a corpus fraction's own vocabulary (the store's ids)
    output:
        vectors=W.embedding("{emb}"),
        record=W.embedding_record("{emb}"),
    params:
        method_params=RF.method_params,
        vocab=W.vocab_flags(),
        checkpoint=P.checkpoint("npz"),  # survives a killed job; resumed
        device=RF.device,
    log:
        P.log("train"),
    benchmark:
        P.benchmark("train")
    wildcard_constraints:
        emb=W.rule_ids("train_glove"),
    threads: RF.threads("train_glove")
    resources:
        **RF.resources("train_glove"),
    conda:
        GPU_ENV
    shell:
        "staticvec train glove --cooc {input.cooc} --vocab {input.vocab} {params.vocab} {params.method_params}"
        " --seed {wildcards.seed} --threads {threads} --device {params.device}"
        " --checkpoint {params.checkpoint} --out {output.vectors} --record {output.record} > {log} 2>&1"


# A sweep point whose settings are its base's (SemGloVe Figure 2's 300-d, x_max 10 and whole-corpus
# points on the main rows: W.same_run) is that run: its vectors and record are copied, not trained again.
rule same_run:
    input:
        unpack(RF.same_run_inputs),
    output:
        vectors=W.embedding("{emb}"),
        record=W.embedding_record("{emb}"),
    params:
        base=RF.same_run_base,
    log:
        P.log("same_run"),
    benchmark:
        P.benchmark("same_run")
    wildcard_constraints:
        emb=W.same_run_ids(),
    threads: RF.threads("same_run")
    resources:
        **RF.resources("same_run"),
    conda:
        CPU_ENV
    shell:
        "staticvec train same-run --from-vectors {input.vectors} --from-record {input.record} --base {params.base}"
        " --seed {wildcards.seed} --out {output.vectors} --record {output.record} > {log} 2>&1"
