"""Tokenlearn from the run's teacher and corpus (staticvec.train.tokenlearn): on a tiny random BERT saved to disk,
the targets read from the stored teacher pass are the library's (the mean of each sentence's pieces, [CLS]/[SEP]
left out) against a brute-force forward pass; the written vectors are the trained library model's encoding of
each word; the run is seeded; bad inputs are clear errors; the sheet entries plan (rule, inputs, tables, claims)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tokenlearn")
pytest.importorskip("model2vec")
torch = pytest.importorskip("torch")

from teacher_fixtures import small_shard, small_vocab, tiny_bert, wordpiece_tokenizer  # noqa: E402

from staticvec.cli import main  # noqa: E402
from staticvec.embeddings import Embeddings  # noqa: E402
from staticvec.errors import InputFileError, StaticvecError  # noqa: E402
from staticvec.teacher.features import FeatureSpec  # noqa: E402
from staticvec.teacher.store import write_shard_features  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def setup(tmp_path_factory, one_torch_thread):
    """Two shards (20 training sentences each), their stored sentence pass (float32: exact), a paragraph pass."""
    from staticvec.teacher.load import load_teacher

    tmp = tmp_path_factory.mktemp("tokenlearn")
    model_dir = tmp / "tiny"
    tiny_bert(seed=3).model.save_pretrained(model_dir)
    wordpiece_tokenizer().save_pretrained(model_dir)
    teacher = load_teacher(str(model_dir), device="cpu", dtype="float32")
    shards = [small_shard(tmp / "00000.tsv.gz"), small_shard(tmp / "00001.tsv.gz")]
    vocab_path = tmp / "vocab.tsv"
    small_vocab().save(vocab_path)
    features = {}
    for context in ("sentence", "paragraph"):
        spec = FeatureSpec(context=context, layers=(-1,), sentence_vectors=True, vector_dtype="float32")
        features[context] = []
        for shard in shards:
            out = tmp / "features" / context / shard.name.split(".")[0]
            write_shard_features(teacher, shard, out, spec, vocab=small_vocab(), vocab_path=vocab_path,
                                 part_sentences=8, progress=False)
            features[context].append(str(out))
    return {"tmp": tmp, "teacher": str(model_dir), "shards": [str(s) for s in shards], "vocab": str(vocab_path),
            **features}


def _kept_sentences(shards):
    from staticvec.corpus.shards import iter_sentences

    return [" ".join(tokens) for tokens in iter_sentences(shards)]


def _brute_force(teacher_dir, texts, specials: bool):
    """The teacher's last layer on each text alone, averaged over its pieces ([CLS]/[SEP] in or out)."""
    from transformers import AutoModel, AutoTokenizer

    model, tokenizer = AutoModel.from_pretrained(teacher_dir).eval(), AutoTokenizer.from_pretrained(teacher_dir)
    out = []
    with torch.no_grad():
        for text in texts:
            states = model(**tokenizer(text, return_tensors="pt")).last_hidden_state[0]
            out.append((states if specials else states[1:-1]).mean(0).numpy())
    return np.stack(out)


def test_targets_are_the_library_means_read_from_the_stored_pass(setup):
    from staticvec.train.tokenlearn import read_targets

    texts, targets, info = read_targets(setup["shards"], setup["sentence"], "pieces")
    assert texts == _kept_sentences(setup["shards"]) and len(texts) == 40  # every training sentence, corpus order
    assert targets.dtype == np.float32 and targets.shape == (40, 16)
    # featurize's target: mean over the text's pieces of the last layer, first and last ([CLS], [SEP]) left out
    np.testing.assert_allclose(targets, _brute_force(setup["teacher"], texts, specials=False), atol=2e-5)
    assert info["sentences"] == 40 and info["without_target"] == 0 and info["targets"] == "pieces"
    # the stored sentence vectors (X2Static's: [CLS] and [SEP] included), and the first N only
    texts2, stored, _ = read_targets(setup["shards"], setup["sentence"], "sentence_vectors", max_sentences=25)
    assert texts2 == texts[:25]
    np.testing.assert_allclose(stored, _brute_force(setup["teacher"], texts[:25], specials=True), atol=2e-5)


