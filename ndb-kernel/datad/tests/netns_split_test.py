#!/usr/bin/env python3
"""Network-split tests (failover issue): a two-replica cluster of real processes whose
data nodes each run in their own Linux network namespace, split by cutting links while
the duo_bank transfer workload runs. Exactly one side may keep accepting writes (the
arbitrator, duo_mgmd, decides: DESIGN.md section 5); after healing and a node restart of
the loser no row may diverge.

Topology (every name carries this run's pid, so runs never collide):
    root namespace: bridge duoB<pid> with 10.X.Y.1/24 — duo_mgmd (the arbitrator,
                    HostName=10.X.Y.1) and the duo_bank client
    namespace duo<pid>n<i> (i = 1, 2): veth duo<pid>n<i> <-> duo<pid>h<i> (bridge port),
                    10.X.Y.1<i>/24 — duo_datad node i (HostName=10.X.Y.1<i>), started
                    with `ip netns exec`
X.Y is picked at random among subnets no route or address of this host uses.

Scenarios (each one CTest test, label `fault`):
  split_between_data_nodes  blackhole routes between the two data nodes only (both still
        reach mgmd and the client), under load: both suspect the other at once (link
        closed), both ask the arbitrator; it grants one side, refuses the other, which
        shuts down (its exit code and log, the cluster log's arbitration lines). The load
        goes on committing through the survivor. Then: load stopped, routes removed, the
        loser restarted (node restart, no --initial), verify (total, every transfer
        applied once, every acknowledged transfer present) and both replicas compared.
  isolate_one_data_node  node 2's bridge port set down: it reaches neither node 1, nor
        mgmd, nor the client; silent loss, found by missed heartbeats. Node 1 must win (it
        reaches the arbitrator); node 2 must shut down after ArbitrationTimeout (no
        arbitrator answers it) and never commit anything after the cut: its log must show
        no granted arbitration and no membership without node 1, and it must exit. Then
        heal, restart node 2, verify and compare as above.
  isolate_arbitrator_and_split  blackhole routes from each data node to the other and to
        the bridge address (mgmd and the client): no side can win the arbitration, so
        both must shut down after ArbitrationTimeout (the cluster stops; no split brain).
        Heal, system restart (no --initial): every transfer acknowledged in a GCI up to
        the recovered one is there (later ones may be lost, as after any whole-cluster
        stop); a new load, verify and the replica comparison.

Each scenario prints its figures: cut -> first declared dead, cut -> loser exited, and
the split's write unavailability (the longest time without an acknowledged transfer from
just before the cut until the load is stopped, from the acknowledgment file's unix ms).

Needs root and network namespaces; without them it prints why and exits with
SKIP_EXIT_CODE (CTest SKIP_RETURN_CODE). Namespaces, links, bridge and processes are
removed in every case: a failed check, an exception, SIGTERM / SIGINT (CTest's timeout).

Usage: netns_split_test.py --mgmd P --mgm P --datad P --bank P [--keep] [--rounds N]
       SCENARIO|all
"""

import argparse
import atexit
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import time

from bank_workload import (BankEnv, add_bank_test_options, compare_replicas, report_load,
                           wait_commits)
from cluster_env import (TestFailure, check, config_ini, eventually, event, log, scenarios_in,
                         small_ndbd_default)

SKIP_EXIT_CODE = 77
HEARTBEAT_MS = 500
ARBITRATION_TIMEOUT_MS = 3000
# A node is declared dead after 4 missed heartbeats; a cut link is usually found at once.
DETECTION_TIMEOUT_S = 30

def cluster_config(directory, network):
    """The data nodes and mgmd at their own addresses of `network` (mgmd the arbitrator),
    two API slots (duo_bank setup/verify and a load run)."""
    # Small memory: the transfers table grows by one row per committed transfer. Fast
    # detection of a silent cut, and a short wait for an arbitrator that cannot answer.
    return config_ini(
        small_ndbd_default(directory, "48M", HeartbeatIntervalDbDb=HEARTBEAT_MS,
                           ArbitrationTimeout=ARBITRATION_TIMEOUT_MS),
        (1, 2), {"HostName": network.mgmd_host, "DataDir": directory, "ArbitrationRank": 1},
        api_slots=(50, 51), per_node={i: {"HostName": network.hosts[i]} for i in (1, 2)})


