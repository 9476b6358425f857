"""File helpers shared by every stage: atomic writes, transparent (de)compression, checksums.

Every output of the workflow is written through :func:`atomic_path` / :func:`atomic_open`:
the data goes to a temporary file beside the target and is renamed into place only when
complete, so an interrupted job never leaves a half-written file that looks finished.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import hashlib
import io
import json
import lzma
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator

from staticvec.errors import InputFileError, StaticvecError


def _gzip_open(path, mode: str = "rb", compresslevel: int = 9, encoding=None, errors=None, newline=None):
    """gzip.open, but a file written is the same bytes for the same content: its header carries no name (the
    temporary file's, under atomic_open) and mtime 0, so a shard's sha256 is a hash of its content."""
    if "r" in mode:
        return gzip.open(path, mode, compresslevel, encoding, errors, newline)
    raw = open(path, mode.replace("t", "").replace("b", "") + "b")  # noqa: SIM115 - closed by the GzipFile
    gz = gzip.GzipFile(filename="", mode="wb", compresslevel=compresslevel, fileobj=raw, mtime=0)
    gz.myfileobj = raw  # GzipFile closes the file it holds here when it is closed itself
    if "b" in mode:
        return gz
    return io.TextIOWrapper(gz, encoding, errors, newline)


# The one field of an output's JSON that holds how long its job took (wall seconds, rates): everything else in
# the workflow's outputs is the same bytes on a rerun, and comparisons of two runs (staticvec.same_outputs) skip
# this key by name at any depth. Timings of whole jobs are in the run's benchmarks/ files.
TIMING_KEY = "timing"


def without_timing(obj):
    """``obj`` (parsed JSON) without its :data:`TIMING_KEY` fields, at any depth."""
    if isinstance(obj, dict):
        return {k: without_timing(v) for k, v in obj.items() if k != TIMING_KEY}
    if isinstance(obj, list):
        return [without_timing(v) for v in obj]
    return obj


_COMPRESSED_OPENERS = {".gz": _gzip_open, ".bz2": bz2.open, ".xz": lzma.open}


def compression_of(path: str | os.PathLike) -> str | None:
    """The compression suffix of ``path`` ('.gz', '.bz2', '.xz') or None."""
    suffix = Path(path).suffix
    return suffix if suffix in _COMPRESSED_OPENERS else None


_MAGIC = {b"\x1f\x8b": ".gz", b"BZh": ".bz2", b"\xfd7zXZ\x00": ".xz"}


def sniff_compression(path: str | os.PathLike) -> str | None:
    """The compression of an existing file from its first bytes ('.gz', '.bz2', '.xz') or None.

    Reading by content rather than by name lets a mirror keep a file compressed under the
    plain name its checksum and its upstream URL use.
    """
    with open(path, "rb") as fh:
        head = fh.read(6)
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    return None


def open_any(path: str | os.PathLike, mode: str = "rt", encoding: str = "utf-8", **kwargs) -> IO:
    """Open a plain, gzip, bzip2 or xz file: by content when reading, by suffix when writing."""
    kind = sniff_compression(path) if "r" in mode else compression_of(path)
    opener = _COMPRESSED_OPENERS.get(kind or "", None)
    if "b" in mode:
        return (opener or open)(path, mode, **kwargs)
    if opener is None:
        return open(path, mode, encoding=encoding, **kwargs)
    return opener(path, mode, encoding=encoding, **kwargs)


def iter_utf8_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """(line number, text without its line end) of a UTF-8 file, plain or compressed: invalid bytes, or a
    truncated compressed file, are an error naming the file (and the line)."""
    from staticvec.errors import InputFileError

    lineno = 0
    with open_any(path, "rb") as fh:
        try:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputFileError(path, f"invalid UTF-8 ({exc.reason} at byte {exc.start})", lineno) from None
                yield lineno, text.rstrip("\r\n")
        except (EOFError, OSError, lzma.LZMAError) as exc:
            # the line that could not be read whole: the one after the last line read
            raise InputFileError(path, f"corrupt or truncated file ({exc})", lineno + 1) from None


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` on success.

    On an exception the temporary file is removed and ``target`` is left untouched.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        if tmp_path.exists():
            # mkstemp creates 0600; a result file gets the mode a plain open() would give it
            os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


#: the marker an atomic directory writer leaves in its output: what wrote it (``kind``) and every path it
#: holds, so that a later write may replace that folder (its own files) and no other
OUTPUT_MARKER = ".staticvec-output.json"


def _entries(folder: Path) -> list[str]:
    """Every file and folder under ``folder``, as sorted paths relative to it (the marker left out)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.name != OUTPUT_MARKER or p.parent != folder)


