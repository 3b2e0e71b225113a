#!/usr/bin/env python3
"""Large values under a data-node failure, with real processes: two PyMySQL writers
insert, replace (growing and shrinking) and delete BLOB values of up to 300 KB — some in
two-row transactions — while data node 2 is SIGKILLed and later started again (node
restart). Afterwards every value is whole and is the one its row's version says
(never torn: SHA-256 compared), and duo_blob_parts_check finds, for every row, exactly
the parts its length needs and no parts of rows that do not exist (never orphaned).

Usage: large_values_fault_test.py --bin build/<dir>/bin --checker PATH   (label `fault`)
"""

import argparse
import hashlib
import os
import random
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../..", "scripts",
                                "testlib"))
from cluster_testlib import check, run_in_work_dir  # noqa: E402
from duo_cluster import LauncherCluster  # noqa: E402
from two_sqld_test import connect, query  # noqa: E402

import pymysql  # noqa: E402

KEYS = 40
RUN_SECONDS = 30
KILL_AT = 8
RESTART_AFTER = 6


def value_of(key, version):
    """The value row `key` holds at `version`: its length and bytes follow from both."""
    length = (key * 7919 + version * 104729) % 300000
    if version % 5 == 0:
        length %= 300  # around the 256-byte head
    seed = hashlib.sha256(b"%d/%d" % (key, version)).digest()
    return (seed * (length // len(seed) + 1))[:length]


def writer(port, seed, stop, counts):
    rng = random.Random(seed)
    conn = None
    while not stop.is_set():
        try:
            if conn is None:
                conn = connect(port, "big")
            key = rng.randint(1, KEYS)
            version = rng.randint(1, 10**6)
            op = rng.random()
            if op < 0.15:
                query(conn, "DELETE FROM t WHERE id = %s", (key,))
            elif op < 0.35:
                other = rng.randint(1, KEYS)
                query(conn, "BEGIN")
                for k in {key, other}:
                    query(conn, "REPLACE INTO t VALUES (%s, %s, %s)", (k, version, value_of(k, version)))
                if rng.random() < 0.3:
                    query(conn, "ROLLBACK")
                else:
                    query(conn, "COMMIT")
            else:
                query(conn, "INSERT INTO t VALUES (%s, %s, %s) ON DUPLICATE KEY UPDATE "
                            "version = VALUES(version), v = VALUES(v)",
                      (key, version, value_of(key, version)))
            counts["ok"] += 1
        except pymysql.MySQLError:
            counts["errors"] += 1  # temporary errors around the failure; go on
            try:
                if conn is not None:
                    conn.close()
            except pymysql.MySQLError:
                pass
            conn = None
            time.sleep(0.05)


def run(bin_dir, checker, work_dir):
    cluster = LauncherCluster(bin_dir, work_dir, data_memory_mb=512)
    try:
        cluster.start()
        conn = connect(cluster.sql_port)
        query(conn, "CREATE DATABASE big")
        query(conn, "CREATE TABLE big.t (id INT PRIMARY KEY, version INT NOT NULL, v MEDIUMBLOB)")
        stop = threading.Event()
        counts = {"ok": 0, "errors": 0}
        threads = [threading.Thread(target=writer, args=(cluster.sql_port, s, stop, counts))
                   for s in (1, 2)]
        for t in threads:
            t.start()
        time.sleep(KILL_AT)
        pid = cluster.data_node_pid(2)
        print("SIGKILL data node 2 (pid %d) after %d writes" % (pid, counts["ok"]), flush=True)
        os.kill(pid, signal.SIGKILL)
        time.sleep(RESTART_AFTER)
        cluster.up_again()
        print("data node 2 restarted", flush=True)
        time.sleep(max(0, RUN_SECONDS - KILL_AT - RESTART_AFTER))
        stop.set()
        for t in threads:
            t.join()
        print("writes: %d done, %d failed" % (counts["ok"], counts["errors"]), flush=True)
        check(counts["ok"] > 0, "no write succeeded")
        conn = connect(cluster.sql_port, "big")
        rows = query(conn, "SELECT id, version, LENGTH(v), SHA2(v, 256) FROM t ORDER BY id")
        for key, version, length, digest in rows:
            want = value_of(key, version)
            check(length == len(want) and digest == hashlib.sha256(want).hexdigest(),
                  "row %d holds a torn value (%s bytes, version %d)" % (key, length, version))
        print("%d rows, every value whole" % len(rows), flush=True)
        done = subprocess.run([checker, cluster.connect_string, "big/def/t"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=120)
        print(done.stdout, end="")
        check(done.returncode == 0, "the parts do not match the rows")
    finally:
        cluster.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--checker", required=True)
    args = parser.parse_args()
    return run_in_work_dir("duo-blobfault-", "large values under node failure",
                           lambda work_dir: run(os.path.abspath(args.bin),
                                                os.path.abspath(args.checker), work_dir))


if __name__ == "__main__":
    sys.exit(main())
