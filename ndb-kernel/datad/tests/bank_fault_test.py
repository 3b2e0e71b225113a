#!/usr/bin/env python3
"""Process fault tests (issue 5): a bank-transfer workload (tools/bank/duo_bank) runs
through the client library against a two-replica cluster of real processes (duo_mgmd,
two duo_datad) while data nodes are SIGKILLed, SIGSTOPped and restarted.

After each round, with the load stopped, `duo_bank verify` must find the total balance
unchanged, every transfer row applied exactly once to the balances, and every transfer
acknowledged as committed present. At the end both replicas must be identical: the
checksum read through node 2 alone (node 1 killed) equals the one read through node 1
alone (node 1 restarted, node 2 killed).

Scenarios (each one CTest test, label `fault`):
  failover      SIGKILL of one data node under load, no restart: the other goes on.
  kill_restart  rounds: SIGKILL a data node under load, wait until the other declares it
                dead, start it again (node restart: it copies its fragments from the
                live replica while the load goes on), wait STARTED, verify; then the
                replica comparison.
  stop_restart  the same with SIGSTOP (HeartbeatIntervalDbDb=200: declared dead after
                missed heartbeats), SIGCONT (it learns it was declared dead and exits),
                start it again.
  cluster_kill  SIGKILL of both data nodes during load, both started again (system
                restart): the total holds and every transfer acknowledged in a GCI up to
                the one recovered is there (later ones may be lost); the load then runs
                again and every transfer it acknowledges is there.

Each scenario runs in a fresh temporary directory with its own duo_mgmd (--port=0) and
data nodes on OS-chosen ports; every process started is killed by its pid and the
directory removed, also when a check fails. Write-unavailability gaps (the longest time
without any commit, and every gap of 300 ms or more) are printed per round. Fault events
are logged with wall-clock unix ms, the clock duo_bank writes beside every
acknowledgment, so a lost acknowledgment can be placed among them.

Usage: bank_fault_test.py --mgmd P --mgm P --datad P --bank P [--keep]
       [--settle-seconds S] SCENARIO|all
(--keep leaves a failed scenario's directory: datad_N.log, bank_run_K.out, acks.)
"""

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

# Shared helpers: <repo>/scripts/testlib/cluster_testlib.py
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../..",
                                "scripts", "testlib"))
from cluster_testlib import TestFailure, check, read_line, reap  # noqa: E402
from cluster_testlib import eventually as cluster_testlib_eventually  # noqa: E402

MGMD = MGM = DATAD = BANK = None
# --settle-seconds: a pause after a restarted node is STARTED before the next fault
# (diagnosis only: a STARTED node must be safe to rely on at once, as in NDB).
SETTLE_S = 0.0
MGM_NODE_ID = 49

# Enough accounts that a node restart's copy takes a while under load (the copy and the
# transfers' writes to the starting node overlap), few enough to set up in seconds.
ACCOUNTS = 50000
BALANCE = 1000
THREADS = 4
# Transfers a second (all threads): bounds the transfers table (one row per transfer)
# and leaves CPU to the data nodes on a small machine.
RATE = 2000
# Transfer ids of load run k start at k * ID_STRIDE (a run makes far fewer attempts).
ID_STRIDE = 1000000000

CONFIG = """[ndbd default]
NoOfReplicas=2
# Small memory: the transfers table grows by one row per committed transfer.
DataMemory=48M
DiskPageBufferMemory=4M
SchemaMemory=1M
SharedGlobalMemory=0
TotalMemoryConfig=0
DataDir={dir}/datad
TimeBetweenGlobalCheckpoints=500
{extra}
[ndb_mgmd]
NodeId=49
HostName=127.0.0.1
DataDir={dir}

[ndbd]
NodeId=1
HostName=127.0.0.1

[ndbd]
NodeId=2
HostName=127.0.0.1

[api]
NodeId=50

[api]
NodeId=51
"""


def eventually(predicate, timeout=20, message="condition"):
    return cluster_testlib_eventually(predicate, timeout, message, interval=0.2)


def log(text):
    print(text, flush=True)


