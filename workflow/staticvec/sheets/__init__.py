"""The config sheets, read and checked in one place below the planning (:mod:`staticvec.dag`) and the report
(:mod:`staticvec.report`), which both import them from here:

- :mod:`~staticvec.sheets.embeddings`: the embeddings sheet (every embedding the workflow trains, and sweeps);
- :mod:`~staticvec.sheets.tables`: the tables sheet and the transcribed paper tables it maps;
- :mod:`~staticvec.sheets.figures`: the figures sheet;
- :mod:`~staticvec.sheets.claims`: the claims sheet and what a claim names;
- :mod:`~staticvec.sheets.schema`: a YAML sheet checked against its JSON schema.

``from staticvec.sheets import EmbeddingSheet`` (the embeddings sheet's names) keeps working.
"""

from staticvec.sheets.embeddings import (COMMON_PARAMS, EMBEDDINGS_SCHEMA, METHODS, POST_PARAMS_SCHEMA, EmbeddingSheet,
                                         EmbeddingSpec, Sweep)
from staticvec.sheets.schema import load_sheet

__all__ = ["COMMON_PARAMS", "EMBEDDINGS_SCHEMA", "METHODS", "POST_PARAMS_SCHEMA", "EmbeddingSheet", "EmbeddingSpec",
           "Sweep", "load_sheet"]
