"""A long run's sittings: each one's start, end, exit status and load appended to <run>/segments.tsv."""

import os
import signal
import subprocess
import sys
import time

from staticvec.cli import main
from staticvec.report.segments import read_segments, run_segment


def test_each_sitting_is_a_row_written_before_the_command_runs(tmp_path):
    run = tmp_path / "run"
    # the command sees its own row already there, without an end
    script = f"import csv,sys; rows=list(csv.DictReader(open({str(run / 'segments.tsv')!r}), delimiter='\\t')); " \
             "sys.exit(10 + len(rows) if rows[-1]['end_utc'] == '' else 1)"
    assert run_segment(run, [sys.executable, "-c", script]) == 11
    assert main(["report", "segment", "--run", str(run), "--", sys.executable, "-c", "pass"]) == 0
    rows = read_segments(run / "segments.tsv")
    assert [(r["segment"], r["exit"]) for r in rows] == [("1", "11"), ("2", "0")]
    assert all(r["end_utc"] >= r["start_utc"] and float(r["wall_s"]) >= 0 and "load average" in r["uptime_end"]
               for r in rows)
    assert rows[1]["command"].endswith("-c pass") and int(rows[0]["cores"]) >= 1


def test_the_run_directory_comes_from_the_config_files(tmp_path, repo_root):
    config = tmp_path / "c.yaml"
    config.write_text(f"results_dir: {tmp_path / 'from-config'}\n")
    assert main(["report", "segment", "--configfile", str(repo_root / "config/config.yaml"), str(config), "--",
                 sys.executable, "-c", "pass"]) == 0
    assert len(read_segments(tmp_path / "from-config" / "segments.tsv")) == 1


def test_a_terminated_sitting_forwards_the_signal_and_still_records_its_end(tmp_path):
    run = tmp_path / "run"
    code = ("import sys; from staticvec.report.segments import run_segment; "
            f"sys.exit(run_segment({str(run)!r}, [sys.executable, '-c', 'import time; time.sleep(60)']) & 255)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    wrapper = subprocess.Popen([sys.executable, "-c", code], env=env)
    for _ in range(100):  # until the row of the sitting is there
        if read_segments(run / "segments.tsv") if (run / "segments.tsv").exists() else []:
            break
        time.sleep(0.1)
    time.sleep(0.5)
    wrapper.send_signal(signal.SIGTERM)
    wrapper.wait(timeout=30)
    rows = read_segments(run / "segments.tsv")
    assert len(rows) == 1 and rows[0]["exit"] == str(-signal.SIGTERM) and rows[0]["end_utc"]


def test_steal_is_the_hypervisors_share_of_the_cpu_time_between_two_readings():
    from staticvec.report.segments import steal_percent

    # user nice system idle iowait irq softirq steal guest guest_nice (ticks)
    before = (100, 0, 50, 800, 10, 0, 0, 40, 0, 0)
    after = (200, 0, 100, 1500, 20, 0, 0, 80, 5, 0)
    # deltas 100 + 0 + 50 + 700 + 10 + 0 + 0 + 40 = 900 ticks, 40 stolen (guest time is inside user: not added)
    assert steal_percent(before, after) == f"{100 * 40 / 900:.1f}" == "4.4"
    assert steal_percent((), after) == "" and steal_percent(before, before) == ""


def test_the_host_speed_is_a_positive_rate_that_falls_with_a_slower_host(monkeypatch):
    import staticvec.report.segments as segments

    fast = float(segments.calibration(repeats=3, products=2))
    assert fast > 0
    clock = iter(x * 0.5 for x in range(100))  # every product timed as 0.5 s: a slow host, known rate
    monkeypatch.setattr(segments.time, "perf_counter", lambda: next(clock))
    m, k, n = segments.CALIBRATION_SHAPE
    assert segments.calibration(repeats=3, products=2) == f"{2 * m * k * n * 2 / 0.5 / 1e9:.1f}"


def test_a_file_from_before_the_host_columns_reads_and_keeps_its_rows(tmp_path):
    from staticvec.report.segments import REQUIRED_FIELDS, segments_markdown

    run = tmp_path / "run"
    run.mkdir()
    old = ["1", "2026-11-27 10:20:08", "2026-11-27 10:41:06", "1258", "killed", "10:20:08 up 6:27, load average: 2.31",
           "not recorded", "vm", "AMD EPYC (avx2)", "2", "snakemake --cores all"]
    (run / "segments.tsv").write_text("\t".join(REQUIRED_FIELDS) + "\n" + "\t".join(old) + "\n")
    assert run_segment(run, [sys.executable, "-c", "pass"]) == 0
    rows = read_segments(run / "segments.tsv")
    assert [r["segment"] for r in rows] == ["1", "2"] and rows[0]["wall_s"] == "1258"
    assert rows[0]["calibration_gflops"] == "" and float(rows[1]["calibration_gflops"]) > 0
    assert rows[1]["steal_pct"] == "" or 0 <= float(rows[1]["steal_pct"]) <= 100
    old_line = next(line for line in segments_markdown(rows) if line.startswith("| 1 "))
    assert old_line.rstrip(" |").endswith("| — | —")


def test_each_sitting_names_the_commit_it_started_from(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "f").write_text("a\n")
    subprocess.run(git + ["add", "f"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "one"], check=True)
    head = subprocess.run(git + ["rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    monkeypatch.chdir(repo)  # the sitting runs where `make claims` runs: the checkout's root
    assert run_segment(tmp_path / "run", [sys.executable, "-c", "pass"]) == 0
    (repo / "f").write_text("b\n")  # a tracked file changed before the second sitting
    assert run_segment(tmp_path / "run", [sys.executable, "-c", "pass"]) == 0
    rows = read_segments(tmp_path / "run" / "segments.tsv")
    assert [r["commit"] for r in rows] == [head, head + "+dirty"]
    from staticvec.report.segments import segments_markdown
    assert any(line.startswith("| 2 ") and line.rstrip(" |").endswith(head + "+dirty")
               for line in segments_markdown(rows))
