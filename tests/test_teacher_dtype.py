"""The teacher's compute dtype: bf16 where the CPU computes it natively (detected from its flags, not its
vendor), fp32 elsewhere; the bf16 path gives the fp32 path's shapes, ids and alignment, and its values
within bf16's precision."""

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from cuda_fixtures import DEVICE, ON_GPU, cuda_test  # noqa: E402
from teacher_fixtures import TEXT, small_shard, small_vocab, tiny_bert, tiny_gpt2  # noqa: E402

from staticvec.errors import StaticvecError  # noqa: E402
from staticvec.teacher.features import FeatureExtractor, FeatureSpec, Part, iter_parts  # noqa: E402
from staticvec.teacher.load import Teacher, cpu_flags, dtype_policy, resolve_dtype  # noqa: E402

torch.set_num_threads(1)


@pytest.mark.parametrize("flags, expected", [
    ({"avx512f", "avx512_bf16", "avx512_vnni"}, "bfloat16"),  # Zen 4/5, Cooper Lake
    ({"avx512f", "amx_bf16", "amx_tile"}, "bfloat16"),        # Sapphire Rapids
    ({"avx2", "fma", "avx512f"}, "float32"),                 # AVX-512 without bf16: emulated, slower
    (set(), "float32"),
])
def test_auto_picks_bf16_only_on_cpus_that_compute_it(flags, expected):
    name, why = resolve_dtype("cpu", "auto", flags, speedup=2.9)  # a fast bf16 matmul (Zen 5)
    assert name == expected and why


def test_auto_keeps_fp32_where_native_bf16_measures_slower():
    # an Intel Xeon with avx512_bf16 and no AMX measured 0.7x fp32 (benchmarks/README.md)
    name, why = resolve_dtype("cpu", "auto", {"avx512f", "avx512_bf16"}, speedup=0.7)
    assert name == "float32" and "0.70x" in why


def test_bf16_speedup_is_measured_once_per_machine(tmp_path, monkeypatch):
    from staticvec import device

    calls = []
    monkeypatch.setattr(device, "bf16_matmul_speedup", lambda: calls.append(1) or 1.8)
    assert device.measured_bf16_speedup(tmp_path) == 1.8 and device.measured_bf16_speedup(tmp_path) == 1.8
    assert calls == [1]  # the second job reads the cache: every shard of a run takes the same dtype
    assert len(list((tmp_path / "staticvec").glob("bf16-speedup-*.json"))) == 1


def test_bf16_matmul_speedup_is_a_positive_ratio():
    from staticvec.teacher.load import bf16_matmul_speedup

    assert bf16_matmul_speedup(threads=1, repeats=1) > 0


def test_forced_dtypes_and_errors():
    assert resolve_dtype("cpu", "float32", {"avx512_bf16"})[0] == "float32"
    assert resolve_dtype("cpu", "bfloat16", set())[0] == "bfloat16"
    with pytest.raises(StaticvecError, match="float16 is for CUDA only"):
        resolve_dtype("cpu", "float16", set())
    with pytest.raises(StaticvecError, match="expected one of"):
        resolve_dtype("cpu", "int4", set())


def test_cpu_flags_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx512_bf16 avx512_vnni\n\n"
                    "processor\t: 1\nflags\t\t: fpu\n")
    assert cpu_flags(info) == {"fpu", "sse2", "avx512_bf16", "avx512_vnni"}
    assert cpu_flags(tmp_path / "absent") is None


def test_provenance_records_the_policy(repo_root):
    from staticvec.config import load_config

    config = load_config([repo_root / "config/config.yaml"])
    policy = dtype_policy(config)
    assert policy["requested"] == "auto" and policy["dtype"] in ("bfloat16", "float32") and policy["reason"]
    config["teacher"]["dtype"] = "float32"
    assert dtype_policy(config)["dtype"] == "float32"


def _bf16_twin(teacher):
    model = copy.deepcopy(teacher.model)
    return Teacher(model, teacher.tokenizer, name="tiny-bert-bf16", device="cpu", dtype=torch.bfloat16, attention=True)


def _part(sentences):
    n = len(sentences)
    return Part(0, sentences=[s.split() for s in sentences], records=list(range(n)), paragraphs=list(range(n)))


