"""The one YAML loader of the package: PyYAML's safe loader that refuses a mapping key given twice.

YAML's loaders keep the last of two equal keys, so a second ``cbow:`` row of a sheet silently replaces the
first and a second ``corpus:`` block of a config overlay silently drops the first one's keys. Every sheet,
config file, schema, registry and unit-cost file is read here (:func:`load_yaml`); a repeated key, anywhere
in the document, is an error naming the file, the key's path and both lines.
"""

from __future__ import annotations

import os
from typing import Any

import yaml

from staticvec.errors import StaticvecError

_MERGE_TAG = "tag:yaml.org,2002:merge"


class YamlFileError(StaticvecError):
    """A YAML file that cannot be read as written: not YAML, or a key given twice."""


def _key_text(node) -> str:
    return str(node.value) if isinstance(node, yaml.ScalarNode) else f"<{node.id}>"


def _duplicate(node, path: tuple = (), seen: set | None = None):
    """The first key given twice in one mapping under ``node``: (key path, first line, second line), or None.

    Keys are compared as written with their tag (``1`` and ``"1"`` differ, as they do once loaded); the
    ``<<`` merge key is YAML's own way to override and is left to the loader."""
    seen = set() if seen is None else seen
    if id(node) in seen:  # an alias met again (anchors may nest)
        return None
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        first_line: dict = {}
        for key, value in node.value:
            if key.tag == _MERGE_TAG:
                continue
            ident = (key.tag, key.value) if isinstance(key, yaml.ScalarNode) else None
            here = (*path, _key_text(key))
            if ident is not None:
                if ident in first_line:
                    return ".".join(here), first_line[ident], key.start_mark.line + 1
                first_line[ident] = key.start_mark.line + 1
            found = _duplicate(value, here, seen)
            if found:
                return found
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            found = _duplicate(item, (*path[:-1], f"{path[-1]}[{i}]") if path else (f"[{i}]",), seen)
            if found:
                return found
    return None


def parse_yaml(text: str, source: str = "YAML text") -> Any:
    """The document of ``text`` (None when empty); ``source`` names it in the errors."""
    loader = yaml.SafeLoader(text)
    loader.name = source  # PyYAML's marks ("in <file>, line 3, column 11") name the file, not "<unicode string>"
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        found = _duplicate(node)
        if found:
            key, first, second = found
            raise YamlFileError(f"{source}, line {second}: duplicate key '{key}' (first given on line {first}); "
                                f"YAML would silently keep only the second: merge the two or remove one")
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise YamlFileError(f"{source}: not valid YAML: {exc}") from None
    finally:
        loader.dispose()


def load_yaml(path: str | os.PathLike) -> Any:
    """The document of the YAML file ``path``, refusing duplicate keys (:func:`parse_yaml`); errors name the file."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise YamlFileError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise YamlFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise YamlFileError(f"{path}: unreadable ({exc.strerror})") from None
    return parse_yaml(text, str(path))
