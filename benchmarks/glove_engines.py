"""Do the GloVe engines optimise alike? Cost per iteration of the numba (CPU, per-entry)
engine against the torch (mini-batch, CUDA) engine on one store, and on CUDA the fused kernel's.

    python benchmarks/glove_engines.py STORE VOCAB [--batch-sizes 65536 8192] [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from staticvec.corpus.vocab import Vocabulary  # noqa: E402
from staticvec.train.glove import GloveConfig, train_glove  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("store")
    parser.add_argument("vocab")
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--dim", type=int, default=50)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[65536])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    vocab = Vocabulary.load(args.vocab, min_count=args.min_count)
    runs = [("numba", 0, "cpu")] + [("torch", b, args.device) for b in args.batch_sizes]
    if args.device.startswith("cuda"):  # the fused kernel (per entry, Hogwild warps); on cpu: numba's slow simulator
        runs.append(("kernel", 0, args.device))
    for engine, batch, device in runs:
        cfg = GloveConfig(dim=args.dim, iterations=args.iterations, x_max=10, bias_lr_scaled=False, grad_clip=100,
                          threads=args.threads, seed=1, batch_size=max(batch, 1), device=device)
        started = time.time()
        state = train_glove(args.store, vocab, cfg, engine=engine)
        print(f"{engine:6s} batch {batch or '-':>6} on {device}: cost per iteration "
              f"{[round(c, 5) for c in state.losses]} ({time.time() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
