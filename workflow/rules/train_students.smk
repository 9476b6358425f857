# Distillation trainers reading the teacher stage's per-shard features: X2Static (sent/para),
# BERT + Skip-gram (and its Figure 4/5 sweeps, from the sheet), Context-to-Vec; every sheet entry
# of these methods, once per seed. The trainer gets the entry's hyper-parameters as JSON.

rule train_student:
    input:
        unpack(RF.student_inputs),
    output:
        vectors=W.embedding("{emb}"),
        record=W.embedding_record("{emb}"),
    params:
        command=RF.train_command,
        method_params=RF.method_params,
        args=RF.student_args,
        checkpoint=P.checkpoint("pt"),
        model="",
    log:
        P.log("train"),
    benchmark:
        P.benchmark("train")
    wildcard_constraints:
        emb=W.rule_ids("train_student"),
    threads: RF.train_threads
    resources:
        mem_mb=8000,
        runtime=720,
        **GPU_RESOURCES,
    conda:
        GPU_ENV
    shell:
        "staticvec train {params.command} --features {input.features} --vocab {input.vocab}"
        " --feature-vocab {input.feature_vocab} {params.method_params} {params.args} --seed {wildcards.seed} --threads {threads}"
        " --checkpoint {params.checkpoint} {params.model} --out {output.vectors} --record {output.record} > {log} 2>&1"


use rule train_student as train_bert_sg with:
    # BERT + Skip-gram also keeps its model (projection U, context table V'): Figure 7 reads it
    output:
        vectors=W.embedding("{emb}"),
        record=W.embedding_record("{emb}"),
        model=P.embedding_file("model.pt"),
    params:
        command="bert-sg",
        method_params=RF.method_params,
        args=RF.student_args,
        checkpoint=P.checkpoint("pt"),
        model=RF.model_output_flag,
    wildcard_constraints:
        emb=W.rule_ids("train_bert_sg"),


rule bert_sg_attention:
    # Wang et al. Figure 7: the attention weights a_j of a trained BERT+Skip-gram model on a sentence
    input:
        model=P.embedding_file("model.pt"),
    output:
        W.attention_dump("{emb}"),
    params:
        args=RF.bert_sg_attention_args,
    log:
        P.log("bert_sg_attention"),
    wildcard_constraints:
        emb=W.rule_ids("train_bert_sg"),
    threads: 1
    resources:
        mem_mb=4000,
        runtime=15,
    conda:
        GPU_ENV
    shell:
        "staticvec train bert-sg-attention --model {input.model} {params.args}"
        " --out {output} > {log} 2>&1"