def event(text):
    """Logs a fault event with the wall-clock time duo_bank writes beside each
    acknowledgment (unix ms), so that a lost acknowledgment can be placed among them."""
    log("event at unix ms %d: %s" % (int(time.time() * 1000), text))


class Load:
    """One `duo_bank run` in the background; stop() ends it and returns its counts."""

    def __init__(self, env, run_index, seconds=600):
        self.env = env
        self.output_path = os.path.join(env.dir, "bank_run_%d.out" % run_index)
        out = open(self.output_path, "wb")
        self.proc = subprocess.Popen(
            [BANK, "run", "--seconds", str(seconds), "--threads", str(THREADS),
             "--rate", str(RATE), "--seed", str(run_index),
             "--first-id", str(run_index * ID_STRIDE), "--ack-file", env.ack_path,
             "--connect", "127.0.0.1:%d" % env.port],
            stdout=out, stderr=subprocess.STDOUT)
        out.close()
        env.processes.append(self.proc)

    def output(self):
        with open(self.output_path, errors="replace") as f:
            return f.read()

    def committed_so_far(self):
        with open(self.env.ack_path) as f:
            return sum(1 for line in f if line[:1].isdigit())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            raise TestFailure("duo_bank run did not stop: %s" % self.output()[-3000:])
        out = self.output()
        match = re.search(r"^result: (.*)$", out, re.M)
        check(match is not None, "duo_bank run result line (rc %d): %s" % (rc, out[-3000:]))
        counts = {}
        for field in match.group(1).split():
            key, value = field.split("=")
            counts[key] = float(value) if "." in value else int(value)
        counts["gaps"] = [int(g) for g in re.findall(r"^gap (\d+) ms", out, re.M)]
        # The first message of each kind of refusal, and the unknown outcomes.
        counts["messages"] = re.findall(r"^(?:node_failure|node_starting|no_node|lock|"
                                        r"other_temporary|error|unknown outcome[^:]*): .*$",
                                        out, re.M)
        check(rc == 0 and counts["error"] == 0,
              "duo_bank run failed with non-retryable errors (rc %d): %s" % (rc, out[-3000:]))
        return counts


