"""The documents of one corpus input, whatever its format: Wikipedia's, or a corpus of your own.

``corpus.format`` (the tokenize job's ``--format``) says how an input is read:

- ``wikiextractor``: WikiExtractor ``<doc>`` files (:mod:`staticvec.corpus.sources`; a
  ``pages-articles`` dump is extracted into them first);
- ``text``: one document per file, UTF-8. Paragraphs by ``corpus.paragraphs``: ``blank_lines``
  (the default: paragraphs separated by blank lines; the lines of a paragraph are wrapped text,
  joined by a space: books, Markdown, Project Gutenberg) or ``lines`` (every non-blank line is a
  paragraph: one-paragraph-per-line dumps). The article id is the file's path in its input;
- ``jsonl``: JSON Lines, one document per line: an object whose ``text`` field (a string) is the
  document, its paragraphs split as for ``text``, and whose optional ``id`` field (a string or an
  integer, unique in the input) is the article id, else ``<file>:<line>``.

Every file may be plain or compressed (gzip, bzip2, xz: read by content, whatever its name). An input
(one tokenize job) is a file or a directory: every file under it, hidden ones skipped, in path order
(``wiki_*`` files for ``wikiextractor``, as wikiextractor writes them).

Bad input is an :class:`~staticvec.errors.InputFileError` naming the file and the line, raised while
the corpus is tokenized, before any teacher pass: a binary file (a NUL byte: also UTF-16 text),
invalid UTF-8, a truncated compressed file, a JSONL line that is not a JSON object or has no string
``text``, a malformed or repeated ``id``, or a paragraph too long to be one (a file without blank
lines read with ``blank_lines``).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from staticvec.corpus.sources import Document, iter_documents
from staticvec.errors import InputFileError
from staticvec.files import iter_utf8_lines

FORMATS = ("wikiextractor", "text", "jsonl")
PARAGRAPH_STYLES = ("blank_lines", "lines")
# A paragraph is what one spaCy Doc holds (and X2Static's paragraph context): over this many characters
# the input has no paragraph breaks that `corpus.paragraphs` recognises.
MAX_PARAGRAPH_CHARS = 1_000_000

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_ID_FORBIDDEN = re.compile(r"[\t\n\r]")  # a shard line's article field ends at a tab


@dataclass(frozen=True)
class SourceFormat:
    """How the tokenize job reads its input (config ``corpus.format``, ``paragraphs``, ``jsonl``)."""

    format: str = "wikiextractor"
    paragraphs: str = "blank_lines"
    text_field: str = "text"
    id_field: str = "id"

    def __post_init__(self):
        if self.format not in FORMATS:
            raise ValueError(f"unknown corpus format {self.format!r} (one of {', '.join(FORMATS)})")
        if self.paragraphs not in PARAGRAPH_STYLES:
            raise ValueError(f"unknown paragraph style {self.paragraphs!r} (one of {', '.join(PARAGRAPH_STYLES)})")


def input_files(source: str | os.PathLike, fmt: SourceFormat) -> list[Path]:
    """The files of an input: the file itself, or every file under a directory, in path order."""
    source = Path(source)
    if not source.is_dir():
        if not source.exists():
            raise InputFileError(source, "file not found")
        return [source]
    if fmt.format == "wikiextractor":
        files = sorted(p for p in source.rglob("wiki_*") if p.is_file())
    else:
        files = sorted(p for p in source.rglob("*")
                       if p.is_file() and not any(part.startswith(".") for part in p.relative_to(source).parts))
    if not files:
        raise InputFileError(source, "an input directory without a file to read"
                             + (" (wiki_* files)" if fmt.format == "wikiextractor" else ""))
    return files


def iter_input_documents(source: str | os.PathLike, fmt: SourceFormat) -> Iterator[Document]:
    """Every document of an input (a file or a directory), in order."""
    source = Path(source)
    files = input_files(source, fmt)
    seen_ids: dict[str, tuple[Path, int]] = {}
    for path in files:
        name = path.relative_to(source).as_posix() if source.is_dir() else path.name
        if fmt.format == "wikiextractor":
            yield from iter_documents(path)
        elif fmt.format == "text":
            yield text_document(path, _clean_id(name), fmt.paragraphs)
        else:
            yield from jsonl_documents(path, _clean_id(name), fmt, seen_ids)


def text_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """(line number, text) of a UTF-8 text file, plain or compressed; a NUL byte means a binary file."""
    for lineno, line in iter_utf8_lines(path):
        if "\x00" in line:
            raise InputFileError(path, "a binary file, not UTF-8 text (a NUL byte; UTF-16 text must be converted "
                                 "to UTF-8)", lineno)
        if lineno == 1 and line.startswith("\ufeff"):
            line = line[1:]  # a UTF-8 byte-order mark is not text
        yield lineno, line


def split_paragraphs(lines: Iterable[tuple[int, str]], style: str, path: str | os.PathLike) -> Iterator[str]:
    """Paragraphs of numbered lines: ``blank_lines`` joins the lines between blank lines with a space,
    ``lines`` makes every non-blank line a paragraph. Leading and trailing whitespace is dropped."""
    current: list[str] = []
    size, first = 0, 0
    for lineno, line in lines:
        line = line.strip()
        if style == "lines":
            if line:
                _check_length(len(line), path, lineno, style)
                yield line
            continue
        if line:
            if not current:
                first = lineno
            current.append(line)
            size += len(line) + 1
            _check_length(size, path, first, style)
        elif current:
            yield " ".join(current)
            current, size = [], 0
    if current:
        yield " ".join(current)


def text_document(path: str | os.PathLike, article: str, style: str) -> Document:
    """A text file as one document (article id ``article``)."""
    return Document(article, "", list(split_paragraphs(text_lines(path), style, path)))


def jsonl_documents(path: str | os.PathLike, name: str, fmt: SourceFormat,
                    seen_ids: dict[str, tuple[Path, int]] | None = None) -> Iterator[Document]:
    """The documents of a JSON Lines file, one per non-blank line. ``seen_ids`` (shared by the files of
    one input) holds the ids met so far and where: a repeated id is an error."""
    seen_ids = {} if seen_ids is None else seen_ids
    for lineno, line in text_lines(path):
        if not line.strip():
            continue  # a blank line (a trailing newline) holds no document
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputFileError(path, f"not valid JSON ({exc.msg} at column {exc.colno})", lineno) from None
        if not isinstance(record, dict):
            raise InputFileError(path, f"not a JSON object but {_json_type(record)} (JSON Lines corpus: one object "
                                 f"with a {fmt.text_field!r} field per line)", lineno)
        if fmt.text_field not in record:
            keys = ", ".join(map(repr, list(record)[:8])) or "none"
            raise InputFileError(path, f"no {fmt.text_field!r} field (its keys: {keys}; config corpus.jsonl.text_field "
                                 "names the field)", lineno)
        text = record[fmt.text_field]
        if not isinstance(text, str):
            raise InputFileError(path, f"field {fmt.text_field!r} is {_json_type(text)}, not a string", lineno)
        article = _record_id(record.get(fmt.id_field), fmt.id_field, path, lineno) or f"{name}:{lineno}"
        if article in seen_ids:
            where, at = seen_ids[article]
            raise InputFileError(path, f"{fmt.id_field} {article!r} repeats the id of {where}, line {at} "
                                 "(ids must be unique)", lineno)
        seen_ids[article] = (Path(path), lineno)
        numbered = ((lineno, part) for part in _LINE_BREAK.split(text))
        yield Document(article, "", list(split_paragraphs(numbered, fmt.paragraphs, path)))


def _record_id(value, field: str, path, lineno: int) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputFileError(path, f"field {field!r} is {_json_type(value)}, not a string or an integer", lineno)
    value = str(value)
    if not value.strip() or _ID_FORBIDDEN.search(value):
        raise InputFileError(path, f"field {field!r} = {value!r}: an id must be non-blank, without tabs or line "
                             "breaks", lineno)
    return value


def _clean_id(name: str) -> str:
    return _ID_FORBIDDEN.sub("_", name)


def _json_type(value) -> str:
    kinds = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


def _check_length(size: int, path, lineno: int, style: str) -> None:
    if size > MAX_PARAGRAPH_CHARS:
        hint = (" (no blank line between paragraphs: set corpus.paragraphs: lines if each line is a paragraph)"
                if style == "blank_lines" else "")
        raise InputFileError(path, f"a paragraph of over {MAX_PARAGRAPH_CHARS:,} characters starts here{hint}", lineno)


# ---------------------------------------------------------------- the plan-time look at an input

#: how many lines of an input's first file the plan reads to tell its format
SNIFF_LINES = 20
_WIKI_DOC = re.compile(r"^<doc[\s>]")


def _json_object_line(line: str) -> bool:
    text = line.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return False
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


def format_problem(source: str | os.PathLike, fmt: SourceFormat) -> str | None:
    """What the first lines of an input (a file, or a directory's first file) show that ``fmt`` cannot read,
    in words naming ``corpus.format`` and the fix; None when they look right. Only the first
    :data:`SNIFF_LINES` lines are read: the plan reads no corpus, and the tokenize job checks every line.

    Told apart: an empty file or a directory with no file to read (or only empty ones); JSON objects read
    as ``text``; ``<doc>`` files read as ``text``; no ``<doc`` line under ``wikiextractor``; lines that are
    not JSON objects under ``jsonl``."""
    source = Path(source)
    if fmt.format == "wikiextractor" and source.is_dir() and not any(source.rglob("wiki_*")):
        others = [p for p in source.rglob("*") if p.is_file() and not p.name.startswith(".")]
        if others:
            return (f"a directory of {len(others)} file(s) and no wiki_* file, but corpus.format is 'wikiextractor' "
                    "(the default, for Wikipedia's extracted files): for your own files set corpus.format: text "
                    "(one document per file) or jsonl")
    try:
        files = input_files(source, fmt)
    except InputFileError as exc:
        return exc.problem + ("" if exc.problem == "file not found" else f" (corpus.format: {fmt.format})")
    sized = [p for p in files if p.stat().st_size > 0]
    if not sized:
        return ("an empty file" if files == [source] else f"every one of its {len(files)} file(s) is empty") + \
            ": nothing to tokenize"
    first = sized[0]
    try:
        lines = []
        for lineno, line in text_lines(first):
            if line.strip():
                lines.append((lineno, line))
            if len(lines) >= SNIFF_LINES or lineno >= 10 * SNIFF_LINES:
                break
    except InputFileError as exc:
        return f"{exc}"  # binary or invalid UTF-8: named with its line
    where = "" if first == source else f"{first}: "
    if not lines:
        return f"{where}only blank lines: nothing to tokenize"
    lineno, line = lines[0]
    if fmt.format == "text":
        if _json_object_line(line):
            return (f"{where}line {lineno} is a JSON object, but corpus.format is 'text' (its words would be "
                    "trained as '{', '\"text\":' ...): set corpus.format: jsonl")
        if _WIKI_DOC.match(line):
            return (f"{where}line {lineno} opens a wikiextractor <doc>, but corpus.format is 'text': set "
                    "corpus.format: wikiextractor")
    elif fmt.format == "wikiextractor":
        if not any(_WIKI_DOC.match(text) for _, text in lines):
            seen = "JSON objects" if _json_object_line(line) else "text"
            fix = "jsonl" if seen == "JSON objects" else "text"
            return (f"{where}no <doc ...> line in its first {len(lines)} non-blank lines ({seen}), but corpus.format "
                    f"is 'wikiextractor' (the default, for Wikipedia's extracted files): set corpus.format: {fix}")
    elif fmt.format == "jsonl":
        if not _json_object_line(line):
            return (f"{where}line {lineno} is not a JSON object, but corpus.format is 'jsonl': set corpus.format: "
                    + ("wikiextractor" if _WIKI_DOC.match(line) else "text"))
    return None
