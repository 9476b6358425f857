"""Configuration: load, merge and validate the workflow's config against its JSON schema.

The schema is split by stage: ``workflow/schemas/config.schema.yaml`` holds the top level
and ``workflow/schemas/config/<section>.schema.yaml`` the schema of ``config[<section>]``.
Every object is closed (``additionalProperties: false``), so a misspelt key is an error,
reported as one message that names the key and the keys or values that are allowed.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any, Iterable

from staticvec.errors import StaticvecError

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"
REPO_ROOT = Path(__file__).resolve().parents[2]


class ConfigError(StaticvecError):
    pass


def deep_merge(base: dict, override: dict) -> dict:
    """Recursively merge ``override`` into a copy of ``base`` (as Snakemake merges --configfile)."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def load_yaml(path: str | os.PathLike) -> Any:
    """A config file, sheet or schema, read by the package's one YAML loader (``staticvec.yaml_files``: a key
    given twice is an error naming the file, the key and both lines; malformed YAML names the file)."""
    from staticvec.yaml_files import YamlFileError
    from staticvec.yaml_files import load_yaml as load

    try:
        return load(path)
    except YamlFileError as exc:
        raise ConfigError(str(exc)) from None


def load_config(paths: Iterable[str | os.PathLike]) -> dict:
    """Load and merge config files, later files overriding earlier ones."""
    config: dict = {}
    for path in paths:
        data = load_yaml(path) or {}
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: a config file must be a mapping of keys to values")
        config = deep_merge(config, data)
    return config


def check_config_files(paths: Iterable[str | os.PathLike]) -> None:
    """Read each config file Snakemake was given (``workflow.configfiles``: config/config.yaml and every
    ``--configfile`` overlay) with the package's loader. Snakemake's own loader keeps the last of two equal
    keys, so a second ``corpus:`` block of an overlay would silently drop the first; here it is an error naming
    the file, the key and both lines, before any job."""
    for path in paths:
        load_yaml(path)


def config_schema() -> dict:
    """The full config schema: the top-level file with each section's schema inserted.

    A section may also have a folder ``config/<section>/`` holding one schema per
    sub-object (``methods/glove.schema.yaml`` is ``config['methods']['glove']``).
    """
    schema = load_yaml(SCHEMA_DIR / "config.schema.yaml")
    properties = schema.setdefault("properties", {})
    for section_file in sorted((SCHEMA_DIR / "config").glob("*.schema.yaml")):
        section = section_file.name[: -len(".schema.yaml")]
        properties[section] = load_yaml(section_file)
    for folder in sorted(p for p in (SCHEMA_DIR / "config").iterdir() if p.is_dir()):
        section = properties.setdefault(folder.name, {"type": "object", "additionalProperties": False})
        members = section.setdefault("properties", {})
        for member_file in sorted(folder.glob("*.schema.yaml")):
            members[member_file.name[: -len(".schema.yaml")]] = load_yaml(member_file)
    methods = properties["methods"].setdefault("properties", {})
    for block, defaults in (load_yaml(REPO_ROOT / "config" / "config.yaml").get("methods") or {}).items():
        if block not in methods:
            methods[block] = schema_of_defaults(defaults)
    return schema


JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}


def schema_of_defaults(defaults: dict) -> dict:
    """The schema of a method block that has no schema file (``methods/<block>.schema.yaml``): the keys
    of its defaults in config/config.yaml, each of its default's type (``null``: any), and its
    ``variants`` (named overrides) of those keys (a float default takes an integer too, an integer default
    no float). A schema file, with descriptions and ranges, replaces it."""
    hyper = {key: {"type": JSON_TYPES[type(value)]} if type(value) in JSON_TYPES else {}
             for key, value in defaults.items() if key != "variants"}
    return {"type": "object", "additionalProperties": False, "description": "inferred from its defaults in config/config.yaml",
            "properties": {**hyper, "variants": {"type": "object", "additionalProperties": {
                "type": "object", "additionalProperties": False, "properties": hyper}}}}


def _key_path(path: Iterable) -> str:
    parts = []
    for part in path:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            parts.append(("." if parts else "") + str(part))
    return "".join(parts) or "(top level)"


def _describe(error, schema_root: dict) -> str:
    """One readable line for a jsonschema error."""
    key = _key_path(error.absolute_path)
    validator = error.validator
    if validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        where = f" under '{key}'" if error.absolute_path else " at the top level"
        names = ", ".join(f"'{_key_path([*error.absolute_path, e])}'" for e in extra)
        return f"unknown config key {names}; allowed keys{where}: {', '.join(allowed)}"
    if validator == "enum":
        return f"config key '{key}' = {error.instance!r} is not allowed; allowed values: {', '.join(map(repr, error.validator_value))}"
    if validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"config key '{key}' must be of type {expected}, got {error.instance!r}"
    if validator == "required":
        missing = [name for name in error.validator_value if name not in error.instance]
        return "missing config key " + ", ".join(f"'{_key_path([*error.absolute_path, m])}'" for m in missing)
    if validator in {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "pattern", "minLength"}:
        return f"config key '{key}' = {error.instance!r}: {error.message}"
    if validator in {"oneOf", "anyOf"}:
        return f"config key '{key}' = {error.instance!r} matches none of the allowed forms ({error.message})"
    return f"config key '{key}': {error.message}"


def validate_config(config: dict, sources: str = "config") -> dict:
    """Validate ``config``; raise :class:`ConfigError` listing every problem, one per line.

    Returns the config unchanged, so a Snakefile can write ``config = validate_config(config)``.
    """
    import jsonschema

    schema = config_schema()
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    problems = [_describe(error, schema) for error in errors]
    problems += _check_paths(config)
    problems += _check_cross_fields(config)
    if problems:
        lines = "\n  - ".join(dict.fromkeys(problems))
        raise ConfigError(f"invalid configuration ({sources}):\n  - {lines}")
    return config


