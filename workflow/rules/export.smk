# Vectors to take away (not built by default: each export is its own target): any embedding of the sheet,
# one seed, as a gensim KeyedVectors file and a Model2Vec directory (StaticModel.from_pretrained,
# sentence-transformers) whose model card says what made it and its scores in this run (staticvec.export).
#
#   {R}/export/{emb}/seed{seed}/vectors.kv        KeyedVectors.load
#   {R}/export/{emb}/seed{seed}/model2vec/        StaticModel.from_pretrained, SentenceTransformer, + README.md

rule export:
    input:
        unpack(RF.export_inputs),
    output:
        keyedvectors=W.export_keyedvectors(),
        model2vec=directory(W.export_model2vec()),
    params:
        args=RF.export_args,
    log:
        P.log("export"),
    wildcard_constraints:
        emb=W.export_ids(),
        seed=r"\d+",
    threads: 1
    resources:
        mem_mb=8000,  # the vectors, their Model2Vec rows and gensim's copy (paper scale: 750k × 1024 X2Static)
        runtime=30,
    conda:
        CPU_ENV
    shell:
        "staticvec export --vectors {input.vectors} --provenance {input.provenance} {params.args}"
        " --seed {wildcards.seed} --keyedvectors {output.keyedvectors} --model2vec {output.model2vec} > {log} 2>&1"
