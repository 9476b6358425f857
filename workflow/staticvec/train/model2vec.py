"""``staticvec train model2vec``: Model2Vec (Tulkens & van Dongen, the ``model2vec`` library) from the run's teacher.

The modern corpus-free baseline: what a researcher who wants static vectors from a contextual model
reaches for first. What the library does (``model2vec.distill.distill_from_model``, version 0.10):

1. one forward pass of the teacher per token of a vocabulary — by default the teacher's own
   (sub)word vocabulary, each token alone between the tokenizer's special tokens (``[CLS] t [SEP]``);
   with ``vocabulary: run`` the run's words are added as tokens of their own first —, the last
   layer mean-pooled over the positions (``pooling``);
2. PCA of the token matrix to ``pca_dims`` (an eigendecomposition of the covariance matrix, signs
   fixed by each component's largest score: deterministic, no random seed);
3. each row scaled by the SIF weight a / (a + p), p the token's probability under Zipf's law from
   its rank in the vocabulary (``sif_coefficient`` a; null: no weighting);
4. the rows stored in ``quantize_to``.

``StaticModel.encode(text)`` then averages the rows of the text's tokens (unknown pieces left out)
and scales the mean to unit length. Our word embedding is exactly that, applied to each word of
the run's vocabulary, so the row goes through the same evaluation (and coverage) as every other
embedding; words the model cannot encode at all (only unknown pieces: a zero vector) are left out
and counted in the record. The library's own model (every token of step 1) is saved beside the
vectors (``--model-dir``, ``StaticModel.save_pretrained``; load it with ``StaticModel.from_pretrained``).

The teacher is loaded by :func:`staticvec.teacher.load.load_teacher` (offline aliases, local
directories, the local Hugging Face cache; never the network in offline mode); the library never
loads anything itself. Its one network call (``huggingface_hub.model_info``, for the model card's
language, made when the teacher is a hub name) is replaced by an error in offline mode, which the
library catches: the model card then has no language.

The method has no seed (PCA by eigendecomposition, no sampling); a CPU forward pass may differ in
the last bits between thread counts, nothing more.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os

import numpy as np

from staticvec.errors import StaticvecError

log = logging.getLogger(__name__)

POOLING = ("mean", "last", "first", "pooler")
DTYPES = ("float16", "float32", "float64", "int8")
VOCABULARIES = ("teacher", "run")


@dataclasses.dataclass
class Model2VecParams:
    """Hyper-parameters (config ``methods.model2vec``); defaults here are the library's (0.10)."""

    pca_dims: int | float | str | None = 256  # int; float in (0, 1): explained variance; "auto": PCA, no reduction; None
    sif_coefficient: float | None = 1e-4
    pooling: str = "mean"
    vocabulary: str = "teacher"  # teacher: the library's default; run: the run's words added as tokens
    token_remove_pattern: str | None = r"\[unused\d+\]"
    quantize_to: str = "float16"

    def __post_init__(self):
        self.pca_dims = parse_pca_dims(self.pca_dims)
        if self.sif_coefficient is not None and not 0 < float(self.sif_coefficient) < 1:
            raise StaticvecError(f"model2vec: sif_coefficient must be in (0, 1) or none, got {self.sif_coefficient}")
        for name, allowed in (("pooling", POOLING), ("vocabulary", VOCABULARIES), ("quantize_to", DTYPES)):
            if getattr(self, name) not in allowed:
                raise StaticvecError(f"model2vec: {name} {getattr(self, name)!r} is not one of {', '.join(allowed)}")


def parse_pca_dims(value):
    """``pca_dims`` from the config or the command line: a dimension, a variance fraction, auto or none."""
    if value is None or isinstance(value, bool):
        if value is None:
            return None
        raise StaticvecError(f"model2vec: pca_dims must be a dimension, a fraction in (0, 1), auto or none; got {value!r}")
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("none", "null", ""):
            return None
        if text == "auto":
            return "auto"
        try:
            value = float(text) if "." in text or "e" in text else int(text)
        except ValueError:
            raise StaticvecError(f"model2vec: pca_dims {value!r} is not a dimension, a fraction, auto or none") from None
    if isinstance(value, float) and value.is_integer() and value >= 1:
        value = int(value)
    if isinstance(value, int) and value >= 1:
        return value
    if isinstance(value, float) and 0 < value < 1:
        return value
    raise StaticvecError(f"model2vec: pca_dims must be a dimension >= 1, a fraction in (0, 1), auto or none; got {value!r}")


