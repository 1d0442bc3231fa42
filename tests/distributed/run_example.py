#!/usr/bin/env python3
"""The Fashion-MNIST example trained by one process and data-parallel by `mpirun -n 2` must take
the same steps: same train loss (to float rounding), same test accuracy, parameters identical
across the processes. Usage: run_example.py EXAMPLE DATA_DIR -- mpirun args...
Exit 77 (skipped) when the dataset is not installed."""
import os
import re
import subprocess
import sys

example, data = sys.argv[1], sys.argv[2]
mpirun = sys.argv[sys.argv.index("--") + 1:]
if not os.path.exists(os.path.join(data, "train-images-idx3-ubyte.gz")):
    print("skipped: no Fashion-MNIST in %s (Debian package dataset-fashion-mnist)" % data)
    sys.exit(77)
flags = ["--data", data, "--train-limit", "1024", "--batch-size", "128", "--epochs", "1",
         "--threads", "1"]
done = re.compile(r"epoch 1 done: train loss ([0-9.]+).*test accuracy ([0-9.]+)%")


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600)
    print("$", " ".join(cmd))
    print(p.stdout)
    m = done.search(p.stdout)
    if p.returncode != 0 or not m:
        print("FAIL: exit code %d, summary line %s" % (p.returncode, "found" if m else "missing"))
        sys.exit(1)
    return float(m.group(1)), float(m.group(2)), p.stdout


loss1, acc1, _ = run([example] + flags)
loss2, acc2, out2 = run(mpirun + ["-n", "2", example, "--distributed"] + flags)
problems = []
if abs(loss1 - loss2) > 1e-3 * max(1.0, loss1):
    problems.append("train loss %g (1 process) vs %g (2 processes)" % (loss1, loss2))
if abs(acc1 - acc2) > 0.1:
    problems.append("test accuracy %g%% vs %g%%" % (acc1, acc2))
if "parameters bit-identical on all 2 processes" not in out2:
    problems.append("no replication check in the 2-process run")
if "2 processes" not in out2:
    problems.append("the 2-process run did not report 2 processes")
print("1 process: loss %g, accuracy %g%%; 2 processes: loss %g, accuracy %g%%" %
      (loss1, acc1, loss2, acc2))
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