def test_bad_target_inputs_are_errors_naming_the_file(setup):
    from staticvec.train.tokenlearn import read_targets

    with pytest.raises(InputFileError, match=r"00000/features.json.*computed on another shard"):
        read_targets(setup["shards"][::-1], setup["sentence"])  # the shards in another order than their features
    with pytest.raises(InputFileError, match="paragraph context"):
        read_targets(setup["shards"], setup["paragraph"])
    with pytest.raises(StaticvecError, match="2 corpus shards but 1 feature"):
        read_targets(setup["shards"], setup["sentence"][:1])


def _train(setup, out_dir: Path, *flags):
    out, model = out_dir / "vectors.bin", out_dir / "tokenlearn"
    code = main(["train", "tokenlearn", "--teacher", setup["teacher"], "--shards", *setup["shards"],
                 "--features", *setup["sentence"], "--vocab", setup["vocab"], "--dim", "8", "--threads", "1",
                 "--device", "cpu", "--model-dir", str(model), "--out", str(out), *flags])
    assert code == 0
    return out, out_dir / "vectors.json", model


@pytest.fixture(scope="module")
def trained(setup, tmp_path_factory):
    return _train(setup, tmp_path_factory.mktemp("tl-run"), "--seed", "1")


def test_each_word_is_the_trained_model_encoding_of_that_word(trained, setup):
    from model2vec import StaticModel

    out, record_path, model_dir = trained
    emb = Embeddings.load(out)
    model = StaticModel.from_pretrained(model_dir)
    # every vocabulary word, in vocabulary order: the corpus's words are tokens of the model (vocab_size)
    assert emb.words == small_vocab().words and emb.dim == 8
    assert len(model.tokenize(["unbelievable"])[0]) == 1  # three pieces of the teacher, one token here
    for word in emb.words:
        np.testing.assert_array_equal(emb[word], np.asarray(model.encode([word])[0], dtype=np.float32))
    record = json.loads(record_path.read_text())
    assert record["method"] == "tokenlearn" and record["seed"] == 1
    assert record["versions"]["tokenlearn"].startswith("0.2")
    assert record["hyperparameters"] == {"dim": 8, "vocab_size": 56000, "max_sentences": 1000000, "targets": "pieces",
                                         "max_epochs": None}
    assert record["library_training"]["batch_size"] == 256 and record["library_training"]["patience"] == 5
    assert record["data"]["sentences"] == 40 and record["vocab"]["written"] == len(emb)
    # the library trained: the held-out loss went down from its first evaluation, with one evaluation per epoch
    losses = record["training"]["validation_losses"]
    assert record["training"]["epochs"] >= len(losses) > 5 and min(losses) < losses[0]  # no line for the stopping one
    assert record["training"]["stopped"] == "early_stopping"
    assert {"model.safetensors", "tokenizer.json", "config.json"} <= {p.name for p in model_dir.iterdir()}


def test_training_moves_the_distilled_rows(setup, one_torch_thread):
    """The trained model is not its Model2Vec starting point: Tokenlearn's fit changed the rows."""
    from model2vec import StaticModel
    from tokenlearn.utils import create_vocab

    from staticvec.teacher.load import load_teacher
    from staticvec.train.model2vec import Model2VecParams, distill_teacher
    from staticvec.train.tokenlearn import TokenlearnParams, read_targets, train

    teacher = load_teacher(setup["teacher"], device="cpu", dtype="float32")
    texts, targets, _ = read_targets(setup["shards"], setup["sentence"])
    params = TokenlearnParams(dim=8)
    model, info = train(teacher, texts, targets, params, seed=1, device="cpu")
    start = distill_teacher(teacher, Model2VecParams(pca_dims=8, quantize_to="float32", vocabulary="run"),
                            create_vocab(texts, 56000))
    assert isinstance(model, StaticModel) and model.tokens == start.tokens and info["tokens"] == len(start.tokens)
    assert not np.allclose(model.embedding, start.embedding, atol=1e-3)