def test_bf16_features_have_fp32_shapes_ids_alignment_and_close_values():
    fp32 = tiny_bert(layers=2)
    bf16 = _bf16_twin(fp32)
    assert bf16.describe()["weights"] == "bfloat16" and next(bf16.model.parameters()).dtype == torch.bfloat16
    assert fp32.describe()["dtype"] == "float32"
    spec = FeatureSpec(layers=(-1,), sentence_vectors=True, attention_window=3, mlm_topk=5, mlm_mode="unmasked",
                       vector_dtype="float32")
    sentences = TEXT[:6] + ["unbelievable , xyz !"]
    a = FeatureExtractor(fp32, spec, small_vocab(), batch_tokens=40).extract(_part(sentences))
    b = FeatureExtractor(bf16, spec, small_vocab(), batch_tokens=40).extract(_part(sentences))
    assert set(a) == set(b)
    for key in a:
        assert a[key].shape == b[key].shape, key
        if a[key].dtype.kind in "iub":  # ids, offsets, alignment: identical
            if key != "mlm_topk_ids":
                np.testing.assert_array_equal(a[key], b[key], err_msg=key)
        else:
            assert b[key].dtype == a[key].dtype, key  # stored in the same dtype whatever the compute dtype
    va, vb = a["word_vectors.2"], b["word_vectors.2"]  # the last of 2 layers (0 = embeddings)
    cos = (va * vb).sum(1) / np.linalg.norm(va, axis=1) / np.linalg.norm(vb, axis=1)
    assert cos.min() > 0.99  # bf16 keeps 8 mantissa bits: per-element error ~0.4 %
    sa, sb = a["sentence_vectors"], b["sentence_vectors"]
    assert ((sa * sb).sum(1) / np.linalg.norm(sa, axis=1) / np.linalg.norm(sb, axis=1)).min() > 0.99
    # the attention window (fp32 sums over layers and heads of bf16 probabilities)
    np.testing.assert_allclose(a["attention_window"], b["attention_window"], atol=0.02)
    # MLM top-5: the candidates are re-scored in fp32, so most agree even on a random model
    overlap = np.mean([len(set(x) & set(y)) / 5 for x, y in zip(a["mlm_topk_ids"], b["mlm_topk_ids"])])
    assert overlap > 0.8
    np.testing.assert_allclose(np.sort(a["mlm_topk_logits"], 1)[:, -1], np.sort(b["mlm_topk_logits"], 1)[:, -1],
                               rtol=0.05, atol=0.05)


# ---------------------------------------------------------------- the CUDA path: autocast on a GPU against fp32 on the CPU
#
# On CUDA the teacher keeps fp32 weights and runs under bf16 (or fp16) autocast; the features must be the CPU fp32
# pass's up to that precision. Bounds, against what the bf16 paths measure on these tiny random models: 1 - cosine of
# a word or sentence vector <= 4e-5 with bf16 weights on a CPU, < 1e-6 under (CPU) autocast; the attention window moves
# by <= 0.0037 (GPT-2, whose sums reach 2.0; BERT's 0.45: <= 0.0009); MLM top-5 sets agree on >= 98 % of their ids and
# the best logit moves by <= 0.0016 (logits of ~0.3). The bounds below are 5-25x those, and far from what a device or
# mapping bug gives (a word against its neighbour: cosine 0.5-0.8; another top-k: overlap ~0).

def _on(teacher, device, dtype, attention):
    """``teacher``'s weights as a teacher on ``device`` computing in ``dtype``, with eager attention where
    ``attention`` (the attention window's pass) and SDPA elsewhere, as load_teacher gives them."""
    model = copy.deepcopy(teacher.model)
    if not attention:
        model.set_attn_implementation("sdpa")
    return Teacher(model, teacher.tokenizer, name=f"{teacher.name}-{device}", device=device, dtype=dtype,
                   attention=attention)


def _min_cosine(a, b):
    return ((a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)).min()


