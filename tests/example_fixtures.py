"""CONTRIBUTING.md's worked examples, applied: each example's code blocks name their file (a new file, or
the place of an existing one they go into, ``# path, under key.path:`` / ``# path, in NAME:``), and a test
applies them to a copy of the repository's tracked files and checks there what the example says."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```(?:python|yaml)\n# (\S+?)(?:, (in|under) (\S+):)?\n(.*?)^```$", re.M | re.S)


def example_blocks(section: str) -> list[tuple[str, str | None, str]]:
    """(file, where in it or None for a new file, text) of each code block of the section that starts
    with the heading ``section``."""
    text = (REPO / "CONTRIBUTING.md").read_text()
    part = text[text.index(section):]
    part = part[:part.index("\n## ", 1)] if "\n## " in part[1:] else part
    return [(path, anchor or None, body) for path, _, anchor, body in BLOCK.findall(part)]


def insert(text: str, anchor: str, block: str, path: str) -> str:
    """``block`` into ``text``: as the first entry under the YAML key ``anchor`` (a dotted path,
    ``tables.semglove_table1.extra_rows``), or as the last entry of the Python list or dict assigned to
    ``anchor`` (``REGISTRY``, ``DATASETS``, ``EXPECTED``): before the first closing bracket indented less
    than the block."""
    lines = text.splitlines(keepends=True)
    if path.endswith(".py"):
        start = next(i for i, line in enumerate(lines) if line.startswith(f"{anchor}:") or line.startswith(f"{anchor} ="))
        depth = len(block) - len(block.lstrip(" "))
        end = next(i for i in range(start + 1, len(lines))
                   if lines[i].lstrip().startswith(("]", "}")) and len(lines[i]) - len(lines[i].lstrip(" ")) < depth)
        return "".join(lines[:end] + [block] + lines[end:])
    start, indent = -1, -1
    for key in anchor.split("."):  # each key the first one below the previous, deeper than it
        start = next(i for i in range(start + 1, len(lines))
                     if (m := re.match(rf"^( *){re.escape(key)}:(\s|$)", lines[i])) and len(m.group(1)) > indent)
        indent = len(lines[start]) - len(lines[start].lstrip(" "))
    return "".join(lines[:start + 1] + [block] + lines[start + 1:])


def tracked_files() -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True)
    if done.returncode == 0:
        return [f for f in done.stdout.split("\0") if f and (REPO / f).is_file()]
    skip = {".git", ".snakemake", ".venv", "results", "resources/data"}  # not a git checkout: the source tree
    return [str(p.relative_to(REPO)) for p in REPO.rglob("*")
            if p.is_file() and not any(str(p.relative_to(REPO)).startswith(s) for s in skip) and "__pycache__" not in p.parts]


def apply_example(root: Path, blocks: list[tuple[str, str | None, str]]) -> Path:
    """A copy of the repository's tracked files under ``root`` with the example's blocks applied."""
    for rel in tracked_files():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, root / rel)
    for path, anchor, body in blocks:
        target = root / path
        if anchor is None:
            assert not target.exists(), f"{path}: the example's new file exists already"
            target.write_text(body)
        else:
            target.write_text(insert(target.read_text(), anchor, body, path))
    return root


def changed_files(root: Path) -> set[str]:
    """The tracked files the copy under ``root`` changed (files it added are not listed)."""
    return {rel for rel in tracked_files() if (root / rel).read_bytes() != (REPO / rel).read_bytes()}


def only_gains_its_blocks(root: Path, blocks) -> None:
    """Each existing file the example edits only gains the block, nothing else."""
    for path, anchor, body in blocks:
        if anchor is not None:
            before, after = (REPO / path).read_text(), (root / path).read_text()
            assert len(after) == len(before) + len(body) and after.replace(body, "", 1) == before, path


def env_of(root: Path) -> dict:
    # the copy's package first; `staticvec` (the rules' command) is installed beside this interpreter
    return {**os.environ, "PYTHONPATH": str(root / "workflow"), "HF_HUB_OFFLINE": "1",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def snakemake(root: Path, override: Path, *args) -> subprocess.CompletedProcess:
    """Snakemake in the copy on the tests' tiny config, ``override`` over it."""
    quiet = [] if "-n" in args else ["--quiet", "rules"]  # a dry run prints each job's block
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", *quiet, "--configfile",
           str(root / "tests" / "config" / "test.yaml"), str(override), *args]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env_of(root))
    assert done.returncode == 0, f"snakemake failed:\n{done.stdout[-4000:]}\n{done.stderr[-6000:]}"
    return done


def override_file(root: Path, results: Path, shared_data: Path) -> Path:
    path = root / "paths.yaml"
    path.write_text(yaml.safe_dump({"results_dir": str(results),
                                    "resources": {"download_dir": str(results.parent / "data"), "mirror": str(shared_data)}}))
    return path
