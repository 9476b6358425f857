"""Evaluation of static embeddings: intrinsic tasks (this package's modules) and, later, extrinsic ones.

``from staticvec.evaluate import evaluate`` runs the intrinsic suite (see :mod:`.intrinsic`).
"""

from staticvec.evaluate.intrinsic import evaluate

__all__ = ["evaluate"]
