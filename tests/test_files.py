"""Atomic writes: all or nothing, with the mode a plain open() would give."""

import os

import pytest

from staticvec.files import atomic_open, read_json, write_json


def test_atomic_open_round_trips_compressed_text(tmp_path):
    target = tmp_path / "out" / "lines.txt.gz"
    with atomic_open(target) as fh:
        fh.write("a\tb\n")
    import gzip
    assert gzip.open(target, "rt").read() == "a\tb\n"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "result.json"
    write_json(target, {"v": 1})
    with pytest.raises(RuntimeError):
        with atomic_open(target) as fh:
            fh.write('{"v": 2')
            raise RuntimeError("killed mid-write")
    assert read_json(target) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_written_files_get_the_umask_mode_not_mkstemps_0600(tmp_path):
    old = os.umask(0o022)
    try:
        write_json(tmp_path / "a.json", {})
        plain = tmp_path / "plain.txt"
        plain.write_text("")
    finally:
        os.umask(old)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == plain.stat().st_mode & 0o777 == 0o644


def test_utf8_lines_of_plain_and_compressed_files_name_the_bad_line(tmp_path):
    import gzip

    from staticvec.errors import InputFileError
    from staticvec.files import iter_utf8_lines

    plain = tmp_path / "a.txt"
    plain.write_bytes("a b\r\nc\n".encode() + b"\xff\n")
    lines = iter_utf8_lines(plain)
    assert next(lines) == (1, "a b") and next(lines) == (2, "c")
    with pytest.raises(InputFileError, match="line 3"):
        next(lines)
    packed = tmp_path / "b.txt.gz"
    packed.write_bytes(gzip.compress("x\n".encode() * 1000)[:-20])  # cut: a truncated download
    with pytest.raises(InputFileError, match="truncated"):
        list(iter_utf8_lines(packed))