def assert_features_agree(ref, got):
    """``got`` (reduced precision) against ``ref`` (fp32): the same arrays, ids and alignment; values within the bounds above."""
    assert set(ref) == set(got)
    has_vector = ref["word_pieces"] > 0  # a word without pieces has a zero vector on both
    for key in ref:
        a, b = ref[key], got[key]
        assert a.shape == b.shape and a.dtype == b.dtype, key  # stored alike whatever the compute dtype
        if key.startswith("word_vectors"):
            assert _min_cosine(a[has_vector], b[has_vector]) > 0.999, key
        elif key == "sentence_vectors":
            assert _min_cosine(a, b) > 0.999, key
        elif key == "attention_window":
            np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
            np.testing.assert_allclose(b, a, rtol=0.02, atol=0.01)
        elif key == "mlm_topk_logits":  # the best candidate's logit, re-scored in fp32
            np.testing.assert_allclose(b.max(1), a.max(1), rtol=0.02, atol=0.01)
        elif key == "mlm_topk_ids":
            overlap = np.mean([len(set(x) & set(y)) / a.shape[1] for x, y in zip(a, b)])
            assert overlap > 0.9, overlap
        else:  # ids, offsets, piece counts, the MLM pieces and their words: identical
            np.testing.assert_array_equal(a, b, err_msg=key)


CUDA_PASSES = {
    # the students' pass (SDPA): last layer, sentence vectors and ASE sums
    "students": (tiny_bert, FeatureSpec(layers=(-1,), sentence_vectors=True, ase=True, vector_dtype="float32")),
    # SemGloVe's pass on the paper's teacher (eager attention): attention window and masked whole-word MLM top-k
    "semglove-masked": (tiny_bert, FeatureSpec(layers=(), attention_window=3, mlm_topk=5, mlm_mode="masked")),
    # the default config's shared pass: every layer, attention, unmasked MLM top-k
    "shared-unmasked": (tiny_bert, FeatureSpec(layers=(0, 1, 2), sentence_vectors=True, attention_window=3, mlm_topk=5,
                                               mlm_mode="unmasked", vector_dtype="float32")),
    # a causal teacher (byte-level BPE), with and without eager attention
    "causal": (tiny_gpt2, FeatureSpec(layers=(-1,), sentence_vectors=True, vector_dtype="float32")),
    "causal-attention": (tiny_gpt2, FeatureSpec(layers=(-1,), attention_window=3, vector_dtype="float32")),
}


@cuda_test
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(CUDA_PASSES))
def test_features_on_cuda_under_autocast_match_fp32_on_the_cpu(name, dtype):
    if dtype == "float16" and not ON_GPU:
        pytest.skip("float16 is for CUDA only")
    make, spec = CUDA_PASSES[name]
    fp32 = make(seed=1)
    attention = spec.attention_window > 0
    gpu = _on(fp32, DEVICE, getattr(torch, dtype), attention)
    if ON_GPU:  # fp32 weights under autocast, as load_teacher sets a CUDA teacher up
        assert gpu.describe()["weights"] == "float32" and gpu.describe()["autocast"] == dtype
        assert next(gpu.model.parameters()).is_cuda
    sentences = TEXT[:6] + ["unbelievable , xyz !"]
    ref_extractor = FeatureExtractor(_on(fp32, "cpu", None, attention), spec, small_vocab(), batch_tokens=40)
    gpu_extractor = FeatureExtractor(gpu, spec, small_vocab(), batch_tokens=40)
    ref, got = ref_extractor.extract(_part(sentences)), gpu_extractor.extract(_part(sentences))
    assert_features_agree(ref, got)
    if spec.ase:  # the per-layer occurrence sums accumulate on the device, in fp32
        a, b = ref_extractor.ase_state(), gpu_extractor.ase_state()
        np.testing.assert_array_equal(a["word_ids"], b["word_ids"])
        np.testing.assert_array_equal(a["counts"], b["counts"])
        for layer in range(len(a["sums"])):
            assert _min_cosine(a["sums"][layer], b["sums"][layer]) > 0.999


@cuda_test
def test_paragraph_context_on_cuda_matches_the_cpu(tmp_path):
    fp32 = tiny_bert(seed=2)
    spec = FeatureSpec(context="paragraph", layers=(-1,), sentence_vectors=True, vector_dtype="float32")
    part = next(iter_parts(small_shard(tmp_path / "s.tsv.gz"), "paragraph", 100))
    ref = FeatureExtractor(_on(fp32, "cpu", None, False), spec, small_vocab(), batch_tokens=60).extract(part)
    got = FeatureExtractor(_on(fp32, DEVICE, torch.bfloat16, False), spec, small_vocab(), batch_tokens=60).extract(part)
    assert_features_agree(ref, got)
