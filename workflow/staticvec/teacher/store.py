"""Per-shard feature files: written in resumable parts, read back by every method.

Layout of one shard's features (``OUT`` is a directory)::

    OUT/features.json          the sidecar, written last (the Snakemake output: "this shard is done")
    OUT/plan.json              what the parts were computed with (a resumed run must match it)
    OUT/parts/part-00000.npz   arrays of the first ``part_sentences`` training sentences (see features.py)
    OUT/parts/ase-00003.npz    ASE running sums through part 3: a checkpoint, written every few minutes
                               of work and after the last part (only the newest is kept)
    OUT/ase.npz                final ASE words: word_ids (the n vocabulary ids met, sorted), counts, layers,
                               word_list (the vocabulary ids ASE covers: every word, or the given list)
    OUT/ase_sums.npy           their sums (layers+1, n, d) float32, layer-major: readers map one layer

Every file is written atomically (with host workers, by the workers: :class:`WorkerPartWriter`). An
interrupted job restarts at the first part without a file, or
with ASE sums at the part after their newest checkpoint (the parts after it are computed again and
come out the same), so a resumed shard equals an uninterrupted one. ASE sums are checkpointed by
time, not after every part: they hold every layer of every word met (40 KB a word for BERT-base), and
at paper scale writing them after each part would cost more than computing the part.

Readers: :class:`FeatureStore` (``parts()``, ``iter_sentences()``, ``ase()``) and
:func:`iter_word_vectors`, which reads stored features or, given a teacher, computes them on the
fly — the "recompute" switch for corpora too large to cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import zipfile
from collections import deque
from contextlib import ExitStack
from pathlib import Path
from typing import Iterator

import numpy as np

from staticvec.errors import InputFileError
from staticvec.files import TIMING_KEY, atomic_path, read_json, sha256_of, write_json
from staticvec.corpus.shards import iter_lines
from staticvec.teacher.features import FeatureExtractor, FeatureSpec, iter_parts
from staticvec.teacher.pipeline import BackgroundWriter, SharedArrays, SharedMemoryShort, shared_arrays

log = logging.getLogger(__name__)

ASE_CHECKPOINT_SECONDS = 600.0  # the ASE sums are checkpointed after at most this much work (and at the end)
FORMAT_VERSION = 2  # 2: ASE sums of the words met only, layer-major in ase_sums.npy
READABLE_FORMATS = (1, 2)  # format 1 differs only in its ASE sums, which ase() refuses


def _save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez``'s file (an uncompressed zip of .npy members, read by ``np.load``), each array's memory written
    as it lies: numpy's writer copies every array through ``tobytes`` in 16 MB chunks first, which at a GPU's
    rate (1.6 KB of vectors a word) is most of a part's host work after the device."""
    with atomic_path(path) as tmp:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            for name, array in arrays.items():
                array = np.asarray(array)
                array = array if array.flags.c_contiguous else array.copy(order="C")  # (0-d stays 0-d)
                if array.dtype.hasobject:
                    raise ValueError(f"{name}: object arrays are not stored")
                with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                    np.lib.format.write_array_header_1_0(fh, np.lib.format.header_data_from_array_1_0(array))
                    fh.write(memoryview(array.reshape(-1)).cast("B"))


def _load_npz(path: Path, keys=None) -> dict[str, np.ndarray]:
    """All arrays of a part file, or only ``keys`` (npz members are read one by one)."""
    try:
        with np.load(path) as data:
            missing = [k for k in keys or () if k not in data.files]
            if missing:
                raise InputFileError(path, f"no array(s) {', '.join(missing)} in this feature file")
            return {k: data[k] for k in (data.files if keys is None else keys)}
    except (OSError, ValueError) as exc:
        raise InputFileError(path, f"unreadable feature file ({exc})") from None


def plan_of(teacher, spec: FeatureSpec, shard, vocab_path, part_sentences: int, ase_words) -> dict:
    """What determines a shard's parts: a resumed run reuses parts only if this is unchanged."""
    head = getattr(teacher, "fitted_head", None)
    return {
        "format": FORMAT_VERSION,
        # the compute dtype is part of the plan (parts of one shard share it); the device is not
        "teacher": teacher.describe() | {"device": None, "autocast": None, "weights": None},
        "mlm_head_file": getattr(head, "source_sha256", None),
        "spec": spec.to_dict(),
        "shard": str(shard),
        "shard_sha256": sha256_of(shard),
        "vocab_sha256": sha256_of(vocab_path) if vocab_path else None,
        "part_sentences": part_sentences,
        "ase_words_sha256": None if ase_words is None else hashlib.sha256(np.asarray(ase_words, np.int64).tobytes()).hexdigest(),
    }


