"""A development curve over training: a word-similarity score of the output table at points of a run.

Wang et al.'s Figure 5 compares BERT + Skip-gram with and without attention aggregation as a curve
of the development result over training ("slower convergence during training, with a best
development result of 65.8, lower than 66.3"). :class:`DevCurve` wraps a trainer's block source
(:mod:`staticvec.train.teacher_blocks`): the training loop asks it for the next block only once the
previous one is trained, so the table it scores between blocks is the model of that moment — no
change to the loop, no snapshot files. It scores the table before training, whenever another
``1/points`` of the run's words has been trained, and at the end; the record's ``dev_curve`` lists
``{epoch, words, score, found, total}`` (``words``: in-vocabulary words trained so far, the loop's
progress unit). Scoring is the evaluation's own (:func:`staticvec.evaluate.similarity.evaluate_similarity`
under the given OOV policy), so the last point equals the final embedding's score.

A run resumed from a checkpoint starts its curve where it resumed (``resumed: true``).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)


class DevCurve:
    def __init__(self, source, model, table: str, words: list[str], data_path: str | Path, points: int,
                 oov: str = "mean", epochs: int = 1):
        from staticvec.evaluate.datasets import parse_similarity

        self.source = source
        self.model = model
        self.table = table
        self.words = list(words)
        self.data_path = str(data_path)
        self.data = parse_similarity(Path(data_path))
        self.oov = oov
        self.points = max(1, int(points))
        per_epoch = sum(model.progress_words(ids) for ids in source.word_ids())
        self.total = per_epoch * max(1, int(epochs))
        self.words_done = 0
        self.epoch = -1
        self.next_mark = 0.0
        self.curve: list[dict] = []
        self.resumed = False

    # the block source's interface, delegated
    def __getattr__(self, name):
        return getattr(self.source, name)

    def blocks(self, start=(0, 0)):
        self.epoch += 1
        if tuple(start) != (0, 0):
            self.resumed = True
        if not self.curve and not self.resumed:
            self._score()  # the initial table
        for position, block in self.source.blocks(start):
            yield position, block
            # resumed here: the loop has trained this block
            self.words_done += self.model.progress_words(block["word_ids"]) if "word_ids" in block else 0
            if self.words_done >= self.next_mark:
                self._score()

    def _score(self) -> None:
        from staticvec.embeddings import Embeddings
        from staticvec.evaluate.lookup import VectorLookup
        from staticvec.evaluate.similarity import evaluate_similarity

        table = self.model.tables[self.table].detach().cpu().numpy().astype(np.float32)
        result = evaluate_similarity(VectorLookup(Embeddings(self.words, table), oov=self.oov), self.data)
        self.curve.append({"epoch": max(self.epoch, 0), "words": int(self.words_done), "score": result["score"],
                           "found": result["found"], "total": result["total"]})
        step = self.total / self.points
        while self.next_mark <= self.words_done:
            self.next_mark += step if step > 0 else float("inf")
        log.info("dev %s after %d words: %s", Path(self.data_path).name, self.words_done, result["score"])

    def finish(self) -> dict:
        if not self.curve or self.curve[-1]["words"] != self.words_done:
            self._score()  # the final table
        return {"set": Path(self.data_path).name, "oov": self.oov, "points": self.curve, "resumed": self.resumed,
                "total_words": int(self.total)}
