"""The feature pass's pipeline: host work overlapped with device work and copies batched, without changing a
value; and the paragraph units built from one tokenizer call equal the per-paragraph construction."""

import copy
import threading
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from cuda_fixtures import DEVICE, cuda_test  # noqa: E402
from teacher_fixtures import TEXT, small_shard, small_vocab, tiny_bert, write_shard  # noqa: E402

from staticvec.teacher import features as features_module  # noqa: E402
from staticvec.teacher.align import count_pieces  # noqa: E402
from staticvec.teacher.features import FeatureExtractor, FeatureSpec, build_units, iter_parts  # noqa: E402
from staticvec.teacher.load import Teacher  # noqa: E402
from staticvec.teacher.pipeline import BackgroundWriter, HostArrays, PartOutputs, lookahead  # noqa: E402
from staticvec.teacher.store import write_shard_features  # noqa: E402

torch.set_num_threads(1)

EVERYTHING = dict(layers=(0, 1, 2), sentence_vectors=True, attention_window=3, mlm_topk=4, ase=True)


@pytest.fixture(scope="module")
def bert():
    return tiny_bert(seed=3)


# ---------------------------------------------------------------- the mechanisms


@pytest.mark.parametrize("background", [False, True])
def test_lookahead_gives_each_result_in_order_and_raises_the_callers_error(background):
    calls = []

    def square(x):
        calls.append(threading.current_thread().name)
        if x == 4:
            raise ValueError("four")
        return x * x

    got = lookahead(square, range(4), background)
    assert list(got) == [0, 1, 4, 9]
    assert any("lookahead" in name for name in calls) == background  # the calls ran in the background thread
    with pytest.raises(ValueError, match="four"):
        list(lookahead(square, range(6), background))


def test_lookahead_closed_early_waits_for_the_call_under_way():
    running = []

    def slow(x):
        running.append(x)
        time.sleep(0.2)
        running.remove(x)
        return x

    it = lookahead(slow, range(10), background=True)
    assert next(it) == 0  # the call for 1 is now under way in the background
    deadline = time.time() + 30
    while not running and time.time() < deadline:  # (it may take the thread a moment to start on a busy machine)
        time.sleep(0.001)
    assert running == [1]
    it.close()
    assert running == []  # nothing of it runs once the caller goes on


def test_background_writer_runs_jobs_in_order_and_raises_their_errors():
    done = []
    with BackgroundWriter(background=True) as writer:
        for i in range(5):
            writer.submit(lambda i: (time.sleep(0.01), done.append(i)), i)
    assert done == list(range(5))

    def fail():
        raise OSError("disk full")

    writer = BackgroundWriter(background=True)
    writer.submit(fail)
    with pytest.raises(OSError, match="disk full"):
        writer.submit(done.append, 99)  # the next submit reports the failed job
    writer.close()
    with pytest.raises(OSError, match="disk full"):
        with BackgroundWriter(background=False) as inline:
            inline.submit(fail)  # inline: at once


def test_host_arrays_come_back_as_they_went():
    arrays = {"ids": np.arange(12).reshape(3, 4), "mask": np.arange(12).reshape(3, 4) % 3 == 0,
              "counts": np.array([[1], [5]]), "empty": np.zeros(0, np.int64), "scalarish": np.array([7])}
    got = HostArrays(arrays).to("cpu")
    assert list(got) == list(arrays)
    for name, array in arrays.items():
        assert got[name].dtype == torch.int64 and tuple(got[name].shape) == array.shape, name
        np.testing.assert_array_equal(got[name].numpy(), array.astype(np.int64), err_msg=name)


