"""What a distillation student provides: the interface between a method and the shared machinery.

A student is a set of *tables* (static vectors, one row per vocabulary word, updated on the rows a
step touches) and *dense* tensors (a projection, updated by their full gradient), trained against
the teacher's stored features block by block. The shared machinery around it:

- :mod:`staticvec.train.negative_sampling`: negatives, subsampling, the logistic loss, windows;
- :mod:`staticvec.train.optimizer`: SGD and lazy Adam, the learning-rate schedule, clipping;
- :mod:`staticvec.train.loop`: the loop over blocks, with checkpoints (:func:`~staticvec.train.loop.train`);
- :mod:`staticvec.train.kernels`: the numba kernels the fast engine shares;
- :mod:`staticvec.train.api`: :func:`~staticvec.train.api.train_student`, the Python API, which the
  ``staticvec train <method>`` command wraps.

A method provides (:class:`Student`):

- its hyper-parameters' dataclass (``params_class``, a :class:`StudentParams`) with its
  ``loop_settings()`` and the vocabulary's ``min_count`` / ``max_vocab``;
- ``output_table``: the table written as the embeddings (``output_description`` in words);
- ``feature_keys_for(params)``: the arrays each block must hold;
- ``batches(block, rng)`` and ``loss(batch, rows, dense)``: the method's one definition of its
  steps and its loss (torch; the autograd engine differentiates it, on CPU and CUDA);
- optionally the fast engine (``supports_fast``, ``prepare_block``, ``run_block``): the same steps
  with hand-written gradients in numba kernels. The kernels cannot call the torch loss, so they
  restate its arithmetic; the reference is ``loss``, and tests/test_students_fast.py checks that
  whole runs of both engines agree to float rounding. A method without a fast engine trains with
  autograd everywhere.

The teacher inputs a student reads are those of its parameter ``context`` (the teacher feature set
of that name: ``sentence`` or ``paragraph``; ``sentence`` when it has no such parameter): the plan
(``staticvec.dag.teacher.TeacherPlan.student_feature_set``) and the trainer read the same field.
"""

from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, ClassVar, Iterator

import numpy as np

from staticvec.errors import StaticvecError
from staticvec.train.teacher_blocks import BASE_KEYS

if TYPE_CHECKING:
    from staticvec.train.loop import LoopSettings
    from staticvec.train.optimizer import Optimizer

@dataclass
class Batch:
    """One optimisation step's data: table rows to gather and the model's tensors.

    ``rows[name]`` is an integer tensor of row ids of table ``name`` (any shape; -1 = padding, a
    zero vector that touches no row): the loop hands the model those rows' vectors in the same
    shape plus a trailing dimension. ``examples`` counts the loss terms (targets or centres),
    ``words`` the corpus words this batch consumes (progress and the learning-rate schedule, like
    word2vec's word count).
    """

    rows: dict
    data: dict
    examples: int
    words: int


class StudentParams:
    """Base of a student's hyper-parameter dataclass (fields: the method's hyper-parameters, the
    paper's values as defaults, plus ``min_count`` and ``max_vocab`` of its vocabulary)."""

    @classmethod
    def method_name(cls) -> str:
        """The method's name in error messages."""
        return cls.__name__

    @classmethod
    def from_dict(cls, d: dict):
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise StaticvecError(f"{cls.method_name()}: unknown hyper-parameter(s) {', '.join(unknown)} "
                                 f"(known: {', '.join(sorted(known))})")
        return cls(**d)

    def loop_settings(self) -> "LoopSettings":  # pragma: no cover - per method
        """How the loop optimises (epochs, learning rate and its decay, optimizer, clipping, engine)."""
        raise NotImplementedError


class Student(abc.ABC):
    """A distillation method: what :func:`staticvec.train.loop.train` and the API need of it.

    Constructed as ``Method(counts, teacher_dim, params, device, seed)`` (``counts``: the vocabulary's
    counts, in id order; ``teacher_dim``: the width of the teacher's vectors); sets ``params``,
    ``device``, ``tables`` (name → (V, d) tensor), ``dense`` (name → tensor) and ``feature_keys``.
    """

    params_class: ClassVar[type]  # its StudentParams dataclass
    output_table: ClassVar[str]  # the table of `tables` written as the embeddings
    output_description: ClassVar[str] = ""  # that table in words (the run record)

    params: StudentParams
    device: str
    tables: dict
    dense: dict
    feature_keys: list

    @classmethod
    def feature_keys_for(cls, params) -> list[str]:
        """The arrays each block must hold (the stored features' names; ``word_vectors``: the last layer's)."""
        return [*BASE_KEYS, "word_vectors"]

    @staticmethod
    def context_of(params) -> str:
        """The teacher inputs (feature set) the student reads: its ``context`` parameter, else ``sentence``."""
        return getattr(params, "context", "sentence")

    @abc.abstractmethod
    def batches(self, block: dict, rng: np.random.Generator) -> Iterator[Batch]:
        """A block's steps, drawing every random number from ``rng`` (the loop's one generator)."""

    @abc.abstractmethod
    def loss(self, batch: Batch, rows: dict, dense: dict):
        """The batch's loss (a scalar tensor) from the gathered ``rows`` and the ``dense`` tensors."""

    def progress_words(self, word_ids: np.ndarray) -> int:
        """Words of a block that count towards progress (in-vocabulary words)."""
        return int((word_ids >= 0).sum())

    # ------------------------------------------------ the fast engine (optional)

    @property
    def supports_fast(self) -> bool:
        """Whether :meth:`prepare_block` / :meth:`run_block` can run these settings (else: autograd)."""
        return False

    def prepare_block(self, block: dict, rng: np.random.Generator):
        """:meth:`batches` as flat arrays for the kernels: the same draws in the same order."""
        raise StaticvecError(f"{type(self).__name__} has no fast engine")

    def run_block(self, prepared, optimizer: "Optimizer", settings: "LoopSettings", words_done: int,
                  total: int) -> tuple[list, list, list]:
        """Train the prepared block's steps; per step: its loss, examples and words."""
        raise StaticvecError(f"{type(self).__name__} has no fast engine")

    # ------------------------------------------------ outputs

    def output_vectors(self) -> np.ndarray:
        """The trained embeddings: the output table as float32, one row per vocabulary word."""
        return self.tables[self.output_table].detach().cpu().numpy().astype(np.float32)

    def save_model(self, path, words, teacher: dict | None = None) -> None:
        """Every trained tensor with the words and settings (``torch.load`` reads it back)."""

        from staticvec.files import torch_save

        payload = {"method": self.params.method_name(), "params": asdict(self.params), "words": list(words),
                   "tables": {k: v.detach().cpu() for k, v in self.tables.items()},
                   "dense": {k: v.detach().cpu() for k, v in self.dense.items()}, "teacher": teacher}
        torch_save(payload, path)  # the same bytes for the same payload (staticvec.files.torch_save)
