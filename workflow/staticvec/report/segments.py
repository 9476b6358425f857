"""A long run in several sittings: each sitting (segment) of a command, with its start, end, exit status, the
machine's load (``uptime``) at both ends and the machine it ran on, appended to ``<run>/segments.tsv``.

Hosts that report the same CPU model can differ in speed (2026-11-27: one AVX2 "AMD EPYC" VM took 2.4x the CPU
time per teacher job of another; ``benchmarks/README.md``), so each row also carries two figures that tell
sittings on different hosts apart: the host's speed at the start (``calibration_gflops``: a fixed fp32 matrix
product of the teacher's feed-forward shape on one thread, see :func:`calibration`) and the share of CPU time
the hypervisor gave to others during the sitting (``steal_pct``, from ``/proc/stat``). A run's sittings may
start from different commits, so each row names the one it started from (``commit``, as the
run's manifests name it: :func:`staticvec.report.provenance.git_commit`).

``staticvec report segment --run DIR -- COMMAND ...`` (``make claims``) writes the segment's row when it starts
(so a sitting ended by a hard kill or a lost machine still shows, without an end), runs the command in the
foreground (its output, e.g. Snakemake's progress, goes to the terminal), forwards SIGTERM / SIGHUP to it and
waits for it on Ctrl-C (Snakemake stops cleanly on the same SIGINT), then fills in the end. The run's
``timings.md`` lists the segments and sums their wall time (the span from the first job's start to the last
job's end would count the hours between sittings).
"""

from __future__ import annotations

import csv
import os
import platform
import signal
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

from staticvec.errors import InputFileError
from staticvec.report.provenance import git_commit

REQUIRED_FIELDS = ("segment", "start_utc", "end_utc", "wall_s", "exit", "uptime_start", "uptime_end", "host", "cpu",
                   "cores", "command")
# added later: a file written before has them empty
FIELDS = REQUIRED_FIELDS + ("calibration_gflops", "steal_pct", "commit")
# the teacher's (all-MiniLM-L6-v2) feed-forward product for 256 tokens: hidden 384, intermediate 1536
CALIBRATION_SHAPE = (256, 384, 1536)


def uptime() -> str:
    """``uptime``'s line (time, up, users, load averages), or the load averages alone where it is missing."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        load = os.getloadavg() if hasattr(os, "getloadavg") else ()
        return "load average: " + ", ".join(f"{x:.2f}" for x in load)


def calibration(repeats: int = 5, products: int = 10) -> str:
    """The host's speed now: GFLOP/s of a fixed fp32 matrix product of ``CALIBRATION_SHAPE`` on one torch thread
    (the teacher pass's arithmetic), the median of ``repeats`` timings of ``products`` products each, after a
    warm-up; about half a second. Empty where torch is missing."""
    try:
        import torch
    except ImportError:
        return ""
    m, k, n = CALIBRATION_SHAPE
    generator = torch.Generator().manual_seed(0)
    a, b = torch.randn(m, k, generator=generator), torch.randn(k, n, generator=generator)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for _ in range(3):
            a @ b
        rates = []
        for _ in range(repeats):
            started = time.perf_counter()
            for _ in range(products):
                a @ b
            rates.append(2 * m * k * n * products / (time.perf_counter() - started) / 1e9)
    finally:
        torch.set_num_threads(threads)
    return f"{sorted(rates)[len(rates) // 2]:.1f}"


def cpu_times() -> tuple[int, ...]:
    """The machine's CPU time counters (``/proc/stat``'s ``cpu`` line, in ticks), or () where there is none."""
    try:
        with open("/proc/stat") as fh:
            fields = fh.readline().split()
    except OSError:
        return ()
    return tuple(int(x) for x in fields[1:]) if fields and fields[0] == "cpu" else ()


def steal_percent(before: tuple[int, ...], after: tuple[int, ...]) -> str:
    """The share of CPU time stolen by the hypervisor between two :func:`cpu_times` readings, in percent
    (steal is the 8th counter; guest time, the 9th and 10th, is already counted in user and nice, so it is
    left out of the total). Empty where a reading lacks the counter or no time passed."""
    if len(before) < 8 or len(after) < 8:
        return ""
    delta = [y - x for x, y in zip(before[:8], after[:8])]
    total = sum(delta)
    return f"{100 * delta[7] / total:.1f}" if total > 0 else ""


def machine() -> dict:
    """The CPU model, its vector extensions that decide the teacher's and tagger's dtype, and the cores."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
            if model and flags:
                break
    except OSError:
        pass
    extensions = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags]
    return {"host": platform.node(), "cpu": model + (f" ({', '.join(extensions)})" if extensions else ""),
            "cores": os.cpu_count()}


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def read_segments(path: str | os.PathLike) -> list[dict]:
    """The rows of a segments file (none when it does not exist)."""
    path = Path(path)
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    if rows and set(REQUIRED_FIELDS) - set(rows[0]):
        raise InputFileError(path, f"not a segments file: expected the columns {', '.join(REQUIRED_FIELDS)}")
    return rows


