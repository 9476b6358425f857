"""Speed of post-processing at vocabulary scale.

A random embedding (default 100k × 300, float32, L2-normalised) whose vocabulary holds every
word of the PPDB-XL lexicon (the rest are filler words), in random order; times reading the
lexicon, building the graph, retrofitting with each method and solver (10 sweeps), and
Artetxe's transform. Run from the repository root:

    PYTHONPATH=workflow python benchmarks/post_speed.py [--lexicon ../shared/data/eval/lexicons/ppdb-xl.txt]
"""

import argparse
import os
import time

import numpy as np

from staticvec.post.artetxe import ArtetxeTransform
from staticvec.post.lexicon import lexicon_graph, read_lexicon
from staticvec.post.retrofit import normalize_rows, retrofit


def timed(label, fn):
    start, cpu = time.perf_counter(), time.process_time()
    result = fn()
    print(f"{label:<34s} {time.perf_counter() - start:7.2f} s wall {time.process_time() - cpu:7.2f} s cpu", flush=True)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lexicon", default="../shared/data/eval/lexicons/ppdb-xl.txt")
    parser.add_argument("--words", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--iterations", type=int, default=10)
    args = parser.parse_args()

    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    lexicon = timed("read lexicon", lambda: read_lexicon(args.lexicon))
    words = list(dict.fromkeys(w for head, nbrs in lexicon.items() for w in (head, *nbrs) if not w.startswith("---")))
    rng = np.random.default_rng(0)
    words = words[: args.words] + [f"filler{i}" for i in range(args.words - len(words))]
    words = [words[i] for i in rng.permutation(len(words))]
    index = {w: i for i, w in enumerate(words)}
    vectors = normalize_rows(rng.normal(size=(len(words), args.dim)).astype(np.float32))
    graph = timed("build graph", lambda: lexicon_graph(lexicon, index))
    print(f"{len(words)} words × {args.dim}, {graph.nnz} edges, {np.count_nonzero(np.diff(graph.indptr))} words with neighbours")

    for method in ("faruqui", "student-t"):
        for solver in ("jacobi", "gauss-seidel"):
            _, report = timed(
                f"retrofit {method} {solver}",
                lambda: retrofit(vectors, graph, method, iterations=args.iterations, solver=solver, return_report=True),
            )
            extra = f", {report.classes} colour classes" if report.classes else ""
            print(f"    last sweep's largest change {report.max_change[-1]:.2g}{extra}")
    transform = timed("artetxe eigen-decomposition", lambda: ArtetxeTransform(vectors))
    timed("artetxe transform (one alpha)", lambda: transform.transform(vectors, -0.5))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
