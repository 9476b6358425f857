"""A pass's host work in worker processes: the same files byte for byte as the serial pass whatever the number
of workers, resumed or not, written by the workers from shared memory (or here where it is short); workers'
items in order, the jobs sent back run in order, their errors raised with their tracebacks, none left
running; the Rust tokenizer called directly gives the tokenizer's own pieces; a worker's share of the parts
is the serial reader's parts."""

import multiprocessing
import os
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import teacher_worker_fixtures as wf  # noqa: E402
from teacher_fixtures import (  # noqa: E402
    TEXT,
    WORDS,
    bytelevel_tokenizer,
    sentencepiece_tokenizer,
    small_vocab,
    tiny_bert,
    wordpiece_tokenizer,
    write_shard,
)

from staticvec.errors import InputFileError, StaticvecError  # noqa: E402
from staticvec.teacher.align import PieceEncoder  # noqa: E402
from staticvec.teacher.features import FeatureSpec, iter_parts  # noqa: E402
from staticvec.teacher.pipeline import OrderedWorkers, RemoteTraceback  # noqa: E402
from staticvec.teacher.store import write_shard_features  # noqa: E402

torch.set_num_threads(1)

# the paper config's three passes of the students' teacher (benchmarks/teacher_pipeline.py), at test size
PASSES = {
    "sentence": dict(context="sentence", layers=(-1,), sentence_vectors=True),
    "paragraph": dict(context="paragraph", layers=(-1,), sentence_vectors=True),
    "ase": dict(context="sentence", special_tokens=False, layers=(), ase=True),
}


@pytest.fixture(scope="module")
def bert():
    return tiny_bert(seed=5, max_length=24)  # short inputs: long paragraphs are chunked, long sentences truncated