@pytest.mark.parametrize("in_place", [True, False])
def test_part_outputs_scatter_and_return_the_arrays(in_place):
    out = PartOutputs("cpu", in_place=in_place)
    vec = out.new("v", (4, 3), np.float16)
    win = out.new("w", (4, 2), np.float32, float("nan"))
    vec.index_copy_(0, torch.tensor([2, 0]), torch.tensor([[1.0, 2, 3], [4, 5, 6]]).half())
    win.index_copy_(0, torch.tensor([3]), torch.tensor([[0.5, 0.25]]))
    got = out.host()
    assert got["v"].dtype == np.float16 and got["w"].dtype == np.float32
    np.testing.assert_array_equal(got["v"], [[4, 5, 6], [0, 0, 0], [1, 2, 3], [0, 0, 0]])
    np.testing.assert_array_equal(np.isnan(got["w"]), [[1, 1], [1, 1], [1, 1], [0, 0]])
    assert got["w"][3].tolist() == [0.5, 0.25]


# ---------------------------------------------------------------- the same features whatever overlaps or is copied


class CopiedOutputs(PartOutputs):
    """The outputs as on an accelerator: filled in separate tensors, then copied back."""

    def __init__(self, device, in_place=None):
        super().__init__(device, in_place=False)


def assert_same_arrays(a: dict, b: dict):
    assert list(a) == list(b)
    for key in a:
        assert a[key].dtype == b[key].dtype and a[key].shape == b[key].shape, key
        assert a[key].tobytes() == b[key].tobytes(), key  # byte for byte (NaN included)


@pytest.mark.parametrize("context", ["sentence", "paragraph"])
@pytest.mark.parametrize("mlm_mode", ["masked", "unmasked"])
def test_overlapped_and_copied_back_parts_equal_the_plain_pass(bert, tmp_path, monkeypatch, context, mlm_mode):
    shard = small_shard(tmp_path / "s.tsv.gz")
    spec = FeatureSpec(context=context, mlm_mode=mlm_mode, vector_dtype="float16", **EVERYTHING)
    plain = FeatureExtractor(bert, spec, small_vocab(), batch_tokens=48)
    want = [(p.index, plain.extract(p)) for p in iter_parts(shard, context, 5)]
    monkeypatch.setattr(features_module, "PartOutputs", CopiedOutputs)
    piped = FeatureExtractor(bert, spec, small_vocab(), batch_tokens=48)
    got = [(p.index, arrays) for p, arrays in piped.extract_parts(iter_parts(shard, context, 5), overlap=True)]
    assert len(want) > 2 and [i for i, _ in got] == [i for i, _ in want]
    for (_, a), (_, b) in zip(want, got):
        assert_same_arrays(a, b)
    assert_same_arrays(plain.ase_state(), piped.ase_state())


@pytest.mark.parametrize("checkpoint_seconds", [0, 600])
def test_overlapped_resumed_shard_writes_the_same_files(bert, tmp_path, checkpoint_seconds):
    shard = small_shard(tmp_path / "s.tsv.gz")
    spec = FeatureSpec(**EVERYTHING)
    kwargs = dict(vocab=small_vocab(), part_sentences=5, batch_tokens=40, progress=False)
    plain = write_shard_features(bert, shard, tmp_path / "plain", spec, overlap=False, **kwargs)
    # interrupted after two parts (the background writer finishes them), then resumed: from the ASE checkpoint of
    # part 1 where one was due after every part, else from the start (no checkpoint was due in 600 s)
    assert write_shard_features(bert, shard, tmp_path / "piped", spec, overlap=True, max_parts=2,
                                ase_checkpoint_seconds=checkpoint_seconds, **kwargs) == {}
    checkpoint = ["ase-00001.npz"] if checkpoint_seconds == 0 else []
    assert sorted(f.name for f in (tmp_path / "piped/parts").iterdir()) == checkpoint + ["part-00000.npz",
                                                                                       "part-00001.npz"]
    piped = write_shard_features(bert, shard, tmp_path / "piped", spec, overlap=True, **kwargs)
    assert plain["parts"] == piped["parts"] and len(plain["parts"]) > 3
    assert piped["this_run"]["parts"] == len(plain["parts"]) - (2 if checkpoint else 0)
    for name in plain["parts"] + ["../ase.npz"]:
        with np.load(tmp_path / "plain/parts" / name) as a, np.load(tmp_path / "piped/parts" / name) as b:
            assert_same_arrays(dict(a), dict(b))
    assert (tmp_path / "plain/ase_sums.npy").read_bytes() == (tmp_path / "piped/ase_sums.npy").read_bytes()


