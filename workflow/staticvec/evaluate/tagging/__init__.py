"""Extrinsic evaluation by sequence labelling: a BiLSTM-CRF tagger over frozen embeddings.

Modules: ``data`` (task data sets and their file formats), ``chunk_f1`` (the conlleval chunk
scorer), ``features`` (word, casing and character inputs), ``model`` (the BiLSTM-CRF),
``train`` (training with early stopping), ``contextual`` (a teacher's frozen contextual
vectors as input: the BERT-base row), ``summary`` (mean ± std over seeds), ``run`` (one run to
JSON, one embedding's summary file). The commands are built in :mod:`staticvec.evaluate.cli`.
"""