def test_an_interrupted_training_writes_nothing(setup, tmp_path, monkeypatch):
    """The library catches KeyboardInterrupt and returns its best state so far: the job must stop instead of
    writing that as a finished run."""
    from tokenlearn import pretrain

    forward, calls = pretrain.StaticModelFineTuner.forward, []

    def interrupted(self, x):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return forward(self, x)

    monkeypatch.setattr(pretrain.StaticModelFineTuner, "forward", interrupted)
    with pytest.raises(KeyboardInterrupt, match="training interrupted"):
        _train(setup, tmp_path)
    assert len(calls) == 3 and not (tmp_path / "vectors.bin").exists() and not (tmp_path / "tokenlearn").exists()


def test_seeded(trained, setup, tmp_path):
    """The same seed gives the same vectors, another seed other vectors (initialisation, batch order)."""
    again, _, _ = _train(setup, tmp_path / "again", "--seed", "1")
    np.testing.assert_array_equal(Embeddings.load(again).vectors, Embeddings.load(trained[0]).vectors)
    other, _, _ = _train(setup, tmp_path / "other", "--seed", "2", "--targets", "sentence_vectors", "--vocab-size", "0")
    assert not np.allclose(Embeddings.load(other).vectors, Embeddings.load(trained[0]).vectors, atol=1e-3)
    record = json.loads((tmp_path / "other" / "vectors.json").read_text())
    assert record["hyperparameters"]["targets"] == "sentence_vectors" and record["training"]["vocabulary_words"] == 0


def _run(setup, out_dir: Path, dim: int, seed: int, start: list[str]):
    """``staticvec train tokenlearn`` at ``dim`` and ``seed``, distilling here (``--teacher``) or not (``--distilled``)."""
    out, model = out_dir / "vectors.bin", out_dir / "tokenlearn"
    assert main(["train", "tokenlearn", *start, "--shards", *setup["shards"], "--features", *setup["sentence"],
                 "--vocab", setup["vocab"], "--dim", str(dim), "--threads", "1", "--device", "cpu",
                 "--model-dir", str(model), "--out", str(out), "--seed", str(seed)]) == 0
    return Embeddings.load(out), json.loads((out_dir / "vectors.json").read_text()), model


def _distil(setup, out: Path, *flags):
    assert main(["train", "tokenlearn-distill", "--teacher", setup["teacher"], "--shards", *setup["shards"],
                 "--features", *setup["sentence"], "--threads", "1", "--device", "cpu", "--out", str(out), *flags]) == 0
    return out


@pytest.fixture(scope="module")
def distilled(setup, tmp_path_factory):
    """One distillation per width: 8-d, and the teacher's 16 (tokenlearn_teacher_dim's)."""
    tmp = tmp_path_factory.mktemp("tl-distilled")
    return {dim: _distil(setup, tmp / f"d{dim}", "--dim", str(dim)) for dim in (8, 16)}


def test_each_seed_trained_from_one_distillation_equals_its_own_job(setup, distilled, tmp_path):
    """The split path (a distillation per width, each seed's job reading it) writes the vectors and the library
    model the one-job path (distil, then train, in the seed's job: the code of every committed run) writes, byte
    for byte, for two widths and two seeds; the seeds run in reverse order, after both distillations."""
    from model2vec import StaticModel

    for dim in (16, 8):
        vectors = {}
        for seed in (2, 1):
            split, split_record, split_model = _run(setup, tmp_path / f"split{dim}.{seed}", dim, seed,
                                                    ["--distilled", str(distilled[dim])])
            alone, alone_record, alone_model = _run(setup, tmp_path / f"alone{dim}.{seed}", dim, seed,
                                                    ["--teacher", setup["teacher"]])
            assert split.words == alone.words and split.dim == dim
            assert split.vectors.dtype == alone.vectors.dtype == np.float32
            np.testing.assert_array_equal(split.vectors, alone.vectors)
            assert (split_model / "model.safetensors").read_bytes() == (alone_model / "model.safetensors").read_bytes()
            assert split_record["training"]["validation_losses"] == alone_record["training"]["validation_losses"]
            assert split_record["training"]["epochs"] == alone_record["training"]["epochs"] > 5
            assert split_record["training"]["distilled"] == str(distilled[dim]) and "distilled" not in alone_record["training"]
            for key in ("teacher", "hyperparameters", "data", "vocab", "device", "threads"):
                assert split_record[key] == alone_record[key], key
            assert {**split_record["model"], "dir": None} == {**alone_record["model"], "dir": None}
            assert StaticModel.from_pretrained(split_model).tokens == StaticModel.from_pretrained(distilled[dim]).tokens
            vectors[seed] = split.vectors
        assert not np.allclose(vectors[1], vectors[2], atol=1e-3)  # the seed matters after the distillation


