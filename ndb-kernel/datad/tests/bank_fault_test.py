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
  client_kill   rounds: SIGKILL of the duo_bank process itself under load (transfers in
                flight at both data nodes) and a new one started at once, mostly with the
                same API node id: the data nodes abort or finish the dead client's
                transactions and hold its node id back until they have (API_FAILREQ /
                API_FAILCONF); the new process's transfers commit; verify after each
                round; every data node logged each failure handled.
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
import re
import signal
import statistics
import subprocess
import sys
import time

from bank_workload import (BankEnv, add_bank_test_options, compare_replicas, report_load,
                           wait_commits)
from cluster_env import (TestFailure, check, config_ini, event, log, run_scenarios, scenarios_in,
                         small_ndbd_default)

def cluster_config(directory, **settings):
    """Two data nodes on 127.0.0.1, two API slots (duo_bank setup/verify and a load run,
    or an old and a new load run); `settings`: a scenario's own [ndbd default] parameters."""
    # Small memory: the transfers table grows by one row per committed transfer.
    return config_ini(small_ndbd_default(directory, "48M", **settings), (1, 2),
                      {"HostName": "127.0.0.1", "DataDir": directory}, api_slots=(50, 51))


def start_cluster(env):
    env.start_mgmd()
    for i in (1, 2):
        env.start_datad(i, initial=True)
    env.wait_started([1, 2])
    env.setup_bank()


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


def scenario_client_kill(env):
    """SIGKILL of the client process under load, a new one at once; nothing mixes."""
    start_cluster(env)
    handled_before = {i: env.read(env.datad_log(i)).count("failure handled in") for i in (1, 2)}
    rounds = 4
    load = env.start_load()
    for round_index in range(1, rounds + 1):
        wait_commits(load, 500)
        event("SIGKILL duo_bank (round %d)" % round_index)
        load.proc.send_signal(signal.SIGKILL)
        load.proc.wait(timeout=10)
        # At once: its API node id may still be held back by the data nodes (they refuse
        # its links until its failure is handled: the client retries).
        load = env.start_load()
    wait_commits(load, 500)
    counts = load.stop()
    report_load("after %d client kills" % rounds, counts)
    env.verify("after %d client kills" % rounds)
    for i in (1, 2):
        text = env.read(env.datad_log(i))
        handled = text.count("failure handled in") - handled_before[i]
        refused = text.count("refusing API node")
        took = [int(ms) for ms in re.findall(r"failure handled in (\d+) ms", text)]
        log("data node %d: %d API node failures handled (in %s ms), %d reconnections refused "
            "meanwhile" % (i, handled, took[-handled:], refused))
        # Each kill, and each load's clean stop, is one API node failure at each data node.
        check(handled >= rounds, "data node %d handled %d API node failures" % (i, handled))


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
    env.system_restart()
    gci = env.recovered_gci()
    check(gci is not None and any(env.read(env.datad_log(i)).count("recovering to GCI") >
                                  before[i] for i in (1, 2)),
          "system restart logged its GCI: %s" % env.read(env.datad_log(1))[-3000:])
    log("system restart recovered GCI %d" % gci)
    env.verify_after_system_restart(gci, ".before_crash")
    env.verify("after load on the restarted cluster")


SCENARIOS = scenarios_in(globals())
# A scenario's own [ndbd default] parameters.
SCENARIO_SETTINGS = {"stop_restart": {"HeartbeatIntervalDbDb": 200}}


def main():
    parser = argparse.ArgumentParser()
    add_bank_test_options(parser)
    parser.add_argument("--settle-seconds", type=float, default=0.0)
    parser.add_argument("scenario", choices=sorted(SCENARIOS) + ["all"])
    options = parser.parse_args()

    def make_env(name):
        settings = SCENARIO_SETTINGS.get(name, {})
        env = BankEnv(options, lambda directory: cluster_config(directory, **settings),
                      "duo_bank_test.")
        env.settle_seconds = options.settle_seconds
        return env

    return run_scenarios(SCENARIOS, options.scenario, make_env,
                         lambda env, error: env.log_failure(options.keep))


if __name__ == "__main__":
    sys.exit(main())
