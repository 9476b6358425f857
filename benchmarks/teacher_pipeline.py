"""A teacher pass's pipeline alone: what runs around the model, at the paper config's feature specs.

    python benchmarks/teacher_pipeline.py                          # this checkout, on the CPU
    python benchmarks/teacher_pipeline.py --against 7b11ca2        # and the teacher code of that revision, side by
                                                                   # side in this process (interleaved repetitions)
    python benchmarks/teacher_pipeline.py --split                  # where the time goes, stage by stage
    python benchmarks/teacher_pipeline.py --encoder tiny-bert      # a real 2-layer 32-d BERT instead of the lookup

Each pass is the whole job of one shard, ``write_shard_features``: the shard read, tokenised and aligned, the
batches built, the forward, the poolings, the conversion to the storage dtype, the copies and the part files
written. The shard is synthetic text of the default corpus's shape (``gpu_check.SyntheticText``: words per
sentence, WordPieces per word, sentences per paragraph as measured on it) over a 30,522-piece vocabulary, cut in
parts of the paper config's ``teacher.part_sentences``, batched by its ``teacher.batch_tokens``.

The model is one whose forward costs next to nothing, so that words/s measures the pipeline:

- ``lookup`` (default): :class:`LookupEncoder`, bert-base-uncased's width (768) and layer count (12) whose
  "forward" is one embedding lookup (every layer's states are that lookup). The arrays a pass moves, converts
  and writes are then those of the paper's teacher (1.6 KB a word for the students' pass);
- ``tiny-bert``: a random BertForMaskedLM of 2 layers, 32-d (``gpu_check.SMOKE_TEACHER``), a real forward.

The bare forward of the same encoder on the same batches is timed as well (``forward``), so that the pipeline's
own time is the pass's less that. Times are CPU seconds of the process (``time.process_time``: all its
threads) and wall seconds; on a machine shared with other work only their ratios mean anything.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))
sys.path.insert(0, str(ROOT / "benchmarks"))

PASSES = ("sentence", "paragraph", "ase")  # the paper config's passes of the students' teacher (bert-base)
BASE_SHAPE = dict(hidden_size=768, num_hidden_layers=12)  # bert-base-uncased


# ---------------------------------------------------------------- the encoder


def lookup_encoder_class():
    import torch

    class LookupEncoder(torch.nn.Module):
        """An encoder of a teacher's shape (``config``: width, layers) whose forward is one embedding lookup: every
        hidden state, the last included, is the input pieces' embeddings. What a pass costs beyond it is its
        pipeline. No attention weights (no attention-window pass)."""

        def __init__(self, config):
            super().__init__()
            self.config = config
            self.embeddings = torch.nn.Embedding(config.vocab_size, config.hidden_size)

        @property
        def base_model(self):
            return self

        def get_input_embeddings(self):
            return self.embeddings

        def forward(self, input_ids, attention_mask=None, output_hidden_states=False, output_attentions=False,
                    return_dict=True):
            if output_attentions:
                raise ValueError("the lookup encoder has no attention weights")
            h = self.embeddings(input_ids)
            layers = (h,) * (self.config.num_hidden_layers + 1) if output_hidden_states else None
            return SimpleNamespace(last_hidden_state=h, hidden_states=layers, attentions=None)

    return LookupEncoder


def pipeline_teacher(tokenizer, device: str, encoder: str = "lookup"):
    """The teacher of a pipeline measurement (see the module doc), set up as load_teacher sets one up."""
    import torch
    from transformers import BertConfig

    import gpu_check
    from staticvec.teacher.load import Teacher, pick_dtype, resolve_dtype

    if encoder == "tiny-bert":
        teacher, _ = gpu_check.bert_teacher("bert-base-uncased", tokenizer, device, False, smoke=True)
        return teacher, "random BERT, {num_hidden_layers} layers, {hidden_size}-d".format(**gpu_check.SMOKE_TEACHER)
    config = BertConfig(vocab_size=gpu_check.BERT_VOCAB, max_position_embeddings=512, pad_token_id=0,
                        num_attention_heads=12, **BASE_SHAPE)
    torch.manual_seed(0)
    model = lookup_encoder_class()(config)
    dtype_name, _ = resolve_dtype(device, "auto")
    teacher = Teacher(model, tokenizer, name="lookup", device=device, dtype=pick_dtype(device, dtype_name))
    return teacher, (f"lookup encoder of bert-base's shape ({BASE_SHAPE['num_hidden_layers']} layers, "
                     f"{BASE_SHAPE['hidden_size']}-d), {teacher.dtype_name}")


def bare_forward(teacher, parts, batch_tokens: int) -> tuple[float, float]:
    """CPU and wall seconds of the encoder's forward alone on the parts' sentence batches (tensors made before)."""
    import torch

    from staticvec.teacher.align import align
    from staticvec.teacher.features import length_batches, pad_batch

    tensors = []
    for part in parts:
        al = align(teacher.tokenizer, part.sentences, True, teacher.max_length)
        for batch in length_batches(al.lengths, batch_tokens):
            ids, _, valid = pad_batch(al, batch, teacher.pad_id)
            tensors.append((torch.as_tensor(ids, device=teacher.device),
                            torch.as_tensor(valid, device=teacher.device).long()))
    sync = torch.cuda.synchronize if str(teacher.device).startswith("cuda") else (lambda: None)
    sync()
    cpu, wall = time.process_time(), time.perf_counter()
    with torch.inference_mode():
        for ids, mask in tensors:
            teacher.forward(ids, mask, hidden_states=True)
    sync()
    return time.process_time() - cpu, time.perf_counter() - wall


# ---------------------------------------------------------------- the shard


def synthetic_shard(path: Path, sentences: int, part_sentences: int, seed: int = 0):
    """A corpus shard of ``sentences`` synthetic training sentences in paragraphs; returns (its parts as the
    feature pass cuts them, its vocabulary: words met twice)."""
    import gpu_check
    from staticvec.corpus.shards import Sentence
    from staticvec.corpus.vocab import Vocabulary
    from staticvec.teacher.features import iter_parts

    text = gpu_check.SyntheticText(seed)
    words = text.sentences(sentences)
    parts = gpu_check.parts_of(words, part_sentences, np.random.default_rng(seed))
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for part in parts:
            for paragraph, (sentences_of, _) in enumerate(part.context):
                for tokens in sentences_of:
                    fh.write(Sentence(f"p{part.index}", paragraph, True, tokens).to_line())
    vocab = Vocabulary.from_counts(Counter(w for s in words for w in s), min_count=2)
    return text, list(iter_parts(path, "paragraph", part_sentences)), vocab


# ---------------------------------------------------------------- another revision's code


def load_revision(rev: str, where: Path):
    """The ``staticvec.teacher`` modules of git revision ``rev`` (extracted under ``where``): :func:`load_code`."""
    subprocess.run(f"git -C {ROOT} archive {rev} workflow/staticvec | tar -x -C {where}", shell=True, check=True)
    return load_code(where)


def load_code(where: Path):
    """The ``staticvec.teacher`` modules of the package in ``where/workflow/staticvec`` (another revision's),
    imported beside this checkout's under the usual names, which then go back to this checkout's modules (the
    other code keeps its own). Imports made later inside its functions resolve to this checkout's modules."""
    if not (Path(where) / "workflow/staticvec/teacher/store.py").is_file():
        raise FileNotFoundError(f"{where}: no workflow/staticvec/teacher/store.py (extract a revision's "
                                "workflow/staticvec there: git archive REV workflow/staticvec | tar -x -C DIR)")

    def ours():
        return {k: m for k, m in sys.modules.items() if k == "staticvec" or k.startswith("staticvec.")}

    mine = ours()
    for name in mine:
        del sys.modules[name]
    sys.path.insert(0, str(Path(where) / "workflow"))
    try:
        store = importlib.import_module("staticvec.teacher.store")
        theirs = ours()
    finally:
        sys.path.remove(str(Path(where) / "workflow"))
        for name in ours():
            del sys.modules[name]
        sys.modules.update(mine)
    return SimpleNamespace(store=store, features=theirs["staticvec.teacher.features"])


def this_checkout():
    from staticvec.teacher import features, store

    return SimpleNamespace(store=store, features=features)


# ---------------------------------------------------------------- stages


class Stages:
    """Exclusive CPU seconds of named stages (nested stages are subtracted from the ones around them)."""

    def __init__(self):
        self.seconds: Counter = Counter()
        self.stack: list[list] = []

    def wrap(self, name: str, fn):
        def timed(*args, **kwargs):
            self.stack.append([name, time.process_time(), 0.0])
            try:
                return fn(*args, **kwargs)
            finally:
                _, t0, inner = self.stack.pop()
                spent = time.process_time() - t0
                self.seconds[name] += spent - inner
                if self.stack:
                    self.stack[-1][2] += spent
        return timed

    def wrap_iterator(self, name: str, fn):
        def timed(*args, **kwargs):
            it = iter(fn(*args, **kwargs))
            step = self.wrap(name, lambda: next(it, StopIteration))
            while (item := step()) is not StopIteration:
                yield item
        return timed


class TimedTokenizer:
    """A tokenizer whose calls are a stage; everything else is the tokenizer's."""

    def __init__(self, tokenizer, stages: Stages):
        self.__dict__["_tokenizer"] = tokenizer
        self.__dict__["_call"] = stages.wrap("tokeniser (Rust encode and its Python lists)", tokenizer.__call__)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._tokenizer, name)


