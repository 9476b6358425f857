"""Paths and command-line options of the distillation trainers' rules (no torch import here).

An embedding is named ``<method>-<spec>`` and lives in ``<results>/embeddings/<name>/seed<N>/``
(``vectors.bin``, ``vectors.json``; BERT + Skip-gram and Context-to-Vec also ``model.pt``):

============ ===================================== ==========================================
method       spec                                  e.g.
============ ===================================== ==========================================
``x2static`` ``<sent|para>-<teacher>[-<variant>]`` ``x2static-para-minilm``, ``x2static-sent-minilm-released``
``bert_sg``  ``<teacher>[-<variant>]``             ``bert_sg-minilm``, ``bert_sg-minilm-dev-w3-attention``
``c2v``      ``<teacher>[-<variant>]``             ``c2v-minilm``, ``c2v-minilm-released``
============ ===================================== ==========================================

A variant is a key of ``methods.<method>.variants`` (hyper-parameter overrides, e.g. ``released``)
or, for ``bert_sg``, ``dev-w<W>-<aggregation>``: the Figure 4/5 sweeps, trained on the first
``sweep_fraction`` of the shards with that window and aggregation.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field

from staticvec.errors import StaticvecError
from staticvec.teacher.plan import TeacherPlan

METHODS = ("x2static", "bert_sg", "c2v")
COMMANDS = {"x2static": "x2static", "bert_sg": "bert-sg", "c2v": "c2v"}
FEATURE_SETS = {"sent": "sentence", "para": "paragraph"}
WORKFLOW_KEYS = ("threads", "checkpoint_every", "variants", "sweep_fraction", "sweep_windows",
                 "sweep_aggregations", "attention_sentences")
DEV = re.compile(r"^dev-w(\d+)-(attention|mean|pairs)$")


@dataclass
class StudentJob:
    method: str
    teacher: str
    feature_set: str
    variant: str | None = None
    n_shards: int = 0
    overrides: dict = field(default_factory=dict)


class StudentPlan:
    def __init__(self, config: dict):
        self.config = config
        self.methods = config.get("methods", {})
        self.results = config["results_dir"].rstrip("/")
        self.tp = TeacherPlan(config)
        self.teachers = sorted(config["teacher"]["models"], key=len, reverse=True)  # longest match first

    def section(self, method: str) -> dict:
        if method not in METHODS:
            raise StaticvecError(f"unknown distillation method {method!r} (known: {', '.join(METHODS)})")
        return self.methods.get(method, {})

    # ------------------------------------------------------------ names
    def parse(self, method: str, spec: str) -> StudentJob:
        section = self.section(method)
        rest, fset = spec, "sentence"
        if method == "x2static":
            context, _, rest = spec.partition("-")
            if context not in FEATURE_SETS:
                raise StaticvecError(f"x2static-{spec}: expected x2static-<sent|para>-<teacher>[-<variant>]")
            fset = FEATURE_SETS[context]
        teacher = next((t for t in self.teachers if rest == t or rest.startswith(t + "-")), None)
        if teacher is None:
            raise StaticvecError(f"{method}-{spec}: no teacher of teacher.models ({', '.join(self.teachers)}) in the name")
        variant = rest[len(teacher) + 1:] or None
        job = StudentJob(method, teacher, fset, variant, self.tp.n_shards)
        job.overrides = {"context": fset} if method == "x2static" else {}
        if variant is None:
            return job
        dev = DEV.match(variant) if method == "bert_sg" else None
        if dev:
            fraction = float(section.get("sweep_fraction", 0.25))
            job.n_shards = max(1, round(fraction * self.tp.n_shards))
            job.overrides.update({"window": int(dev.group(1)), "aggregation": dev.group(2)})
        elif variant in section.get("variants", {}):
            job.overrides.update(section["variants"][variant])
        else:
            raise StaticvecError(f"{method}-{spec}: variant {variant!r} is neither in methods.{method}.variants"
                                 + (" nor dev-w<W>-<attention|mean|pairs>" if method == "bert_sg" else ""))
        return job

    def embedding_dir(self, method: str, spec: str, seed) -> str:
        return f"{self.results}/embeddings/{method}-{spec}/seed{seed}"

    # ------------------------------------------------------------ inputs
    def features(self, method: str, spec: str) -> list[str]:
        job = self.parse(method, spec)
        return self.tp.all_features(job.teacher, job.feature_set, job.n_shards)

    def vocab(self, method: str) -> str:
        """The method's vocabulary file (the corpus rule writes vocab.min<N>.tsv)."""
        return f"{self.results}/corpus/vocab.min{self.hyper(method).get('min_count', 5)}.tsv"

    def feature_vocab(self) -> str:
        """The vocabulary the teacher rule gave the feature extraction (word ids of the features)."""
        return self.tp.vocab()

    # ------------------------------------------------------------ options
    def hyper(self, method: str, spec: str | None = None) -> dict:
        """Hyper-parameters of an embedding: the method's section, then its variant's overrides."""
        params = {k: v for k, v in self.section(method).items() if k not in WORKFLOW_KEYS}
        if spec is not None:
            params.update(self.parse(method, spec).overrides)
        return params

    def args(self, method: str, spec: str) -> str:
        section = self.section(method)
        args = ["--params", json.dumps(self.hyper(method, spec), sort_keys=True),
                "--threads", str(section.get("threads", 1)),
                "--checkpoint-every", str(section.get("checkpoint_every", 600)),
                "--device", self.config.get("device", "auto")]
        return shlex.join(args)

    def threads(self, method: str) -> int:
        return int(self.section(method).get("threads", 1))

    def attention_args(self, spec: str) -> str:
        job = self.parse("bert_sg", spec)
        args = ["--teacher", self.tp.model(job.teacher), "--device", self.config.get("device", "auto")]
        for sentence in self.section("bert_sg").get("attention_sentences", []):
            args += ["--sentence", sentence]
        if not self.config["teacher"].get("offline", True):
            args.append("--online")
        return shlex.join(args)

    # ------------------------------------------------------------ targets
    def specs(self, teacher: str | None = None) -> dict[str, list[str]]:
        """The embeddings the papers' tables and figures need, per method, for one teacher."""
        teacher = teacher or self.config["teacher"]["default"]
        out = {"x2static": [f"sent-{teacher}", f"para-{teacher}"], "bert_sg": [teacher], "c2v": [teacher]}
        bsg = self.section("bert_sg")
        windows = bsg.get("sweep_windows", [])
        aggs = bsg.get("sweep_aggregations", [])
        default_window = int(bsg.get("window", 5))
        out["bert_sg"] += [f"{teacher}-dev-w{w}-attention" for w in windows]  # Fig. 4
        out["bert_sg"] += [f"{teacher}-dev-w{default_window}-{a}" for a in aggs if a != "attention"]  # Fig. 5
        return out

    def targets(self, teacher: str | None = None, seeds=None) -> list[str]:
        seeds = seeds or self.config.get("seeds", [1])
        out = []
        for method, specs in self.specs(teacher).items():
            for spec in specs:
                out += [f"{self.embedding_dir(method, spec, s)}/vectors.bin" for s in seeds]
        teacher = teacher or self.config["teacher"]["default"]
        if self.section("bert_sg").get("attention_sentences"):
            out += [f"{self.embedding_dir('bert_sg', teacher, s)}/attention.json" for s in seeds]
        return out
