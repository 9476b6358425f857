"""The corpus shard format, read by every later stage.

A shard is a gzip'd UTF-8 text file, one sentence per line, in corpus order::

    <article id> TAB <paragraph index in article> TAB <keep: 1|0> TAB <tokens joined by spaces>

All sentences of a paragraph are kept, in order, so a paragraph can be rebuilt as context
(X2Static's *para* variant); ``keep`` says whether the sentence passes the length filter
(10–40 tokens by default) and is therefore a training sentence. Tokens are lower-cased
(by default) spaCy tokens; they never contain whitespace.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from staticvec.errors import InputFileError
from staticvec.files import open_any


@dataclass
class Sentence:
    article: str
    paragraph: int
    keep: bool
    tokens: list[str]

    def to_line(self) -> str:
        return f"{self.article}\t{self.paragraph}\t{int(self.keep)}\t{' '.join(self.tokens)}\n"


@dataclass
class Paragraph:
    article: str
    index: int
    sentences: list[list[str]] = field(default_factory=list)
    keep: list[bool] = field(default_factory=list)

    @property
    def n_chars(self) -> int:
        """Length of the paragraph's text (tokens joined by single spaces)."""
        return sum(len(t) + 1 for s in self.sentences for t in s) - 1 if self.sentences else 0

    def passes(self, min_sentences: int = 0, min_chars: int = 0) -> bool:
        """X2Static's paragraph filter: at least ``min_sentences`` sentences and ``min_chars`` characters."""
        return len(self.sentences) >= min_sentences and self.n_chars >= min_chars


def parse_line(line: str, path: str | os.PathLike = "<shard>", lineno: int | None = None) -> Sentence:
    parts = line.rstrip("\n").split("\t")
    if len(parts) != 4 or parts[2] not in ("0", "1") or not parts[1].isdigit():
        raise InputFileError(path, "not a corpus shard line (article TAB paragraph TAB keep TAB tokens)", lineno)
    return Sentence(parts[0], int(parts[1]), parts[2] == "1", parts[3].split(" ") if parts[3] else [])


def iter_records(path: str | os.PathLike) -> Iterator[Sentence]:
    """Every sentence of a shard, kept or not, in order."""
    for lineno, line in enumerate(iter_lines(path), start=1):
        yield parse_line(line, path, lineno)


def iter_lines(path: str | os.PathLike) -> Iterator[str]:
    """A shard's lines, unparsed (a reader that skips most of them parses only the ones it keeps)."""
    try:
        with open_any(path, "rt") as fh:
            yield from fh
    except (EOFError, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise InputFileError(path, "shard not found") from None
        raise InputFileError(path, f"corrupt or truncated shard ({exc})") from None
    except UnicodeDecodeError as exc:
        raise InputFileError(path, f"invalid UTF-8 ({exc.reason})") from None


def iter_sentences(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> Iterator[list[str]]:
    """The training sentences (``keep`` = 1) of one or several shards, as token lists."""
    for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        for record in iter_records(path):
            if record.keep:
                yield record.tokens


def iter_paragraphs(
    paths: str | os.PathLike | Iterable[str | os.PathLike], min_sentences: int = 0, min_chars: int = 0
) -> Iterator[Paragraph]:
    """Paragraphs (all their sentences, with keep flags), optionally filtered as X2Static does."""
    for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        current: Paragraph | None = None
        for record in iter_records(path):
            if current is None or (record.article, record.paragraph) != (current.article, current.index):
                if current is not None and current.passes(min_sentences, min_chars):
                    yield current
                current = Paragraph(record.article, record.paragraph)
            current.sentences.append(record.tokens)
            current.keep.append(record.keep)
        if current is not None and current.passes(min_sentences, min_chars):
            yield current
