# Teacher stage: one pass of a contextual model per corpus shard and feature set (resumable; a GPU
# job each on a cluster), the MLM head fitted on encoders without one, and the contextual baselines
# (token table, word alone, ASE / BERT_avg) as embeddings of the sheet.
# Paths and flags come from staticvec.dag.teacher.TeacherPlan (TP); every rule is one CLI call.

rule teacher_mlm_head:
    input:
        shards=TP.corpus_shards,
    output:
        head=TP.mlm_head("{teacher}"),
        report=TP.mlm_head_report("{teacher}"),
    params:
        args=RF.fit_head_args,
    log:
        P.log("teacher_mlm_head"),
    benchmark:
        P.benchmark("teacher_mlm_head")
    threads: RF.threads("teacher_mlm_head")
    resources:
        **RF.resources("teacher_mlm_head"),
    conda:
        GPU_ENV
    shell:
        "staticvec teacher fit-mlm-head {params.args} --shards {input.shards} --out {output.head}"
        " --report {output.report} > {log} 2>&1"


rule teacher_features:
    input:
        unpack(RF.teacher_feature_inputs),
    output:
        TP.features("{teacher}", "{fset}", "{shard}"),
    params:
        args=RF.teacher_feature_args,
        out=RF.parent_dir,
        computes=RF.teacher_pass_description,
    message:
        # the plan in a dry run: what this pass computes (`staticvec teacher plan` lists its readers)
        TEACHER_PASS_MESSAGE
    log:
        P.log("teacher_features"),
    benchmark:
        P.benchmark("teacher_features")
    threads: RF.threads("teacher_features")
    resources:
        **RF.resources("teacher_features"),
    conda:
        GPU_ENV
    shell:
        "staticvec teacher features {params.args} --shard {input.shard} --vocab {input.vocab}"
        " --out {params.out} > {log} 2>&1"


rule teacher_ase:
    # per-layer occurrence averages over the first k of n shards (every layer in one directory): every
    # vocabulary word met; on the whole corpus also, word alone, the words never met and the
    # evaluation words outside the vocabulary. From the stored passes' sums, or (teacher.cache:
    # recompute) from a pass this job runs over the corpus shards (RF.ase_source)
    input:
        vocab=TP.vocab(),
        features=RF.ase_features,
        data=RF.ase_evaluation_data,
    output:
        W.ase_table(),
    params:
        args=RF.ase_args,
        source=RF.ase_source,
        out=RF.parent_dir,
    log:
        P.log("teacher_ase"),
    benchmark:
        P.benchmark("teacher_ase")
    wildcard_constraints:
        k=r"\d+",
        n=r"\d+",
    threads: RF.threads("teacher_ase")
    resources:
        **RF.resources("teacher_ase"),
    conda:
        GPU_ENV
    shell:
        "staticvec teacher baseline ase {params.args} --vocab {input.vocab} {params.source}"
        " --format binary --out {params.out} > {log} 2>&1"


rule ase_embedding:
    # an `ase` entry of the sheet: one layer of its fraction's ASE directory; on a corpus fraction,
    # only the words of the fraction's own vocabulary (issue 16: a fraction's embedding holds only its words)
    # (layer: best: X2Static's best task-independent layer, chosen on the whole corpus)
    input:
        unpack(RF.ase_embedding_inputs),
    output:
        W.embedding("{emb}"),
    params:
        command=RF.ase_embedding_command,
    log:
        P.log("train"),
    wildcard_constraints:
        emb=W.rule_ids("ase_embedding"),
    localrule: True
    conda:
        CPU_ENV
    shell:
        "({params.command}) > {log} 2>&1"


rule teacher_token_embedding:
    # the teacher's input-embedding rows (word = mean of its pieces): the "token table" rows
    input:
        vocab=TP.vocab(),
    output:
        W.embedding("{emb}"),
    params:
        args=RF.teacher_baseline_args,
    log:
        P.log("train"),
    wildcard_constraints:
        emb=W.rule_ids("teacher_token_embedding"),
    threads: RF.threads("teacher_token_embedding")
    resources:
        **RF.resources("teacher_token_embedding"),
    conda:
        GPU_ENV
    shell:
        "staticvec teacher baseline token {params.args} --vocab {input.vocab} --format binary"
        " --out {output} > {log} 2>&1"


rule teacher_word_embedding:
    # each word alone as a one-word input, last layer (Context-to-Vec's BERT_word)
    input:
        vocab=TP.vocab(),
    output:
        W.embedding("{emb}"),
    params:
        args=RF.teacher_baseline_args,
    log:
        P.log("train"),
    wildcard_constraints:
        emb=W.rule_ids("teacher_word_embedding"),
    threads: RF.threads("teacher_word_embedding")
    resources:
        **RF.resources("teacher_word_embedding"),
    conda:
        GPU_ENV
    shell:
        "staticvec teacher baseline word {params.args} --vocab {input.vocab} --layers last --format binary"
        " --out {output} > {log} 2>&1"