def ip(*args, check_rc=True):
    proc = subprocess.run(["ip"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=30)
    if check_rc and proc.returncode != 0:
        raise TestFailure("ip %s: %s" % (" ".join(args), proc.stderr.decode().strip()))
    return proc.stdout.decode()


class SplitNetwork:
    """The bridge, the data nodes' namespaces and veth links of one run, and the cuts.
    remove() takes everything down; it is idempotent and ignores what is already gone."""

    def __init__(self):
        tag = "duo%d" % os.getpid()  # interface names: at most 15 characters
        self.bridge = tag + "B"
        self.namespaces = {i: "%sn%d" % (tag, i) for i in (1, 2)}
        self.host_ends = {i: "%sh%d" % (tag, i) for i in (1, 2)}
        self.subnet = self.free_subnet()
        self.mgmd_host = self.subnet + ".1"
        self.hosts = {i: "%s.%d" % (self.subnet, 10 + i) for i in (1, 2)}
        self.created = False
        self.blackholes = []  # (namespace, address)

    @staticmethod
    def free_subnet():
        in_use = ip("-4", "addr") + ip("-4", "route", "show", "table", "all")
        rng = random.Random(os.getpid() ^ int(time.time()))
        for _ in range(200):
            subnet = "10.%d.%d" % (rng.randrange(100, 250), rng.randrange(0, 256))
            if subnet + "." not in in_use:
                return subnet
        raise TestFailure("no free 10.x.y.0/24 subnet")

    def create(self):
        self.created = True
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", self.mgmd_host + "/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for i, ns in self.namespaces.items():
            ip("netns", "add", ns)
            ip("link", "add", self.host_ends[i], "type", "veth", "peer", "name", ns, "netns", ns)
            ip("link", "set", self.host_ends[i], "master", self.bridge, "up")
            ip("-n", ns, "addr", "add", self.hosts[i] + "/24", "dev", ns)
            ip("-n", ns, "link", "set", ns, "up")
            ip("-n", ns, "link", "set", "lo", "up")
        log("network: bridge %s %s/24, data node 1 in %s at %s, data node 2 in %s at %s" %
            (self.bridge, self.mgmd_host, self.namespaces[1], self.hosts[1], self.namespaces[2],
             self.hosts[2]))

    def prefix(self, node_id):
        return ["ip", "netns", "exec", self.namespaces[node_id]]

    def check_reachable(self):
        """Each namespace reaches the bridge address (a TCP connect), so a failure later
        is the product's and not this host's firewall or bridge filtering."""
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
            server.bind((self.mgmd_host, 0))
            server.listen(4)
            port = server.getsockname()[1]
            for i in (1, 2):
                code = ("import socket; socket.create_connection(('%s', %d), timeout=5).close()" %
                        (self.mgmd_host, port))
                proc = subprocess.run(self.prefix(i) + [sys.executable, "-c", code],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
                check(proc.returncode == 0, "namespace %s cannot reach %s: %s" %
                      (self.namespaces[i], self.mgmd_host, proc.stdout.decode()[-500:]))
                server.accept()[0].close()

    def cut_between_data_nodes(self):
        """Blackhole routes: each data node loses the other, keeps mgmd and the client."""
        for i in (1, 2):
            ns, other = self.namespaces[i], self.hosts[3 - i]
            ip("-n", ns, "route", "add", "blackhole", other + "/32")
            self.blackholes.append((ns, other))

    def cut_everything(self):
        """Blackhole routes: each data node loses the other and the bridge address
        (mgmd, the arbitrator, and the client)."""
        self.cut_between_data_nodes()
        for ns in self.namespaces.values():
            ip("-n", ns, "route", "add", "blackhole", self.mgmd_host + "/32")
            self.blackholes.append((ns, self.mgmd_host))

    def heal_between_data_nodes(self):
        while self.blackholes:
            ns, address = self.blackholes.pop()
            ip("-n", ns, "route", "del", "blackhole", address + "/32")

    def isolate(self, node_id):
        """The node's bridge port down: everything it sends or is sent is dropped
        silently (no error to either side: only missed heartbeats tell)."""
        ip("link", "set", self.host_ends[node_id], "down")

    def rejoin(self, node_id):
        ip("link", "set", self.host_ends[node_id], "up")

    def remove(self):
        if not self.created:
            return
        self.created = False
        for ns in self.namespaces.values():
            ip("netns", "del", ns, check_rc=False)  # also deletes its veth pair
        for link in list(self.host_ends.values()) + [self.bridge]:
            ip("link", "del", link, check_rc=False)


def skip_reason():
    """Why this host cannot run the test, or None."""
    if os.geteuid() != 0:
        return "not root (network namespaces need CAP_SYS_ADMIN / CAP_NET_ADMIN)"
    try:
        proc = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as error:
        return "`ip` (iproute2) not usable: %s" % error
    if proc.returncode != 0:
        return "`ip netns` not available: %s" % proc.stderr.decode().strip()
    probe = "duoprobe%d" % os.getpid()
    proc = subprocess.run(["ip", "netns", "add", probe], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=10)
    if proc.returncode != 0:
        return "cannot create a network namespace: %s" % proc.stderr.decode().strip()
    subprocess.run(["ip", "netns", "del", probe], timeout=10)
    return None


def acks_after(env, since_ms):
    """Unix ms of every acknowledged transfer at or after since_ms, in order."""
    times = []
    with open(env.ack_path) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 3 and fields[0].isdigit() and int(fields[2]) >= since_ms:
                times.append(int(fields[2]))
    return sorted(times)


def split_unavailability_ms(env, cut_ms, end_ms):
    """The longest time without an acknowledged transfer from 1 s before the cut until
    end_ms (the load still committing then)."""
    times = [cut_ms - 1000] + acks_after(env, cut_ms - 1000) + [end_ms]
    return max(b - a for a, b in zip(times, times[1:]))


def start_cluster(env, network):
    env.start_mgmd()
    for i in (1, 2):
        env.start_datad(i, initial=True)
    env.wait_started([1, 2])
    env.setup_bank()


def wait_one_exits(env, node_ids, cut_time):
    """Waits until one of node_ids' processes exits; returns (node, exit code, seconds
    after the cut)."""
    def exited():
        for i in node_ids:
            rc = env.nodes[i].poll()
            if rc is not None:
                return (i, rc)
        return None
    node, rc = eventually(exited, DETECTION_TIMEOUT_S + ARBITRATION_TIMEOUT_MS / 1000.0,
                          "a data node shuts down after the split")
    return node, rc, time.time() - cut_time


def check_loser_log(env, loser, log_before, reasons):
    text = env.read(env.datad_log(loser))[log_before:]
    check(any(reason in text for reason in reasons),
          "data node %d's log gives none of %s for its shutdown:\n%s" %
          (loser, reasons, text[-3000:]))
    check("Node %d: arbitration granted" % loser not in text,
          "data node %d was granted arbitration yet stopped:\n%s" % (loser, text[-3000:]))
    check(re.search(r"Node %d: membership now \{%d\}" % (loser, loser), text) is None,
          "data node %d went on alone after the cut:\n%s" % (loser, text[-3000:]))
    return text


def split_round(env, network, cut, heal, expected_winner, loser_reasons, what):
    """One split under load: cut, one side shuts down, the other commits, heal, node
    restart of the loser, verify, replicas compared. Returns the round's figures."""
    load = env.start_load()
    wait_commits(load, 1000)
    log_before = {i: len(env.read(env.datad_log(i))) for i in (1, 2)}
    dead_before = {i: env.dead_count(i, 3 - i) for i in (1, 2)}
    cluster_log_before = len(env.cluster_log())
    cut_time = time.time()
    cut_ms = int(cut_time * 1000)
    cut()
    event("cut: %s" % what)

    def first_declared():
        for i in (1, 2):
            if env.dead_count(i, 3 - i) > dead_before[i]:
                return i
        return None
    eventually(first_declared, DETECTION_TIMEOUT_S, "a data node declares the other dead")
    detected_s = time.time() - cut_time
    loser, rc, loser_exit_s = wait_one_exits(env, (1, 2), cut_time)
    winner = 3 - loser
    event("data node %d exited (%d) %.1fs after the cut; data node %d goes on" %
          (loser, rc, loser_exit_s, winner))
    check(expected_winner in (None, winner),
          "data node %d survived, expected data node %s" % (winner, expected_winner))
    check(rc != 0, "data node %d exit code %d after losing the split" % (loser, rc))
    loser_log = check_loser_log(env, loser, log_before[loser], loser_reasons)
    # The survivor was granted by the arbitrator and commits alone.
    winner_log = eventually(
        lambda: "Node %d: arbitration granted" % winner in
        env.read(env.datad_log(winner))[log_before[winner]:] and env.read(env.datad_log(winner)),
        10, "data node %d logs the granted arbitration" % winner)
    wait_commits(load, 1000)
    check(env.nodes[winner].poll() is None, "data node %d still runs" % winner)
    end_ms = int(time.time() * 1000)
    cluster_log = env.cluster_log()[cluster_log_before:]
    check("Node %d: Arbitration granted: data nodes {%d} continue without {%d}" %
          (winner, winner, loser) in cluster_log,
          "cluster log: arbitration granted to %d:\n%s" % (winner, cluster_log[-3000:]))
    counts = load.stop()
    event("load stopped")
    report_load(what, counts)
    unavailable_ms = split_unavailability_ms(env, cut_ms, end_ms)
    shutdown = re.search(r"^.*Node %d: (?:shutdown requested|arbitration refused|failure round)"
                         r".*$" % loser, loser_log, re.M)
    log("split %s: data node %d declared dead after %.1fs, data node %d exited after %.1fs "
        "(%s); write unavailability %d ms; %s" %
        (what, 3 - first_declared(), detected_s, loser, loser_exit_s,
         shutdown.group(0).strip() if shutdown else "?", unavailable_ms,
         "refused line in cluster log" if "Arbitration refused" in cluster_log else
         "no refusal in cluster log"))
    check(len(winner_log) > 0, "winner log")
    env.verify("with data node %d alone" % winner)
    event("verified")
    heal()
    event("healed: %s" % what)
    env.wait_not_connected(loser)
    event("mgmd reports data node %d not connected" % loser)
    seconds = env.restart(loser)
    log("data node %d restarted (node restart) in %.1fs" % (loser, seconds))
    env.verify("after the loser's restart")
    compare_replicas(env)
    for i in (1, 2):  # a sanitizer build's report (the loser's exit code alone hides it)
        text = env.read(env.datad_log(i))
        check("Sanitizer" not in text and "runtime error:" not in text,
              "sanitizer report in data node %d's log:\n%s" % (i, text[-4000:]))
    return {"detected_s": detected_s, "loser_exit_s": loser_exit_s,
            "unavailable_ms": unavailable_ms, "winner": winner}


def scenario_split_between_data_nodes(env, network):
    start_cluster(env, network)
    return split_round(env, network, network.cut_between_data_nodes,
                       network.heal_between_data_nodes, None,
                       ["arbitration lost", "arbitration refused", "declared dead"],
                       "between the data nodes")


def scenario_isolate_one_data_node(env, network):
    start_cluster(env, network)
    return split_round(env, network, lambda: network.isolate(2), lambda: network.rejoin(2), 1,
                       ["arbitration failed", "management server is unreachable"],
                       "data node 2 isolated")


def scenario_isolate_arbitrator_and_split(env, network):
    """Both data nodes lose each other and the arbitrator at once: neither may go on
    alone, so both shut down after ArbitrationTimeout (the cluster stops: no split
    brain). After healing, a system restart recovers the last complete global checkpoint
    with every transfer acknowledged up to it, and the replicas are identical."""
    start_cluster(env, network)
    load = env.start_load()
    wait_commits(load, 1000)
    time.sleep(2.0)  # several global checkpoints complete under load
    log_before = {i: len(env.read(env.datad_log(i))) for i in (1, 2)}
    cut_time = time.time()
    network.cut_everything()
    event("cut: the data nodes from each other and from mgmd")

    def both_exited():
        return all(env.nodes[i].poll() is not None for i in (1, 2))
    eventually(both_exited, DETECTION_TIMEOUT_S + ARBITRATION_TIMEOUT_MS / 1000.0,
               "both data nodes shut down without the arbitrator")
    seconds = time.time() - cut_time
    event("both data nodes exited, %.1fs after the cut" % seconds)
    for i in (1, 2):
        rc = env.nodes[i].returncode
        check(rc != 0, "data node %d exit code %d without the arbitrator" % (i, rc))
        check_loser_log(env, i, log_before[i],
                        ["arbitration failed", "management server is unreachable"])
    counts = load.stop()
    report_load("until both data nodes stopped", counts)
    network.heal_between_data_nodes()
    event("healed")
    env.system_restart(not_connected_timeout=120)
    gci = env.recovered_gci()
    check(gci is not None, "system restart logged its GCI: %s" % env.read(env.datad_log(1))[-3000:])
    log("split %s: both data nodes exited after %.1fs; system restart recovered GCI %d" %
        ("arbitrator isolated", seconds, gci))
    # The cluster serves again; what it acknowledges now is all there, on both replicas.
    env.verify_after_system_restart(gci, ".before_split")
    compare_replicas(env)
    # No side wrote after the cut: there is no write unavailability to measure.
    return {"detected_s": seconds, "loser_exit_s": seconds, "unavailable_ms": None,
            "winner": None}


SCENARIOS = scenarios_in(globals())


class Terminated(Exception):
    """SIGTERM / SIGINT (CTest's timeout): unwinds so that cleanup runs."""


def on_signal(signum, frame):
    raise Terminated("signal %d" % signum)


def run_scenario(name, options, keep):
    network = SplitNetwork()
    env = None
    cleanup_done = []

    def cleanup():
        if cleanup_done:
            return
        cleanup_done.append(True)
        if env is not None:
            env.close()  # processes first: they run inside the namespaces
        network.remove()
    atexit.register(cleanup)
    try:
        network.create()
        network.check_reachable()
        env = BankEnv(options, lambda directory: cluster_config(directory, network),
                      "duo_netns_test.", mgmd_host=network.mgmd_host)
        env.datad_prefix = {i: network.prefix(i) for i in (1, 2)}
        try:
            return SCENARIOS[name](env, network)
        except BaseException:
            env.log_failure(keep, cluster_log_chars=3000)
            raise
    finally:
        cleanup()
        atexit.unregister(cleanup)


def main():
    parser = argparse.ArgumentParser()
    add_bank_test_options(parser)
    parser.add_argument("--rounds", type=int, default=1,
                        help="run each scenario this many times (fresh cluster each time)")
    parser.add_argument("scenario", choices=sorted(SCENARIOS) + ["all"])
    options = parser.parse_args()
    reason = skip_reason()
    if reason is not None:
        print("SKIP: %s" % reason, flush=True)
        return SKIP_EXIT_CODE
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    names = sorted(SCENARIOS) if options.scenario == "all" else [options.scenario]
    failed = 0
    for name in names:
        figures = []
        for round_index in range(1, options.rounds + 1):
            start = time.time()
            try:
                figures.append(run_scenario(name, options, options.keep))
                log("PASS %s round %d (%.1fs)" % (name, round_index, time.time() - start))
            except (TestFailure, subprocess.TimeoutExpired, OSError, Terminated) as error:
                failed += 1
                log("FAIL %s round %d: %s" % (name, round_index, error))
                if isinstance(error, Terminated):
                    return 1
        if figures:
            exits = ", ".join("%.1f" % f["loser_exit_s"] for f in figures)
            unavailable = [f["unavailable_ms"] for f in figures
                           if f["unavailable_ms"] is not None]
            if unavailable:
                log("%s: %d rounds passed; write unavailability (ms) %s, median %d, max %d; "
                    "loser exited after (s) %s; winners %s" %
                    (name, len(figures), unavailable, statistics.median(unavailable),
                     max(unavailable), exits, [f["winner"] for f in figures]))
            else:
                log("%s: %d rounds passed; data nodes exited after (s) %s" %
                    (name, len(figures), exits))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
