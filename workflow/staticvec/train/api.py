"""The students' Python API: train a distillation method on teacher features in one call.

::

    from staticvec.train.api import train_student

    run = train_student("x2static", features=["results/default/teacher/minilm/features/sentence/00000"],
                        vocab="results/default/corpus/vocab.min5.tsv", params={"epochs": 1}, seed=1)
    run.embeddings.save("x2static.bin")  # or run.save("x2static.bin"): vectors, record (and checkpoint removed)

``method`` is a student of the method registry (:mod:`staticvec.methods`: ``x2static``, ``bert_sg``,
``c2v``, or its ``staticvec train`` command name); ``params`` its hyper-parameters (a dict of
overrides of the paper's defaults, or the method's dataclass). The teacher's vectors come either
from stored features (``features``: the teacher rule's shard directories, in corpus order) or from
corpus shards run through a teacher now (``shards`` + ``teacher``). ``staticvec train <method>`` is
this function behind argparse; the workflow's training rules call that command.

What a run does: loads the vocabulary (the method's ``min_count`` / ``max_vocab``), remaps the stored
features' word ids to it (``feature_vocab``: the vocabulary the features were computed with), builds
the student (:class:`~staticvec.train.student.Student`) and runs the loop
(:func:`staticvec.train.loop.train`: checkpoints, resumable), optionally scoring a development set
during training (:class:`~staticvec.train.dev_curve.DevCurve`), and returns the output table as
:class:`~staticvec.embeddings.Embeddings` with the run's record (settings, options against the
released code, curve, time).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from staticvec.embeddings import Embeddings
from staticvec.errors import StaticvecError
from staticvec.files import TIMING_KEY

log = logging.getLogger(__name__)

PathLike = str | os.PathLike


@dataclass
class StudentRun:
    """A trained student: its embeddings (the output table over the vocabulary), the run record and
    the model (every table and dense tensor)."""

    embeddings: Embeddings
    record: dict
    model: object
    checkpoint: PathLike | None = None

    def save(self, out: PathLike, record: PathLike | None = None, model: PathLike | None = None) -> None:
        """Write the vectors (format from the name), the model (when ``model`` is given) and the record
        (default ``<out>.json``); then the finished run's checkpoint is removed."""
        self.embeddings.save(out)
        if model:
            self.model.save_model(model, self.embeddings.words, self.record["source"].get("teacher"))
        self.record["output"].update({"embeddings": str(out), "model": str(model) if model else None})
        from staticvec.files import write_json

        write_json(record or f"{out}.json", self.record)
        if self.checkpoint and Path(self.checkpoint).exists():
            Path(self.checkpoint).unlink()  # the run is complete: its outputs replace the checkpoint


def student_class(method: str):
    """(registry entry, module, Student class) of a student given by its method or command name."""
    from staticvec.methods import REGISTRY, student_trainer

    entry = REGISTRY.get(method)
    if entry is None or not entry.student:
        entry = next((m for m in REGISTRY.values() if m.student and m.command == method), None)
    if entry is None:
        students = sorted(m.name for m in REGISTRY.values() if m.student)
        raise StaticvecError(f"{method!r} is not a distillation student (one of {', '.join(students)})")
    module, _, model_cls = student_trainer(entry.command)
    return entry, module, model_cls


