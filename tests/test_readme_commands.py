"""Every shell command of the ```bash blocks of README.md, docs/*.md and config/README.md works as written after the
quick start (`make run`).

Each command runs from a shell in which nothing was activated (workflow_fixtures.plain_env: no
`snakemake` or `staticvec` on the PATH), in the repository, against the tests' tiny run (conftest.tiny_run),
mapped to it by the first rule of MAPPING that matches it. Every command must match a rule: a new kind of
command needs a rule here, never a skip. On top of the rules, for every command:

- `.venv/...` (a word starting so) is the virtual environment running these tests (`make test`'s `.venv`);
- `results/default/` (inside any word) is the tiny run's results directory;
- `make` runs with VENV set to that environment, whose set-up is not redone (`make -o VENV/.installed`);
- a command after `source .venv/bin/activate` in the same block runs in a shell that sourced it.

A command in the prose of any of these documents (an inline code span starting with a command word, not a synopsis
with `|`, `...` or an upper-case placeholder) must be one of the blocks' or the start of one. A command that several
documents show runs once (the first place it appears names it).

CONTRIBUTING.md's commands are not run: they are the developer's (this suite, and the golden-file update,
which rewrites tests/golden/ in the checkout), run by `make test` itself.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import pytest

from staticvec.plan.mirror import stand_in_override
from workflow_fixtures import REPO, TEST_CONFIG, plain_env

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

pytestmark = pytest.mark.slow  # the commands run against the tiny end-to-end run (minutes)

README = REPO / "README.md"
DOCUMENTS = [README, *sorted((REPO / "docs").glob("*.md")), REPO / "config" / "README.md"]
MAKEFILE = REPO / "Makefile"
VENV = Path(sys.prefix)
ACTIVATE = ("source", ".venv/bin/activate")
COMMAND_WORDS = ("make", "snakemake", "staticvec", "python", "pip", "source")
# Snakemake options after which a call runs no job of the whole workflow (a call with none of them and no
# target runs the whole workflow)
NOT_THE_WHOLE_WORKFLOW = ("targets", "dryrun", "unlock", "report", "lint", "list_rules", "summary")


@dataclass(frozen=True)
class Command:
    line: int  # in its document
    text: str  # as written, its comment removed
    words: tuple[str, ...]
    activated: bool  # an earlier line of its block sources .venv/bin/activate
    document: str = "README.md"  # relative to the repository

    @property
    def where(self) -> str:
        return f"{self.document}:{self.line}"

    @property
    def program(self) -> str:
        return self.words[0].removeprefix(".venv/bin/")


def bash_blocks(text: str) -> list[list[tuple[int, str]]]:
    """The lines (number, text) of each ```bash block, indented ones (in a list item) included."""
    blocks, current = [], None
    for number, line in enumerate(text.splitlines(), 1):
        fence = line.strip()
        if current is None and fence == "```bash":
            current = []
        elif current is not None and fence == "```":
            blocks.append(current)
            current = None
        elif current is not None:
            current.append((number, line))
    assert current is None, "a ```bash block is not closed"
    return blocks


def readme_commands(text: str, document: str = "README.md") -> list[Command]:
    commands = []
    for block in bash_blocks(text):
        activated, pending, start = False, "", None
        for number, line in block:
            start = number if not pending else start
            if line.rstrip().endswith("\\"):  # a continued line
                pending += line.rstrip()[:-1] + " "
                continue
            words = tuple(shlex.split(pending + line, comments=True))
            pending = ""
            if not words:
                continue
            text_ = " ".join(shlex.quote(w) for w in words)
            commands.append(Command(start, text_, words, activated, document))
            activated = activated or words == ACTIVATE
    return commands