@pytest.mark.parametrize("overlap", [False, True])
def test_a_job_prepares_and_writes_parts_in_background_threads_only_with_overlap(bert, tmp_path, monkeypatch, overlap):
    from staticvec.teacher import store as store_module

    threads = {"prepare": set(), "compute": set(), "write": set()}

    def recorded(kind, fn):
        def wrapper(*args, **kwargs):
            threads[kind].add(threading.current_thread().name)
            return fn(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(FeatureExtractor, "prepare", recorded("prepare", FeatureExtractor.prepare))
    monkeypatch.setattr(FeatureExtractor, "compute", recorded("compute", FeatureExtractor.compute))
    save = store_module._save_npz

    def save_part(path, arrays):  # the part files and ASE checkpoints (the final ASE sums are written at the end)
        if path.name.startswith(("part-", "ase-")):
            threads["write"].add(threading.current_thread().name)
        save(path, arrays)

    monkeypatch.setattr(store_module, "_save_npz", save_part)
    shard = small_shard(tmp_path / "s.tsv.gz")
    write_shard_features(bert, shard, tmp_path / "out", FeatureSpec(layers=(-1,), ase=True), small_vocab(),
                         part_sentences=5, progress=False, overlap=overlap)
    main = threading.current_thread().name
    assert threads["compute"] == {main}  # the device's work stays in the caller's thread
    if overlap:
        assert all("lookahead" in name for name in threads["prepare"]) and threads["prepare"]
        assert all("writer" in name for name in threads["write"]) and threads["write"]
    else:
        assert threads["prepare"] == threads["write"] == {main}


@cuda_test
@pytest.mark.parametrize("mlm_mode", ["masked", "unmasked"])
def test_on_the_device_pipelined_parts_equal_the_serial_pass(bert, tmp_path, mlm_mode):
    """On CUDA the pipeline's copies are asynchronous (indices from pinned memory, outputs back into pinned memory)
    while the next part is prepared: a missing synchronisation reads a buffer before it is filled. The same
    teacher on the same device, part by part, serial against pipelined: the same integers, the same values up to
    the order of CUDA's atomic sums (fp32 storage, so that no fp16 rounding boundary is crossed by that order)."""
    on_device = Teacher(copy.deepcopy(bert.model), bert.tokenizer, name="tiny-bert-device", device=DEVICE, dtype=torch.float32,
                        attention=True)
    shard = small_shard(tmp_path / "s.tsv.gz")
    spec = FeatureSpec(mlm_mode=mlm_mode, vector_dtype="float32", **EVERYTHING)
    serial = FeatureExtractor(on_device, spec, small_vocab(), batch_tokens=48)
    want = [serial.extract(p) for p in iter_parts(shard, "sentence", 5)]
    piped = FeatureExtractor(on_device, spec, small_vocab(), batch_tokens=48)
    got = [arrays for _, arrays in piped.extract_parts(iter_parts(shard, "sentence", 5), overlap=True)]
    assert len(got) == len(want) > 2
    for a, b in [*zip(want, got), (serial.ase_state(), piped.ase_state())]:
        assert list(a) == list(b)
        for key in a:
            assert a[key].dtype == b[key].dtype and a[key].shape == b[key].shape, key
            if a[key].dtype.kind == "f":
                np.testing.assert_allclose(b[key], a[key], rtol=1e-5, atol=1e-6, err_msg=key)  # NaN where NaN
            else:
                np.testing.assert_array_equal(b[key], a[key], err_msg=key)


@cuda_test
@pytest.mark.parametrize("context", ["sentence", "paragraph"])
def test_on_the_device_parts_from_host_workers_equal_the_serial_pass(bert, tmp_path, context):
    """Parts prepared in worker processes reach the device as numpy buffers packed there, pinned and copied here
    (issue 54): the same part files as the serial pass on the same device, up to the order of CUDA's atomic sums
    (fp32 storage; on the CPU stand-in, byte for byte)."""
    on_device = Teacher(copy.deepcopy(bert.model), bert.tokenizer, name="tiny-bert-device", device=DEVICE,
                        dtype=torch.float32, attention=True)
    shard = small_shard(tmp_path / "s.tsv.gz")
    spec = FeatureSpec(context=context, vector_dtype="float32", layers=(0, 2), sentence_vectors=True, ase=True)
    kwargs = dict(vocab=small_vocab(), part_sentences=5, batch_tokens=48, progress=False)
    serial = write_shard_features(on_device, shard, tmp_path / "serial", spec, overlap=False, **kwargs)
    workers = write_shard_features(on_device, shard, tmp_path / "workers", spec, host_workers=2, **kwargs)
    assert serial["parts"] == workers["parts"] and len(serial["parts"]) > 2
    for name in serial["parts"] + ["../ase.npz"]:
        with np.load(tmp_path / "serial/parts" / name) as a, np.load(tmp_path / "workers/parts" / name) as b:
            assert a.files == b.files
            for key in a.files:
                assert a[key].dtype == b[key].dtype and a[key].shape == b[key].shape, key
                if a[key].dtype.kind == "f":
                    np.testing.assert_allclose(b[key], a[key], rtol=1e-5, atol=1e-6, err_msg=key)
                else:
                    np.testing.assert_array_equal(b[key], a[key], err_msg=key)
    np.testing.assert_allclose(np.load(tmp_path / "workers/ase_sums.npy"), np.load(tmp_path / "serial/ase_sums.npy"),
                               rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- paragraph units


def units_one_paragraph_at_a_time(part, tokenizer, budget, slack):
    """Brute force: each paragraph tokenised alone, each sentence's words and positions appended one by one."""
    start = np.concatenate([[0], np.cumsum([len(s) for s in part.sentences])])
    units, outs, sents, single = [], [], [], []
    for sentences, out in part.context:
        pieces = count_pieces(tokenizer, sentences)
        chunks, current, used = [], [], 0
        for tokens, o, n in zip(sentences, out, pieces):
            if any(t for t, _ in current) and used + n + slack > budget:
                chunks.append(current)
                current, used = [], 0
            current.append((tokens, o))
            used += int(n)
        chunks.append(current)
        for chunk in chunks:
            words = [w for tokens, _ in chunk for w in tokens]
            if not words:
                continue
            units.append(words)
            outs += [start[o] + k if o >= 0 else -1 for tokens, o in chunk for k in range(len(tokens))]
            sents += [o for tokens, o in chunk for _ in tokens]
            kept = {o for tokens, o in chunk if tokens}
            single.append(kept.pop() if len(kept) == 1 and min(kept) >= 0 else -1)
    return units, outs, sents, single


@pytest.mark.parametrize("budget", [6, 11, 24, 500])
def test_paragraph_units_equal_one_paragraph_at_a_time(bert, tmp_path, budget):
    rng = np.random.default_rng(budget)
    paragraphs = []
    for _ in range(12):  # kept and context sentences, one-sentence paragraphs, empty context lines
        size = int(rng.integers(1, 6))
        paragraphs.append([(bool(rng.random() < 0.6), TEXT[int(rng.integers(len(TEXT)))] if rng.random() < 0.9 else "")
                           for _ in range(size)])
    shard = write_shard(tmp_path / "p.tsv.gz", paragraphs)
    part = next(iter_parts(shard, "paragraph", 10_000))
    got = build_units(part, "paragraph", bert.tokenizer, budget=budget, slack=1)
    units, outs, sents, single = units_one_paragraph_at_a_time(part, bert.tokenizer, budget, 1)
    assert got.words == units
    assert got.word_out.tolist() == outs and got.word_sentence.tolist() == sents
    assert got.unit_sentence.tolist() == single
    assert got.word_out.dtype == got.word_sentence.dtype == got.unit_sentence.dtype == np.int64