@contextlib.contextmanager
def staged(code, teacher, stages: Stages):
    """The stages of a pass of ``code`` (a module namespace from :func:`load_revision` or :func:`this_checkout`)."""
    features, store = code.features, code.store
    host = getattr(features, "PartPreparer", features.FeatureExtractor)  # where a part's host work runs
    patches = [(store, "iter_parts", stages.wrap_iterator("reading the shard into parts", store.iter_parts)),
               (features, "align", stages.wrap("alignment (piece -> word)", features.align)),
               (host, "units", stages.wrap("units (paragraph chunks)", host.units)),
               (host, "word_ids", stages.wrap("word ids", host.word_ids)),
               (features.FeatureExtractor, "ase_state", stages.wrap("ASE checkpoint state", features.FeatureExtractor.ase_state)),
               (store, "_save_npz", stages.wrap("writing part files", store._save_npz)),
               (teacher, "forward", stages.wrap("forward", teacher.forward)),
               (teacher, "tokenizer", TimedTokenizer(teacher.tokenizer, stages))]
    saved = [(obj, name, obj.__dict__.get(name, _MISSING) if isinstance(obj, type) else getattr(obj, name))
             for obj, name, _ in patches]
    for obj, name, new in patches:
        setattr(obj, name, new)
    try:
        yield
    finally:
        for obj, name, old in saved:
            if old is _MISSING:
                delattr(obj, name)
            else:
                setattr(obj, name, old)
        with contextlib.suppress(AttributeError):
            del teacher.forward  # back to the class's method