def test_the_distillation_is_the_seed_free_start(setup, distilled):
    """What the distillation job writes is the library's distilled model of the teacher with the corpus's words
    (steps 2-3), float32, with the record that ties it to its parameters and texts."""
    from model2vec import StaticModel
    from tokenlearn.utils import create_vocab

    from staticvec.teacher.load import load_teacher
    from staticvec.train.model2vec import Model2VecParams, distill_teacher
    from staticvec.train.tokenlearn import DISTILLATION_RECORD, read_targets, texts_digest

    texts, _, _ = read_targets(setup["shards"], setup["sentence"])
    teacher = load_teacher(setup["teacher"], device="cpu", dtype="float32")
    expected = distill_teacher(teacher, Model2VecParams(pca_dims=8, quantize_to="float32", vocabulary="run"),
                               create_vocab(texts, 56000))
    model = StaticModel.from_pretrained(distilled[8])
    assert model.tokens == expected.tokens and model.embedding.dtype == np.float32
    np.testing.assert_array_equal(model.embedding, expected.embedding)
    record = json.loads((distilled[8] / DISTILLATION_RECORD).read_text())
    assert record["distillation"] == {"dim": 8, "vocab_size": 56000, "max_sentences": 1000000, "targets": "pieces"}
    assert record["texts_sha256"] == texts_digest(texts) and record["tokens"] == len(model.tokens)
    assert record["teacher"]["hidden_size"] == 16 and record["threads"] == 1 and record["device"] == "cpu"


def test_a_distillation_of_other_inputs_is_refused(setup, distilled, tmp_path, capsys):
    """A seed's job refuses a distillation of another width, other texts or no record, naming the file, and
    writes nothing."""
    def job(start, *flags, shards=2):
        code = main(["train", "tokenlearn", "--distilled", str(start), "--shards", *setup["shards"][:shards],
                     "--features", *setup["sentence"][:shards], "--vocab", setup["vocab"], "--threads", "1", "--device", "cpu",
                     "--model-dir", str(tmp_path / "m"), "--out", str(tmp_path / "v.bin"), *flags])
        return code, capsys.readouterr().err

    record = re.escape(str(distilled[8] / "distillation.json"))
    for flags, what in ((["--dim", "16"], rf"{record}: distilled with .*'dim': 8.*'dim': 16"),
                        (["--dim", "8", "--max-sentences", "30"], rf"{record}: .*'max_sentences': 30"),
                        (["--dim", "8", "--targets", "sentence_vectors"], rf"{record}: .*'targets': 'sentence_vectors'")):
        code, err = job(distilled[8], *flags)
        assert code != 0 and re.search(what, err), err
    code, err = job(distilled[8], "--dim", "8", shards=1)  # the same parameters, the first shard's 20 sentences only
    assert code != 0 and re.search(rf"{record}: distilled from other texts", err), err
    code, err = job(tmp_path, "--dim", "8")
    assert code != 0 and re.search(rf"{re.escape(str(tmp_path / 'distillation.json'))}: missing", err), err
    assert not (tmp_path / "v.bin").exists() and not (tmp_path / "m").exists()
    # the training's parameter does not enter the distillation: a capped job reads the same one
    from staticvec.train.tokenlearn import TokenlearnParams

    assert TokenlearnParams(dim=8, max_epochs=3).distillation() == TokenlearnParams(dim=8).distillation()


