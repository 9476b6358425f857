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
import shutil
import tempfile
import time
from pathlib import Path

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
                model=teacher.encoder, tokenizer=teacher.tokenizer, vocabulary=vocabulary,
                device=str(teacher.device), pca_dims=params.pca_dims, sif_coefficient=params.sif_coefficient,
                token_remove_pattern=params.token_remove_pattern, quantize_to=params.quantize_to,
                pooling=params.pooling,
            )
    finally:
        quiet.setLevel(level)


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


def save_model_dir(model, target: str | os.PathLike) -> None:
    """``model.save_pretrained`` into a temporary directory beside ``target``, then renamed onto it."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        model.save_pretrained(tmp)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for package in ("model2vec", "skeletoken", "transformers", "tokenizers", "torch"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = None
    return out


# ---------------------------------------------------------------- command line


def rule_args(workflow, emb: str) -> str:
    """Flags of ``staticvec train model2vec`` for a sheet entry (the workflow's rule): its teacher,
    the run's device and offline setting, its hyper-parameters (``threads`` is the job's)."""
    import shlex

    spec = workflow.spec(emb)
    config = workflow.config
    args = ["--teacher", workflow.teacher_model(spec.teacher or config["teacher"]["default"]),
            "--device", config.get("device", "auto")]
    if not config["teacher"]["offline"]:
        args.append("--online")
    return shlex.join(args) + " " + workflow.flags(workflow.params(emb), exclude=("threads",))


def register(sub) -> None:
    """Add ``staticvec train model2vec`` (``sub``: the train group's sub-parsers)."""
    from staticvec.train.cli import _output_args, _vocab_args, default_threads

    p = sub.add_parser("model2vec", help="Model2Vec (model2vec library) from a teacher, over the run's vocabulary",
                       description="Model2Vec (the model2vec library) distilled from a teacher; each vocabulary word encoded by the model.")
    p.add_argument("--teacher", required=True, help="teacher spec: minilm, a model directory, a Hugging Face name")
    p.add_argument("--online", action="store_true", help="allow downloading the teacher (default: offline)")
    _vocab_args(p)
    _output_args(p)
    p.add_argument("--model-dir", required=True, help="where the library's own model goes (save_pretrained)")
    d = Model2VecParams()
    p.add_argument("--pca-dims", type=parse_pca_dims, default=d.pca_dims,
                   help="PCA dimension; a fraction in (0, 1) keeps that share of the variance; auto: PCA without "
                        "reduction; none: no PCA (library default: 256)")
    p.add_argument("--sif-coefficient", type=_optional_float, default=d.sif_coefficient,
                   help="SIF weight a/(a+p) of each token row, p from Zipf's law; none: no weighting (library: 1e-4)")
    p.add_argument("--pooling", choices=POOLING, default=d.pooling, help="pooling of the teacher's last layer")
    p.add_argument("--vocabulary", choices=VOCABULARIES, default=d.vocabulary,
                   help="teacher: distil the teacher's tokens (library default); run: add the run's words as tokens")
    p.add_argument("--token-remove-pattern", type=_optional_str, default=d.token_remove_pattern,
                   help="regex of teacher tokens to drop (library default: \\[unused\\d+\\]); none: keep all")
    p.add_argument("--quantize-to", choices=DTYPES, default=d.quantize_to, help="dtype of the stored rows")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda")
    p.add_argument("--threads", type=int, default=default_threads(), help="torch CPU threads")
    p.set_defaults(handler=_cli_model2vec)


def _optional_float(text: str):
    return None if text.strip().lower() in ("none", "null", "") else float(text)


def _optional_str(text: str):
    return None if text.strip().lower() in ("none", "null", "") else text


def _cli_model2vec(args) -> int:
    import torch

    from staticvec.cooc.cli import load_vocab_of
    from staticvec.files import write_json
    from staticvec.teacher.load import load_teacher, resolve_teacher
    from staticvec.train.cli import _record_path

    try:
        import model2vec  # noqa: F401
        import skeletoken  # noqa: F401
    except ImportError as exc:
        raise StaticvecError(f"model2vec needs the packages model2vec and skeletoken ({exc}); "
                             "pip install 'model2vec>=0.10,<0.11' 'skeletoken>=0.6,<0.7'") from None
    params = Model2VecParams(pca_dims=args.pca_dims, sif_coefficient=args.sif_coefficient, pooling=args.pooling,
                             vocabulary=args.vocabulary, token_remove_pattern=args.token_remove_pattern,
                             quantize_to=args.quantize_to)
    torch.set_num_threads(max(1, args.threads))
    vocab = load_vocab_of(args)
    offline = not args.online
    started = time.time()
    teacher = load_teacher(args.teacher, device=args.device, offline=offline, dtype="float32")
    loaded = time.time()
    model = distill_teacher(teacher, params, vocab.words, offline=offline)
    distilled = time.time()
    emb, dropped = encode_words(model, vocab.words, vocab.counts)
    encoded = time.time()
    if len(emb) == 0:
        raise StaticvecError(f"model2vec: no word of {args.vocab} could be encoded by the model of {args.teacher!r}")
    emb.save(args.out)
    save_model_dir(model, args.model_dir)
    source = resolve_teacher(args.teacher)
    write_json(_record_path(args), {
        "method": "model2vec",
        "versions": versions(),
        "teacher": {"spec": args.teacher, "path": source.path if source.local else None, **teacher.describe()},
        "hyperparameters": dataclasses.asdict(params),
        "seeded": False,  # PCA by eigendecomposition, no sampling: the same inputs give the same vectors
        "device": str(teacher.device),
        "threads": torch.get_num_threads(),
        "model": {"dir": str(args.model_dir), "tokens": len(model.tokens), "dim": int(model.dim),
                  "dtype": model.embedding_dtype, "normalize": bool(model.normalize)},
        "vocab": {"path": str(args.vocab), "size": len(vocab), "min_count": args.min_count,
                  "written": len(emb), "not_encoded": len(dropped), "not_encoded_examples": dropped[:20]},
        "seconds_load": round(loaded - started, 2),
        "seconds_distill": round(distilled - loaded, 2),
        "seconds_encode": round(encoded - distilled, 2),
        "seconds": round(time.time() - started, 2),
    })
    log.info("wrote %s (%d of %d words × %d; %d tokens in %s) in %.1f s", args.out, len(emb), len(vocab), emb.dim,
             len(model.tokens), args.model_dir, time.time() - started)
    return 0
