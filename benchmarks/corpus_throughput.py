"""Corpus stage throughput on enwiki-2015/AA (100 WikiExtractor files, ~16M words).

Runs the tokenize step exactly as the workflow does (one `staticvec corpus tokenize` job per
input file, N jobs at a time, as `snakemake --cores N` would), then the prepare step, and
reports tokens/s of the whole stage. Usage:

    python benchmarks/corpus_throughput.py [--data ../shared/data] [--jobs 2] [--files 100]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--files", type=int, default=100)
    args = parser.parse_args()

    inputs = sorted((Path(args.data) / "corpus" / "enwiki-2015" / "AA").glob("wiki_*"))[: args.files]
    staticvec = [sys.executable, "-m", "staticvec"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)

        def tokenize(src: Path):
            out = tmp / f"{src.stem}.tsv.gz"
            subprocess.run([*staticvec, "corpus", "tokenize", str(src), "--out", str(out),
                            "--stats", str(out.with_suffix("").with_suffix(".json"))],
                           check=True, capture_output=True)
            return out

        load = os.getloadavg()
        start = time.perf_counter()
        with ThreadPoolExecutor(args.jobs) as pool:
            outs = list(pool.map(tokenize, inputs))
        tokenized = time.perf_counter()
        stats = [o.with_suffix("").with_suffix(".json") for o in outs]
        subprocess.run([*staticvec, "corpus", "prepare", "--tokenized", *map(str, outs), "--stats", *map(str, stats),
                        "--out-dir", str(tmp / "corpus"), "--shards", "8"], check=True, capture_output=True)
        end = time.perf_counter()
        manifest = json.loads((tmp / "corpus" / "manifest.json").read_text())
    t = manifest["totals"]
    print(json.dumps({
        "files": len(inputs), "jobs": args.jobs, "load_before": [round(x, 2) for x in load],
        "tokenize_s": round(tokenized - start, 1), "prepare_s": round(end - tokenized, 1), "total_s": round(end - start, 1),
        "training_tokens": t["tokens"], "sentences": t["sentences"], "articles": t["articles"],
        "training_tokens_per_s": round(t["tokens"] / (end - start)),
    }, indent=2))


if __name__ == "__main__":
    main()
