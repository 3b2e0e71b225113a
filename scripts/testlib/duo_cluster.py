"""A whole DuoDB cluster started by the `duo` launcher (mgmd, two data nodes and
duo_sqld) on free ports of 127.0.0.1 in a test's own directory, for tests and runners
that drive it as users do (mtr-tests/run.py, the sysbench and multi-sqld tests).

    cluster = LauncherCluster(bin_dir, work_dir); cluster.start(); ...; cluster.stop()

stop() is idempotent and also stops a half-started cluster. Failures raise
LauncherError with the launcher's output.
"""

import os
import random
import socket
import subprocess
import sys
import time

UP_TIMEOUT_S = 150  # `duo up` waits 120 s for the data nodes itself
DOWN_TIMEOUT_S = 90


class LauncherError(Exception):
    """The cluster could not be started or stopped; the message says why."""


def ports_free(ports):
    """True if every port can be bound on 127.0.0.1 right now."""
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                return False
    return True


def ephemeral_port_range():
    """The kernel's range for outgoing connections' local ports (and bind(port 0))."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(x) for x in f.read().split())
            return low, high
    except (OSError, ValueError):
        return 32768, 60999


def pick_ports(count=4):
    """Returns the first of `count` consecutive free ports: mgmd on P, data nodes on P+1
    and P+2, duo_sqld on P+3, further ports for the caller.

    The block is chosen below the kernel's ephemeral range: a port from that range may be
    handed to some process's outgoing connection between this check and `duo up`
    binding it (the cluster's own mgmd clients connect many times while it starts).
    Concurrent runs pick random blocks and check each as a whole; a race with another
    process binding the same ports is still possible but makes `duo up` fail loudly,
    never a test pass wrongly."""
    low, _ = ephemeral_port_range()
    top = max(low - count - 1, 10000 + count)
    rng = random.Random(os.getpid() ^ int(time.time() * 1000))
    for _ in range(200):
        base = rng.randint(10000, top - count)
        if ports_free(range(base, base + count)):
            return base
    raise LauncherError("found no %d consecutive free ports on 127.0.0.1" % count)


class LauncherCluster:
    """One `duo up` cluster in `work_dir`/cluster; `extra_ports` more free ports follow
    the SQL port (self.extra_ports) for the caller's own processes."""

    def __init__(self, bin_dir, work_dir, extra_ports=0, data_memory_mb=None):
        self.bin_dir = bin_dir
        self.duo = os.path.join(bin_dir, "duo")
        self.data_dir = os.path.join(work_dir, "cluster")
        self.data_memory_mb = data_memory_mb
        self.started = False
        self.base_port = pick_ports(4 + extra_ports)
        self.sql_port = self.base_port + 3
        self.sql_socket = os.path.join(self.data_dir, "sqld", "mysqld.sock")  # duo up's
        self.up_output = ""
        self.extra_ports = list(range(self.base_port + 4, self.base_port + 4 + extra_ports))

    @property
    def connect_string(self):
        return "127.0.0.1:%d" % self.base_port

    def start(self):
        if not os.path.exists(self.duo):
            raise LauncherError("no launcher at %s (build the duo_launcher target)" % self.duo)
        self.started = True  # a half-started cluster must be stopped too
        command = [sys.executable, self.duo, "up", "--data-dir", self.data_dir,
                   "--base-port", str(self.base_port), "--sql-port", str(self.sql_port)]
        if self.data_memory_mb:
            command += ["--data-memory", str(self.data_memory_mb)]
        proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=UP_TIMEOUT_S)
        if proc.returncode != 0:
            raise LauncherError("`duo up` failed (exit %d):\n%s" % (proc.returncode, proc.stdout))
        self.up_output = proc.stdout

    def up_again(self):
        """`duo up` on the running cluster: starts what is not running (a killed data
        node rejoins by a node restart); returns its output."""
        proc = subprocess.run([sys.executable, self.duo, "up", "--data-dir", self.data_dir],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=UP_TIMEOUT_S)
        if proc.returncode != 0:
            raise LauncherError("`duo up` on the running cluster failed (exit %d):\n%s"
                                % (proc.returncode, proc.stdout))
        return proc.stdout

    def data_node_pid(self, node_id):
        with open(os.path.join(self.data_dir, "datad", "ndb_%d.pid" % node_id)) as f:
            return int(f.read().split()[0])

    def stop(self):
        if not self.started:
            return
        self.started = False
        proc = subprocess.run([sys.executable, self.duo, "down", "--data-dir", self.data_dir],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=DOWN_TIMEOUT_S)
        if proc.returncode != 0:
            print("`duo down` failed (exit %d):\n%s" % (proc.returncode, proc.stdout),
                  file=sys.stderr)