def test_max_epochs_caps_the_library_training(setup, distilled):
    """``max_epochs`` stops the library's loop through its own stopping path: N complete epochs, each with its
    end-of-epoch evaluation, on the uncapped run's trajectory (its first N held-out losses); a cap the early
    stopping comes before changes nothing. (The library's restored "best" state is its live parameters:
    ``state_dict()`` aliases them, so a stopped run's model is its state at the stop, capped or not.)"""
    from model2vec import StaticModel

    from staticvec.train.tokenlearn import TokenlearnParams, fit, read_targets

    texts, targets, _ = read_targets(setup["shards"], setup["sentence"])

    def run(max_epochs):
        model = StaticModel.from_pretrained(distilled[8])
        return fit(model, texts, targets, TokenlearnParams(dim=8, max_epochs=max_epochs), seed=1, device="cpu")

    free, free_info = run(None)
    epochs = free_info["epochs"]
    assert free_info["stopped"] == "early_stopping" and epochs > 10  # 36 training texts: one step, one evaluation an epoch
    capped, info = run(3)
    assert info["stopped"] == "max_epochs" and info["epochs"] == 3
    assert info["validation_losses"] == free_info["validation_losses"][:3]
    assert not np.allclose(capped.embedding, free.embedding, atol=1e-4)
    late, late_info = run(epochs)  # the early stopping ends the run before the cap
    assert late_info["stopped"] == "early_stopping" and late_info["epochs"] == epochs
    np.testing.assert_array_equal(late.embedding, free.embedding)
    with pytest.raises(StaticvecError, match="max_epochs must be an integer >= 1 or null"):
        TokenlearnParams(max_epochs=0)


def test_indexing_backward_on_two_threads_adds_in_order_under_deterministic_torch():
    """The library's ``w[ids]`` on a batch of long texts (256 x 512 ids, over torch's 32,768-element grain): its
    backward (index_put_ with accumulate) on 2 threads is, under ``deterministic_torch``, the float32 sum in the
    ids' order (np.add.at, brute force) -- without it torch adds with atomics from both threads, in an order that
    changes from run to run -- and the setting is the caller's again after the block, an error's too."""
    from staticvec.device import deterministic_torch

    rng = np.random.default_rng(0)
    ids = torch.from_numpy(rng.integers(0, 4, (256, 512))).int()  # four rows: both threads add to each of them
    upstream = torch.from_numpy(rng.standard_normal((256, 512)).astype(np.float32))
    in_order = np.zeros(4, np.float32)
    np.add.at(in_order, ids.numpy().ravel(), upstream.numpy().ravel())
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        for _ in range(5):
            w = torch.zeros(4, requires_grad=True)
            with deterministic_torch("cpu"):
                assert torch.are_deterministic_algorithms_enabled()
                (w[ids] * upstream).sum().backward()
            np.testing.assert_array_equal(w.grad.numpy(), in_order)
    finally:
        torch.set_num_threads(threads)
    assert not torch.are_deterministic_algorithms_enabled()
    with pytest.raises(KeyError), deterministic_torch("cpu"):
        raise KeyError("x")
    assert not torch.are_deterministic_algorithms_enabled()


def test_the_library_trains_under_deterministic_torch(setup, distilled, monkeypatch):
    """``fit`` runs the library's training with torch's deterministic kernels on, and leaves them as it found them."""
    import tokenlearn.train
    from model2vec import StaticModel

    from staticvec.train.tokenlearn import TokenlearnParams, fit, read_targets

    seen = []
    library = tokenlearn.train.train_model

    def spy(*args, **kwargs):
        seen.append(torch.are_deterministic_algorithms_enabled())
        return library(*args, **kwargs)

    monkeypatch.setattr(tokenlearn.train, "train_model", spy)
    texts, targets, _ = read_targets(setup["shards"], setup["sentence"])
    fit(StaticModel.from_pretrained(distilled[8]), texts, targets, TokenlearnParams(dim=8, max_epochs=2), seed=1,
        device="cpu")
    assert seen == [True] and not torch.are_deterministic_algorithms_enabled()


