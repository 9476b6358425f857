"""What the tagger reads for each token: a row of one frozen matrix.

Static embeddings: one row per word type of the task (see ``features.WordTable``).
Contextual vectors (the BERT-base row): one row per token occurrence, the teacher's vector of
that token in its sentence, so the same model and training loop serve both.
"""

from __future__ import annotations

import numpy as np

from staticvec.errors import StaticvecError
from staticvec.evaluate.tagging.data import TaskData
from staticvec.evaluate.tagging.features import WordTable


class StaticInputs:
    """Frozen static word vectors restricted to the task's words."""

    has_unk = True

    def __init__(self, embeddings, data: TaskData, lowercase: bool = True, normalize: str = "none"):
        every = [s for split in data.splits().values() for s in split]
        self.table = WordTable.build(embeddings, every, lowercase=lowercase, normalize=normalize)
        self.vectors = self.table.vectors
        self.coverage = {split: self.table.coverage(sentences) for split, sentences in data.splits().items()}

    def rows_for(self, split: str):
        return self.table.row_of

    def describe(self) -> dict:
        return {"kind": "static", "dim": int(self.vectors.shape[1]), "rows": int(self.vectors.shape[0]), "coverage": self.coverage}


class ContextualInputs:
    """Per-token frozen vectors: ``features[split][i]`` is an array (len(sentence i), dim)."""

    has_unk = False

    def __init__(self, features: dict[str, list[np.ndarray]], dtype=np.float16, description: dict | None = None):
        splits = ("train", "dev", "test")
        dim = next(a.shape[1] for s in splits for a in features[s])
        total = sum(len(a) for s in splits for a in features[s])
        self.vectors = np.zeros((total + 2, dim), dtype=dtype)
        self.offsets: dict[str, list[int]] = {}
        row = 2
        for split in splits:
            self.offsets[split] = []
            for array in features[split]:
                self.offsets[split].append(row)
                self.vectors[row : row + len(array)] = array
                row += len(array)
        self.description = description or {}

    def rows_for(self, split: str):
        offsets = self.offsets[split]

        def rows(i, sentence):
            if i >= len(offsets):
                raise StaticvecError(f"no contextual vectors for {split} sentence {i + 1}: the teacher encoded "
                                     f"{len(offsets)} (max_train_sentences of the teacher pass and the tagger differ)")
            return np.arange(offsets[i], offsets[i] + len(sentence.words))

        return rows

    def describe(self) -> dict:
        return {"kind": "contextual", "dim": int(self.vectors.shape[1]), "rows": int(self.vectors.shape[0]), **self.description}