@contextlib.contextmanager
def _no_hub_lookup(offline: bool):
    """In offline mode the library's model-card lookup (``model_info``) fails at once instead of
    reaching for the network; the library catches the error and leaves the language unset."""
    if not offline:
        yield
        return
    from model2vec.distill import distillation

    def refuse(*args, **kwargs):
        raise ConnectionError("offline mode: staticvec does not let model2vec query the Hugging Face hub")

    saved = distillation.model_info
    distillation.model_info = refuse
    try:
        yield
    finally:
        distillation.model_info = saved


def distill_teacher(teacher, params: Model2VecParams, words=None, offline: bool = True):
    """The library's model from a loaded :class:`~staticvec.teacher.load.Teacher` (its base encoder and
    tokenizer); ``words`` are added as tokens when ``params.vocabulary == 'run'``."""
    from model2vec.distill import distill_from_model

    vocabulary = list(words) if params.vocabulary == "run" else None
    if params.vocabulary == "run" and not vocabulary:
        raise StaticvecError("model2vec: vocabulary 'run' needs the run's words")
    # the library warns once per word already in the teacher's vocabulary: thousands of lines
    quiet = logging.getLogger("model2vec.tokenizer.tokenizer")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        with _no_hub_lookup(offline):
            return distill_from_model(
                model=teacher.encoder, tokenizer=unpadded(teacher.tokenizer), vocabulary=vocabulary,
                device=str(teacher.device), pca_dims=params.pca_dims, sif_coefficient=params.sif_coefficient,
                token_remove_pattern=params.token_remove_pattern, quantize_to=params.quantize_to,
                pooling=params.pooling,
            )
    finally:
        quiet.setLevel(level)


def unpadded(tokenizer):
    """The tokenizer, or a copy of it that pads a single text to nothing (to the longest of a batch) where it
    pads to a fixed length.

    The library (model2vec 0.10, ``distill_from_model``) encodes each added word with the tokenizer as given
    (``turn_tokens_into_ids``: ``tokenizer.encode(word).ids``) and then masks by each sequence's length, so a
    tokenizer that pads to a fixed length - all-MiniLM-L6-v2's ``tokenizer.json`` pads to 128 - makes every
    added word a 128-token sequence whose mean runs over ~125 [PAD] states: wrong vectors, and ~40x the
    forward passes (2026-11-27, Tokenlearn's 56,000-word vocabulary). The library's own ``StaticModel``
    disables that padding at encoding time (``_disable_padding``); this does the same before distilling.
    Teacher tokens (``vocabulary: teacher``) are looked up, never encoded, so they are unchanged by it."""
    import copy

    backend = getattr(tokenizer, "backend_tokenizer", None)
    padding = backend.padding if backend is not None else None
    if not padding or padding.get("length") is None:
        return tokenizer
    tokenizer = copy.deepcopy(tokenizer)
    tokenizer.backend_tokenizer.enable_padding(direction=padding["direction"], pad_id=padding["pad_id"],
                                               pad_type_id=padding["pad_type_id"], pad_token=padding["pad_token"],
                                               pad_to_multiple_of=padding["pad_to_multiple_of"])
    return tokenizer


def encode_words(model, words, counts=None, batch_size: int = 4096):
    """Each word encoded by the library (``StaticModel.encode``): (Embeddings, words left out).

    A word whose pieces are all unknown to the model encodes to the zero vector; it is left out
    (not covered) rather than written as a vector that is similar to nothing."""
    from staticvec.embeddings import Embeddings

    words = list(words)
    vectors = np.asarray(model.encode(words, batch_size=batch_size, use_multiprocessing=False,
                                      show_progress_bar=False), dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(words):
        raise StaticvecError(f"model2vec: encode returned shape {vectors.shape} for {len(words)} words")
    keep = np.flatnonzero(np.any(vectors != 0, axis=1))
    dropped = [words[i] for i in np.flatnonzero(~np.any(vectors != 0, axis=1))]
    kept_counts = None if counts is None else [counts[i] for i in keep]
    return Embeddings([words[i] for i in keep], vectors[keep], kept_counts), dropped


#: the marker kind of the library's model directory (``--model-dir`` of ``staticvec train model2vec|tokenlearn``)
MODEL_DIR_KIND = "model2vec library model"


def save_model_dir(model, target: str | os.PathLike) -> None:
    """``model.save_pretrained`` into a temporary directory beside ``target``, then renamed onto it (refused where
    ``target`` is a folder staticvec did not write: :func:`staticvec.files.check_replaceable`)."""
    from staticvec.files import atomic_directory

    with atomic_directory(target, kind=MODEL_DIR_KIND) as tmp:
        # the library's model card names the model after the folder it writes to: the target's name, not the
        # temporary one's (which differs on every run)
        model.save_pretrained(tmp, model_name=os.path.basename(os.fspath(target)))


def versions(packages=("model2vec", "skeletoken", "transformers", "tokenizers", "torch")) -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for package in packages:
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = None
    return out