def write_shard_features(teacher, shard, out_dir, spec: FeatureSpec, vocab=None, vocab_path=None,
                         part_sentences: int = 4096, batch_tokens: int = 8192, ase_words=None,
                         max_parts: int | None = None, progress: bool = True, overlap: bool | None = None,
                         ase_checkpoint_seconds: float = ASE_CHECKPOINT_SECONDS, host_workers: int = 0) -> dict:
    """Compute and store one shard's features, resuming from finished parts; returns the sidecar.

    ``max_parts`` stops after that many new parts (used by tests to simulate an interruption).
    ``ase_checkpoint_seconds``: the ASE sums are checkpointed after the first part finished that long
    after the last checkpoint (0: after every part), and after the last part.
    ``overlap`` (default: when the teacher runs on an accelerator) reads and tokenises the next part and
    writes the last one in background threads while a part is computed (:mod:`.pipeline`); the files
    are the same either way.
    ``host_workers`` >= 1: the shard is read, tokenised and indexed in that many worker processes, feeding
    the teacher in order (:meth:`FeatureExtractor.extract_shard`), and parts are written in a background
    thread; the files are the same as without (byte for byte), whatever the number.
    """
    out_dir = Path(out_dir)
    parts_dir = out_dir / "parts"
    parts_dir.mkdir(parents=True, exist_ok=True)
    plan = plan_of(teacher, spec, shard, vocab_path, part_sentences, ase_words)
    plan_path = out_dir / "plan.json"
    if plan_path.exists() and read_json(plan_path) != json.loads(json.dumps(plan)):
        log.warning("%s: settings changed since the parts were written; starting the shard again", out_dir)
        for stale in parts_dir.glob("*.npz"):
            stale.unlink()
    write_json(plan_path, plan)
    (out_dir / "features.json").unlink(missing_ok=True)

    extractor = FeatureExtractor(teacher, spec, vocab, batch_tokens, ase_words)
    overlap = extractor.on_accelerator if overlap is None else overlap
    done = _finished_parts(parts_dir)
    start = len(done)
    if start and spec.ase:  # on from the newest ASE checkpoint (the parts after it again)
        checkpoint = _ase_checkpoint(parts_dir, start)
        start = 0 if checkpoint is None else checkpoint + 1
        if checkpoint is not None:
            extractor.load_ase_state(_load_npz(parts_dir / f"ase-{checkpoint:05d}.npz"))
    if start:
        log.info("%s: resuming after %d finished part(s)", out_dir, start)

    tqdm = _tqdm(progress)
    # a total (and so an ETA in the log) from one cheap pass over the shard's records; a resumed job
    # starts the bar at the sentences of its finished parts
    total = sum(1 for line in iter_lines(shard) if _kept_with_tokens(line))
    initial = 0
    for f in done[:start]:
        with np.load(f) as data:
            initial += len(data["sentence_records"])
    bar = tqdm(desc=f"teacher {Path(shard).name}", unit="sent", mininterval=30, total=total, initial=initial)
    started, n_new, pieces = time.time(), 0, 0
    truncated = 0
    stop = None if max_parts is None else start + max_parts
    checkpointed, last_part = time.time(), None  # the last ASE checkpoint; the last part computed, unless checkpointed
    with ExitStack() as stack:
        if host_workers >= 1:  # prepared and written in the workers; computed here
            workers = stack.enter_context(extractor.prepare_in_workers(
                shard, part_sentences, start, stop, host_workers, consume=_write_shared_part,
                consume_args=(str(parts_dir),)))
            writer = stack.enter_context(WorkerPartWriter(workers, parts_dir))
            parts = ((prepared.part, extractor.compute(prepared)) for prepared in workers)
        else:
            writer = stack.enter_context(PartWriter(parts_dir, background=overlap))
            parts = extractor.extract_shard(shard, part_sentences, start, stop, overlap=overlap)
        for part, arrays in parts:
            truncated += extractor.n_truncated
            pieces += int(arrays["word_pieces"].sum())
            ase = None
            if spec.ase and time.time() - checkpointed >= ase_checkpoint_seconds:
                ase, checkpointed = extractor.ase_state(), time.time()  # the sums through this part, taken now
            writer.write(part.index, arrays, ase)
            last_part = part.index if ase is None else None
            n_new += 1
            bar.update(len(arrays["sentence_records"]))
        if max_parts is not None and n_new >= max_parts:
            bar.close()
            return {}  # (the with's end waits for every file)
        if spec.ase and last_part is not None:
            writer.write(last_part, None, extractor.ase_state())
    bar.close()
    elapsed = time.time() - started
    return _finish(out_dir, plan, extractor, teacher, spec, vocab, elapsed, pieces, n_new, truncated)


