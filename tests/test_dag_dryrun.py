"""Snakemake's dry run read back as planned jobs (staticvec.dag.dryrun): blocks, messages, fields."""

from staticvec.dag.dryrun import PlannedJob, planned_jobs

DRY_RUN = """Building DAG of jobs...
Job stats:
job            count
-----------  -------
all                1
train_glove        1
total              3

rule train_glove:
    input: results/x/cooc/window5.cooc
    output: results/x/embeddings/glove/seed1/vectors.bin, results/x/embeddings/glove/seed1/record.json
    log: results/x/logs/train/glove/seed1.log
    jobid: 4
    benchmark: results/x/benchmarks/train/glove/seed1.tsv
    reason: Forced execution
    wildcards: emb=glove, seed=1
    threads: 2
    resources: tmpdir=/tmp, mem_mb=900

Job 7: teacher minilm / set sentence / shard 00003: sentence context
Reason: Forced execution

localrule all:
    input: results/x/embeddings/glove/seed1/vectors.bin
    jobid: 0
    reason: Forced execution
    resources: tmpdir=/tmp
Job stats:
job            count
"""


def test_blocks_and_messages_in_printed_order():
    assert planned_jobs(DRY_RUN) == [
        PlannedJob(rule="train_glove",
                   output="results/x/embeddings/glove/seed1/vectors.bin, results/x/embeddings/glove/seed1/record.json",
                   wildcards="emb=glove, seed=1", input="results/x/cooc/window5.cooc",
                   benchmark="results/x/benchmarks/train/glove/seed1.tsv", threads=2),
        PlannedJob(rule=None, message="teacher minilm / set sentence / shard 00003: sentence context"),
        PlannedJob(rule="all", input="results/x/embeddings/glove/seed1/vectors.bin"),
    ]
    glove = planned_jobs(DRY_RUN)[0]
    assert glove.inputs == ["results/x/cooc/window5.cooc"] and glove.outputs[1].endswith("record.json")


def test_a_block_ends_at_the_first_unindented_line():
    # the "Reason:" line after a message and the stats table after a block carry no field of a job
    text = "rule a:\n    threads: 3\nthreads: 9\n    benchmark: b.tsv\nrule c:\n    output: o\n"
    assert planned_jobs(text) == [PlannedJob(rule="a", threads=3), PlannedJob(rule="c", output="o")]


def test_no_jobs():
    assert planned_jobs("Building DAG of jobs...\nNothing to be done (all requested files are present and up to date).\n") == []
