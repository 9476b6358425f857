"""The method registry: every method an entry of the embeddings sheet may name, and what the
workflow needs to know of it — where its defaults live in the config, whether it depends on a
random seed, whether it reads a teacher, which rule builds it and, for the trained methods, their
``staticvec train`` command and the keys of their parameters that steer the workflow, not the trainer.

Adding a method is one entry here, its module (a trainer with a CLI command) and a sheet row; the
sheet loader, the seeds, the rules' wildcard constraints and the teacher plan read this table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Method:
    name: str
    config_block: str | None  # methods.<block> holds its hyper-parameter defaults (None: none)
    seeded: bool  # depends on a random seed (trains once per seed)
    uses_teacher: bool  # reads a contextual teacher (the config's default one unless the entry names one)
    rule: str  # the rule that builds its embeddings
    student: bool = False  # a distillation student reading the teacher's stored features
    # reads the teacher's stored per-shard features (the students, Tokenlearn): a reader of a teacher pass
    # (which set: staticvec.dag.teacher.TeacherPlan.student_feature_set)
    reads_features: bool = False
    command: str | None = None  # its `staticvec train <command>` (training rules: the trainer of the entry)
    # keys of its resolved row that steer the workflow (the job's threads, the input picked), not the
    # trainer: left out of the --params JSON a training rule passes
    workflow_keys: tuple[str, ...] = ("threads",)
    # a distillation student's trainer, "module:ParamsClass:ModelClass" (its `staticvec train` command is built from
    # it: one override flag per field of the params class), and the command's one-line help
    trainer: str | None = None
    summary: str = ""


STUDENT_KEYS = ("threads", "checkpoint_every")  # checkpoint_every: seconds, the job's --checkpoint-every
# X2Static also: sentence_length_filter, which training sentences the job's teacher pass reads (its --all-sentences)
X2STATIC_KEYS = STUDENT_KEYS + ("sentence_length_filter",)

REGISTRY: dict[str, Method] = {m.name: m for m in [
    Method("glove", "glove", seeded=True, uses_teacher=False, rule="train_glove", command="glove",
           workflow_keys=("threads", "window")),  # window: the store it reads
    Method("semglove", "semglove", seeded=True, uses_teacher=True, rule="train_glove", command="glove",
           workflow_keys=("threads", "variant")),  # variant: the SemGloVe store it reads
    Method("skipgram", "skipgram", seeded=True, uses_teacher=False, rule="train_gensim_baseline", command="skipgram"),
    Method("cbow", "cbow", seeded=True, uses_teacher=False, rule="train_gensim_baseline", command="cbow"),
    Method("fasttext", "fasttext", seeded=True, uses_teacher=False, rule="train_gensim_baseline", command="fasttext"),
    Method("x2static", "x2static", seeded=True, uses_teacher=True, rule="train_student", student=True,
           reads_features=True, command="x2static", workflow_keys=X2STATIC_KEYS, trainer="staticvec.train.x2static:X2StaticParams:X2Static",
           summary="X2Static (Gupta & Jaggi 2021): CBOW-style distillation; sent/para from the features given"),
    Method("bert_sg", "bert_sg", seeded=True, uses_teacher=True, rule="train_bert_sg", student=True,
           reads_features=True, command="bert-sg",
           workflow_keys=STUDENT_KEYS, trainer="staticvec.train.bert_skipgram:BertSGParams:BertSkipGram",
           summary="BERT + Skip-gram (Wang, Cui & Zhang): contextual centre, attention over static context words"),
    Method("c2v", "c2v", seeded=True, uses_teacher=True, rule="train_student", student=True,
           reads_features=True, command="c2v",
           workflow_keys=STUDENT_KEYS, trainer="staticvec.train.context2vec:C2VParams:ContextToVec",
           summary="Context-to-Vec (Zheng et al. 2022): BERT + Skip-gram with the tied contextualized attention losses"),
    Method("model2vec", "model2vec", seeded=False, uses_teacher=True, rule="train_model2vec", command="model2vec"),
    # the tokenlearn library: Model2Vec fitted to the teacher's sentence vectors (stored pass) over the corpus
    Method("tokenlearn", "tokenlearn", seeded=True, uses_teacher=True, rule="train_tokenlearn", reads_features=True,
           command="tokenlearn"),
    Method("teacher_token", None, seeded=False, uses_teacher=True, rule="teacher_token_embedding"),
    Method("teacher_word", None, seeded=False, uses_teacher=True, rule="teacher_word_embedding"),
    Method("ase", "ase", seeded=False, uses_teacher=True, rule="ase_embedding"),
    Method("retrofit", None, seeded=True, uses_teacher=False, rule="post_retrofit"),  # as random as its base
    Method("artetxe", None, seeded=False, uses_teacher=False, rule="post_artetxe"),
    Method("external", None, seeded=False, uses_teacher=False, rule="external"),
]}


def trainer_params(method: str, row: dict) -> dict:
    """An entry's resolved row less the keys that steer the workflow: what its trainer's ``--params`` gets."""
    keys = REGISTRY[method].workflow_keys
    return {k: v for k, v in row.items() if k not in keys}


def methods_of_rule(rule: str) -> list[str]:
    """The methods whose embeddings a rule builds (its wildcard constraint)."""
    return [m.name for m in REGISTRY.values() if m.rule == rule]


def student_methods() -> list[str]:
    return [m.name for m in REGISTRY.values() if m.student]


def feature_reader_methods() -> list[str]:
    """The methods whose jobs read a teacher pass's stored features (students, Tokenlearn)."""
    return [m.name for m in REGISTRY.values() if m.reads_features]


def student_trainer(command: str):
    """(module, params class, model class) of the student whose `staticvec train` command is ``command``."""
    import importlib

    method = next(m for m in REGISTRY.values() if m.student and m.command == command)
    module_name, params_name, model_name = method.trainer.split(":")
    module = importlib.import_module(module_name)
    return module, getattr(module, params_name), getattr(module, model_name)
