"""The duo_bank transfer workload (tools/bank) for process fault tests
(bank_fault_test.py, netns_split_test.py): a ClusterEnv that also runs `duo_bank setup /
run / verify` against its cluster, the background load (Load), and the checks built on
them: acknowledged transfers, write-unavailability gaps, replica comparison.

`duo_bank verify` checks the total balance unchanged, every transfer row applied exactly
once to the balances and every transfer acknowledged as committed present (the
acknowledgment file every load run appends to), and prints an order-independent checksum.

Single-threaded: one test drives one BankEnv; each Load is one duo_bank process.
`binaries` needs the attribute bank besides those ClusterEnv needs.
"""

import os
import re
import signal
import subprocess

from cluster_env import ClusterEnv, TestFailure, check, eventually, log

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


class Load:
    """One `duo_bank run` in the background; stop() ends it and returns its counts."""

    def __init__(self, env, run_index, seconds=600):
        self.env = env
        self.output_path = os.path.join(env.dir, "bank_run_%d.out" % run_index)
        out = open(self.output_path, "wb")
        self.proc = subprocess.Popen(
            [env.binaries.bank, "run", "--seconds", str(seconds), "--threads", str(THREADS),
             "--rate", str(RATE), "--seed", str(run_index),
             # Every other run has the client library's receive thread read the links
             # for all threads (threshold 0), the others let the waiting threads poll
             # themselves (THREADS is below the default 8): both modes meet the faults.
             "--recv-thread-activation-threshold", "0" if run_index % 2 == 0 else "8",
             "--first-id", str(run_index * ID_STRIDE), "--ack-file", env.ack_path,
             "--connect", env.connect_string()],
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


def add_bank_test_options(parser):
    """The command line of a test driving a BankEnv: the binaries it starts and --keep."""
    for name in ("mgmd", "mgm", "datad", "bank"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--keep", action="store_true",
                        help="keep the test directory of a failed scenario")


class BankEnv(ClusterEnv):
    """A ClusterEnv with the bank tables: setup, load runs, verify."""

    def __init__(self, binaries, config, prefix, **kwargs):
        kwargs.setdefault("start_timeout", 60)
        kwargs.setdefault("log_tail", 3000)
        kwargs.setdefault("start_fails_on_exit", True)
        super().__init__(binaries, config, prefix, **kwargs)
        self.ack_path = os.path.join(self.dir, "acks")
        self.runs = 0

    def bank(self, *args, timeout=300):
        proc = subprocess.run([self.binaries.bank] + list(args) +
                              ["--connect", self.connect_string()],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return proc.returncode, proc.stdout.decode() + proc.stderr.decode()

    def setup_bank(self):
        rc, out = self.bank("setup", "--accounts", str(ACCOUNTS), "--balance", str(BALANCE))
        check(rc == 0, "setup: %s" % out)
        open(self.ack_path, "w").close()

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

    def recovered_gci(self):
        """The highest GCI a data node logged it recovers to (system restarts), or None."""
        gcis = []
        for i in (1, 2):
            gcis += [int(g) for g in re.findall(r"recovering to GCI (\d+)",
                                                self.read(self.datad_log(i)))]
        return max(gcis) if gcis else None

    def system_restart(self, not_connected_timeout=30):
        """Both data nodes stopped: waits until mgmd freed their ids, starts both again
        (no --initial: a system restart from their files) and waits until they are
        STARTED."""
        for i in (1, 2):
            self.wait_not_connected(i, timeout=not_connected_timeout)
        for i in (1, 2):
            self.start_datad(i, initial=False)
        self.wait_started([1, 2], timeout=240)

    def verify_after_system_restart(self, gci, saved_acks_suffix):
        """Verifies that every transfer acknowledged in a GCI up to `gci`, the one the
        system restart recovered, is there (later ones may be lost); then runs a load on
        the restarted cluster with a fresh acknowledgment file (the old one kept with
        `saved_acks_suffix`), whose every acknowledgment must hold from then on."""
        self.verify("after the system restart (acks up to GCI %d required)" % gci,
                    ack_gci_max=gci)
        os.rename(self.ack_path, self.ack_path + saved_acks_suffix)
        open(self.ack_path, "w").close()
        load = self.start_load()
        wait_commits(load, 500)
        report_load("after the system restart", load.stop())


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
