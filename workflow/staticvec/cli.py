"""The ``staticvec`` command line: thin sub-commands, one per workflow step.

Each stage module exposes ``register(subparsers)`` adding its commands; handlers import
their heavy dependencies (torch, transformers, gensim) lazily so that ``staticvec --help``
and the light stages start fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from staticvec import __version__
from staticvec.errors import StaticvecError

# One line per stage; each module defines register(subparsers).
COMMAND_MODULES = [
    "staticvec.config",
    "staticvec.resources",
    "staticvec.corpus.cli",
    "staticvec.post.cli",
    "staticvec.teacher.cli",
    "staticvec.evaluate.intrinsic",
    "staticvec.report.tables",
    "staticvec.report.cli",
    "staticvec.evaluate.classification_cli",
    "staticvec.cooc.cli",
    "staticvec.train.cli",
    "staticvec.evaluate.tagging.cli",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="staticvec",
        description="Static word embeddings distilled from contextual language models.",
    )
    parser.add_argument("--version", action="version", version=f"staticvec {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    try:
        result = args.handler(args)
    except StaticvecError as exc:
        print(f"staticvec {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
