"""The teachers the plan reads: each teacher id's model, the ids the sheet's entries and SemGloVe's
builders use, their widths and depths, and the plan-time check that each loads as configured. (The
teacher stage's feature files and passes are :mod:`staticvec.dag.teacher`'s, ``TP``.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from staticvec.dag.common import teacher_model
from staticvec.errors import StaticvecError

if TYPE_CHECKING:
    from staticvec.sheets import EmbeddingSheet


def _in_hub_cache(repo_id: str) -> bool:
    """Whether a hub model's config.json is in the local Hugging Face cache."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except Exception:  # noqa: BLE001 - not a valid repo id, or no hub library: not cached
        return False


#: the files a transformers model folder keeps its weights in (save_pretrained: one file, or shards and an index)
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
                "pytorch_model.bin.index.json", "tf_model.h5", "flax_model.msgpack")


def local_model_problem(model: str) -> str | None:
    """What is wrong with a teacher given as a local path, found without loading it; None where it looks like a
    model folder, a .gguf file, an offline alias or a hub name. A relative path is relative to the repository
    (where Snakemake runs); a name is taken for a hub id only when it is ``org/name`` and ``org`` is no local
    folder."""
    from staticvec.teacher.load import MINILM_ALIASES, SMOLLM2_ALIASES

    if model.strip().lower() in MINILM_ALIASES or model.strip().lower() in SMOLLM2_ALIASES:
        return None
    path = Path(os.path.expanduser(model))
    if path.is_file():
        if path.suffix == ".gguf":
            return None
        return (f"{path} is a file, not a model folder: give the folder holding config.json, the weights and the "
                "tokenizer (save_pretrained writes one), or a .gguf file")
    if path.is_dir():
        if (path / "config.json").exists() and not any((path / name).exists() for name in WEIGHT_FILES) \
                and not any(path.glob("*.safetensors")):
            return (f"{path} has config.json but no weights ({', '.join(WEIGHT_FILES[:2])}): save the model itself "
                    "there (model.save_pretrained), not only its config and tokenizer")
        return None
    parts = Path(model).parts
    looks_local = model.startswith((".", "/", "~")) or len(parts) > 2 or (len(parts) == 2 and Path(parts[0]).is_dir())
    if looks_local:
        return (f"no such file or directory: {path.resolve()} (a relative path is relative to the repository, where the workflow "
                "runs): put the model there (model.save_pretrained) or correct the path")
    return None


class TeachersPlan:
    """The teacher lookups of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    config: dict
    sheet: EmbeddingSheet

    def teacher_model(self, teacher_id: str) -> str:
        return teacher_model(self.config, teacher_id)

    def teachers_used(self) -> list[str]:
        """Teacher ids the run reads: the sheet's teacher-based entries, SemGloVe's builders, the default."""
        used = [self.config["teacher"]["default"]]
        used += [spec.teacher for spec in self.sheet.entries.values() if spec.teacher]
        if self.sheet.ids("semglove") and (self.config.get("cooc", {}).get("semglove", {}) or {}).get("teacher"):
            used.append(self.config["cooc"]["semglove"]["teacher"])
        return list(dict.fromkeys(used))

    def check_teachers(self) -> None:
        """One error naming every teacher that cannot be loaded as configured, before any job runs:
        a local path that does not exist, a local model whose tokenizer is slow (no character offsets),
        or (teacher.offline: true) a hub name not in the local cache."""
        from staticvec.teacher.load import check_tokenizer, resolve_teacher

        offline = bool(self.config["teacher"].get("offline", True))
        problems = []
        for tid in self.teachers_used():
            model = self.teacher_model(tid)
            where = f"config key 'teacher.models.{tid}' = {model!r}"
            problem = local_model_problem(model)
            if problem is not None:
                problems.append(f"{where}: {problem}")
                continue
            try:
                source = resolve_teacher(model)
            except StaticvecError as exc:
                problems.append(f"{where}: {exc}")
                continue
            if source.local:
                try:
                    check_tokenizer(model)
                except StaticvecError as exc:
                    problems.append(f"{where}: {exc}")
                except Exception as exc:  # noqa: BLE001 - transformers' own errors on a malformed tokenizer file
                    problems.append(f"{where}: cannot load its tokenizer from {source.path} "
                                    f"({type(exc).__name__}: {exc})")
                continue
            if offline and not _in_hub_cache(model):
                problems.append(f"{where}: not a local directory and not in the Hugging Face cache "
                                "(HF_HOME), and teacher.offline is true: download it once (teacher.offline: false) "
                                "or set the model to a local directory")
        if problems:
            raise StaticvecError("teachers that cannot be loaded:\n  - " + "\n  - ".join(problems))

    def teacher_width(self, teacher_id: str) -> int:
        from staticvec.dag.teacher import teacher_traits

        width = teacher_traits(self.teacher_model(teacher_id))["hidden_size"]
        if width is None:
            raise StaticvecError(
                f"'dim: teacher' needs the width of teacher {teacher_id!r} ({self.teacher_model(teacher_id)}), "
                "whose config.json is not available offline: download the model or set the dimension explicitly"
            )
        return int(width)

    def teacher_depth(self, teacher_id: str) -> int:
        from staticvec.dag.teacher import teacher_traits

        depth = teacher_traits(self.teacher_model(teacher_id))["n_layers"]
        if depth is None:
            raise StaticvecError(f"the number of layers of teacher {teacher_id!r} is not known offline; download the model")
        return int(depth)
