# Shared helpers for the rule files: config validation, the planning objects (every file name and
# flag of the DAG), software environments. Nothing here computes results; it only names files.
# (the planning layer, staticvec.dag; rule files name no path or flag themselves):
#   W   staticvec.dag.workflow.Workflow       the sheets, paths and targets
#   TP  staticvec.dag.teacher.TeacherPlan     the teacher stage's paths and flags
#   SG  staticvec.dag.semglove.SemgloveRules  the co-occurrence stores (window counts, SemGloVe), their flags and memory
#   P   staticvec.dag.paths.RulePaths         every rule's log and benchmark, and the outputs that are a rule's own
#   RF  staticvec.dag.rules.RuleFunctions     the input/params functions the rules pass to Snakemake

from staticvec.config import validate_config
from staticvec.dag.semglove import SemgloveRules
from staticvec.dag.rules import RuleFunctions
from staticvec.dag.teacher import TEACHER_PASS_MESSAGE, TeacherPlan
from staticvec.dag.workflow import Workflow

validate_config(config, sources="config/config.yaml + --configfile overrides")
W = Workflow(config)
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