def test_parameters_and_limits_are_checked(setup):
    from staticvec.train.tokenlearn import TokenlearnParams, check_padding, train

    for bad in ({"dim": 0}, {"vocab_size": -1}, {"max_sentences": 0}, {"targets": "cls"}, {"dim": True}):
        with pytest.raises(StaticvecError, match="tokenlearn"):
            TokenlearnParams(**bad)
    targets = np.zeros((10, 16), np.float32)
    with pytest.raises(StaticvecError, match="10 sentences with a target; at least 20"):
        train(None, ["a"] * 10, targets, TokenlearnParams(dim=8), 1, "cpu")
    with pytest.raises(StaticvecError, match="dim 32 exceeds.*teacher width 16"):
        train(None, ["a"] * 40, np.zeros((40, 16), np.float32), TokenlearnParams(dim=32), 1, "cpu")

    class Model:  # the library pads with 0: a tokenizer whose [PAD] is elsewhere would train on padding
        def __init__(self, pad):
            self.tokenizer = type("T", (), {"token_to_id": staticmethod(lambda token: pad)})()

    check_padding(Model(0))
    for pad, what in ((None, "absent"), (3, "id 3")):
        with pytest.raises(StaticvecError, match=what):
            check_padding(Model(pad))


def test_config_sheet_tables_and_claims():
    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow
    from staticvec.sheets.tables import load_paper_table, load_tables_spec

    config = load_config([REPO / "config" / "config.yaml"])
    block = config["methods"]["tokenlearn"]
    assert {k: block[k] for k in ("dim", "vocab_size", "max_sentences", "targets")} == \
        {"dim": 256, "vocab_size": 56000, "max_sentences": 1000000, "targets": "pieces"}  # the library's defaults
    workflow = Workflow(config, REPO)
    spec = workflow.spec("tokenlearn")
    assert spec.seeded and spec.teacher == config["teacher"]["default"]
    assert workflow.seeds("tokenlearn") == config["seeds"]  # claimed: every seed
    assert workflow.params("tokenlearn_teacher_dim")["dim"] == 384  # MiniLM's width
    tables = load_tables_spec(REPO / "config" / "tables.yaml", REPO)["tables"]
    rows = {"semglove_table1": "tokenlearn", "wang_table2": "tokenlearn", "c2v_table1": "tokenlearn",
            "x2static_table3": "tokenlearn_teacher_dim"}
    for table_id, emb in rows.items():
        assert tables[table_id]["rows"]["tokenlearn"] == emb, table_id
        assert "tokenlearn" not in load_paper_table(REPO / tables[table_id]["paper_file"]).rows
        names = list(tables[table_id]["rows"])
        assert names.index("tokenlearn") == names.index("model2vec") + 1  # beside Model2Vec
    claims = workflow.claims_spec["claims"]
    for claim_id, paper, side in (("semglove_tl", "semglove", "semglove_md"), ("wang_tl", "wang", "bert_sg"),
                                  ("c2v_tl", "c2v", "c2v_post"),
                                  ("x2static_tl", "x2static", ["x2static_para", "x2static_sent"])):
        claim = claims[claim_id]
        assert claim["paper"] == paper and claim["order"][0] == side
        assert claim["order"][1] == ("tokenlearn_teacher_dim" if paper == "x2static" else "tokenlearn")
        assert claim["metric"] == claims[f"{claim_id[:-3]}_m2v"]["metric"]  # the Model2Vec claim's comparison