_MISSING = object()


# ---------------------------------------------------------------- measuring


def feature_spec(fset: str):
    import gpu_check

    return gpu_check.feature_spec(gpu_check.paper_config(), "bert-base", fset)


def run_pass(code, teacher, shard: Path, spec, vocab, part_sentences: int, batch_tokens: int, work: Path,
             overlap: bool | None = None) -> dict:
    """One whole job of ``code`` on the shard: CPU and wall seconds, words."""
    out = Path(tempfile.mkdtemp(dir=work))
    sync = teacher._torch.cuda.synchronize if str(teacher.device).startswith("cuda") else (lambda: None)
    kwargs = {} if overlap is None else {"overlap": overlap}
    sync()
    cpu, wall = time.process_time(), time.perf_counter()
    sidecar = code.store.write_shard_features(teacher, shard, out, spec, vocab, None, part_sentences, batch_tokens,
                                              progress=False, **kwargs)
    sync()
    result = {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall, "words": sidecar["words"],
              "bytes": sum(f.stat().st_size for f in (out / "parts").glob("part-*.npz"))}
    shutil.rmtree(out)
    return result


def compare(codes: dict, teacher, shard, parts, vocab, passes, part_sentences, batch_tokens, reps, work) -> list[dict]:
    """Each pass of each code ``reps`` times, interleaved (code after code within a repetition); medians."""
    rows = []
    forward = [bare_forward(teacher, parts, batch_tokens) for _ in range(reps)]
    fwd_cpu, fwd_wall = statistics.median(f[0] for f in forward), statistics.median(f[1] for f in forward)
    words = sum(len(w) for p in parts for w in p.sentences)
    for fset in passes:
        spec = feature_spec(fset)
        runs = {name: [] for name in codes}
        for _ in range(reps):
            for name, code in codes.items():
                runs[name].append(run_pass(code, teacher, shard, spec, vocab, part_sentences, batch_tokens, work))
        for name, got in runs.items():
            cpu, wall = statistics.median(r["cpu_s"] for r in got), statistics.median(r["wall_s"] for r in got)
            rows.append({"pass": fset, "code": name, "words": got[0]["words"], "cpu_s": round(cpu, 3),
                         "wall_s": round(wall, 3), "words_per_cpu_s": round(words / cpu),
                         "words_per_s": round(words / wall), "pipeline_cpu_s": round(cpu - fwd_cpu, 3),
                         "pipeline_words_per_cpu_s": round(words / max(cpu - fwd_cpu, 1e-9)),
                         "stored_bytes_per_word": round(got[0]["bytes"] / words, 1), "reps": reps})
    rows.append({"pass": "bare forward", "code": "-", "words": words, "cpu_s": round(fwd_cpu, 3),
                 "wall_s": round(fwd_wall, 3), "words_per_cpu_s": round(words / fwd_cpu),
                 "words_per_s": round(words / fwd_wall), "reps": reps})
    return rows