def random_shard(path, seed=0, paragraphs=14):
    """Paragraphs of 1-5 sentences of random words, kept or not, a few empty and a few too long for the model."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(paragraphs):
        sentences = []
        for _ in range(int(rng.integers(1, 6))):
            n = int(rng.choice([0, 3, 6, 9, 30])) if rng.random() < 0.2 else int(rng.integers(2, 12))
            sentences.append((bool(rng.random() < 0.75), " ".join(rng.choice(WORDS, n))))
        out.append(sentences)
    return write_shard(path, out)


def stored(out_dir):
    """Every array of a finished pass's files, by file and name, as (dtype, shape, bytes); the ASE sums' file."""
    got = {}
    for f in sorted((out_dir / "parts").glob("*.npz")) + sorted(out_dir.glob("*.npz")):
        with np.load(f) as data:
            got[f.name] = {k: (data[k].dtype.str, data[k].shape, data[k].tobytes()) for k in data.files}
    sums = out_dir / "ase_sums.npy"
    return got, sums.read_bytes() if sums.exists() else None


@pytest.mark.parametrize("fset", list(PASSES))
def test_workers_write_the_serial_pass_byte_for_byte(bert, tmp_path, fset):
    shard = random_shard(tmp_path / "s.tsv.gz", seed=len(fset))
    spec = FeatureSpec(**PASSES[fset])
    kwargs = dict(vocab=small_vocab(), part_sentences=7, batch_tokens=40, progress=False)
    serial = write_shard_features(bert, shard, tmp_path / "serial", spec, overlap=False, **kwargs)
    want = stored(tmp_path / "serial")
    assert len(serial["parts"]) >= 4 and serial["words"] > 100
    for workers in (1, 2, 3):
        out = tmp_path / f"w{workers}"
        got = write_shard_features(bert, shard, out, spec, host_workers=workers, **kwargs)
        assert got["parts"] == serial["parts"] and got["words"] == serial["words"], workers
        assert got["truncated_inputs_this_run"] == serial["truncated_inputs_this_run"]
        assert stored(out) == want, f"{workers} workers"
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("fset", ["paragraph", "ase"])
def test_an_interrupted_pass_with_workers_resumes_to_the_serial_files(bert, tmp_path, fset):
    shard = random_shard(tmp_path / "s.tsv.gz", seed=7)
    spec = FeatureSpec(**PASSES[fset])
    kwargs = dict(vocab=small_vocab(), part_sentences=6, batch_tokens=40, progress=False, ase_checkpoint_seconds=0)
    serial = write_shard_features(bert, shard, tmp_path / "serial", spec, **kwargs)
    # stopped after 3 parts under 2 workers, resumed under 3 (another job's cores), then nothing left to do
    assert write_shard_features(bert, shard, tmp_path / "cut", spec, host_workers=2, max_parts=3, **kwargs) == {}
    assert sorted(f.name for f in (tmp_path / "cut/parts").glob("part-*")) == [f"part-0000{i}.npz" for i in range(3)]
    resumed = write_shard_features(bert, shard, tmp_path / "cut", spec, host_workers=3, **kwargs)
    assert resumed["this_run"]["parts"] == len(serial["parts"]) - 3
    assert stored(tmp_path / "cut") == stored(tmp_path / "serial")
    again = write_shard_features(bert, shard, tmp_path / "cut", spec, host_workers=2, **kwargs)
    assert again["this_run"]["parts"] == 0 and stored(tmp_path / "cut") == stored(tmp_path / "serial")


def test_a_corrupt_line_in_a_workers_part_fails_the_pass_with_its_traceback_and_no_worker_left(bert, tmp_path):
    shard = random_shard(tmp_path / "s.tsv.gz", seed=1)
    import gzip

    lines = gzip.open(shard, "rt").read().splitlines(keepends=True)
    lines.insert(len(lines) - 4, "not a shard line\n")  # in a late part: the pass has begun
    with gzip.open(shard, "wt") as fh:
        fh.writelines(lines)
    with pytest.raises(InputFileError, match="not a corpus shard line") as caught:
        write_shard_features(bert, shard, tmp_path / "f", FeatureSpec(), small_vocab(), part_sentences=5,
                             progress=False, host_workers=2)
    assert isinstance(caught.value.__cause__, RemoteTraceback)
    assert "in host worker" in str(caught.value.__cause__) and "iter_parts" in str(caught.value.__cause__)
    assert multiprocessing.active_children() == []
    assert sorted(f.name for f in (tmp_path / "f/parts").glob("part-*"))  # the parts before it are kept
    assert not (tmp_path / "f/features.json").exists()


# ---------------------------------------------------------------- the mechanism


@pytest.mark.parametrize("n", [1, 2, 3])
def test_ordered_workers_give_every_item_in_order_each_from_its_worker(n):
    got = list(OrderedWorkers(wf.squares, (10, None), n))
    assert [(i, sq) for i, sq, _ in got] == [(i, i * i) for i in range(10)]
    assert [w for *_, w in got] == [i % n for i in range(10)]
    assert multiprocessing.active_children() == []


def test_ordered_workers_raise_a_workers_exception_with_its_traceback_after_the_items_before_it():
    got = []
    with pytest.raises(ValueError, match="no square for 5") as caught:
        for item in OrderedWorkers(wf.squares, (10, 5), 2):
            got.append(item[0])
    assert got == [0, 1, 2, 3, 4]
    assert "teacher_worker_fixtures.py" in str(caught.value.__cause__)
    assert multiprocessing.active_children() == []


def test_a_worker_that_dies_is_an_error_not_a_short_sequence():
    with pytest.raises(StaticvecError, match="host worker 1 died"):
        list(OrderedWorkers(wf.dies_at, (10, 3), 2))
    assert multiprocessing.active_children() == []


def test_closing_early_stops_the_workers(tmp_path):
    workers = OrderedWorkers(wf.slow, (str(tmp_path / "pid"),), 2)
    it = iter(workers)
    assert [next(it) for _ in range(3)] == [0, 1, 2]
    it.close()
    assert multiprocessing.active_children() == []
    for k in range(2):
        pid = int((tmp_path / f"pid.{k}").read_text())
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            pytest.fail(f"worker {k} (pid {pid}) still runs")


def test_workers_run_the_jobs_sent_back_in_order_and_end_when_told(tmp_path):
    workers = OrderedWorkers(wf.squares, (6, None), 2, consume=wf.log_job, consume_args=(str(tmp_path),))
    with workers:
        for i, _, k in workers:  # each item's job back to the worker that made it, as the part writer does
            workers.submit(k, f"job-{i}")
        for k in range(2):
            for _ in range(3):
                workers.reply(k)
        pids = [p.pid for p in workers.processes]
        workers.finish(grace=30)
    assert multiprocessing.active_children() == []
    logs = {int(f.name): f.read_text().split() for f in tmp_path.iterdir()}
    assert logs == {pids[0]: ["job-0", "job-2", "job-4"], pids[1]: ["job-1", "job-3", "job-5"]}


def test_a_failing_job_is_raised_at_its_reply_with_the_workers_traceback():
    with OrderedWorkers(wf.squares, (4, None), 1, consume=wf.job_fails_at, consume_args=("b",)) as workers:
        items = iter(workers)
        next(items)
        workers.submit(0, "a")
        workers.submit(0, "b")
        workers.reply(0)  # a: done
        with pytest.raises(KeyError, match="no job b") as caught:
            workers.reply(0)
        assert "teacher_worker_fixtures.py" in str(caught.value.__cause__)
    assert multiprocessing.active_children() == []


def test_a_worker_that_dies_in_a_job_is_an_error_not_a_lost_file():
    with OrderedWorkers(wf.squares, (4, None), 2, consume=wf.job_dies_at, consume_args=("x",)) as workers:
        next(iter(workers))
        workers.submit(1, "x")
        with pytest.raises(StaticvecError, match="host worker 1 died"):
            workers.reply(1)
    assert multiprocessing.active_children() == []


def test_a_write_waiting_goes_before_the_next_parts_preparation():
    import threading

    from staticvec.teacher.pipeline import _Turns

    turns, order = _Turns(), []

    def write():
        with turns.writing():
            order.append("write starts")
            time.sleep(0.2)
            order.append("write ends")

    with turns.preparing():
        writer = threading.Thread(target=write)
        writer.start()
        time.sleep(0.2)
        order.append("part 1 prepared")  # the write waited for it
    with turns.preparing():  # at once: without the writes' priority this thread would take the turn again first
        order.append("part 2 prepared")
    writer.join()
    assert order == ["part 1 prepared", "write starts", "write ends", "part 2 prepared"]


def shm_blocks():
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


def test_shared_arrays_come_back_as_put_and_a_larger_part_gets_a_larger_block():
    from staticvec.teacher.pipeline import SharedArrays, shared_arrays

    before = shm_blocks()
    rng = np.random.default_rng(1)
    arrays = {"word_vectors.12": rng.standard_normal((7, 5)).astype(np.float16), "empty": np.zeros((0, 4), np.int64),
              "mask": rng.random(9) < 0.5, "scalar": np.array(3, np.int16),
              "strided": np.arange(20, dtype=np.int32).reshape(4, 5)[:, ::2], "big": np.arange(50_000, dtype=np.float64)}
    block = SharedArrays()
    try:
        name, layout = block.put(arrays)
        with shared_arrays(name, layout) as got:
            assert list(got) == list(arrays)
            for key, array in arrays.items():
                assert got[key].dtype == array.dtype and got[key].shape == array.shape, key
                assert got[key].tobytes() == np.ascontiguousarray(array).tobytes(), key
        assert block.put({"small": np.ones(3)})[0] == name  # reused
        larger, _ = block.put({"big": np.zeros(200_000)})
        assert larger != name and name.lstrip("/") not in shm_blocks()  # replaced, the old one unlinked
        with pytest.raises(ValueError, match="object arrays"):
            block.put({"words": np.array(["a", None], dtype=object)})
    finally:
        block.release()
    assert shm_blocks() <= before


def test_the_part_files_are_written_by_the_workers_not_by_the_process_that_drives_the_teacher(bert, tmp_path,
                                                                                             monkeypatch):
    from staticvec.teacher import store

    shard = random_shard(tmp_path / "s.tsv.gz", seed=2)
    spec = FeatureSpec(**PASSES["ase"])
    kwargs = dict(vocab=small_vocab(), part_sentences=6, batch_tokens=40, progress=False, ase_checkpoint_seconds=0)
    serial = write_shard_features(bert, shard, tmp_path / "serial", spec, **kwargs)
    here = []
    save = store._save_npz
    monkeypatch.setattr(store, "_save_npz", lambda path, arrays: (here.append(Path(path).name), save(path, arrays)))
    before = shm_blocks()
    got = write_shard_features(bert, shard, tmp_path / "workers", spec, host_workers=2, **kwargs)
    assert got["parts"] == serial["parts"] and stored(tmp_path / "workers") == stored(tmp_path / "serial")
    assert [n for n in here if n.startswith("ase-")] and not [n for n in here if n.startswith("part-")], here
    assert len(list((tmp_path / "workers/parts").glob("part-*.npz"))) == len(serial["parts"])  # the workers wrote them
    assert shm_blocks() <= before  # every block unlinked
    assert multiprocessing.active_children() == []


def test_short_shared_memory_writes_the_parts_here_with_a_warning_and_the_same_files(bert, tmp_path, monkeypatch,
                                                                                      caplog):
    from staticvec.teacher import pipeline

    shard = random_shard(tmp_path / "s.tsv.gz", seed=4)
    spec = FeatureSpec(**PASSES["sentence"])
    kwargs = dict(vocab=small_vocab(), part_sentences=7, batch_tokens=40, progress=False)
    write_shard_features(bert, shard, tmp_path / "serial", spec, overlap=False, **kwargs)
    monkeypatch.setattr(pipeline, "shared_memory_free", lambda folder="/dev/shm": 1000)  # a container's, nearly full
    with caplog.at_level("WARNING"):
        write_shard_features(bert, shard, tmp_path / "short", spec, host_workers=2, **kwargs)
    assert stored(tmp_path / "short") == stored(tmp_path / "serial")
    assert "shared memory" in caplog.text and "are free in /dev/shm" in caplog.text
    assert multiprocessing.active_children() == []


# ---------------------------------------------------------------- the pieces and the parts


@pytest.mark.parametrize("make", [wordpiece_tokenizer, bytelevel_tokenizer, sentencepiece_tokenizer])
def test_the_rust_tokenizer_called_directly_gives_the_tokenizers_own_pieces(make):
    tok = make(max_length=32)
    direct = PieceEncoder(tok)
    assert direct.backend is not None  # (else the test compares the call with itself)
    through_call = PieceEncoder(tok, direct=False)
    texts = TEXT + ["", "unbelievable " * 12, "x", "the  cat"]
    for special in (True, False):
        for max_length in (None, 8):
            a, b = direct.encode(texts, special, max_length), through_call.encode(texts, special, max_length)
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)
            assert int(a[0].max()) <= (max_length or 1_000) and (max_length is None or int(a[0].max()) == max_length)
    # the tokenizer's own calls between direct ones change neither (each sets the shared backend up its way)
    want = tok(TEXT[:3], truncation=False)["input_ids"]
    first = direct.encode(TEXT, True, 8)
    assert tok(TEXT[:3], truncation=False)["input_ids"] == want
    tok(TEXT, truncation=True, max_length=5, padding="longest")
    for x, y in zip(direct.encode(TEXT, True, 8), first):
        np.testing.assert_array_equal(x, y)
    # and a worker's copy (what pickles: the backend alone, no transformers tokenizer) encodes the same
    import pickle

    copy = pickle.loads(pickle.dumps(direct))
    assert copy.tokenizer is None and copy.backend is not direct.backend
    for x, y in zip(copy.encode(TEXT, True, 8), first):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("context", ["sentence", "paragraph"])
def test_a_workers_share_of_the_parts_is_the_serial_readers_parts(tmp_path, context):
    shard = random_shard(tmp_path / "s.tsv.gz", seed=3)
    full = list(iter_parts(shard, context, 5))
    assert len(full) >= 5
    for n in (2, 3):
        shares = [list(iter_parts(shard, context, 5, select=lambda i, k=k: i % n == k)) for k in range(n)]
        merged = sorted((p for share in shares for p in share), key=lambda p: p.index)
        assert merged == full
    assert list(iter_parts(shard, context, 5, start_part=2, stop_part=4)) == full[2:4]


# ---------------------------------------------------------------- the knob


def test_host_workers_are_the_gpu_jobs_threads_and_none_on_the_cpu(monkeypatch):
    from staticvec.teacher.pipeline import host_workers_for

    monkeypatch.setenv("OMP_NUM_THREADS", "5")  # as Snakemake sets it for a job of 5 threads
    assert host_workers_for("cuda:0") == 5 and host_workers_for("cpu") == 0
    assert host_workers_for("cpu", 2) == 2 and host_workers_for("cuda", 0) == 0
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert host_workers_for("cuda") == len(os.sched_getaffinity(0))


def test_the_configs_host_workers_reach_the_pass_and_auto_leaves_it_to_the_cli():
    import copy
    import shlex

    from test_teacher_plan import parse

    from staticvec.config import load_config, validate_config
    from staticvec.dag.teacher import TeacherPlan

    config = validate_config(load_config(["config/config.yaml"]))
    assert config["teacher"]["host_workers"] == "auto"
    assert "--host-workers" not in shlex.split(TeacherPlan(config).feature_args("minilm", "sentence"))
    assert parse(TeacherPlan(config).feature_args("minilm", "sentence")).host_workers == "auto"
    three = copy.deepcopy(config)
    three["teacher"]["host_workers"] = 3
    assert parse(TeacherPlan(validate_config(three)).feature_args("minilm", "sentence")).host_workers == 3
    with pytest.raises(SystemExit):
        parse("--host-workers -1")


def test_part_files_are_npz_files_of_the_same_arrays(tmp_path):
    from staticvec.teacher.store import _load_npz, _save_npz

    rng = np.random.default_rng(0)
    arrays = {"word_vectors.12": rng.standard_normal((7, 5)).astype(np.float16), "empty": np.zeros((0, 4), np.int64),
              "mask": rng.random(9) < 0.5, "nan": np.array([np.nan, 1.0], np.float32), "scalar": np.array(3, np.int16),
              "strided": np.arange(20, dtype=np.int32).reshape(4, 5)[:, ::2], "fortran": np.asfortranarray(np.eye(3))}
    _save_npz(tmp_path / "p.npz", arrays)
    np.savez(tmp_path / "numpy.npz", **arrays)
    for got in (_load_npz(tmp_path / "p.npz"), dict(np.load(tmp_path / "numpy.npz"))):
        assert list(got) == list(arrays)
        for name, array in arrays.items():
            assert got[name].dtype == array.dtype and got[name].shape == array.shape, name
            assert got[name].tobytes() == np.ascontiguousarray(array).tobytes(), name


def test_writer_threads_start_in_order_and_an_after_all_job_waits_for_the_earlier_ones():
    import threading

    from staticvec.teacher.pipeline import BackgroundWriter

    started, finished, lock = [], [], threading.Lock()

    def job(i, seconds):
        with lock:
            started.append(i)
        time.sleep(seconds)
        with lock:
            finished.append(i)

    def checkpoint(parts=4):
        with lock:
            started.append("ase")
            assert sorted(finished) == list(range(parts))  # every part before it is written

    with BackgroundWriter(threads=2) as writer:
        for i, seconds in enumerate([0.3, 0.01, 0.2, 0.01]):
            writer.submit(job, i, seconds)
        writer.submit(checkpoint, after_all=True)
    assert started == [0, 1, 2, 3, "ase"] and sorted(finished) == [0, 1, 2, 3]
    started.clear()
    finished.clear()
    with pytest.raises(AssertionError):  # the check fails where the checkpoint does not wait (the test can fail)
        with BackgroundWriter(threads=2) as writer:
            writer.submit(job, 0, 0.2)
            writer.submit(checkpoint, 1)  # not after_all: runs beside job 0
