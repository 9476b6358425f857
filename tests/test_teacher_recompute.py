"""teacher.cache: recompute (paper.yaml): every reader of the teacher — the students, the SemGloVe builders, ASE —
runs the teacher over its own corpus shards, so no teacher feature ever reaches the disk; the laptop default keeps
its stored passes (teacher.cache: store), whose commands are unchanged."""

import shlex

import pytest
import yaml

from staticvec.cli import build_parser
from staticvec.config import load_config
from staticvec.dag.rules import RuleFunctions
from staticvec.dag.semglove import SemgloveRules
from staticvec.dag.teacher import TeacherPlan
from staticvec.dag.workflow import Workflow


def rule_functions(repo_root, cache, length_filter=True):
    config = load_config([repo_root / "config/config.yaml"])
    config["teacher"]["cache"] = cache
    config["methods"]["x2static"]["sentence_length_filter"] = length_filter
    w = Workflow(config, repo_root)
    return RuleFunctions(config, w, TeacherPlan(config), SemgloveRules(config))


class Namespace(dict):
    __getattr__ = dict.__getitem__

    def keys(self):
        return super().keys()


def test_a_student_reads_stored_features_or_runs_the_teacher_itself(repo_root):
    wc = Namespace(emb="x2static_sent", seed="1")
    store = rule_functions(repo_root, "store")
    inputs = store.student_inputs(wc)
    assert len(inputs["features"]) == 8 and "shards" not in inputs
    source = store.student_source(wc, Namespace(inputs))
    assert source == shlex.join(["--features", *inputs["features"], "--feature-vocab", inputs["feature_vocab"]])

    recompute = rule_functions(repo_root, "recompute")
    inputs = recompute.student_inputs(wc)
    assert "features" not in inputs and "feature_vocab" not in inputs
    assert [s.rsplit("/", 1)[1] for s in inputs["shards"]] == [f"{i:05d}.tsv.gz" for i in range(8)]
    source = recompute.student_source(wc, Namespace(inputs))
    args = build_parser(["train"]).parse_args(["train", "x2static", *shlex.split(source), "--vocab", "V", "--out", "O"])
    assert args.shards == inputs["shards"] and args.teacher == "minilm" and not args.features
    assert args.batch_tokens == 8192 and args.part_sentences == 4096 and args.dtype == "auto"


def test_ase_reads_stored_sums_or_runs_its_pass(repo_root):
    wc = Namespace(teacher="minilm", k="8", n="8")
    out = ["results/default/teacher/minilm/baselines/ase-8of8/ase.json"]
    store = rule_functions(repo_root, "store")
    assert store.ase_source(wc, Namespace(features=store.ase_features(wc)), out).startswith("--features ")
    recompute = rule_functions(repo_root, "recompute")
    shards = recompute.ase_features(wc)
    assert shards == [f"results/default/corpus/shards/{i:05d}.tsv.gz" for i in range(8)]
    source = recompute.ase_source(wc, Namespace(features=shards), out)
    assert source == shlex.join(["--shards", *shards, "--checkpoint", "results/default/teacher/minilm/baselines/ase-8of8.checkpoint.npz"])
    args = build_parser(["teacher"]).parse_args(["teacher", "baseline", "ase", *shlex.split(recompute.ase_args(wc)),
                                                 "--vocab", "V", *shlex.split(source), "--out", "O"])
    assert args.shards == shards and args.part_sentences == 4096 and args.pass_special_tokens  # the sentence set's inputs


def test_paper_config_plans_no_stored_pass(repo_root):
    config = load_config([repo_root / "config/config.yaml", repo_root / "config/paper.yaml"])
    assert config["teacher"]["cache"] == "recompute" and TeacherPlan(config).recompute
    ase = TeacherPlan(config).ase_args("bert-base", 256)
    assert "--no-pass-special-tokens" in ase  # the released ASE code's input, as the stored `ase` pass had
    assert load_config([repo_root / "config/config.yaml"])["teacher"]["cache"] == "store"  # the laptop default