def test_the_default_run_plans_tokenlearn_on_the_stored_sentence_pass(shared_data):
    """`snakemake -n` of the default config: one distillation per width, one Tokenlearn job per seed and width
    reading its width's distillation and the students' sentence pass (no pass of its own), evaluated, in the
    summary and X2Static's Table 3."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    targets = ["results/default/tables/summary.md", "results/default/tables/x2static/table3.md"]
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--forceall", "--cores", "2", *targets],
                            capture_output=True, text=True, env=env, cwd=REPO)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-3000:]
    assert re.search(r"^train_tokenlearn\s+6$", out, re.M)  # 256-d and the teacher's width, seeds 1-3
    assert re.search(r"^tokenlearn_distill\s+2$", out, re.M)  # once per width, not once per seed
    lines = out.splitlines()
    command = next(line for line in lines if "staticvec train tokenlearn " in line and "embeddings/tokenlearn/seed2/" in line)
    assert "--distilled results/default/embeddings/tokenlearn/distilled " in command
    assert "--teacher" not in command and '"dim": 256' in command and "--seed 2" in command
    features = re.search(r"--features (.*?) --vocab", command).group(1).split()
    assert features == [f"results/default/teacher/minilm/features/sentence/{s:05d}/features.json" for s in range(8)]
    assert "--model-dir results/default/embeddings/tokenlearn/seed2/tokenlearn" in command
    distill = {re.search(r"--out (\S+)", line).group(1): line for line in lines if "staticvec train tokenlearn-distill" in line}
    assert set(distill) == {"results/default/embeddings/tokenlearn/distilled",
                            "results/default/embeddings/tokenlearn_teacher_dim/distilled"}
    for out_dir, dim in (("tokenlearn", 256), ("tokenlearn_teacher_dim", 384)):
        line = distill[f"results/default/embeddings/{out_dir}/distilled"]
        assert "--teacher minilm" in line and f'"dim": {dim}' in line and "max_epochs" not in line
        assert re.search(r"--features (.*?) --teacher", line).group(1).split() == features
        # the seeds' threads (the forward passes' floating point): 2 of the 2 cores, as the training jobs
        assert "--threads 2" in line and "--threads 2" in command
    assert not re.search(r"set tokenlearn", out)  # no teacher pass of its own
    summary = next(line for line in lines if "staticvec report summary" in line)
    for seed in (1, 2, 3):
        assert f"tokenlearn=results/default/eval/tokenlearn/seed{seed}/intrinsic.web.json" in summary
    table3 = next(line for line in lines if "staticvec report table" in line and "--table x2static_table3" in line)
    assert "tokenlearn_teacher_dim=results/default/eval/tokenlearn_teacher_dim/seed1/intrinsic.muse.json" in table3
    assert "benchmark: results/default/benchmarks/train/tokenlearn/seed1.tsv" in out  # its seconds in the timings
    assert "benchmark: results/default/benchmarks/train/tokenlearn/distilled.tsv" in out


def test_entries_share_a_distillation_only_where_it_is_the_same(tmp_path):
    """An entry that differs from another only in the training's own parameter (max_epochs) reads the other's
    distillation; one of another width, vocabulary or threads has its own."""
    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow

    import yaml

    sheet = yaml.safe_load((REPO / "config" / "embeddings.yaml").read_text())
    sheet["embeddings"]["tokenlearn_capped"] = {"like": "tokenlearn", "params": {"max_epochs": 3}}
    sheet["embeddings"]["tokenlearn_small_vocab"] = {"like": "tokenlearn", "params": {"vocab_size": 1000}}
    (tmp_path / "embeddings.yaml").write_text(yaml.safe_dump(sheet))
    config = load_config([REPO / "config" / "config.yaml"])
    config["sheets"] = {**config.get("sheets", {}), "embeddings": str(tmp_path / "embeddings.yaml")}
    workflow = Workflow(config, REPO)
    assert workflow.tokenlearn_distillation("tokenlearn_capped") == "tokenlearn"
    assert workflow.tokenlearn_distillation("tokenlearn") == "tokenlearn"
    assert workflow.tokenlearn_distillation("tokenlearn_teacher_dim") == "tokenlearn_teacher_dim"
    assert workflow.tokenlearn_distillation("tokenlearn_small_vocab") == "tokenlearn_small_vocab"
    assert set(workflow.tokenlearn_distillation_ids().split("|")) == \
        {"tokenlearn", "tokenlearn_teacher_dim", "tokenlearn_small_vocab"}


def test_tokenlearn_reads_only_the_leading_shards_that_hold_its_sentences():
    from staticvec.dag.common import leading_shards_for_sentences

    paper = {"corpus": {"shards": 256, "max_tokens": None, "max_sentence_tokens": 40}, "plan": {"corpus_tokens": 1.3e9}}
    # 1,000,000 sentences of at most 40 tokens in shards of 1.3e9 / 256 = 5,078,125 tokens: ceil(7.88) = 8 shards
    assert leading_shards_for_sentences(paper, 256, 1_000_000) == 8
    # the default: 8 shards of 125,000 tokens would need 320, so all 8 are read
    default = {"corpus": {"shards": 8, "max_tokens": 1_000_000, "max_sentence_tokens": 40}}
    assert leading_shards_for_sentences(default, 8, 1_000_000) == 8
    assert leading_shards_for_sentences(default, 8, 6_250) == 2  # 250,000 tokens: exactly two shards
    assert leading_shards_for_sentences(default, 8, 6_251) == 3
    assert leading_shards_for_sentences(default, 8, None) == 8
    assert leading_shards_for_sentences({"corpus": {"shards": 4, "max_tokens": None}}, 4, 10) == 4  # size unknown


@pytest.mark.parametrize("tokens, shards, per_width, tolerance", [
    # the tour of 2026-11-28 (results/reference/tour-1m/README.md): 256-d jobs 193-197 s, 384-d 230-242 s
    (1_000_133, 8, {"tokenlearn": 195, "tokenlearn_teacher_dim": 236}, 0.02),
    # the claims run (results/reference/claims-10m/timings.md): 6 jobs, 6,350.5 s; per width only their mean is
    # stable (627-1,236 s at 256-d), so the two widths' mean is checked
    (10_000_033, 80, {"mean": 6350.5 / 6}, 0.03),
])
def test_the_planning_model_gives_back_the_committed_one_job_runs(tokens, shards, per_width, tolerance):
    """A distillation plus a seed's job, as modelled (config/unit_costs.yaml), is what one job of the committed
    runs took (each distilled, then trained); the split saves the distillation for every seed but one a width."""
    from staticvec.config import load_config
    from staticvec.dag.costs import CostModel, Wildcards
    from staticvec.dag.rules import RuleFunctions
    from staticvec.dag.semglove import SemgloveRules
    from staticvec.dag.teacher import TeacherPlan
    from staticvec.dag.workflow import Workflow

    config = load_config([REPO / "config" / "config.yaml"])
    config["corpus"]["shards"] = shards
    workflow, teacher_plan = Workflow(config, REPO), TeacherPlan(config)
    rules = RuleFunctions(config, workflow, teacher_plan, SemgloveRules(config))
    model = CostModel(config, workflow, teacher_plan, rules.SG, root=REPO,
                      manifest={"totals": {"tokens": tokens, "vocabulary": 13815}, "shards": [{}] * shards})

    def one_job(emb):
        distill = model.job("tokenlearn_distill", Wildcards({"emb": workflow.tokenlearn_distillation(emb)}))
        seed = model.job("train_tokenlearn", Wildcards({"emb": emb, "seed": "1"}))
        assert distill.work_s == pytest.approx(63)  # tokenlearn_distill_s at MiniLM, whatever the corpus
        return distill.work_s + seed.work_s

    modelled = {emb: one_job(emb) for emb in ("tokenlearn", "tokenlearn_teacher_dim")}
    if "mean" in per_width:
        modelled = {"mean": sum(modelled.values()) / 2}
    for key, seconds in per_width.items():
        assert modelled[key] == pytest.approx(seconds, rel=tolerance), key