class PartWriter:
    """Part files written by this process: in a background thread (``background``: while the next part is
    computed), in order, an ASE checkpoint after every part it covers."""

    def __init__(self, parts_dir: Path, background: bool = True):
        self.parts_dir = parts_dir
        self.threads = BackgroundWriter(background=background)

    def write(self, index: int, arrays: dict[str, np.ndarray] | None, ase: dict | None) -> None:
        """Part ``index``'s file (``arrays``), then the ASE sums through it where given (:func:`_write_part`)."""
        self.threads.submit(_write_part, self.parts_dir, index, arrays, ase, after_all=ase is not None)

    def close(self) -> None:
        """Wait for every file (raising the first failure)."""
        self.threads.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.threads.__exit__(*exc)


class WorkerPartWriter(PartWriter):
    """Part files written by the host workers (:meth:`FeatureExtractor.prepare_in_workers` with
    :func:`_write_shared_part`): a part's arrays are copied into a shared-memory block that a worker writes the
    file from, so that the process driving the device only copies them; the CRC and the writes, most of a
    part's host work after the device, are the workers' (``benchmarks/README.md``). Each worker has two blocks
    (one written while the next is filled) and takes the parts in turn. An ASE checkpoint is written here,
    once every part it covers is on disk. Where shared memory is short (a container's 64 MB ``/dev/shm``),
    parts are written here instead, with a warning."""

    BLOCKS = 2

    def __init__(self, workers, parts_dir: Path):
        super().__init__(parts_dir)
        self.workers = workers
        self.blocks = [[SharedArrays() for _ in range(self.BLOCKS)] for _ in range(workers.n)]
        self.busy: list[deque[int]] = [deque() for _ in range(workers.n)]  # blocks sent, oldest first
        self.turn = 0
        self.short = False

    def write(self, index: int, arrays: dict[str, np.ndarray] | None, ase: dict | None) -> None:
        if arrays is not None and not self.short:
            self._send(index, arrays)
            arrays = None
        if arrays is not None or ase is not None:
            if ase is not None:
                self._wait()
            super().write(index, arrays, ase)

    def _send(self, index: int, arrays: dict[str, np.ndarray]) -> None:
        k, self.turn = self.turn, (self.turn + 1) % self.workers.n
        busy = self.busy[k]
        while busy and (len(busy) == self.BLOCKS or self.workers.replied(k)):  # (a failure there raised soon)
            self.workers.reply(k)
            busy.popleft()
        block = next(b for b in range(self.BLOCKS) if b not in busy)
        try:
            name, layout = self.blocks[k][block].put(arrays)
        except SharedMemoryShort as exc:
            log.warning("%s; part files are written by the process that drives the teacher from here on", exc)
            self.short = True
            super().write(index, arrays, None)
            return
        self.workers.submit(k, (index, name, layout))
        busy.append(block)

    def _wait(self) -> None:
        """Until every part sent is on disk."""
        for k, busy in enumerate(self.busy):
            while busy:
                self.workers.reply(k)
                busy.popleft()

    def close(self) -> None:
        try:
            self._wait()
            super().close()
            self.workers.finish()
        finally:
            self._release()

    def _release(self) -> None:
        for blocks in self.blocks:
            for block in blocks:
                block.release()

    def __exit__(self, *exc):
        if exc[0] is None:
            self.close()
            return
        # the caller's exception wins; the parts sent before it are still written (a resumed job starts after
        # them) where their workers answer within a minute; then the workers are stopped (the files are atomic)
        deadline = time.monotonic() + 60.0
        try:
            for k, busy in enumerate(self.busy):
                while busy and self.workers.replied(k, max(0.0, deadline - time.monotonic())):
                    try:
                        self.workers.reply(k)
                    except Exception:  # noqa: BLE001 - secondary to the one being raised
                        break
                    busy.popleft()
            super().__exit__(*exc)
        finally:
            self._release()


def _write_shared_part(parts_dir: str, job: tuple) -> None:
    """In a host worker: the part file of a :class:`WorkerPartWriter` job, from its shared-memory block."""
    index, name, layout = job
    with shared_arrays(name, layout) as arrays:
        _save_npz(Path(parts_dir) / f"part-{index:05d}.npz", arrays)


