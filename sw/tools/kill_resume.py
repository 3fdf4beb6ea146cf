#!/usr/bin/env python3
"""Crash safety of `nasa run` (docs/reliability.md): kills a small job with SIGKILL at N random
moments spread over its whole length, checks that no file it left on disk is truncated, reruns it
with --resume and checks that the result.json is byte-identical to an uninterrupted run's. One more
trial stops the job with SIGINT (Ctrl-C): it must exit 130 with its message, and resume likewise.

Usage: kill_resume.py NASA WORKDIR [--trials 20] [--seed S] [-- nasa run options]
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
import zipfile

TMP = re.compile(r".+\.tmp\.[0-9]+$")


def check_file(path):
    """Returns why `path` is not a complete file of its kind, or None."""
    name = os.path.basename(path)
    with open(path, "rb") as f:
        data = f.read()
    try:
        if name.endswith(".json"):
            json.loads(data)
        elif name.endswith(".jsonl"):
            if data and not data.endswith(b"\n"):
                return "last line not terminated"
            for line in data.splitlines():
                json.loads(line)
        elif name.endswith(".csv"):
            lines = data.decode().splitlines()
            if not data.endswith(b"\n"):
                return "last line not terminated"
            width = lines[0].count(",")
            bad = [i + 1 for i, l in enumerate(lines) if l.count(",") != width]
            if bad:
                return f"line {bad[0]} has another number of fields"
        elif name.endswith(".safetensors"):
            (n,) = struct.unpack("<Q", data[:8])
            header = json.loads(data[8:8 + n])
            end = max([t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"],
                      default=0)
            if len(data) != 8 + n + end:
                return f"{len(data)} bytes, the header says {8 + n + end}"
        elif name.endswith(".svg"):
            if not data.rstrip().endswith(b"</svg>"):
                return "no closing </svg>"
        elif name.endswith(".md"):
            if not data.endswith(b"\n"):
                return "does not end with a newline"
        elif name.endswith(".pt"):
            with zipfile.ZipFile(path) as z:
                broken = z.testzip()
                if broken:
                    return f"member {broken} is corrupt"
        else:
            return "unexpected file"
    except Exception as e:  # noqa: BLE001 - any parse failure is the finding
        return f"{type(e).__name__}: {e}"
    return None


def scan(root):
    """(complete files, temporaries, problems) under root."""
    files, tmps, problems = 0, [], []
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            if TMP.match(n):
                tmps.append(p)
                continue
            files += 1
            why = check_file(p)
            if why:
                problems.append(f"{p}: {why}")
    return files, tmps, problems


class Follower:
    """A job whose output lines go to a log, with the time each line appeared."""

    def __init__(self, cmd, log):
        self.log = open(log, "ab")
        self.start = time.monotonic()
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.times = []
        self.cv = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.p.stdout:
            self.log.write(line)
            self.log.flush()
            with self.cv:
                self.times.append(time.monotonic())
                self.cv.notify_all()
        with self.cv:
            self.cv.notify_all()

    def wait(self):
        rc = self.p.wait()
        self.reader.join()
        self.log.close()
        return rc

    def kill_after(self, lines, delay):
        """SIGKILL `delay` s after the `lines`-th line; False if the job ended first."""
        with self.cv:
            self.cv.wait_for(lambda: len(self.times) >= lines or self.p.poll() is not None)
        try:
            self.p.wait(timeout=delay)
            killed = False
        except subprocess.TimeoutExpired:
            self.p.send_signal(signal.SIGKILL)
            killed = True
        self.wait()
        return killed


def run(cmd, log):
    with open(log, "ab") as f:
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode


STAGES = ["train", "search", "test-top", "finetune", "test-final", "rtl-check", "write"]


def last_stage(log):
    """The stage the job was in: the one after the last finished."""
    stage = STAGES[0]
    with open(log, "rb") as f:
        for line in f.read().decode(errors="replace").splitlines():
            m = re.match(r"stage (\S+) done", line)
            if m and m.group(1) in STAGES:
                stage = STAGES[min(STAGES.index(m.group(1)) + 1, len(STAGES) - 1)]
    return stage


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("nasa")
    ap.add_argument("work")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    a.args = extra
    rng = random.Random(a.seed)
    print(f"kill_resume: seed {a.seed} (rerun with --seed {a.seed}), {a.trials} SIGKILL trials",
          flush=True)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)

    def job(d):
        return [a.nasa, "run", "--runs-dir", d, "--name", "r", "--resume"] + a.args

    # The uninterrupted run: its length and when each of its output lines appeared, so trials
    # can be killed at the same point of the job however fast the machine is at the moment.
    ref_dir = os.path.join(a.work, "ref")
    t0 = time.monotonic()
    proc = Follower(job(ref_dir), ref_dir + ".log")
    if proc.wait() != 0:
        sys.exit(f"kill_resume: the uninterrupted run failed, see {ref_dir}.log")
    length = time.monotonic() - t0
    ref_lines = [t - proc.start for t in proc.times]
    with open(os.path.join(ref_dir, "r", "result.json"), "rb") as f:
        ref = f.read()
    print(f"kill_resume: uninterrupted run {length:.1f} s, {len(ref_lines)} lines of progress",
          flush=True)

    failures = []

    def rerun_and_compare(d, log, what):
        rc = run(job(d), log)
        if rc != 0:
            failures.append(f"{what}: rerun exited {rc} (see {log})")
            return False
        with open(os.path.join(d, "r", "result.json"), "rb") as f:
            same = f.read() == ref
        files, tmps, problems = scan(d)
        if not same:
            failures.append(f"{what}: result.json differs from the uninterrupted run's")
        if tmps:
            failures.append(f"{what}: temporaries left after the rerun: {tmps}")
        for p in problems:
            failures.append(f"{what}: after the rerun: {p}")
        return same and not tmps and not problems

    identical = 0
    for i in range(a.trials):
        d = os.path.join(a.work, f"t{i + 1}")
        log = d + ".log"
        # stratified: trial i is killed in the i-th twentieth of the job, at a random point of
        # it, found as "the k-th line of progress, then so many seconds"
        at = length * (i + rng.random()) / a.trials
        k = sum(1 for t in ref_lines if t <= at)
        delay = at - (ref_lines[k - 1] if k else 0.0)
        p = Follower(job(d), log)
        killed = p.kill_after(k, delay)
        stage = last_stage(log) if killed else "(finished first)"
        files, tmps, problems = scan(d)
        for q in problems:
            failures.append(f"trial {i + 1} (killed at {at:.1f} s): {q}")
        ok = rerun_and_compare(d, log, f"trial {i + 1}") and not problems
        identical += ok
        print(f"kill_resume: trial {i + 1:2d}: SIGKILL {delay:4.1f} s after line {k:3d} "
              f"in {stage:<16} "
              f"{files:3d} files complete, {len(tmps)} temporaries -> rerun "
              f"{'identical' if ok else 'FAILED'}", flush=True)

    # Ctrl-C during the supernet training: a clean stop with a message, then resume.
    d = os.path.join(a.work, "sigint")
    log = d + ".log"
    with open(log, "ab") as f:
        p = subprocess.Popen(job(d), stdout=f, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10 * length
        while time.monotonic() < deadline and "train: supernet" not in open(log).read():
            time.sleep(0.02)
        p.send_signal(signal.SIGINT)
        rc = p.wait()
    text = open(log).read()
    clean = rc == 130 and "interrupted by SIGINT" in text and "is complete" in text
    if not clean:
        failures.append(f"SIGINT: exit {rc}, expected 130 with the message (see {log})")
    files, tmps, problems = scan(d)
    failures += [f"SIGINT: {q}" for q in problems]
    resumed = rerun_and_compare(d, log, "SIGINT")
    print(f"kill_resume: SIGINT: exit {rc}, {'clean' if clean else 'NOT CLEAN'}, "
          f"{len(tmps)} temporaries, rerun {'identical' if resumed else 'FAILED'}", flush=True)

    print(f"kill_resume: {identical} of {a.trials} kill-and-rerun trials identical; "
          f"SIGINT {'ok' if clean and resumed else 'FAILED'}")
    for f in failures:
        print(f"kill_resume: FAIL {f}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
