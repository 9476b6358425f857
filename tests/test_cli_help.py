"""Every option of every ``staticvec`` sub-command says what it does (``--help`` is the manual)."""

import argparse

from staticvec.cli import build_parser


def _commands(parser, path=("staticvec",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def test_every_option_has_help_text():
    undocumented = []
    for path, parser in _commands(build_parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if not action.option_strings:
                continue  # positionals are named in the usage line
            if not (action.help and action.help.strip()) or action.help == argparse.SUPPRESS:
                undocumented.append(f"{' '.join(path)} {'/'.join(action.option_strings)}")
    assert not undocumented, "options without help text:\n" + "\n".join(undocumented)


def test_a_stage_command_line_builds_that_stage_as_the_whole_parser_does():
    """build_parser(argv) registers only the stage argv names: every command of that stage, with the
    same options and help as in the whole parser; config, resources and export need no stage; no word or an
    unknown one gives them all."""
    from staticvec.cli import COMMAND_MODULES, TOP_LEVEL_COMMANDS

    top = set(TOP_LEVEL_COMMANDS)
    assert top == {"config", "resources", "export"}

    whole = dict(_commands(build_parser()))
    stages = [name.split(".")[1] for name in COMMAND_MODULES]
    for stage in stages:
        one = dict(_commands(build_parser(["-v", stage, "--some-flag"])))
        mine = {path: p for path, p in one.items() if len(path) > 1 and path[1] == stage}
        assert mine and {path: p.format_help() for path, p in mine.items()} == \
            {path: p.format_help() for path, p in whole.items() if len(path) > 1 and path[1] == stage}
        assert {path[1] for path in one if len(path) > 1} == top | {stage}
    for argv in ([], ["--version"], ["no-such-stage"]):
        assert {path[1] for path, _ in _commands(build_parser(argv)) if len(path) > 1} == top | set(stages)
    for argv in (["config", "x.yaml"], ["resources", "fetch"], ["export", "--vectors", "v.bin"]):
        one = dict(_commands(build_parser(argv)))
        assert {path[1] for path in one if len(path) > 1} == top
        assert {path: p.format_help() for path, p in one.items() if len(path) > 1} == \
            {path: p.format_help() for path, p in whole.items() if len(path) > 1 and path[1] in top}


def test_an_evaluation_job_imports_neither_numba_nor_the_other_stages():
    import subprocess
    import sys

    code = ("import sys\nfrom staticvec.cli import build_parser\n"
            "args = build_parser(sys.argv[1:]).parse_args(sys.argv[1:])\n"
            "print(args.handler.__module__, sorted(m for m in sys.modules if m == 'numba' or m.startswith('staticvec.train')))")
    out = subprocess.run([sys.executable, "-c", code, "evaluate", "intrinsic", "v.bin", "--out", "r.json"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "staticvec.evaluate.cli []"