def split(codes: dict, teacher, shard, vocab, passes, part_sentences, batch_tokens, work) -> list[dict]:
    """CPU seconds by stage of one job of each pass of each code (sequential: no overlap; tokenizer on one thread)."""
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    rows = []
    for fset in passes:
        spec = feature_spec(fset)
        for name, code in codes.items():
            stages = Stages()
            with staged(code, teacher, stages):
                got = run_pass(code, teacher, shard, spec, vocab, part_sentences, batch_tokens, work, overlap=False) \
                    if "overlap" in code.store.write_shard_features.__code__.co_varnames else \
                    run_pass(code, teacher, shard, spec, vocab, part_sentences, batch_tokens, work)
            rest = got["cpu_s"] - sum(stages.seconds.values())
            shares = dict(stages.seconds) | {"indices, pooling, conversion, copies (the rest)": rest}
            rows.append({"pass": fset, "code": name, "cpu_s": round(got["cpu_s"], 3),
                         "stages": {k: round(v, 3) for k, v in sorted(shares.items(), key=lambda kv: -kv[1])}})
    return rows


def markdown(rows: list[dict], stage_rows: list[dict]) -> str:
    lines = []
    if rows:
        lines += ["| pass | code | words/CPU-s | pipeline words/CPU-s (less the forward) | words/s (wall) | "
                  "CPU s | wall s | stored bytes/word |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in rows:
            lines.append(f"| {r['pass']} | {r['code']} | {r['words_per_cpu_s']:,} | "
                         f"{r.get('pipeline_words_per_cpu_s', '') and format(r['pipeline_words_per_cpu_s'], ',')} | "
                         f"{r['words_per_s']:,} | {r['cpu_s']} | {r['wall_s']} | {r.get('stored_bytes_per_word', '')} |")
    for r in stage_rows:
        lines += ["", f"{r['pass']} pass, {r['code']}: {r['cpu_s']} CPU s"]
        lines += [f"- {name}: {s} s ({100 * s / r['cpu_s']:.0f} %)" for name, s in r["stages"].items()]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", default=None, metavar="REV", help="also the teacher code of this git revision")
    ap.add_argument("--encoder", choices=["lookup", "tiny-bert"], default="lookup")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--sentences", type=int, default=None, help="default: two parts of the paper config's size")
    ap.add_argument("--passes", nargs="+", default=list(PASSES), choices=PASSES)
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each job (medians)")
    ap.add_argument("--split", action="store_true", help="CPU seconds by stage instead of rates")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the config's teacher.threads: 1)")
    ap.add_argument("--json", default=None, help="also write the rows here")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    import gpu_check

    torch.set_num_threads(args.threads)
    config = gpu_check.paper_config()
    part_sentences = int(config["teacher"]["part_sentences"])
    batch_tokens = int(config["teacher"]["batch_tokens"])
    with tempfile.TemporaryDirectory(prefix="staticvec-pipeline-") as tmp:
        work = Path(tmp)
        text, parts, vocab = synthetic_shard(work / "shard.tsv.gz", args.sentences or 2 * part_sentences,
                                             part_sentences)
        teacher, label = pipeline_teacher(text.tokenizer, args.device, args.encoder)
        codes = {"this checkout": this_checkout()}
        if args.against:
            (work / "rev").mkdir()
            codes = {f"{args.against}": load_revision(args.against, work / "rev")} | codes
        print(f"{label} on {args.device}, {torch.get_num_threads()} torch thread(s), tokenizer parallelism "
              f"{os.environ.get('TOKENIZERS_PARALLELISM', 'unset (on)')}; {sum(len(p.sentences) for p in parts)} "
              f"sentences in {len(parts)} parts of {part_sentences}, batches of {batch_tokens} padded pieces; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
        if args.split:
            rows, stage_rows = [], split(codes, teacher, work / "shard.tsv.gz", vocab, args.passes, part_sentences,
                                         batch_tokens, work)
        else:
            rows, stage_rows = compare(codes, teacher, work / "shard.tsv.gz", parts, vocab, args.passes,
                                       part_sentences, batch_tokens, args.reps, work), []
    print(markdown(rows, stage_rows), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"label": label, "rows": rows, "stages": stage_rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
