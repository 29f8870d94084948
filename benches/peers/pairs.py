#!/usr/bin/env python3
"""The SimPy peer against `leasesim run`, both as whole processes, on the canonical hour's
600 s cut, interleaved on one machine.

Each of SETS rounds runs the peer once, then `leasesim run` EACH times. The peer is read
twice: its own `wall_seconds` (its simulation alone) and its whole process (interpreter start
and imports included); `leasesim run` as a whole process (loading, the reports and both charts
written), elapsed from the fork to the end, and its CPU time (user and system). Medians over
every run, and the ratios of each reading.

    python3 benches/peers/pairs.py --leasesim target/release/leasesim \\
        --python /tmp/venv-simpy/bin/python3 --sets 3 --each 3
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CANONICAL = os.path.join(HERE, "..", "canonical.ron")
PEER_ARGS = [
    "--duration", "600", "--qps-read", "1000", "--qps-write", "10", "--nodes", "3",
    "--T", "10", "--margin", "0.05", "--seed", "42", "--strategy", "two-sided",
    "--pauses-per-minute", "1", "--pause-mean", "0.1",
]


def cut_600s(workdir):
    """The canonical hour cut to 600 s, written into `workdir`."""
    text = open(CANONICAL).read()
    if 'duration: "3600s"' not in text:
        sys.exit(f"{CANONICAL}: no 'duration: \"3600s\"' to cut")
    path = os.path.join(workdir, "canonical-600s.ron")
    with open(path, "w") as f:
        f.write(text.replace('duration: "3600s"', 'duration: "600s"', 1))
    return path


def peer(python):
    """One peer run: its own wall_seconds and its whole process's elapsed seconds."""
    start = time.perf_counter()
    out = subprocess.check_output([python, os.path.join(HERE, "simpy_lease.py"), *PEER_ARGS])
    whole = time.perf_counter() - start
    return json.loads(out.decode().splitlines()[0])["wall_seconds"], whole


def leasesim(binary, scenario, out):
    """One `leasesim run` as a whole process: elapsed and CPU seconds."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execv(binary, [binary, "run", scenario, "--out", out])
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        sys.exit(f"{binary} run {scenario} failed: status {status}")
    return elapsed, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--leasesim", default="target/release/leasesim")
    ap.add_argument("--python", default=sys.executable, help="a Python with simpy installed")
    ap.add_argument("--sets", type=int, default=3)
    ap.add_argument("--each", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        scenario = cut_600s(work)
        out = os.path.join(work, "out")
        sims, wholes, elapsed, cpu = [], [], [], []
        for _ in range(args.sets):
            sim, whole = peer(args.python)
            sims.append(sim)
            wholes.append(whole)
            runs = [leasesim(args.leasesim, scenario, out) for _ in range(args.each)]
            elapsed += [e for e, _ in runs]
            cpu += [c for _, c in runs]
            print(f"peer {sim:.2f} s (process {whole:.2f} s); leasesim elapsed "
                  f"{', '.join(f'{e * 1e3:.1f}' for e, _ in runs)} ms, CPU "
                  f"{', '.join(f'{c * 1e3:.1f}' for _, c in runs)} ms", flush=True)
    med = statistics.median
    sim, whole, e, c = med(sims), med(wholes), med(elapsed), med(cpu)
    print(f"medians: peer {sim:.2f} s (process {whole:.2f} s), leasesim {e * 1e3:.1f} ms "
          f"elapsed, {c * 1e3:.1f} ms CPU")
    print(f"peer's simulation against leasesim's process: {sim / e:.0f}x elapsed, "
          f"{sim / c:.0f}x CPU (fastest against fastest {min(sims) / min(elapsed):.0f}x)")
    print(f"whole processes: {whole / e:.0f}x elapsed, {whole / c:.0f}x CPU "
          f"(fastest against fastest {min(wholes) / min(elapsed):.0f}x)")


if __name__ == "__main__":
    main()