def train_student(method: str, *, vocab: PathLike, features: Sequence[PathLike] = (), params=None, seed: int = 1,
                  feature_vocab: PathLike | None = None, shards: Sequence[PathLike] = (), teacher: str | None = None,
                  online: bool = False, batch_tokens: int = 8192, part_sentences: int = 4096, dtype: str = "auto",
                  max_length: int | None = None, all_sentences: bool = False, device: str = "auto",
                  teacher_device: str | None = None, threads: int | None = None, checkpoint: PathLike | None = None,
                  checkpoint_every: float = 600.0,
                  dev_set: PathLike | None = None, dev_points: int = 0, dev_oov: str = "mean",
                  progress: bool = True) -> StudentRun:
    """Train student ``method`` and return its :class:`StudentRun` (see the module's documentation).

    ``shards`` with ``teacher`` (instead of ``features``): the teacher runs now, in ``dtype`` with inputs of at most
    ``max_length`` pieces; ``all_sentences``: every sentence of the shards' paragraphs trains, not only the
    corpus's kept ones (X2Static §4.1 names only the paragraph filter). ``teacher_device``: where that teacher
    runs (default: ``device``), so that a GPU job runs the teacher on its GPU and trains on its cores with the
    fast engine (``device: cpu``) where that trains faster than the GPU's autograd engine (BERT+Skip-gram and
    Context-to-Vec, config/unit_costs.yaml).
    ``threads``: the trainer's CPU threads (torch and the fast engine's kernels; default 1 with stored
    features, all allotted cores when the teacher runs here). ``checkpoint``: resumed from when it
    exists, written every ``checkpoint_every`` seconds. ``dev_set``/``dev_points``: a word-similarity
    file scored on the output table after every 1/N of the run (Wang et al.'s Figure 5).
    """
    import torch

    from staticvec.corpus.vocab import Vocabulary
    from staticvec.device import default_threads, resolve_device
    from staticvec.files import sha256_of
    from staticvec.train.kernels import fast_engine_threads
    from staticvec.train.loop import train

    entry, module, model_cls = student_class(method)
    if teacher_device and not shards:
        raise StaticvecError("teacher_device (--teacher-device) needs the teacher run here (--shards with --teacher)")
    params = _params(model_cls.params_class, params)
    threads = threads or (default_threads() if shards else 1)
    torch.set_num_threads(threads)
    fast_engine_threads(threads)  # the fast engine's kernels (numba) run on as many threads
    requested_device, device = device, resolve_device(device)
    vocab_words = Vocabulary.load(vocab, params.min_count, params.max_vocab)
    if not len(vocab_words):
        raise StaticvecError(f"{vocab}: no word with count >= {params.min_count}")
    source = _feature_source(entry.command, model_cls, params, vocab, vocab_words, features, feature_vocab, shards,
                             teacher, online, batch_tokens, part_sentences, teacher_device or requested_device, dtype,
                             max_length, all_sentences)

    model = model_cls(np.asarray(vocab_words.counts), source.hidden_size, params, device, seed)
    settings = params.loop_settings()
    settings.checkpoint_every = checkpoint_every
    run = {"method": entry.command, "params": dataclasses.asdict(params), "vocab_sha256": sha256_of(vocab),
           "vocab_size": len(vocab_words), "source": source.describe()}
    dev = None
    if dev_set and dev_points > 0:
        from staticvec.train.dev_curve import DevCurve

        dev = source = DevCurve(source, model, model.output_table, vocab_words.words, dev_set, dev_points, dev_oov,
                                settings.epochs)
    started = time.time()
    record = train(model, source, settings, seed=seed, checkpoint=checkpoint, fingerprint=run, name=entry.command,
                   progress=progress)
    table = model.output_vectors()
    embeddings = Embeddings(vocab_words.words, table, vocab_words.counts)
    out = {
        **run,
        "output": {"embeddings": None, "table": model.output_description or model.output_table,
                   "words": len(vocab_words), "dim": int(table.shape[1]), "model": None},
        "options": released_code_options(params, getattr(module, "RELEASED_CODE", {})),
        "seed": seed,
        "device": device,
        "threads": torch.get_num_threads(),
        "fast_engine_threads": fast_engine_threads(),
        "torch": torch.__version__,
        TIMING_KEY: {"finished": time.strftime("%Y-%m-%dT%H:%M:%S"), "seconds": round(time.time() - started, 3)},
        "train": record,
    }
    if dev is not None:
        out["dev_curve"] = dev.finish()
    log.info("%s: %d words × %d trained (%.1f s; static update %.0f%% of the time)", entry.command, len(vocab_words),
             table.shape[1], out[TIMING_KEY]["seconds"], 100 * (record[TIMING_KEY]["static_update_share"] or 0))
    return StudentRun(embeddings, out, model, checkpoint)


def _params(params_cls, params):
    """The method's dataclass from ``params``: None (the defaults), a dict of overrides or the dataclass."""
    if params is None:
        return params_cls()
    if isinstance(params, dict):
        return params_cls.from_dict(params)
    if not isinstance(params, params_cls):
        raise StaticvecError(f"params: expected a dict or {params_cls.__name__}, not {type(params).__name__}")
    return params


def _feature_source(command, model_cls, params, vocab_path, vocab, features, feature_vocab, shards, teacher, online,
                    batch_tokens, part_sentences, device, dtype="auto", max_length=None, all_sentences=False):
    """The blocks the student trains on: stored features (remapped to the method's vocabulary), or the
    shards run through the teacher now."""
    from staticvec.corpus.vocab import Vocabulary
    from staticvec.train.teacher_blocks import RecomputedFeatures, StoredFeatures, vocabulary_remap

    keys = model_cls.feature_keys_for(params)
    context = model_cls.context_of(params)
    if bool(features) == bool(shards):
        raise StaticvecError("give either --features (stored teacher features) or --shards with --teacher (recompute)")
    if features:
        if all_sentences:
            raise StaticvecError("--all-sentences needs --shards: stored passes hold the corpus's kept sentences only")
        source = StoredFeatures(features, keys)
        feature_vocab_path = feature_vocab or vocab_path
        feature_words = Vocabulary.load(feature_vocab_path, max_size=source.meta.get("vocab_size"))
        source.check_vocabulary(feature_vocab_path, feature_words)
        if source.context != context:
            raise StaticvecError(f"{features[0]}: features computed with {source.context} inputs, but the "
                                 f"{command} run asks for context {context!r}")
        if feature_words.words[: len(vocab)] != vocab.words or len(feature_words) != len(vocab):
            source.remap = vocabulary_remap(feature_words.words, vocab.index)
            log.info("feature word ids remapped: %d feature words -> %d method words", len(feature_words), len(vocab))
        return source
    if not teacher:
        raise StaticvecError("--shards needs --teacher (the recompute path runs the teacher now)")
    from staticvec.teacher.load import load_teacher

    loaded = load_teacher(teacher, device=device, offline=not online, dtype=dtype, max_length=max_length)
    return RecomputedFeatures(shards, loaded, vocab, keys, context=context, part_sentences=part_sentences,
                              batch_tokens=batch_tokens, sentences="all" if all_sentences else "kept")


def released_code_options(params, released_code: dict) -> dict:
    """For each option where the released code differs: the value used, the paper default, the released one."""
    defaults = type(params)()
    return {key: {"used": getattr(params, key), "paper": getattr(defaults, key), "released_code": released,
                  "follows": "paper" if getattr(params, key) == getattr(defaults, key) else
                  ("released code" if getattr(params, key) == released else "neither")}
            for key, released in released_code.items()}
