#!/usr/bin/env python3
"""Jobs across several "hosts" (network namespaces, see netns_hosts.py), over TCP:

  run_multihost.py fault kill|hang MPI_FAULT     a process on node1 is killed / hangs
  run_multihost.py fault linkdown MPI_FAULT      node2's link goes down mid-allreduce (3 hosts)
  run_multihost.py train MPI_TRAIN               2 hosts: params bit-identical to one process on
                                                 the whole batch; a checkpoint written before a
                                                 process dies resumes to the same params

Each check fails (exit 1) with what went wrong, is bounded in time, and exits 77 (skipped) with
the reason where namespaces cannot be made (not root)."""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import msgpack
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns_hosts  # noqa: E402

problems = []
cleanup = []  # temporary directories


def expect(cond, what):
    if not cond:
        problems.append(what)


def run(cmd, limit):
    """(exit code or None when killed at `limit` s, output, seconds)."""
    print("$", shlex.join(cmd), flush=True)
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=limit)
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        rc, out = None, e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (
            e.stdout or "")
    elapsed = time.monotonic() - start
    print(out)
    print("exit code %s after %.1f s" % (rc, elapsed), flush=True)
    return rc, out, elapsed


def fault_kill_or_hang(mode, exe):
    # Timeouts: kill 120 s (mpirun, not the watchdog, must end it), hang 2 s (see mpi_fault.cpp).
    with netns_hosts.Hosts(2) as hosts:
        rc, out, elapsed = run(hosts.mpirun("-n", "2", exe, mode), 60)
    expect(rc not in (None, 0), "the job exited with %s" % rc)
    expect(elapsed < 30, "the job took %.1f s (limit 30 s)" % elapsed)
    expect("the second psum completed" not in out, "a psum completed without process 1")
    if mode == "kill":
        expect("process rank 1 with PID" in out and "on node node1 exited on signal 9" in out,
               "mpirun did not name rank 1 on node1, killed")
    else:
        for part in ("on process 0 of 2 did not complete within 2 s (collective timeout)",
                     "process 1 is not in a collective (the last it entered: psum over "
                     "'devices' (collective #1)): it hangs outside MPI",
                     "ending this process"):
            expect(part in out, "output lacks %r" % part)


def fault_linkdown(exe):
    timeout, answer_wait = 3, 1  # LINUM_COLLECTIVE_TIMEOUT here; the watchdog's wait for answers
    with netns_hosts.Hosts(3) as hosts:
        # Linux retransmits on a dead link for ~15 min (tcp_retries2=15) before it gives up, and
        # mpirun waits that long for node2's daemon; 3 retries (a few seconds) is what makes
        # mpirun end soon (README: "A host that drops off the network").
        hosts.sysctl("net.ipv4.tcp_retries2", 3)
        outdir = tempfile.mkdtemp(prefix="linum-mh-out-")
        cleanup.append(outdir)
        cmd = hosts.mpirun("-n", "3", "-x", "LINUM_COLLECTIVE_TIMEOUT=%d" % timeout,
                           "--output-filename", outdir, exe, "loop")
        print("$", shlex.join(cmd), flush=True)
        start = time.monotonic()
        job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out, looping = "", 0
        try:
            while looping < 3 and time.monotonic() - start < 60:
                line = job.stdout.readline()
                if not line:
                    break
                out += line
                looping += "looping (collective timeout %d s)" % timeout in line
            expect(looping == 3, "only %d of 3 processes reached the loop" % looping)
            time.sleep(0.5)  # a few hundred psums in
            hosts.link(2, up=False)
            down = time.monotonic()
            print("node2's link down after %.1f s" % (down - start), flush=True)
            # Every process ends: at the timeout, plus the wait for answers, plus scheduling.
            ended = None
            while time.monotonic() - down < timeout + answer_wait + 10:
                if not any(_runs(pid, exe) for i in range(3) for pid in hosts.pids(i)):
                    ended = time.monotonic() - down
                    break
                time.sleep(0.1)
            expect(ended is not None and ended < timeout + answer_wait + 3,
                   "the processes did not all end within %d s of the link going down (%s)" %
                   (timeout + answer_wait + 3, "still running" if ended is None else
                    "%.1f s" % ended))
            try:
                rest, _ = job.communicate(timeout=40)
                out += rest
                finished = time.monotonic() - down
            except subprocess.TimeoutExpired:
                finished = None
            expect(finished is not None, "mpirun still runs 40 s after the link went down")
        finally:
            if job.poll() is None:
                job.kill()
                job.wait()
        print(out)
        print("all processes ended %s s after the link went down; mpirun %s" %
              ("%.1f" % ended if ended is not None else "(not)",
               "after %.1f s, exit code %s" % (finished, job.returncode) if finished else
               "was killed"))
        expect(job.returncode not in (None, 0), "mpirun exited %s" % job.returncode)
        # Each process's stderr, as the daemon on its host wrote it (node2's cannot reach mpirun).
        err = {}
        for r in range(3):
            path = "%s/1/rank.%d/stderr" % (outdir, r)
            err[r] = open(path).read() if os.path.exists(path) else ""
            print("--- rank %d stderr (node%d) ---\n%s" % (r, r, err[r]))
        for r in (0, 1):
            expect("on process %d of 3 did not complete within %d s (collective timeout)" % (
                r, timeout) in err[r], "rank %d does not report the timeout" % r)
            expect("process 2 did not answer within 1 s" in err[r],
                   "rank %d does not name process 2" % r)
            expect("process %d wait" % (1 - r) in err[r],
                   "rank %d does not say process %d waits too" % (r, 1 - r))
        for r in (0, 1):
            expect("process %d did not answer within 1 s" % r in err[2],
                   "rank 2 (cut off) does not name process %d" % r)