class Env:
    """Temporary directory, processes and the cluster's data nodes; cleans up on exit."""

    def __init__(self, extra_config=""):
        self.dir = tempfile.mkdtemp(prefix="duo_bank_test.")
        self.configdir = os.path.join(self.dir, "configdir")
        self.config_path = os.path.join(self.dir, "config.ini")
        self.ack_path = os.path.join(self.dir, "acks")
        with open(self.config_path, "w") as f:
            f.write(CONFIG.format(dir=self.dir, extra=extra_config))
        self.processes = []
        self.nodes = {}
        self.port = None
        self.runs = 0
        self.keep = False  # --keep: leave the directory (logs) for a look after a failure

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # reap() removes the directory it is given: an empty stand-in when keeping.
        reap(self.processes, [], tempfile.mkdtemp() if self.keep else self.dir)
        return False

    def start_mgmd(self):
        log_file = open(os.path.join(self.dir, "mgmd.stderr"), "ab")
        proc = subprocess.Popen(
            [MGMD, "--config-file=" + self.config_path, "--configdir=" + self.configdir,
             "--port=0", "--bind-address=127.0.0.1", "--foreground"],
            stdout=subprocess.PIPE, stderr=log_file)
        log_file.close()
        self.processes.append(proc)
        line = read_line(proc.stdout, 20)
        match = re.search(rb"listening on .*:(\d+)", line)
        check(match is not None, "mgmd did not report its port: %r" % line)
        self.port = int(match.group(1))

    def start_datad(self, node_id, initial):
        log_file = open(self.datad_log(node_id), "ab")
        proc = subprocess.Popen(
            [DATAD, "-c", "127.0.0.1:%d" % self.port, "--ndb-nodeid=%d" % node_id,
             "--foreground"] + (["--initial"] if initial else []),
            stdout=log_file, stderr=log_file)
        log_file.close()
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

    def mgm(self, command, timeout=40):
        proc = subprocess.run([MGM, "-c", "127.0.0.1:%d" % self.port, "-e", command],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()

    def all_status(self):
        rc, out, _ = self.mgm("all status")
        return out if rc == 0 else ""

    def wait_started(self, node_ids, timeout=60):
        def started():
            for i in node_ids:  # a refused start ends the process: fail at once
                rc = self.nodes[i].poll()
                check(rc is None, "datad %d exited with %s while starting:\n%s" %
                      (i, rc, self.read(self.datad_log(i))[-3000:]))
            out = self.all_status()
            return all("Node %d: started" % i in out for i in node_ids) and out
        try:
            return eventually(started, timeout, "nodes %s started" % (node_ids,))
        except TestFailure as error:
            logs = "\n".join("--- datad %d:\n%s" % (i, self.read(self.datad_log(i))[-3000:])
                             for i in node_ids)
            raise TestFailure("%s; all status: %r\n%s" % (error, self.all_status(), logs))

    def bank(self, *args, timeout=300):
        proc = subprocess.run([BANK] + list(args) + ["--connect", "127.0.0.1:%d" % self.port],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return proc.returncode, proc.stdout.decode() + proc.stderr.decode()

    def start_load(self):
        self.runs += 1
        return Load(self, self.runs)

    def verify(self, what, ack_gci_max=None):
        """duo_bank verify; returns its checksum."""
        args = ["verify", "--accounts", str(ACCOUNTS), "--balance", str(BALANCE),
                "--ack-file", self.ack_path]
        if ack_gci_max is not None:
            args += ["--ack-gci-max", str(ack_gci_max)]
        rc, out = self.bank(*args)
        check(rc == 0, "verify %s: rc %d\n%s" % (what, rc, out))
        log("verify %s: %s" % (what, out.strip().splitlines()[0]))
        match = re.search(r"^checksum (\w+)$", out, re.M)
        check(match is not None, "checksum in %r" % out)
        return match.group(1)

    def dead_count(self, observer, node_id):
        return self.read(self.datad_log(observer)).count("Node %d declared dead" % node_id)

    def wait_declared_dead(self, observer, node_id, before, timeout=30):
        eventually(lambda: self.dead_count(observer, node_id) > before, timeout,
                   "node %d declares node %d dead" % (observer, node_id))

    def wait_not_connected(self, node_id, timeout=30):
        eventually(lambda: "Node %d: not connected" % node_id in self.all_status(), timeout,
                   "mgmd reports node %d not connected" % node_id)

    def kill(self, node_id):
        """SIGKILL data node `node_id`; returns once the other declared it dead and mgmd
        freed its id."""
        other = 3 - node_id
        before = self.dead_count(other, node_id)
        event("SIGKILL data node %d" % node_id)
        self.nodes[node_id].send_signal(signal.SIGKILL)
        self.nodes[node_id].wait(timeout=10)
        self.wait_declared_dead(other, node_id, before)
        event("data node %d declared dead by data node %d" % (node_id, other))
        self.wait_not_connected(node_id)

    def restart(self, node_id, timeout=240):
        """Starts data node `node_id` again (no --initial) while the other runs and waits
        until it is STARTED; it must have joined the running cluster by a node restart
        (a lone system restart from its own files would be a second cluster with stale
        data). Returns the seconds that took."""
        log_before = len(self.read(self.datad_log(node_id)))
        start = time.time()
        self.start_datad(node_id, initial=False)
        self.wait_started([node_id], timeout)
        seconds = time.time() - start
        new_log = self.read(self.datad_log(node_id))[log_before:]
        phase4 = re.search(r"Start phase 4 completed \((.*)\)", new_log)
        check(phase4 is not None and phase4.group(1).startswith("node restart"),
              "data node %d did not start by a node restart while data node %d runs: %s" %
              (node_id, 3 - node_id, phase4.group(0) if phase4 else new_log[-3000:]))
        time.sleep(SETTLE_S)
        return seconds


def start_cluster(env):
    env.start_mgmd()
    for i in (1, 2):
        env.start_datad(i, initial=True)
    env.wait_started([1, 2])
    rc, out = env.bank("setup", "--accounts", str(ACCOUNTS), "--balance", str(BALANCE))
    check(rc == 0, "setup: %s" % out)
    open(env.ack_path, "w").close()


def report_load(what, counts):
    log("load %s: committed=%d unknown=%d node_failure=%d node_starting=%d no_node=%d "
        "lock=%d other_temporary=%d longest_gap_ms=%d gaps_ms=%s" %
        (what, counts["committed"], counts["unknown"], counts["node_failure"],
         counts["node_starting"], counts["no_node"], counts["lock"],
         counts["other_temporary"], counts["longest_gap_ms"], counts["gaps"]))
    for message in counts["messages"][:8]:
        log("  " + message)


def wait_commits(load, count, timeout=60):
    """Waits until the load has acknowledged `count` more transfers than now."""
    target = load.committed_so_far() + count
    eventually(lambda: load.committed_so_far() >= target, timeout,
               "%d more transfers committed: %s" % (count, load.output()[-2000:]))


def compare_replicas(env):
    """Both nodes up, no load: the checksum through node 2 alone equals the one through
    node 1 alone (each time the other killed), and equals the one with both up."""
    both = env.verify("with both nodes")
    env.kill(1)
    through_2 = env.verify("through node 2 alone")
    seconds = env.restart(1)
    log("node 1 restarted (no load) in %.1fs" % seconds)
    env.kill(2)
    through_1 = env.verify("through node 1 alone")
    check(through_2 == through_1, "replicas differ: node 2 %s, node 1 %s" % (through_2, through_1))
    check(both == through_1, "checksum with both nodes %s, through one %s" % (both, through_1))
    seconds = env.restart(2)
    log("node 2 restarted (no load) in %.1fs" % seconds)
    check(env.verify("after the last restart") == both, "checksum changed without load")
    log("replicas identical: checksum %s" % both)


def scenario_failover(env):
    """SIGKILL of node 2 under load: node 1 goes on alone; nothing acknowledged is lost."""
    start_cluster(env)
    load = env.start_load()
    wait_commits(load, 500)
    env.kill(2)
    wait_commits(load, 500)
    counts = load.stop()
    report_load("failover (kill node 2)", counts)
    check(counts["committed"] >= 1000, "committed %d" % counts["committed"])
    env.verify("after node 2's failure")
    # And node 1 is still consistent under a second load on it alone.
    load = env.start_load()
    wait_commits(load, 300)
    report_load("node 1 alone", load.stop())
    env.verify("node 1 alone")


def fault_rounds(env, fault, nodes):
    """One round per entry of `nodes`: load, fault(node), restart, more load, verify.
    Prints the write-unavailability (longest time without a commit) of every round."""
    gaps = []
    restarts = []
    for round_index, node_id in enumerate(nodes, 1):
        load = env.start_load()
        wait_commits(load, 1000)
        fault_start = time.time()
        fault(node_id)
        declared = time.time() - fault_start
        seconds = env.restart(node_id)
        # The load goes on after the restarted node is back.
        wait_commits(load, 1000)
        counts = load.stop()
        log("round %d: node %d declared dead after %.1fs, restarted (node restart) in %.1fs" %
            (round_index, node_id, declared, seconds))
        report_load("round %d" % round_index, counts)
        check(counts["committed"] >= 2000, "committed %d" % counts["committed"])
        env.verify("after round %d" % round_index)
        gaps.append(counts["longest_gap_ms"])
        restarts.append(seconds)
    log("write unavailability per round (ms): %s; median %d, max %d; node restarts (s): %s" %
        (gaps, statistics.median(gaps), max(gaps), ", ".join("%.1f" % r for r in restarts)))


def scenario_kill_restart(env):
    start_cluster(env)
    fault_rounds(env, env.kill, [2, 1, 2, 1, 2, 1])
    compare_replicas(env)


def scenario_stop_restart(env):
    start_cluster(env)

    def stop(node_id):
        other = 3 - node_id
        before = env.dead_count(other, node_id)
        event("SIGSTOP data node %d" % node_id)
        env.nodes[node_id].send_signal(signal.SIGSTOP)
        env.wait_declared_dead(other, node_id, before)
        event("data node %d declared dead by data node %d; SIGCONT" % (node_id, other))
        env.nodes[node_id].send_signal(signal.SIGCONT)
        try:
            rc = env.nodes[node_id].wait(timeout=30)
        except subprocess.TimeoutExpired:
            raise TestFailure("datad %d did not exit after SIGCONT" % node_id)
        event("data node %d exited (%d)" % (node_id, rc))
        check(rc != 0, "datad %d exit code %d after being declared dead" % (node_id, rc))
        env.wait_not_connected(node_id)

    fault_rounds(env, stop, [2, 1, 2, 1])
    compare_replicas(env)


def recovered_gci(env):
    gcis = []
    for i in (1, 2):
        gcis += [int(g) for g in re.findall(r"recovering to GCI (\d+)", env.read(env.datad_log(i)))]
    return max(gcis) if gcis else None


def scenario_cluster_kill(env):
    """Whole-cluster SIGKILL during load, system restart: total and consistency hold;
    acknowledged transfers of GCIs up to the recovered one are there."""
    start_cluster(env)
    load = env.start_load()
    wait_commits(load, 1000)
    time.sleep(3.0)  # several global checkpoints complete under load
    for i in (1, 2):
        env.nodes[i].send_signal(signal.SIGKILL)
    for i in (1, 2):
        env.nodes[i].wait(timeout=10)
    counts = load.stop()
    report_load("until the whole-cluster kill", counts)
    before = {i: env.read(env.datad_log(i)).count("recovering to GCI") for i in (1, 2)}
    for i in (1, 2):
        env.wait_not_connected(i)
    for i in (1, 2):
        env.start_datad(i, initial=False)
    env.wait_started([1, 2], timeout=240)
    gci = recovered_gci(env)
    check(gci is not None and any(env.read(env.datad_log(i)).count("recovering to GCI") >
                                  before[i] for i in (1, 2)),
          "system restart logged its GCI: %s" % env.read(env.datad_log(1))[-3000:])
    log("system restart recovered GCI %d" % gci)
    env.verify("after the system restart (acks up to GCI %d required)" % gci, ack_gci_max=gci)
    # The cluster serves again; what it acknowledges now is all there.
    os.rename(env.ack_path, env.ack_path + ".before_crash")
    open(env.ack_path, "w").close()
    load = env.start_load()
    wait_commits(load, 500)
    report_load("after the system restart", load.stop())
    env.verify("after load on the restarted cluster")


SCENARIOS = {name[len("scenario_"):]: fn for name, fn in globals().items()
             if name.startswith("scenario_")}
# Extra [ndbd default] lines per scenario.
EXTRA_CONFIG = {"stop_restart": "HeartbeatIntervalDbDb=200\n"}


def main():
    global MGMD, MGM, DATAD, BANK, SETTLE_S
    parser = argparse.ArgumentParser()
    for name in ("mgmd", "mgm", "datad", "bank"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--keep", action="store_true",
                        help="keep the test directory of a failed scenario")
    parser.add_argument("--settle-seconds", type=float, default=0.0)
    parser.add_argument("scenario", choices=sorted(SCENARIOS) + ["all"])
    options = parser.parse_args()
    MGMD, MGM, DATAD, BANK = options.mgmd, options.mgm, options.datad, options.bank
    SETTLE_S = options.settle_seconds
    names = sorted(SCENARIOS) if options.scenario == "all" else [options.scenario]
    failed = 0
    for name in names:
        start = time.time()
        with Env(EXTRA_CONFIG.get(name, "")) as env:
            try:
                SCENARIOS[name](env)
                log("PASS %s (%.1fs)" % (name, time.time() - start))
            except (TestFailure, subprocess.TimeoutExpired, OSError) as error:
                failed += 1
                log("FAIL %s: %s" % (name, error))
                for i in (1, 2):
                    log("--- datad %d log tail:\n%s" % (i, env.read(env.datad_log(i))[-4000:]))
                if options.keep:
                    env.keep = True
                    log("test directory kept: %s" % env.dir)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
