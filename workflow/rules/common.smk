# Shared helpers for the rule files: config validation, the planning objects (every file name and
# flag of the DAG), software environments. Nothing here computes results; it only names files.
# (the planning layer, staticvec.dag; rule files name no path or flag themselves):
#   W   staticvec.dag.workflow.Workflow       the sheets, paths and targets
#   TP  staticvec.dag.teacher.TeacherPlan     the teacher stage's paths and flags
#   SG  staticvec.dag.semglove.SemgloveRules  the co-occurrence stores (window counts, SemGloVe), their flags and memory
#   P   staticvec.dag.paths.RulePaths         every rule's log and benchmark, and the outputs that are a rule's own
#   RF  staticvec.dag.rules.RuleFunctions     the input/params functions the rules pass to Snakemake

import sys
from pathlib import Path

# plan and run with this checkout's package, not whichever checkout the environment has installed (git worktrees
# sharing one venv would otherwise plan with one commit's code; the jobs get the same through PYTHONPATH below)
sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))
try:
    import staticvec  # noqa: F401
except ModuleNotFoundError:
    # one line, before any job (sys.exit: Snakemake prints the message alone, no traceback); the package's
    # own check (staticvec.dag.command) says the same where staticvec is importable but has no command
    sys.exit("staticvec is not installed for %s, the Python running this Snakemake: run `make setup` in the repository, "
             "then use the Makefile's targets (`make target T=FILE`), `.venv/bin/snakemake`, or `source .venv/bin/activate` first"
             % sys.executable)

from staticvec.config import check_config_files, validate_config
from staticvec.dag.command import plan_time_checks, put_command_first_on_path, use_checkout_package
from staticvec.dag.failures import print_failed_job_errors
from staticvec.dag.semglove import SemgloveRules
from staticvec.dag.rules import RuleFunctions
from staticvec.dag.teacher import TEACHER_PASS_MESSAGE, TeacherPlan
from staticvec.dag.workflow import Workflow

use_checkout_package(workflow.basedir)  # the jobs' `staticvec` imports this checkout's package too
put_command_first_on_path()  # the jobs run the `staticvec` of the Python running Snakemake, whatever the PATH
with plan_time_checks():  # a mistake found here: one message, no traceback, before any job
    check_config_files(workflow.configfiles)  # a key given twice in a config file: an error (Snakemake keeps the last)
    validate_config(config, sources="config/config.yaml + --configfile overrides")
    W = Workflow(config)
    W.check_corpus_inputs()  # your own corpus: each input's first lines readable in corpus.format, no empty input
    W.check_resources()  # one error listing every missing input (corpus, evaluation sets, lexicons, tagging data), before any job runs
    W.check_teachers()  # a teacher path that does not exist, or a hub model not cached in offline mode
    TP = TeacherPlan(config)
    SG = SemgloveRules(config)
    RF = RuleFunctions(config, W, TP, SG)
P = RF.P

# conda environments for --software-deployment-method conda (paths relative to workflow/rules/)
CPU_ENV = "../../envs/cpu.yaml"
GPU_ENV = "../../envs/cuda.yaml" if W.use_gpu else "../../envs/cpu.yaml"
SEMGLOVE_SHARD_ENV = GPU_ENV if SG.gpu else CPU_ENV  # the shard jobs run the teacher only in recompute mode


wildcard_constraints:
    seed=r"\d+",
    shard=r"\d{5}",
