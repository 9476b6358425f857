"""The functions the rule files hand to Snakemake (inputs, params, targets) where a rule needs more
than one planning object: the sheet and paths (:class:`~staticvec.dag.workflow.Workflow`), the teacher
stage (:class:`~staticvec.dag.teacher.TeacherPlan`) and SemGloVe's stores
(:class:`~staticvec.dag.semglove.SemgloveRules`). Rule files hold rules only (``snakemake
--lint``); each function here takes Snakemake's ``wildcards`` (and ``input``/``output`` where it
reads them) and returns a path, a list of paths or a flag string.
"""

from __future__ import annotations

import json
import os
import shlex

from staticvec.dag import arguments
from staticvec.dag import post as post_targets
from staticvec.dag.common import device_flags, leading_shards_for_sentences, online_flags
from staticvec.dag.costs import CostModel
from staticvec.dag.lanes import Lanes, item_of
from staticvec.dag.paths import RulePaths
from staticvec.errors import StaticvecError
from staticvec.methods import REGISTRY, trainer_params


class RuleFunctions:
    def __init__(self, config: dict, workflow, teacher_plan, semglove_rules):
        self.config = config
        self.W, self.TP, self.SG = workflow, teacher_plan, semglove_rules
        self.R = workflow.results_dir
        self.P = RulePaths(self.R)
        tagging = config.get("tagging", {})
        self.tagging = tagging
        self.tag_tasks = tagging.get("tasks", ["chunk", "pos", "ner"])
        # the planning model: every rule's threads, memory and runtime, the GPU routing, and how many
        # shards a SemGloVe builder job takes (so that a GPU allocation carries work)
        self.costs = CostModel(config, workflow, teacher_plan, semglove_rules, root=workflow.root)
        fractions = self._semglove_fraction_shards() if self.costs.recompute and self.costs.gpu_run else []
        semglove_rules.set_part_size(self.costs.semglove_shards_per_job(fractions), fractions)
        # config plan.lanes: the Artetxe tables and MLM word stores made a few at a time (staticvec.dag.lanes)
        self.lanes = Lanes(config, workflow, semglove_rules, self.costs)

    def _semglove_fraction_shards(self) -> list[int]:
        """The shard counts of the corpus fractions whose SemGloVe stores are merged (the whole corpus too);
        a sweep point whose fraction is not whole shards is left out (it is an error only if targeted)."""
        counts = {self.TP.n_shards}
        for emb in self.W.sheet.ids():
            if self.W.spec(emb).method == "semglove":
                try:
                    counts.add(len(self.W.emb_shard_ids(emb)))
                except StaticvecError:
                    continue
        return sorted(counts)

    # ------------------------------------------------------------ the planning model's requests
    def threads(self, rule: str, **fixed):
        """A rule's ``threads:`` (staticvec.dag.costs.CostModel)."""
        return self.costs.threads(rule, **fixed)

    def resources(self, rule: str, **fixed) -> dict:
        """A rule's ``resources:``: mem_mb, runtime, and a GPU where the model routes the rule to one."""
        return self.costs.resources(rule, **fixed)

    def output(self, rule: str, path: str):
        """A rule's output, temporary (deleted once every job reading it has run) where config plan.temporary
        lists the rule (paper.yaml: the Artetxe sweep's tables and the MLM word stores); kept otherwise."""
        return self.costs.output(rule, path)

    # ------------------------------------------------------------ generic
    @property
    def device(self) -> str:
        """The run's device (GloVe's rule passes it as ``--device {params.device}``)."""
        return device_flags(self.config)[1]

    @staticmethod
    def parent_dir(wildcards, output) -> str:
        """The directory of a rule's first output (commands that write a directory of files)."""
        return os.path.dirname(output[0])

    def emb_teacher(self, wildcards) -> str:
        return self.W.spec(wildcards.emb).teacher

    # ------------------------------------------------------------ resources
    def fetch_member(self, wildcards):
        return self.W.member_by_path(wildcards.rel_path)

    # ------------------------------------------------------------ corpus
    def extract_inputs(self, wildcards) -> dict:
        return self.W.extract_inputs(wildcards.corpus_input)

    def extract_flags(self, wildcards) -> str:
        return self.W.extract_flags(wildcards.corpus_input)

    def tokenize_source(self, wildcards) -> str:
        return self.W.tokenize_source(wildcards.corpus_input)

    @staticmethod
    def corpus_out_dir(wildcards, output) -> str:
        """The directory of the corpus outputs (that of the whole corpus' counts)."""
        return os.path.dirname(output.total)

    def fraction_counts(self, wildcards) -> list[str]:
        """The per-shard word counts of the corpus ({frac} '') or of a fraction ({frac} '.KofN')."""
        return self.W.shard_counts_all(wildcards.frac)

    def fraction_vocab(self, wildcards) -> str:
        return self.W.vocab(frac=wildcards.frac)

    # ------------------------------------------------------------ window co-occurrences
    def window_shard_stores(self, wildcards) -> list[str]:
        return self.SG.window_shard_stores(wildcards.frac, wildcards.window)

    # ------------------------------------------------------------ teacher stage
    def fit_head_args(self, wildcards) -> str:
        return self.TP.fit_head_args(wildcards.teacher)

    def teacher_pass_description(self, wildcards) -> str:
        return self.TP.computes(wildcards.teacher, wildcards.fset)

    def ase_features(self, wildcards) -> list[str]:
        """What ASE reads over the first k shards: their stored passes, or (recompute) the corpus shards."""
        k = int(wildcards.k)
        if self.TP.recompute:
            return [self.TP.corpus_shard(s) for s in self.TP.shard_ids[:k]]
        return self.TP.all_features(wildcards.teacher, self.config["teacher"]["ase"]["feature_set"], k)

    def ase_source(self, wildcards, input, output) -> str:
        """--features of the stored passes, or --shards for the job to run the teacher on, with its running
        sums checkpointed beside the output directory (which a rerun clears; the checkpoint survives)."""
        if self.TP.recompute:
            checkpoint = os.path.dirname(output[0]) + ".checkpoint.npz"
            return shlex.join(["--shards", *input.features, "--checkpoint", checkpoint])
        return shlex.join(["--features", *input.features])

    def ase_evaluation_data(self, wildcards) -> list[str]:
        """The evaluation sets, when the ASE job also covers their words (whole corpus, teacher.ase.evaluation_words)."""
        return self.W.eval_markers() if self.TP.ase_uses_evaluation_words(int(wildcards.k)) else []

    def ase_args(self, wildcards) -> str:
        return self.TP.ase_args(wildcards.teacher, int(wildcards.k))

    def ase_embedding_inputs(self, wildcards) -> dict:
        return self.W.ase_embedding_inputs(wildcards.emb)

    def ase_embedding_command(self, wildcards, output) -> str:
        return self.W.ase_embedding_command(wildcards.emb, output[0])

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

    # ------------------------------------------------------------ SemGloVe
    def semglove_shard_inputs(self, wildcards) -> dict:
        return self.SG.shard_inputs(wildcards.shard)

    def semglove_shard_stores(self, wildcards) -> list[str]:
        """A variant's per-shard stores over the corpus or a fraction (rules without {frac}: the corpus)."""
        return self.SG.shard_stores(wildcards.variant, wildcards.get("frac", ""))

    def semglove_fraction_vocab(self, wildcards) -> str:
        return self.SG.vocab(wildcards.frac)

    def semglove_words_inputs(self, wildcards) -> dict:
        """The piece store and vocabulary (and the window gate), and with plan.lanes what the GloVe runs of the
        store before this one in its lane write (staticvec.dag.lanes)."""
        inputs = self.SG.words_inputs(wildcards.variant, wildcards.frac)
        after = self.lanes.after("semglove_words", item_of("semglove_words", wildcards))
        return {**inputs, "after": after} if after else inputs

    def semglove_words_args(self, wildcards) -> str:
        return self.SG.words_args(wildcards.frac)

    def semglove_restricted_pairs(self, wildcards) -> str:
        """sdR: the pairs of the variant it restricts (its `pairs_of`), values from GloVe's window counts."""
        return self.SG.store(self.SG.variants[wildcards.variant]["pairs_of"], wildcards.frac)

    def semglove_window_store(self, wildcards) -> str:
        return self.SG.window_store(wildcards.frac)

    def table5_inputs(self, wildcards) -> dict:
        """SemGloVe Table 5: GloVe's window counts and the sd/md stores the config builds, the vocabulary, the pairs."""
        SG = self.SG
        stores = {f"semglove_{v}": SG.store(v) for v in ("sd", "md") if v in SG.variants}
        return {"glove": SG.window_store(), "vocab": SG.vocab(), **stores, "pairs": SG.table5_pairs()}

    @staticmethod
    def table5_store_args(wildcards, input) -> str:
        return " ".join(f"--store {k} {v}" for k, v in input.items() if k not in ("vocab", "pairs"))

    # ------------------------------------------------------------ training
    def emb_vocab(self, wildcards) -> str:
        """The vocabulary an embedding is trained on: its corpus fraction's own (the store's ids)."""
        return self.W.emb_vocab(wildcards.emb)

    def emb_shards(self, wildcards) -> list[str]:
        return [self.W.shard(s) for s in self.W.emb_shard_ids(wildcards.emb)]

    @staticmethod
    def model_output_flag(wildcards, output) -> str:
        """--model: the trainer also keeps its model (BERT + Skip-gram's projection and context table)."""
        return f"--model {output.model}"

    def bert_sg_attention_args(self, wildcards) -> str:
        """The teacher (for the sentence's pieces) and the figures sheet's attention sentences."""
        teacher = self.W.teacher_model(self.W.spec(wildcards.emb).teacher)
        return shlex.join(["--teacher", teacher, *device_flags(self.config), *online_flags(self.config)]) + " " + \
            self.W.attention_sentence_args()

    def glove_store(self, wildcards) -> str:
        """GloVe's window counts of the entry's corpus fraction, or the SemGloVe variant's store."""
        spec, params, frac = self.W.spec(wildcards.emb), self.W.params(wildcards.emb), self.W.frac(wildcards.emb)
        if spec.method == "semglove":
            return self.SG.store(params["variant"], frac)
        return self.SG.window_store(frac, params["window"])

    def train_command(self, wildcards) -> str:
        """The entry's `staticvec train` command (the method registry's)."""
        return REGISTRY[self.W.spec(wildcards.emb).method].command

    def same_run_inputs(self, wildcards) -> dict[str, str]:
        """The base run a sweep point repeats (``Workflow.same_run``): its vectors and record."""
        return self.W.same_run_inputs(wildcards.emb, wildcards.seed)

    def same_run_base(self, wildcards) -> str:
        return self.W.same_run(wildcards.emb)

    def method_params(self, wildcards) -> str:
        """``--params JSON``: the entry's resolved row less its method's workflow keys (the trainer builds
        its dataclass from it; a key left out takes the dataclass's default)."""
        spec = self.W.spec(wildcards.emb)
        return shlex.join(["--params", json.dumps(trainer_params(spec.method, self.W.params(wildcards.emb)),
                                                  sort_keys=True)])

    def teacher_job_args(self, wildcards) -> str:
        """The flags of a job that loads the entry's teacher itself (``staticvec train model2vec``, ``tokenlearn``):
        the teacher, the run's device and offline setting."""
        spec = self.W.spec(wildcards.emb)
        args = ["--teacher", self.W.teacher_model(spec.teacher or self.config["teacher"]["default"]),
                *device_flags(self.config)]
        return shlex.join(args + online_flags(self.config))

    def tokenlearn_data(self, wildcards) -> dict:
        """Tokenlearn's data: the corpus shards (the sentences' text) of its fraction and their stored teacher pass
        (the students' sentence set: the targets). It reads the first ``max_sentences`` sentences, so only the
        leading shards that surely hold them (at paper scale 8 of 256: the other shards' passes are neither run nor
        stored; the default's 8 shards all). The same for an entry and the entry whose distillation it reads."""
        W = self.W
        spec, params, shards = W.spec(wildcards.emb), W.params(wildcards.emb), W.emb_shard_ids(wildcards.emb)
        shards = shards[:leading_shards_for_sentences(self.config, len(shards), params.get("max_sentences"))]
        return {
            "shards": [W.shard(s) for s in shards],
            "features": self.TP.all_features(spec.teacher, self.TP.student_feature_set(params), len(shards)),
        }

    def tokenlearn_inputs(self, wildcards) -> dict:
        """A Tokenlearn seed's inputs: its data, the distillation it trains from (once for every seed and every entry
        with the same: ``Workflow.tokenlearn_distillation``) and the vocabulary its vectors are written over."""
        W = self.W
        return {**self.tokenlearn_data(wildcards),
                "distilled": W.tokenlearn_distilled(W.tokenlearn_distillation(wildcards.emb)),
                "vocab": W.emb_vocab(wildcards.emb)}

    def tokenlearn_distill_params(self, wildcards) -> str:
        """``--params JSON`` of the distillation: only what it depends on (``DISTILLATION_KEYS``), so that a change
        of the training's own parameters (``max_epochs``) does not distil again."""
        from staticvec.train.tokenlearn import DISTILLATION_KEYS

        params = self.W.params(wildcards.emb)
        return shlex.join(["--params", json.dumps({k: params[k] for k in DISTILLATION_KEYS if k in params},
                                                  sort_keys=True)])

    def student_inputs(self, wildcards) -> dict:
        """A student's teacher features (stored passes, with the vocabulary their ids index) or, with
        ``teacher.cache: recompute``, its corpus shards (it runs the teacher itself), its vocabulary,
        and the development set of a curve."""
        W = self.W
        spec, params = W.spec(wildcards.emb), W.params(wildcards.emb)
        k = len(W.emb_shard_ids(wildcards.emb))
        if self.TP.recompute:
            source = {"shards": [W.shard(s) for s in W.emb_shard_ids(wildcards.emb)]}
        else:
            source = {"features": self.TP.all_features(spec.teacher, self.TP.student_feature_set(params), k),
                      "feature_vocab": self.TP.vocab()}  # the vocabulary whose ids the features hold
        return {
            **source,
            "vocab": W.emb_vocab(wildcards.emb),  # a corpus fraction's own vocabulary (features remapped to it)
            **W.dev_curve_inputs(wildcards.emb),  # Wang Figure 5: a dev set scored during training
        }

    def student_source(self, wildcards, input) -> str:
        """Where a student's teacher features come from: ``--features`` (stored, with ``--feature-vocab``), or
        ``--shards`` and the teacher's settings (recompute: the teacher runs in this job)."""
        every_sentence = self.W.params(wildcards.emb).get("sentence_length_filter") is False
        if self.TP.recompute:
            teacher = self.W.spec(wildcards.emb).teacher or self.config["teacher"]["default"]
            return shlex.join(["--shards", *input.shards, *self.TP.recompute_args(teacher)] +
                              (["--all-sentences"] if every_sentence else []))
        if every_sentence:
            raise StaticvecError(f"embedding {wildcards.emb!r}: sentence_length_filter false needs teacher.cache: "
                                 "recompute (stored passes hold the corpus's kept sentences only)")
        return shlex.join(["--features", *input.features, "--feature-vocab", input.feature_vocab])

    def student_args(self, wildcards) -> str:
        """A distillation job's flags: checkpoint interval (seconds), device, development curve."""
        params = self.W.params(wildcards.emb)
        return shlex.join(["--checkpoint-every", str(params["checkpoint_every"]), *self.student_device_flags(wildcards)]) + \
            " " + self.W.dev_curve_args(wildcards.emb)

    def student_device_flags(self, wildcards) -> list[str]:
        """``--device``: the run's; on a GPU job that runs the teacher itself, ``--device cpu --teacher-device``
        (the run's) where the fast CPU engine on the job's cores trains faster than the GPU's autograd engine
        (the measured rates: CostModel.student_trains_on_host)."""
        from staticvec.methods import REGISTRY

        method = self.W.spec(wildcards.emb).method
        job = self.costs.job(REGISTRY[method].rule, wildcards)
        if job.device == "gpu" and self.TP.recompute and self.costs.student_trains_on_host(method, job.threads):
            return ["--device", "cpu", "--teacher-device", device_flags(self.config)[1]]
        return device_flags(self.config)

    # ------------------------------------------------------------ evaluation
    def protocol_options(self, wildcards) -> str:
        """The options of one protocol's intrinsic evaluation (the per-protocol rule)."""
        return shlex.join(arguments.cli_options(self.config, wildcards.protocol))

    def table_inputs(self, wildcards) -> list[str]:
        return self.W.table_inputs(f"{wildcards.paper}_{wildcards.table}")

    def table_result_args(self, wildcards) -> str:
        return self.W.table_result_args(f"{wildcards.paper}_{wildcards.table}")

    def first_seed_embedding(self, wildcards) -> str:
        """The embedding of the first training seed (classification runs its own seeds on it)."""
        return self.W.embedding(wildcards.emb, self.W.seeds(wildcards.emb)[0])

    def classification_args(self, wildcards) -> str:
        """The classify flags of one row: its classifier seeds (``Workflow.extrinsic_seeds``) and the settings."""
        return arguments.config_arguments(self.config, self.W.extrinsic_seeds(wildcards.emb, "classification"))

    def intrinsic_options(self, protocols, seeds):
        """The params function of the job scoring ``protocols`` of the ``seeds`` of one embedding: every
        protocol's view and its result file per seed (the rule's outputs, in the order of the vector
        files), the data sets its readers read (``Workflow.intrinsic_sets``) and the shared options."""
        protocols, seeds = tuple(protocols), tuple(seeds)

        def options(wildcards, output) -> str:
            outputs = [{p: getattr(output, self.W.intrinsic_output_name(p, s)) for p in protocols} for s in seeds]
            return shlex.join(arguments.multi_cli_options(self.config, outputs, self.W.intrinsic_sets(wildcards.emb)))

        return options

    # ------------------------------------------------------------ post-processing
    def post_base(self, wildcards) -> str:
        return self.W.embedding(self.W.spec(wildcards.emb).base, wildcards.seed)

    def artetxe_inputs(self, wildcards) -> dict:
        """The vectors the transform reads, and with plan.lanes the intrinsic results of the Artetxe embedding before
        this one in its lane (staticvec.dag.lanes)."""
        after = self.lanes.after("post_artetxe", item_of("post_artetxe", wildcards))
        return {"vectors": self.post_base(wildcards), **({"after": after} if after else {})}

    def retrofit_lexicon(self, wildcards) -> str:
        return post_targets.lexicon_file(self.config, self.W.params(wildcards.emb)["lexicon"], self.R)

    def retrofit_options(self, wildcards) -> str:
        return post_targets.retrofit_options(self.config, self.W.params(wildcards.emb)["kind"])

    def artetxe_alpha(self, wildcards):
        return self.W.params(wildcards.emb)["alpha"]

    def artetxe_options(self) -> str:
        return post_targets.artetxe_options(self.config)

    def wordnet_dir(self) -> str:
        return post_targets.wordnet_dir(self.config)

    def wordnet_options(self) -> str:
        return post_targets.wordnet_options(self.config)

    # ------------------------------------------------------------ tagging
    def tag_result(self, emb: str = "{emb}", task: str = "{task}", seed="{seed}") -> str:
        return self.P.tagging_run(emb, task, seed)

    def tag_vectors(self, wildcards) -> str:
        """Tagger seed s reads the embedding of seed s (a deterministic method's one run otherwise)."""
        seeds = self.W.seeds(wildcards.emb)
        seed = int(wildcards.seed)
        return self.W.embedding(wildcards.emb, seed if seed in seeds else seeds[0])

    def tag_runs(self, wildcards) -> list[str]:
        seeds = self.W.extrinsic_seeds(wildcards.emb, "tagging")
        return [self.tag_result(wildcards.emb, task, seed) for task in self.tag_tasks for seed in seeds]

    def tag_data_inputs(self, wildcards) -> list[str]:
        return arguments.tag_data_inputs(self.config, wildcards.task, self.W)

    def tag_data_args(self, wildcards) -> str:
        return arguments.tag_data_arguments(self.config, wildcards.task, self.W)

    def tagger_args(self) -> str:
        return arguments.tagger_arguments(self.config)

    @property
    def tag_contextual_layer(self) -> int:
        return self.tagging.get("contextual_layer", -1)

    def tag_teacher_spec(self, wildcards) -> str:
        return self.W.teacher_model(wildcards.teacher)

    def tag_online_flag(self) -> str:
        return shlex.join(online_flags(self.config))

    # ------------------------------------------------------------ export
    def export_inputs(self, wildcards) -> dict:
        """The vectors of one seed, the run's provenance and that seed's intrinsic results (the card's scores)."""
        W = self.W
        W.check_export(wildcards.emb, wildcards.seed)  # an id of the sheet, a seed the run trains: before any job
        scores = W.export_scores(wildcards.emb, wildcards.seed)
        return {"vectors": W.embedding(wildcards.emb, wildcards.seed), "provenance": W.provenance_file,
                **{f"scores_{protocol}": path for protocol, path in scores.items()}}

    def export_args(self, wildcards, input) -> str:
        scores = [f"{key[len('scores_'):]}={path}" for key, path in input.items() if key.startswith("scores_")]
        return self.W.export_args(wildcards.emb) + " " + shlex.join(["--scores", *scores])

    # ------------------------------------------------------------ report
    def config_json(self) -> str:
        """The whole config, for the run manifest (a leaf: nothing reruns when it changes)."""
        return json.dumps(self.config, sort_keys=True, default=str)

    def ase_best_inputs(self, wildcards) -> list[str]:
        return [path for _, path in self.W.ase_best_results()]

    def ase_best_args(self, wildcards) -> str:
        """layer=result pairs of the best-layer sweep, and the metrics that choose."""
        results = " ".join(f"{layer}={path}" for layer, path in self.W.ase_best_results())
        metrics = " ".join(self.config["methods"]["ase"].get("best_layer", {}).get("metrics", []))
        return f"{results} --metrics {metrics}"

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