def check_replaceable(target: str | os.PathLike, kind: str) -> None:
    """Raise :class:`StaticvecError` unless writing a ``kind`` directory at ``target`` removes nothing that
    staticvec did not write: ``target`` is absent, an empty folder, or a previous ``kind`` output (its marker
    :data:`OUTPUT_MARKER`) holding only the files that output wrote."""
    target = Path(target)
    fix = "give a new or empty folder, or remove this one yourself"
    if not (target.exists() or target.is_symlink()):
        return
    if target.is_symlink() or not target.is_dir():
        raise StaticvecError(f"{target}: exists and is not a folder; refusing to replace it with a {kind} "
                             f"folder ({fix})")
    where = Path(os.path.abspath(target))
    if where in (Path.cwd(), Path.home()) or where.parent == where:
        raise StaticvecError(f"{target}: is the working directory, the home folder or a root; refusing to replace "
                             f"it with a {kind} folder (name a new folder inside it)")
    present = _entries(target)
    if not present:
        return
    marker = target / OUTPUT_MARKER
    record = None
    if marker.is_file():
        try:
            record = json.loads(marker.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            record = None
    if not isinstance(record, dict) or not isinstance(record.get("files"), list):
        raise StaticvecError(f"{target}: folder exists and was not written by staticvec ({len(present)} entries, "
                             f"e.g. {present[0]!r}); refusing to replace it with a {kind} folder ({fix})")
    if record.get("kind") != kind:
        raise StaticvecError(f"{target}: holds a staticvec {record.get('kind')!r} output, not a {kind} one; "
                             f"refusing to replace it ({fix})")
    foreign = sorted(set(present) - set(map(str, record["files"])))
    if foreign:
        raise StaticvecError(f"{target}: a previous {kind} output, but it now also holds files staticvec did not "
                             f"write ({', '.join(map(repr, foreign[:3]))}{' …' if len(foreign) > 3 else ''}); "
                             f"refusing to replace it (move those files out, or give a new folder)")


def replace_directory(tmp: str | os.PathLike, target: str | os.PathLike, kind: str) -> None:
    """Move the finished folder ``tmp`` onto ``target`` (see :func:`check_replaceable`), leaving the marker of a
    ``kind`` output in it; a previous output there is removed only once the new one is in place."""
    import shutil

    tmp, target = Path(tmp), Path(target)
    check_replaceable(target, kind)
    from staticvec import __version__

    (tmp / OUTPUT_MARKER).write_text(json.dumps({"kind": kind, "written_by": f"staticvec {__version__}",
                                                 "files": _entries(tmp)}, indent=1) + "\n", encoding="utf-8")
    os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp creates 0700
    if not target.exists():
        os.replace(tmp, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    os.replace(target, old / "previous")  # our own output (checked above), or an empty folder
    try:
        os.replace(tmp, target)
    except BaseException:
        os.replace(old / "previous", target)
        shutil.rmtree(old, ignore_errors=True)
        raise
    shutil.rmtree(old)


@contextlib.contextmanager
def atomic_directory(target: str | os.PathLike, kind: str) -> Iterator[Path]:
    """Yield a temporary directory beside ``target``; on success it becomes ``target`` (a directory of files
    written by a library, e.g. a Model2Vec model), marked as a ``kind`` output. ``target`` must be absent,
    empty or a previous ``kind`` output holding only its own files (:func:`check_replaceable`, checked before
    anything is written and again at the end): a command never removes what it did not write. On an
    exception the temporary directory is removed, ``target`` untouched."""
    import shutil

    target = Path(target)
    check_replaceable(target, kind)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        replace_directory(tmp, target, kind)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(target: str | os.PathLike, mode: str = "wt", encoding: str = "utf-8", **kwargs) -> Iterator[IO]:
    """Open ``target`` for writing atomically; compression follows the target's suffix."""
    if "r" in mode or "a" in mode:
        raise ValueError("atomic_open is for writing a whole file")
    with atomic_path(target) as tmp:
        opener = _COMPRESSED_OPENERS.get(compression_of(target) or "")
        if opener is None:
            fh = open(tmp, mode, **({} if "b" in mode else {"encoding": encoding}), **kwargs)
        elif "b" in mode:
            fh = opener(tmp, mode, **kwargs)
        else:
            fh = opener(tmp, mode, encoding=encoding, **kwargs)
        with fh:
            yield fh


def torch_save(obj, target: str | os.PathLike) -> None:
    """``torch.save(obj)`` to ``target``, atomically, the same bytes for the same object: torch names the zip
    archive's top folder after the file it writes to (here a temporary name), so the object is serialized to a
    buffer (archive name ``archive``) and the buffer written."""
    import torch

    buffer = io.BytesIO()
    torch.save(obj, buffer)
    with atomic_open(target, "wb") as fh:
        fh.write(buffer.getbuffer())


def write_json(target: str | os.PathLike, obj, indent: int = 2) -> None:
    """Write ``obj`` as pretty JSON, atomically."""
    with atomic_open(target, "wt") as fh:
        json.dump(obj, fh, indent=indent, sort_keys=False, ensure_ascii=False)
        fh.write("\n")


def read_json(path: str | os.PathLike):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise InputFileError(path, f"not valid JSON ({exc.msg})", exc.lineno) from None


def sha256_of(path: str | os.PathLike, decompress: bool = False, chunk: int = 1 << 20) -> str:
    """sha256 of a file's bytes, or of its decompressed content when ``decompress``.

    Reading a truncated or corrupt compressed file raises :class:`InputFileError`.
    """
    digest = hashlib.sha256()
    try:
        with (open_any(path, "rb") if decompress else open(path, "rb")) as fh:
            for block in iter(lambda: fh.read(chunk), b""):
                digest.update(block)
    except (EOFError, OSError, lzma.LZMAError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise InputFileError(path, f"corrupt or truncated compressed file ({exc})") from None
    return digest.hexdigest()
