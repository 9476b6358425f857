"""The ``staticvec`` command line: one command group per workflow stage.

Top level: ``config``, ``resources`` and ``export`` (defined here), then one group per stage, each built by
its subpackage's ``cli.py`` (``register(subparsers)``): ``corpus``, ``teacher``, ``cooc``,
``train``, ``post``, ``evaluate`` (``intrinsic``, ``classify``, ``tag``, ``tag-summary``) and
``report`` (``table``, ``figure``, ``summary``, ``manifest``, ...), and ``plan`` (a config's costs before it
runs). Flags shared between commands
are defined once in :mod:`staticvec.cli_args`. Handlers import their heavy dependencies (torch,
transformers, gensim) lazily so that ``staticvec --help`` and the light stages start fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from staticvec import __version__
from staticvec.cli_args import add_group
from staticvec.errors import StaticvecError

# One line per stage, in workflow order; each module defines register(subparsers).
COMMAND_MODULES = [
    "staticvec.corpus.cli",
    "staticvec.teacher.cli",
    "staticvec.cooc.cli",
    "staticvec.train.cli",
    "staticvec.post.cli",
    "staticvec.evaluate.cli",
    "staticvec.report.cli",
    "staticvec.plan.cli",
]


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; given the words of one (``argv``) whose first word names a stage, only
    that stage's commands are registered: a workflow job then imports its own stage's modules, not
    every stage's (the train commands' parameter classes alone bring numba, ~0.2 s a job)."""
    parser = argparse.ArgumentParser(
        prog="staticvec",
        description="Static word embeddings distilled from contextual language models.",
    )
    parser.add_argument("--version", action="version", version=f"staticvec {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _register_config(subparsers)
    _register_resources(subparsers)
    _register_export(subparsers)
    for name in _stage_modules(argv or []):
        importlib.import_module(name).register(subparsers)
    return parser


TOP_LEVEL_COMMANDS = ("config", "resources", "export")  # registered here, need no stage module


def _stage_modules(argv: list[str]) -> list[str]:
    """The stage modules (``staticvec.<stage>.cli`` registers the group ``<stage>``) a command line
    needs: the one its first word names; none for ``config``, ``resources`` and ``export``; every one when there is
    no word or an unknown one (the full help, or argparse's list of the valid commands)."""
    words = [word for word in argv if not word.startswith("-")]  # the top-level flags take no value
    if words and words[0] in TOP_LEVEL_COMMANDS:
        return []
    module = f"staticvec.{words[0]}.cli" if words else None
    return [module] if module in COMMAND_MODULES else list(COMMAND_MODULES)


# ---------------------------------------------------------------- staticvec config


def _register_config(subparsers) -> None:
    parser = subparsers.add_parser("config", help="check config files against the schema, and the sheets they name")
    parser.add_argument("files", nargs="*", help="config files, merged in order (later override earlier)")
    parser.add_argument("--snakemake-args", nargs=argparse.REMAINDER, default=None, metavar="ARGS",
                        help="instead: read config/config.yaml and the --configfile files of these Snakemake "
                             "arguments as YAML (the Makefile's targets, before Snakemake, whose own message on a "
                             "malformed file does not name it); silent when they read")
    parser.set_defaults(handler=_config)


def _config(args) -> int:
    from staticvec.config import check_config_files, load_config, validate_config
    from staticvec.dag.workflow import Workflow
    from staticvec.hub_offline import configfiles_of

    if args.snakemake_args is not None:
        check_config_files(["config/config.yaml", *configfiles_of(args.snakemake_args)])
        return 0
    if not args.files:
        raise StaticvecError("name the config files to check (e.g. staticvec config config/config.yaml my.yaml)")

    sources = " + ".join(map(str, args.files))
    config = validate_config(load_config(args.files), sources=sources)
    Workflow(config).check_sheets()  # the four sheets, as the workflow reads them when it plans
    print(f"ok: {sources} is a valid configuration, and its sheets are valid")
    return 0


# ---------------------------------------------------------------- staticvec resources


def _registry_arg(p, help: str = "the resource registry (default config/resources.yaml)") -> None:
    p.add_argument("--registry", default="config/resources.yaml", help=help)


def _register_resources(subparsers) -> None:
    sub = add_group(subparsers, "resources", help="fetch and verify external inputs", dest="resources_command")
    p = sub.add_parser("fetch", help="fetch (mirror first, then URL) and verify a resource")
    _registry_arg(p, help="the resource registry (URLs, checksums; default config/resources.yaml)")
    p.add_argument("--group", required=True, help="registry entry")
    p.add_argument("--member", help="one member (default: the whole group)")
    p.add_argument("--mirror", default=None,
                   help="directory searched first, with the registry's relative paths (default: none)")
    p.add_argument("--download-dir", default="resources/data", help="where verified copies go (default resources/data)")
    p.add_argument("--allow-download", action="store_true",
                   help="download from the registry's URLs what the mirror lacks (default: mirror only)")
    p.add_argument("--retries", type=int, default=3,
                   help="further attempts per URL after a failed download, with exponential back-off (default 3)")
    p.add_argument("--marker", help="write a JSON marker here when a whole group is fetched")
    p.set_defaults(handler=_resources_fetch)

    p = sub.add_parser("list", help="list registry entries and their members")
    _registry_arg(p)
    p.add_argument("--group", help="list only this registry entry (default: all)")
    p.set_defaults(handler=_resources_list)


def _resources_fetch(args) -> int:
    from staticvec.resources import Registry, ResourceError, fetch, fetch_group

    registry = Registry.load(args.registry)
    if args.member:
        member = registry.group(args.group).members.get(args.member)
        if member is None:
            raise ResourceError(f"{args.registry}: '{args.group}' has no member '{args.member}'")
        fetch(member, args.mirror, args.download_dir, args.allow_download, args.retries)
    else:
        fetch_group(args.group, registry, args.mirror, args.download_dir, args.allow_download, args.retries, args.marker)
    return 0


def _resources_list(args) -> int:
    from staticvec.resources import Registry

    registry = Registry.load(args.registry)
    for line in registry.describe(args.group):
        print(line)
    return 0


# ---------------------------------------------------------------- staticvec export


def _register_export(subparsers) -> None:
    p = subparsers.add_parser(
        "export", help="an embedding as a gensim KeyedVectors file and a Model2Vec directory (with a model card)",
        description="Write an embedding (any vector file the workflow writes) as a gensim KeyedVectors file "
                    "(KeyedVectors.load) and/or a Model2Vec StaticModel directory over a word-level tokenizer of its "
                    "words (StaticModel.from_pretrained, sentence-transformers), whose README.md says what made the "
                    "vectors and their scores. The workflow's rule: <results>/export/<id>/seed<s>/.")
    p.add_argument("--vectors", required=True, help="the embedding (.bin word2vec binary, .txt, .npy, .kv, a Model2Vec dir)")
    p.add_argument("--keyedvectors", default=None, metavar="FILE.kv", help="write a gensim KeyedVectors file here")
    p.add_argument("--model2vec", default=None, metavar="DIR", help="write a Model2Vec directory here")
    card = p.add_argument_group("the model card (all optional)")
    card.add_argument("--embedding", default=None, help="the embedding's id (default: the vector file's name)")
    card.add_argument("--seed", type=int, default=None, help="its training seed")
    card.add_argument("--method", default=None, help="its method (the embeddings sheet's)")
    card.add_argument("--description", default="", help="one line on what it is")
    card.add_argument("--teacher", default=None, help="the teacher it was distilled from, if any")
    card.add_argument("--fraction", type=float, default=1.0, help="share of the corpus's shards it was trained on")
    card.add_argument("--provenance", default=None, help="the run's provenance.json (corpus, commit, config, date)")
    card.add_argument("--scores", nargs="*", default=[], metavar="PROTOCOL=RESULT",
                      help="the run's intrinsic results of this embedding (staticvec evaluate intrinsic), per protocol")
    p.set_defaults(handler=_export)


def _export(args) -> int:
    from pathlib import Path

    from staticvec.cli_args import assignments
    from staticvec.export import Provenance, export
    from staticvec.files import read_json
    from staticvec.report.tables import load_result

    results = {}
    for protocol, paths in assignments(args.scores, "PROTOCOL=RESULT").items():
        if len(paths) > 1:
            raise StaticvecError(f"--scores: protocol {protocol!r} given {len(paths)} times")
        results[protocol] = load_result(paths[0])
    info = Provenance(embedding=args.embedding or Path(args.vectors).name.split(".")[0], seed=args.seed,
                      method=args.method, description=args.description, teacher=args.teacher, fraction=args.fraction,
                      run=read_json(args.provenance) if args.provenance else {})
    export(args.vectors, args.keyedvectors, args.model2vec, info, results)
    return 0


# ---------------------------------------------------------------- main


def command_parser(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The parser of the (sub)command the words of ``argv`` name (``staticvec train glove …``: train glove's)."""
    for word in argv:
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if actions and word in actions[0].choices:
            parser = actions[0].choices[word]
    return parser



def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # argparse would answer with the top-level usage: the command's own says what it takes
        import difflib

        command = command_parser(parser, argv)
        flags = [o for a in command._actions for o in a.option_strings if o.startswith("--")]
        typos = [(u, difflib.get_close_matches(u.split("=")[0], flags, n=1)) for u in unknown if u.startswith("--")]
        hint = "".join(f" ({u}: did you mean {close[0]}?)" for u, close in typos if close)
        command.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    try:
        if getattr(args, "keep_freed_memory", False):  # set by the commands that gain from it (staticvec.memory)
            from staticvec.memory import keep_freed_memory

            keep_freed_memory()
        result = args.handler(args)
    except StaticvecError as exc:
        print(f"{command_parser(parser, argv).prog}: error: {exc}", file=sys.stderr)  # e.g. staticvec corpus tokenize
        return 2
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
