"""The planning model's measured inputs: unit costs and growth laws (``config/unit_costs.yaml``).

Each figure carries its provenance (command, machine, date, source, and ``status``: measured, derived or
estimate); the model reads only ``value``. A growth law is the least-squares power law y = c·x^e through
the measured points listed with it, so the file holds measurements, never fitted constants.

GPU figures are estimates until ``benchmarks/gpu_check.py`` has run: :func:`overlay_gpu_check` replaces
each figure that names a ``gpu_check`` source by that figure of the script's JSON. The JSON holds
``sections`` (``name``), each with ``figures`` (``name``, ``value``, further fields); a source is
``"<section>/<figure name prefix>"`` (the figure's ``value``) or ``"<section>/<prefix>:<field>"``. A figure
whose value is a mapping names one source per key (``bert-base.students: teacher_base/sentence pass``).
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass
from pathlib import Path


from staticvec.errors import InputFileError

STATUSES = ("measured", "derived", "estimate")


@dataclass(frozen=True)
class Law:
    """y = coefficient · x^exponent, fitted through measured points (log-log least squares)."""

    name: str
    coefficient: float
    exponent: float
    x_range: tuple[float, float]
    source: str

    @classmethod
    def fit(cls, name: str, points, source: str = "") -> "Law":
        xs = [math.log(float(x)) for x, _ in points]
        ys = [math.log(float(y)) for _, y in points]
        if len(xs) == 1:
            raise ValueError(f"law {name}: one point fixes no exponent")
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        exponent = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        coefficient = math.exp(my - exponent * mx)
        lo, hi = min(float(x) for x, _ in points), max(float(x) for x, _ in points)
        return cls(name, coefficient, exponent, (lo, hi), source)

    def __call__(self, x: float) -> float:
        return self.coefficient * float(x) ** self.exponent

    def extrapolated(self, x: float) -> bool:
        """Beyond the measured range (by more than 1 %: a budget's round number beside its measured size)."""
        return not (self.x_range[0] * 0.99 <= x <= self.x_range[1] * 1.01)

    def describe(self) -> str:
        lo, hi = self.x_range
        return f"{self.name} = {self.coefficient:.4g} x^{self.exponent:.3f} (measured at {lo:,.0f}-{hi:,.0f})"


class UnitCosts:
    """The figures of a unit-cost file: ``value(name)``, ``law(name)``, and each figure's record."""

    def __init__(self, data: dict, path: str | Path = "config/unit_costs.yaml"):
        self.path = str(path)
        self.data = data
        costs, laws = data.get("costs"), data.get("laws")
        if not isinstance(costs, dict) or not isinstance(laws, dict):
            raise InputFileError(self.path, "needs a `costs:` and a `laws:` mapping")
        for name, entry in costs.items():
            if not isinstance(entry, dict) or "value" not in entry or entry.get("status") not in STATUSES:
                raise InputFileError(self.path, f"costs.{name}: needs a value and a status ({', '.join(STATUSES)})")
            if entry["status"] == "measured" and not all(entry.get(k) for k in ("machine", "date", "source")):
                raise InputFileError(self.path, f"costs.{name}: a measured figure names its machine, date and source")
            if entry["status"] == "derived" and not (entry.get("derivation") or entry.get("what")):
                raise InputFileError(self.path, f"costs.{name}: a derived figure shows its derivation")
            if entry["status"] == "estimate" and not entry.get("derivation"):
                raise InputFileError(self.path, f"costs.{name}: an estimate states its assumption (derivation)")
            if entry.get("machine") and entry["machine"] not in data.get("machines", {}):
                raise InputFileError(self.path, f"costs.{name}: machine {entry['machine']!r} is not under machines:")
        self.laws = {}
        for name, entry in laws.items():
            try:
                self.laws[name] = Law.fit(name, entry["points"], entry.get("source", ""))
            except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
                raise InputFileError(self.path, f"laws.{name}: needs two or more [x, y] points ({exc})") from None

    @classmethod
    def load(cls, path: str | Path) -> "UnitCosts":
        from staticvec.yaml_files import parse_yaml

        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise InputFileError(path, f"unreadable unit-cost file ({exc.strerror})") from None
        data = parse_yaml(text, str(path))  # a key given twice is an error, as in every YAML file of the package
        return cls(data or {}, path)

    def value(self, name: str, *keys: str):
        """A figure's value, or one entry of a figure whose value is a mapping (numbers as floats: YAML 1.1
        reads ``6.5e5``, an exponent without its sign, as a string)."""
        try:
            value = self.data["costs"][name]["value"]
            for key in keys:
                value = value[key]
        except KeyError:
            raise InputFileError(self.path, f"no figure costs.{name}{''.join('.' + k for k in keys)}") from None
        return _number(value)

    def status(self, name: str) -> str:
        return self.data["costs"][name]["status"]

    def law(self, name: str) -> Law:
        try:
            return self.laws[name]
        except KeyError:
            raise InputFileError(self.path, f"no growth law laws.{name}") from None

    def estimates(self) -> list[str]:
        """Names of the figures that are estimates (the plan says which totals rest on them)."""
        return [name for name, entry in self.data["costs"].items() if entry["status"] == "estimate"]


def overlay_gpu_check(costs: UnitCosts, measurements: list[dict], source: str) -> tuple[UnitCosts, list[str]]:
    """A copy of ``costs`` with every GPU figure found in the gpu_check JSONs (``measurements``, later files
    first to win: a section rerun alone) replaced; the names of the values replaced (``figure`` or
    ``figure.key``). A figure all of whose values were replaced becomes ``measured``."""
    data = copy.deepcopy(costs.data)
    replaced = []
    for name, entry in data["costs"].items():
        sources = entry.get("gpu_check")
        if not sources:
            continue
        keyed = sources if isinstance(sources, dict) else {"": sources}
        found_all = True
        for key, where in keyed.items():
            found = _find_figure(measurements, where)
            if found is None:
                found_all = False
                continue
            if key:
                _set(entry["value"], tuple(key.split(".")), float(found))
            else:
                entry["value"] = float(found)
            replaced.append(f"{name}.{key}" if key else name)
        if found_all and any(r == name or r.startswith(name + ".") for r in replaced):
            entry.update(status="measured", machine="gpu-check", source=source,
                         date=_meta(measurements, "started") or "see the gpu_check JSON")
    device = _meta(measurements, "device") or "the GPU of the gpu_check run"
    data.setdefault("machines", {})["gpu-check"] = f"{device} ({source})"
    return UnitCosts(data, costs.path), replaced


def _find_figure(measurements: list[dict], where: str):
    """The value (or a field) of the figure ``section/name-prefix[:field]`` in the last JSON that has it."""
    path, _, field = where.partition(":")
    section, _, prefix = path.partition("/")
    for data in reversed(measurements):
        for sec in data.get("sections") or []:
            if sec.get("name") != section or sec.get("status", "ok") != "ok":
                continue
            for fig in sec.get("figures") or []:
                if str(fig.get("name", "")).startswith(prefix):
                    value = fig.get(field or "value")
                    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                        return value
    return None


def _meta(measurements: list[dict], key: str):
    for data in measurements:
        meta = data.get("meta") or {}
        value = meta.get(key) or (meta.get("env") or {}).get(key)
        if value:
            return str(value)
    return None


def load_gpu_check(path: str | Path) -> dict:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputFileError(path, f"unreadable ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise InputFileError(path, f"not JSON ({exc.msg}, line {exc.lineno})") from None


def _number(value):
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    if isinstance(value, dict):
        return {k: _number(v) for k, v in value.items()}
    return value


def _set(value: dict, keys: tuple, new) -> None:
    for key in keys[:-1]:
        value = value[key]
    value[keys[-1]] = new
