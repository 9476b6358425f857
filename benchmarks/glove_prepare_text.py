"""Tokenize a WikiExtractor directory into one lower-cased sentence per line (benchmark input).

A deliberately simple tokenizer (regex words and punctuation, regex sentence split), so that
the C GloVe tools and ours read the very same text file. Sentences of 10–40 tokens are kept,
as in the papers. Usage::

    python benchmarks/glove_prepare_text.py ../shared/data/corpus/enwiki-2015/AA benchmarks/work/aa.txt
"""

from __future__ import annotations

import argparse
import lzma
import re
import sys
from pathlib import Path

TOKEN = re.compile(r"\w+(?:[-'.]\w+)*|[^\w\s]")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def paragraphs(path: Path):
    """The paragraphs (lines) of one WikiExtractor file, stripped; titles and markup lines skipped."""
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        title_next = False
        for line in fh:
            if line.startswith("<doc "):
                title_next = True
                continue
            if title_next:  # first line of an article is its title
                title_next = False
                continue
            if line.startswith("</doc>") or not line.strip():
                continue
            yield line.strip()


def sentences_of(path: Path):
    for paragraph in paragraphs(path):
        for sentence in SENTENCE_END.split(paragraph):
            yield TOKEN.findall(sentence.lower())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path, help="WikiExtractor directory (wiki_NN or wiki_NN.xz files)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--min-tokens", type=int, default=10)
    parser.add_argument("--max-tokens", type=int, default=40)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    n_sentences = n_tokens = 0
    tmp = args.out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        for path in sorted(args.source.glob("wiki_*")):
            for tokens in sentences_of(path):
                if args.min_tokens <= len(tokens) <= args.max_tokens:
                    out.write(" ".join(tokens) + "\n")
                    n_sentences += 1
                    n_tokens += len(tokens)
    tmp.replace(args.out)
    print(f"{args.out}: {n_sentences} sentences, {n_tokens} tokens", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
