# Static word embeddings distilled from contextual language models: the whole workflow.
# Thin on purpose: configuration, validation, the stage rule files, and the final targets.
# Logic lives in the `staticvec` package (workflow/staticvec); every rule calls its CLI.
# What is built is data: config/embeddings.yaml (every embedding), config/tables.yaml (every
# paper table), config/figures.yaml (every figure).

from snakemake.utils import min_version

min_version("9.27")  # the floor of pyproject.toml (snakemake>=9.27): 9.15 fails the SLURM render and leaves resources <TBD>


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/resources.smk"
include: "workflow/rules/corpus.smk"
include: "workflow/rules/teacher.smk"
include: "workflow/rules/cooc.smk"
include: "workflow/rules/semglove.smk"
include: "workflow/rules/train_glove.smk"
include: "workflow/rules/train_baselines.smk"
include: "workflow/rules/train_students.smk"
include: "workflow/rules/post.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/extrinsic_classification.smk"
include: "workflow/rules/extrinsic_tagging.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/export.smk"


rule all:
    default_target: True
    input:
        W.final_targets(),


onerror:
    # each failed job's error line from its log (rules send their command's output there), on the console
    print_failed_job_errors(log)
