"""A temporary rule's jobs made a few at a time ("lanes"), so that its outputs never all exist at once.

``temp()`` deletes an output once every job reading it has run, but nothing in Snakemake stops every job of the
rule from running first: on a cluster that queues nothing, the paper plan's seven MLM word stores (SemGloVe's eq. 14,
each read for days by its GloVe runs) and Context-to-Vec Table 4's Artetxe tables would all exist together,
1.1 TB at the plan's peak. Config ``plan.lanes`` (rule -> n) splits the rule's items — a word store; an
Artetxe embedding, with the tables of all its seeds — into n lanes: an item's jobs take as an extra input what
the readers of the item before it in its lane write, so an item is made only once the one before it can be
deleted, and at most n items' outputs exist at once. The bound holds by construction for the readers named
here (a word store's GloVe runs and SemGloVe Table 5's counts; an Artetxe table's intrinsic evaluation, its
only reader in the sheets); a reader added elsewhere would keep an output longer, which the plan's peak disk
(``staticvec plan costs``, scheduled over the dry run's own inputs) shows.

Items go to lanes largest first, each to the lane holding the least so far (the largest items in different
lanes, the lanes' totals close: the longest-processing-time rule, since a store's size also sets how long its
GloVe runs take), ties in the items' order. Only items the run plans are laned (an Artetxe embedding whose
intrinsic results something reads; a store a planned SemGloVe entry trains on), so a lane's extra inputs are
files the run makes anyway and add no job.
"""

from __future__ import annotations

from collections.abc import Hashable

from staticvec.errors import StaticvecError

LANED_RULES = ("post_artetxe", "semglove_words")


def item_of(rule: str, wildcards) -> Hashable:
    """The lane item a job of a laned rule makes: a word store's (variant, fraction); an Artetxe embedding's id
    (all its seeds' tables are one item). ``wildcards``: Snakemake's, or a dict of them."""
    if rule == "semglove_words":
        return wildcards["variant"], wildcards.get("frac", "") or ""
    return wildcards["emb"]


def assign_lanes(sizes: dict[Hashable, float], n: int) -> dict[Hashable, Hashable | None]:
    """Each item's predecessor in its lane (None: first of its lane), items placed largest first, each in the lane
    with the least size so far (ties: the items' order, then the lowest lane)."""
    if n < 1:
        raise StaticvecError(f"lanes: {n} lane(s); at least one is needed")
    totals = [0.0] * n
    last: list[Hashable | None] = [None] * n
    previous: dict[Hashable, Hashable | None] = {}
    order = list(sizes)
    for item in sorted(order, key=lambda k: (-float(sizes[k]), order.index(k))):
        lane = min(range(n), key=lambda i: (totals[i], i))
        previous[item] = last[lane]
        last[lane] = item
        totals[lane] += float(sizes[item])
    return previous


