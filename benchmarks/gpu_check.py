"""The GPU paths of ``config/paper.yaml`` measured at paper shapes (issue 39): one JSON and one Markdown table.

    bash benchmarks/gpu_check.sh                 # on the GPU machine: wheels, the CUDA tests, then this script
    python benchmarks/gpu_check.py --smoke       # tiny shapes on the CPU: every line in seconds (tests/test_gpu_check.py)

Every measurement runs the project's own code path, on synthetic inputs of the paper's shapes (no download, no
corpus on the GPU machine), warmed up first, then repeated until its time budget is spent (at least once), with
``torch.cuda.synchronize`` around the timing; the peak GPU memory of each (``torch.cuda.max_memory_allocated``,
reset before it) is recorded beside it.

Sections, in order (each with measurement budgets and a planned total, 252 s in all on an H100; a section is
stopped by an alarm after twice its plan + 15 s, one that would not fit the time left of ``--deadline`` (260 s) is
skipped, and the JSON and the Markdown are rewritten after every section, so a stopped run still returns figures):

- ``env``: GPU, driver, CUDA, cuDNN, torch, transformers, CPU.
- ``teacher_base`` (bert-base-uncased's published shape, random weights, in the dtype ``teacher.dtype: auto``
  picks: bf16 autocast on a GPU): the bare forward (SDPA) of a part's length-sorted batches, then the paper
  config's passes on that teacher as the planning layer plans them (``FeatureExtractor.extract_parts``, part after
  part, as the job runs them): ``sentence`` (the students': last layer, sentence vectors), ``paragraph``
  (X2Static_para's) and ``ase`` (every layer's occurrence sums, no [CLS]/[SEP]).
- ``featurepass``: the students' ``sentence`` pass on that shape as a whole job (``write_shard_features``: shard
  read, tokenised, computed, part files written) on a synthetic shard, serial (host and device in turn) and
  pipelined (the next part prepared and the last one written in background threads while the device computes),
  jobs interleaved, beside the bare forward of the same batches; with ``--old-code DIR``, an older revision's job
  too. Alone: ``python benchmarks/gpu_check.py --only featurepass --seconds 15``.
- ``teacher_large`` (bert-large-uncased-whole-word-masking's shape): the bare forward, then SemGloVe's ``semglove``
  pass (attention window with eager attention, masked whole-word MLM top-11 through the shipped head's shape).
- ``glove_cuda``: GloVe's torch engine on the device (``staticvec.train.glove._run_torch``, ``cuda_engine: torch``)
  over a synthetic shuffled store (400k words, 50M entries), 300-d, the paper config's batch.
- ``glove_kernel``: GloVe's fused CUDA kernel (``staticvec.train.glove_cuda.run_kernel``, ``cuda_engine: kernel``, what
  ``train_glove`` runs on CUDA) over the same store, beside its memory-bandwidth limit: the device's measured copy
  bandwidth over the bytes an update moves (32·d + 44). The smoke run: numba's CUDA simulator on 2,000 entries.
- ``glove_cpu``: GloVe's numba engine on the host's CPU over the same store, with the paper config's threads (the
  CPU-node side of the comparison).
- ``students``: BERT+Skip-gram, Context-to-Vec and X2Static with the paper config's parameters, on the CUDA path
  (the autograd engine), over synthetic float16 blocks of 1,024 sentences of the teacher's width (768) and a
  750k-word vocabulary.
- ``tagger``: the BiLSTM-CRF with the paper config's NCRF++ settings (character CNN, SGD, batches of 10), one
  training epoch sized to the budget and Viterbi decoding, on a synthetic POS-shaped task with 300-d vectors.
- ``classifier``: X2Static's sentence CNN (100 filters, batches of 50): training epochs and scoring.

The synthetic text has the default corpus's shape: words per sentence (10-40) and WordPieces per word as measured
on its training sentences (see WORDS_PER_SENTENCE), over a 30,522-piece vocabulary (bert-base-uncased's size)
built so that each word splits into exactly the pieces drawn for it.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))
sys.path.insert(0, str(ROOT / "benchmarks"))

# ---------------------------------------------------------------- shapes

# the published configurations of the paper config's BERT teachers (config/paper.yaml teacher.models)
TEACHER_SHAPES = {
    "bert-base-uncased": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
    "bert-large-uncased-whole-word-masking": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                                                  intermediate_size=4096),
}
SMOKE_TEACHER = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
BERT_VOCAB = 30522  # bert-base-uncased's and bert-large-uncased-whole-word-masking's WordPiece vocabulary

# Measured on the 2,544 training sentences of two shards of the default corpus (spaCy tokens, 10-40 a sentence)
# with bert-base-uncased's WordPiece vocabulary (the MiniLM teacher's tokenizer), 2026-11-27: sentences with
# 10, 11, ..., 40 words (counts; mean 23.6 words, 28.4 pieces with [CLS]/[SEP]) and the share of words of
# 1, 2, 3, 4, 5+ pieces (mean 1.11).
WORDS_PER_SENTENCE = [58, 61, 66, 76, 81, 91, 101, 122, 119, 107, 119, 112, 103, 106, 111, 102, 100, 100, 90, 81, 89,
                      68, 77, 70, 67, 50, 45, 47, 58, 34, 33]
PIECES_PER_WORD = {1: 0.9311, 2: 0.0341, 3: 0.0241, 4: 0.0078, 5: 0.0029}
# paragraphs of 3, 4, ..., 15 sentences in the same shards (counts; the corpus keeps paragraphs of >= 3 sentences)
SENTENCES_PER_PARAGRAPH = [172, 163, 125, 85, 41, 13, 11, 6, 2, 3, 1, 2, 1]

# dense bf16 peak of the cards this may run on (NVIDIA's data sheets), for the share of peak
PEAK_BF16_TFLOPS = {"H100 PCIe": 756.0, "H100": 989.4, "H200": 989.4, "A100": 312.0}


# ---------------------------------------------------------------- the record


class SectionTimeout(Exception):
    pass


class Report:
    """The figures so far, rewritten (JSON and Markdown, atomically) after every section."""

    def __init__(self, out: Path, meta: dict):
        self.out = out
        self.data = {"meta": meta, "sections": []}

    def section(self, name: str, budget: float) -> dict:
        entry = {"name": name, "status": "running", "budget_s": budget, "seconds": None, "figures": []}
        self.data["sections"].append(entry)
        return entry

    def write(self) -> None:
        from staticvec.files import atomic_open, write_json

        write_json(self.out / "gpu_check.json", self.data)
        with atomic_open(self.out / "gpu_check.md") as fh:
            fh.write(markdown(self.data))


def markdown(data: dict) -> str:
    meta = data["meta"]
    env = meta.get("env", {})
    lines = [f"# GPU check ({meta['mode']})", "",
             f"`{meta['command']}` on {env.get('device', '?')}, driver {env.get('driver', '?')}, "
             f"CUDA {env.get('cuda', '?')}, cuDNN {env.get('cudnn', '?')}, torch {env.get('torch', '?')}, "
             f"transformers {env.get('transformers', '?')}, {env.get('cpu', '?')} ({env.get('cpu_count', '?')} "
             f"CPUs); {meta['started']}.", "",
             "| section | measurement | value | unit | shape | peak GPU memory, GiB | reps | s | more |",
             "| --- | --- | ---: | --- | --- | ---: | ---: | ---: | --- |"]
    for section in data["sections"]:
        if not section["figures"]:
            lines.append(f"| {section['name']} | ({section['status']}) | | | | | | | |")
        for f in section["figures"]:
            memory = "" if f.get("peak_gpu_memory_gib") is None else f"{f['peak_gpu_memory_gib']:.2f}"
            more = "; ".join(f"{k} {_fmt(v)}" for k, v in f.items() if k not in FIGURE_KEYS and v is not None)
            lines.append(f"| {section['name']} | {f['name']} | {_fmt(f['value'])} | {f['unit']} | {f.get('shape', '')} "
                         f"| {memory} | {f.get('reps', '')} | {_fmt(f.get('seconds', ''))} | {more} |")
    stopped = [s for s in data["sections"] if s["status"] not in ("ok", "running")]
    if stopped:
        lines += ["", "Not complete: " + "; ".join(f"{s['name']}: {s['status']}" + (f" ({s['error'].splitlines()[-1]})"
                                                                                    if s.get("error") else "")
                                                  for s in stopped) + "."]
    return "\n".join(lines) + "\n"


def _fmt(x) -> str:
    if isinstance(x, float):
        return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"
    return f"{x:,}" if isinstance(x, int) else str(x)


# ---------------------------------------------------------------- timing


class Clock:
    """Device synchronisation and peak-memory bookkeeping of one device."""

    def __init__(self, device: str):
        import torch

        self.torch = torch
        self.cuda = device.startswith("cuda")

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()

    def reset_peak(self) -> None:
        if self.cuda:
            self.sync()
            self.torch.cuda.reset_peak_memory_stats()

    def peak_gib(self) -> float | None:
        return round(self.torch.cuda.max_memory_allocated() / 2**30, 3) if self.cuda else None

    def repeat(self, work, budget: float, warmup: bool = True, max_reps: int = 10**6) -> tuple[int, float, float | None]:
        """``work()`` once to warm up, then again until ``budget`` seconds have passed (at least once):
        (repetitions, seconds, peak GPU memory in GiB of the timed repetitions)."""
        if warmup:
            work()
            self.sync()
        self.reset_peak()
        reps, started = 0, time.perf_counter()
        while reps < 1 or (time.perf_counter() - started < budget and reps < max_reps):
            work()
            self.sync()
            reps += 1
        return reps, time.perf_counter() - started, self.peak_gib()


FIGURE_KEYS = ("name", "value", "unit", "shape", "reps", "seconds", "peak_gpu_memory_gib")


def figure(name: str, value: float, unit: str, shape: str, reps: int | None = None, seconds: float | None = None,
           peak: float | None = None, **extra) -> dict:
    return {"name": name, "value": round(float(value), 3), "unit": unit, "shape": shape, "reps": reps,
            "seconds": None if seconds is None else round(seconds, 3), "peak_gpu_memory_gib": peak, **extra}


def free_memory() -> None:
    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- synthetic text


def wordpiece_vocabulary(rng, size: int = BERT_VOCAB, stems: int = 26000) -> tuple[list[str], list[str], list[str]]:
    """A WordPiece vocabulary of ``size`` entries: specials, whole words over the letters a-m ("stems"), and
    three-letter continuation pieces over n-z ("##xyz"), padded with [unusedN] as BERT's. A word written as a stem
    followed by k - 1 continuations tokenizes into exactly those k pieces: no whole word holds a letter n-z, so the
    longest match of the first piece is the stem, and every continuation piece has three letters."""
    letters_stem, letters_cont = np.array(list("abcdefghijklm")), np.array(list("nopqrstuvwxyz"))
    words: set[str] = set()
    while len(words) < stems:
        length = int(rng.integers(3, 9))
        words.add("".join(rng.choice(letters_stem, length)))
    stem_list = sorted(words)
    rng.shuffle(stem_list)  # rank order for the Zipf draws
    continuations = ["##" + a + b + c for a in letters_cont for b in letters_cont for c in letters_cont]
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = specials + stem_list + continuations
    vocab += [f"[unused{i}]" for i in range(size - len(vocab))]
    return vocab[:size], stem_list, continuations


def wordpiece_tokenizer(vocab: list[str], max_length: int = 512):
    """A fast BERT tokenizer (lower-casing normaliser, BERT pre-tokenizer, [CLS] … [SEP]) over ``vocab``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    index = {t: i for i, t in enumerate(vocab)}
    tok = Tokenizer(models.WordPiece(index, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True, clean_text=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", index["[CLS]"]), ("[SEP]", index["[SEP]"])])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]", model_max_length=max_length)


class SyntheticText:
    """Sentences of the default corpus's shape over :func:`wordpiece_vocabulary`, and its tokenizer."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.vocab, self.stems, self.continuations = wordpiece_vocabulary(self.rng)
        self.tokenizer = wordpiece_tokenizer(self.vocab)
        ranks = np.arange(1, len(self.stems) + 1)
        self.stem_p = 1.0 / (ranks + 2.7)  # Zipf-Mandelbrot word frequencies
        self.stem_p /= self.stem_p.sum()
        self.lengths = np.arange(10, 10 + len(WORDS_PER_SENTENCE))
        self.length_p = np.asarray(WORDS_PER_SENTENCE, float) / sum(WORDS_PER_SENTENCE)
        self.pieces = np.array(list(PIECES_PER_WORD))
        self.pieces_p = np.array(list(PIECES_PER_WORD.values()))
        self.pieces_p /= self.pieces_p.sum()

    def sentences(self, n: int) -> list[list[str]]:
        rng = self.rng
        lengths = rng.choice(self.lengths, n, p=self.length_p)
        total = int(lengths.sum())
        stems = rng.choice(len(self.stems), total, p=self.stem_p)
        pieces = rng.choice(self.pieces, total, p=self.pieces_p)
        extra = rng.integers(0, len(self.continuations), (total, int(self.pieces.max()) - 1))
        words = [self.stems[s] + "".join(self.continuations[c][2:] for c in extra[w, :k - 1])
                 for w, (s, k) in enumerate(zip(stems, pieces))]
        bounds = np.concatenate([[0], np.cumsum(lengths)])
        return [words[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def parts_of(sentences: list[list[str]], part_sentences: int, rng) -> list:
    """The feature pass's parts (``teacher.features.Part``) of in-memory sentences, in paragraphs of
    SENTENCES_PER_PARAGRAPH sentences (every one a training sentence); a part ends at the first paragraph end past
    ``part_sentences`` sentences, as ``iter_parts`` cuts a shard."""
    from staticvec.teacher.features import Part

    sizes = np.arange(3, 3 + len(SENTENCES_PER_PARAGRAPH))
    size_p = np.asarray(SENTENCES_PER_PARAGRAPH, float) / sum(SENTENCES_PER_PARAGRAPH)
    parts, part, start = [], Part(0), 0
    while start < len(sentences):
        paragraph = sentences[start:start + int(rng.choice(sizes, p=size_p))]
        first = len(part.sentences)
        part.context.append((paragraph, list(range(first, first + len(paragraph)))))
        part.sentences += paragraph
        part.records += list(range(start, start + len(paragraph)))
        part.paragraphs += [len(part.context) - 1] * len(paragraph)
        start += len(paragraph)
        if len(part.sentences) >= part_sentences or start >= len(sentences):
            parts.append(part)
            part = Part(len(parts))
    return parts


# ---------------------------------------------------------------- the paper config


def paper_config() -> dict:
    from staticvec.config import load_config

    return load_config([ROOT / "config/config.yaml", ROOT / "config/paper.yaml"])


def feature_spec(config: dict, teacher: str, fset: str):
    """The FeatureSpec of the pass of feature set ``fset`` on ``teacher`` that the paper config plans (the planning
    layer's pass_spec: what that pass computes), with the MLM mode its teacher command gets (a shipped head)."""
    from staticvec.dag.teacher import TeacherPlan
    from staticvec.teacher.features import FeatureSpec

    fs = TeacherPlan(config).pass_spec(teacher, fset)
    tc = config["teacher"]
    mode = tc.get("mlm_mode", "auto")
    return FeatureSpec(context=fs.get("context", "sentence"), special_tokens=fs.get("special_tokens", True),
                       layers=tuple(fs.get("layers", [-1])), sentence_vectors=bool(fs.get("sentence_vectors")),
                       attention_window=int(fs.get("attention_window", 0)), mlm_topk=int(fs.get("mlm_topk", 0)),
                       mlm_mode="masked" if mode == "auto" else mode, mlm_masking=tc.get("mlm_masking", "whole_word"),
                       ase=bool(fs.get("ase")), vector_dtype=fs.get("vector_dtype", "float16"))


def method_params(config: dict, method: str):
    """A student's parameters as the paper config resolves its method block (less variants and workflow keys)."""
    from staticvec.methods import student_trainer, trainer_params, REGISTRY

    row = {k: v for k, v in config["methods"][REGISTRY[method].config_block].items() if k != "variants"}
    _, params_cls, model_cls = student_trainer(REGISTRY[method].command)
    return params_cls.from_dict(trainer_params(method, row)), model_cls


# ---------------------------------------------------------------- teacher passes


def bert_teacher(hub_name: str, tokenizer, device: str, attention: bool, smoke: bool):
    """A BertForMaskedLM of ``hub_name``'s published shape with random weights, set up as load_teacher sets a
    teacher up (the dtype ``teacher.dtype: auto`` picks; eager attention for the attention window, else SDPA)."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from staticvec.teacher.load import Teacher, pick_dtype, resolve_dtype

    shape = SMOKE_TEACHER if smoke else TEACHER_SHAPES[hub_name]
    config = BertConfig(vocab_size=BERT_VOCAB, max_position_embeddings=512, type_vocab_size=2, pad_token_id=0, **shape)
    torch.manual_seed(0)
    with torch.device(device):  # initialised where it runs: a CPU init of BERT-large takes seconds
        model = BertForMaskedLM(config)
    model.set_attn_implementation("eager" if attention else "sdpa")
    dtype_name, _ = resolve_dtype(device, "auto")
    teacher = Teacher(model, tokenizer, name=hub_name, device=device, dtype=pick_dtype(device, dtype_name),
                      attention=attention)
    label = "{num_hidden_layers} layers, {hidden_size}-d, {num_attention_heads} heads".format(**shape)
    return teacher, f"{hub_name} shape ({label}), {teacher.dtype_name}"


def teacher_section(ctx, section, hub_name: str, teacher_id: str, fsets: list[str], budgets: dict):
    """The bare forward, then each planned pass (feature sets ``fsets`` of the paper config's teacher
    ``teacher_id``), of one teacher shape on parts of the synthetic text."""
    import torch

    from staticvec.teacher.align import align
    from staticvec.teacher.features import length_batches, pad_batch
    from teacher_throughput import flops_of

    batch_tokens = int(ctx.config["teacher"]["batch_tokens"])
    text = ctx.text
    teacher, shape = bert_teacher(hub_name, text.tokenizer, ctx.device, False, ctx.smoke)
    parts = ctx.parts

    # bare forward (SDPA) of a part's length-sorted batches (its sentences alone), tensors built beforehand
    part = parts[0]
    al = align(teacher.tokenizer, part.sentences, True, teacher.max_length)
    batches = length_batches(al.lengths, batch_tokens)
    tensors = []
    for batch in batches:
        ids, _, valid = pad_batch(al, batch, teacher.pad_id)
        tensors.append((torch.as_tensor(ids, device=teacher.device), torch.as_tensor(valid, device=teacher.device).long()))

    def bare():
        with torch.inference_mode():
            for ids, mask in tensors:
                teacher.forward(ids, mask, hidden_states=False)

    reps, seconds, peak = ctx.clock.repeat(bare, budgets["bare"])
    pieces, words, n_sent = int(al.lengths.sum()), sum(len(s) for s in part.sentences), len(part.sentences)
    padded = sum(len(b) * int(al.lengths[b].max()) for b in batches)
    tflops = flops_of(teacher, batches, al) * reps / seconds / 1e12
    section["figures"].append(figure(
        "bare forward (SDPA)", pieces * reps / seconds, "pieces/s",
        f"{shape}; a part of {n_sent} sentences ({words / n_sent:.1f} words, {pieces / n_sent:.1f} pieces each) in "
        f"{len(batches)} batches of <= {batch_tokens} padded pieces", reps, seconds, peak,
        words_per_s=round(words * reps / seconds), padding=round(1 - pieces / padded, 3), tflops=round(tflops, 1),
        share_of_peak=_share_of_peak(ctx, tflops)))
    tensors.clear()

    for fset in fsets:
        spec = feature_spec(ctx.config, teacher_id, fset)
        section["figures"].append(pass_figure(ctx, teacher, spec, budgets[fset], f"{fset} pass ({describe_pass(spec)})",
                                              f"{shape}, {teacher.model.config._attn_implementation} attention"))
        teacher.model.set_attn_implementation("sdpa")


def pass_figure(ctx, teacher, spec, budget: float, name: str, shape: str) -> dict:
    """A pass as its job runs it (``FeatureExtractor.extract_parts``: the next part prepared in a background thread
    on a GPU), part after part for ``budget`` seconds, after an eighth of a part as its warm-up."""
    from staticvec.teacher.features import FeatureExtractor

    batch_tokens = int(ctx.config["teacher"]["batch_tokens"])
    extractor = FeatureExtractor(teacher, spec, ctx.text_vocab, batch_tokens)  # eager attention if it needs it
    warm = parts_of(ctx.sentences[: max(4, ctx.part_sentences // 8)], ctx.part_sentences, np.random.default_rng(1))[0]
    t0 = time.perf_counter()
    extractor.extract(warm)
    ctx.clock.sync()
    # a whole part is the job's unit (its length-sorted batches pad least); where the warm-up (its first calls
    # included: an overestimate) says one would take more than twice the budget, smaller parts, so that the
    # section's alarm never takes the figure (the part size is in the shape)
    per_sentence = (time.perf_counter() - t0) / len(warm.sentences)
    part_sentences = ctx.part_sentences
    while part_sentences > min(256, ctx.part_sentences // 4) and per_sentence * part_sentences > 2 * budget:
        part_sentences //= 2
    timed_parts = ctx.parts if part_sentences == ctx.part_sentences else \
        parts_of(ctx.sentences, part_sentences, np.random.default_rng(2))
    ctx.clock.reset_peak()
    done = {"parts": 0, "sentences": 0, "words": 0, "bytes": 0}
    passes = extractor.extract_parts(_cycle(timed_parts))
    started = time.perf_counter()
    for part, arrays in passes:
        ctx.clock.sync()
        done["parts"] += 1
        done["sentences"] += len(part.sentences)
        done["words"] += int(len(arrays["word_ids"]))
        done["bytes"] += sum(a.nbytes for a in arrays.values())
        if time.perf_counter() - started >= budget:
            break
    seconds = time.perf_counter() - started
    passes.close()  # waits for the part prepared ahead
    overlap = "next part prepared in the background" if extractor.on_accelerator else "no overlap"
    return figure(name, done["words"] / seconds, "words/s", f"{shape}; parts of {part_sentences} sentences; {overlap}",
                  done["parts"], seconds, ctx.clock.peak_gib(), sentences_per_s=round(done["sentences"] / seconds, 1),
                  stored_bytes_per_word=round(done["bytes"] / max(done["words"], 1), 1),
                  hours_per_billion_words=round(1e9 / (done["words"] / seconds) / 3600, 2))


def featurepass_section(ctx, section, budgets: dict):
    """The students' sentence pass at bert-base's shape as a whole job (``write_shard_features``: the shard read,
    tokenised, aligned and batched, the forward, the poolings, the part files written), serial (``overlap``
    off: host and device in turn, as before the pipeline) and pipelined (``overlap`` on: the next part prepared
    and the last one written in background threads while the device computes), and where ``ctx.old_code`` is a
    directory holding an older ``workflow/staticvec`` (``--old-code``), that code's job too; jobs of the
    variants interleaved, on one synthetic shard, beside the bare forward of the shard's batches."""
    import torch

    from staticvec.teacher.align import align
    from staticvec.teacher.features import length_batches, pad_batch
    from teacher_pipeline import load_code, run_pass, synthetic_shard, this_checkout

    batch_tokens = int(ctx.config["teacher"]["batch_tokens"])
    part_sentences = ctx.part_sentences
    shard = ctx.work / "featurepass-shard.tsv.gz"
    text, parts, vocab = synthetic_shard(shard, FEATUREPASS_PARTS * part_sentences, part_sentences)
    warm_shard = ctx.work / "featurepass-warm.tsv.gz"
    synthetic_shard(warm_shard, max(4, part_sentences // 8), part_sentences)  # (the same words' vocabulary)
    teacher, shape = bert_teacher("bert-base-uncased", text.tokenizer, ctx.device, False, ctx.smoke)
    spec = feature_spec(ctx.config, "bert-base", "sentence")
    words = sum(len(s) for p in parts for s in p.sentences)
    what = (f"{shape}; a shard of {sum(len(p.sentences) for p in parts)} sentences ({words} words) in "
            f"{len(parts)} parts of {part_sentences}, batches of <= {batch_tokens} padded pieces; tokenizer "
            f"parallelism {os.environ.get('TOKENIZERS_PARALLELISM', 'unset (on)')}")

    # the bare forward of the shard's sentence batches (tensors built beforehand): the device's share of a job
    tensors, pieces = [], 0
    for part in parts:
        al = align(teacher.tokenizer, part.sentences, spec.special_tokens, teacher.max_length)
        pieces += int(al.lengths.sum())
        for batch in length_batches(al.lengths, batch_tokens):
            ids, _, valid = pad_batch(al, batch, teacher.pad_id)
            tensors.append((torch.as_tensor(ids, device=teacher.device),
                            torch.as_tensor(valid, device=teacher.device).long()))

    def bare():
        with torch.inference_mode():
            for ids, mask in tensors:
                teacher.forward(ids, mask, hidden_states=False)

    reps, seconds, peak = ctx.clock.repeat(bare, budgets["bare"])
    bare_rate = words * reps / seconds
    section["figures"].append(figure("bare forward of the shard's batches (SDPA)", bare_rate, "words/s", what, reps,
                                     seconds, peak, pieces_per_s=round(pieces * reps / seconds)))
    tensors.clear()

    code = this_checkout()
    variants = {"serial": (code, {"overlap": False}), "pipeline": (code, {"overlap": True})}
    if ctx.old_code:
        variants["old"] = (load_code(Path(ctx.old_code)), {})
    for old_or_new, kwargs in variants.values():  # warm-up: a small shard's job of each
        run_pass(old_or_new, teacher, warm_shard, spec, vocab, part_sentences, batch_tokens, ctx.work, **kwargs)
    # the variants' jobs interleaved (one job of each in turn, a variant dropping out once its budget is spent),
    # so that a drift of the machine's speed touches each alike; the figures are rewritten after every round, so
    # that a section stopped by its alarm keeps the rounds it finished
    done = {name: {"jobs": 0, "seconds": 0.0, "cpu_s": 0.0, "words": 0} for name in variants}
    labels = {"serial": "serial: host and device in turn (overlap off)",
              "pipeline": "pipelined: next part prepared, last part written in the background (overlap on)",
              "old": f"the code of {ctx.old_code}, as it runs"}
    figures = len(section["figures"])
    ctx.clock.reset_peak()
    while any(d["jobs"] < 1 or d["seconds"] < budgets[name] for name, d in done.items()):
        for name, (old_or_new, kwargs) in variants.items():
            d = done[name]
            if d["jobs"] >= 1 and d["seconds"] >= budgets[name]:
                continue
            got = run_pass(old_or_new, teacher, shard, spec, vocab, part_sentences, batch_tokens, ctx.work, **kwargs)
            d["jobs"] += 1
            d["seconds"] += got["wall_s"]
            d["cpu_s"] += got["cpu_s"]
            d["words"] += got["words"]
        serial = done["serial"]["words"] / done["serial"]["seconds"]
        del section["figures"][figures:]
        for name, d in done.items():
            rate = d["words"] / d["seconds"]
            section["figures"].append(figure(
                f"sentence job, {labels[name]}", rate, "words/s", what, d["jobs"], d["seconds"], ctx.clock.peak_gib(),
                process_cpu_s_per_wall_s=round(d["cpu_s"] / d["seconds"], 2), against_serial=round(rate / serial, 3),
                share_of_bare_forward=round(rate / bare_rate, 3), words_per_job=d["words"] // d["jobs"],
                hours_per_billion_words=round(1e9 / rate / 3600, 2)))


def describe_pass(spec) -> str:
    """What a pass computes, in a few words."""
    what = [f"{spec.context} context", f"layers {list(spec.layers)}"]
    what += ["no special tokens"] if not spec.special_tokens else []
    what += ["sentence vectors"] if spec.sentence_vectors else []
    what += ["ASE sums"] if spec.ase else []
    what += [f"attention window {spec.attention_window}"] if spec.attention_window else []
    what += [f"MLM top-{spec.mlm_topk} {spec.mlm_mode} {spec.mlm_masking}"] if spec.mlm_topk else []
    return ", ".join(what)


def _share_of_peak(ctx, tflops: float) -> float | None:
    if not ctx.clock.cuda:
        return None
    import torch

    name = torch.cuda.get_device_name()
    for key, peak in PEAK_BF16_TFLOPS.items():  # "H100 PCIe" before "H100"
        if key in name:
            return round(tflops / peak, 3)
    return None


def _cycle(items):
    while True:
        yield from items


# ---------------------------------------------------------------- GloVe


def synthetic_store(path: Path, vocab_size: int, entries: int, seed: int = 0):
    """A shuffled co-occurrence store (random order, as train_glove's shuffled copy) of ``entries`` records.

    Rows and columns are drawn with probability ∝ rank^-1/2: the most frequent word holds ~0.1 % of the
    entries, as in a real store, where a frequent word co-occurs with a large share of the vocabulary; values
    are GloVe's 1/d-weighted counts (a count of 1-20 over a distance of 1-5)."""
    from staticvec.cooc.store import CoocStore, SortedStoreWriter

    rng = np.random.default_rng(seed)
    with SortedStoreWriter(path, vocab_size, None, {"synthetic": True}, ordered=False) as writer:
        for start in range(0, entries, 1 << 24):
            n = min(1 << 24, entries - start)
            i = np.minimum((vocab_size * rng.random(n) ** 2).astype(np.int32), vocab_size - 1)
            j = np.minimum((vocab_size * rng.random(n) ** 2).astype(np.int32), vocab_size - 1)
            x = (rng.geometric(0.3, n) / rng.integers(1, 6, n)).astype(np.float32)
            writer.write(i, j, x)
    return CoocStore(path)


class _Enough(Exception):
    pass


def glove_iterations(engine, records, vocab_size: int, cfg, budget: float, clock, max_iterations: int = 1000):
    """Iterations of a GloVe engine (``engine(state, records, cfg, on_iteration)``) from GloVe's initialisation
    until ``budget`` seconds have passed (at least one): (iterations, seconds, peak GPU memory)."""
    from staticvec.train.glove import init_state

    state = init_state(vocab_size, cfg.dim, cfg.seed)
    times = []

    def on_iteration(cost):
        clock.sync()
        times.append(time.perf_counter())
        if not np.isfinite(cost):
            raise RuntimeError(f"GloVe diverged (cost {cost})")
        if times[-1] - started >= budget or len(times) >= max_iterations:
            raise _Enough

    clock.reset_peak()
    started = time.perf_counter()
    with contextlib.suppress(_Enough):
        engine(state, records, cfg, on_iteration)
    return len(times), times[-1] - started, clock.peak_gib()


def glove_setup(ctx):
    """The synthetic store (made once, shared by the CUDA and the CPU sections) and the paper config's GloVe."""
    from staticvec.train.glove import GloveParams

    if ctx.glove is None:
        vocab_size, entries = (2000, 30000) if ctx.smoke else (400_000, 50_000_000)
        row = {k: v for k, v in ctx.config["methods"]["glove"].items() if k in GloveParams.__dataclass_fields__}
        params = GloveParams(**row)
        if ctx.smoke:
            params.dim = 16
        t0 = time.perf_counter()
        store = synthetic_store(ctx.work / "synthetic.cooc", vocab_size, entries)
        ctx.glove = (store, params, vocab_size, time.perf_counter() - t0)
    return ctx.glove


def glove_cuda_section(ctx, section, budget: float):
    from staticvec.train.glove import _run_torch

    store, params, vocab_size, made = glove_setup(ctx)
    cfg = params.config(seed=1, threads=1, device=ctx.device)
    records = store.records

    def engine(state, records, cfg, on_iteration):
        _run_torch(state, records, cfg, ctx.device, on_iteration)

    glove_iterations(engine, records[: 4 * cfg.batch_size], vocab_size, cfg, 0.0, ctx.clock, 1)  # warm-up
    n, seconds, peak = glove_iterations(engine, records, vocab_size, cfg, budget, ctx.clock)
    section["figures"].append(figure(
        "GloVe torch engine (CUDA path)", len(records) * n / seconds, "entries/s",
        f"{vocab_size:,} words, {cfg.dim}-d, {len(records):,} entries, batch {cfg.batch_size:,} "
        f"(store made in {made:.0f} s)", n, seconds, peak, seconds_per_iteration=round(seconds / n, 3),
        hours_per_100_iterations_of_1e9_entries=round(1e9 * 100 / (len(records) * n / seconds) / 3600, 2)))
    free_memory()


def copy_bandwidth(device: str, nbytes: int = 1 << 30) -> float:
    """Bytes per second a device-to-device copy moves (read + written), the best of 10 after a warm-up: the
    achievable ceiling of a memory-bound kernel (an H200's spec: 4.8 TB/s; measured there about 4.3)."""
    import torch

    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)
    best = float("inf")
    for _ in range(10):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        dst.copy_(src)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    del src, dst
    return 2 * nbytes / best


def glove_kernel_section(ctx, section, budget: float):
    from staticvec.train.glove_cuda import bytes_per_entry, entries_per_s_limit, run_kernel

    store, params, vocab_size, made = glove_setup(ctx)
    cfg = params.config(seed=1, threads=1, device=ctx.device)
    records = store.records[:2000] if ctx.smoke else store.records  # the smoke run: numba's simulator, slow

    def engine(state, records, cfg, on_iteration):
        run_kernel(state, records, cfg, ctx.device, on_iteration)

    t0 = time.perf_counter()
    glove_iterations(engine, records[: 1 << 16], vocab_size, cfg, 0.0, ctx.clock, 1)  # compiles the kernel
    compile_s = time.perf_counter() - t0
    n, seconds, _ = glove_iterations(engine, records, vocab_size, cfg, budget, ctx.clock)
    rate = len(records) * n / seconds
    bandwidth = copy_bandwidth(ctx.device, (1 << 20) if ctx.smoke else (1 << 30))
    limit = entries_per_s_limit(cfg.dim, bandwidth)
    section["figures"].append(figure(
        "GloVe fused kernel (CUDA engine)", rate, "entries/s",
        f"{vocab_size:,} words, {cfg.dim}-d, {len(records):,} entries, every resident warp a worker "
        f"(store made in {made:.0f} s)", n, seconds, None, seconds_per_iteration=round(seconds / n, 3),
        bytes_per_entry=bytes_per_entry(cfg.dim), copy_bandwidth_tb_s=round(bandwidth / 1e12, 3),
        limit_entries_per_s=round(limit), fraction_of_limit=round(rate / limit, 3), compile_s=round(compile_s, 1),
        hours_per_100_iterations_of_1e9_entries=round(1e9 * 100 / rate / 3600, 2)))
    free_memory()


def glove_cpu_section(ctx, section, budget: float):
    import numba

    from staticvec.train.glove import _run_cpu

    store, params, vocab_size, _ = glove_setup(ctx)
    threads = min(int(ctx.config["methods"]["glove"]["threads"]), numba.config.NUMBA_NUM_THREADS)
    cfg = params.config(seed=1, threads=threads, device="cpu")
    records = store.records
    t0 = time.perf_counter()
    glove_iterations(_run_cpu, records[:20000], vocab_size, cfg, 0.0, ctx.clock, 1)  # compiles the kernel
    compile_s = time.perf_counter() - t0
    n, seconds, _ = glove_iterations(_run_cpu, records, vocab_size, cfg, budget, ctx.clock)
    section["figures"].append(figure(
        f"GloVe numba engine, {threads} threads (CPU)", len(records) * n / seconds, "entries/s",
        f"{vocab_size:,} words, {cfg.dim}-d, {len(records):,} entries; {platform.processor() or platform.machine()}",
        n, seconds, None, per_thread=round(len(records) * n / seconds / threads), compile_s=round(compile_s, 1),
        hours_per_100_iterations_of_1e9_entries=round(1e9 * 100 / (len(records) * n / seconds) / 3600, 2)))


# ---------------------------------------------------------------- students


class RepeatedBlock:
    """The trainers' block source (staticvec.train.teacher_blocks' interface) yielding one block again and again
    until a deadline (after at least one)."""

    def __init__(self, block: dict, seconds: float):
        self.block, self.seconds = block, seconds

    def blocks(self, start=(0, 0)):
        started = time.perf_counter()
        i = 0
        while i == 0 or time.perf_counter() - started < self.seconds:
            yield (0, i), {k: v.copy() for k, v in self.block.items()}  # a fresh copy: the stand-in for loading a part
            i += 1

    @staticmethod
    def next_position(position):
        return (position[0], position[1] + 1)

    def word_ids(self):
        yield self.block["word_ids"]


def students_section(ctx, section, budget_each: float):
    from students_throughput import synthetic_blocks

    from staticvec.train.loop import train

    # blocks of 1,024 sentences (a quarter of a stored part): the budget is checked between blocks
    vocab, dim, n_sent = (5000, 32, 64) if ctx.smoke else (750_000, 768, 1024)
    (block,), counts = synthetic_blocks(1, n_sent, vocab, dim, seed=0)
    (warm,), _ = synthetic_blocks(1, 32, vocab, dim, seed=1)
    for method in ("bert_sg", "c2v", "x2static"):
        params, model_cls = method_params(ctx.config, method)
        params.engine = "autograd"  # the CUDA path (the fast engine is CPU-only)
        if ctx.smoke and hasattr(params, "dim"):
            params.dim = 16
        settings = params.loop_settings()
        model = model_cls(counts, dim, params, ctx.device, 0)
        train(model, RepeatedBlock(warm, 0.0), settings, seed=0, progress=False)  # warm-up; the timed run goes on from it
        ctx.clock.reset_peak()
        record = train(model, RepeatedBlock(block, budget_each), settings, seed=0, progress=False)
        batch = getattr(params, "batch_centres", None) or params.batch_sentences
        unit = "centres/s" if method != "x2static" else "targets/s"
        out_dim = getattr(params, "dim", dim)
        section["figures"].append(figure(
            f"{method} ({record['engine']}, {params.optimizer})", record["timing"]["throughput"]["examples_per_s"], unit,
            f"{dim}-d teacher, {out_dim}-d output, vocabulary {vocab:,}, batch {batch}; blocks of {n_sent} sentences",
            record["steps"], record["timing"]["wall_s"], ctx.clock.peak_gib(),
            examples_per_update_s=record["timing"]["throughput"]["examples_per_update_s"],
            words_per_s=record["timing"]["throughput"]["words_per_s"], blocks=len(record["curve"]),
            hours_per_billion_words=round(1e9 / record["timing"]["throughput"]["words_per_s"] / 3600, 2)))
        del model
        free_memory()


# ---------------------------------------------------------------- tagger and classifier


def _random_words(rng, n: int) -> list[str]:
    shapes = rng.integers(0, 10, n)  # some capitalised and numeric tokens: the casing and character features see them
    words = set()
    out = []
    while len(out) < n:
        w = "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), int(rng.integers(2, 10))))
        if shapes[len(out)] == 0:
            w = w.capitalize()
        elif shapes[len(out)] == 1:
            w = w + str(int(rng.integers(0, 100)))
        if w.lower() not in words:  # unique also once lower-cased (the tagger's table is lower-cased)
            words.add(w.lower())
            out.append(w)
    return out


def tagger_section(ctx, section, budget: float):
    import torch

    from staticvec.embeddings import Embeddings
    from staticvec.evaluate.tagging.data import Sentence, TaskData
    from staticvec.evaluate.tagging.features import char_vocabulary, encode
    from staticvec.evaluate.tagging.inputs import StaticInputs
    from staticvec.evaluate.tagging.model import BiLSTMCRF
    from staticvec.evaluate.tagging.train import TaggerConfig, predict, tagger_dtype, train_tagger

    rng = np.random.default_rng(0)
    n_words, dim = (500, 20) if ctx.smoke else (20000, 300)
    words = _random_words(rng, n_words)
    tags = [f"T{k}" for k in range(45)]  # the Penn Treebank's 45 tags
    p = 1.0 / np.arange(1, n_words + 1)
    p /= p.sum()

    def sentences(n):
        out = []
        for _ in range(n):
            length = int(np.clip(rng.normal(24, 11), 3, 80)) if not ctx.smoke else int(rng.integers(3, 8))  # WSJ-like
            ws = rng.choice(n_words, length, p=p)
            out.append(Sentence(tuple(words[w] for w in ws), tuple(tags[w % 45] for w in ws)))
        return out

    settings = dict(ctx.config["tagging"]["tagger"])
    settings.update(max_epochs=1, patience=1, max_train_sentences=None)
    if ctx.smoke:
        settings.update(hidden=8, char_hidden=6)
    config = TaggerConfig.from_dict(settings)
    embeddings = Embeddings([w.lower() for w in words], rng.normal(0, 0.3, (n_words, dim)).astype(np.float32))
    dtype_name, why = tagger_dtype(torch.device(ctx.device), config.dtype)
    shape = (f"{dim}-d vectors, hidden {config.hidden}, chars {config.char_features}, {config.optimizer} batch "
             f"{config.batch_size}, {dtype_name}")
    # probe: a short epoch (also the warm-up), then an epoch sized to the budget
    probe_n = 20 if ctx.smoke else 300
    data = TaskData("pos", "ud", sentences(probe_n), sentences(10), sentences(10))
    probe = train_tagger(data, StaticInputs(embeddings, data), config, seed=1, device=ctx.device)
    rate = probe_n / max(probe["timing"]["train_seconds"], 1e-3)
    n_train = int(min(max(rate * budget, probe_n), 40 if ctx.smoke else 30000))
    data = TaskData("pos", "ud", sentences(n_train), sentences(10), sentences(10))
    inputs = StaticInputs(embeddings, data)
    ctx.clock.reset_peak()
    result = train_tagger(data, inputs, config, seed=1, device=ctx.device)
    seconds = max(result["timing"]["train_seconds"], 1e-6)  # a smoke epoch on a fast host can read 0.0 s
    section["figures"].append(figure("BiLSTM-CRF training (one epoch)", n_train / seconds, "sentences/s",
                                     shape, 1, result["timing"]["train_seconds"], ctx.clock.peak_gib(), dtype_reason=why,
                                     amp=result["amp"], train_sentences=n_train))

    # decoding (Viterbi) of the same sentences, in the run's scoring batches, and the LSTM's dtype under its autocast
    tag_ids = {t: i for i, t in enumerate(data.tagset())}
    chars = char_vocabulary(data.train) if config.char_features != "none" else None
    encoded = encode(data.train, inputs.rows_for("train"), tag_ids, chars)
    torch.manual_seed(0)
    model = BiLSTMCRF(inputs.vectors, len(tag_ids), hidden=config.hidden, layers=config.layers, dropout=config.dropout,
                      casing_dim=config.casing_dim, char_features=config.char_features,
                      n_chars=len(chars) + 2 if chars else 0, char_dim=config.char_dim,
                      char_hidden=config.char_hidden).to(ctx.device)
    amp = None if dtype_name == "float32" else getattr(torch, dtype_name)
    seen = []
    hook = model.lstm.forward_lstms[0].register_forward_hook(lambda m, a, out: seen.append(str(out[0].dtype)))
    encoded = encoded[:5000]
    reps, seconds, peak = ctx.clock.repeat(lambda: predict(model, encoded, config, torch.device(ctx.device),
                                                           chars is not None, amp), budget / 3)
    hook.remove()
    section["figures"].append(figure("BiLSTM-CRF decoding", len(encoded) * reps / seconds, "sentences/s",
                                     f"{shape}; scoring batches of {config.eval_batch_size}", reps, seconds, peak,
                                     lstm_output_dtype=sorted(set(seen))))
    free_memory()


def classifier_section(ctx, section, budget: float):
    import torch

    from staticvec.evaluate.classification import ClassifierSettings, EncodedSentences, predict, train
    from staticvec.evaluate.classification_data import LabelledSentences

    rng = np.random.default_rng(0)
    n_words, dim = (500, 20) if ctx.smoke else (20000, 300)
    c = ctx.config["classification"]
    settings = ClassifierSettings(filters=c["filters"], kernel_size=c["kernel_size"], dropout=c["dropout"],
                                  batch_size=c["batch_size"], max_tokens=c["max_tokens"])
    table = torch.from_numpy(rng.normal(0, 0.3, (n_words, dim)).astype(np.float32)).to(ctx.device)
    table[0] = 0.0
    index = {str(i): i for i in range(1, n_words)}

    def data(n):
        sentences = [[str(int(w)) for w in rng.integers(1, n_words, int(rng.integers(5, 40)))] for _ in range(n)]
        return EncodedSentences(LabelledSentences(sentences, rng.integers(0, 2, n)), index, settings.max_tokens,
                                settings.kernel_size, ctx.device)

    probe = data(100 if ctx.smoke else 2000)
    t0 = time.perf_counter()
    train(table, 2, probe, 1e-3, 1, 1, settings)  # the warm-up, and the rate that sizes the timed epochs
    ctx.clock.sync()
    rate = len(probe) / (time.perf_counter() - t0)
    n = int(min(max(rate * budget / 3, len(probe)), 200 if ctx.smoke else 200_000))
    encoded = data(n)
    reps, seconds, peak = ctx.clock.repeat(lambda: train(table, 2, encoded, 1e-3, 1, 1, settings), budget / 2,
                                           warmup=False, max_reps=3)
    shape = f"{dim}-d table of {n_words:,} words, {settings.filters} filters, batch {settings.batch_size}, 5-39 tokens"
    section["figures"].append(figure("sentence CNN training (one epoch)", n * reps / seconds, "sentences/s", shape, reps,
                                     seconds, peak, sentences=n))
    model = train(table, 2, probe, 1e-3, 1, 1, settings)
    reps, seconds, peak = ctx.clock.repeat(lambda: predict(model, encoded, settings.eval_batch_size), budget / 6)
    section["figures"].append(figure("sentence CNN scoring", n * reps / seconds, "sentences/s",
                                     f"{shape}, scoring batches of {settings.eval_batch_size}", reps, seconds, peak))
    free_memory()


# ---------------------------------------------------------------- environment


def environment(device: str) -> dict:
    import numba
    import torch
    import transformers

    env = {"torch": torch.__version__, "transformers": transformers.__version__, "numba": numba.__version__,
           "numpy": np.__version__, "python": platform.python_version(), "cpu_count": os.cpu_count(),
           "cpu": _cpu_model(), "cuda": torch.version.cuda, "device": "cpu", "driver": None, "cudnn": None}
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(0)
        env.update(device=torch.cuda.get_device_name(), gpu_memory_gib=round(props.total_memory / 2**30, 1),
                   cudnn=torch.backends.cudnn.version(), capability=".".join(map(str, torch.cuda.get_device_capability())),
                   bf16=torch.cuda.is_bf16_supported(), tf32_matmul=torch.backends.cuda.matmul.allow_tf32)
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=20)
            env["driver"] = out.stdout.strip().splitlines()[0] if out.stdout.strip() else None
    return env


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


# ---------------------------------------------------------------- driver

FEATUREPASS_PARTS = 6  # the featurepass section's shard: parts of teacher.part_sentences (an H100's serial job: ~5 s)


class Context:
    def __init__(self, args):
        self.smoke = args.smoke
        self.device = args.device
        self.config = paper_config()
        self.clock = Clock(self.device)
        self.work = Path(args.work)
        self.work.mkdir(parents=True, exist_ok=True)
        self.part_sentences = 64 if self.smoke else int(self.config["teacher"]["part_sentences"])
        self.old_code = args.old_code
        self.glove = None
        self._text = None

    def _make_text(self):
        from staticvec.corpus.vocab import Vocabulary

        self._text = SyntheticText(seed=0)
        self.sentences = self._text.sentences(2 * self.part_sentences)
        self.parts = parts_of(self.sentences, self.part_sentences, np.random.default_rng(0))
        # the run's vocabulary: words met twice (the corpus's min count cut, in miniature)
        self.text_vocab = Vocabulary.from_counts(Counter(w for s in self.sentences for w in s), min_count=2)

    @property
    def text(self) -> SyntheticText:
        if self._text is None:
            self._make_text()
        return self._text


# (name, its measurement budgets in seconds, the seconds planned for it in all on an H100: measurements, warm-ups,
# models, data and compilation; the function). Sum of the plans: 252 s. The smoke run gives each budget 0.2 s.
LIMIT_SLACK = 15.0  # a section is stopped after twice its planned seconds and this (or when the deadline comes)
SECTIONS = [
    ("teacher_base", {"bare": 5, "sentence": 7, "paragraph": 5, "ase": 4}, 31,
     lambda ctx, s, b: teacher_section(ctx, s, "bert-base-uncased", "bert-base", ["sentence", "paragraph", "ase"], b)),
    # the sentence pass as a whole job, serial against pipelined (``--sections featurepass --seconds 20``: its own
    # run, about 100 s on an H100 with the shard's 23 s of serial jobs)
    ("featurepass", {"bare": 3, "serial": 8, "pipeline": 8, "old": 8}, 45, featurepass_section),
    ("teacher_large", {"bare": 5, "semglove": 22}, 39,
     lambda ctx, s, b: teacher_section(ctx, s, "bert-large-uncased-whole-word-masking", "bert-large-wwm", ["semglove"], b)),
    ("glove_cuda", 10, 25, glove_cuda_section),  # + the synthetic store: ~10 s
    ("glove_kernel", 10, 25, glove_kernel_section),  # + numba's compilation of the kernel, the copy bandwidth
    ("glove_cpu", 8, 20, glove_cpu_section),  # + numba's compilation of the kernel
    ("students", 8, 33, students_section),  # 8 s for each of the three
    ("tagger", 12, 22, tagger_section),  # probe epoch, a timed epoch, decoding (a third of the budget)
    ("classifier", 6, 12, classifier_section),
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny shapes, about a second a section (CPU rehearsal)")
    ap.add_argument("--paper", dest="smoke", action="store_false", help="paper shapes on the GPU (the default)")
    ap.add_argument("--device", default=None, help="default: cuda (cpu with --smoke)")
    ap.add_argument("--out", default=os.environ.get("OUT") or "gpu_check_out", help="where the JSON and Markdown go")
    ap.add_argument("--work", default=None, help="scratch files (the 600 MB synthetic store), removed at the end; "
                    "default: a directory under the system's temporary directory (not under --out, whose files travel back)")
    ap.add_argument("--deadline", type=float, default=260.0,
                    help="seconds for the whole script: a section that would not fit the time left is skipped")
    ap.add_argument("--sections", "--only", nargs="*", default=None, help="only these sections")
    ap.add_argument("--seconds", type=float, default=None,
                    help="every measurement budget of the sections run (their plans follow; the smoke run: 0.2 s)")
    ap.add_argument("--old-code", default=None, metavar="DIR",
                    help="featurepass: also time the job of the code in DIR/workflow/staticvec (an older revision's, "
                    "e.g. from `git archive REV workflow/staticvec | tar -x -C DIR`)")
    args = ap.parse_args(argv)
    args.device = args.device or ("cpu" if args.smoke else "cuda")
    args.work = args.work or tempfile.mkdtemp(prefix="staticvec-gpu-check-")
    started = time.perf_counter()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from staticvec.device import resolve_device

    resolve_device(args.device)  # cuda without a GPU: a clear error, not a CPU run
    if args.smoke:
        torch.set_num_threads(1)  # tiny shapes gain nothing from threads (and a busy machine makes them spin)
    ctx = Context(args)
    meta = {"mode": "smoke" if args.smoke else "paper shapes", "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
            "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "env": environment(args.device)}
    report = Report(Path(args.out), meta)
    report.write()
    print(json.dumps(meta["env"]), flush=True)

    def alarm(signum, frame):
        raise SectionTimeout

    previous_handler = signal.signal(signal.SIGALRM, alarm)
    failed = 0
    for name, budget, planned, run in SECTIONS:
        if args.sections and name not in args.sections:
            continue
        if args.seconds is not None and not args.smoke:  # the plan keeps its overhead beside the new budgets
            planned += (args.seconds - np.mean(list(budget.values()) if isinstance(budget, dict) else budget)) * \
                (len(budget) if isinstance(budget, dict) else 1)
            budget = {k: args.seconds for k in budget} if isinstance(budget, dict) else args.seconds
        if args.smoke:
            budget = {k: 0.2 for k in budget} if isinstance(budget, dict) else 0.2
        section = report.section(name, budget)
        left = args.deadline - (time.perf_counter() - started)
        if not args.smoke and left < planned:
            section["status"] = f"skipped: {left:.0f} s left of --deadline, {planned:.0f} s planned"
            report.write()
            continue
        limit = max(1.0, min(left, 2 * planned + LIMIT_SLACK))
        t0 = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            run(ctx, section, budget)
            section["status"] = "ok"
        except SectionTimeout:
            section["status"] = f"stopped after {limit:.0f} s"
            failed += 1
        except Exception:  # noqa: BLE001 - recorded, and the next section runs
            section["status"] = "error"
            section["error"] = traceback.format_exc(limit=-6)
            failed += 1
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        section["seconds"] = round(time.perf_counter() - t0, 1)
        free_memory()
        report.write()
        print(f"{name}: {section['status']} in {section['seconds']} s", flush=True)
        for f in section["figures"]:
            print(f"  {f['name']}: {_fmt(f['value'])} {f['unit']} ({f['shape']}; peak {f['peak_gpu_memory_gib']} GiB)",
                  flush=True)
        if section.get("error"):
            print(section["error"], file=sys.stderr, flush=True)
    signal.signal(signal.SIGALRM, previous_handler)
    shutil.rmtree(args.work, ignore_errors=True)
    print(f"wrote {Path(args.out) / 'gpu_check.json'} and gpu_check.md in {time.perf_counter() - started:.0f} s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
