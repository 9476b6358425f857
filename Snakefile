# Static word embeddings distilled from contextual language models: the whole workflow.
# Thin on purpose: configuration, validation, the stage rule files, and the final targets.
# Logic lives in the `staticvec` package (workflow/staticvec); every rule calls its CLI.

from snakemake.utils import min_version

min_version("8.10")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/resources.smk"
include: "workflow/rules/corpus.smk"
include: "workflow/rules/cooc.smk"
include: "workflow/rules/train_glove.smk"
include: "workflow/rules/train_baselines.smk"


rule all:
    default_target: True
    input:
        final_targets(),
