"""The functions the rule files hand to Snakemake (inputs, params, targets) where a rule needs more
than one planning object: the sheet and paths (:class:`~staticvec.workflow.Workflow`), the teacher
stage (:class:`~staticvec.teacher.plan.TeacherPlan`) and SemGloVe's stores
(:class:`~staticvec.cooc.semglove_plan.SemgloveRules`). Rule files hold rules only (``snakemake
--lint``); each function here takes Snakemake's ``wildcards`` (and ``input``/``output`` where it
reads them) and returns a path, a list of paths or a flag string.
"""

from __future__ import annotations

import json
import os
import shlex

from staticvec.methods import REGISTRY, trainer_params


class RuleFunctions:
    def __init__(self, config: dict, workflow, teacher_plan, semglove_rules):
        self.config = config
        self.W, self.TP, self.SG = workflow, teacher_plan, semglove_rules
        self.R = workflow.results_dir
        tagging = config.get("tagging", {})
        self.tagging = tagging
        self.tag_seeds = tagging.get("seeds") or config.get("seeds", [1])
        self.tag_tasks = tagging.get("tasks", ["chunk", "pos", "ner"])
        self.tag_threads = tagging.get("threads", 1)
        self.device = config.get("device", "auto")

    # ------------------------------------------------------------ generic
    @staticmethod
    def parent_dir(wildcards, output) -> str:
        """The directory of a rule's first output (commands that write a directory of files)."""
        return os.path.dirname(output[0])

    def emb_teacher(self, wildcards) -> str:
        return self.W.spec(wildcards.emb).teacher

    # ------------------------------------------------------------ teacher stage
    def teacher_feature_inputs(self, wildcards) -> dict:
        inputs = {"shard": self.TP.corpus_shard(wildcards.shard), "vocab": self.TP.vocab()}
        if self.TP.uses_fitted_head(wildcards.teacher, wildcards.fset):
            inputs["head"] = self.TP.mlm_head(wildcards.teacher)
        return inputs

    def teacher_feature_args(self, wildcards, input) -> str:
        args = self.TP.feature_args(wildcards.teacher, wildcards.fset)
        return args + (f" --mlm-head {input.head}" if "head" in input.keys() else "")

    def teacher_baseline_args(self, wildcards) -> str:
        return self.TP.baseline_args(self.emb_teacher(wildcards))

    # ------------------------------------------------------------ training
    def glove_store(self, wildcards) -> str:
        """GloVe's window counts of the entry's corpus fraction, or the SemGloVe variant's store."""
        spec, params, frac = self.W.spec(wildcards.emb), self.W.params(wildcards.emb), self.W.frac(wildcards.emb)
        if spec.method == "semglove":
            return self.SG.store(params["variant"], frac)
        return self.SG.window_store(frac, params["window"])

    def train_command(self, wildcards) -> str:
        """The entry's `staticvec train` command (the method registry's)."""
        return REGISTRY[self.W.spec(wildcards.emb).method].command

    def method_params(self, wildcards) -> str:
        """``--params JSON``: the entry's resolved row less its method's workflow keys (the trainer builds
        its dataclass from it; a key left out takes the dataclass's default)."""
        spec = self.W.spec(wildcards.emb)
        return shlex.join(["--params", json.dumps(trainer_params(spec.method, self.W.params(wildcards.emb)),
                                                  sort_keys=True)])

    def train_threads(self, wildcards) -> int:
        """A training job's threads: the entry's `threads`, one where it asks to be `deterministic`
        (several threads' asynchronous updates make the vectors depend on timing)."""
        params = self.W.params(wildcards.emb)
        return 1 if params.get("deterministic") else int(params["threads"])

    def model2vec_args(self, wildcards) -> str:
        """The job's flags of ``staticvec train model2vec``: the entry's teacher, the run's device and offline setting."""
        spec = self.W.spec(wildcards.emb)
        args = ["--teacher", self.W.teacher_model(spec.teacher or self.config["teacher"]["default"]),
                "--device", self.device]
        return shlex.join(args + ([] if self.config["teacher"]["offline"] else ["--online"]))

    def student_inputs(self, wildcards) -> dict:
        W = self.W
        spec, params = W.spec(wildcards.emb), W.params(wildcards.emb)
        k = len(W.emb_shard_ids(wildcards.emb))
        return {
            "features": self.TP.all_features(spec.teacher, self.TP.student_feature_set(spec.method, params), k),
            "vocab": W.emb_vocab(wildcards.emb),  # a corpus fraction's own vocabulary (features remapped to it)
            "feature_vocab": self.TP.vocab(),  # the vocabulary whose ids the features hold
            **W.dev_curve_inputs(wildcards.emb),  # Wang Figure 5: a dev set scored during training
        }

    def student_args(self, wildcards) -> str:
        """A distillation job's flags: checkpoint interval (seconds), device, development curve."""
        params = self.W.params(wildcards.emb)
        return shlex.join(["--checkpoint-every", str(params["checkpoint_every"]), "--device", self.device]) + \
            " " + self.W.dev_curve_args(wildcards.emb)

    # ------------------------------------------------------------ evaluation
    def intrinsic_options(self, protocols):
        """The params function of the job scoring ``protocols`` of one embedding: every protocol's view
        and result file (the rule's outputs, named by protocol) and the shared options."""
        from staticvec.evaluate.intrinsic import multi_cli_options

        protocols = tuple(protocols)

        def options(wildcards, output) -> str:
            return shlex.join(multi_cli_options(self.config, {p: getattr(output, p) for p in protocols}))

        return options

    # ------------------------------------------------------------ post-processing
    def post_base(self, wildcards) -> str:
        return self.W.embedding(self.W.spec(wildcards.emb).base, wildcards.seed)

    def retrofit_lexicon(self, wildcards) -> str:
        from staticvec.post import targets as post_targets

        return post_targets.lexicon_file(self.config, self.W.params(wildcards.emb)["lexicon"], self.R)

    def retrofit_options(self, wildcards) -> str:
        from staticvec.post import targets as post_targets

        return post_targets.retrofit_options(self.config, self.W.params(wildcards.emb)["kind"])

    # ------------------------------------------------------------ tagging
    def tag_result(self, emb: str = "{emb}", task: str = "{task}", seed="{seed}") -> str:
        return f"{self.R}/eval/{emb}/tagging/{task}.seed{seed}.json"

    def tag_vectors(self, wildcards) -> str:
        """Tagger seed s reads the embedding of seed s (a deterministic method's one run otherwise)."""
        seeds = self.W.seeds(wildcards.emb)
        seed = int(wildcards.seed)
        return self.W.embedding(wildcards.emb, seed if seed in seeds else seeds[0])

    def tag_runs(self, wildcards) -> list[str]:
        return [self.tag_result(wildcards.emb, task, seed) for task in self.tag_tasks for seed in self.tag_seeds]

    def tag_teacher_spec(self, wildcards) -> str:
        return self.W.teacher_model(wildcards.teacher)

    def tag_online_flag(self) -> str:
        return "" if self.config.get("teacher", {}).get("offline", True) else "--online"

    # ------------------------------------------------------------ figures
    @staticmethod
    def figure_id(wildcards) -> str:
        return f"{wildcards.paper}_{wildcards.figure}"

    def figure_inputs(self, wildcards) -> dict:
        return self.W.figure_inputs(self.figure_id(wildcards))

    def figure_args(self, wildcards) -> str:
        return self.W.figure_args(self.figure_id(wildcards))

    def figure_title(self, wildcards) -> str:
        return self.W.figure_entry(self.figure_id(wildcards))["title"]

    def figure_note(self, wildcards) -> str:
        return self.W.figure_entry(self.figure_id(wildcards)).get("caption", "")
