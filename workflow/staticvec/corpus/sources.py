"""Raw Wikipedia text: WikiExtractor ``<doc>`` files and MediaWiki ``pages-articles`` dumps.

A dump is cleaned by wikiextractor (the maintained extractor the papers' corpora came from)
into ``<doc>`` files; from there both kinds of input are read by :func:`iter_documents`.
"""

from __future__ import annotations

import html
import logging
import lzma
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from staticvec.errors import InputFileError
from staticvec.files import open_any

log = logging.getLogger(__name__)

_DOC_OPEN = re.compile(r'^<doc id="([^"]*)"(?: url="[^"]*")?(?: title="([^"]*)")?[^>]*>\s*$')


@dataclass
class Document:
    id: str
    title: str
    paragraphs: list[str]


def iter_documents(path: str | os.PathLike) -> Iterator[Document]:
    """Articles of a WikiExtractor file (plain, .bz2, .xz, .gz): title line dropped, one paragraph per line.

    Raises InputFileError for a truncated/corrupt file or a malformed ``<doc>`` structure.
    """
    current: Document | None = None
    first_line = False
    lineno = 0
    try:
        with open_any(path, "rt") as fh:
            for lineno, line in enumerate(fh, start=1):
                line = line.rstrip("\n")
                if line.startswith("<doc "):
                    if current is not None:
                        raise InputFileError(path, f"<doc id=\"{current.id}\"> is not closed before the next <doc>", lineno)
                    match = _DOC_OPEN.match(line)
                    if not match:
                        raise InputFileError(path, "malformed <doc ...> line", lineno)
                    current = Document(match.group(1), html.unescape(match.group(2) or ""), [])
                    first_line = True
                elif line == "</doc>":
                    if current is None:
                        raise InputFileError(path, "</doc> without an opening <doc>", lineno)
                    yield current
                    current = None
                elif current is None:
                    if line.strip():
                        raise InputFileError(path, "text outside a <doc> block (not a WikiExtractor file?)", lineno)
                elif first_line:
                    first_line = False  # WikiExtractor repeats the title as the first line
                    text = html.unescape(line).strip()
                    if text and text != current.title.strip():
                        current.paragraphs.append(text)
                elif line.strip():
                    # wikiextractor escapes &, <, > in its text by default (html_safe)
                    current.paragraphs.append(html.unescape(line).strip())
    except (EOFError, OSError, lzma.LZMAError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise InputFileError(path, "file not found") from None
        raise InputFileError(path, f"corrupt or truncated compressed file ({exc})", lineno or None) from None
    except UnicodeDecodeError as exc:
        raise InputFileError(path, f"invalid UTF-8 ({exc.reason})", lineno + 1) from None
    if current is not None:
        raise InputFileError(path, f"truncated: <doc id=\"{current.id}\"> is not closed at end of file", lineno)


def extract_dump(dump: str | os.PathLike, out_dir: str | os.PathLike, processes: int = 1, bytes_per_file: str = "64M") -> list[Path]:
    """Clean a pages-articles XML dump with wikiextractor into compressed ``<doc>`` files.

    Templates are not expanded (``--no-templates``, as most corpus builds do: expansion needs
    a first pass over the whole dump). Returns the files written, in order.
    """
    from wikiextractor import WikiExtractor

    out_dir = Path(out_dir)
    tmp_dir = out_dir.with_name(f".{out_dir.name}.tmp")
    if tmp_dir.exists():
        import shutil

        shutil.rmtree(tmp_dir)
    _check_bz2(dump)
    argv = [
        str(dump), "-o", str(tmp_dir), "-b", bytes_per_file, "-c",
        "--no-templates", "--processes", str(processes), "-q",
    ]
    import sys

    saved = sys.argv
    sys.argv = ["wikiextractor", *argv]
    try:
        WikiExtractor.main()
    finally:
        sys.argv = saved
    files = sorted(p for p in tmp_dir.rglob("wiki_*") if p.is_file())
    if not files:
        raise InputFileError(dump, "wikiextractor found no articles (not a pages-articles dump?)")
    if out_dir.exists():
        import shutil

        shutil.rmtree(out_dir)
    os.replace(tmp_dir, out_dir)
    return sorted(p for p in out_dir.rglob("wiki_*") if p.is_file())


def _check_bz2(dump) -> None:
    """Fail early, naming the file, if a .bz2 dump is truncated or corrupt."""
    import bz2

    try:
        with bz2.open(dump, "rb") as fh:
            while fh.read(1 << 24):
                pass
    except (EOFError, OSError) as exc:
        raise InputFileError(dump, f"corrupt or truncated bz2 dump ({exc})") from None
