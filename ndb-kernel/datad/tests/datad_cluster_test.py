#!/usr/bin/env python3
"""Cluster tests for duo_datad (with duo_mgmd and duo_mgm) and the `duo` launcher.

Each scenario runs in a fresh temporary directory with its own duo_mgmd (--port=0, the
port is read from its first stdout line) and data nodes started with --foreground, on
127.0.0.1; data nodes have no ServerPort, so they listen on OS-chosen ports and learn
each other's from mgmd. Every process started here is killed by its pid and the
directory removed, also when a check fails.

Data is loaded and checked with duo_datacheck (tools/datacheck), which goes through the
client library like any application.

Usage: datad_cluster_test.py --mgmd P --mgm P --datad P --duo P --datacheck P SCENARIO
(CTest label `cluster`; `ctest -L cluster` runs them all).
"""

import argparse
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time

from cluster_env import (MGM_NODE_ID, ClusterEnv, TestFailure, check, config_ini, eventually,
                         run_scenarios, scenarios_in, small_ndbd_default, wait_exit)

MGMD = MGM = DATAD = DUO = DATACHECK = None


def cluster_config(directory, data_nodes=(1, 2), **settings):
    """Data nodes `data_nodes` on 127.0.0.1 and one API slot; `settings`: a scenario's own
    [ndbd default] parameters."""
    # Small memory (24 MB per node, touched at start): DataMemory 16M = 512 pages,
    # TransactionMemory automatic (4M), no shared pool. A restart without a node recorded
    # dead waits StartPartialTimeout for it (NDB default 30000).
    return config_ini(small_ndbd_default(directory, "16M", StartPartialTimeout=2000, **settings),
                      data_nodes, {"HostName": "127.0.0.1", "DataDir": directory},
                      api_slots=(50,))


