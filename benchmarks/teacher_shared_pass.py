"""The students' and the SemGloVe builders' teacher passes: two passes per shard against one shared pass.

    PYTHONPATH=workflow python benchmarks/teacher_shared_pass.py --shards 00000 00001 --mlm-head HEAD.pt

In the default config the students (BERT + Skip-gram, Context-to-Vec, X2Static sent, ASE) and the
SemGloVe builders read the same teacher on the same inputs (sentence context, [CLS]/[SEP], fitted
MLM head, so unmasked MLM: no masked copies). Old plan: a `sentence` pass (last layer, sentence
vectors, ASE sums) and a `semglove` pass (attention window, MLM top-k) per shard. New plan: one
pass computing both. Each plan runs as the workflow runs it on 2 cores: the passes of two shards
side by side, one thread each (`teacher.threads`), each command built by ``TeacherPlan`` from the
config (``--config`` files; the new plan is the same config with ``cooc.semglove.feature_set:
sentence``). Prints the wall time of each phase and of each plan, and checks that every array
the shared pass writes equals the separate passes' (vectors, sentence vectors, ASE sums, attention
windows, MLM predictions) byte for byte, or says which differ and by how much.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from staticvec.config import load_config, validate_config  # noqa: E402
from staticvec.dag.teacher import TeacherPlan  # noqa: E402


def side_by_side(argvs: list[list[str]], logs: list[Path]) -> float:
    """Run the commands at once (one thread each, as two 1-thread jobs on 2 cores); wall seconds."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT / "workflow"), HF_HUB_OFFLINE="1")
    for log in logs:
        log.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "staticvec", *argv], cwd=ROOT, env=env,
                              stdout=open(log, "w"), stderr=subprocess.STDOUT) for argv, log in zip(argvs, logs)]
    for proc, log in zip(procs, logs):
        if proc.wait() != 0:
            raise SystemExit(f"failed: {log}\n{log.read_text()[-2000:]}")
    return time.perf_counter() - started


def arrays(features_dir: Path) -> dict[str, np.ndarray]:
    """Every array a pass wrote: its parts' .npy/.npz members and the shard-level files."""
    out = {}
    for path in sorted(features_dir.rglob("*")):
        rel = str(path.relative_to(features_dir))
        if path.suffix == ".npy":
            out[rel] = np.load(path)
        elif path.suffix == ".npz":
            with np.load(path) as z:
                out.update({f"{rel}:{k}": z[k] for k in z.files})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", nargs="+", default=["config/config.yaml"])
    ap.add_argument("--shards", nargs=2, default=["00000", "00001"])
    ap.add_argument("--mlm-head", required=True, help="a fitted head (staticvec teacher fit-mlm-head)")
    ap.add_argument("--work", default=None, help="keep the features here (default: a temporary directory)")
    ap.add_argument("--compare-only", action="store_true", help="compare the features already under --work")
    args = ap.parse_args()

    config = validate_config(load_config(args.config))
    sets = config["teacher"]["feature_sets"]
    builders = sets[config["cooc"]["semglove"]["feature_set"]]  # what the config's SemGloVe pass computes
    semantic = {key: builders[key] for key in ("attention_window", "mlm_topk")}
    separate, shared = copy.deepcopy(config), copy.deepcopy(config)
    separate["cooc"]["semglove"]["feature_set"] = "semglove"
    separate["teacher"]["feature_sets"]["semglove"] = {**sets.get("semglove", {}), "context": "sentence",
                                                       "special_tokens": True, "layers": [], **semantic}
    separate["teacher"]["feature_sets"]["sentence"] = {k: v for k, v in sets["sentence"].items() if k not in semantic}
    shared["cooc"]["semglove"]["feature_set"] = "sentence"
    shared["teacher"]["feature_sets"]["sentence"] = {**sets["sentence"], **semantic}
    old, new = TeacherPlan(separate), TeacherPlan(shared)
    teacher = config["teacher"]["default"]
    vocab = old.vocab()

    def argv(plan, fset, shard, out):
        extra = ["--mlm-head", args.mlm_head] if plan.uses_fitted_head(teacher, fset) else []
        return ["teacher", "features", *shlex.split(plan.feature_args(teacher, fset)), *extra,
                "--shard", plan.corpus_shard(shard), "--vocab", vocab, "--out", str(out)]

    work = Path(args.work or tempfile.mkdtemp(prefix="shared_pass_"))
    print(f"uptime before: {os.popen('uptime').read().strip()}")
    phases = {}
    runs = () if args.compare_only else (("old", old, ("sentence", "semglove")), ("new", new, ("sentence",)))
    for label, plan, fsets in runs:
        total = 0.0
        for fset in fsets:
            outs = [work / label / fset / s for s in args.shards]
            cmds = [argv(plan, fset, s, o) for s, o in zip(args.shards, outs)]
            seconds = side_by_side(cmds, [work / label / f"{fset}.{s}.log" for s in args.shards])
            phases[f"{label} {fset}"] = seconds
            total += seconds
            print(f"{label}: {fset} passes of shards {' and '.join(args.shards)} side by side: {seconds:.1f} s  "
                  f"({plan.computes(teacher, fset)})", flush=True)
        phases[label] = total
    if runs:
        print(f"uptime after: {os.popen('uptime').read().strip()}")
        print(f"\ntwo passes per shard {phases['old']:.1f} s, one shared pass {phases['new']:.1f} s: "
              f"{phases['old'] / phases['new']:.2f}x")
        (work / "phases.json").write_text(json.dumps(phases, indent=1))

    for shard in args.shards:
        got = arrays(work / "new" / "sentence" / shard)
        want = {**arrays(work / "old" / "sentence" / shard), **arrays(work / "old" / "semglove" / shard)}
        missing = sorted(set(want) - set(got))
        differ = {}
        for name, a in want.items():
            b = got.get(name)
            if b is None or (a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")):
                continue
            if a.shape != b.shape or a.dtype.kind not in "fiu":
                differ[name] = "shape/dtype"
                continue
            d = np.abs(a.astype(np.float64) - b.astype(np.float64))
            differ[name] = (f"max |difference| {np.nanmax(d):.3g}, {np.count_nonzero(d > 0) / d.size:.2%} of "
                            f"{d.size:,} values differ, NaN in the same places: "
                            f"{bool(np.array_equal(np.isnan(a), np.isnan(b)))}" if a.dtype.kind == "f" else
                            f"{np.count_nonzero(d)} of {d.size:,} values differ")
        print(f"shard {shard}: {len(want)} arrays of the two passes; {len(want) - len(missing) - len(differ)} "
              f"identical in the shared pass, {len(differ)} differ, {len(missing)} missing")
        for name, diff in sorted(differ.items()):
            print(f"  differs: {name}: {diff}")
        for name in missing:
            print(f"  missing: {name}")
    print(f"features kept under {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
