"""staticvec: static word embeddings distilled from contextual language models.

The package behind the Snakemake workflow: one module per idea (corpus, teacher,
co-occurrence, trainers, post-processing, evaluation, report). Every Snakemake rule
calls one ``staticvec`` sub-command.
"""

__version__ = "0.1.0"