def _write(path: Path, rows: list[dict]) -> None:
    from staticvec.files import atomic_open

    with atomic_open(path, "wt") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row.get(k, "") for k in FIELDS})


def run_segment(run_dir: str | os.PathLike, command: list[str]) -> int:
    """Run ``command`` as one segment of the run in ``run_dir``; returns its exit status."""
    if not command:
        raise ValueError("no command to run")
    path = Path(run_dir) / "segments.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = read_segments(path)
    speed = calibration()  # before the sitting's clock starts: its ~2 s (torch's import) are not the command's
    start = time.monotonic()
    row = {"segment": str(len(rows) + 1), "start_utc": _now(), "uptime_start": uptime(), **machine(),
           "command": " ".join(command), "calibration_gflops": speed, "commit": git_commit()}
    times_at_start = cpu_times()
    _write(path, rows + [row])
    child = subprocess.Popen(command)
    previous = {}

    def forward(signum, _frame):
        child.send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        previous[signum] = signal.signal(signum, forward)
    interrupted = False
    try:
        while True:
            try:
                status = child.wait()
                break
            except KeyboardInterrupt:  # the child got the same SIGINT: let it stop cleanly
                interrupted = True
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    row.update(end_utc=_now(), wall_s=f"{time.monotonic() - start:.1f}", uptime_end=uptime(),
               exit=f"{status}" + (" (interrupted)" if interrupted else ""),
               steal_pct=steal_percent(times_at_start, cpu_times()))
    rows = read_segments(path)
    if rows and rows[-1]["segment"] == row["segment"]:
        rows[-1] = row
    else:  # the file was replaced meanwhile: keep what is there
        rows.append(row)
    _write(path, rows)
    return status


def segments_markdown(rows: list[dict]) -> list[str]:
    """The segments as a Markdown table and their summed wall time (lines)."""
    from staticvec.report.markdown import hms as _hms, table

    if not rows:
        return []
    body = [[r["segment"], r["start_utc"], r["end_utc"] or "(no end recorded: killed?)",
             _hms(float(r["wall_s"])) if r["wall_s"] else "—", r["exit"] or "—", r["uptime_start"], r["uptime_end"] or "—",
             f"{r['host']}: {r['cpu']}, {r['cores']} cores", r.get("calibration_gflops") or "—",
             r.get("steal_pct") or "—", r.get("commit") or "—"] for r in rows]
    total = sum(float(r["wall_s"]) for r in rows if r["wall_s"])
    return ["The run's segments (sittings of `make claims`, from segments.tsv):", "",
            *table(["segment", "start (UTC)", "end (UTC)", "wall", "exit", "uptime at start", "uptime at end", "machine",
                    "host speed (GFLOP/s)", "CPU steal (%)", "commit"],
                   body, align=["r", "l", "l", "r", "l", "l", "l", "l", "r", "r", "l"]),
            "", "Host speed: an fp32 matrix product of the teacher's feed-forward shape "
                f"({' x '.join(map(str, CALIBRATION_SHAPE))}) on one thread at the sitting's start (hosts with the same "
                "CPU model differ); CPU steal: the hypervisor's share of the CPU time during the sitting.",
            "", f"Wall time of the segments, summed: **{_hms(total)}** ({len(rows)} segment{'s' if len(rows) != 1 else ''})."]
