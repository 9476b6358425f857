"""The teacher's passes, old (fp32) against new (``teacher.dtype: auto``: bf16 on CPUs with native bf16),
side by side in one run, on a real corpus shard.

    python benchmarks/teacher_dtype.py --shard results/default/corpus/shards/00000.tsv.gz

For each pass of the default DAG — the bare forward (last-layer word vectors), SemGloVe's pass
(attention ±10 + MLM top-11 with a fitted head, no vectors) and X2Static's paragraph pass (word and
sentence vectors) — it runs ``benchmarks/teacher_throughput.py`` in a fresh process with the old code
(``--old``, unpacked with ``git archive``; its ``auto`` is fp32 on a CPU) and with this checkout, on the
same sentences and batches, and prints pieces/s, the ratio new/old, and each feature pass's rate as a
share of the bare forward of the same dtype. ``uptime`` is printed before and after: a figure counts
only on a quiet machine. The MLM head (MiniLM ships none) is fitted once with the old code and cached
under ``benchmarks/work/`` (not timed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "teacher_throughput.py"

PASSES = [
    ("bare forward + last-layer word vectors", []),
    ("SemGloVe pass: attention ±10, MLM top-11", ["--attention-window", "10", "--mlm-topk", "11", "--mlm-head", "{head}"]),
    ("X2Static paragraph pass: word + sentence vectors", ["--context", "paragraph", "--sentence-vectors"]),
]


def unpack(ref: str, dest: Path) -> Path:
    archive = subprocess.run(["git", "archive", ref, "workflow"], cwd=ROOT, capture_output=True, check=True).stdout
    tar = dest / "old.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as fh:
        fh.extractall(dest)
    return dest / "workflow"


def run(code: Path | None, args: list[str], out: Path, threads: int) -> dict:
    cmd = [sys.executable, str(SCRIPT), *args, "--threads", str(threads), "--json", str(out)]
    if code is not None:
        cmd += ["--code", str(code)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": str(threads)}
    subprocess.run(cmd, check=True, env=env, capture_output=True, text=True)
    return json.loads(out.read_text())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shard", default=str(ROOT / "results/default/corpus/shards/00000.tsv.gz"))
    ap.add_argument("--sentences", type=int, default=1000)
    ap.add_argument("--old", default="fd12b22", help="git ref of the old code")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (the teacher rule's)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print("uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    work = ROOT / "benchmarks" / "work"
    work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        old = unpack(args.old, Path(tmp))
        head = work / "minilm_mlm_head.pt"
        if not head.exists():
            env = {**os.environ, "PYTHONPATH": str(old), "HF_HUB_OFFLINE": "1"}
            subprocess.run([sys.executable, "-m", "staticvec.cli", "teacher", "fit-mlm-head", "--teacher", "minilm",
                            "--shards", args.shard, "--out", str(head), "--train-positions", "20000",
                            "--heldout-positions", "2000"], check=True, env=env, capture_output=True)
        common = ["--teacher", "minilm", "--shard", args.shard, "--sentences", str(args.sentences),
                  "--repeats", str(args.repeats)]
        rows = []
        for name, extra in PASSES:
            extra = [a.replace("{head}", str(head)) for a in extra]
            o = run(old, common + extra, Path(tmp) / "old.json", args.threads)
            n = run(None, common + extra, Path(tmp) / "new.json", args.threads)
            rows.append((name, o, n))
            print(f"{name}: old ({o['dtype']}) full {o['full_pieces_per_s']} pieces/s, bare {o['bare_pieces_per_s']}; "
                  f"new ({n['dtype']}) full {n['full_pieces_per_s']}, bare {n['bare_pieces_per_s']}", flush=True)
    print()
    print(f"{rows[0][1]['sentences']} sentences, {rows[0][1]['pieces']} pieces (sentence context), {args.threads} threads")
    print("| pass | old dtype | old pieces/s | new dtype | new pieces/s | new / old | new pass / new bare |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: |")
    bare_old, bare_new = rows[0][1]["bare_pieces_per_s"], rows[0][2]["bare_pieces_per_s"]
    print(f"| bare forward (encoder only) | {rows[0][1]['dtype']} | {bare_old:,} | {rows[0][2]['dtype']} | {bare_new:,} | "
          f"{bare_new / bare_old:.2f}× | 100 % |")
    for name, o, n in rows:
        print(f"| {name} | {o['dtype']} | {o['full_pieces_per_s']:,} | {n['dtype']} | {n['full_pieces_per_s']:,} | "
              f"{n['full_pieces_per_s'] / o['full_pieces_per_s']:.2f}× | "
              f"{100 * n['full_pieces_per_s'] / n['bare_pieces_per_s']:.0f} % |")
    print("uptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
