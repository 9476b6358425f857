"""Fitting an MLM head on a frozen encoder without one."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

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
