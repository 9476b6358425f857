"""A real SLURM cluster on this machine, for the suite: munged, MariaDB, slurmdbd, slurmctld and slurmd on
loopback, one node with this machine's cores and most of its memory, partitions ``cpu`` (default) and ``gpu``
(a GRES ``gpu`` on a stand-in device file), accounting in a private MariaDB.

Everything the daemons write lives under one temporary directory, removed at the end. The one exception is
``/etc/slurm/``: inside a job the jobstep plugin strips ``SLURM_*`` variables (so ``SLURM_CONF`` cannot point
elsewhere) and slurmstepd, sacct and sbatch read the compiled-in ``/etc/slurm/slurm.conf``. The files written
there are backed up first and restored (or removed) when the cluster stops. Every daemon is started in the
foreground by this process and stopped by its PID, never by name.

As a command (the daemons run while COMMAND runs, and are stopped after it, whatever its exit):

    python tests/cluster/local_slurm.py [--install] [-- COMMAND ...]

Without COMMAND it starts the cluster, prints the start-up time and ``sinfo``, and stops it. As a pytest
fixture: ``tests/test_slurm_cluster.py``'s ``slurm_cluster``. Debian 12's packages (slurm-wlm 22.05,
slurmdbd, munge, mariadb-server) are installed with apt-get when missing and ``install=True`` (root only).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PACKAGES = ("slurm-wlm", "slurmdbd", "munge", "mariadb-server")
BINARIES = ("munged", "mariadbd", "mariadb-install-db", "slurmdbd", "slurmctld", "slurmd", "sbatch", "sacct",
            "squeue", "scancel", "sinfo", "sacctmgr", "scontrol")
ETC = Path("/etc/slurm")
ETC_FILES = ("slurm.conf", "slurmdbd.conf", "gres.conf", "cgroup.conf")
CLUSTER = "staticvec"
NODE = "node1"
MUNGE_SOCKET = Path("/run/munge/munge.socket.2")
MIN_JOB_AGE = 300  # squeue keeps a finished job this long: >= 3 x the plugin's first status delay (40 s), so
                   # the plugin accepts `slurm-status-command: squeue` (it falls back to sacct below that)


class ClusterUnavailable(RuntimeError):
    """The packages are missing and cannot be installed here (not root, no apt-get, no network)."""


def missing_binaries() -> list[str]:
    return [b for b in BINARIES if shutil.which(b, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None]


def install_packages() -> None:
    """apt-get update, then install Debian's packages; ClusterUnavailable with the reason when that fails."""
    if not missing_binaries():
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise ClusterUnavailable(f"SLURM not installed ({', '.join(missing_binaries())} missing) and no root "
                                 f"apt-get to install {' '.join(PACKAGES)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES]):
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise ClusterUnavailable(f"{' '.join(cmd)} failed ({done.returncode}): {(done.stdout + done.stderr)[-1500:]}")
    if missing_binaries():
        raise ClusterUnavailable(f"installed {' '.join(PACKAGES)} but {', '.join(missing_binaries())} still missing")


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _sbin(name: str) -> str:
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") or name


def node_resources() -> tuple[int, int]:
    """(CPUs, RealMemory in MB) of the node: this machine's cores, its memory less 2 GB (at least 85 % of it)
    for the daemons and the Snakemake process."""
    cpus = os.cpu_count() or 1
    total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    return cpus, max(int(total_mb * 0.85), total_mb - 2048)


class LocalSlurm:
    """The cluster: ``start()`` (returns the seconds it took until the node is idle), ``stop()``; a context
    manager. ``started`` maps each daemon to its Popen (PIDs in ``pids()``)."""

    def __init__(self, root: str | os.PathLike | None = None, def_mem_per_cpu: int = 1024):
        self.root = Path(root) if root else Path(tempfile.mkdtemp(prefix="staticvec-slurm-"))
        self.own_root = root is None
        self.def_mem_per_cpu = def_mem_per_cpu
        self.started: dict[str, subprocess.Popen] = {}
        self.backup: dict[str, bytes | None] = {}
        self.startup_s: float | None = None
        self.cpus, self.mem_mb = node_resources()

    # -------------------------------------------------------------- configuration
    def write_config(self) -> None:
        r = self.root
        for d in ("state", "spool", "log", "munge", "mysql", "run"):
            (r / d).mkdir(parents=True, exist_ok=True)
        os.chmod(r / "munge", 0o700)
        self.gpu_file = r / "run" / "gpu0"  # the GPU's stand-in device file (slurmd only checks it exists)
        self.gpu_file.write_text("")
        ctld, slurmd, dbd, mysql = _free_ports(4)
        self.ports = {"slurmctld": ctld, "slurmd": slurmd, "slurmdbd": dbd, "mysql": mysql}
        auth = "AuthType=auth/munge\n"
        slurm_conf = f"""# written by tests/cluster/local_slurm.py for a test cluster (removed when it stops)
ClusterName={CLUSTER}
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
SlurmUser=root
SlurmdUser=root
{auth}CredType=cred/munge
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool/%n
SlurmctldPidFile={r}/run/slurmctld.pid
SlurmdPidFile={r}/run/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
# memory is enforced without cgroups: jobacct_gather samples each step's RSS every second and kills a step
# over its --mem (state OUT_OF_MEMORY)
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={dbd}
AccountingStorageTRES=gres/gpu
AccountingStoreFlags=job_comment
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
# a job without --mem gets this per CPU rather than the whole node
DefMemPerCPU={self.def_mem_per_cpu}
MinJobAge={MIN_JOB_AGE}
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
GresTypes=gpu
NodeName={NODE} NodeAddr=127.0.0.1 NodeHostname={socket.gethostname()} CPUs={self.cpus} RealMemory={self.mem_mb} Gres=gpu:1 State=UNKNOWN
PartitionName=cpu Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes={NODE} MaxTime=INFINITE State=UP
"""
        dbd_conf = f"""# written by tests/cluster/local_slurm.py for a test cluster (removed when it stops)
{auth}DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort={dbd}
SlurmUser=root
LogFile={r}/log/slurmdbd.log
PidFile={r}/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={mysql}
StorageUser=root
StorageLoc=slurm_acct_db
"""
        gres_conf = f"NodeName={NODE} Name=gpu File={self.gpu_file}\n"
        files = {"slurm.conf": slurm_conf, "slurmdbd.conf": dbd_conf, "gres.conf": gres_conf, "cgroup.conf": None}
        ETC.mkdir(parents=True, exist_ok=True)
        for name in ETC_FILES:  # back up whatever the machine had there, once
            path = ETC / name
            self.backup.setdefault(name, path.read_bytes() if path.exists() else None)
        for name, text in files.items():
            path = ETC / name
            if text is None:
                path.unlink(missing_ok=True)  # none: slurmd then uses no cgroup settings
                continue
            path.write_text(text)
            os.chmod(path, 0o600 if name == "slurmdbd.conf" else 0o644)  # slurmdbd refuses a readable one

    def restore_etc(self) -> None:
        for name, content in self.backup.items():
            path = ETC / name
            if content is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(content)
        self.backup.clear()

    # -------------------------------------------------------------- daemons
    def _spawn(self, name: str, cmd: list[str]) -> subprocess.Popen:
        log = open(self.root / "log" / f"{name}.stdout", "ab")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        log.close()
        self.started[name] = proc
        return proc

    def _wait(self, what: str, ready, timeout: float = 60.0, daemon: str | None = None) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if daemon and self.started[daemon].poll() is not None:
                raise RuntimeError(f"{daemon} exited ({self.started[daemon].returncode}) before {what}:\n"
                                   f"{self.logs(daemon)}")
            try:
                if ready():
                    return
            except (OSError, subprocess.SubprocessError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}:\n{self.logs(daemon)}")

    def logs(self, daemon: str | None = None, tail: int = 3000) -> str:
        names = [daemon] if daemon else list(self.started)
        out = []
        for n in names:
            for f in (self.root / "log").glob(f"{n}*"):
                out.append(f"--- {f}\n{f.read_text(errors='replace')[-tail:]}")
        return "\n".join(out)

    @staticmethod
    def _ok(*cmd: str) -> bool:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).returncode == 0

    def start(self) -> float:
        t0 = time.monotonic()
        install_packages()
        try:
            self.write_config()
            r = self.root
            # munged's socket at its compiled-in path: slurmctld's and sacctmgr's connections to slurmdbd use it
            # whatever AuthInfo says (22.05)
            if MUNGE_SOCKET.exists():
                raise ClusterUnavailable(f"{MUNGE_SOCKET} exists: a munged is already running on this machine")
            self.munge_dir_created = not MUNGE_SOCKET.parent.exists()
            MUNGE_SOCKET.parent.mkdir(parents=True, exist_ok=True)
            self.munge_socket = MUNGE_SOCKET
            key = r / "munge" / "munge.key"
            key.write_bytes(os.urandom(1024))
            os.chmod(key, 0o400)
            self._spawn("munged", [_sbin("munged"), "--foreground", "--force", f"--key-file={key}",
                                   f"--socket={self.munge_socket}", f"--pid-file={r}/munge/munged.pid",
                                   f"--log-file={r}/log/munged.log", f"--seed-file={r}/munge/munged.seed"])
            self._wait("munged's socket", lambda: self.munge_socket.exists(), daemon="munged")

            datadir = r / "mysql" / "data"
            subprocess.run([_sbin("mariadb-install-db"), "--no-defaults", f"--datadir={datadir}", "--user=root",
                            "--auth-root-authentication-method=normal", "--skip-test-db"],
                           check=True, capture_output=True)
            self.mysql_socket = r / "mysql" / "mysqld.sock"
            self._spawn("mariadbd", [_sbin("mariadbd"), "--no-defaults", f"--datadir={datadir}", "--user=root",
                                     f"--socket={self.mysql_socket}", f"--port={self.ports['mysql']}",
                                     "--bind-address=127.0.0.1", f"--pid-file={r}/mysql/mariadbd.pid",
                                     "--skip-name-resolve", "--innodb-buffer-pool-size=64M",
                                     f"--log-error={r}/log/mariadbd.log"])
            self._wait("MariaDB to accept connections", lambda: _port_open(self.ports["mysql"]), daemon="mariadbd")

            self._spawn("slurmdbd", [_sbin("slurmdbd"), "-D"])
            self._wait("slurmdbd", lambda: _port_open(self.ports["slurmdbd"]), daemon="slurmdbd")
            self._wait("the cluster's registration in slurmdbd", lambda: self._register(), daemon="slurmdbd")

            self._spawn("slurmctld", [_sbin("slurmctld"), "-D", "-i"])
            self._wait("slurmctld", lambda: self._ok("scontrol", "ping"), daemon="slurmctld")
            self._spawn("slurmd", [_sbin("slurmd"), "-D", "-N", NODE])
            self._wait(f"node {NODE} idle", lambda: self.node_state().startswith("idle"), daemon="slurmd", timeout=90)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - t0
        return self.startup_s

    def _register(self) -> bool:
        listed = subprocess.run(["sacctmgr", "-n", "-P", "list", "cluster", "format=cluster"],
                                capture_output=True, text=True, timeout=20)
        if listed.returncode != 0:
            return False
        if CLUSTER in listed.stdout.split():
            return True
        return self._ok("sacctmgr", "-i", "add", "cluster", CLUSTER)

    def node_state(self) -> str:
        out = subprocess.run(["sinfo", "-h", "-N", "-n", NODE, "-o", "%T"], capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else ""

    def pids(self) -> dict[str, int]:
        return {name: p.pid for name, p in self.started.items()}

    def alive(self) -> dict[str, int]:
        """The daemons this object started that are still running (by PID)."""
        return {name: p.pid for name, p in self.started.items() if p.poll() is None}

    def stop(self) -> None:
        """Cancel the jobs still in the queue (their slurmstepd processes end with them), then SIGTERM each daemon
        by its PID, latest first (slurmd, slurmctld, slurmdbd, MariaDB, munged), SIGKILL what is left after 20 s;
        then restore /etc/slurm and remove the temporary directory."""
        if "slurmctld" in self.alive():
            with contextlib.suppress(OSError, subprocess.SubprocessError, RuntimeError):  # stop the daemons anyway
                queued = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True, timeout=20)
                jobs = queued.stdout.split()
                if jobs:
                    subprocess.run(["scancel", *jobs], capture_output=True, timeout=20)
                    self._wait("the cancelled jobs to leave the node",
                               lambda: not subprocess.run(["squeue", "-h", "-t", "R,CG", "-o", "%i"], capture_output=True,
                                                          text=True, timeout=20).stdout.strip(), timeout=30)
        for name in reversed(list(self.started)):
            proc = self.started[name]
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
        self.restore_etc()
        if getattr(self, "munge_socket", None) is not None:
            for leftover in (MUNGE_SOCKET, MUNGE_SOCKET.with_name(MUNGE_SOCKET.name + ".lock")):
                leftover.unlink(missing_ok=True)
            if self.munge_dir_created:
                with contextlib.suppress(OSError):
                    MUNGE_SOCKET.parent.rmdir()
            self.munge_socket = None
        if self.own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the start-up time and the daemons' PIDs to this file")
    args = parser.parse_args(own)
    cluster = LocalSlurm()
    try:
        seconds = cluster.start()
    except ClusterUnavailable as exc:
        print(f"local SLURM unavailable: {exc}", file=sys.stderr)
        return 3
    try:
        print(f"local SLURM up in {seconds:.1f} s: {cluster.cpus} CPUs, {cluster.mem_mb} MB, daemons {cluster.pids()}",
              flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps({"startup_s": round(seconds, 2), "pids": cluster.pids(),
                                                   "cpus": cluster.cpus, "mem_mb": cluster.mem_mb}) + "\n")
        if not command:
            subprocess.run(["sinfo"])
            return 0
        return subprocess.run(command, env={**os.environ, "STATICVEC_LOCAL_SLURM": "1"}).returncode
    finally:
        pids = cluster.pids()
        cluster.stop()
        left = [pid for pid in pids.values() if _running(pid)]
        print(f"local SLURM stopped (daemons {pids}; still running: {left or 'none'})", flush=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


if __name__ == "__main__":
    sys.exit(main())
