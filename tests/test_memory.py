"""staticvec.memory: freed buffers kept for reuse (glibc), and which commands ask for it."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from staticvec import memory
from staticvec.errors import StaticvecError

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"

# Allocates (glibc's malloc), touches and frees a 64 MiB block, above glibc's largest dynamic mmap
# threshold (32 MiB), six times; prints whether the policy was applied, the minor page faults of the
# first round and those of the next five.
_ROUNDS = """
import ctypes, resource
from staticvec.memory import keep_freed_memory
print(keep_freed_memory())
libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def one_round(n=64 << 20):
    p = libc.malloc(n); libc.memset(p, 1, n); libc.free(p)
start = faults(); one_round(); first = faults() - start
start = faults()
for _ in range(5):
    one_round()
print(first, faults() - start)
"""


def _faults(policy: str) -> tuple[str, int, int]:
    import os

    env = dict(os.environ, STATICVEC_MALLOC=policy)
    out = subprocess.run([sys.executable, "-c", _ROUNDS], capture_output=True, text=True, check=True, env=env)
    applied, first, later = out.stdout.split()
    return applied, int(first), int(later)


@pytest.mark.skipif(not GLIBC, reason="glibc's mallopt")
def test_kept_memory_is_reused_without_page_faults():
    # (faults counted against the first round's, whatever the page size: transparent huge pages fault less)
    applied, first, later = _faults("keep")
    assert applied == "True" and first > 0
    assert later < first // 4  # five rounds in the memory the first one faulted in
    applied, first, later = _faults("system")
    assert applied == "False"
    assert later > 4 * first * 0.8  # glibc's defaults map and unmap the block every round


def test_policy_from_the_environment(monkeypatch):
    monkeypatch.delenv(memory.ENV, raising=False)
    assert memory.policy() == "keep"
    monkeypatch.setenv(memory.ENV, " System ")
    assert memory.policy() == "system"
    assert memory.keep_freed_memory() is False  # nothing set
    monkeypatch.setenv(memory.ENV, "jemalloc")
    with pytest.raises(StaticvecError, match=r"STATICVEC_MALLOC='jemalloc'.*keep, system"):
        memory.policy()


def test_keep_is_a_no_op_without_glibc(monkeypatch):
    monkeypatch.delenv(memory.ENV, raising=False)
    monkeypatch.setattr(memory.platform, "system", lambda: "Darwin")
    assert memory.keep_freed_memory() is False


def _parsed(argv):
    from staticvec.cli import build_parser

    return build_parser(argv).parse_args(argv)


def test_the_teacher_and_evaluation_commands_ask_for_it_and_main_applies_it(monkeypatch):
    teacher = ["teacher", "features", "--teacher", "minilm", "--shard", "s.tsv.gz", "--vocab", "v.tsv", "--out", "o"]
    head = ["teacher", "fit-mlm-head", "--teacher", "minilm", "--shards", "s.tsv.gz", "--out", "h.pt"]
    tag = ["evaluate", "tag", "--teacher", "minilm", "--task", "chunk", "--out", "t.json"]
    intrinsic = ["evaluate", "intrinsic", "v.bin", "--out", "r.json"]
    for argv in (teacher, head, tag, intrinsic):
        assert _parsed(argv).keep_freed_memory is True, argv
    for argv in (["train", "glove", "--cooc", "c", "--vocab", "v", "--out", "o.bin", "--record", "o.json"],
                 ["train", "bert-sg", "--features", "f.json", "--vocab", "v", "--out", "o.bin", "--record", "o.json"]):
        assert not getattr(_parsed(argv), "keep_freed_memory", False), argv  # measured: nothing to gain

    import staticvec.memory
    import staticvec.teacher.cli as teacher_cli
    from staticvec.cli import main

    calls = []
    monkeypatch.setattr(staticvec.memory, "keep_freed_memory", lambda: calls.append("kept") or True)
    monkeypatch.setattr(teacher_cli, "_features", lambda args: calls.append("ran") or 0)
    assert main(teacher) == 0
    assert calls == ["kept", "ran"]  # before the handler allocates anything


def test_a_bad_policy_is_a_clear_error_of_the_command(monkeypatch, capsys):
    import staticvec.teacher.cli as teacher_cli
    from staticvec.cli import main

    monkeypatch.setenv(memory.ENV, "tcmalloc")
    monkeypatch.setattr(teacher_cli, "_features", lambda args: 0)
    argv = ["teacher", "features", "--teacher", "minilm", "--shard", "s.tsv.gz", "--vocab", "v.tsv", "--out", "o"]
    assert main(argv) == 2
    assert "STATICVEC_MALLOC='tcmalloc'" in capsys.readouterr().err