def prose_commands(text: str) -> list[str]:
    """Inline code spans outside the blocks that start with a command word and give it arguments."""
    prose = re.sub(r"^\s*```bash\n.*?^\s*```$", "", text, flags=re.S | re.M)
    spans = [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", prose)]
    synopsis = re.compile(r"\||\.\.\.|\b[A-Z]{2,}\b")  # `staticvec STAGE SUB ...`: a form, not a command
    return [s for s in spans if len(s.split()) > 1 and s.split()[0].removeprefix(".venv/bin/") in COMMAND_WORDS
            and not synopsis.search(s)]


# ---------------------------------------------------------------- the mapping


@dataclass(frozen=True)
class Rule:
    name: str
    how: str  # what the test does with a command of this rule, and why

    def matches(self, command: Command) -> bool:
        return MATCHERS[self.name](command)


def _option_value(words, option):
    return words[words.index(option) + 1] if option in words[:-1] else None


MAPPING = (
    Rule("activate", "sources the test interpreter's bin/activate (a venv's, as `make setup` makes); the rest of its "
                     "block runs after it"),
    Rule("suite", "`make test` is this suite, so it collects it only (PYTEST_ARGS=--collect-only)"),
    Rule("paper", "needs the papers' downloads and GPUs: planned only (--dry-run), on the offline data with empty "
                  "stand-ins for the rest (the golden DAG test's mirror); a SLURM profile without the SLURM plugin "
                  "installed plans with Snakemake's own dryrun executor"),
    Rule("download", "`pip install` downloads: not run; the extras it names are pyproject.toml's and the `pip` it "
                     "finds is the .venv's"),
    Rule("gpu-script", "a script that needs a GPU (--device cuda): not run; its options are ones its --help lists"),
    Rule("claims-scale", "`make claims` runs for hours and `make reference-claims` publishes a finished claims run: "
                         "their recipes are checked with `make -n` (the target exists, its commands are the .venv's "
                         "staticvec), not run; the claims config is planned by tests/test_claims_scale.py"),
    Rule("cluster", "starts a real SLURM cluster (root, Debian's packages, minutes): tests/test_slurm_cluster.py "
                    "runs it; here `make cluster-test`'s recipe is checked with `make -n` (the target exists and runs "
                    "that file), the local cluster script's options are ones its --help lists, and a command that "
                    "asks a running scheduler (staticvec plan slurm-orphans) shows its usage"),
    Rule("two-runs", "compares two runs' results: run with the tiny run as both (it must find them the same)"),
    Rule("python", "a Python one-liner: runs as written with the .venv's Python, in an empty temporary directory "
                   "(what it writes stays out of the checkout)"),
    Rule("workflow", "runs against the tiny run (SNAKEMAKE_ARGS or --configfile + tests/config/test.yaml and the "
                     "run's paths); one that would run the whole workflow (a Snakemake call without a target, "
                     "read from the make target's recipe, `make -n`) plans it only (--dry-run), the rest (a "
                     "target, unlock, report, the recipe's other lines) runs; the report and reference go to a "
                     "temporary directory"),
    Rule("staticvec", "runs as written, in a scratch directory linking the repository's top-level files (what it "
                      "writes, e.g. `export`'s files, stays out of the checkout)"),
)
MATCHERS = {
    "activate": lambda c: c.words == ACTIVATE,
    "suite": lambda c: c.words[:2] == ("make", "test"),
    "paper": lambda c: c.program in ("make", "snakemake") and "config/paper.yaml" in c.text,
    "download": lambda c: c.program == "pip",
    "gpu-script": lambda c: c.program == "python" and _option_value(c.words, "--device") == "cuda",
    "claims-scale": lambda c: c.program == "make" and c.words[1:2] in (("claims",), ("reference-claims",)),
    "cluster": lambda c: c.words[:2] == ("make", "cluster-test") or (c.program == "python" and c.words[1:2] == (
        "tests/cluster/local_slurm.py",)) or c.words[:3] == ("staticvec", "plan", "slurm-orphans"),
    "two-runs": lambda c: c.words[:3] == ("staticvec", "report", "same-outputs"),
    "python": lambda c: c.program == "python" and c.words[1:2] == ("-c",),
    "workflow": lambda c: c.program in ("make", "snakemake"),
    "staticvec": lambda c: c.program == "staticvec",
}


def rule_of(command: Command) -> Rule:
    for rule in MAPPING:
        if rule.matches(command):
            return rule
    raise AssertionError(f"{command.where}: `{command.text}` matches no rule of MAPPING: add one "
                         "(what the test runs for it, and why)")


# ---------------------------------------------------------------- running a command


def add_configfiles(words: list[str], extra: list[str]) -> list[str]:
    """Snakemake arguments with ``extra`` config files after their own (a second --configfile would
    replace the first), before a ``--`` that ends the options."""
    words = list(words)
    if "--configfile" in words:
        end = words.index("--configfile") + 1
        while end < len(words) and not words[end].startswith("-"):
            end += 1
        return words[:end] + extra + words[end:]
    at = words.index("--") if "--" in words else len(words)
    return words[:at] + ["--configfile", *extra] + words[at:]


def runs_the_whole_workflow(recipe: list[str]) -> bool:
    """Whether a line of a make recipe calls Snakemake without a target (or another option that runs no job)."""
    from snakemake.cli import get_argument_parser

    for line in recipe:
        words = shlex.split(line)
        if words and Path(words[0]).name == "snakemake":
            args, _ = get_argument_parser().parse_known_args(words[1:])
            if not any(getattr(args, option, None) for option in NOT_THE_WHOLE_WORKFLOW):
                return True
    return False


def substituted(word: str, results: Path) -> str:
    if word.startswith(".venv/"):
        word = f"{VENV}/{word.removeprefix('.venv/')}"
    return word.replace("results/default/", f"{results}/")


class Runner:
    """Maps README commands to the tiny run and runs them (shell, environment and paths of a new user)."""

    def __init__(self, tiny_run: dict, tmp: Path, stand_ins: Path):
        self.results = tiny_run["results"]
        self.tiny = [str(TEST_CONFIG), str(tiny_run["override"])]
        self.tmp = tmp
        self.paper = [str(stand_ins)]

    def shell(self, command: Command, words: list[str], cwd: Path = REPO) -> subprocess.CompletedProcess:
        line = shlex.join(words)
        if command.activated:
            line = f"source {shlex.quote(str(VENV / 'bin' / 'activate'))} && {line}"
        return subprocess.run(["bash", "-c", line], cwd=cwd, env=plain_env(), capture_output=True, text=True)

    def snakemake_words(self, words: list[str], paper: bool) -> list[str]:
        from snakemake.cli import get_argument_parser

        args, _ = get_argument_parser().parse_known_args(words)  # an unknown option: Snakemake's own error below
        words = add_configfiles(words, self.paper if paper else self.tiny)
        if paper or not any(getattr(args, option, None) for option in NOT_THE_WHOLE_WORKFLOW):
            words = ["--dry-run", *words]
        profile = args.workflow_profile or ""
        if paper and "slurm" in str(profile) and find_spec("snakemake_executor_plugin_slurm") is None:
            words = ["--executor", "dryrun", *words]
        return words

    def make_words(self, words: list[str], paper: bool) -> list[str]:
        targets = [w for w in words if "=" not in w]
        variables = dict(w.split("=", 1) for w in words if "=" in w)
        args = add_configfiles(shlex.split(variables.get("SNAKEMAKE_ARGS", "")), self.paper if paper else self.tiny)
        # DOCS: the reference targets regenerate the docs' passages; here they only check them (the checkout is
        # left as it is, and a stale passage fails the command as tests/test_docs.py fails)
        variables.update(VENV=str(VENV), REPORT=str(self.tmp / "report.html"), RUN=str(self.results),
                         REFERENCE=str(self.tmp / "reference"), SNAKEMAKE_ARGS=shlex.join(args), DOCS="--check README.md")
        plain = ["-o", f"{VENV}/.installed", *targets, *(f"{k}={v}" for k, v in variables.items())]
        if paper or runs_the_whole_workflow(self.recipe(plain)):
            variables["SNAKEMAKE_ARGS"] = shlex.join(["--dry-run", *args])
        return ["-o", f"{VENV}/.installed", *targets, *(f"{k}={v}" for k, v in variables.items())]

    def recipe(self, make_words: list[str]) -> list[str]:
        """The command lines that ``make`` would run (``make -n``: nothing is run); a make target that the
        Makefile does not have fails here."""
        shown = subprocess.run(["make", "-n", *make_words], cwd=REPO, env=plain_env(), capture_output=True, text=True)
        assert shown.returncode == 0, f"make -n {shlex.join(make_words)}:\n{shown.stdout}{shown.stderr}"
        return shown.stdout.splitlines()

    def run(self, command: Command) -> subprocess.CompletedProcess | None:
        rule = rule_of(command)
        words = [substituted(w, self.results) for w in command.words]
        if rule.name == "activate":
            assert (VENV / "bin" / "activate").is_file(), f"{VENV} has no bin/activate"
            return self.shell(command, words)
        if rule.name == "suite":
            return self.shell(command, [*words, "PYTEST_ARGS=--collect-only -q", f"VENV={VENV}", "-o",
                                        f"{VENV}/.installed"])
        if rule.name == "download":
            self.check_download(command, words)
            return None
        if rule.name == "gpu-script":
            self.check_options(command, words)
            return None
        if rule.name == "claims-scale":
            recipe = self.recipe(["-o", f"{VENV}/.installed", f"VENV={VENV}", *words[1:]])
            starts = [line.split()[0] for line in recipe if line.strip() and not line.startswith(("\t", " ", "#"))]
            assert starts and set(starts) <= {"staticvec"}, recipe  # the .venv's command, found on make's PATH
            return None
        if rule.name == "cluster" and command.program == "make":
            recipe = self.recipe(["-o", f"{VENV}/.installed", f"VENV={VENV}", *words[1:]])
            assert any("tests/test_slurm_cluster.py" in line for line in recipe), recipe
            return None
        if rule.name == "cluster" and command.program == "staticvec":  # asks the scheduler: its usage only
            helped = self.shell(command, [*words[:3], "--help"])
            assert helped.returncode == 0, helped.stdout + helped.stderr
            return None
        if rule.name == "cluster":
            self.check_options(command, words)
            return None
        if rule.name == "two-runs":
            return self.shell(command, [*words[:3], str(self.results), str(self.results)], cwd=self.scratch())
        if rule.name == "python":
            here = self.tmp / f"python-L{command.line}"
            here.mkdir(exist_ok=True)
            return self.shell(command, words, cwd=here)
        if rule.name in ("paper", "workflow") and command.program == "make":
            return self.shell(command, [words[0], *self.make_words(words[1:], rule.name == "paper")])
        if rule.name in ("paper", "workflow"):
            return self.shell(command, [words[0], *self.snakemake_words(words[1:], rule.name == "paper")])
        return self.shell(command, words, cwd=self.scratch())

    def scratch(self) -> Path:
        """A directory holding links to the repository's top-level files and folders, results/ and data/ aside."""
        scratch = self.tmp / "scratch"
        if not scratch.exists():
            scratch.mkdir()
            for entry in REPO.iterdir():
                if entry.name not in ("results", "data", ".snakemake", ".git"):
                    (scratch / entry.name).symlink_to(entry)
        return scratch

    def check_download(self, command: Command, words: list[str]) -> None:
        found = self.shell(command, ["command", "-v", words[0]])
        assert found.returncode == 0 and found.stdout.strip().startswith(f"{VENV}/"), (
            f"{command.where}: `{command.words[0]}` is not the .venv's here ({found.stdout.strip()!r})")
        extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
        for word in words:
            named = re.fullmatch(r"\.\[([\w,-]+)\]", word)
            if named:
                missing = set(named.group(1).split(",")) - set(extras)
                assert not missing, f"{command.where}: extras {sorted(missing)} are not in pyproject.toml"

    def check_options(self, command: Command, words: list[str]) -> None:
        helped = self.shell(command, [words[0], words[1], "--help"])
        assert helped.returncode == 0, helped.stdout + helped.stderr
        own = words[2:words.index("--")] if "--" in words else words[2:]  # after `--`: the command it runs
        unknown = [w for w in own if w.startswith("--") and not re.search(rf"{re.escape(w)}\b", helped.stdout)]
        assert not unknown, f"{command.where}: options not in {words[1]} --help: {unknown}"


def document_commands(documents=DOCUMENTS) -> list[Command]:
    """The commands of every document's blocks, each text once (where it first appears)."""
    seen, commands = set(), []
    for path in documents:
        for command in readme_commands(path.read_text(), str(path.relative_to(REPO))):
            key = (command.text, command.activated)
            if key not in seen:
                seen.add(key)
                commands.append(command)
    return commands


COMMANDS = document_commands()


@pytest.fixture(scope="module")
def runner(tiny_run, tmp_path_factory):
    if sys.prefix == sys.base_prefix:
        pytest.skip("the README's commands use the .venv of `make setup`; these tests run in no virtual environment")
    tmp = tmp_path_factory.mktemp("readme")
    stand_ins = stand_in_override([REPO / "config/config.yaml", REPO / "config/paper.yaml"], REPO, tmp)
    return Runner(tiny_run, tmp, stand_ins)


def test_the_documents_have_commands_and_each_matches_a_rule():
    assert len(COMMANDS) >= 10
    assert {c.document for c in COMMANDS} >= {"README.md", "docs/paper-scale.md", "docs/downloads.md"}
    for command in COMMANDS:
        rule_of(command)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: f"{c.where}:{rule_of(c).name}:{c.text}")
