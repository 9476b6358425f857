"""The co-occurrence counts X_ij of given word pairs in co-occurrence stores (SemGloVe's Table 5 shows
them under GloVe, sd and md: ``staticvec cooc pair-counts``).

Reads merged stores over one vocabulary (window counts, SemGloVe's attention and MLM stores) and
writes a result file the table builder reads (``config/tables.yaml`` entry ``semglove_table5``: rows
are pairs, columns ``{row}.<store name>``)::

    {"results": {"cat_cats": {"word1": "cat", "word2": "cats",
                              "glove": {"score": 33.0, "found": 1, "total": 1}, ...}, ...},
     "stores": {"glove": {"path": ..., "n_entries": ..., "meta": {...}}, ...}}

X_ij is the store's record (i = word1 as target, j = word2 as context); an in-vocabulary pair
without a record scores 0 (the paper's zeros). A pair with a word outside our vocabulary has no
score (``score`` null, ``found`` 0, ``oov`` naming the word): the table shows it as not covered.
"""

from __future__ import annotations

import os
from typing import Mapping

from staticvec.errors import InputFileError


def pairs_of_paper_table(path: str | os.PathLike) -> dict[str, tuple[str, str]]:
    """{row id: (word1, word2)} of a transcribed paper table with ``word1``/``word2`` info columns."""
    from staticvec.sheets.tables import load_paper_table

    table = load_paper_table(path)
    pairs = {}
    for row in table.rows:
        info = table.info.get(row, {})
        if not info.get("word1") or not info.get("word2"):
            raise InputFileError(path, f"row {row!r} has no word1/word2 (info_columns: word1,word2)")
        pairs[row] = (info["word1"], info["word2"])
    return pairs


def pair_counts(stores: Mapping[str, str | os.PathLike], vocab, pairs: Mapping[str, tuple[str, str]]) -> dict:
    """The result mapping described in the module doc."""
    from staticvec.cooc.store import CoocStore, vocab_fingerprint

    sha = vocab_fingerprint(vocab)
    opened = {}
    for name, path in stores.items():
        store = CoocStore(path)
        if store.vocab_size != len(vocab) or (store.vocab_sha256 and store.vocab_sha256 != sha):
            raise InputFileError(path, f"store is over another vocabulary ({store.vocab_size} words) than the "
                                       f"one given ({len(vocab)} words)")
        opened[name] = store
    results = {}
    for pid, (w1, w2) in pairs.items():
        oov = [w for w in (w1, w2) if w not in vocab]
        row: dict = {"word1": w1, "word2": w2}
        for name, store in opened.items():
            if oov:
                row[name] = {"score": None, "found": 0, "total": 1, "oov": oov}
            else:
                row[name] = {"score": store.lookup(vocab.index[w1], vocab.index[w2]), "found": 1, "total": 1}
        results[pid] = row
    return {
        "kind": "cooccurrence",
        "description": "X_ij of word pairs (i = word1 as target, j = word2 as context); null: a word is out of the vocabulary",
        "vocab_size": len(vocab),
        "stores": {name: {"path": str(s.path), "n_entries": s.n_entries, "checksum": s.header.get("checksum"),
                          "meta": s.meta} for name, s in opened.items()},
        "results": results,
    }
