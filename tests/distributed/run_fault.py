#!/usr/bin/env python3
"""Runs mpi_fault under mpirun and checks that the job ended quickly, with a nonzero exit code
and the expected messages: run_fault.py MAX_SECONDS MODE 'expected|...' -- mpirun args..."""
import subprocess
import sys
import time

max_seconds, mode, expected = float(sys.argv[1]), sys.argv[2], sys.argv[3]
cmd = sys.argv[sys.argv.index("--") + 1:] + [mode]
start = time.monotonic()
try:
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=max_seconds + 60)
    out, rc = p.stdout, p.returncode
except subprocess.TimeoutExpired as e:
    out, rc = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), None
elapsed = time.monotonic() - start
print(out)
problems = []
if rc is None:
    problems.append("the job hung (killed after %.0f s)" % elapsed)
elif rc == 0:
    problems.append("the job exited 0")
if elapsed > max_seconds:
    problems.append("the job took %.1f s (limit %.0f s)" % (elapsed, max_seconds))
for part in expected.split("|"):
    if part not in out:
        problems.append("output lacks %r" % part)
if "must not" in out:
    problems.append("a collective completed without every process")
print("mode %s: exit code %s after %.1f s" % (mode, rc, elapsed))
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