def test_a_readme_command_works_as_written(command, runner):
    done = runner.run(command)
    if done is not None:
        assert done.returncode == 0, (f"{command.where}: `{command.text}` ({rule_of(command).name}: "
                                      f"{rule_of(command).how}) failed with {done.returncode}:\n"
                                      f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(REPO)))
def test_commands_in_the_prose_are_commands_of_the_blocks(document):
    blocks = [" ".join((c.program, *c.words[1:])) for c in COMMANDS]
    loose = [s for s in prose_commands(document.read_text())
             if not any(f"{b} ".startswith(f"{s.removeprefix('.venv/bin/')} ") for b in blocks)]
    assert not loose, (f"{document.relative_to(REPO)}: commands in the prose that no ```bash block shows (so none is "
                       f"tested): {loose}")


def test_the_makefile_header_documents_every_make_target_of_the_readme():
    header = "\n".join(line for line in MAKEFILE.read_text().splitlines() if line.startswith("#"))
    for command in COMMANDS:
        if command.program == "make":
            target = next(w for w in command.words[1:] if "=" not in w)
            assert re.search(rf"make {re.escape(target)}\b", header), f"Makefile's header: no `make {target}`"


BROKEN = [  # each as a README line would be, broken the way a README goes stale
    "make target T=results/default/figures/semglove/figure9z.pdf",  # no such figure
    "make targte T=results/default/corpus/manifest.json",  # no such make target
    "snakemake --cores 2 results/default/corpus/manifest.json",  # plain snakemake, nothing activated
    ".venv/bin/snakemake --corez 2 results/default/corpus/manifest.json",  # no such flag
]


@pytest.mark.parametrize("text", BROKEN)
def test_a_broken_command_fails(text, runner):
    command = Command(0, text, tuple(shlex.split(text)), activated=False)
    try:
        done = runner.run(command)
    except AssertionError:
        return  # stopped by the runner's own check before running it (e.g. `make -n`: no such make target)
    assert done is not None and done.returncode != 0, done.stdout[-2000:]