def _kept_with_tokens(line: str) -> bool:
    """A shard line's sentence is kept and has tokens (the progress bar's total: a scan without parsing)."""
    fields = line.rstrip("\n").split("\t", 3)
    return len(fields) == 4 and fields[2] == "1" and fields[3] != ""


def _write_part(parts_dir: Path, index: int, arrays: dict[str, np.ndarray] | None, ase: dict | None) -> None:
    """A finished part's file, then the ASE sums through it where given, then the older checkpoint removed: an
    interruption at any point leaves a checkpoint whose part is finished (or none), never a newer one alone."""
    if arrays is not None:
        _save_npz(parts_dir / f"part-{index:05d}.npz", arrays)
    if ase is not None:
        _save_npz(parts_dir / f"ase-{index:05d}.npz", ase)
        for old in parts_dir.glob("ase-*.npz"):
            if old.name != f"ase-{index:05d}.npz":
                old.unlink()


def _ase_checkpoint(parts_dir: Path, n_done: int) -> int | None:
    """The part of the newest ASE checkpoint among the ``n_done`` finished parts, or None."""
    indices = [int(f.stem.split("-")[1]) for f in parts_dir.glob("ase-*.npz") if f.stem.split("-")[1].isdigit()]
    indices = [i for i in indices if i < n_done]
    return max(indices) if indices else None


def _finished_parts(parts_dir: Path) -> list[Path]:
    """Finished parts in order; a gap (parts written by several workers, interrupted) ends the list, and the
    parts after it are removed (they are computed again)."""
    files = sorted(parts_dir.glob("part-*.npz"))
    done = []
    for i, f in enumerate(files):
        if f.name != f"part-{i:05d}.npz":
            break
        done.append(f)
    for extra in files[len(done):]:
        extra.unlink()
    return done


def _finish(out_dir, plan, extractor, teacher, spec, vocab, elapsed, pieces, n_new, truncated) -> dict:
    parts_dir = out_dir / "parts"
    parts = _finished_parts(parts_dir)
    n_sent = n_words = n_zero = n_oov = 0
    part_sizes = []
    for f in parts:
        with np.load(f) as data:
            s = len(data["sentence_records"])
            wp = data["word_pieces"]
            ids = data["word_ids"]
        part_sizes.append(s)
        n_sent += s
        n_words += len(wp)
        n_zero += int((wp == 0).sum())
        n_oov += int((ids < 0).sum())
    if spec.ase:
        last = parts_dir / f"ase-{len(parts) - 1:05d}.npz"
        state = _load_npz(last) if parts else extractor.ase_state()
        with atomic_path(out_dir / "ase_sums.npy") as tmp, open(tmp, "wb") as fh:
            np.save(fh, state.pop("sums"))
        state["layers"] = np.arange(teacher.n_layers + 1)
        state["word_list"] = np.flatnonzero(extractor.ase_rows != -2)  # the words ASE covers (all, or a list)
        _save_npz(out_dir / "ase.npz", state)
    head = getattr(teacher, "fitted_head", None)
    sidecar = {
        "format": FORMAT_VERSION,
        "shard": plan["shard"],
        "shard_sha256": plan["shard_sha256"],
        "vocab_sha256": plan["vocab_sha256"],
        "vocab_size": None if vocab is None else len(vocab),
        "teacher": teacher.describe(),
        "mlm_head": None if not spec.mlm_topk else {
            "kind": teacher.mlm_head_kind,
            "note": None if head is None else "MLM head fitted on the frozen encoder (not shipped with the model)",
            **({} if head is None else head.meta),
        },
        "spec": spec.to_dict(),
        "layers": extractor.layers,
        "arrays": _array_names(spec, extractor.layers),
        "part_sentences": plan["part_sentences"],
        "parts": [f.name for f in parts],
        "part_sizes": part_sizes,
        "sentences": n_sent,
        "words": n_words,
        "oov_words": n_oov,
        "words_without_pieces": n_zero,
        "truncated_inputs_this_run": truncated,
        "ase": "ase.npz" if spec.ase else None,
        "ase_sums": "ase_sums.npy" if spec.ase else None,
        "this_run": {"parts": n_new},
        TIMING_KEY: {"seconds": round(elapsed, 3),  # of this run; skipped when two runs are compared
                     "word_pieces_per_second": round(pieces / elapsed, 1) if elapsed > 0 and pieces else None},
    }
    write_json(out_dir / "features.json", sidecar)
    return sidecar