def _check_paths(config: dict) -> list[str]:
    """Paths that must exist when the workflow starts (directories given in the config)."""
    problems = []
    mirror = config.get("resources", {}).get("mirror")
    if mirror and not Path(resolve_path(mirror)).is_dir() and not config.get("resources", {}).get("allow_download"):
        problems.append(
            f"config key 'resources.mirror' = {mirror!r}: directory not found "
            f"(and resources.allow_download is false, so nothing could be fetched)"
        )
    return problems


def _check_cross_fields(config: dict) -> list[str]:
    """Checks that involve more than one key, or a value's meaning (the schema checks types and ranges)."""
    problems = []
    results_dir = config.get("results_dir")
    if isinstance(results_dir, str) and (not results_dir.strip() or Path(results_dir.strip()) == Path("/")):
        # "" plans every output at the filesystem root (Snakemake joins "" + "/corpus/...")
        problems.append(f"config key 'results_dir' = {results_dir!r}: give a directory (relative to the repository, "
                        f"or absolute), not the empty string or /")
    elif isinstance(results_dir, str):
        problems += _check_results_dir(results_dir)
    teacher = config.get("teacher") or {}
    models, default = teacher.get("models"), teacher.get("default")
    if isinstance(models, dict) and isinstance(default, str) and default not in models:
        # checked here, before the sheets: otherwise every teacher-based row is blamed for it
        problems.append(f"config key 'teacher.default' = {default!r} is not a teacher of teacher.models "
                        f"({', '.join(models)}): name one of them, or add {default!r} under teacher.models")
    corpus = config.get("corpus", {})
    lo, hi = corpus.get("min_sentence_tokens"), corpus.get("max_sentence_tokens")
    if isinstance(lo, int) and isinstance(hi, int) and lo > hi:
        problems.append(f"config keys 'corpus.min_sentence_tokens' = {lo} > 'corpus.max_sentence_tokens' = {hi}: "
                        f"no sentence would be kept")
    problems += _check_corpus(corpus)
    split = config.get("classification", {}).get("split")
    if isinstance(split, list) and split and all(isinstance(x, (int, float)) for x in split):
        if abs(sum(split) - 1.0) > 1e-6:
            problems.append(f"config key 'classification.split' = {split!r}: the train/validation/test fractions "
                            f"must sum to 1 (they sum to {sum(split):g})")
    tasks = config.get("evaluation", {}).get("tasks")
    if isinstance(tasks, list):
        from staticvec.evaluate.datasets import DATASETS, TASKS

        unknown = [t for t in tasks if t != "all" and t not in TASKS and t not in DATASETS]
        if unknown:
            problems.append(f"config key 'evaluation.tasks': unknown task or data set {', '.join(map(repr, unknown))}; "
                            f"known tasks: {', '.join(TASKS)}; data sets: {', '.join(DATASETS)}")
    return problems


def _tracked_files(root: Path, rel: Path) -> bool:
    """Whether git tracks a file under ``root/rel`` (False where ``root`` is not a git checkout)."""
    import subprocess

    try:
        done = subprocess.run(["git", "-C", str(root), "ls-files", "--", str(rel)], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and bool(done.stdout.strip())


def _check_results_dir(results_dir: str, root: Path | None = None) -> list[str]:
    """A run's folder is not one the repository keeps: not the repository (or a folder holding it), not the
    committed reference runs (``results/reference/``), not inside a folder of tracked files."""
    root = (root or REPO_ROOT).resolve()
    where = resolve_path(results_dir.strip(), root).resolve()
    key = f"config key 'results_dir' = {results_dir!r}"
    fix = "use a folder of its own, e.g. results/<name> (ignored by git) or one outside the repository"
    if where == root or root.is_relative_to(where):
        return [f"{key}: is the repository{'' if where == root else ' or holds it'}; a run writes corpus/, logs/, "
                f"tables/, benchmarks/ ... there, among the repository's own files: {fix}"]
    if not where.is_relative_to(root):
        return []
    rel = where.relative_to(root)
    if rel.parts[:2] == ("results", "reference"):
        return [f"{key}: is inside results/reference/, the committed reference runs (written only by `make "
                f"reference`): a run there overwrites them; {fix}"]
    top = Path(rel.parts[0])
    if top != Path("results") and _tracked_files(root, top):
        return [f"{key}: is inside {top}/, a folder of the repository's tracked files: the run's outputs would mix "
                f"with them; {fix}"]
    if _tracked_files(root, rel):
        return [f"{key}: holds files tracked by git; a run there would overwrite them; {fix}"]
    return []


def _check_corpus(corpus: dict) -> list[str]:
    """A corpus of your own names its files; its language is one spaCy can tokenize (checked at plan time)."""
    problems = []
    if corpus.get("format") in ("text", "jsonl") and not corpus.get("local_files"):
        problems.append(f"config key 'corpus.format' = {corpus['format']!r} reads your own files: list them (files, "
                        "directories or globs) in corpus.local_files")
    language = corpus.get("language", "en")
    if isinstance(language, str) and language != "en":
        try:
            from staticvec.corpus.tokenize import make_nlp

            make_nlp(bool(corpus.get("split_hyphens", False)), language)
        except StaticvecError as exc:
            problems.append(f"config key 'corpus.language' = {language!r}: {exc}")
    return problems


def resolve_path(path: str | os.PathLike, root: str | os.PathLike | None = None) -> Path:
    """Resolve a config path relative to the repository root (where Snakemake runs)."""
    p = Path(os.path.expanduser(str(path)))
    return p if p.is_absolute() else Path(root or os.getcwd()) / p

