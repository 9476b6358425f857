"""The one in-memory embedding container and its file formats.

Formats (chosen from the file name unless given):

============== ============================ =============================================
name           file                          layout
============== ============================ =============================================
``word2vec``   ``*.txt``, ``*.vec``, ``.gz``  text, header ``count dim``, ``word v1 … vd``
``glove``      (explicit)                    text without header (GloVe's own output)
``binary``     ``*.bin``                     word2vec binary: header, ``word<space>`` + d float32
``npy``        ``*.npy``                     project format: float32 matrix + ``*.vocab`` (word[\\tcount])
``keyedvectors`` ``*.kv``                    gensim's own ``KeyedVectors.save`` (one file; ``KeyedVectors.load``),
                                             with the counts
``model2vec``  a directory                   a Model2Vec ``StaticModel`` (``StaticModel.from_pretrained``; also
                                             sentence-transformers' ``StaticEmbedding``) over a word-level
                                             tokenizer of the words: see :func:`save_model2vec`
============== ============================ =============================================

Reading is strict: a wrong header, a line with the wrong number of values, a duplicate
word, a non-numeric value or invalid UTF-8 raises :class:`InputFileError` naming the file
and line. The container converts to and from gensim's ``KeyedVectors``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from staticvec.errors import InputFileError
from staticvec.files import atomic_open, atomic_path, open_any, iter_utf8_lines

FORMATS = ("word2vec", "glove", "binary", "npy", "keyedvectors", "model2vec")

# the word-level Model2Vec tokenizer's special tokens, ids 0 and 1, zero rows: [PAD] at 0 as the Model2Vec and
# Tokenlearn training code pads batches with id 0; [UNK] for words outside the vocabulary
MODEL2VEC_SPECIAL_TOKENS = ("[PAD]", "[UNK]")


class Embeddings:
    """Words and their vectors (float32, one row per word), with gensim-like lookups."""

    def __init__(self, words: Sequence[str], vectors: np.ndarray, counts: Sequence[int] | None = None):
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(words):
            raise ValueError(f"{len(words)} words but vectors of shape {vectors.shape}")
        self.words = list(words)
        self.vectors = vectors
        self.counts = None if counts is None else np.asarray(counts, dtype=np.int64)
        self.index = {}
        for i, word in enumerate(self.words):
            if word in self.index:
                raise ValueError(f"duplicate word {word!r} (rows {self.index[word]} and {i})")
            self.index[word] = i
        self._unit = None

    # ------------------------------------------------------------ lookups
    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def __getitem__(self, word: str) -> np.ndarray:
        return self.vectors[self.index[word]]

    @property
    def dim(self) -> int:
        return self.vectors.shape[1]

    def get_index(self, word: str, default=None):
        return self.index.get(word, default)

    def unit_vectors(self) -> np.ndarray:
        """Rows scaled to unit length (zero rows stay zero); cached."""
        if self._unit is None:
            norms = np.linalg.norm(self.vectors, axis=1, keepdims=True)
            self._unit = self.vectors / np.where(norms > 0, norms, 1.0)
        return self._unit

    def restrict(self, max_words: int) -> "Embeddings":
        """The first ``max_words`` rows (files are frequency-ordered: MUSE reads the top 200k)."""
        counts = None if self.counts is None else self.counts[:max_words]
        return Embeddings(self.words[:max_words], self.vectors[:max_words], counts)

    def lowercased(self) -> "Embeddings":
        """Lower-case words, keeping the first (most frequent) row of words that collide."""
        keep, seen = [], set()
        for i, word in enumerate(self.words):
            low = word.lower()
            if low not in seen:
                seen.add(low)
                keep.append(i)
        counts = None if self.counts is None else self.counts[keep]
        return Embeddings([self.words[i].lower() for i in keep], self.vectors[keep], counts)

    # ------------------------------------------------------------ gensim
    def to_gensim(self):
        from gensim.models import KeyedVectors

        kv = KeyedVectors(self.dim, dtype=np.float32)
        kv.add_vectors(self.words, self.vectors)
        if self.counts is not None:
            for word, count in zip(self.words, self.counts):
                kv.set_vecattr(word, "count", int(count))
        return kv

    @classmethod
    def from_gensim(cls, kv) -> "Embeddings":
        words = list(kv.index_to_key)
        counts = None
        if words and "count" in kv.expandos:
            counts = [kv.get_vecattr(w, "count") for w in words]
        return cls(words, np.asarray(kv.vectors, dtype=np.float32), counts)

    # ------------------------------------------------------------ I/O
    def save(self, path: str | os.PathLike, fmt: str | None = None, readme: str | None = None) -> None:
        """Write atomically in ``fmt`` (default: from the file name); ``readme``: the model card (README.md) of
        a ``model2vec`` directory."""
        fmt = fmt or guess_format(path)
        bad = next((w for w in self.words if not w or any(ch.isspace() for ch in w)), None)
        if bad is not None:
            # word2vec files separate the word from its values by a space: such a word breaks the file
            raise ValueError(f"cannot save the word {bad!r}: words must be non-empty and contain no whitespace")
        if fmt == "npy":
            with atomic_path(path) as tmp:
                with open(tmp, "wb") as fh:
                    np.save(fh, self.vectors)
            with atomic_open(_vocab_path(path), "wt") as fh:
                for i, word in enumerate(self.words):
                    fh.write(word if self.counts is None else f"{word}\t{self.counts[i]}")
                    fh.write("\n")
        elif fmt == "binary":
            with atomic_open(path, "wb") as fh:
                fh.write(f"{len(self)} {self.dim}\n".encode())
                for word, row in zip(self.words, self.vectors):
                    fh.write(word.encode("utf-8") + b" " + row.astype("<f4").tobytes() + b"\n")
        elif fmt in ("word2vec", "glove"):
            with atomic_open(path, "wt") as fh:
                if fmt == "word2vec":
                    fh.write(f"{len(self)} {self.dim}\n")
                for word, row in zip(self.words, self.vectors):
                    fh.write(word + " " + " ".join(f"{x:.6g}" for x in row) + "\n")
        elif fmt == "keyedvectors":
            with atomic_path(path) as tmp:
                self.to_gensim().save(str(tmp), separately=[])  # one file: the arrays inside, not beside it
        elif fmt == "model2vec":
            save_model2vec(self, path, readme)
        else:
            raise ValueError(f"unknown embedding format {fmt!r}; known: {', '.join(FORMATS)}")

    @classmethod
    def load(cls, path: str | os.PathLike, fmt: str | None = None, max_words: int | None = None) -> "Embeddings":
        """Read a file strictly (see module doc); ``max_words`` stops after that many rows."""
        path = Path(path)
        if not path.exists():
            raise InputFileError(path, "embedding file not found")
        fmt = fmt or guess_format(path)
        if fmt == "npy":
            return _load_npy(path, max_words)
        if fmt == "binary":
            return _load_binary(path, max_words)
        if fmt in ("word2vec", "glove"):
            return _load_text(path, header=(fmt == "word2vec"), max_words=max_words)
        if fmt == "keyedvectors":
            return _load_keyedvectors(path).restrict(max_words) if max_words is not None else _load_keyedvectors(path)
        if fmt == "model2vec":
            return _load_model2vec(path).restrict(max_words) if max_words is not None else _load_model2vec(path)
        raise ValueError(f"unknown embedding format {fmt!r}; known: {', '.join(FORMATS)}")


def guess_format(path: str | os.PathLike) -> str:
    if Path(path).is_dir():
        return "model2vec"
    name = Path(path).name
    for suffix in (".gz", ".bz2", ".xz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    if name.endswith(".npy"):
        return "npy"
    if name.endswith(".bin"):
        return "binary"
    if name.endswith(".kv"):
        return "keyedvectors"
    return "word2vec"


def _vocab_path(path: str | os.PathLike) -> Path:
    path = Path(path)
    return path.with_name(path.name[: -len(".npy")] + ".vocab") if path.name.endswith(".npy") else Path(f"{path}.vocab")


def _parse_header(path, line: str, lineno: int = 1) -> tuple[int, int]:
    parts = line.split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise InputFileError(
            path,
            f"expected a header 'count dim' (two integers), got {line.strip()[:60]!r}; "
            "a file without header (GloVe output) needs format 'glove'",
            lineno,
        )
    count, dim = int(parts[0]), int(parts[1])
    if dim <= 0:
        raise InputFileError(path, f"header gives dimension {dim}", lineno)
    return count, dim


def _load_text(path: Path, header: bool, max_words: int | None) -> Embeddings:
    words: list[str] = []
    rows: list[np.ndarray] = []
    seen: dict[str, int] = {}
    count, dim = None, None
    for lineno, line in iter_utf8_lines(path):  # bad bytes and truncated files: errors naming them
        if lineno == 1 and header:
            count, dim = _parse_header(path, line)
            continue
        line = line.rstrip(" ")
        if not line:
            raise InputFileError(path, "empty line", lineno)
        if max_words is not None and len(words) >= max_words:
            break
        word, _, rest = line.partition(" ")
        if not word:
            raise InputFileError(path, "line starts with a space: empty word", lineno)
        values = rest.split(" ")
        if dim is None:
            dim = len(values)
        if len(values) != dim:
            raise InputFileError(path, f"expected {dim} values after the word {word!r}, found {len(values)}", lineno)
        try:
            row = np.asarray(values, dtype=np.float32)
        except ValueError:
            bad = next(v for v in values if not _is_float(v))
            raise InputFileError(path, f"non-numeric value {bad!r} for word {word!r}", lineno) from None
        if not np.isfinite(row).all():
            bad = values[int(np.argmin(np.isfinite(row)))]
            raise InputFileError(path, f"non-finite value {bad!r} for word {word!r}", lineno)
        if word in seen:
            raise InputFileError(path, f"duplicate word {word!r} (first on line {seen[word]})", lineno)
        seen[word] = lineno
        words.append(word)
        rows.append(row)
    if header and count is None:
        raise InputFileError(path, "empty file: no header")
    if header and max_words is None and len(words) != count:
        raise InputFileError(path, f"header announces {count} words but the file has {len(words)}")
    vectors = np.vstack(rows) if rows else np.zeros((0, dim or 0), dtype=np.float32)
    return Embeddings(words, vectors)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _load_binary(path: Path, max_words: int | None) -> Embeddings:
    with open_any(path, "rb") as fh:
        data = fh.read()
    newline = data.find(b"\n")
    if newline < 0:
        raise InputFileError(path, "no header line", 1)
    try:
        header = data[:newline].decode("ascii")
    except UnicodeDecodeError:
        raise InputFileError(path, "header is not ASCII 'count dim'", 1) from None
    count, dim = _parse_header(path, header)
    n = count if max_words is None else min(count, max_words)
    words, vectors, seen = [], np.empty((n, dim), dtype=np.float32), {}
    pos, width = newline + 1, 4 * dim
    for i in range(n):
        while pos < len(data) and data[pos : pos + 1] in (b"\n", b" "):
            pos += 1  # word2vec.c ends each record with '\n'; gensim does not
        space = data.find(b" ", pos)
        if space < 0 or space + 1 + width > len(data):
            raise InputFileError(path, f"truncated: header announces {count} words, record {i + 1} is incomplete")
        try:
            word = data[pos:space].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputFileError(path, f"record {i + 1}: word is invalid UTF-8 ({exc.reason})") from None
        if word in seen:
            raise InputFileError(path, f"record {i + 1}: duplicate word {word!r} (first at record {seen[word] + 1})")
        seen[word] = i
        words.append(word)
        vectors[i] = np.frombuffer(data, dtype="<f4", count=dim, offset=space + 1)
        pos = space + 1 + width
    if max_words is None and data[pos:].strip():
        raise InputFileError(path, f"header announces {count} words but more data follows record {count}")
    if not np.isfinite(vectors).all():
        bad = int(np.where(~np.isfinite(vectors).all(axis=1))[0][0])
        raise InputFileError(path, f"record {bad + 1} ({words[bad]!r}) holds a non-finite value")
    return Embeddings(words, vectors)


def _load_npy(path: Path, max_words: int | None) -> Embeddings:
    vocab = _vocab_path(path)
    if not vocab.exists():
        raise InputFileError(path, f"project format needs its word list {vocab}, which is missing")
    try:
        vectors = np.load(path, mmap_mode="r")
    except ValueError as exc:
        raise InputFileError(path, f"not a valid .npy matrix ({exc})") from None
    if vectors.ndim != 2:
        raise InputFileError(path, f"expected a 2-d matrix, found shape {vectors.shape}")
    words, counts, seen = [], [], {}
    with open(vocab, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if max_words is not None and len(words) >= max_words:
                break
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise InputFileError(vocab, f"invalid UTF-8 ({exc.reason})", lineno) from None
            word, _, count = line.partition("\t")
            if not word:
                raise InputFileError(vocab, "empty word", lineno)
            if word in seen:
                raise InputFileError(vocab, f"duplicate word {word!r} (first on line {seen[word]})", lineno)
            seen[word] = lineno
            words.append(word)
            if count:
                if not count.isdigit():
                    raise InputFileError(vocab, f"count {count!r} of word {word!r} is not a non-negative integer", lineno)
                counts.append(int(count))
    if max_words is None and len(words) != vectors.shape[0]:
        raise InputFileError(vocab, f"{len(words)} words for a matrix of {vectors.shape[0]} rows")
    if len(words) > vectors.shape[0]:
        raise InputFileError(vocab, f"more words than the {vectors.shape[0]} rows of {path}")
    if counts and len(counts) != len(words):
        raise InputFileError(vocab, "some words have a count and others not")
    rows = np.asarray(vectors[: len(words)], dtype=np.float32)
    if not np.isfinite(rows).all():
        bad = int(np.where(~np.isfinite(rows).all(axis=1))[0][0])
        raise InputFileError(path, f"row {bad + 1} ({words[bad]!r}) holds a non-finite value")
    return Embeddings(words, rows, counts or None)


# ---------------------------------------------------------------- gensim and Model2Vec files


def _load_keyedvectors(path: Path) -> Embeddings:
    from gensim.models import KeyedVectors

    try:
        kv = KeyedVectors.load(str(path))
    except Exception as exc:  # noqa: BLE001 - gensim unpickles: any failure means not a KeyedVectors file
        raise InputFileError(path, f"not a gensim KeyedVectors file ({type(exc).__name__}: {exc})") from None
    if not isinstance(kv, KeyedVectors):
        raise InputFileError(path, f"holds a gensim {type(kv).__name__}, not KeyedVectors")
    return Embeddings.from_gensim(kv)


def word_level_tokenizer(words: Sequence[str]):
    """A ``tokenizers`` word-level tokenizer over ``words`` (ids from 2 on, after :data:`MODEL2VEC_SPECIAL_TOKENS`):
    text is split on whitespace only, so a word of the vocabulary is always one token, and lower-cased first
    when every word is lower-case (a lower-cased corpus). A word it does not know is ``[UNK]``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    clash = [t for t in MODEL2VEC_SPECIAL_TOKENS if t in set(words)]
    if clash:
        raise ValueError(f"the vocabulary holds the special token(s) {clash} of the word-level tokenizer")
    vocab = {token: i for i, token in enumerate([*MODEL2VEC_SPECIAL_TOKENS, *words])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    if all(word == word.lower() for word in words):
        tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.add_special_tokens(list(MODEL2VEC_SPECIAL_TOKENS))  # marked special: never split, skipped on decode
    return tokenizer


#: the marker kind of a Model2Vec directory written by :func:`save_model2vec` (``staticvec export --model2vec``)
MODEL2VEC_KIND = "model2vec export"


def save_model2vec(emb: Embeddings, path: str | os.PathLike, readme: str | None = None) -> None:
    """``emb`` as a Model2Vec model directory, written by the library (``StaticModel.save_pretrained``: weights,
    tokenizer, config, sentence-transformers' modules.json) with ``readme`` as its model card.

    Rows: [PAD] and [UNK] zero, then the words' vectors as they are (float32). ``normalize`` is true, as in
    Model2Vec's own models: ``encode`` returns the unit-length mean of a text's known words' rows (unknown words
    left out), so a one-word text is the word's vector scaled to unit length; sentence-transformers adds its
    Normalize module for it (modules.json)."""
    from model2vec import StaticModel

    from staticvec.files import atomic_directory

    tokenizer = word_level_tokenizer(emb.words)
    rows = np.vstack([np.zeros((len(MODEL2VEC_SPECIAL_TOKENS), emb.dim), np.float32), emb.vectors])
    config = {"model_type": "model2vec", "architectures": ["StaticModel"], "hidden_dim": emb.dim,
              "tokenizer_name": "word-level", "normalize": True}
    model = StaticModel(rows, tokenizer, config=config, normalize=True)
    with atomic_directory(path, kind=MODEL2VEC_KIND) as tmp:
        model.save_pretrained(tmp, model_name=Path(path).name)  # the card's name: the target's, not the temporary one
        if readme is not None:
            (tmp / "README.md").write_text(readme, encoding="utf-8")


def _load_model2vec(path: Path) -> Embeddings:
    """The word rows of a Model2Vec directory: every token of its tokenizer except the special ones, id order."""
    import json

    from safetensors.numpy import load_file

    files = {name: path / name for name in ("model.safetensors", "tokenizer.json")}
    missing = [name for name, f in files.items() if not f.exists()]
    if missing:
        raise InputFileError(path, f"not a Model2Vec directory: no {', '.join(missing)}")
    try:
        rows = load_file(str(files["model.safetensors"]))["embeddings"]
    except Exception as exc:  # noqa: BLE001 - safetensors raises its own errors
        raise InputFileError(files["model.safetensors"], f"no readable 'embeddings' tensor ({exc})") from None
    try:
        spec = json.loads(files["tokenizer.json"].read_text(encoding="utf-8"))
        vocab = spec["model"]["vocab"]
    except (ValueError, KeyError, TypeError) as exc:
        raise InputFileError(files["tokenizer.json"], f"no tokenizer vocabulary ({exc})") from None
    if not isinstance(vocab, dict):
        raise InputFileError(files["tokenizer.json"], "not a word-level or WordPiece vocabulary (token -> id)")
    special = {t["content"] for t in spec.get("added_tokens", []) if t.get("special")}
    tokens = sorted(vocab.items(), key=lambda kv: kv[1])
    if rows.ndim != 2 or [i for _, i in tokens] != list(range(rows.shape[0])):
        raise InputFileError(path, f"token ids 0..{len(tokens) - 1} for embeddings of shape {rows.shape}: "
                                   "not one row per token")
    words = [(token, i) for token, i in tokens if token not in special]
    return Embeddings([token for token, _ in words], np.asarray(rows[[i for _, i in words]], dtype=np.float32))
