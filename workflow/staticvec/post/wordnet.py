"""A WordNet lexicon in Faruqui's format, built from the WordNet 3.0 database files.

Faruqui et al. (2015) retrofit to two WordNet lexicons whose files are not distributed:
``wordnet-synonyms`` links each word to the other lemmas of every synset it belongs to (any part
of speech); ``wordnet-synonyms+`` also links it to the lemmas of the synsets' hypernyms and
hyponyms (instance relations included). Both are rebuilt here.

The database is read directly (``data.noun``, ``data.verb``, ``data.adj``, ``data.adv``): each
line after the licence header is a synset, ``offset lex_filenum ss_type w_cnt word lex_id ...
p_cnt ptr...``; ``w_cnt`` is hexadecimal, adjective lemmas may carry a syntactic marker such as
``(a)``, ``(p)`` or ``(ip)``, multi-word lemmas join their words with ``_``. Reading the files
ourselves avoids NLTK's reader, which refuses directories outside its data path and tries to
load its own WordNet copy for a version mapping; ``tests/test_post_wordnet.py`` checks the
result against NLTK's reader.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path

from staticvec.errors import InputFileError
from staticvec.post.lexicon import Lexicon, norm_word

RELATIONS = ("synonyms", "synonyms+")
DATA_FILES = {"n": "data.noun", "v": "data.verb", "a": "data.adj", "r": "data.adv"}
# Pointer symbols of the hypernym/hyponym relations (instance relations included).
HYPERNYMY_POINTERS = {"@", "@i", "~", "~i"}
_MARKER = re.compile(r"\((a|p|ip)\)$")


def read_synsets(wordnet_dir: str | os.PathLike):
    """Synsets as ``{(pos, offset): (lemmas, related)}``; ``related`` lists the ``(pos, offset)``
    of the hypernym and hyponym synsets. Lemmas are as in the files (case kept, ``_`` joins)."""
    wordnet_dir = Path(wordnet_dir)
    synsets = {}
    for pos, name in DATA_FILES.items():
        path = wordnet_dir / name
        if not path.exists():
            raise InputFileError(path, f"WordNet data file missing (expected the WordNet 3.0 database in {wordnet_dir})")
        with open(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                if raw.startswith(b"  "):  # licence header
                    continue
                try:
                    fields = raw.decode("utf-8").split(" | ", 1)[0].split()
                    offset, n_words = fields[0], int(fields[3], 16)
                    lemmas = [_MARKER.sub("", w) if w[-1] == ")" else w for w in fields[4 : 4 + 2 * n_words : 2]]
                    at = 4 + 2 * n_words
                    n_pointers = int(fields[at])
                    pointers = fields[at + 1 : at + 1 + 4 * n_pointers]
                    related = [
                        ("a" if target_pos == "s" else target_pos, target)
                        for symbol, target, target_pos in zip(pointers[0::4], pointers[1::4], pointers[2::4])
                        if symbol in HYPERNYMY_POINTERS
                    ]
                    if len(pointers) != 4 * n_pointers:
                        raise ValueError("fewer pointers than announced")
                except (UnicodeDecodeError, ValueError, IndexError) as exc:
                    raise InputFileError(path, f"not a WordNet synset line ({exc})", lineno) from None
                if len(lemmas) != n_words or len(offset) != 8:
                    raise InputFileError(path, "not a WordNet synset line (truncated)", lineno)
                synsets[(pos, offset)] = (lemmas, related)
    return synsets


def wordnet_lexicon(
    wordnet_dir: str | os.PathLike, relations: str = "synonyms", multiword: bool = False, synsets: dict | None = None
) -> Lexicon:
    """Build the ``synonyms`` or ``synonyms+`` lexicon (see module doc); ``synsets``: from
    :func:`read_synsets` if already read.

    Words are normalised like lexicon files are read (:func:`norm_word`, so lower-cased);
    multi-word lemmas (``new_york``) are left out unless ``multiword``, and so are lemmas that
    normalise to ``---num---`` or ``---punc---`` (``1st``, ``.22``). Each head's
    neighbours are sorted, so the output does not depend on file order; words left without
    a neighbour are left out.
    """
    if relations not in RELATIONS:
        raise ValueError(f"relations must be one of {RELATIONS}, got {relations!r}")
    if synsets is None:
        synsets = read_synsets(wordnet_dir)

    words = {}
    for key, (lemmas, _) in synsets.items():
        normed = (norm_word(w) for w in lemmas if multiword or "_" not in w)
        words[key] = [w for w in normed if not w.startswith("---")]  # placeholders would link unrelated lemmas
    neighbours = defaultdict(set)
    for key, (_, related) in synsets.items():
        linked = set(words[key])
        if relations == "synonyms+":
            for other in related:
                if other not in synsets:
                    raise InputFileError(Path(wordnet_dir) / DATA_FILES[other[0]], f"pointer to missing synset {other[1]}")
                linked.update(words[other])
        for word in words[key]:
            neighbours[word].update(linked)
    return {word: sorted(linked - {word}) for word, linked in neighbours.items() if linked - {word}}
