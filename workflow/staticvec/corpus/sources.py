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
from staticvec.files import check_replaceable, open_any, replace_directory

log = logging.getLogger(__name__)

#: the marker kind of a folder of wikiextractor files (``extract_dump``)
EXTRACT_KIND = "wikiextractor extract"
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


def stream_offsets(index_path: str | os.PathLike) -> list[int]:
    """Byte offsets of the bz2 streams of a multistream dump, from its index (``offset:page_id:title``
    lines, .bz2 or plain), in increasing order. The bytes before the first offset are the header
    stream (``<mediawiki>`` and ``<siteinfo>``)."""
    import bz2

    opener = bz2.open if str(index_path).endswith(".bz2") else open
    offsets = set()
    try:
        with opener(index_path, "rt", encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                head, sep, _ = line.partition(":")
                if not sep or not head.isdigit():
                    raise InputFileError(index_path, f"not an 'offset:page_id:title' line: {line[:80].rstrip()!r}", lineno)
                offsets.add(int(head))
    except (EOFError, OSError) as exc:
        raise InputFileError(index_path, f"unreadable multistream index ({exc})") from None
    if not offsets:
        raise InputFileError(index_path, "empty multistream index")
    return sorted(offsets)


def dump_part_ranges(offsets: list[int], dump_size: int, parts: int) -> list[tuple[int, int]]:
    """Split the page streams (``offsets[0]`` to the end of the dump) into ``parts`` contiguous byte
    ranges of about equal size, each starting and ending on a stream boundary. Ranges are in dump
    order, cover every stream exactly once and are never empty: min(parts, streams) of them."""
    if parts < 1:
        raise ValueError("parts must be >= 1")
    if offsets[-1] >= dump_size:
        raise ValueError(f"index offset {offsets[-1]} is beyond the dump's {dump_size} bytes (index of another dump?)")
    import bisect

    first, n = offsets[0], len(offsets)
    count = min(parts, n)
    cut_at = [0]  # indices into offsets of each range's first stream
    for k in range(1, count):
        target = first + (dump_size - first) * k / count
        lo, hi = cut_at[-1] + 1, n - (count - k)  # leave one stream for each range still to come
        j = min(max(bisect.bisect_left(offsets, target, lo, hi + 1), lo), hi)
        candidates = [i for i in (j - 1, j) if lo <= i <= hi]
        cut_at.append(min(candidates, key=lambda i: (abs(offsets[i] - target), i)))
    cuts = [offsets[i] for i in cut_at]
    cuts.append(dump_size)
    return list(zip(cuts[:-1], cuts[1:]))


def extract_dump(dump: str | os.PathLike, out_dir: str | os.PathLike, processes: int = 1, bytes_per_file: str = "64M",
                 index: str | os.PathLike | None = None, part: int | None = None, parts: int | None = None) -> list[Path]:
    """Clean a pages-articles XML dump with wikiextractor into compressed ``<doc>`` files.

    With a multistream dump's ``index``, only part ``part`` of ``parts`` (0-based) is extracted: the
    header stream and that part's page streams (``dump_part_ranges``), so a paper-scale dump becomes
    ``parts`` bounded jobs that read only their bytes. Templates are not expanded (``--no-templates``,
    as most corpus builds do: expansion needs a first pass over the whole dump). Returns the files
    written, in order.
    """
    from wikiextractor import WikiExtractor

    out_dir = Path(out_dir)
    check_replaceable(out_dir, EXTRACT_KIND)  # before hours of extraction: a folder staticvec did not write stays
    tmp_dir = out_dir.with_name(f".{out_dir.name}.tmp")
    if tmp_dir.exists():
        import shutil

        shutil.rmtree(tmp_dir)
    source = Path(dump)
    part_file = None
    if index is not None:
        if part is None or parts is None or not 0 <= part < parts:
            raise ValueError("extracting a dump part needs part in [0, parts)")
        offsets = stream_offsets(index)
        try:
            ranges = dump_part_ranges(offsets, os.path.getsize(dump), parts)
        except ValueError as exc:
            raise InputFileError(index, str(exc)) from None
        if len(ranges) < parts:
            raise InputFileError(index, f"the dump has only {len(ranges)} page streams: set corpus.dump_parts <= {len(ranges)}")
        tmp_dir.mkdir(parents=True)
        part_file = tmp_dir / "part.xml.bz2"
        _copy_streams(dump, [(0, offsets[0]), ranges[part]], part_file)
        source = part_file
    _check_bz2(source, name=dump)
    argv = [
        str(source), "-o", str(tmp_dir / "text" if part_file else tmp_dir), "-b", bytes_per_file, "-c",
        "--no-templates", "--processes", str(processes), "-q",
    ]
    import sys

    saved = sys.argv
    sys.argv = ["wikiextractor", *argv]
    try:
        WikiExtractor.main()
    finally:
        sys.argv = saved
    if part_file is not None:
        part_file.unlink()
    files = sorted(p for p in tmp_dir.rglob("wiki_*") if p.is_file())
    if not files:
        what = f"part {part} of {parts} of " if part_file is not None else ""
        raise InputFileError(dump, f"wikiextractor found no articles in {what}the dump (not a pages-articles dump?)")
    replace_directory(tmp_dir, out_dir, EXTRACT_KIND)
    return sorted(p for p in out_dir.rglob("wiki_*") if p.is_file())


def _copy_streams(dump, ranges: list[tuple[int, int]], out: Path) -> None:
    """Concatenate byte ranges of ``dump`` (whole bz2 streams) into ``out``: a valid multi-stream bz2 file."""
    with open(dump, "rb") as src, open(out, "wb") as dst:
        for start, stop in ranges:
            src.seek(start)
            left = stop - start
            while left:
                block = src.read(min(left, 1 << 24))
                if not block:
                    raise InputFileError(dump, f"truncated: the index points past the end of the file ({stop} bytes)")
                dst.write(block)
                left -= len(block)


def _check_bz2(path, name=None) -> None:
    """Fail early, naming the dump, if a .bz2 file (the dump or one part's streams) is truncated or corrupt."""
    import bz2

    try:
        with bz2.open(path, "rb") as fh:
            while fh.read(1 << 24):
                pass
    except (EOFError, OSError) as exc:
        raise InputFileError(name or path, f"corrupt or truncated bz2 dump ({exc})") from None