class Env(ClusterEnv):
    """A ClusterEnv on 127.0.0.1 with duo_datacheck against its cluster."""

    def __init__(self):
        super().__init__(argparse.Namespace(mgmd=MGMD, mgm=MGM, datad=DATAD), cluster_config,
                         "duo_datad_test.")

    def datacheck(self, *args, timeout=120):
        proc = subprocess.run([DATACHECK] + list(args) + ["--connect", self.connect_string()],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def start_cluster(env):
    env.start_mgmd()
    nodes = {i: env.start_datad(i) for i in (1, 2)}
    env.wait_started([1, 2])
    return nodes


def scenario_start_and_status(env):
    start_cluster(env)
    rc, out, _ = env.mgm("show")
    check(rc == 0, "show rc %d" % rc)
    for i in (1, 2):
        check("id=%d\t@127.0.0.1  (DuoDB-0.1.0, Nodegroup: 0)" % i in out, "show: %r" % out)
    check("Node 1: started (DuoDB-0.1.0)\nNode 2: started (DuoDB-0.1.0)\n" == env.all_status(),
          "all status: %r" % env.all_status())
    for i in (1, 2):
        log = env.read(env.datad_log(i))
        for phase in range(5):
            check("Node %d: Start phase %d completed" % (i, phase) in log, "phase %d: %s" % (phase, log))
        check("Node %d: Started (DuoDB-0.1.0)" % i in log, "started line")
        check(os.path.isdir(os.path.join(env.dir, "datad", "ndb_%d_fs" % i)), "file system dir")
        check(os.path.exists(os.path.join(env.dir, "datad", "ndb_%d.pid" % i)), "pid file")
    # Both nodes' transporter ports reached mgmd (dynamic ports).
    text = mgmd_get_status(env)
    for i in (1, 2):
        check(re.search(r"node\.%d\.port: \d+" % i, text), "port of node %d: %s" % (i, text))
        check("node.%d.status: STARTED" % i in text, "status line")
    check("Node 1: Start phase 3 completed" in env.cluster_log(), "cluster log phases")
    # Memory: the budget is logged at start and reported through mgmd.
    for i in (1, 2):
        check("Node %d: Memory: DataMemory 16 MB (512 pages)" % i in env.read(env.datad_log(i)),
              "memory layout logged")
        check("node.%d.datamemory.total: 512" % i in text, "memory in get status: %s" % text)
    rc, out, _ = env.mgm("all report memoryusage")
    check(rc == 0, "report rc %d: %r" % (rc, out))
    for i in (1, 2):
        check(re.search(r"^Node %d: Data usage is \d+%%\(\d+ 32K pages of total 512\)$" % i,
                        out, re.M), "report: %r" % out)
        check(re.search(r"^Node %d: Transaction memory usage is \d+%%\(\d+ 32K pages of "
                        r"total 128\)$" % i, out, re.M), "report: %r" % out)
    rc, out, _ = env.mgm("2 report memoryusage")
    check(rc == 0 and out.startswith("Node 2: Data usage is 0%(0 32K pages of total 512)\n"),
          "node report: %d %r" % (rc, out))
    # A second datad for a held node id is refused clearly.
    rc = env.start_datad(2, ["--connect-retries=1"]).wait(timeout=20)
    check(rc == 1, "duplicate node id rc %d" % rc)


def scenario_stop_node(env):
    """`2 RESTART` under a loaded table: node 2 stops cleanly, starts again by itself
    (same process, re-executed), rejoins by a node restart (copying from node 1) while
    node 1 serves; then `2 STOP` stops it for good and node 1 goes on alone."""
    nodes = start_cluster(env)
    check(env.datacheck("load", "--rows", "3000")[0] == 0, "load")
    rc, out, _ = env.mgm("2 restart")
    check(rc == 0 and out == "Node 2: Node is being restarted\n", "restart: rc %d %r" % (rc, out))
    eventually(lambda: "node restart: started in GCI" in env.read(env.datad_log(2)), 60,
               "node 2 rejoins by a node restart")
    env.wait_started([1, 2], timeout=60)
    check(nodes[2].poll() is None, "datad 2 runs again (same process)")
    check("restart ordered by the management server" in env.read(env.datad_log(2)),
          "datad 2 says why it restarted")
    check("node restart of data node 2 complete" in env.read(env.datad_log(1)),
          "node 1 (master) records the node restart")
    rc, out, err = env.datacheck("verify", "--rows", "3000")
    check(rc == 0, "verify after the restart: %s %s" % (out, err))
    rc, out, _ = env.mgm("2 stop")
    check(rc == 0 and out == "Node 2 has shutdown.\n", "stop: rc %d %r" % (rc, out))
    check(wait_exit(nodes[2], what="datad 2") == 0, "datad 2 exit code")
    log = env.read(env.datad_log(2))
    check("stopping: stop ordered by the management server" in log and "Node 2: stopped" in log,
          "datad 2 log: %s" % log[-3000:])
    # Its peer agrees node 2 is gone (the membership block, with the arbitrator's grant:
    # 1 of 2 nodes is no majority), takes over and goes on alone.
    eventually(lambda: "Node 2 declared dead" in env.read(env.datad_log(1)), 20,
               "datad 1 declares node 2 dead")
    check(nodes[1].poll() is None, "datad 1 still runs")
    rc, out, _ = env.mgm("2 stop")
    check(rc == 1 and "node 2 is not connected" in out, "stop again: %r" % out)
    rc, out, _ = env.mgm("shutdown")
    check(rc == 0, "shutdown: %r" % out)
    check(wait_exit(nodes[1], what="datad 1") == 0, "datad 1 exit code")
    check(wait_exit(env.mgmd, what="mgmd") == 0, "mgmd exit code")


def scenario_kill_node(env):
    """SIGKILL of data node 2 under a loaded table: node 1 sees the link close, agrees
    node 2's failure (arbitration by mgmd: 1 of 2 nodes is no majority), takes over and
    keeps serving every row; the cluster log records the decision. Node 2 then starts
    again (without --initial) and catches up by a normal node restart: it recovers its
    own disk to its last complete GCI, and node 1 sends only the rows changed since (the
    1000 loaded meanwhile) whole and nothing of the others; node 1 is killed and node 2 alone
    has every row; a restart of node 2 alone (after a planned stop) recovers them from
    its disk."""
    nodes = start_cluster(env)
    check(env.datacheck("load", "--rows", "5000")[0] == 0, "load")
    time.sleep(1.5)  # a few global checkpoints
    nodes[2].send_signal(signal.SIGKILL)
    nodes[2].wait(timeout=10)
    eventually(lambda: "Node 2 declared dead" in env.read(env.datad_log(1)), 20,
               "datad 1 declares node 2 dead")
    check("suspects node 2 (link closed)" in env.read(env.datad_log(1)), "suspicion logged")
    eventually(lambda: "Node 2: not connected" in env.all_status(), 20, "node 2 not connected")
    log = eventually(lambda: "Node 1: Node 2 declared dead" in env.cluster_log() and
                     env.cluster_log(), 10, "cluster log: declared dead")
    check("Node 2: data node lost (was STARTED)" in log, "cluster log: lost")
    check("Node 1: Arbitration granted: data nodes {1} continue without {2}" in log,
          "cluster log: arbitration")
    check(nodes[1].poll() is None, "datad 1 still runs")
    rc, out, err = env.datacheck("verify", "--rows", "5000")
    check(rc == 0, "verify with node 2 dead: %s %s" % (out, err))
    # Rows committed on the survivor alone, then at once a planned stop (SIGTERM): the
    # stop waits for their global checkpoint, so a restart of the survivor (node 2 is
    # recorded dead: not waited for) has every one of them.
    check(env.datacheck("load", "--rows", "1000", "--start", "5000")[0] == 0, "load on node 1")
    # Node 2 starts again: a node restart, copying every row from node 1, then it is a
    # replica again. Proof: with node 1 killed in turn, node 2 alone has every row.
    nodes[2] = env.start_datad(2, initial=False)
    env.wait_started([1, 2], timeout=90)
    log2 = env.read(env.datad_log(2))
    check("node restart: started in GCI" in log2, "node 2 started by a node restart")
    caught_up = re.search(r"recovered locally to GCI (\d+), copied only changed rows: "
                          r"(\d+) rows whole, (\d+) unchanged", log2)
    check(caught_up is not None, "node 2 recovered locally and copied only changed rows")
    whole, unchanged = int(caught_up.group(2)), int(caught_up.group(3))
    # The 1000 rows loaded while it was down come whole (and whatever changed after its
    # last GCI); the 5000 it had are not sent at all: nothing was deleted meanwhile, and
    # the delete log reaches back to its GCI.
    check(1000 <= whole < 5000 and unchanged == 0,
          "rows sent whole %d, as keys %d" % (whole, unchanged))
    print("  node 2 recovered locally to GCI %s: %d rows copied whole, %d sent as keys"
          % (caught_up.group(1), whole, unchanged))
    # Its progress line (the text ALL STATUS shows as startinfo while it copies).
    check(re.search(r"recovered locally to GCI \d+, copying changed rows: \d+% \(\d+ of \d+ "
                    r"fragments, \d+ rows, \d+ unchanged\)", log2) is not None,
          "copy progress logged")
    eventually(lambda: "data node 2 is recoverable from GCI" in env.read(env.datad_log(1)), 30,
               "node 2 checkpointed: it can recover by itself")
    check(env.datacheck("load", "--rows", "1000", "--start", "6000")[0] == 0, "load on both")
    nodes[1].send_signal(signal.SIGKILL)
    nodes[1].wait(timeout=10)
    eventually(lambda: "Node 1 declared dead" in env.read(env.datad_log(2)), 20,
               "datad 2 declares node 1 dead")
    rc, out, err = env.datacheck("verify", "--rows", "7000")
    check(rc == 0, "verify on the restarted node alone: %s %s" % (out, err))
    # A planned stop of the survivor (SIGTERM) waits for its global checkpoint, so its
    # restart alone (node 1 is recorded dead: not waited for) has every row.
    nodes[2].send_signal(signal.SIGTERM)
    check(wait_exit(nodes[2], what="datad 2") == 0, "SIGTERM exit code")
    check("everything committed before the stop is durable" in env.read(env.datad_log(2)),
          "the stop waited for its global checkpoint")
    nodes[2] = env.start_datad(2, initial=False)
    env.wait_started([2], timeout=60)
    rc, out, err = env.datacheck("verify", "--rows", "7000")
    check(rc == 0, "verify after the survivor's restart: %s %s" % (out, err))


def scenario_heartbeat_sigstop(env):
    """HeartbeatIntervalDbDb=200: a SIGSTOPped data node keeps its links open, so only
    the heartbeats tell. Node 1 declares node 2 dead after missing 4 of them, the
    arbitrator (mgmd) grants node 1 (1 of 2 is no majority), and the cluster log records
    both. Node 2, continued, learns it was declared dead (or loses the arbitration) and
    stops with an error. (What node 1 does next is takeover's business.)"""
    env.write_config(cluster_config(env.dir, HeartbeatIntervalDbDb=200))
    nodes = start_cluster(env)
    time.sleep(1.0)  # heartbeats flowing
    start = time.time()
    nodes[2].send_signal(signal.SIGSTOP)
    log = eventually(lambda: "Node 2 declared dead" in env.read(env.datad_log(1)) and
                     env.read(env.datad_log(1)), 20, "node 1 declares node 2 dead")
    elapsed = time.time() - start
    check(elapsed >= 0.6, "declared dead after %.2fs, before 4 heartbeat intervals" % elapsed)
    check("suspects node 2 (missed 4 heartbeats)" in log, "suspicion logged: %s" % log)
    eventually(lambda: "Node 1: Arbitration granted: data nodes {1} continue without {2}"
               in env.cluster_log(), 10, "cluster log: arbitration granted")
    eventually(lambda: "Node 1: Node 2 declared dead" in env.cluster_log(), 10,
               "cluster log: declared dead")
    nodes[2].send_signal(signal.SIGCONT)
    check(wait_exit(nodes[2], timeout=30, what="datad 2") == 1, "datad 2 exit code after SIGCONT")
    log2 = env.read(env.datad_log(2))
    check("shutdown requested: " in log2, "datad 2 says why it stops: %s" % log2[-2000:])
    print("declared dead after %.2fs (HeartbeatIntervalDbDb=200)" % elapsed)


def scenario_four_nodes(env):
    """4 data nodes, 2 node groups ({1,2}, {3,4}): rows spread over both groups; node 3
    is SIGKILLed (its group goes on with node 4, the others keep a majority: no
    arbitration needed), started again and catches up by a node restart; then node 1
    (the GCP master) likewise; then node 4 and node 2 are killed, so every row must be
    on the restarted nodes 3 and 1."""
    env.write_config(cluster_config(env.dir, data_nodes=(1, 2, 3, 4)))
    env.start_mgmd()
    nodes = {i: env.start_datad(i) for i in (1, 2, 3, 4)}
    env.wait_started([1, 2, 3, 4], timeout=60)
    rc, out, _ = env.mgm("show")
    check("Nodegroup: 1" in out, "two node groups: %s" % out)
    check(env.datacheck("load", "--rows", "4000")[0] == 0, "load")
    for victim, loaded in ((3, 4000), (1, 5000)):
        nodes[victim].send_signal(signal.SIGKILL)
        nodes[victim].wait(timeout=10)
        survivor = 2 if victim != 2 else 1
        eventually(lambda: "Node %d declared dead" % victim in env.read(env.datad_log(survivor)),
                   20, "node %d declared dead" % victim)
        check(env.datacheck("load", "--rows", "1000", "--start", str(loaded))[0] == 0,
              "load without node %d" % victim)
        nodes[victim] = env.start_datad(victim, initial=False)
        env.wait_started([1, 2, 3, 4], timeout=90)
        check("node restart: started in GCI" in env.read(env.datad_log(victim)),
              "node %d rejoined by a node restart" % victim)
        rc, out, err = env.datacheck("verify", "--rows", str(loaded + 1000))
        check(rc == 0, "verify after node %d's restart: %s %s" % (victim, out, err))
    for victim in (4, 2):
        nodes[victim].send_signal(signal.SIGKILL)
        nodes[victim].wait(timeout=10)
        eventually(lambda: "Node %d declared dead" % victim in env.read(env.datad_log(3)),
                   20, "node %d declared dead" % victim)
    rc, out, err = env.datacheck("verify", "--rows", "6000")
    check(rc == 0, "verify on the restarted nodes alone: %s %s" % (out, err))


def mgmd_get_status(env):
    """mgmd's answer to the mgm protocol's `get status` (node.N.port, node.N.status ...)."""
    with socket.create_connection(("127.0.0.1", env.port), timeout=5) as s:
        s.sendall(b"get status\n\n")
        data = b""
        while not data.endswith(b"\n\n"):
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    return data.decode()


def transporter_port(env, node_id):
    text = mgmd_get_status(env)
    match = re.search(r"node\.%d\.port: (\d+)" % node_id, text)
    check(match is not None, "port of node %d in %r" % (node_id, text))
    return int(match.group(1))


def scenario_transporter_garbage(env):
    """Garbage on a data node's transporter port closes that connection with a log line;
    the node keeps serving."""
    start_cluster(env)
    check(env.datacheck("load", "--rows", "2000")[0] == 0, "load")
    port = transporter_port(env, 1)
    rng = random.Random(7)
    for payload in (b"GET / HTTP/1.0\r\n\r\n", bytes(rng.randrange(256) for _ in range(5000)),
                    b"DUOH" + bytes(300), b"DUOF" * 100):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(payload)
            s.settimeout(5)
            try:
                while s.recv(4096):  # until the node closes it
                    pass
            except (ConnectionResetError, socket.timeout):
                pass
    log = eventually(lambda: env.read(env.datad_log(1)).count("closing connection from") >= 4, 10,
                     "four connections closed with a log line")
    check(log, "log lines")
    check("Node 1: started" in env.all_status() and "Node 2: started" in env.all_status(),
          "both nodes still started: %r" % env.all_status())
    rc, out, err = env.datacheck("verify", "--rows", "2000")
    check(rc == 0, "data still served: %s %s" % (out, err))


def scenario_tls(env):
    """RequireTls=1 for the data nodes, keys from duo_tls_keys in <DataDir>/tls: a node
    without its keys fails its start naming the missing file; the cluster starts with
    TLS links and serves duo_datacheck, whose client library then uses TLS too (keys
    from DUO_TLS_SEARCH_PATH); without keys the client is refused with a clear error."""
    tls_keys = os.path.join(os.path.dirname(os.path.abspath(DATACHECK)), "duo_tls_keys")
    env.write_config(cluster_config(env.dir, RequireTls=1))
    keys_dir = os.path.join(env.dir, "datad", "tls")
    proc = subprocess.run([tls_keys, "--config-file=" + env.config_path, "--keys-dir=" + keys_dir],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    check(proc.returncode == 0, "duo_tls_keys: %s" % proc.stdout.decode())
    for name in ("NDB-Cluster-cert", "NDB-Node-1.cert", "NDB-Node-2.key", "NDB-Node-50.key"):
        check(os.path.exists(os.path.join(keys_dir, name)), "%s written" % name)
    env.start_mgmd()
    # Keys looked up in an empty directory: the start fails, naming the missing file.
    empty = os.path.join(env.dir, "no-keys")
    os.makedirs(empty)
    failed = env.start_datad(2, extra=["--ndb-tls-search-path=" + empty])
    check(wait_exit(failed, 30, "node 2 without keys") != 0, "node 2 without keys must fail")
    log = env.read(env.datad_log(2))
    check("RequireTls" in log and "NDB-Cluster-cert" in log, "missing file named: %s" % log[-2000:])
    os.remove(env.datad_log(2))
    for i in (1, 2):
        env.start_datad(i)
    env.wait_started([1, 2])
    for i in (1, 2):
        log = env.read(env.datad_log(i))
        check("RequireTls: TLS on every link" in log, "node %d uses TLS: %s" % (i, log[-2000:]))
        check("peers, TLS)" in log, "node %d: transporter with TLS" % i)

    def datacheck(*args, keys=True):
        run_env = dict(os.environ)
        run_env.pop("DUO_TLS_SEARCH_PATH", None)
        if keys:
            run_env["DUO_TLS_SEARCH_PATH"] = keys_dir
        else:
            run_env["HOME"] = empty  # default $HOME/ndb-tls: not there
        proc = subprocess.run([DATACHECK] + list(args) + ["--connect", "127.0.0.1:%d" % env.port],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                              env=run_env)
        return proc.returncode, proc.stdout.decode() + proc.stderr.decode()

    rc, out = datacheck("load", "--rows", "3000")
    check(rc == 0, "load over TLS: %s" % out)
    rc, out = datacheck("verify", "--rows", "3000")
    check(rc == 0, "verify over TLS: %s" % out)
    rc, out = datacheck("count", keys=False)
    check(rc != 0 and "NDB-Cluster-cert" in out, "client without keys refused: %s" % out)
    # A plaintext stranger on a TLS port is closed with a log line; the node serves on.
    port = transporter_port(env, 1)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"DUOH" + bytes(300))
        s.settimeout(5)
        try:
            while s.recv(4096):
                pass
        except (ConnectionResetError, socket.timeout):
            pass
    eventually(lambda: "TLS handshake" in env.read(env.datad_log(1)), 10, "TLS refusal logged")
    rc, out = datacheck("verify", "--rows", "3000")
    check(rc == 0, "verify after the stranger: %s" % out)


def scenario_data_restart(env):
    """Load 100k rows, restart the whole cluster with SIGTERM and then with SIGKILL: what
    was committed before the last completed global checkpoint is back every time."""
    nodes = start_cluster(env)
    rc, out, err = env.datacheck("load", "--rows", "100000", timeout=300)
    check(rc == 0, "load: %s %s" % (out, err))
    rc, out, err = env.datacheck("verify", "--rows", "100000", timeout=300)
    check(rc == 0, "verify: %s %s" % (out, err))
    time.sleep(1.5)  # the last commits reach a completed global checkpoint
    for i in (1, 2):
        nodes[i].send_signal(signal.SIGTERM)
    for i in (1, 2):
        check(wait_exit(nodes[i], what="datad %d" % i) == 0, "SIGTERM exit code")
    nodes = {i: env.start_datad(i, initial=False) for i in (1, 2)}
    env.wait_started([1, 2], timeout=120)
    rc, out, err = env.datacheck("verify", "--rows", "100000", timeout=300)
    check(rc == 0, "verify after SIGTERM restart: %s %s" % (out, err))
    rc, out, err = env.datacheck("load", "--rows", "20000", "--start", "100000", timeout=300)
    check(rc == 0, "second load: %s %s" % (out, err))
    time.sleep(1.5)
    for i in (1, 2):
        nodes[i].send_signal(signal.SIGKILL)
    for i in (1, 2):
        nodes[i].wait(timeout=10)
    nodes = {i: env.start_datad(i, initial=False) for i in (1, 2)}
    env.wait_started([1, 2], timeout=120)
    rc, out, err = env.datacheck("verify", "--rows", "120000", timeout=300)
    check(rc == 0, "verify after SIGKILL restart: %s %s" % (out, err))
    log = env.read(env.datad_log(1))
    check(re.search(r"restored \d+ rows", log), "restore progress logged: %s" % log[-3000:])
    # --initial starts empty.
    for i in (1, 2):
        nodes[i].send_signal(signal.SIGTERM)
    for i in (1, 2):
        wait_exit(nodes[i], what="datad %d" % i)
    nodes = {i: env.start_datad(i, initial=True) for i in (1, 2)}
    env.wait_started([1, 2])
    rc, out, err = env.datacheck("count")
    check(rc == 0 and out.strip() == "0", "count after --initial: %s %s" % (out, err))


def scenario_sigterm(env):
    nodes = start_cluster(env)
    port = env.port
    # mgmd dies: data nodes log it and keep retrying, then rejoin a new mgmd.
    env.mgmd.send_signal(signal.SIGKILL)
    env.mgmd.wait(timeout=10)
    eventually(lambda: "lost the management server" in env.read(env.datad_log(1)), 10,
               "datad notices mgmd loss")
    time.sleep(1.0)
    check(nodes[1].poll() is None and nodes[2].poll() is None, "data nodes survive mgmd loss")
    env.start_mgmd(port=port)
    eventually(lambda: "reconnected to the management server" in env.read(env.datad_log(1)), 20,
               "datad reconnects")
    env.wait_started([1, 2])
    # SIGTERM stops a data node cleanly.
    nodes[1].send_signal(signal.SIGTERM)
    check(wait_exit(nodes[1], what="datad 1") == 0, "SIGTERM exit code")
    log = env.read(env.datad_log(1))
    check("stopping: stop signal received" in log and "Node 1: stopped" in log, "log: %s" % log)
    eventually(lambda: "Node 1: not connected" in env.all_status(), 10, "node 1 gone")
    # Its peer agrees node 1 is gone (with the arbitrator's grant) and runs on alone
    # until it is stopped the same way.
    eventually(lambda: "Node 1 declared dead" in env.read(env.datad_log(2)), 20,
               "datad 2 declares node 1 dead")
    check(nodes[2].poll() is None, "datad 2 still runs")
    nodes[2].send_signal(signal.SIGTERM)
    check(wait_exit(nodes[2], what="datad 2") == 0, "datad 2 exit code")


def free_port_range(count):
    for _ in range(100):
        base = random.randint(20000, 32000)  # below the kernel's ephemeral ports
        sockets = []
        try:
            for port in range(base, base + count):
                s = socket.socket()
                sockets.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise TestFailure("no free port range")


def scenario_launcher(env):
    data_dir = os.path.join(env.dir, "cluster")
    # Killed by the Env on failure: the launcher's daemons are not our children.
    env.pid_files.append(os.path.join(data_dir, "mgmd", "ndb_%d.pid" % MGM_NODE_ID))
    env.pid_files += [os.path.join(data_dir, "datad", "ndb_%d.pid" % i) for i in (1, 2)]
    env.pid_files.append(os.path.join(data_dir, "sqld", "duo_sqld.pid"))
    base = free_port_range(4)
    sql_port = base + 3  # not 3306: other clusters may run on this machine

    def duo(*args, timeout=90):
        proc = subprocess.run([DUO] + list(args) + ["--data-dir", data_dir],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()

    rc, out, err = duo("up", "--base-port", str(base), "--sql-port", str(sql_port))
    check(rc == 0, "duo up rc %d: %s %s" % (rc, out, err))
    check("cluster is up" in out and "127.0.0.1:%d" % base in out, "up output: %s" % out)
    check("SQL endpoint: mysql -h127.0.0.1 -P%d -uroot" % sql_port in out, "sql line: %s" % out)
    check(socket.create_connection(("127.0.0.1", sql_port), timeout=5).close() is None, "sqld port")
    check("--connect=127.0.0.1:%d" % base in out, "client connect line: %s" % out)
    rc, out, err = duo("status")
    check(rc == 0 and "Node 1: started" in out and "Node 2: started" in out,
          "status: %s %s" % (out, err))
    check("id=1\t@127.0.0.1  (DuoDB-0.1.0, Nodegroup: 0)" in out, "status show: %s" % out)
    rc, out, err = duo("up", "--base-port", str(base))
    check(rc == 0 and "every process of the cluster" in out, "second up: %s %s" % (out, err))
    rc, out, err = duo("up", "--initial")
    check(rc == 1 and "already running" in err, "up --initial while running: %s" % err)
    pids = env.daemon_pids()
    check(len(pids) == 4, "4 pid files (mgmd, 2 data nodes, sqld): %s" % pids)
    rc, out, err = duo("down")
    check(rc == 0 and "cluster stopped" in out, "down: %s %s" % (out, err))
    check("2 DuoDB data node(s) have shutdown." in out, "down via SHUTDOWN: %s" % out)
    # `duo down` returns only once every thread of every process it stopped is gone
    # (a zombie main thread is not enough), so the ports are free at once for `duo up`.
    for pid in pids:
        task_dir = "/proc/%d/task" % pid
        live = []
        for tid in (os.listdir(task_dir) if os.path.exists(task_dir) else []):
            try:
                with open("%s/%s/stat" % (task_dir, tid)) as f:
                    if f.read().rsplit(")", 1)[-1].split()[0] not in ("Z", "X"):
                        live.append(tid)
            except OSError:
                pass
        check(not live, "pid %d still has running threads %s after duo down" % (pid, live))
    for port in (base, base + 1, base + 2, sql_port):
        probe = socket.socket()
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the daemons bind
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as error:
            raise TestFailure("port %d still in use right after duo down: %s" % (port, error))
        finally:
            probe.close()
    rc, out, err = duo("status")
    check(rc == 1 and "not reachable" in err, "status after down: %s" % err)
    rc, out, err = duo("down")
    check(rc == 0 and "nothing is running" in out, "down again: %s" % out)

    # Data survives `duo down` / `duo up`; `duo up --initial` starts empty.
    def datacheck(*args):
        proc = subprocess.run([DATACHECK] + list(args) + ["--connect", "127.0.0.1:%d" % base],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        return proc.returncode, proc.stdout.decode() + proc.stderr.decode()
    rc, out, err = duo("up")  # `duo down && duo up` on the same ports, immediately
    check(rc == 0 and "the data nodes recover their data" in out, "up again: %s %s" % (out, err))
    check(datacheck("load", "--rows", "3000")[0] == 0, "load")
    time.sleep(2.5)  # a global checkpoint (TimeBetweenGlobalCheckpoints=2000)
    check(duo("down")[0] == 0, "down")
    rc, out, err = duo("up")
    check(rc == 0, "up after down: %s %s" % (out, err))
    rc, out = datacheck("verify", "--rows", "3000")
    check(rc == 0, "data after duo down/up: %s" % out)
    # kill -9 of a data node; `duo up` starts it again and it catches up (node restart).
    with open(os.path.join(data_dir, "datad", "ndb_2.pid")) as f:
        os.kill(int(f.read().strip()), signal.SIGKILL)
    time.sleep(1)
    check(datacheck("load", "--rows", "500", "--start", "3000")[0] == 0, "load on node 1 alone")
    rc, out, err = duo("up", timeout=180)
    check(rc == 0 and "started duo_datad (node 2); it catches up" in out and "cluster is up" in out,
          "up with node 2 dead: %s %s" % (out, err))
    rc, out, err = duo("status")
    check(rc == 0 and "Node 1: started" in out and "Node 2: started" in out,
          "status after the node restart: %s %s" % (out, err))
    rc, out = datacheck("verify", "--rows", "3500")
    check(rc == 0, "data after the node restart: %s" % out)
    check(duo("down")[0] == 0, "down")
    rc, out, err = duo("up", "--initial", "--base-port", str(base), "--sql-port", str(sql_port))
    check(rc == 0, "up --initial: %s %s" % (out, err))
    rc, out = datacheck("count")
    check(rc == 0 and out.strip().splitlines()[0] == "0", "count after --initial: %s" % out)
    check(duo("down")[0] == 0, "final down")


SCENARIOS = scenarios_in(globals())


def main():
    global MGMD, MGM, DATAD, DUO, DATACHECK
    parser = argparse.ArgumentParser()
    for name in ("mgmd", "mgm", "datad", "duo", "datacheck"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("scenario", choices=sorted(SCENARIOS) + ["all"])
    options = parser.parse_args()
    MGMD, MGM, DATAD, DUO = options.mgmd, options.mgm, options.datad, options.duo
    DATACHECK = options.datacheck
    return run_scenarios(SCENARIOS, options.scenario, lambda name: Env())


if __name__ == "__main__":
    sys.exit(main())
