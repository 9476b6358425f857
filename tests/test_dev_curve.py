"""Wang et al. Figure 5's development curve: the output table scored during training. The scoring
does not change the run (same vectors), the points follow the run, and the last point is the final
embedding's score under the evaluation's own code."""

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from teacher_fixtures import small_shard, small_vocab, tiny_bert  # noqa: E402

from staticvec.cli import main  # noqa: E402
from staticvec.embeddings import Embeddings  # noqa: E402
from staticvec.evaluate.datasets import parse_similarity  # noqa: E402
from staticvec.evaluate.lookup import VectorLookup  # noqa: E402
from staticvec.evaluate.similarity import evaluate_similarity  # noqa: E402
from staticvec.teacher.features import FeatureSpec  # noqa: E402
from staticvec.teacher.store import write_shard_features  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dev")
    bert = tiny_bert(seed=2)
    vocab_path = tmp / "vocab.tsv"
    small_vocab().save(vocab_path)
    features = []
    for k in range(2):
        shard = small_shard(tmp / f"{k:05d}.tsv.gz")
        out = tmp / "features" / f"{k:05d}"
        write_shard_features(bert, shard, out, FeatureSpec(layers=(-1,), vector_dtype="float32"), vocab=small_vocab(),
                             vocab_path=vocab_path, part_sentences=4, progress=False)
        features.append(str(out))
    rng = np.random.default_rng(0)
    words = small_vocab().words
    dev = tmp / "dev.txt"
    dev.write_text("".join(f"{words[a]}\t{words[b]}\t{rng.uniform(0, 10):.2f}\n"
                           for a, b in rng.integers(0, len(words), (40, 2)) if a != b) + "zzz\tthe\t5.0\n")
    return {"tmp": tmp, "features": features, "vocab": str(vocab_path), "dev": str(dev)}


def train(setup, out, *extra):
    assert main(["train", "bert-sg", "--features", *setup["features"], "--vocab", setup["vocab"], "--min-count", "1",
                 "--dim", "6", "--window", "2", "--epochs", "2", "--no-progress", "--device", "cpu", "--threads", "1",
                 "--out", str(out), *map(str, extra)]) == 0
    return Embeddings.load(out), json.loads(out.with_name(out.name + ".json").read_text())


def test_dev_curve_follows_the_run_and_ends_at_the_final_score(setup, tmp_path):
    plain, _ = train(setup, tmp_path / "plain.bin")
    emb, record = train(setup, tmp_path / "dev.bin", "--dev-set", setup["dev"], "--dev-points", 5, "--dev-oov", "mean")
    np.testing.assert_array_equal(emb.vectors, plain.vectors)  # scoring does not touch the run
    curve = record["dev_curve"]
    points = curve["points"]
    words = [p["words"] for p in points]
    assert words[0] == 0 and words == sorted(set(words)) and words[-1] == record["train"]["words"]
    assert curve["total_words"] == record["train"]["words"] and not curve["resumed"]
    assert 5 <= len(points) <= 8 and [p["epoch"] for p in points][-1] == 1
    assert points[0]["score"] is None  # V' starts at zero: every cosine is 0, no ranking
    final = evaluate_similarity(VectorLookup(emb, oov="mean"), parse_similarity(Path(setup["dev"])))
    assert points[-1]["score"] == pytest.approx(final["score"], abs=1e-6)
    assert points[-1]["found"] == final["found"] == final["total"] - 1  # the pair with zzz
