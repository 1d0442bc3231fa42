#!/usr/bin/env python3
"""Several "hosts" on one Linux machine, for running MPI jobs over a real TCP/IP stack.

Each host is a network namespace with its own loopback, an `eth0` (a veth pair) plugged into a
bridge that lives in one more namespace (the switch), an address 10.213.0.(i+1)/24 and a name
nodeI that the hosts' /etc/hosts resolve (ip netns exec mounts /etc/netns/NS/hosts over it).
Traffic stays between these namespaces: nothing is added to the machine's own network.

mpirun runs on node0 and starts OpenMPI's daemons (orted) on the others through an agent script
given as plm_rsh_agent: it does what `ssh HOST COMMAND` does, with `ip netns exec`, a UTS
namespace whose hostname is the node's name, and a fresh environment (PATH and HOME only, as a
login over ssh; variables reach the remote processes only through `mpirun -x`).

Used as a module by run_multihost.py, or as a command to rehearse a multi-machine job here:
  sudo tests/distributed/netns_hosts.py --hosts 2 -- {mpirun} -n 2 ./build/examples/fashion_mnist --distributed
where {mpirun} becomes mpirun on node0 with the hostfile and the agent (see Hosts.mpirun).
Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN); exits 77 (skipped) where namespaces cannot be made.
Namespaces, links and files are removed on every exit (also on SIGTERM, as meson's timeout
sends); namespaces a killed run left behind are removed by the next run.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
PREFIX = "linum-mh-"  # namespaces are PREFIX<pid of the owning run>-<host or sw>
SUBNET = "10.213.0"


class Unavailable(Exception):
    """Namespaces cannot be made here (not root, no CAP_NET_ADMIN, no ip, no bridge)."""


def _ip(*args, check=True):
    p = subprocess.run(["ip", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("ip %s: %s" % (" ".join(args), p.stdout.strip()))
    return p


def _namespaces():
    p = _ip("netns", "list", check=False)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def _pids(ns):
    p = _ip("netns", "pids", ns, check=False)
    return [int(x) for x in p.stdout.split() if x.isdigit()]


def _remove(ns):
    """Kills every process in namespace ns (all started by a run of this harness), deletes it."""
    for _ in range(50):
        pids = _pids(ns)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    _ip("netns", "del", ns, check=False)
    shutil.rmtree("/etc/netns/" + ns, ignore_errors=True)


def sweep_stale():
    """Removes the namespaces of runs that no longer exist (a SIGKILLed harness cannot clean)."""
    for ns in _namespaces():
        m = re.match(re.escape(PREFIX) + r"(\d+)-", ns)
        if m and not os.path.exists("/proc/" + m.group(1)):
            _remove(ns)


def _on_sigterm(signum, frame):
    raise SystemExit(128 + signum)  # unwinds through the finally blocks that clean up


class Hosts:
    """`count` hosts node0..node{count-1} with `slots` MPI slots each (a context manager)."""

    def __init__(self, count, slots=1):
        self.count, self.slots = count, slots
        self.prefix = "%s%d-" % (PREFIX, os.getpid())
        self.names = ["node%d" % i for i in range(count)]
        self.addresses = ["%s.%d" % (SUBNET, i + 1) for i in range(count)]
        self.made = []
        self.dir = None

    def ns(self, i):
        return self.prefix + str(i)

    def __enter__(self):
        if os.geteuid() != 0:
            raise Unavailable("not root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)")
        if shutil.which("ip") is None or shutil.which("unshare") is None:
            raise Unavailable("`ip` (iproute2) or `unshare` (util-linux) is missing")
        signal.signal(signal.SIGTERM, _on_sigterm)
        sweep_stale()
        try:
            self._make()
        except BaseException as e:
            self.close()
            if isinstance(e, RuntimeError):
                raise Unavailable(str(e)) from e
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def _add_ns(self, name):
        _ip("netns", "add", name)
        self.made.append(name)
        _ip("-n", name, "link", "set", "lo", "up")

    def _make(self):
        self.dir = tempfile.mkdtemp(prefix=self.prefix)
        sw = self.prefix + "sw"
        self._add_ns(sw)
        _ip("-n", sw, "link", "add", "br0", "type", "bridge")
        _ip("-n", sw, "link", "set", "br0", "up")
        hosts = "127.0.0.1 localhost\n" + "".join(
            "%s %s\n" % (a, n) for a, n in zip(self.addresses, self.names))
        for i in range(self.count):
            ns = self.ns(i)
            self._add_ns(ns)
            _ip("-n", sw, "link", "add", "p%d" % i, "type", "veth", "peer", "name", "eth0",
                "netns", ns)
            _ip("-n", sw, "link", "set", "p%d" % i, "master", "br0", "up")
            _ip("-n", ns, "addr", "add", self.addresses[i] + "/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            os.makedirs("/etc/netns/" + ns, exist_ok=True)
            with open("/etc/netns/%s/hosts" % ns, "w") as f:
                f.write(hosts)
        self.hostfile = os.path.join(self.dir, "hostfile")
        with open(self.hostfile, "w") as f:
            f.write("".join("%s slots=%d\n" % (n, self.slots) for n in self.names))
        # The launcher OpenMPI runs as `agent HOST COMMAND...` where it would run ssh.
        self.agent = os.path.join(self.dir, "agent")
        cases = "".join("  %s) ns=%s ;;\n" % (n, self.ns(i)) for i, n in enumerate(self.names))
        with open(self.agent, "w") as f:
            f.write("#!/bin/sh\n"
                    "# ssh HOST COMMAND for the namespaces of this run (see netns_hosts.py)\n"
                    "host=$1; shift\n"
                    'case "$host" in\n' + cases +
                    '  *) echo "agent: no host named $host" >&2; exit 255 ;;\n'
                    "esac\n"
                    'exec env -i PATH="$PATH" HOME="$HOME" ip netns exec "$ns" '
                    """unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$*"\n""")
        os.chmod(self.agent, 0o755)
        # Fails here, not in the middle of a test, where a UTS namespace cannot be made.
        p = subprocess.run([self.agent, self.names[-1], "hostname"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0 or p.stdout.strip() != self.names[-1]:
            raise RuntimeError("the agent cannot start a command on %s: %s" %
                               (self.names[-1], p.stdout.strip()))

    def close(self):
        for ns in reversed(self.made):
            _remove(ns)
        self.made = []
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def on(self, i, cmd):
        """cmd run on host i (its namespace and hostname, this environment)."""
        return ["ip", "netns", "exec", self.ns(i), "unshare", "--uts", "sh", "-c",
                'hostname "$0" && exec "$@"', self.names[i]] + list(cmd)

    def mpirun(self, *extra):
        """mpirun on node0 for a job over every host: the hostfile, the agent, TCP only (on
        eth0, for MPI's messages and OpenMPI's own out-of-band channel), no core binding (every
        host shares this machine's cores).

        The ranks run quiet (orte_execute_quiet, set for them only): when a peer dies, a rank's
        TCP layer prints a help message that OpenMPI 4.1 relays to mpirun from PMIx's thread,
        unsynchronised with mpirun's own teardown; now and then mpirun segfaults there
        (orte_rml_oob_send_buffer_nb under pmix_server_log_fn) instead of reporting the death.
        mpirun itself stays verbose, so its report of which rank died is still printed.

        The agent starts the other hosts' processes in a fresh environment, as ssh would, so the
        OpenBLAS settings of this one (OPENBLAS_CORETYPE picks the GEMM kernels, and with them
        the rounding) are forwarded with -x: every rank then runs the kernels of the one-process
        reference."""
        blas_env = [a for k in sorted(os.environ) if k.startswith("OPENBLAS_") for a in ("-x", k)]
        return self.on(0, ["mpirun", "--allow-run-as-root", "--hostfile", self.hostfile,
                           "--mca", "plm_rsh_agent", self.agent,
                           "--mca", "btl", "tcp,self",
                           "--mca", "btl_tcp_if_include", "eth0",
                           "--mca", "oob_tcp_if_include", "eth0",
                           "-x", "OMPI_MCA_orte_execute_quiet=1",
                           "--bind-to", "none", *blas_env, *extra])

    def link(self, i, up):
        """Takes host i's network link down (or up again), as a pulled cable would."""
        state = "up" if up else "down"
        _ip("-n", self.ns(i), "link", "set", "eth0", state)

    def sysctl(self, key, value):
        """Sets a per-namespace kernel setting (net.*) on every host."""
        for i in range(self.count):
            subprocess.run(["ip", "netns", "exec", self.ns(i), "sysctl", "-q", "-w",
                            "%s=%s" % (key, value)], check=True)

    def pids(self, i):
        return _pids(self.ns(i))


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, default=2)
    ap.add_argument("--slots", type=int, default=1)
    ap.add_argument("command", nargs=argparse.REMAINDER,
                    help="-- COMMAND...; the argument {mpirun} becomes mpirun on node0 for the "
                         "hosts, its other options following it")
    a = ap.parse_args(argv)
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no command")
    try:
        with Hosts(a.hosts, a.slots) as hosts:
            full = []
            for x in cmd:
                full += hosts.mpirun() if x == "{mpirun}" else [x]
            return subprocess.run(full).returncode
    except Unavailable as e:
        print("skipped: cannot make network namespaces here: %s" % e)
        return SKIP


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
