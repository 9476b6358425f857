"""The embeddings sheet: every embedding the workflow trains, as data (``config/embeddings.yaml``).

An entry names a method and the hyper-parameters that differ from the method's defaults in
``config['methods'][method]``; a sweep expands entries over one parameter (the papers'
development curves). An entry may also say ``like: <id>`` and only what it changes: it is that
entry with its own fields over it (``resolve_likes``), resolved here, so that everything downstream
sees an ordinary entry. Adding a variant or a curve is a sheet edit, not a new rule.

Every embedding is written to ``<results>/embeddings/<id>/seed<seed>/vectors.bin``; a swept
variant's id is ``<base>~<param><value>`` (``glove~dim50``, ``bert_sg~window3``,
``x2static_para~fraction0.25``).
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from pathlib import Path

from staticvec.config import ConfigError, deep_merge
from staticvec.methods import REGISTRY
from staticvec.post.artetxe import alpha_grid
from staticvec.sheets.schema import load_sheet

# Methods and where their hyper-parameter defaults live in the config (None: no config block): the registry's.
METHODS = {name: method.config_block for name, method in REGISTRY.items()}
# Parameters every entry may set, whatever the method.
COMMON_PARAMS = {"fraction", "teacher"}
EMBEDDINGS_SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "embeddings.schema.yaml"


@dataclass(frozen=True)
class EmbeddingSpec:
    id: str
    method: str
    params: dict = field(default_factory=dict)  # the method's config defaults with the entry's overrides
    base: str | None = None  # the embedding a post-processing step reads
    teacher: str | None = None  # teacher id (config teacher.models) for teacher-based methods
    fraction: float = 1.0  # first fraction of the corpus shards used
    description: str = ""
    sweep: str | None = None  # the sweep that generated this variant

    @property
    def seeded(self) -> bool:
        """Whether the method depends on a random seed (deterministic baselines do not)."""
        return REGISTRY[self.method].seeded


@dataclass(frozen=True)
class Sweep:
    id: str
    bases: list[str]
    param: str
    values: list
    linked: dict = field(default_factory=dict)  # another parameter set alongside (x_max with the fraction)
    fraction: float | None = None  # corpus fraction of every run (a development subset)
    description: str = ""
    id_key: str | None = None  # the word before the value in variant ids (default: the parameter)

    def variant_id(self, base: str, value) -> str:
        text = f"{value:g}" if isinstance(value, float) else str(value).lower()
        text = text.replace("-", "m")  # alpha -0.5 -> alpham0.5: ids stay word characters, dots and '~'
        return f"{base}~{(self.id_key or self.param).replace('_', '')}{text}"


class EmbeddingSheet:
    def __init__(self, entries: dict[str, EmbeddingSpec], sweeps: dict[str, Sweep], source: str,
                 disabled: dict[str, str] | None = None):
        self.entries = entries
        self.sweeps = sweeps
        self.source = source
        # entries whose `when` flag (config sheets.optional_rows) is off: id -> flag; tables may name
        # them (shown with the paper's numbers only), nothing builds them
        self.disabled = disabled or {}

    @classmethod
    def load(cls, path: str | Path, config: dict) -> "EmbeddingSheet":
        data = load_sheet(path, EMBEDDINGS_SCHEMA, "embeddings sheet")  # structure; the semantics below
        methods_config = config.get("methods", {})
        optional = (config.get("sheets") or {}).get("optional_rows") or {}
        entries: dict[str, EmbeddingSpec] = {}
        disabled: dict[str, str] = {}
        for eid, raw in resolve_likes(data.get("embeddings") or {}, path).items():
            flag = (raw or {}).get("when")
            if flag is not None:
                if flag not in optional:
                    raise ConfigError(f"{path}: embedding '{eid}': when {flag!r} is not a flag of config "
                                      f"sheets.optional_rows ({', '.join(optional) or 'none'})")
                if not optional[flag]:
                    disabled[eid] = flag
                    continue
            entries[eid] = _spec(eid, {k: v for k, v in (raw or {}).items() if k != "when"}, methods_config, config,
                                 path)
        for spec in entries.values():
            if spec.base is not None and spec.base not in entries:
                raise ConfigError(f"{path}: embedding '{spec.id}' post-processes '{spec.base}', which is not in the sheet")
        sweeps = {}
        reduced = dict(config.get("sweep_fractions") or {})  # config: a sweep's points on a development subset
        unknown = sorted(set(reduced) - set(data.get("sweeps") or {}))
        if unknown:
            raise ConfigError(f"config key 'sweep_fractions': {unknown} are not sweeps of {path} "
                              f"({', '.join(data.get('sweeps') or {}) or 'none'})")
        for sid, raw in (data.get("sweeps") or {}).items():
            raw = raw or {}
            if sid in reduced:
                if raw.get("param") == "fraction":
                    raise ConfigError(f"config key 'sweep_fractions.{sid}': sweep '{sid}' varies the corpus "
                                      "fraction itself; a fraction of its points cannot be set")
                raw = {**raw, "fraction": float(reduced[sid])}
            sweep = _sweep(sid, raw, path, config)
            for base in sweep.bases:
                if base not in entries:
                    raise ConfigError(f"{path}: sweep '{sid}' varies '{base}', which is not in the sheet")
                for i, value in enumerate(sweep.values):
                    vid = sweep.variant_id(base, value)
                    if vid in entries:  # two sweeps over one parameter of one base: give one an `id_key`
                        made_by = f"sweep '{entries[vid].sweep}'" if entries[vid].sweep else "an entry of the sheet"
                        raise ConfigError(f"{path}: sweep '{sid}' makes the id '{vid}', which {made_by} makes too; "
                                          "set the sweep's `id_key` (the word before the value in its ids)")
                    overrides = {sweep.param: value, **{k: v[i] for k, v in sweep.linked.items()}}
                    if sweep.fraction is not None and sweep.param != "fraction":
                        overrides.setdefault("fraction", sweep.fraction)
                    entries[vid] = _variant(entries[base], vid, overrides, sid, path)
            sweeps[sid] = sweep
        problems = [p for spec in entries.values() for p in _param_problems(spec, config)]
        if problems:
            lines = "\n  - ".join(problems)
            raise ConfigError(f"{path}: invalid embedding parameters (checked before any job runs):\n  - {lines}")
        return cls(entries, sweeps, str(path), disabled)

    def __getitem__(self, eid: str) -> EmbeddingSpec:
        try:
            return self.entries[eid]
        except KeyError:
            raise ConfigError(f"{self.source}: no embedding '{eid}'") from None

    def __contains__(self, eid: str) -> bool:
        return eid in self.entries

    def ids(self, method: str | None = None) -> list[str]:
        return [e for e, s in self.entries.items() if method is None or s.method == method]

    def closure(self, ids) -> list[str]:
        """``ids`` and every embedding they are post-processed from, in dependency order."""
        seen: list[str] = []

        def visit(eid):
            spec = self[eid]
            if spec.base:
                visit(spec.base)
            if eid not in seen:
                seen.append(eid)

        for eid in ids:
            visit(eid)
        return seen


# What a `like:` entry takes from the entry it names: the run's definition (method, parameters, preset, the
# embedding a post-processing step reads, the optional-row flag: a variant of a costly row is as costly).
# Not its description (it describes the other run) nor its sweeps (a sweep names its bases); seeds are
# not an entry's field (config seeds / seeds_for give every entry its seeds).
INHERITED = ("method", "params", "preset", "base", "when")


def resolve_likes(raw_entries: dict, path) -> dict[str, dict]:
    """The sheet's entries with every ``like: <id>`` resolved into an ordinary entry: the named entry's
    inherited fields (``INHERITED``), its ``params`` merged key by key under the entry's own, the entry's
    other fields over them. Chains resolve in turn; a cycle or an unknown id is an error naming the entry."""
    resolved: dict[str, dict] = {}

    def resolve(eid: str, chain: tuple[str, ...]) -> dict:
        if eid in resolved:
            return resolved[eid]
        raw = dict(raw_entries[eid] or {})
        parent = raw.pop("like", None)
        if parent is None:
            resolved[eid] = raw
            return raw
        if parent in (*chain, eid):
            loop = (*chain, eid)[(*chain, eid).index(parent):]
            raise ConfigError(f"{path}: embedding '{eid}': like '{parent}' makes a cycle ({' -> '.join((*loop, parent))})")
        if parent not in raw_entries:
            raise ConfigError(f"{path}: embedding '{eid}': like {parent!r} is not an entry of the sheet "
                              "(a sweep's variants cannot be named: give the variant its own entry)")
        inherited = resolve(parent, (*chain, eid))
        if "method" in raw and raw["method"] != inherited["method"]:
            raise ConfigError(f"{path}: embedding '{eid}': like '{parent}' (method {inherited['method']}) cannot change "
                              f"the method to {raw['method']!r}; write an entry of its own")
        entry = {k: copy.deepcopy(v) for k, v in inherited.items() if k in INHERITED}
        entry.update({k: v for k, v in raw.items() if k != "params"})
        params = deep_merge(inherited.get("params") or {}, raw.get("params") or {})
        if params:
            entry["params"] = params
        if "description" not in raw:  # the model card and summary say what it is
            changed = [f"{k} {v}" for k, v in (raw.get("params") or {}).items()]
            changed += [f"{k} {raw[k]}" for k in ("preset", "base") if k in raw]
            entry["description"] = f"{parent} with {', '.join(changed)}" if changed else f"as {parent}"
        resolved[eid] = entry
        return entry

    return {eid: resolve(eid, ()) for eid in raw_entries}


def _spec(eid: str, raw: dict, methods_config: dict, config: dict, path) -> EmbeddingSpec:
    method = raw.get("method")
    if method not in METHODS:
        raise ConfigError(f"{path}: embedding '{eid}': method {method!r} is not one of {', '.join(METHODS)}")
    overrides = dict(raw.get("params") or {})
    block = METHODS[method]
    defaults = copy.deepcopy(methods_config.get(block, {})) if block else {}
    if block and block not in methods_config:
        raise ConfigError(f"{path}: embedding '{eid}' uses method '{method}', but config has no 'methods.{block}' block")
    settable = (set(defaults) - {"variants"}) | COMMON_PARAMS  # presets are chosen with `preset:`, not set
    unknown = set(overrides) - settable
    if block and unknown:
        raise ConfigError(
            f"{path}: embedding '{eid}': unknown parameter(s) {sorted(unknown)} for method '{method}'; "
            f"allowed: {', '.join(sorted(settable))}"
        )
    presets = defaults.pop("variants", {}) if block else {}
    if raw.get("preset"):
        # a named set of overrides of the method block (e.g. `released`: the authors' code's settings)
        if raw["preset"] not in presets:
            raise ConfigError(f"{path}: embedding '{eid}': preset {raw['preset']!r} is not one of "
                              f"methods.{block}.variants ({', '.join(presets) or 'none'})")
        defaults = deep_merge(defaults, presets[raw["preset"]])
    params = deep_merge(defaults, overrides)
    teacher = params.pop("teacher", None) or (config.get("teacher", {}).get("default") if _uses_teacher(method) else None)
    fraction = float(params.pop("fraction", 1.0))
    if method in {"retrofit", "artetxe"} and not raw.get("base"):
        raise ConfigError(f"{path}: embedding '{eid}' ({method}) needs 'base': the embedding it post-processes")
    return EmbeddingSpec(eid, method, params, raw.get("base"), teacher, fraction, raw.get("description", ""))


def _variant(base: EmbeddingSpec, vid: str, overrides: dict, sweep: str, path) -> EmbeddingSpec:
    params = copy.deepcopy(base.params)
    fraction, teacher = base.fraction, base.teacher
    for key, value in overrides.items():
        if key == "fraction":
            fraction = float(value)
        elif key == "teacher":
            teacher = value
        elif key in params or base.method in {"retrofit", "artetxe"}:
            params[key] = value
        else:
            raise ConfigError(f"{path}: sweep '{sweep}' sets '{key}', not a parameter of method '{base.method}'")
    return EmbeddingSpec(vid, base.method, params, base.base, teacher, fraction, base.description, sweep)


def _sweep(sid: str, raw: dict, path, config: dict) -> Sweep:
    if "values_from" in raw:  # e.g. methods.ase.layers: the values depend on the run's config (teacher depth)
        node = config
        for part in raw["values_from"].split("."):
            if not isinstance(node, dict) or part not in node:
                raise ConfigError(f"{path}: sweep '{sid}': values_from {raw['values_from']!r} is not a config key")
            node = node[part]
        if isinstance(node, dict):  # a range: {<param>_min, <param>_max, <param>_step} (post.artetxe)
            param = raw["param"]
            try:
                node = alpha_grid(*(float(node[f"{param}_{k}"]) for k in ("min", "max", "step")))
            except KeyError:
                raise ConfigError(f"{path}: sweep '{sid}': {raw['values_from']} needs {param}_min, {param}_max, {param}_step") from None
            except ValueError as exc:
                raise ConfigError(f"{path}: sweep '{sid}': {raw['values_from']}: {exc}") from None
        raw = {**raw, "values": list(node)}
    linked = raw.get("linked") or {}
    for key, values in linked.items():
        if len(values) != len(raw["values"]):
            raise ConfigError(f"{path}: sweep '{sid}': linked '{key}' needs one value per value of '{raw['param']}'")
    return Sweep(sid, list(raw["bases"]), raw["param"], list(raw["values"]), linked, raw.get("fraction"),
                 raw.get("description", ""), raw.get("id_key"))


# Parameters of the post-processing methods, which have no config block: the step and its inputs
# (the step's own hyper-parameters live in config `post`).
POST_PARAMS_SCHEMA = {
    "retrofit": {"type": "object", "additionalProperties": False, "required": ["kind", "lexicon"], "properties": {
        "kind": {"enum": ["faruqui", "student-t"]},
        "lexicon": {"type": "string"}}},
    "artetxe": {"type": "object", "additionalProperties": False, "required": ["alpha"], "properties": {
        "alpha": {"type": "number", "minimum": -1, "maximum": 1}}},
}


@functools.lru_cache(maxsize=None)
def _param_validator(method: str):
    import jsonschema

    return jsonschema.Draft202012Validator(_param_schema(method))


@functools.lru_cache(maxsize=1)
def _methods_schema() -> dict:
    from staticvec.config import config_schema

    return config_schema()["properties"]["methods"]["properties"]


def _param_schema(method: str) -> dict:
    """The JSON schema an entry's resolved parameters must satisfy: the method's config-block schema
    (the same one that checks config `methods.<method>`, presets removed), or the post-processing one."""
    if method in POST_PARAMS_SCHEMA:
        return POST_PARAMS_SCHEMA[method]
    block = METHODS[method]
    if block is None:  # teacher_token / teacher_word / external: nothing to set
        return {"type": "object", "additionalProperties": False, "properties": {}}
    schema = copy.deepcopy(_methods_schema()[block])
    schema.get("properties", {}).pop("variants", None)
    schema["required"] = [k for k in schema.get("required", []) if k != "variants"]
    if "dim" in schema.get("properties", {}):  # dim: teacher = the teacher's width (Workflow.params resolves it)
        schema["properties"]["dim"] = {"anyOf": [schema["properties"]["dim"], {"const": "teacher"}]}
    return schema


def _param_problems(spec: EmbeddingSpec, config: dict) -> list[str]:
    """Every problem of one entry's resolved parameters (types, ranges, enums, unknown keys), so that a
    typo fails at plan time instead of in a job (after Snakemake has removed the previous output)."""
    where = f"embedding '{spec.id}'" + (f" (sweep '{spec.sweep}')" if spec.sweep else "") + f", method {spec.method}"
    problems = []
    for error in sorted(_param_validator(spec.method).iter_errors(spec.params), key=lambda e: list(map(str, e.absolute_path))):
        key = ".".join(map(str, error.absolute_path)) or "params"
        if error.validator == "additionalProperties":
            extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            allowed = ", ".join(sorted(error.schema.get("properties", {}))) or "none"
            problems.append(f"{where}: unknown parameter(s) {extra}; allowed: {allowed}")
        else:
            problems.append(f"{where}: params.{key} = {error.instance!r}: {error.message}")
    if spec.method == "retrofit" and isinstance(spec.params.get("lexicon"), str):
        lexicons = (config.get("post") or {}).get("lexicons") or {}
        if spec.params["lexicon"] not in lexicons:
            problems.append(f"{where}: params.lexicon = {spec.params['lexicon']!r} is not a lexicon of config post.lexicons "
                            f"({', '.join(lexicons) or 'none'})")
    if not 0 < spec.fraction <= 1:
        problems.append(f"{where}: fraction = {spec.fraction!r} must be in (0, 1]")
    teachers = (config.get("teacher") or {}).get("models") or {}
    if spec.teacher is not None and teachers and spec.teacher not in teachers:
        problems.append(f"{where}: teacher = {spec.teacher!r} is not a teacher of config teacher.models ({', '.join(teachers)})")
    return problems


def _uses_teacher(method: str) -> bool:
    return REGISTRY[method].uses_teacher
