"""The planning model's measured inputs: unit costs and growth laws (``config/unit_costs.yaml``).

Each figure carries its provenance (command, machine, date, source, and ``status``: measured, derived or
estimate); the model reads only ``value``. A growth law is the least-squares power law y = c·x^e through
the measured points listed with it, so the file holds measurements, never fitted constants.

GPU figures are estimates until ``benchmarks/gpu_check.py`` has run: :func:`overlay_gpu_check` replaces
each figure that names a ``gpu_check`` field by that field of the script's JSON (``<shape>``, ``<path>``,
``<method>``, ``<what>`` in the field's dotted path stand for the keys of the figure's value).
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass
from pathlib import Path

import yaml

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
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputFileError(path, f"unreadable unit-cost file ({exc.strerror})") from None
        except yaml.YAMLError as exc:
            raise InputFileError(path, f"not YAML ({exc})") from None
        return cls(data or {}, path)

    def value(self, name: str, *keys: str):
        """A figure's value, or one entry of a figure whose value is a mapping."""
        try:
            value = self.data["costs"][name]["value"]
            for key in keys:
                value = value[key]
        except KeyError:
            raise InputFileError(self.path, f"no figure costs.{name}{''.join('.' + k for k in keys)}") from None
        return value

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


def overlay_gpu_check(costs: UnitCosts, measurements: dict, source: str) -> tuple[UnitCosts, list[str]]:
    """A copy of ``costs`` with every GPU figure that the gpu_check JSON holds replaced by its field
    (status measured, ``source`` the file); the names of the figures replaced."""
    data = copy.deepcopy(costs.data)
    replaced = []
    for name, entry in data["costs"].items():
        pattern = entry.get("gpu_check")
        if not pattern:
            continue
        if isinstance(entry["value"], dict):
            changed = False
            for leaf_keys in _leaf_keys(entry["value"]):
                found = _lookup(measurements, _fill(pattern, leaf_keys))
                if found is not None:
                    _set(entry["value"], leaf_keys, float(found))
                    changed = True
            if changed:
                replaced.append(name)
        else:
            found = _lookup(measurements, pattern)
            if found is not None:
                entry["value"] = float(found)
                replaced.append(name)
        if name in replaced:
            entry.update(status="measured", machine="gpu-check", source=source,
                         date=str(measurements.get("date") or "see the gpu_check JSON"))
    device = measurements.get("device") or measurements.get("gpu") or "the GPU of the gpu_check run"
    data.setdefault("machines", {})["gpu-check"] = f"{device} ({source})"
    return UnitCosts(data, costs.path), replaced


def load_gpu_check(path: str | Path) -> dict:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputFileError(path, f"unreadable ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise InputFileError(path, f"not JSON ({exc.msg}, line {exc.lineno})") from None


def _leaf_keys(value: dict, prefix: tuple = ()) -> list[tuple]:
    out = []
    for key, sub in value.items():
        if isinstance(sub, dict):
            out += _leaf_keys(sub, prefix + (key,))
        else:
            out.append(prefix + (key,))
    return out


def _fill(pattern: str, keys: tuple) -> str:
    """``teacher.<shape>.<path>.pieces_per_s`` with the placeholders replaced by ``keys`` in order."""
    parts, it = [], iter(keys)
    for part in pattern.split("."):
        parts.append(str(next(it, part)) if part.startswith("<") and part.endswith(">") else part)
    return ".".join(parts)


def _lookup(data, dotted: str):
    value = data
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _set(value: dict, keys: tuple, new) -> None:
    for key in keys[:-1]:
        value = value[key]
    value[keys[-1]] = new
