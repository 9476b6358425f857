# Distillation trainers reading the teacher stage's per-shard features: X2Static (sent/para),
# BERT + Skip-gram (and its Figure 4/5 sweeps, from the sheet), Context-to-Vec; every sheet entry
# of these methods, once per seed. The trainer gets the entry's hyper-parameters as JSON. With
# teacher.cache: recompute a trainer runs the teacher over its corpus shards itself (RF.student_source).

rule train_student:
    input:
        unpack(RF.student_inputs),
    output:
        vectors=W.embedding("{emb}"),
        record=W.embedding_record("{emb}"),
    params:
        command=RF.train_command,
        source=RF.student_source,
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
    threads: RF.threads("train_student")
    resources:
        **RF.resources("train_student"),
    conda:
        GPU_ENV
    shell:
        "staticvec train {params.command} {params.source} --vocab {input.vocab}"
        " {params.method_params} {params.args} --seed {wildcards.seed} --threads {threads}"
        " --checkpoint {params.checkpoint} {params.model} --out {output.vectors} --record {output.record} > {log} 2>&1"


use rule train_student as train_bert_sg with:
    # BERT + Skip-gram also keeps its model (projection U, context table V'): Figure 7 reads it
    output:
        vectors=W.embedding("{emb}"),
        record=W.embedding_record("{emb}"),
        model=P.embedding_file("model.pt"),
    params:
        command="bert-sg",
        source=RF.student_source,
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
    threads: RF.threads("bert_sg_attention")
    resources:
        **RF.resources("bert_sg_attention"),
    conda:
        GPU_ENV
    shell:
        "staticvec train bert-sg-attention --model {input.model} {params.args}"
        " --out {output} > {log} 2>&1"


# Tokenlearn (the tokenlearn library): a Model2Vec model of the entry's teacher fitted to the teacher's
# sentence embeddings of the corpus's training sentences, read from the students' stored pass (no second
# pass over the corpus); its vectors written over the run's vocabulary as Model2Vec's, the library's own
# model kept beside them. The seed-free start (the corpus's vocabulary, the teacher distilled with it) once
# per teacher, width and texts; then once per seed from it (staticvec.train.tokenlearn: the same vectors).

rule tokenlearn_distill:
    input:
        unpack(RF.tokenlearn_data),
    output:
        directory(W.tokenlearn_distilled()),
    params:
        args=RF.teacher_job_args,
        method_params=RF.tokenlearn_distill_params,
    log:
        P.log("tokenlearn_distill"),
    benchmark:
        P.benchmark("tokenlearn_distill")
    wildcard_constraints:
        emb=W.tokenlearn_distillation_ids(),
    threads: RF.threads("tokenlearn_distill")  # the seeds' threads: the forward passes' floating point
    resources:
        **RF.resources("tokenlearn_distill"),
    conda:
        GPU_ENV
    shell:
        "staticvec train tokenlearn-distill --shards {input.shards} --features {input.features}"
        " {params.args} {params.method_params} --threads {threads} --out {output} > {log} 2>&1"


rule train_tokenlearn:
    input:
        unpack(RF.tokenlearn_inputs),
    output:
        vectors=W.embedding("{emb}"),
        record=W.embedding_record("{emb}"),
        model=directory(P.embedding_file("tokenlearn")),
    params:
        device=RF.device,
        method_params=RF.method_params,
        vocab=W.vocab_flags(),
    log:
        P.log("train"),
    benchmark:
        P.benchmark("train")
    wildcard_constraints:
        emb=W.rule_ids("train_tokenlearn"),
    threads: RF.threads("train_tokenlearn")
    resources:
        **RF.resources("train_tokenlearn"),  # memory: the targets of max_sentences sentences (staticvec.dag.costs)
    conda:
        GPU_ENV
    shell:
        "staticvec train tokenlearn --distilled {input.distilled} --shards {input.shards} --features {input.features}"
        " --vocab {input.vocab} {params.vocab} --device {params.device} {params.method_params} --seed {wildcards.seed}"
        " --threads {threads} --model-dir {output.model} --out {output.vectors} --record {output.record} > {log} 2>&1"
