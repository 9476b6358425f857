"""The conda environments (``--software-deployment-method conda``) list the same packages with the
same bounds as pyproject.toml, so a conda run and a pip install agree."""

import re
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAME = {"torch": "pytorch"}  # pip name -> conda-forge name where they differ
# conda-only entries: the interpreter, pip itself and conda-forge's build-selecting metapackages
CONDA_ONLY = {"python", "pip", "pytorch-cpu", "pytorch-gpu"}


def _parse(spec: str) -> tuple[str, str]:
    spec = spec.split("#")[0].strip()
    m = re.match(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)$", spec)
    assert m, f"cannot parse requirement {spec!r}"
    bounds = ",".join(sorted(b.strip() for b in m.group(3).replace("==", "=").split(",") if b.strip()))
    return m.group(1).lower().replace("_", "-"), bounds


def _pyproject() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = project["dependencies"] + project["optional-dependencies"]["offline-teachers"]
    out = dict(_parse(s) for s in specs)
    return {CONDA_NAME.get(k, k): v for k, v in out.items()}


def _env(path: Path) -> dict[str, str]:
    deps = yaml.safe_load(path.read_text())["dependencies"]
    specs = []
    for d in deps:
        if isinstance(d, dict):
            specs += [s for s in d["pip"] if not s.startswith("-e")]
        else:
            specs.append(d)
    return {k: v for k, v in map(_parse, specs) if k not in CONDA_ONLY}


@pytest.mark.parametrize("env", ["cpu", "cuda"])
def test_conda_environment_matches_pyproject(env):
    path = ROOT / "envs" / f"{env}.yaml"
    want, have = _pyproject(), _env(path)
    missing = sorted(set(want) - set(have))
    extra = sorted(set(have) - set(want))
    drifted = sorted(f"{k}: pyproject {want[k]!r}, {path.name} {have[k]!r}" for k in set(want) & set(have) if want[k] != have[k])
    assert not (missing or extra or drifted), f"{path}: missing {missing}, not in pyproject {extra}, bounds differ {drifted}"


@pytest.mark.parametrize("env", ["cpu", "cuda"])
def test_every_channel_a_package_needs_is_listed(env):
    """`cpuonly` / `pytorch-cuda` live on the pytorch channel: listing them without it cannot solve."""
    data = yaml.safe_load((ROOT / "envs" / f"{env}.yaml").read_text())
    names = {_parse(d)[0] for d in data["dependencies"] if isinstance(d, str)}
    if names & {"cpuonly", "pytorch-cuda"}:
        assert "pytorch" in data["channels"]
    assert "-e .." in next(d for d in data["dependencies"] if isinstance(d, dict))["pip"]


def test_no_deps_packages_are_installed_alike():
    """The packages installed without their requirements (pyproject's [tool.staticvec] no-deps) are installed so,
    with the same bounds, by the Makefile (pip runs, CI) and by each conda environment's post-deploy script."""
    specs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["staticvec"]["no-deps"]
    assert specs and all(_parse(s)[1] for s in specs)  # bounded, as every dependency
    installs = {"Makefile": (ROOT / "Makefile").read_text(),
                **{p.name: p.read_text() for p in sorted((ROOT / "envs").glob("*.post-deploy.sh"))}}
    assert set(installs) == {"Makefile", "cpu.post-deploy.sh", "cuda.post-deploy.sh"}
    for name, text in installs.items():
        lines = [line for line in text.splitlines() if "pip install" in line and "--no-deps" in line]
        for spec in specs:
            assert any(f'"{spec}"' in line for line in lines), f"{name} does not install {spec} with --no-deps"
