#!/usr/bin/env python3
"""The search across the ranks of an mpirun job (docs/mpi.md), against one process.

  check_mpi.py NASA MPIRUN WORKDIR [COSIM]

1. identity: `nasa search --strategy both` alone, under `mpirun -np 1` and under
   `mpirun -np 3 --oversubscribe`: the three result.json are byte for byte the same.
2. a killed rank: rank 1 of 3 killed (SIGKILL) in the middle of a search: mpirun exits non-zero,
   its message names rank 1, no result.json.
3. a device that fails on one rank: --backend uart --port DIR/tty{rank} where only rank 1's
   device is missing: non-zero exit, the error names rank 1 and its port, no result.json.
4. with COSIM (nasa-cosim): the cosim regression split over 3 ranks reports the table of one
   process: every count, the cycle-model errors and efficiencies, the worst item.
"""
import json
import os
import pathlib
import pty
import shutil
import signal
import subprocess
import sys
import time

NASA, MPIRUN, WORK = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
COSIM = sys.argv[4] if len(sys.argv) > 4 else None

ENV = dict(os.environ)
# CI runs as root; Open MPI refuses that unless told; shared memory without ptrace (containers)
ENV.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
            "OMPI_MCA_rmaps_base_oversubscribe": "1"})


def fail(msg):
    print(f"check_mpi: FAIL: {msg}")
    sys.exit(1)


def run(cmd, **kw):
    print("$", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], env=ENV, capture_output=True, text=True, **kw)


def mpirun(n):
    return [MPIRUN, "-np", str(n), "--oversubscribe", "--bind-to", "none"]


def search_args(out, generations=3, extra=()):
    return [NASA, "search", "--supernet", WORK / "sn", "--out", out, "--strategy", "both",
            "--population", "6", "--generations", str(generations), "--topk", "3",
            "--mutations", "3", "--crossovers", "3", "--val-images", "96", "--calib", "16",
            "--mini-batch", "16", "--shard-batches", "1", *extra]


shutil.rmtree(WORK, ignore_errors=True)
WORK.mkdir(parents=True)
r = run([NASA, "init", "--space", "fmnist-mb", "--seed", "3", "--out", WORK / "sn"])
if r.returncode != 0:
    fail(f"nasa init: {r.stderr}")

# 1. identity
results = {}
for name, prefix in (("alone", []), ("np1", mpirun(1)), ("np3", mpirun(3))):
    out = WORK / name
    t0 = time.time()
    r = run(prefix + search_args(out))
    if r.returncode != 0:
        fail(f"{name}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    results[name] = (out / "result.json").read_bytes()
    print(f"{name}: {len(results[name])} bytes of result.json in {time.time() - t0:.1f} s")
for name in ("np1", "np3"):
    if results[name] != results["alone"]:
        fail(f"result.json of {name} differs from the one of a process alone")
print("identity: result.json identical alone, on 1 rank and on 3 ranks")
# only rank 0 wrote: no stray files of other ranks
for name in ("np3",):
    files = sorted(p.name for p in (WORK / name).iterdir())
    if files != ["pareto.svg", "report.md", "result.json"]:
        fail(f"{name}: unexpected files {files}")

# 2. a killed rank
out = WORK / "killed"
proc = subprocess.Popen([str(c) for c in mpirun(3) + search_args(out, generations=2000)],
                        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def rank_pid(rank):
    for p in pathlib.Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            cmd = (p / "cmdline").read_bytes().split(b"\0")
            env = (p / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(out).encode() in cmd and os.path.basename(cmd[0]) == b"nasa" and \
                f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
            return int(p.name)
    return None


log = ""
deadline = time.time() + 300
while time.time() < deadline:
    line = proc.stdout.readline()
    if not line:
        break
    log += line
    if "generation 1 " in line:  # rank 0 reports: every rank is searching
        break
pid = rank_pid(1)
if pid is None:
    proc.kill()
    fail(f"no rank 1 process found\n{log}")
os.kill(pid, signal.SIGKILL)
print(f"killed rank 1 (pid {pid})")
try:
    rest, _ = proc.communicate(timeout=120)
except subprocess.TimeoutExpired:
    proc.kill()
    fail("the job did not end after rank 1 was killed")
log += rest
print(log[-2000:])
if proc.returncode == 0:
    fail("exit 0 after a rank was killed")
if "rank 1" not in log:
    fail("the message does not name rank 1")
if (out / "result.json").exists():
    fail("result.json written by a job that lost a rank")
print(f"killed rank: exit {proc.returncode}, rank 1 named, no result.json")

# 3. a device that fails on rank 1: ranks 0 and 2 have a (silent) pseudo-terminal, rank 1 none
ports = WORK / "ports"
ports.mkdir()
keep = []
for rank in (0, 2):
    master, slave = pty.openpty()
    keep += [master, slave]
    os.symlink(os.ttyname(slave), ports / f"tty{rank}")
out = WORK / "device"
r = run(mpirun(3) + search_args(out, extra=["--backend", "uart", "--config", "sim",
                                         "--port", f"{ports}/tty{{rank}}"]),
        timeout=300)
print(r.stdout[-1000:], r.stderr[-2000:])
if r.returncode == 0:
    fail("exit 0 with a missing device")
if "rank 1 of 3" not in r.stderr or f"{ports}/tty1" not in r.stderr:
    fail("the error does not name rank 1 and its port")
if (out / "result.json").exists():
    fail("result.json written by a failed job")
print(f"device error: exit {r.returncode}, rank 1 and {ports}/tty1 named, no result.json")

# 4. the cosim regression across ranks
if COSIM:
    tables = {}
    for n in (1, 3):
        r = run(mpirun(n) + [COSIM, "--suite", "all", "--layers", "16", "--seed", "5", "--json"],
                timeout=1800)
        if r.returncode != 0:
            fail(f"nasa-cosim on {n} rank(s): exit {r.returncode}\n{r.stderr[-2000:]}")
        suites = json.loads(r.stdout)["suites"]
        for s in suites:  # times differ; the mean's float sum is taken in another order
            for k in ("wall_s", "sim_cycles_per_s", "mean_cycle_error_pct"):
                s.pop(k)
        tables[n] = suites
    if tables[1] != tables[3]:
        fail(f"cosim on 3 ranks differs from 1 rank:\n{tables[1]}\n{tables[3]}")
    print(f"cosim: {sum(s['layers'] for s in tables[3])} layers over {len(tables[3])} suites on 3 "
          "ranks, the same table as on 1 rank")
print("check_mpi: OK")
