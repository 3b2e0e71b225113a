#!/usr/bin/env python3
"""sysbench against duo_sqld, as users run it: `oltp_read_write` prepare (tables, rows,
the secondary index k_1), a timed run with several threads that must end without an
error sysbench cannot retry, then checks that the tables are still whole (oltp_read_write deletes and
re-inserts rows by id, so every table still holds exactly table-size rows and every id),
and `cleanup`.

sysbench retries a transaction that failed with a lock wait timeout (1205) or a deadlock
(1213) and counts it as an "ignored error", as it does with InnoDB's deadlocks. On a
quiet machine the run has none; on a loaded 2-core machine a transaction may wait past
TransactionDeadlockDetectionTimeout for a row lock now and then, so up to 1% of the
transactions are accepted (and printed); more means something is wrong.

With --kill-data-node-at S, data node 2 is SIGKILLed S seconds into the run: sysbench
must keep going on the surviving replica (errors 1297 "node failure caused abort" are
what sysbench is told to retry, as with NDB), commit transactions after the kill, and
the tables must still be whole afterwards. The seconds in which no transaction
committed around the kill are printed (not asserted: machines are noisy).

With --restart-after R as well, node 2 is started again R seconds after the kill (`duo
up` on the running cluster) and catches up by a node restart while sysbench runs; after
the run node 1 is killed and node 2 alone must hold every table whole.

Starts the cluster with the `duo` launcher on free ports in a temporary directory and
always stops it. No timing is asserted: throughput is printed, not judged.

Usage: sysbench_test.py --bin build/<dir>/bin [--threads 4] [--seconds 30]
                        [--tables 2] [--table-size 10000] [--kill-data-node-at S]
                        [--restart-after R]
                                                               (CTest label `cluster`)
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../..", "scripts",
                                "testlib"))
from cluster_testlib import TestFailure, check, run_in_work_dir  # noqa: E402
from duo_cluster import LauncherCluster  # noqa: E402


def sql(port, statement):
    proc = subprocess.run(["mariadb", "-h127.0.0.1", "-P%d" % port, "-uroot", "-N", "-B", "-e",
                           statement], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=120)
    check(proc.returncode == 0, "`%s` failed:\n%s" % (statement, proc.stdout))
    return proc.stdout


def sysbench_command(args, port, command):
    return ["sysbench", "oltp_read_write", "--mysql-host=127.0.0.1", "--mysql-port=%d" % port,
            "--mysql-user=root", "--mysql-db=sbtest", "--tables=%d" % args.tables,
            "--table-size=%d" % args.table_size, "--threads=%d" % args.threads,
            "--time=%d" % args.seconds, "--rand-seed=1", command]


def sysbench(args, port, command):
    proc = subprocess.run(sysbench_command(args, port, command), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=args.seconds + 600)
    print(proc.stdout[-3000:] if command == "run" else proc.stdout[-600:], flush=True)
    check(proc.returncode == 0, "sysbench %s failed (exit %d)" % (command, proc.returncode))
    return proc.stdout


def sysbench_with_kill(args, port, cluster):
    """`run` with data node 2 SIGKILLed after --kill-data-node-at seconds (and started
    again --restart-after seconds later, if given); returns the output."""
    cmd = sysbench_command(args, port, "run") + [
        "--report-interval=1", "--mysql-ignore-errors=1213,1020,1205,1297"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(args.kill_data_node_at)
        pid = cluster.data_node_pid(2)
        print("SIGKILL data node 2 (pid %d)" % pid, flush=True)
        os.kill(pid, signal.SIGKILL)
        if args.restart_after:
            time.sleep(args.restart_after)
            print("starting data node 2 again (`duo up`): node restart under load", flush=True)
            started = time.time()
            up = cluster.up_again()
            check("started duo_datad (node 2)" in up, "duo up did not start node 2:\n%s" % up)
            print("node 2 started again and caught up in %.1f s (under load)"
                  % (time.time() - started), flush=True)
            check(proc.poll() is None, "sysbench ended before node 2 had caught up: "
                                       "raise --seconds")
        out, _ = proc.communicate(timeout=args.seconds + 600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print(out[-6000:], flush=True)
    check(proc.returncode == 0, "sysbench run failed (exit %d) after the kill" % proc.returncode)
    seconds = [(int(m.group(1)), float(m.group(2))) for m in
               re.finditer(r"^\[ (\d+)s \] thds: \d+ tps: ([\d.]+)", out, re.M)]
    after = [tps for second, tps in seconds if second > args.kill_data_node_at + 1]
    check(after and sum(after) > 0, "no transaction committed after the data node was killed")
    stalled = [second for second, tps in seconds if tps == 0]
    print("seconds without a committed transaction: %s" % (stalled or "none"), flush=True)
    return out


def check_tables_whole(args, port, when):
    """Every table holds exactly ids 1..table-size; otherwise the rows outside that range
    (or the missing ones) are printed before failing."""
    for t in range(1, args.tables + 1):
        table = "sbtest.sbtest%d" % t
        counts = sql(port, "SELECT COUNT(*), COUNT(DISTINCT id), MIN(id), MAX(id) FROM %s"
                     % table).split()
        if counts == [str(args.table_size), str(args.table_size), "1", str(args.table_size)]:
            continue
        outside = sql(port, "SELECT id, k FROM %s WHERE id < 1 OR id > %d ORDER BY id LIMIT 20"
                      % (table, args.table_size))
        inside = sql(port, "SELECT COUNT(*) FROM %s WHERE id BETWEEN 1 AND %d"
                     % (table, args.table_size))
        raise TestFailure("sbtest%d is not whole %s: COUNT, COUNT DISTINCT, MIN, MAX of id = %s; "
                          "rows with ids in 1..%d: %s; first rows outside: %s"
                          % (t, when, counts, args.table_size, inside.strip(),
                             outside.strip().replace("\n", "; ")))


def run(args, work_dir):
    cluster = LauncherCluster(os.path.abspath(args.bin), work_dir)
    try:
        cluster.start()
        port = cluster.sql_port
        sql(port, "CREATE DATABASE sbtest")
        sysbench(args, port, "prepare")
        check_tables_whole(args, port, "after prepare")
        if args.kill_data_node_at:
            out = sysbench_with_kill(args, port, cluster)
        else:
            out = sysbench(args, port, "run")
        errors = re.search(r"^\s+ignored errors:\s+(\d+)", out, re.M)
        transactions = re.search(r"^\s+transactions:\s+(\d+)", out, re.M)
        check(errors and transactions, "unexpected sysbench output")
        if not args.kill_data_node_at:
            retried = int(errors.group(1))
            print("transactions retried by sysbench (1205/1213): %d" % retried, flush=True)
            check(retried * 100 <= int(transactions.group(1)),
                  "sysbench retried %d of %s transactions" % (retried, transactions.group(1)))
        check(int(transactions.group(1)) > 0, "sysbench committed no transaction")
        check_tables_whole(args, port, "after the run")
        if args.restart_after:
            # Node 2 caught up: with node 1 killed in turn, it alone has every row.
            os.kill(cluster.data_node_pid(1), signal.SIGKILL)
            print("SIGKILL data node 1: node 2 serves alone", flush=True)
            time.sleep(2)
            check_tables_whole(args, port, "on the restarted node 2 alone")
        sysbench(args, port, "cleanup")
        check(sql(port, "SHOW TABLES FROM sbtest").strip() == "", "cleanup left tables")
    finally:
        cluster.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--tables", type=int, default=2)
    parser.add_argument("--table-size", type=int, default=10000)
    parser.add_argument("--restart-after", type=int, default=0,
                        help="with --kill-data-node-at: start node 2 again this many seconds "
                             "after the kill (node restart under load)")
    parser.add_argument("--kill-data-node-at", type=int, default=0,
                        help="SIGKILL data node 2 this many seconds into the run")
    args = parser.parse_args()
    return run_in_work_dir("duo-sysbench-", "sysbench test",
                           lambda work_dir: run(args, work_dir))


if __name__ == "__main__":
    sys.exit(main())