@pytest.mark.slow  # a few minutes: the teacher runs in the student, ASE and SemGloVe jobs
def test_recompute_runs_leave_no_teacher_feature_on_disk(tmp_path, shared_data):
    from test_workflow_e2e import TEST_CONFIG, snakemake

    results = tmp_path / "results"
    override = tmp_path / "recompute.yaml"
    override.write_text(yaml.safe_dump({
        "results_dir": str(results),
        "resources": {"download_dir": str(tmp_path / "data"), "mirror": str(shared_data)},
        "teacher": {"cache": "recompute"},
    }))
    targets = [results / "embeddings/bert_sg/seed1/vectors.bin", results / "teacher/minilm/baselines/ase-2of2/ase.json",
               results / "cooc/semglove/sd.cooc", results / "cooc/semglove/md.cooc"]
    plan = snakemake("-n", "--", *map(str, targets), configfiles=[TEST_CONFIG, override])
    assert "teacher_features" not in plan.stdout and "teacher minilm / set" not in plan.stdout  # no stored pass planned
    snakemake("--", *map(str, targets), configfiles=[TEST_CONFIG, override])
    assert all(t.exists() for t in targets)
    assert not list(results.glob("teacher/*/features")), "a teacher feature reached the disk"
    assert not list(results.glob("teacher/*/baselines/*.checkpoint.npz"))  # ASE's running sums go with the job
    record = yaml.safe_load((results / "embeddings/bert_sg/seed1/vectors.json").read_text())
    assert record["source"]["cache"] == "recompute"


def test_x2static_reads_every_sentence_of_its_paragraphs_when_the_length_filter_is_off(tmp_path, repo_root):
    """The 10-40-token filter is the corpus's keep flag; X2Static's paper value (paper.yaml) reads every sentence
    of the kept paragraphs; the default keeps the filter (and stored features read as before)."""
    from teacher_fixtures import write_shard

    from staticvec.teacher.features import FeatureSpec, iter_parts

    shard = write_shard(tmp_path / "s.tsv.gz", [[(True, "a b c"), (False, "too short"), (True, "d e")], [(False, "x")]])
    kept = [s for p in iter_parts(shard, "paragraph") for s in p.sentences]
    every = [s for p in iter_parts(shard, "paragraph", sentences="all") for s in p.sentences]
    assert kept == [["a", "b", "c"], ["d", "e"]]
    assert every == [["a", "b", "c"], ["too", "short"], ["d", "e"], ["x"]]
    assert "sentences" not in FeatureSpec().to_dict()  # stored features of the default: the same sidecar as before
    assert FeatureSpec(sentences="all").to_dict()["sentences"] == "all"

    paper = load_config([repo_root / "config/config.yaml", repo_root / "config/paper.yaml"])
    assert paper["methods"]["x2static"]["sentence_length_filter"] is False
    assert load_config([repo_root / "config/config.yaml"])["methods"]["x2static"]["sentence_length_filter"] is True
    wc = Namespace(emb="x2static_para", seed="1")
    store = rule_functions(repo_root, "store", length_filter=False)
    with pytest.raises(Exception, match="sentence_length_filter false needs teacher.cache: recompute"):
        store.student_source(wc, Namespace(store.student_inputs(wc)))
    recompute = rule_functions(repo_root, "recompute")
    assert "--all-sentences" not in recompute.student_source(wc, Namespace(recompute.student_inputs(wc)))
    recompute = rule_functions(repo_root, "recompute", length_filter=False)
    source = recompute.student_source(wc, Namespace(recompute.student_inputs(wc)))
    args = build_parser(["train"]).parse_args(["train", "x2static", *shlex.split(source), "--vocab", "V", "--out", "O"])
    assert args.all_sentences
    bert = recompute  # another student never reads the X2Static setting
    assert "--all-sentences" not in bert.student_source(Namespace(emb="bert_sg", seed="1"),
                                                        Namespace(bert.student_inputs(Namespace(emb="bert_sg", seed="1"))))
