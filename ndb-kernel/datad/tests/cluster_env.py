"""The process-test environment shared by the data node's cluster tests
(datad_cluster_test.py, bank_fault_test.py, netns_split_test.py): a temporary directory
with a config.ini, duo_mgmd and duo_datad processes started from it, mgm commands, and
the waits and faults those tests build on (started, declared dead, SIGKILL, node
restart). Every process started is killed by its pid and the directory removed on exit,
also when a check fails.

Single-threaded: one test drives one ClusterEnv.

    with ClusterEnv(binaries, cluster_config, "duo_x_test.") as env:
        env.start_mgmd(); env.start_datad(1); ...

`binaries` has the attributes mgmd, mgm and datad (paths; argparse options do).
cluster_config(directory) returns the config.ini text for the test directory, built with
config_ini() (scripts/testlib/config_ini.py). That builder and the scenario loop
(run_scenarios, scenarios_in of scripts/testlib/cluster_testlib.py) are re-exported here
for the tests of this folder.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time

# Shared low-level helpers: <repo>/scripts/testlib/cluster_testlib.py
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../..",
                                "scripts", "testlib"))
from cluster_testlib import TestFailure, check, reap, start_datad, start_mgmd  # noqa: E402
from cluster_testlib import run_scenarios, scenarios_in  # noqa: E402,F401
from cluster_testlib import eventually as cluster_testlib_eventually  # noqa: E402
from config_ini import MGM_NODE_ID, config_ini, small_ndbd_default  # noqa: E402,F401


def eventually(predicate, timeout=20, message="condition"):
    return cluster_testlib_eventually(predicate, timeout, message, interval=0.2)


def log(text):
    print(text, flush=True)


def event(text):
    """Logs a fault event with the wall-clock time duo_bank writes beside each
    acknowledgment (unix ms), so that a lost acknowledgment can be placed among them."""
    log("event at unix ms %d: %s" % (int(time.time() * 1000), text))


def wait_exit(proc, timeout=15, what="process"):
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TestFailure("%s did not exit within %ss" % (what, timeout))


class ClusterEnv:
    """Temporary directory, processes and daemon pids of one scenario; cleans up on exit.

    mgmd_host is where mgmd listens and everyone connects to it. datad_prefix maps a
    data node id to a command prefix it runs under (e.g. `ip netns exec NS`).
    """

    def __init__(self, binaries, config, prefix, mgmd_host="127.0.0.1", start_timeout=30,
                 log_tail=2000, start_fails_on_exit=False):
        self.binaries = binaries
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.configdir = os.path.join(self.dir, "configdir")
        self.config_path = os.path.join(self.dir, "config.ini")
        self.write_config(config(self.dir))
        self.mgmd_host = mgmd_host
        self.start_timeout = start_timeout
        self.log_tail = log_tail
        self.start_fails_on_exit = start_fails_on_exit
        self.datad_prefix = {}
        self.processes = []
        self.pid_files = []
        self.nodes = {}  # data node id -> its latest process
        self.mgmd = None
        self.port = None
        # Seconds to wait after a restarted node is STARTED (bank_fault --settle-seconds).
        self.settle_seconds = 0.0
        self.keep = False  # leave the directory (logs) for a look after a failure (--keep)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Kills every process started and removes the directory; idempotent."""
        reap(self.processes, self.daemon_pids(), None if self.keep else self.dir)
        self.processes = []
        self.pid_files = []

    def write_config(self, text):
        """(Re)writes config.ini: before mgmd starts, a scenario may change the cluster."""
        with open(self.config_path, "w") as f:
            f.write(text)

    def daemon_pids(self):
        """The pids written to pid_files by daemons started in the background (`duo up`);
        a file not (yet) there or not holding a pid is passed over."""
        pids = []
        for path in self.pid_files:
            try:
                with open(path) as f:
                    pids.append(int(f.read().strip()))
            except (OSError, ValueError):
                pass
        return pids

    def connect_string(self):
        return "%s:%d" % (self.mgmd_host, self.port)

    def start_mgmd(self, port=0):
        self.mgmd, self.port = start_mgmd(self.binaries.mgmd, self.config_path, self.configdir,
                                          os.path.join(self.dir, "mgmd.stderr"),
                                          self.mgmd_host, port)
        self.processes.append(self.mgmd)
        return self.mgmd

    def start_datad(self, node_id, extra=(), initial=True):
        proc = start_datad(self.binaries.datad, self.connect_string(), node_id,
                           self.datad_log(node_id), initial, extra,
                           self.datad_prefix.get(node_id, ()))
        self.processes.append(proc)
        self.nodes[node_id] = proc
        return proc

    def datad_log(self, node_id):
        return os.path.join(self.dir, "datad_%d.log" % node_id)

    def read(self, path):
        try:
            with open(path, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def cluster_log(self):
        return self.read(os.path.join(self.configdir, "ndb_%d_cluster.log" % MGM_NODE_ID))

    def log_failure(self, keep, node_ids=(1, 2), chars=4000, cluster_log_chars=0):
        """After a failed scenario: prints the tail of each data node's log (and of the
        cluster log when cluster_log_chars); with `keep`, leaves the directory for a look
        and says where it is."""
        for i in node_ids:
            log("--- datad %d log tail:\n%s" % (i, self.read(self.datad_log(i))[-chars:]))
        if cluster_log_chars:
            log("--- cluster log tail:\n%s" % self.cluster_log()[-cluster_log_chars:])
        if keep:
            self.keep = True
            log("test directory kept: %s" % self.dir)

    def mgm(self, command, timeout=40):
        proc = subprocess.run([self.binaries.mgm, "-c", self.connect_string(), "-e", command],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()

    def all_status(self):
        rc, out, _ = self.mgm("all status")
        return out if rc == 0 else ""

    def wait_started(self, node_ids, timeout=None, fail_on_exit=None):
        """Waits until mgmd reports every node of node_ids started. fail_on_exit (default
        start_fails_on_exit): a data node process that exits meanwhile (a refused start)
        fails at once."""
        if fail_on_exit is None:
            fail_on_exit = self.start_fails_on_exit

        def started():
            for i in node_ids if fail_on_exit else ():
                rc = self.nodes[i].poll()
                check(rc is None, "datad %d exited with %s while starting:\n%s" %
                      (i, rc, self.read(self.datad_log(i))[-self.log_tail:]))
            out = self.all_status()
            return all("Node %d: started" % i in out for i in node_ids) and out
        timeout = self.start_timeout if timeout is None else timeout
        try:
            return eventually(started, timeout, "nodes %s started" % (node_ids,))
        except TestFailure as error:
            logs = "\n".join("--- datad %d:\n%s" % (i, self.read(self.datad_log(i))[-self.log_tail:])
                             for i in node_ids if os.path.exists(self.datad_log(i)))
            raise TestFailure("%s; all status: %r\n%s" % (error, self.all_status(), logs))

    def dead_count(self, observer, node_id):
        return self.read(self.datad_log(observer)).count("Node %d declared dead" % node_id)

    def wait_declared_dead(self, observer, node_id, before, timeout=30):
        eventually(lambda: self.dead_count(observer, node_id) > before, timeout,
                   "node %d declares node %d dead" % (observer, node_id))

    def wait_not_connected(self, node_id, timeout=30):
        eventually(lambda: "Node %d: not connected" % node_id in self.all_status(), timeout,
                   "mgmd reports node %d not connected" % node_id)

    def kill(self, node_id):
        """SIGKILL data node `node_id` of a two-node cluster; returns once the other
        declared it dead and mgmd freed its id."""
        other = 3 - node_id
        before = self.dead_count(other, node_id)
        event("SIGKILL data node %d" % node_id)
        self.nodes[node_id].send_signal(signal.SIGKILL)
        self.nodes[node_id].wait(timeout=10)
        self.wait_declared_dead(other, node_id, before)
        event("data node %d declared dead by data node %d" % (node_id, other))
        self.wait_not_connected(node_id)

    def restart(self, node_id, timeout=240):
        """Starts data node `node_id` of a two-node cluster again (no --initial) while the
        other runs and waits until it is STARTED; it must have joined the running cluster
        by a node restart (a lone system restart from its own files would be a second
        cluster with stale data). Returns the seconds that took."""
        log_before = len(self.read(self.datad_log(node_id)))
        start = time.time()
        self.start_datad(node_id, initial=False)
        self.wait_started([node_id], timeout, fail_on_exit=True)
        seconds = time.time() - start
        new_log = self.read(self.datad_log(node_id))[log_before:]
        phase4 = re.search(r"Start phase 4 completed \((.*)\)", new_log)
        check(phase4 is not None and phase4.group(1).startswith("node restart"),
              "data node %d did not start by a node restart while data node %d runs: %s" %
              (node_id, 3 - node_id, phase4.group(0) if phase4 else new_log[-3000:]))
        time.sleep(self.settle_seconds)
        return seconds
