"""Teacher and evaluation jobs with glibc's default allocator against ``staticvec.memory.keep_freed_memory``.

    OMP_NUM_THREADS=2 PYTHONPATH=workflow python benchmarks/allocator.py --shard 00003

Runs the default config's own commands (built by the planning layer, ``TeacherPlan`` and
``staticvec.dag.arguments``, as the rules build them), each in a fresh process, alternately with
``STATICVEC_MALLOC=system`` (glibc's defaults: the code before this change) and ``keep`` (the new
default), ``--rounds`` times, and prints per job and policy: wall seconds, user and system CPU
seconds, peak resident memory and minor page faults (``os.wait4``), with the wall ratio
system/keep. The jobs:

- the feature passes of the default DAG on one corpus shard (the plan's: `sentence`, which the
  SemGloVe builders share, and `paragraph`; before 2026-11-26 also `semglove`), outputs compared
  byte for byte between the two policies;
- the MLM-head fit with the config's settings (``--head-positions`` smaller for a shorter run); its
  head (the tensors) compared between the policies; the pass with MLM reads the first head fitted;
- the contextual tagging row (``evaluate tag --teacher``, chunking, seed 1), its scores compared;
- the intrinsic job of GloVe's three seeds (``evaluate intrinsic``, the protocols and data sets its
  readers read, as ``Workflow.intrinsic_groups``/``intrinsic_sets`` give them), its results compared
  (the timings they record left out).

``uptime`` is printed before and after: a figure counts only on a quiet machine. Threads: the
teacher rules declare 2, the tagger and the intrinsic job 1 (``OMP_NUM_THREADS`` is set per job accordingly). ``--jobs``
runs a subset.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from staticvec.config import load_config, validate_config  # noqa: E402
from staticvec.dag import arguments  # noqa: E402
from staticvec.dag.teacher import TeacherPlan  # noqa: E402
from staticvec.dag.workflow import Workflow  # noqa: E402


JOBS = ("fit-mlm-head", "sentence", "semglove", "paragraph", "tag", "intrinsic")


def run(argv: list[str], policy: str, threads: int, log: Path) -> dict:
    env = dict(os.environ, STATICVEC_MALLOC=policy, OMP_NUM_THREADS=str(threads),
               PYTHONPATH=str(ROOT / "workflow"), HF_HUB_OFFLINE="1")
    started = time.perf_counter()
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "staticvec", *argv], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed ({policy}): staticvec {shlex.join(argv)}\n{log.read_text()[-2000:]}")
    return {"wall": wall, "user": usage.ru_utime, "sys": usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024,
            "minflt": usage.ru_minflt}


def same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    ignorable = {"features.json"}  # records the pass's seconds; compared below without them
    if errors or set(mismatch) - ignorable:
        return False
    for name in set(mismatch) & ignorable:
        ja, jb = (json.loads((d / name).read_text()) for d in (a, b))
        if _without_times(ja) != _without_times(jb):
            return False
    return all(same_tree(a / d, b / d) for d in cmp.common_dirs)


def _without_times(obj):
    if isinstance(obj, dict):
        return {k: _without_times(v) for k, v in obj.items() if "second" not in k and k not in ("date", "created")}
    if isinstance(obj, list):
        return [_without_times(v) for v in obj]
    return obj


def same_head(a: Path, b: Path) -> bool:
    import torch

    sa, sb = (torch.load(p, map_location="cpu", weights_only=True)["state_dict"] for p in (a, b))
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def same_results(a: Path, b: Path) -> bool:
    """Every JSON result of the two runs equal, the timings they record left out."""
    names = sorted(p.name for p in a.glob("*.json"))
    return bool(names) and names == sorted(p.name for p in b.glob("*.json")) and all(
        _without_times(json.loads((a / n).read_text())) == _without_times(json.loads((b / n).read_text())) for n in names)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--shard", default="00003", help="corpus shard id of the feature passes")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--head-positions", type=int, default=None,
                    help="train positions of the head fit (default: the config's; held-out: a fifth of it)")
    ap.add_argument("--jobs", nargs="+", choices=JOBS, default=list(JOBS),
                    help="which jobs (the SemGloVe pass needs the head: fit-mlm-head runs first whenever it is asked)")
    args = ap.parse_args()

    os.chdir(ROOT)
    config = load_config([args.config])
    tp = TeacherPlan(config)
    teacher = config["teacher"]["default"]
    shard, vocab = tp.corpus_shard(args.shard), tp.vocab()
    for path in (shard, vocab):
        if not Path(path).exists():
            raise SystemExit(f"{path}: missing (run the corpus stage of the default config first)")
    work = Path(tempfile.mkdtemp(prefix="allocator_"))
    head_argv = shlex.split(tp.fit_head_args(teacher))
    if args.head_positions:
        for flag, value in (("--train-positions", args.head_positions), ("--heldout-positions", args.head_positions // 5)):
            head_argv[head_argv.index(flag) + 1] = str(value)
    head_argv = ["teacher", "fit-mlm-head", *head_argv, "--shards", *tp.corpus_shards()]
    # the plan's passes on the default teacher (since 2026-11-26 the SemGloVe builders share `sentence`, so
    # the default plan has no `semglove` pass: asking for it runs nothing)
    plan_sets = [p["set"] for p in tp.passes() if p["teacher"] == teacher]
    skipped = [f for f in ("sentence", "semglove", "paragraph") if f in args.jobs and f not in plan_sets]
    if skipped:
        print(f"not a pass of this config's plan, skipped: {', '.join(skipped)} (passes: {', '.join(plan_sets)})")
    needs_head = any(tp.uses_fitted_head(teacher, f) for f in plan_sets if f in args.jobs)
    wanted = set(args.jobs) | ({"fit-mlm-head"} if needs_head else set())
    jobs = [("fit-mlm-head", 2, lambda out: [*head_argv, "--out", str(out / "head.pt")], "head")]
    for fset in [f for f in plan_sets if f in wanted]:
        def argv(out, fset=fset):
            extra = ["--mlm-head", str(work / "head.pt")] if tp.uses_fitted_head(teacher, fset) else []
            return ["teacher", "features", *shlex.split(tp.feature_args(teacher, fset)), *extra, "--shard", shard,
                    "--vocab", vocab, "--out", str(out / "features")]
        jobs.append((f"features {fset}", 2, argv, "tree"))
    if "fit-mlm-head" not in wanted:
        jobs.pop(0)
    if "tag" in wanted:
        tag_cfg = config["tagging"]
        tag_argv = ["evaluate", "tag", "--teacher", teacher, "--layer", str(tag_cfg.get("contextual_layer", -1)),
                    "--name", f"contextual-{teacher}", "--task", "chunk",
                    *shlex.split(arguments.tag_data_arguments(config, "chunk")), "--seed", "1", "--threads", "1",
                    *shlex.split(arguments.tagger_arguments(config))]
        jobs.append(("tag contextual chunk", int(tag_cfg.get("threads", 1)),
                     lambda out: [*tag_argv, "--out", str(out / "tag.json")], "json"))
    if "intrinsic" in wanted:
        validate_config(config, sources=args.config)
        wf = Workflow(config)
        (protocols, seeds), = [key for key, ids in wf.intrinsic_groups().items() if "glove" in ids]
        vectors = [wf.embedding("glove", int(seed)) for seed in seeds]
        for path in vectors:
            if not Path(path).exists():
                raise SystemExit(f"{path}: missing (train GloVe's seeds of the default config first)")

        def intrinsic_argv(out):
            outputs = [{p: str(out / f"seed{seed}.{p}.json") for p in protocols} for seed in seeds]
            return ["evaluate", "intrinsic", *vectors, "--threads", "1",
                    *arguments.multi_cli_options(config, outputs, wf.intrinsic_sets("glove"))]
        jobs.append((f"intrinsic glove x{len(seeds)}", 1, intrinsic_argv, "json"))

    print(f"# uptime before: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} shard {args.shard}; system = glibc defaults, keep = "
          f"staticvec.memory.keep_freed_memory; work dir {work}")
    print(f"{'job':24s} {'policy':6s} {'wall s':>7s} {'user s':>7s} {'sys s':>6s} {'peak MB':>8s} {'minor faults':>13s}")
    summary = []
    for name, threads, argv_of, kind in jobs:
        walls = {"system": [], "keep": []}
        for r in range(args.rounds):
            outs = {}
            for policy in ("system", "keep") if r % 2 == 0 else ("keep", "system"):
                out = work / f"{name.replace(' ', '_')}.{policy}.{r}"
                out.mkdir()
                m = run(argv_of(out), policy, threads, out / "job.log")
                walls[policy].append(m["wall"])
                outs[policy] = out
                print(f"{name:24s} {policy:6s} {m['wall']:7.1f} {m['user']:7.1f} {m['sys']:6.1f} {m['rss_mb']:8.0f} "
                      f"{m['minflt']:13,d}", flush=True)
            a, b = outs["system"], outs["keep"]
            same = {"head": lambda: same_head(a / "head.pt", b / "head.pt"),
                    "tree": lambda: same_tree(a / "features", b / "features"),
                    "json": lambda: same_results(a, b)}[kind]()
            print(f"{name:24s} outputs {'identical' if same else 'DIFFER'}", flush=True)
            if name == "fit-mlm-head" and not (work / "head.pt").exists():
                (work / "head.pt").write_bytes((b / "head.pt").read_bytes())
        s, k = sum(walls["system"]) / len(walls["system"]), sum(walls["keep"]) / len(walls["keep"])
        summary.append((name, s, k))
    print("# mean wall over rounds: system → keep (ratio)")
    for name, s, k in summary:
        print(f"#   {name:24s} {s:7.1f} → {k:7.1f} s  ({s / k:.2f}×)")
    print(f"# uptime after: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
