"""Fitting an MLM head on a frozen encoder without one."""

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from cuda_fixtures import DEVICE, ON_GPU, cuda_test, exact_float32  # noqa: E402
from teacher_fixtures import TEXT, small_shard, tiny_bert, write_shard  # noqa: E402

from staticvec.teacher.features import FeatureExtractor, FeatureSpec, Part  # noqa: E402
from staticvec.teacher.load import Teacher  # noqa: E402
from staticvec.teacher.mlm_head import fit_head, load_head, save_head  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def encoder_only():
    """A tiny BERT encoder with no MLM head (like MiniLM)."""
    bert = tiny_bert(seed=3)
    return Teacher(bert.model.bert, bert.tokenizer, name="tiny-encoder", device="cpu")


def test_encoder_without_head_refuses_mlm_features(encoder_only):
    assert encoder_only.mlm_head_kind is None
    with pytest.raises(Exception, match="fit-mlm-head"):
        FeatureExtractor(encoder_only, FeatureSpec(mlm_topk=3), None)


def test_unmasked_head_learns_to_predict_the_piece_and_round_trips(encoder_only, tmp_path):
    shard = write_shard(tmp_path / "s.tsv.gz", [[(True, t)] for t in TEXT * 3])
    head, report = fit_head(encoder_only, [shard], mode="unmasked", train_positions=600, heldout_positions=150,
                            select_prob=0.5, epochs=300, lr=3e-2, batch_positions=128, seed=0)
    # predicting a piece from its own unmasked state is learnable: far above unigram frequency
    assert report["heldout_top1"] > report["unigram_top1"] + 0.3
    assert report["heldout_top10"] >= report["heldout_top1"]
    # the decoder is the encoder's input embedding matrix (tied, not trained, not saved)
    assert head.embeddings.data_ptr() == encoder_only.input_embeddings().data_ptr()
    assert "embeddings" not in " ".join(head.state_dict())
    path = tmp_path / "head.pt"
    save_head(head, path)
    again = load_head(path, encoder_only)
    x = torch.randn(5, encoder_only.hidden_size)
    torch.testing.assert_close(again(x), head(x))
    assert again.meta["mode"] == "unmasked" and again.source_sha256

    # used through the teacher: unmasked top-k equals the head's own top-k on the encoder states
    encoder_only.fitted_head = again
    try:
        spec = FeatureSpec(layers=(), mlm_topk=3, mlm_mode="unmasked")
        part = Part(0, sentences=[TEXT[0].split()], records=[0], paragraphs=[0])
        arrays = FeatureExtractor(encoder_only, spec, None).extract(part)
        ids = encoder_only.tokenizer(TEXT[0], return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            states = encoder_only.encoder(ids).last_hidden_state[0, 1:-1]
        np.testing.assert_array_equal(arrays["mlm_topk_ids"], again(states).topk(3).indices.numpy())
    finally:
        encoder_only.fitted_head = None


def test_head_file_for_another_teacher_is_refused(encoder_only, tmp_path):
    shard = small_shard(tmp_path / "s.tsv.gz")
    head, _ = fit_head(encoder_only, [shard], train_positions=50, heldout_positions=10, epochs=1)
    path = tmp_path / "head.pt"
    save_head(head, path)
    other = tiny_bert(seed=1)
    other.model.bert.embeddings.word_embeddings = torch.nn.Embedding(10, other.hidden_size)
    with pytest.raises(Exception, match="vocabulary"):
        load_head(path, other)


@cuda_test
def test_a_head_fitted_on_cuda_lives_there_and_predicts_like_its_cpu_copy(tmp_path):
    """Fitted on the GPU encoder's bf16-autocast states: the head's parameters and its tied decoder are on the
    device, it learns as on the CPU, and its file loads onto a CPU teacher and a GPU teacher alike."""
    bert = tiny_bert(seed=3)
    # (the CPU stand-in in fp32: a CPU teacher's bf16 is its weights, and so its tied decoder's, cast)
    on_gpu = Teacher(copy.deepcopy(bert.model.bert), bert.tokenizer, name="tiny-encoder", device=DEVICE,
                     dtype=torch.bfloat16 if ON_GPU else None)
    on_cpu = Teacher(copy.deepcopy(bert.model.bert), bert.tokenizer, name="tiny-encoder", device="cpu")
    shard = write_shard(tmp_path / "s.tsv.gz", [[(True, t)] for t in TEXT * 3])
    head, report = fit_head(on_gpu, [shard], mode="unmasked", train_positions=600, heldout_positions=150,
                            select_prob=0.5, epochs=300, lr=3e-2, batch_positions=128, seed=0)
    assert all(p.device.type == DEVICE for p in head.parameters())
    assert head.embeddings.data_ptr() == on_gpu.input_embeddings().data_ptr()  # tied to the encoder's, on the device
    assert report["teacher_dtype"] == on_gpu.dtype_name and report["heldout_top1"] > report["unigram_top1"] + 0.3
    path = tmp_path / "head.pt"
    save_head(head, path)
    gpu_head, cpu_head = load_head(path, on_gpu), load_head(path, on_cpu)
    assert all(p.device.type == DEVICE for p in gpu_head.parameters())
    x = torch.randn(7, on_cpu.hidden_size)
    with exact_float32():
        torch.testing.assert_close(gpu_head(x.to(DEVICE)).cpu(), cpu_head(x), rtol=1e-4, atol=1e-4)

    # through the teachers: the GPU's bf16 top-k against the CPU's fp32 top-k of the same head
    on_gpu.fitted_head, on_cpu.fitted_head = gpu_head, cpu_head
    spec = FeatureSpec(layers=(), mlm_topk=3, mlm_mode="unmasked")
    part = Part(0, sentences=[t.split() for t in TEXT[:6]], records=list(range(6)), paragraphs=list(range(6)))
    ref = FeatureExtractor(on_cpu, spec, None).extract(part)
    got = FeatureExtractor(on_gpu, spec, None).extract(part)
    np.testing.assert_array_equal(got["mlm_piece_ids"], ref["mlm_piece_ids"])
    # the head predicts a piece from its own state: its top-1 is confident, so bf16 rarely flips it
    assert np.mean(got["mlm_topk_ids"][:, 0] == ref["mlm_topk_ids"][:, 0]) > 0.9
    np.testing.assert_allclose(got["mlm_topk_logits"][:, 0], ref["mlm_topk_logits"][:, 0], rtol=0.02, atol=0.05)


# ------------------------------------------------------------------ the head's quality: held-out text, unigram baseline


def test_heldout_split_keeps_whole_sentences_on_one_side():
    from staticvec.teacher.mlm_head import heldout_split

    sentence_of = np.repeat(np.arange(40), np.arange(40) % 5 + 1)  # 40 sentences of 1-5 positions, 120 in all
    train, held = heldout_split(sentence_of, 24, seed=3)
    assert sorted(np.concatenate([train, held]).tolist()) == list(range(len(sentence_of)))  # a partition
    assert not set(sentence_of[train]) & set(sentence_of[held])  # no sentence on both sides
    assert 24 <= len(held) < 24 + 5  # whole sentences until 24 positions are held out
    again_train, again_held = heldout_split(sentence_of, 24, seed=3)
    assert np.array_equal(held, again_held) and not np.array_equal(held, heldout_split(sentence_of, 24, seed=4)[1])
    # fewer positions than five times the request: at most a fifth held out, the training side never empty
    assert len(heldout_split(sentence_of, 100, seed=0)[1]) in range(24, 29)
    assert len(heldout_split(np.zeros(7, dtype=int), 3)[0]) == 7  # one sentence: it trains, nothing is held out


def test_unigram_baseline_by_hand():
    from staticvec.teacher.mlm_head import unigram_accuracy

    # training counts: 5 x3, 7 x2, 9 x1; held out: 5, 7, 9, 3
    got = unigram_accuracy([5, 7, 5, 9, 7, 5], [5, 7, 9, 3], ks=(1, 2, 3, 10))
    assert got == {"top1": 0.25, "top2": 0.5, "top3": 0.75, "top10": 0.75}  # 3 was never a training piece
    assert unigram_accuracy([2, 1, 1, 2], [1, 2], ks=(1,)) == {"top1": 0.5}  # a tie goes to the smaller id
    assert unigram_accuracy([4, 4, 8], [8, 8, 8, 4], ks=(1,))["top1"] == 0.25  # from the training counts, not held-out's


def test_topk_accuracy_by_hand():
    from staticvec.teacher.mlm_head import topk_accuracy

    logits = torch.tensor([[0.0, 3.0, 2.0, 1.0],   # ranks: 1, 2, 3, 0
                           [5.0, 0.0, 1.0, 2.0],   # ranks: 0, 3, 2, 1
                           [0.0, 1.0, 2.0, 3.0]])  # ranks: 3, 2, 1, 0
    head = lambda states: logits[states.long().view(-1)]  # noqa: E731 - a planted head: state i -> row i
    states, targets = torch.arange(3).float().view(3, 1), torch.tensor([1, 3, 1])
    assert topk_accuracy(head, states, targets, ks=(1, 2, 3), batch=2) == {"top1": 1 / 3, "top2": 2 / 3, "top3": 1.0}


def test_the_fitted_heads_record_scores_it_on_sentences_it_never_trained_on(encoder_only, tmp_path, monkeypatch):
    """The accuracy is taken on the held-out positions only: the targets scored are exactly those of the held-out
    sentences, and no held-out sentence gave a training position."""
    import staticvec.teacher.mlm_head as mlm

    seen = {}
    real_split, real_accuracy = mlm.heldout_split, mlm.topk_accuracy

    def split(sentence_of, n, seed):
        seen["sentence_of"] = sentence_of
        seen["split"] = real_split(sentence_of, n, seed)
        return seen["split"]

    def accuracy(head, states, targets, **kw):
        seen["scored"] = targets.clone()
        return real_accuracy(head, states, targets, **kw)

    monkeypatch.setattr(mlm, "heldout_split", split)
    monkeypatch.setattr(mlm, "topk_accuracy", accuracy)
    shard = write_shard(tmp_path / "s.tsv.gz", [[(True, t)] for t in TEXT * 2])
    _, report = fit_head(encoder_only, [shard], train_positions=200, heldout_positions=40, select_prob=0.5, epochs=2)
    train, held = seen["split"]
    assert report["heldout_positions"] == len(held) == len(seen["scored"]) and report["train_positions"] == len(train)
    assert not set(seen["sentence_of"][train]) & set(seen["sentence_of"][held])
    assert report["heldout_sentences"] == len(set(seen["sentence_of"][held]))
    assert 0.0 <= report["unigram_top1"] <= report["unigram_top10"] <= 1.0


def test_head_quality_caption():
    from staticvec.teacher.mlm_head import head_quality, head_quality_text

    meta = {"teacher": "all-MiniLM-L6-v2", "mode": "unmasked", "heldout_top1": 0.956, "heldout_top10": 0.998,
            "unigram_top1": 0.056, "unigram_top10": 0.276, "heldout_positions": 10000, "heldout_sentences": 812,
            "kind": "fitted"}
    text = head_quality_text(head_quality(meta))
    assert text.startswith("SemGloVe_md's masked-LM predictions come from a head fitted on the corpus (all-MiniLM-L6-v2")
    assert "top-1 95.6 %, top-10 99.8 % on 10,000 held-out positions of 812 sentences" in text
    assert "against 5.6 % / 27.6 % for the unigram baseline" in text
    assert head_quality({"kind": "native"}) is None and head_quality_text(None) is None


def test_every_table_reading_a_fitted_head_row_gets_its_quality_in_the_caption(tmp_path):
    """The plan gives each table that reads SemGloVe_md/_mr/_md5 (MLM variants on MiniLM, which ships no head)
    the head's record as ``<row>@head``; the table writer's caption hook turns it into one sentence naming the rows;
    a teacher with its own head (paper.yaml: BERT-large) gives none."""
    import json

    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow
    from staticvec.report.tables import fitted_head_caption, fitted_heads

    plan = Workflow(load_config(["config/config.yaml"]), ".")
    head = plan.fitted_head_record("semglove_md")
    assert head == f"{plan.results_dir}/teacher/minilm/mlm_head.json"
    assert plan.fitted_head_record("semglove_sd") is None and plan.fitted_head_record("glove") is None
    for table in plan.tables:
        ids = [rid for rid, _ in plan.table_results(table)]
        reads = {rid.split("@")[0] for rid in ids if rid.split("@")[0].split("~")[0] in ("semglove_md", "semglove_mr",
                                                                                          "semglove_md5")}
        assert {rid[:-5] for rid in ids if rid.endswith("@head")} == reads, table
        assert all(p == head for rid, p in plan.table_results(table) if rid.endswith("@head"))
    paper = Workflow(load_config(["config/config.yaml", "config/paper.yaml"]), ".")
    assert paper.fitted_head_record("semglove_md") is None

    record = {"teacher": "minilm", "mode": "unmasked", "heldout_top1": 0.9561, "heldout_top10": 0.998,
              "unigram_top1": 0.0564, "unigram_top10": 0.2761, "heldout_positions": 10000, "heldout_sentences": 700}
    path = tmp_path / "mlm_head.json"
    path.write_text(json.dumps(record))
    heads = fitted_heads({"semglove_md": ["r1.json"], "semglove_md@head": [str(path)], "semglove_mr@head": str(path)})
    assert set(heads) == {"semglove_md", "semglove_mr"}
    text = fitted_head_caption(heads)
    assert text.count("masked-LM predictions") == 1  # one head, one sentence, both rows named
    assert text.startswith("semglove_md, semglove_mr's masked-LM predictions come from a head fitted on the corpus")
    assert "top-1 95.6 %, top-10 99.8 %" in text and "5.6 % / 27.6 % for the unigram baseline" in text
    assert fitted_head_caption({}) is None


def test_every_verdict_reading_a_fitted_head_row_says_how_good_the_head_is(tmp_path):
    """The plan passes ``head/<row>=mlm_head.json`` to the claims for every claim that reads an MLM variant on
    MiniLM; the claims command reads it and the verdict's cell carries the head's quality; a claim without such a
    row gets nothing."""
    import json

    import yaml

    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow
    from staticvec.report.claims import Results, evaluate_claims, parse_results, to_markdown
    from staticvec.sheets.claims import claim_refs, expand_ref, load_claims_spec

    plan = Workflow(load_config(["config/config.yaml"]), ".")
    for cid in plan.selected_claims():
        claim = plan.claims_spec["claims"][cid]
        rows = {e for ref in claim_refs(claim) for e in expand_ref(ref, plan.sheet.ids())}
        heads = {key.split("/")[1] for key, _ in plan.claim_results(cid) if key.startswith("head/")}
        assert heads == {r for r in rows if plan.fitted_head_record(r)}, cid
    assert any(plan.fitted_head_record(r) for cid in plan.selected_claims()
               for r in (e for ref in claim_refs(plan.claims_spec["claims"][cid]) for e in expand_ref(ref, plan.sheet.ids())))

    head = tmp_path / "mlm_head.json"
    head.write_text(json.dumps({"teacher": "minilm", "mode": "unmasked", "heldout_top1": 0.9, "heldout_top10": 0.99,
                                "unigram_top1": 0.05, "unigram_top10": 0.25, "heldout_positions": 1000}))
    result = tmp_path / "r.json"
    result.write_text(json.dumps({"results": {"ws353": {"spearman": 0.5}}}))
    *_, heads = parse_results([f"head/md={head}"])
    assert heads["md"]["heldout_top1"] == 0.9

    def intrinsic(values):
        return {s: {"results": {"ws353": {"spearman": v, "found": 10, "total": 10}}} for s, v in zip((1, 2, 3), values)}

    sheet = tmp_path / "claims.yaml"
    claims = {"x_a": {"paper": "semglove", "where": "Table 1", "at": "l. 1", "sentence": "q", "statement": "s",
                    "protocol": "web", "metric": "ws353", "order": ["md", "glove"]},
              "x_b": {"paper": "semglove", "where": "Table 1", "at": "l. 2", "sentence": "q", "statement": "s",
                    "protocol": "web", "metric": "ws353", "order": ["sd", "glove"]}}
    sheet.write_text(yaml.safe_dump({"defaults": {}, "claims": claims}))
    results = Results({("web", "md"): intrinsic([0.5, 0.52, 0.51]), ("web", "sd"): intrinsic([0.4, 0.41, 0.42]),
                       ("web", "glove"): intrinsic([0.3, 0.31, 0.33])}, random=["md", "sd", "glove"], heads=heads)
    a, b = evaluate_claims(load_claims_spec(sheet), results)
    assert len(a["caveats"]) == 1 and "md's masked-LM predictions come from a head fitted" in a["caveats"][0]
    assert "top-1 90.0 %, top-10 99.0 % on 1,000 held-out positions" in to_markdown([a], "c")
    assert b["caveats"] == []


def test_the_table_writer_puts_the_heads_quality_in_the_caption(tmp_path):
    from pathlib import Path

    from staticvec.report.tables import table_from_files

    root = Path(__file__).resolve().parents[1]
    result = {"results": {"ws353": {"score": 0.5, "found": 1, "total": 1}}}
    head = {"teacher": "minilm", "mode": "unmasked", "heldout_top1": 0.95, "heldout_top10": 0.99,
            "unigram_top1": 0.05, "unigram_top10": 0.25, "heldout_positions": 500}
    table_from_files(root / "config/tables.yaml", "semglove_table1", {"semglove_md": [result], "semglove_md@head": [head]},
                     tmp_path / "t.csv", tmp_path / "t.md", root=root)
    caption = (tmp_path / "t.md").read_text().splitlines()[0]
    assert "semglove_md's masked-LM predictions come from a head fitted on the corpus" in caption
    assert "top-1 95.0 %, top-10 99.0 % on 500 held-out positions, against 5.0 % / 25.0 %" in caption
    assert "@head" not in (tmp_path / "t.csv").read_text()  # the record is no row of the table
    table_from_files(root / "config/tables.yaml", "semglove_table1", {"semglove_md": [result]}, tmp_path / "u.csv",
                     tmp_path / "u.md", root=root)
    assert "masked-LM" not in (tmp_path / "u.md").read_text()
