"""A teacher of your own: a local directory holding a transformers model (an encoder with or without an
MLM head, or a causal LM) as any teacher of teacher.models; what happens without an MLM head, and with a
slow (Python) tokenizer."""

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from teacher_fixtures import bytelevel_tokenizer, small_shard, small_vocab, tiny_bert, tiny_gpt2, wordpiece_tokenizer  # noqa: E402

from staticvec.cli import main  # noqa: E402
from staticvec.config import deep_merge, load_config  # noqa: E402
from staticvec.errors import StaticvecError  # noqa: E402
from staticvec.teacher.load import load_teacher, require_fast_tokenizer  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Local model directories as a user would save them: random tiny weights, their tokenizers."""
    root = tmp_path_factory.mktemp("teachers")
    bert = tiny_bert(seed=4)
    dirs = {"encoder": root / "encoder", "masked": root / "masked", "causal": root / "causal", "slow": root / "slow"}
    bert.model.bert.save_pretrained(dirs["encoder"])  # a bare encoder: no MLM head (like MiniLM)
    bert.model.save_pretrained(dirs["masked"])  # BertForMaskedLM: its own head
    for name in ("encoder", "masked"):
        bert.tokenizer.save_pretrained(dirs[name])
    gpt = tiny_gpt2(bytelevel_tokenizer())
    gpt.model.save_pretrained(dirs["causal"])
    gpt.tokenizer.save_pretrained(dirs["causal"])
    # the same encoder with a slow (Python) tokenizer over the same vocabulary
    from transformers import BertTokenizerLegacy

    bert.model.bert.save_pretrained(dirs["slow"])
    vocab = sorted(bert.tokenizer.get_vocab().items(), key=lambda kv: kv[1])
    (root / "vocab.txt").write_text("".join(f"{w}\n" for w, _ in vocab), encoding="utf-8")
    BertTokenizerLegacy(str(root / "vocab.txt")).save_pretrained(dirs["slow"])
    return dirs


def config_with(repo_root, **teacher):
    return deep_merge(load_config([repo_root / "config/config.yaml"]), {"teacher": teacher})


# ---------------------------------------------------------------- the plan


def test_local_directories_are_teachers_and_only_a_headless_encoder_gets_a_fitted_head(repo_root, models):
    from staticvec.dag.semglove import SemgloveRules
    from staticvec.dag.teacher import TeacherPlan, teacher_traits
    from staticvec.dag.workflow import Workflow

    owned = {name: str(path) for name, path in models.items() if name != "slow"}
    config = config_with(repo_root, models=owned, default="encoder")
    Workflow(config, repo_root).check_teachers()  # each loads (tokenizers fast) before any job
    plan = TeacherPlan(config)
    assert plan.uses_fitted_head("encoder", "sentence")  # no MLM head: the workflow fits one (teacher_mlm_head)
    assert not TeacherPlan(config_with(repo_root, models=owned, default="masked")).uses_fitted_head("masked", "sentence")
    traits = teacher_traits(owned["causal"])
    assert traits["causal"] and traits["hidden_size"] == 16 and traits["n_layers"] == 2
    assert teacher_traits(owned["encoder"]) == {"mlm_head": False, "causal": False, "hidden_size": 16, "n_layers": 2}
    assert SemgloveRules(config).teacher == "encoder"
    # a causal LM as the default teacher: SemGloVe's MLM variants cannot run on it, said before any job
    causal = config_with(repo_root, models=owned, default="causal")
    with pytest.raises(StaticvecError, match=r"teacher.default = 'causal' .* is a causal LM: SemGloVe's MLM variants "
                                             r"\(md, .*\) need masked-LM predictions.*cooc.semglove.teacher"):
        SemgloveRules(causal)
    causal["cooc"]["semglove"]["teacher"] = "encoder"  # the fix the message gives
    assert SemgloveRules(causal).teacher == "encoder"


def masked_lm_checkpoints():
    """Tiny random masked LMs of the families whose head sits elsewhere, and an ELECTRA discriminator."""
    import transformers as t

    small = {"hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 32,
             "max_position_embeddings": 70}
    return {
        "BertForMaskedLM": t.BertConfig(**small),
        "BertForPreTraining": t.BertConfig(**small),  # its cls also scores next-sentence prediction
        "RobertaForMaskedLM": t.RobertaConfig(**small),
        "AlbertForMaskedLM": t.AlbertConfig(embedding_size=8, **small),
        "ElectraForMaskedLM": t.ElectraConfig(embedding_size=8, **small),  # the generator
        "DistilBertForMaskedLM": t.DistilBertConfig(dim=16, n_layers=2, n_heads=2, hidden_dim=32,
                                                    max_position_embeddings=70),
        "ElectraForPreTraining": t.ElectraConfig(embedding_size=8, **small),  # the discriminator: no MLM head
    }


def test_a_masked_lms_own_head_is_found_and_gives_its_logits(tmp_path):
    """What the plan reads in config.json (a head or not) is what the job finds, and the head it finds gives
    the model's own logits; ELECTRA's discriminator counts as without (loading it as a masked LM gave a
    random head), and so gets a fitted one."""
    import transformers

    from staticvec.dag.teacher import teacher_traits
    from staticvec.teacher.align import align

    tokenizer = wordpiece_tokenizer()
    for name, config in masked_lm_checkpoints().items():
        config.vocab_size = len(tokenizer)
        torch.manual_seed(0)
        path = tmp_path / name
        getattr(transformers, name)(config).save_pretrained(path)
        tokenizer.save_pretrained(path)
        teacher = load_teacher(str(path), device="cpu", dtype="float32")
        native = name != "ElectraForPreTraining"
        assert teacher_traits(str(path))["mlm_head"] is native, name
        assert teacher.mlm_head_kind == ("native" if native else None), name
        if native:
            ids = torch.as_tensor(align(tokenizer, [["the", "cat", "sat", "on", "the", "mat"]]).input_ids)[None]
            with torch.inference_mode():
                want = teacher.model(input_ids=ids)
                want = want.logits if getattr(want, "logits", None) is not None else want.prediction_logits
                got = teacher.mlm_logits(teacher.forward(ids, torch.ones_like(ids)).last_hidden_state)
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_a_head_layout_that_runs_but_is_not_the_models_head_is_refused(monkeypatch):
    import transformers

    import staticvec.teacher.load as load

    config = masked_lm_checkpoints()["DistilBertForMaskedLM"]
    config.vocab_size = 50
    model = transformers.DistilBertForMaskedLM(config).eval()
    right = ("vocab_transform", "activation", "vocab_layer_norm", "vocab_projector")
    wrong = ("activation", "vocab_transform", "vocab_layer_norm", "vocab_projector")  # runs, other logits
    monkeypatch.setattr(load, "MLM_HEAD_LAYOUTS", (wrong,))
    head, why = load.native_mlm_head(model, model.base_model)
    assert head is None and "does not give the model's own logits" in why
    monkeypatch.setattr(load, "MLM_HEAD_LAYOUTS", (wrong, right))
    head, why = load.native_mlm_head(model, model.base_model)
    assert why is None and [type(m).__name__ for m in head] == ["Linear", "GELUActivation", "LayerNorm", "Linear"]


def test_ase_layers_beyond_a_teachers_depth_are_a_plan_error(repo_root, models):
    from staticvec.dag.workflow import Workflow

    config = config_with(repo_root, models={"minilm": str(models["encoder"])})  # 2 layers, not MiniLM's 6
    w = Workflow(config, repo_root)
    sweep = [e for e in w.sheet.ids("ase") if w.params(e)["layer"] != "best"]
    assert sorted(w.params(e)["layer"] for e in sweep if "~" in e) == [0, 1, 2, 3, 4, 5, 6]  # config.yaml's layers
    with pytest.raises(StaticvecError, match=r"layer 3, but teacher 'minilm' \(.*encoder\) has layers 0-2: set config "
                                             r"methods.ase.layers to its layers \[0, ..., 2\]"):
        [w.ase_layer_file(e) for e in sweep]
    config["methods"]["ase"]["layers"] = [0, 1, 2]
    w = Workflow(config, repo_root)
    files = [w.ase_layer_file(e) for e in w.sheet.ids("ase") if w.params(e)["layer"] != "best"]
    assert {f.rsplit("/", 1)[1] for f in files} == {"layer-00.bin", "layer-01.bin", "layer-02.bin"}  # -1: the last, 2


def test_slow_tokenizer_is_refused_at_plan_time_with_what_to_do(repo_root, models):
    from staticvec.dag.workflow import Workflow

    config = config_with(repo_root, models={"minilm": str(models["slow"])})
    with pytest.raises(StaticvecError, match=r"teacher.models.minilm' = '.*slow'.*BertTokenizerLegacy\) is a slow "
                                             r"\(Python\) tokenizer.*set \"tokenizer_class\": \"BertTokenizer\""):
        Workflow(config, repo_root).check_teachers()
    with pytest.raises(StaticvecError, match="slow .Python. tokenizer"):  # a job run by hand says the same
        load_teacher(str(models["slow"]), device="cpu")


def test_following_the_fix_gives_the_same_pieces(repo_root, models, tmp_path):
    import shutil

    from staticvec.dag.workflow import Workflow
    from staticvec.teacher.align import align

    fixed = tmp_path / "fixed"
    shutil.copytree(models["slow"], fixed)
    settings = json.loads((fixed / "tokenizer_config.json").read_text())
    settings["tokenizer_class"] = "BertTokenizer"
    (fixed / "tokenizer_config.json").write_text(json.dumps(settings))
    Workflow(config_with(repo_root, models={"minilm": str(fixed)}), repo_root).check_teachers()
    teacher = load_teacher(str(fixed), device="cpu")
    words = [["the", "cat", "sat", "unbelievable", "."]]
    got, want = align(teacher.tokenizer, words), align(wordpiece_tokenizer(), words)
    assert got.input_ids.tolist() == want.input_ids.tolist() and got.piece_word.tolist() == want.piece_word.tolist()


def test_a_python_only_tokenizer_class_says_to_choose_another_teacher():
    from transformers import ByT5Tokenizer

    with pytest.raises(StaticvecError, match=r"teacher 'byt5'.*ByT5Tokenizer.*choose a teacher whose tokenizer is fast"):
        require_fast_tokenizer(ByT5Tokenizer(), "byt5")


# ---------------------------------------------------------------- the jobs, through the command line


def test_an_encoder_without_mlm_head_needs_the_fitted_head(models, tmp_path, capsys):
    shard = small_shard(tmp_path / "00000.tsv.gz")
    vocab = tmp_path / "vocab.tsv"
    small_vocab().save(vocab)
    teacher = ["--teacher", str(models["encoder"]), "--device", "cpu"]
    features = ["teacher", "features", *teacher, "--vocab", str(vocab), "--shard", str(shard), "--mlm-topk", "3"]
    assert main([*features, "--out", str(tmp_path / "no-head")]) == 2
    assert "ships no MLM head: fit one with 'staticvec teacher fit-mlm-head'" in capsys.readouterr().err
    head = tmp_path / "head.pt"
    assert main(["teacher", "fit-mlm-head", *teacher, "--shards", str(shard), "--out", str(head),
                 "--train-positions", "40", "--heldout-positions", "10", "--epochs", "1"]) == 0
    out = tmp_path / "feat"
    assert main([*features, "--mlm-head", str(head), "--out", str(out)]) == 0
    meta = json.loads((out / "features.json").read_text())
    assert meta["mlm_head"]["kind"] == "fitted" and meta["spec"]["mlm_mode"] == "unmasked"  # auto: unmasked for a fitted head
    masked = tmp_path / "masked"
    assert main(["teacher", "features", "--teacher", str(models["masked"]), "--device", "cpu", "--vocab", str(vocab),
                 "--shard", str(shard), "--mlm-topk", "3", "--out", str(masked)]) == 0
    meta = json.loads((masked / "features.json").read_text())
    assert meta["mlm_head"]["kind"] == "native" and meta["spec"]["mlm_mode"] == "masked"  # the paper's mode


def test_a_causal_lm_directory_gives_vectors_but_no_mlm_predictions(models, tmp_path, capsys):
    shard = small_shard(tmp_path / "00000.tsv.gz")
    vocab = tmp_path / "vocab.tsv"
    small_vocab().save(vocab)
    common = ["teacher", "features", "--teacher", str(models["causal"]), "--device", "cpu", "--vocab", str(vocab),
              "--shard", str(shard)]
    assert main([*common, "--sentence-vectors", "--out", str(tmp_path / "f")]) == 0
    meta = json.loads((tmp_path / "f" / "features.json").read_text())
    assert meta["teacher"]["causal"] and meta["sentences"] == 20
    assert main([*common, "--mlm-topk", "3", "--out", str(tmp_path / "m")]) == 2
    assert "is a causal LM: it has no masked-LM predictions" in capsys.readouterr().err