def _array_names(spec: FeatureSpec, layers) -> list[str]:
    names = ["sentence_offsets", "word_ids", "word_pieces", "sentence_records", "sentence_paragraphs"]
    names += [f"word_vectors.{layer}" for layer in layers]
    if spec.sentence_vectors:
        names.append("sentence_vectors")
    if spec.attention_window:
        names.append("attention_window")
    if spec.mlm_topk:
        names += ["mlm_piece_word", "mlm_piece_ids", "mlm_topk_ids", "mlm_topk_logits"]
    return names


def _tqdm(enabled: bool):
    from tqdm import tqdm

    return tqdm if enabled else (lambda *a, **k: tqdm(*a, disable=True, **k))


# ---------------------------------------------------------------- reading


class FeatureStore:
    """A finished shard's features (``features.json`` or its directory)."""

    def __init__(self, path: str | os.PathLike):
        path = Path(path)
        self.dir = path.parent if path.name == "features.json" else path
        sidecar = self.dir / "features.json"
        if not sidecar.exists():
            raise InputFileError(sidecar, "no features here (the shard's teacher pass has not finished)")
        self.meta = read_json(sidecar)
        if self.meta.get("format") not in READABLE_FORMATS:
            raise InputFileError(sidecar, f"feature format {self.meta.get('format')} (expected one of "
                                          f"{', '.join(map(str, READABLE_FORMATS))})")

    @property
    def spec(self) -> FeatureSpec:
        return FeatureSpec(**self.meta["spec"])

    def parts(self, start: int = 0, keys=None) -> Iterator[dict[str, np.ndarray]]:
        """The parts' arrays in order, from part ``start``; only ``keys`` when given (trainers)."""
        for name in self.meta["parts"][start:]:
            yield _load_npz(self.dir / "parts" / name, keys)

    def ase(self) -> dict[str, np.ndarray]:
        """word_ids, counts, layers and sums (layers+1, n, d), the sums memory-mapped (not read)."""
        if not self.meta.get("ase"):
            raise InputFileError(self.dir / "features.json", "these features hold no ASE sums")
        if self.meta["format"] < 2:
            raise InputFileError(self.dir / "features.json", "ASE sums of feature format 1 (dense, cut to the most "
                                 "frequent words): run this shard's teacher pass again")
        state = _load_npz(self.dir / self.meta["ase"])
        path = self.dir / self.meta["ase_sums"]
        try:
            state["sums"] = np.load(path, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise InputFileError(path, f"unreadable ASE sums ({exc})") from None
        expected = (len(state["layers"]), len(state["word_ids"]))
        if state["sums"].ndim != 3 or state["sums"].shape[:2] != expected:
            raise InputFileError(path, f"ASE sums of shape {state['sums'].shape}, expected {expected} + (width,)")
        return state

    def layer_key(self, layer: int | None) -> str:
        layers = self.meta["layers"]
        if not layers:
            raise InputFileError(self.dir / "features.json", "these features hold no word vectors")
        if layer is None:
            return f"word_vectors.{layers[-1]}"
        n = self.meta["teacher"]["layers"]
        index = layer if layer >= 0 else n + 1 + layer
        if index not in layers:
            raise InputFileError(self.dir / "features.json", f"layer {layer} not stored (stored: {layers})")
        return f"word_vectors.{index}"


def iter_word_vectors(source, layer: int | None = None, teacher=None, spec: FeatureSpec | None = None,
                      vocab=None, part_sentences: int = 4096, batch_tokens: int = 8192
                      ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per training sentence: (vocabulary ids, word vectors (n_words, d)), in shard order.

    ``source`` is a stored shard's features (directory or ``features.json``), or — with
    ``teacher`` — a corpus shard whose vectors are computed now (the recompute switch).
    """
    if teacher is None:
        store = FeatureStore(source)
        key = store.layer_key(layer)
        parts = store.parts()
    else:
        spec = spec or FeatureSpec(layers=(-1 if layer is None else layer,))
        extractor = FeatureExtractor(teacher, spec, vocab, batch_tokens)
        key = f"word_vectors.{extractor.layers[0]}"
        parts = (arrays for _, arrays in extractor.extract_parts(
            iter_parts(source, spec.context, part_sentences, sentences=spec.sentences)))
    for arrays in parts:
        offsets, ids, vecs = arrays["sentence_offsets"], arrays["word_ids"], arrays[key]
        for i in range(len(offsets) - 1):
            yield ids[offsets[i]:offsets[i + 1]], vecs[offsets[i]:offsets[i + 1]]