class Lanes:
    """The lanes of config ``plan.lanes`` over the run's planned items: :meth:`after` gives a job's extra inputs."""

    def __init__(self, config: dict, workflow, semglove_rules, costs):
        self.W, self.SG, self.costs = workflow, semglove_rules, costs
        plan = config.get("plan") or {}
        self.counts = {rule: int(n) for rule, n in (plan.get("lanes") or {}).items()}
        temporary = set(plan.get("temporary") or ())
        for rule, n in self.counts.items():
            if rule not in LANED_RULES:
                raise StaticvecError(f"config plan.lanes.{rule}: only {', '.join(LANED_RULES)} can be made in lanes")
            if rule not in temporary:
                raise StaticvecError(f"config plan.lanes.{rule}: its outputs are kept (the rule is not in plan.temporary), "
                                     "so lanes would only make its jobs wait; list it in plan.temporary or drop the lanes")
            if n < 1:
                raise StaticvecError(f"config plan.lanes.{rule}: {n} lane(s); at least one is needed")
        self._lanes: dict[str, tuple[dict, dict]] = {}  # rule -> (item -> item before it, item -> readers' outputs)
        self._planned_results: dict[str, tuple[set[str], set[str]]] | None = None

    def after(self, rule: str, item: Hashable) -> list[str]:
        """What the readers of ``item``'s predecessor in its lane write ([] where the rule has no lanes, the item is
        the first of its lane, or the run does not plan it)."""
        if rule not in self.counts:
            return []
        previous, readers = self._placed(rule)
        before = previous.get(item)
        return [] if before is None else list(readers[before])

    def lanes_of(self, rule: str) -> list[list[Hashable]]:
        """The rule's lanes, each its items in order (for the plan's report and the tests)."""
        if rule not in self.counts:
            return []
        previous, _ = self._placed(rule)
        nexts = {p: k for k, p in previous.items() if p is not None}
        lanes = []
        for first in (k for k, p in previous.items() if p is None):
            lane = [first]
            while lane[-1] in nexts:
                lane.append(nexts[lane[-1]])
            lanes.append(lane)
        return lanes

    def _placed(self, rule: str) -> tuple[dict, dict]:
        """The rule's items placed in its lanes, and each item's readers' outputs (made once per rule)."""
        if rule not in self._lanes:
            readers = self._artetxe_readers() if rule == "post_artetxe" else self._word_store_readers()
            sizes = {k: self._size(rule, k) for k in readers}
            self._lanes[rule] = assign_lanes(sizes, self.counts[rule]), readers
        return self._lanes[rule]

    # ------------------------------------------------------------ the items and their readers
    def _evaluated(self) -> dict[str, tuple[set[str], set[str]]]:
        """Embedding -> (protocols, seeds) of the intrinsic results the run plans of it (read once for both rules)."""
        if self._planned_results is None:
            wanted: dict[str, tuple[set[str], set[str]]] = {}
            for (protocols, seeds), embs in self.W.intrinsic_groups().items():
                for emb in embs:
                    p, s = wanted.setdefault(emb, (set(), set()))
                    p.update(protocols)
                    s.update(seeds)
            self._planned_results = wanted
        return self._planned_results

    def _artetxe_readers(self) -> dict[str, list[str]]:
        """Artetxe embedding -> its intrinsic results (the tables' readers' outputs), for those the run evaluates."""
        return {emb: sorted(self.W.intrinsic_result(emb, s, p) for s in seeds for p in protocols)
                for emb, (protocols, seeds) in self._evaluated().items() if self.W.spec(emb).method == "artetxe"}

    def _word_store_readers(self) -> dict[tuple[str, str], list[str]]:
        """(variant, fraction) of each MLM word store a planned SemGloVe entry trains on -> the vectors of the GloVe
        runs reading it (the seeds whose results the run evaluates) and, for md over the whole corpus where the run
        makes SemGloVe Table 5, Table 5's counts."""
        readers: dict[tuple[str, str], set[str]] = {}
        for emb, (_, seeds) in self._evaluated().items():
            if self.W.spec(emb).method != "semglove" or self.W.params(emb).get("variant") not in self.SG.mlm:
                continue
            key = (self.W.params(emb)["variant"], self.W.frac(emb))
            readers.setdefault(key, set()).update(self.W.embedding(emb, s) for s in seeds)
        if ("md", "") in readers and self._table5_planned():
            readers[("md", "")].add(self.SG.table5())
        return {key: sorted(files) for key, files in sorted(readers.items())}

    def _table5_planned(self) -> bool:
        tables = self.W.tables
        return any(tables[t]["source"] == "cooccurrence" for t in self.W.selected("tables", list(tables)))

    def _size(self, rule: str, item) -> float:
        """An item's output size, for placing it (GB as the plan models it; equal for Artetxe embeddings)."""
        if rule == "semglove_words":
            return self.costs.md_word_pairs(item[1])
        return 1.0
