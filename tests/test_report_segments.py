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
