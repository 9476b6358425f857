"""The resources stage of the plan: where the registry's files are downloaded and verified, the
flags of ``staticvec resources fetch``, and the plan-time check that every input the targets read is
present or can be downloaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from staticvec.errors import StaticvecError
from staticvec.evaluate.datasets import eval_groups
from staticvec.resources import Member, check_available

if TYPE_CHECKING:
    from staticvec.resources import Registry
    from staticvec.sheets import EmbeddingSheet


class ResourcesPlan:
    """The resources stage of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    config: dict
    mirror: str | None
    download_dir: str
    allow_download: bool
    registry: Registry
    sheet: EmbeddingSheet
    # what it calls of the other stages: corpus_inputs (plan_corpus); tables (plan_tables); selected (the
    #   façade)

    def resource_path(self, member: Member) -> str:
        return self.download_file(member.rel_path)

    def download_file(self, rel_path: str = "{rel_path}") -> str:
        return f"{self.download_dir}/{rel_path}"

    def resource_dir(self, group: str) -> str:
        return f"{self.download_dir}/{self.registry.group(group).path}"

    def resource_marker(self, group: str) -> str:
        """Written when every member of a group is verified; rules that read the group depend on it."""
        return f"{self.download_dir}/.verified/{group}.json"

    def fetch_flags(self) -> str:
        """Where `staticvec resources fetch` looks and puts files (shared by both fetch rules)."""
        import shlex

        flags = [f"--download-dir {shlex.quote(self.download_dir)}", f"--retries {self.config['resources'].get('retries', 3)}"]
        if self.mirror:
            flags.append(f"--mirror {shlex.quote(self.mirror)}")
        if self.allow_download:
            flags.append("--allow-download")
        return " ".join(flags)

    def member_by_path(self, rel_path: str) -> Member:
        for group in self.registry.groups.values():
            for member in group.members.values():
                if member.rel_path == rel_path:
                    return member
        raise StaticvecError(f"{rel_path} is not a file of the resource registry")

    def check_resources(self, groups: list[str] | None = None) -> None:
        """One error listing every needed input that is neither present nor downloadable: the
        corpus files and the registry groups ``groups`` (default: every group the targets read)."""
        members = list({m.rel_path: m for i in self.corpus_inputs() for m in (i.member, i.index) if m is not None}.values())
        for gid in self.input_groups() if groups is None else groups:
            members += self.registry.select(gid)
        check_available(members, self.mirror, self.download_dir, self.allow_download)

    def input_groups(self) -> list[str]:
        """Registry groups the run's targets read besides the corpus: the intrinsic evaluation
        sets (every embedding is scored), the lexicons and WordNet when the sheet post-processes,
        the tagging and classification data when a selected table needs them."""
        from staticvec.dag.arguments import TASKS, task_data_location

        groups = list(eval_groups())  # the data sets' resource groups (staticvec.evaluate.datasets)
        if self.sheet.ids("retrofit"):
            groups += ["eval-lexicons", "eval-wordnet"]
        sources = {self.tables[t]["source"] for t in self.selected("tables", list(self.tables))}
        if "classification" in sources:
            groups.append("eval-classification")
        if "tagging" in sources:
            for task in TASKS:
                location = task_data_location(self.config, task, self)
                if location is not None and location.resource_group:
                    groups.append(location.resource_group)
        return list(dict.fromkeys(groups))

    @property
    def registry_file(self) -> str:
        return self.config["resources"]["registry"]
