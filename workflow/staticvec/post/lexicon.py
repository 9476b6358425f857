"""Synonym lexicons (Faruqui et al.'s format) and the graph they induce over a vocabulary.

A lexicon file has one entry per line, ``word neighbour1 neighbour2 ...`` separated by
whitespace; a line with a word alone lists no neighbour. Relations are directional: ``a b``
makes ``b`` a neighbour of ``a`` only (the released retrofitting code does not symmetrise, and
neither do we; the PPDB and WordNet lexicons are close to symmetric anyway).

Reading follows both released retrofitting scripts (``mfaruqui/retrofitting``,
``binbinjiang/Context2Vector``): every word goes through :func:`norm_word` (lower-cased;
anything containing a digit becomes ``---num---``, anything without a word character
``---punc---``). Where the released code differs, the paper's reading is the default and the
released behaviour a named option: a head repeated on several lines (FrameNet repeats 1,770
heads) has its neighbour lists merged (``duplicate_heads="merge"``); the released code's dict
keeps only the last line (``"last"``).
"""

from __future__ import annotations

import functools
import os
import re
from typing import Iterable, Mapping

import numpy as np

from staticvec.errors import InputFileError
from staticvec.files import atomic_open, iter_utf8_lines

Lexicon = dict  # head word -> list of neighbour words (ordered, without repeats)

DUPLICATE_HEADS = ("merge", "last")
_HAS_DIGIT = re.compile(r"\d")
_NON_WORD = re.compile(r"\W+")


@functools.lru_cache(maxsize=1 << 20)  # lexicons repeat words: PPDB-XL has 460k tokens, 85k types
def norm_word(word: str) -> str:
    """Faruqui's normalisation: ``---num---`` for words with a digit, ``---punc---`` for words
    without a word character, the lower-cased word otherwise."""
    if _HAS_DIGIT.search(word):
        return "---num---"
    if _NON_WORD.sub("", word) == "":
        return "---punc---"
    return word.lower()


def read_lexicon(path: str | os.PathLike, duplicate_heads: str = "merge", normalize: bool = True) -> Lexicon:
    """Read a lexicon file (plain or compressed); words are normalised with :func:`norm_word`.

    Blank lines are skipped. Invalid UTF-8 raises :class:`InputFileError` naming the line.
    """
    if duplicate_heads not in DUPLICATE_HEADS:
        raise ValueError(f"duplicate_heads must be one of {DUPLICATE_HEADS}, got {duplicate_heads!r}")
    if not os.path.exists(path):
        raise InputFileError(path, "lexicon file not found")
    lexicon: Lexicon = {}
    norm = norm_word if normalize else (lambda w: w)
    for _, line in iter_utf8_lines(path):
        words = line.split()
        if not words:
            continue
        head = norm(words[0])
        neighbours = [norm(w) for w in words[1:]]
        if duplicate_heads == "merge" and head in lexicon:
            neighbours = lexicon[head] + neighbours
        lexicon[head] = list(dict.fromkeys(neighbours))
    return lexicon


def write_lexicon(lexicon: Mapping[str, Iterable[str]], path: str | os.PathLike) -> None:
    """Write ``lexicon`` in Faruqui's format, atomically, heads in sorted order."""
    with atomic_open(path, "wt") as fh:
        for head in sorted(lexicon):
            fh.write(" ".join([head, *lexicon[head]]) + "\n")


def merge_lexicons(lexicons: Iterable[Mapping[str, Iterable[str]]]) -> Lexicon:
    """The union of several lexicons (a head's neighbour lists are concatenated, repeats dropped)."""
    merged: Lexicon = {}
    for lexicon in lexicons:
        for head, neighbours in lexicon.items():
            merged[head] = list(dict.fromkeys([*merged.get(head, []), *neighbours]))
    return merged


def lexicon_graph(lexicon: Mapping[str, Iterable[str]], index: Mapping[str, int], size: int | None = None):
    """The lexicon as a sparse adjacency matrix over a vocabulary (``index``: word -> row).

    Row ``i`` holds a 1 at column ``j`` when word ``j`` is a neighbour of word ``i``; entries
    whose head or neighbour has no row are dropped (the released code intersects with the
    vectors' vocabulary the same way), as are repeats and self-loops (``word word``: they add
    nothing to the objective; ``---num---`` lines produce many).
    """
    from scipy import sparse

    n = len(index) if size is None else size
    rows, cols = [], []
    for head, neighbours in lexicon.items():
        i = index.get(head)
        if i is None:
            continue
        for word in neighbours:
            j = index.get(word)
            if j is not None and j != i:
                rows.append(i)
                cols.append(j)
    data = np.ones(len(rows), dtype=np.float64)
    graph = sparse.csr_matrix((data, (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))), shape=(n, n))
    graph.sum_duplicates()
    graph.data[:] = 1.0
    return graph
