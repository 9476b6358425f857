"""A mirror for planning where the inputs are not all here: the offline data (config/config.yaml's
``resources.mirror``) linked file by file, and empty stand-ins for the rest (the dump of a paper-scale
config, WordNet, licence-restricted sets). Planning reads no file's content, so the DAG is the one the
real inputs give; the planning model takes the corpus source's size from ``plan.source_gb`` where its
file is empty."""

from __future__ import annotations

from pathlib import Path

import yaml


def stand_in_mirror(configfiles, root: Path, out: Path) -> Path:
    """Build the mirror under ``out`` for the merged config of ``configfiles``; its directory."""
    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow
    from staticvec.resources import find_in_mirror

    root = Path(root).resolve()
    config = load_config(configfiles)
    shared_spec = load_config([root / "config/config.yaml"])["resources"]["mirror"]
    shared = (root / shared_spec).resolve() if shared_spec else None
    workflow = Workflow(config, root)
    members = [m for i in workflow.corpus_inputs() for m in (i.member, i.index) if m is not None]
    for gid in workflow.input_groups():
        members += workflow.registry.select(gid)
    mirror = out / "mirror"
    for m in {m.rel_path: m for m in members}.values():
        source = find_in_mirror(m, shared) if shared else None
        target = mirror / (m.rel_path if source is None else source.relative_to(shared))
        target.parent.mkdir(parents=True, exist_ok=True)
        if source is None:
            target.write_bytes(b"")
        elif not target.exists():
            target.symlink_to(source)
    return mirror


def stand_in_override(configfiles, root: Path, out: Path) -> Path:
    """A config file pointing ``resources.mirror`` at :func:`stand_in_mirror`'s directory."""
    mirror = stand_in_mirror(configfiles, root, out)
    override = out / "stand-ins.yaml"
    override.write_text(yaml.safe_dump({"resources": {"mirror": str(mirror)}}))
    return override
