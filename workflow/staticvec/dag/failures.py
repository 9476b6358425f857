"""The first error of each failed job, on the console (the Snakefile's ``onerror``).

A rule writes its command's output to its log (``> {log} 2>&1``), so Snakemake's console shows a failed
job only as "Error in rule tokenize: ... log: <file> (check log file(s) for error details)": the clear message
(``staticvec corpus tokenize: error: my.jsonl, line 3: ...``) is in the log alone. When a run fails, this reads
Snakemake's own log for the failed jobs' logs and prints each one's error: the CLI's ``staticvec …: error:``
line with the lines that continue it, else the last line of a traceback, else the log's last line. Whole logs
(``--show-failed-logs``) would bury that line under a training job's progress lines.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

_RULE = re.compile(r"^Error in rule (\S+):$")
_LOG = re.compile(r"^\s+log: (.*) \(check log file\(s\) for error details\)$")
_CLI_ERROR = re.compile(r"^staticvec [\w -]+: error: ")
MAX_LINES = 12  # of one message (a config error lists its problems, one a line)


def failed_job_logs(snakemake_log: str) -> list[tuple[str, list[str]]]:
    """(rule, its log files) of every failed job that Snakemake's log text ``snakemake_log`` reports, in order."""
    failed, rule = [], None
    for line in snakemake_log.splitlines():
        found = _RULE.match(line)
        if found:
            rule = found.group(1)
            continue
        found = _LOG.match(line)
        if found and rule is not None:
            failed.append((rule, [p for p in found.group(1).split(", ") if p]))
            rule = None
    return failed


def first_error(job_log: str | os.PathLike) -> list[str]:
    """The error of a failed job's log, as lines (none when the log is missing or empty)."""
    try:
        lines = Path(job_log).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    for i, line in enumerate(lines):
        if _CLI_ERROR.match(line):
            message = [line]
            for more in lines[i + 1:i + MAX_LINES]:  # the lines that continue it ("  - " items)
                if not more.startswith("  "):
                    break
                message.append(more)
            return message
    text = [x for x in lines if x.strip()]
    return text[-1:]  # a traceback's last line names the exception; else what the command printed last


def print_failed_job_errors(log, out=None) -> int:
    """Print the error of each failed job of the run whose Snakemake log file(s) are ``log`` (a path or a list:
    what ``onerror`` is given); returns how many were printed."""
    out = out or sys.stderr
    paths = [log] if isinstance(log, (str, os.PathLike)) else list(log or [])
    printed = 0
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for rule, logs in failed_job_logs(text):
            for job_log in logs:
                lines = first_error(job_log)
                if lines:
                    print(f"Failed job {rule} ({job_log}):", *(f"    {x}" for x in lines), sep="\n", file=out)
                    printed += 1
    return printed
