"""The planning layer: everything between the config (and its sheets) and the Snakemake rules.

The rule files name no path, flag or target themselves; they call these objects (built once in
``workflow/rules/common.smk``):

    W   workflow.Workflow        the sheets (embeddings, tables, figures, claims), corpus, evaluation and
                                 report paths and targets, the resolved parameters of every embedding:
                                 a façade over one module per stage (``plan_resources`` ... ``plan_export``)
    TP  teacher.TeacherPlan      the teacher stage: feature sets, passes, their paths and flags
    SG  semglove.SemgloveRules   SemGloVe's co-occurrence stores, their paths, flags and memory
    P   paths.RulePaths          the remaining outputs, and every rule's log and benchmark file
    RF  rules.RuleFunctions      the input/params/threads functions of the rules (Snakemake's wildcards in,
                                 a path, a list of paths or a flag string out)

Nothing here computes a result or reads a data file's content; planning is cheap and side-effect free
(a dry run of the paper config plans ~4,000 jobs in seconds).
"""
