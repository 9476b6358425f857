"""The teachers the plan reads: each teacher id's model, the ids the sheet's entries and SemGloVe's
builders use, their widths and depths, and the plan-time check that each loads as configured. (The
teacher stage's feature files and passes are :mod:`staticvec.dag.teacher`'s, ``TP``.)
"""

from __future__ import annotations

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
