"""A YAML sheet read and checked against its JSON schema (every sheet of ``config/`` is read through it)."""

from __future__ import annotations

import os
from pathlib import Path

from staticvec.config import ConfigError, load_yaml


def load_sheet(path: str | os.PathLike, schema: str | os.PathLike, what: str) -> dict:
    """A YAML sheet checked against its JSON schema; every violation listed in one error naming the file."""
    import jsonschema

    spec = load_yaml(Path(path)) or {}
    errors = sorted(jsonschema.Draft202012Validator(load_yaml(Path(schema))).iter_errors(spec),
                    key=lambda e: list(map(str, e.path)))
    if errors:
        lines = "\n  - ".join(f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors)
        raise ConfigError(f"{path}: invalid {what}:\n  - {lines}")
    return spec
