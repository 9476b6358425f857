"""Paths and command-line flags of the teacher rules, from the config (no torch import here).

``workflow/rules/teacher.smk`` stays thin: every input list, output pattern and flag string comes
from :class:`TeacherPlan`, which is plain Python and tested like the rest of the package.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from staticvec.dag.common import (corpus_shard, corpus_vocab, device_flags, fraction_shard_ids, online_flags, teacher_model,
                                  vocab_args)
from staticvec.errors import StaticvecError
from staticvec.methods import REGISTRY, feature_reader_methods
from staticvec.teacher.load import CAUSAL_FAMILIES, FAMILIES, MINILM_ALIASES, SMOLLM2_ALIASES, resolve_teacher, ships_mlm_head


# The papers' teachers as their hub config.json files describe them, so that a fresh machine can plan
# the paper DAG (ASE layers, static widths) before the first job downloads the model.
PAPER_TEACHERS = {
    "bert-base-uncased": {"mlm_head": True, "causal": False, "hidden_size": 768, "n_layers": 12},
    "bert-large-uncased-whole-word-masking": {"mlm_head": True, "causal": False, "hidden_size": 1024, "n_layers": 24},
    "roberta-base": {"mlm_head": True, "causal": False, "hidden_size": 768, "n_layers": 12},
    "gpt2": {"mlm_head": False, "causal": True, "hidden_size": 768, "n_layers": 12},
}


# A teacher pass's line in a dry run: Snakemake prints a rule's ``message`` instead of its job block,
# so this line is all a dry run says of the pass (rule teacher_features' message). Read back by
# :func:`pass_of_message` (the scale projection, benchmarks/scale_projection.py).
TEACHER_PASS_MESSAGE = "teacher {wildcards.teacher} / set {wildcards.fset} / shard {wildcards.shard}: {params.computes}"
_TEACHER_PASS_LINE = re.compile(r"^teacher (?P<teacher>\S+) / set (?P<fset>\S+) / shard (?P<shard>\d+): ")


def pass_of_message(message: str) -> tuple[str, str, str] | None:
    """(teacher, feature set, shard) of a :data:`TEACHER_PASS_MESSAGE` line; None for any other message."""
    m = _TEACHER_PASS_LINE.match(message)
    return (m["teacher"], m["fset"], m["shard"]) if m else None

def teacher_traits(spec: str) -> dict:
    """What a teacher is, read cheaply from its ``config.json`` (None where it cannot be known).

    ``mlm_head``: ships a masked-LM head; ``causal``: a causal LM (no MLM predictions);
    ``hidden_size`` and ``n_layers``: its width and depth (static tables at the teacher's width,
    ASE's layers).
    """
    key = spec.strip().lower()
    if key in SMOLLM2_ALIASES or key.endswith(".gguf"):
        # SmolLM2-135M (GGUF: no config.json to read)
        return {"mlm_head": False, "causal": True, "hidden_size": 576, "n_layers": 30}
    config_file = None
    if key in MINILM_ALIASES:
        try:
            config_file = Path(resolve_teacher(spec).path) / "config.json"
        except StaticvecError:
            config_file = None
    elif (Path(spec) / "config.json").exists():
        config_file = Path(spec) / "config.json"
    else:
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(spec, "config.json")
            config_file = Path(cached) if isinstance(cached, str) else None
        except Exception:  # noqa: BLE001 - not a valid repo id, no hub library: unknown
            config_file = None
    if (config_file is None or not config_file.exists()) and key in PAPER_TEACHERS:
        # not downloaded yet: the DAG is planned before the first teacher job fetches the model
        return dict(PAPER_TEACHERS[key])
    if config_file is None or not config_file.exists():
        return {"mlm_head": False if key in MINILM_ALIASES else None, "causal": False if key in MINILM_ALIASES else None,
                "hidden_size": None, "n_layers": None}
    config = json.loads(config_file.read_text(encoding="utf-8"))
    architectures = " ".join(config.get("architectures") or [])
    family = FAMILIES.get(config.get("model_type", ""), config.get("model_type"))
    causal = family in CAUSAL_FAMILIES or "CausalLM" in architectures or "LMHead" in architectures
    mlm = ships_mlm_head(config.get("architectures")) and not causal
    return {"mlm_head": False if key in MINILM_ALIASES else mlm, "causal": causal,
            "hidden_size": config.get("hidden_size") or config.get("n_embd"),
            "n_layers": config.get("num_hidden_layers") or config.get("n_layer")}


def _student_feature_sets(method: str) -> list[str]:
    """The feature sets a student can read, where no sheet says which it does: the values its config
    schema allows for ``context`` (``sentence`` for a student without that parameter)."""
    from staticvec.config import config_schema

    block = config_schema()["properties"]["methods"]["properties"].get(REGISTRY[method].config_block, {})
    return list(block.get("properties", {}).get("context", {}).get("enum", ["sentence"]))


class TeacherPlan:
    """Names of the teacher stage's files and the flags of its commands."""

    def __init__(self, config: dict):
        self.config = config
        self.tc = config["teacher"]
        self.results = config["results_dir"].rstrip("/")
        self.n_shards = int(config["corpus"]["shards"])
        self.shard_ids = fraction_shard_ids("", self.n_shards)
        if self.tc["default"] not in self.tc["models"]:
            raise StaticvecError(f"config key 'teacher.default' = {self.tc['default']!r} is not one of teacher.models")

    # ------------------------------------------------------------ corpus inputs (the corpus stage's files)
    def corpus_shard(self, shard: str) -> str:
        return corpus_shard(self.results, shard)

    def corpus_shards(self, wildcards=None) -> list[str]:
        return [self.corpus_shard(s) for s in self.shard_ids]

    def vocab(self) -> str:
        """The vocabulary the features' word ids index (the corpus min count's)."""
        return corpus_vocab(self.results, self.config["corpus"]["min_count"])

    # ------------------------------------------------------------ teacher outputs
    def dir(self, teacher: str) -> str:
        return f"{self.results}/teacher/{teacher}"

    def mlm_head(self, teacher: str) -> str:
        return f"{self.dir(teacher)}/mlm_head.pt"

    def mlm_head_report(self, teacher: str) -> str:
        return f"{self.dir(teacher)}/mlm_head.json"

    def features(self, teacher: str, fset: str, shard: str) -> str:
        return f"{self.dir(teacher)}/features/{fset}/{shard}/features.json"

    def all_features(self, teacher: str, fset: str, k: int | None = None) -> list[str]:
        return [self.features(teacher, fset, s) for s in self.shard_ids[: k or self.n_shards]]

    def model(self, teacher: str) -> str:
        return teacher_model(self.config, teacher)

    @property
    def recompute(self) -> bool:
        """``teacher.cache: recompute``: no stored passes; each reader (students, SemGloVe builders, ASE)
        runs the teacher over its corpus shards in its own job (features streamed, never on disk)."""
        return self.tc.get("cache", "store") == "recompute"

    def recompute_args(self, teacher: str) -> list[str]:
        """A student's flags for running the teacher itself (the pass's model, precision and batches)."""
        args = ["--teacher", self.model(teacher), "--dtype", self.tc.get("dtype", "auto"),
                "--batch-tokens", str(self.tc["batch_tokens"]), "--part-sentences", str(self.tc["part_sentences"])]
        if self.tc.get("max_length"):
            args += ["--max-length", str(self.tc["max_length"])]
        return args + ([] if self.tc["offline"] else ["--online"])

    @property
    def feature_threads(self) -> int:
        """Threads of one feature pass (config ``teacher.threads``; 2, as before the key, where it is absent)."""
        return int(self.tc.get("threads", 2))

    def feature_set(self, fset: str) -> dict:
        try:
            return self.tc["feature_sets"][fset]
        except KeyError:
            raise StaticvecError(f"feature set {fset!r} is not in config teacher.feature_sets") from None

    def semglove_pass(self) -> tuple[str, str] | None:
        """(teacher, feature set) of the pass the SemGloVe builders read; None without builders."""
        sc = self.config.get("cooc", {}).get("semglove")
        return (sc.get("teacher") or self.tc["default"], sc["feature_set"]) if sc else None

    def pass_spec(self, teacher: str, fset: str) -> dict:
        """What one pass of ``fset`` on ``teacher`` computes: the set's keys, except that the attention
        window and the MLM predictions, read by the SemGloVe builders alone, are computed only on the
        builders' pass. So the builders can share the students' set where teacher and inputs agree (the
        default: one forward per shard yields both), and the same set on another teacher (students
        only) does not pay for eager attention and the vocabulary projection."""
        fs = self.feature_set(fset)
        if (teacher, fset) != self.semglove_pass():
            fs = {k: v for k, v in fs.items() if k not in ("attention_window", "mlm_topk")}
        return fs

    # ------------------------------------------------------------ decisions
    def uses_fitted_head(self, teacher: str, fset: str | None = None) -> bool:
        """MLM predictions from a head we fit: the teacher ships none (or the config says always)."""
        if fset is not None and not self.pass_spec(teacher, fset).get("mlm_topk"):
            return False
        fit = self.tc.get("mlm_head", {}).get("fit", "auto")
        traits = teacher_traits(self.model(teacher))
        if fit == "never" or traits["causal"]:
            return False
        return fit == "always" or traits["mlm_head"] is False

    # ------------------------------------------------------------ flags
    def _teacher_args(self, teacher: str) -> list[str]:
        args = ["--teacher", self.model(teacher), *device_flags(self.config),
                "--dtype", self.tc.get("dtype", "auto"), "--batch-tokens", str(self.tc["batch_tokens"])]
        if self.tc.get("max_length"):
            args += ["--max-length", str(self.tc["max_length"])]
        return args + online_flags(self.config)

    def _vocab_args(self) -> list[str]:
        return vocab_args(self.config)

    def feature_args(self, teacher: str, fset: str) -> str:
        fs = self.pass_spec(teacher, fset)
        traits = teacher_traits(self.model(teacher))
        args = self._teacher_args(teacher) + self._vocab_args()
        layers = fs.get("layers", [-1])
        args += ["--context", fs.get("context", "sentence"),
                 "--layers", "all" if layers == "all" else (",".join(map(str, layers)) or "none"),
                 "--part-sentences", str(self.tc["part_sentences"]),
                 "--vector-dtype", fs.get("vector_dtype", "float16")]
        if self.tc.get("host_workers", "auto") != "auto":  # auto: the CLI's (a GPU job's threads)
            args += ["--host-workers", str(self.tc["host_workers"])]
        if not fs.get("special_tokens", True):
            args.append("--no-special-tokens")
        if fs.get("sentence_vectors"):
            args.append("--sentence-vectors")
        if fs.get("attention_window"):
            args += ["--attention-window", str(fs["attention_window"])]
        if fs.get("mlm_topk") and not traits["causal"]:  # a causal LM has no MLM predictions: skipped
            args += ["--mlm-topk", str(fs["mlm_topk"]), "--mlm-mode", self.tc.get("mlm_mode", "auto"),
                     "--mlm-masking", self.tc.get("mlm_masking", "whole_word")]
        if fs.get("ase"):
            ase = self.tc.get("ase", {})
            args.append("--ase")
            if ase.get("words", "vocab") != "vocab":
                args += ["--ase-words", ase["words"]]
            if ase.get("max_words"):
                args += ["--ase-max-words", str(ase["max_words"])]
        return shlex.join(args)

    def fit_head_args(self, teacher: str) -> str:
        h = self.tc.get("mlm_head", {})
        args = self._teacher_args(teacher)
        for key in ("mode", "train_positions", "heldout_positions", "select_prob", "epochs", "lr",
                    "batch_positions", "seed"):
            if key in h:
                args += ["--" + key.replace("_", "-"), str(h[key])]
        return shlex.join(args)

    def baseline_args(self, teacher: str) -> str:
        return shlex.join(self._teacher_args(teacher) + self._vocab_args())

    def ase_uses_evaluation_words(self, k: int) -> bool:
        """The whole corpus's ASE also embeds the evaluation words outside the vocabulary (word alone)."""
        ase = self.tc.get("ase", {})
        return k == self.n_shards and bool(ase.get("fallback_word")) and bool(ase.get("evaluation_words", False))

    def ase_args(self, teacher: str, k: int) -> str:
        """`baseline ase` flags over the first k shards. Only the whole corpus needs the word-alone
        fallback: a fraction's table is cut to the fraction's own vocabulary (its words are all met).
        In recompute mode also the ASE pass's own settings (the job runs it: ``--shards``)."""
        from staticvec.dag.arguments import data_dir_from_config

        args = self._teacher_args(teacher) + self._vocab_args()
        if self.recompute:
            fs, ase = self.feature_set(self.tc["ase"]["feature_set"]), self.tc.get("ase", {})
            args += ["--part-sentences", str(self.tc["part_sentences"])]
            if not fs.get("special_tokens", True):
                args.append("--no-pass-special-tokens")
            if ase.get("words", "vocab") != "vocab":
                raise StaticvecError("teacher.cache: recompute computes ASE over the vocabulary's words "
                                     "(teacher.ase.words: vocab); a word list needs stored passes")
            if ase.get("max_words"):
                args += ["--ase-max-words", str(ase["max_words"])]
        if k == self.n_shards and self.tc.get("ase", {}).get("fallback_word"):
            args.append("--fallback-word")
        if self.ase_uses_evaluation_words(k):
            args += ["--evaluation-data", data_dir_from_config(self.config),
                     "--evaluation-tasks", *self.config.get("evaluation", {}).get("tasks", ["all"])]
            if self.config["corpus"].get("lowercase", True):
                args.append("--lowercase-evaluation-words")
        return shlex.join(args)

    # ------------------------------------------------------------ which pass serves which reader
    @staticmethod
    def student_feature_set(params: dict) -> str:
        """The set a distillation student or Tokenlearn reads (its training rule's inputs and the passes' readers): the
        teacher inputs of its ``context`` parameter (``sentence`` | ``paragraph``), ``sentence`` for a
        student without one (the trainer's side: ``staticvec.train.student.Student.context_of``)."""
        return params.get("context", "sentence")

    def computes(self, teacher: str, fset: str) -> str:
        """What one pass of ``fset`` computes, in words (from the same flags the rule passes)."""
        fs = self.pass_spec(teacher, fset)
        traits = teacher_traits(self.model(teacher))
        layers = fs.get("layers", [-1])
        what = [f"{fs.get('context', 'sentence')} context"]
        if layers == "all":
            what.append("word vectors of every layer")
        elif layers:
            what.append("word vectors of layer(s) " + ",".join("last" if x == -1 else str(x) for x in layers))
        if fs.get("sentence_vectors"):
            what.append("sentence vectors")
        if fs.get("attention_window"):
            what.append(f"attention ±{fs['attention_window']}")
        if fs.get("mlm_topk") and not traits["causal"]:
            mode = self.tc.get("mlm_mode", "auto")
            if mode == "auto":
                mode = "unmasked (fitted head)" if self.uses_fitted_head(teacher, fset) else "masked"
            if mode == "masked":
                mode += f" ({self.tc.get('mlm_masking', 'whole_word').replace('_', '-')})"
            what.append(f"MLM top-{fs['mlm_topk']} {mode}")
        if fs.get("ase"):
            what.append("ASE sums (all layers)")
        if not fs.get("special_tokens", True):
            what.append("no special tokens")
        return ", ".join(what)

    def passes(self, sheet=None) -> list[dict]:
        """Every teacher pass the config asks for: ``{teacher, set, computes, readers}``.

        ``sheet`` (an :class:`~staticvec.sheets.EmbeddingSheet`): readers are its embeddings; without
        it, the readers are named by method. Sets nobody reads are not listed (no job runs them).
        """
        default = self.tc["default"]
        readers: dict[tuple[str, str], list[str]] = {}

        def add(teacher, fset, who):
            readers.setdefault((teacher or default, fset), []).append(who)

        sc = self.config.get("cooc", {}).get("semglove")
        ase_set = self.tc.get("ase", {}).get("feature_set")
        if sheet is not None:
            for eid in sheet.ids():
                spec = sheet[eid]
                if spec.method in feature_reader_methods():
                    add(spec.teacher, self.student_feature_set(spec.params), eid)
                elif spec.method == "semglove" and sc:
                    add(sc.get("teacher"), sc["feature_set"], eid)
                elif spec.method == "ase" and ase_set:
                    add(spec.teacher, ase_set, eid)
        else:
            if sc:
                add(sc.get("teacher"), sc["feature_set"], "SemGloVe builders")
            for method in feature_reader_methods():
                sets = _student_feature_sets(method)
                for fset in sets:
                    add(None, fset, method if len(sets) == 1 else f"{method} {fset}")
            if ase_set:
                add(None, ase_set, "ase")
        out = []
        for (teacher, fset), who in sorted(readers.items()):
            out.append({"teacher": teacher, "set": fset, "computes": self.computes(teacher, fset),
                        "readers": who, "shards": self.n_shards})
        return out

    def describe_passes(self, sheet=None) -> str:
        """The plan as text: one block per (teacher, feature set)."""
        lines = []
        for p in self.passes(sheet):
            lines.append(f"teacher {p['teacher']} / set {p['set']} ({p['shards']} shard passes): {p['computes']}")
            lines.append("    read by: " + ", ".join(p["readers"]))
        return "\n".join(lines)
