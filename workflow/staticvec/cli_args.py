"""Argument helpers shared by the ``staticvec`` command groups, each defined once.

Every stage's ``cli.py`` builds its commands with these where a flag means the same thing
in several commands (a vocabulary cut, a device, a thread count, a seed, an output file, a
vector-file format), so that the flag's name, type and default cannot drift apart between
commands. Help texts may be specialised per command; the flags' meaning may not.
"""

from __future__ import annotations

import json
from pathlib import Path

from staticvec.errors import StaticvecError

#: vector file formats (= :data:`staticvec.embeddings.FORMATS`, repeated so that building the parser
#: does not import numpy)
VECTOR_FORMATS = ("word2vec", "glove", "binary", "npy", "keyedvectors", "model2vec")
DEVICES = ("auto", "cpu", "cuda")


# ---------------------------------------------------------------- groups


def add_group(subparsers, name: str, help: str, dest: str, metavar: str = "COMMAND", **kwargs):
    """A command group (``staticvec NAME SUB ...``): its parser's sub-command set, one required."""
    parser = subparsers.add_parser(name, help=help, **kwargs)
    return parser.add_subparsers(dest=dest, metavar=metavar, required=True)


# ---------------------------------------------------------------- vocabulary


def add_vocab_args(p, required: bool = True, help: str = "vocabulary file (word TAB count, by decreasing count)",
                   min_count_help: str = "vocabulary: keep words seen at least this often (default 1)",
                   max_vocab_help: str = "vocabulary: at most this many words, most frequent first (default: no cap)",
                   ) -> None:
    """``--vocab FILE --min-count N --max-vocab N``: a vocabulary file and the cut applied to it."""
    p.add_argument("--vocab", required=required, help=help)
    p.add_argument("--min-count", type=int, default=1, help=min_count_help)
    p.add_argument("--max-vocab", type=int, default=None, help=max_vocab_help)


def load_vocab_of(args, path: str | None = None):
    """The vocabulary of a command's ``--vocab`` (or ``path``), cut by its ``--min-count`` and ``--max-vocab``."""
    from staticvec.corpus.vocab import load_vocabulary

    return load_vocabulary(args.vocab if path is None else path, args.min_count, args.max_vocab)


# ---------------------------------------------------------------- outputs, resources, seeds


def add_out_arg(p, help: str, required: bool = True, flag: str = "--out", **kwargs) -> None:
    """The command's output file (``--out``; written atomically by the handlers)."""
    p.add_argument(flag, required=required, help=help, **kwargs)


def add_record_arg(p, help: str = "training record JSON (default: <out without suffix>.json)") -> None:
    p.add_argument("--record", default=None, help=help)


def add_device_arg(p, help: str = "auto: CUDA when available", choices=DEVICES) -> None:
    """``--device auto|cpu|cuda`` (``choices=None``: any torch device string, e.g. ``cuda:1``)."""
    p.add_argument("--device", default="auto", choices=choices, help=help)


def add_threads_arg(p, help: str = "torch CPU threads (default: torch's choice)") -> None:
    p.add_argument("--threads", type=int, default=None, help=help)


def add_seed_arg(p, default: int = 0, help: str = "random seed") -> None:
    p.add_argument("--seed", type=int, default=default, help=help)


def add_format_arg(p, flag: str = "--format", help: str = "vector file format (default: from the file name)",
                   default: str | None = None) -> None:
    """A vector-file format flag (``--format``, ``--vectors-format``, ``--out-format``)."""
    p.add_argument(flag, choices=VECTOR_FORMATS, default=default, help=help)


def add_memory_args(p, default_gb: float, tmp_help: str = "directory for spilled runs (default: beside the output)",
                    ) -> None:
    """The external-sort budget of the co-occurrence commands: memory, files merged at once, spill folder."""
    p.add_argument("--memory-gb", type=float, default=default_gb, help=f"memory budget in GiB (default {default_gb})")
    p.add_argument("--max-open", type=int, default=64, help="files merged at once (default 64)")
    p.add_argument("--tmp-dir", default=None, help=tmp_help)


def add_root_arg(p, help: str = "repository root the sheet's paths are relative to (default .)") -> None:
    p.add_argument("--root", default=".", help=help)


# ---------------------------------------------------------------- value parsers


def optional_float(text: str) -> float | None:
    """An argparse ``type``: a number, or none/null/0/empty for "not set"."""
    return None if text.lower() in ("none", "null", "0", "") else float(text)


def json_arg(text: str, flag: str):
    """A JSON value given on the command line (``--rows '[...]'``); invalid JSON names the flag."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise StaticvecError(f"{flag} is not valid JSON ({exc.msg})") from None


def json_or_file(text: str | None, flag: str, what: str = "settings") -> dict:
    """A mapping given as a JSON object string or as a .json/.yaml file, the file's name optionally
    after an ``@`` (``--hparams``, ``--params``)."""
    if not text:
        return {}
    if text.lstrip().startswith("{"):
        try:
            values = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StaticvecError(f"{flag} is not a valid JSON object ({exc.msg})") from None
    else:
        path = Path(text[1:] if text.startswith("@") else text)
        if not path.exists():
            raise StaticvecError(f"{flag} {text}: file not found")
        if path.suffix in (".yaml", ".yml"):
            from staticvec.config import load_yaml

            values = load_yaml(path)
        else:
            from staticvec.files import read_json

            values = read_json(path)
    if not isinstance(values, dict):
        raise StaticvecError(f"{flag} must be a mapping of {what}")
    return values


def assignments(items, metavar: str = "ID=FILE", key=str) -> dict:
    """``ID=FILE`` positionals → ``{key(ID): [FILE, ...]}`` (an id repeated for several seeds).

    ``key`` converts the id (e.g. ``int`` for layers); a bad item raises :class:`StaticvecError`."""
    grouped: dict = {}
    for item in items:
        name, sep, path = item.partition("=")
        try:
            converted = key(name) if name else None
        except ValueError:
            converted = None
        if not sep or converted is None or not path:
            raise StaticvecError(f"expected {metavar}, got {item!r}")
        grouped.setdefault(converted, []).append(path)
    return grouped

