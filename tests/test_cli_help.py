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