def _runs(pid, exe):
    try:
        return os.path.basename(os.readlink("/proc/%d/exe" % pid)) == os.path.basename(exe)
    except OSError:
        return False


def _params(path):
    """Flax msgpack of {'params': ...}: the arrays, flattened, by path."""
    def ext(code, data):
        shape, dtype, buf = msgpack.unpackb(data)
        return np.frombuffer(buf, dtype=dtype).reshape(shape)

    def walk(t, prefix, acc):
        if isinstance(t, dict):
            for k in sorted(t):
                walk(t[k], prefix + "/" + k, acc)
        else:
            acc[prefix] = t
        return acc

    with open(path, "rb") as f:
        return walk(msgpack.unpackb(f.read(), ext_hook=ext), "", {})


def train(exe):
    tmp = tempfile.mkdtemp(prefix="linum-mh-train-")
    cleanup.append(tmp)
    f = {k: os.path.join(tmp, k + ".msgpack") for k in ("ref1", "ref2", "full", "ckpt", "resumed")}
    steps = ["--steps", "8"]
    # One process: the whole batch in one pass, and as the 2 micro-batches 2 processes take.
    for a in ("1", "2"):
        rc, _, _ = run([exe, "--accumulate", a, "--out", f["ref" + a]] + steps, 120)
        expect(rc == 0, "one process (--accumulate %s) exited %s" % (a, rc))
    with netns_hosts.Hosts(2) as hosts:
        mpirun = hosts.mpirun("-n", "2", exe, "--distributed") + steps
        rc, out, _ = run(mpirun + ["--out", f["full"]], 120)
        expect(rc == 0 and "replicated on 2 processes" in out, "the 2-host run failed")
        rc, out, elapsed = run(mpirun + ["--save-at", "3", "--checkpoint", f["ckpt"],
                                         "--die-at", "5"], 120)
        expect(rc not in (None, 0) and "checkpoint after step 3" in out and
               "process 1: dying before step 5" in out and
               "process rank 1 with PID" in out and "exited on signal 9" in out,
               "the interrupted run did not save, die and end as expected")
        expect(elapsed < 30, "the interrupted run took %.1f s (limit 30 s)" % elapsed)
        rc, out, _ = run(mpirun + ["--resume", f["ckpt"], "--out", f["resumed"]], 120)
        expect(rc == 0 and "resumed from %s at step 3" % f["ckpt"] in out,
               "the resumed run failed")
    data = {}
    for k in ("ref1", "ref2", "full", "resumed"):
        data[k] = open(f[k], "rb").read() if os.path.exists(f[k]) else None
        expect(data[k], "no %s" % f[k])
    if problems:
        return
    expect(data["full"] == data["ref2"],
           "2 hosts and one process on the same 2 micro-batches differ (not bit-identical)")
    expect(data["resumed"] == data["full"],
           "resumed from the step-3 checkpoint differs from the uninterrupted run")
    # One pass over the whole batch sums the rows in another order: equal up to rounding.
    a, b = _params(f["full"]), _params(f["ref1"])
    diff = max(float(np.max(np.abs(a[k] - b[k]))) for k in a)
    print("2 hosts vs one process, one pass over the whole batch: max |difference| %.3g%s" %
          (diff, " (bit-identical)" if data["full"] == data["ref1"] else ""))
    expect(diff < 1e-5, "2 hosts vs one pass over the whole batch: max |difference| %g" % diff)
    print("2 hosts = one process on the same micro-batches, bit for bit; resumed = uninterrupted, "
          "bit for bit")


def main(argv):
    try:
        if argv[:1] == ["fault"] and len(argv) == 3:
            if argv[1] == "linkdown":
                fault_linkdown(argv[2])
            else:
                fault_kill_or_hang(argv[1], argv[2])
        elif argv[:1] == ["train"] and len(argv) == 2:
            train(argv[1])
        else:
            print(__doc__)
            return 2
    except netns_hosts.Unavailable as e:
        print("skipped: cannot make network namespaces here: %s" % e)
        return netns_hosts.SKIP
    finally:
        for d in cleanup:
            shutil.rmtree(d, ignore_errors=True)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
