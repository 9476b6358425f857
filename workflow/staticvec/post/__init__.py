"""Post-processing applicable to any embedding of the DAG.

- :mod:`~staticvec.post.lexicon`: synonym lexicons in Faruqui's format (PPDB, FrameNet, ...) and
  the sparse graph they induce over an embedding's vocabulary;
- :mod:`~staticvec.post.wordnet`: a WordNet synonym lexicon built from the WordNet database files;
- :mod:`~staticvec.post.retrofit`: one sparse-graph retrofitting solver with two weightings,
  Faruqui et al. (2015) and Context-to-Vec's Student-t kernel (Zheng et al., 2022);
- :mod:`~staticvec.post.artetxe`: Artetxe et al. (2018) eigen-decomposition post-processing.
"""
