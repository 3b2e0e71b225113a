#!/usr/bin/env python3
"""How long writes stop when a data node is killed, and whether anything acknowledged
is lost: the figures issue 5 asks for (docs/reliability.md).

Each run starts a fresh two-replica cluster with duo_sqld (`duo up --initial` in a
temporary directory), lets a writer insert rows through duo_sqld one autocommit INSERT
at a time (retrying an insert that failed with 1297, as an application would), kills a
data node with SIGKILL (or stops it with SIGSTOP) after a few seconds — node 2 and node
1 (the GCP master and membership president) in turn — and measures the
write-unavailability window: the longest time between two acknowledged inserts around
the fault. After the run every acknowledged row must be there (counted through
duo_sqld). Prints each run and the median and maximum window.

Usage: failover_window.py [--bin build/release/bin] [--runs 10] [--signal KILL|STOP]
"""

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts", "testlib"))
from duo_cluster import LauncherCluster  # noqa: E402

import pymysql  # noqa: E402  (python3-pymysql, installed by scripts/bootstrap)

BEFORE_FAULT_S = 3.0
# A node watches its ring neighbour from the first heartbeat it hears from it; one
# frozen before that (within HeartbeatIntervalDbDb of the start) is only found out when
# its links close. SIGSTOP therefore comes after two heartbeat intervals.
BEFORE_STOP_S = 12.0
AFTER_FAULT_S = 6.0
# A stopped node is declared dead after 4 missed heartbeats (HeartbeatIntervalDbDb,
# 5000 ms by default as in NDB): the writer runs long enough to see writes resume.
AFTER_STOP_S = 30.0


def connect(port):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           autocommit=True, connect_timeout=10)


class Writer(threading.Thread):
    """Inserts rows 1, 2, ... one by one; records when each was acknowledged."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.stop = threading.Event()
        self.acked = []  # (time, id)
        self.errors = 0

    def run(self):
        conn = connect(self.port)
        next_id = 1
        while not self.stop.is_set():
            try:
                with conn.cursor() as cursor:
                    cursor.execute("INSERT INTO fw.t VALUES (%s, %s)", (next_id, next_id))
                self.acked.append((time.monotonic(), next_id))
                next_id += 1
            except pymysql.MySQLError as e:
                # 1297: the node failure aborted it (or its outcome is unknown: a
                # duplicate on retry then means it had committed).
                if e.args[0] == 1062:
                    self.acked.append((time.monotonic(), next_id))
                    next_id += 1
                else:
                    self.errors += 1
                    time.sleep(0.01)
            except pymysql.err.InterfaceError:
                conn = connect(self.port)


def one_run(bin_dir, work_dir, victim, sig):
    cluster = LauncherCluster(bin_dir, work_dir)
    try:
        cluster.start()
        setup = connect(cluster.sql_port)
        with setup.cursor() as cursor:
            cursor.execute("CREATE DATABASE fw")
            cursor.execute("CREATE TABLE fw.t (id INT PRIMARY KEY, v INT)")
        writer = Writer(cluster.sql_port)
        writer.start()
        time.sleep(BEFORE_FAULT_S if sig == signal.SIGKILL else BEFORE_STOP_S)
        with open(os.path.join(cluster.data_dir, "datad", "ndb_%d.pid" % victim)) as f:
            pid = int(f.read().split()[0])
        fault_at = time.monotonic()
        os.kill(pid, sig)
        time.sleep(AFTER_FAULT_S if sig == signal.SIGKILL else AFTER_STOP_S)
        writer.stop.set()
        writer.join(timeout=60)
        times = [t for t, _ in writer.acked]
        gaps = [b - a for a, b in zip(times, times[1:]) if b >= fault_at - 1.0]
        window = max(gaps) if gaps else float("inf")
        after = sum(1 for t in times if t > fault_at)
        with setup.cursor() as cursor:
            cursor.execute("SELECT COUNT(*) FROM fw.t")
            count = cursor.fetchone()[0]
            acked_ids = {i for _, i in writer.acked}
            cursor.execute("SELECT id FROM fw.t")
            present = {row[0] for row in cursor.fetchall()}
        lost = len(acked_ids - present)
        if sig == signal.SIGSTOP:
            os.kill(pid, signal.SIGCONT)
        return {"window": window, "acked": len(times), "after": after, "count": count,
                "lost": lost, "errors": writer.errors}
    finally:
        cluster.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "../../build/release/bin"))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--signal", choices=["KILL", "STOP"], default="KILL")
    args = parser.parse_args()
    sig = signal.SIGKILL if args.signal == "KILL" else signal.SIGSTOP
    windows = []
    lost_total = 0
    for run in range(args.runs):
        victim = 2 if run % 2 == 0 else 1
        work_dir = tempfile.mkdtemp(prefix="duo_failover.")
        try:
            r = one_run(os.path.abspath(args.bin), work_dir, victim, sig)
        finally:
            shutil.rmtree(work_dir, ignore_errors=True)
        windows.append(r["window"])
        lost_total += r["lost"]
        print("run %d: SIG%s node %d: write window %.3f s, %d acknowledged (%d after the "
              "fault), %d rows present, %d acknowledged lost, %d failed attempts" % (
                  run + 1, args.signal, victim, r["window"], r["acked"], r["after"], r["count"],
                  r["lost"], r["errors"]), flush=True)
    print("write-unavailability after SIG%s of a data node: median %.3f s, max %.3f s over "
          "%d runs; acknowledged inserts lost: %d" % (
              args.signal, statistics.median(windows), max(windows), len(windows), lost_total))
    return 1 if lost_total else 0


if __name__ == "__main__":
    sys.exit(main())
