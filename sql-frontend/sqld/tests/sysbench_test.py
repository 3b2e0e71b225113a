#!/usr/bin/env python3
"""sysbench against duo_sqld, as users run it: `oltp_read_write` prepare (tables, rows,
the secondary index k_1), a timed run with several threads that must end with zero
errors, then checks that the tables are still whole (oltp_read_write deletes and
re-inserts rows by id, so every table still holds exactly table-size rows and every id),
and `cleanup`.

Starts the cluster with the `duo` launcher on free ports in a temporary directory and
always stops it. No timing is asserted: throughput is printed, not judged.

Usage: sysbench_test.py --bin build/<dir>/bin [--threads 4] [--seconds 30]
                        [--tables 2] [--table-size 10000]      (CTest label `cluster`)
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../..", "scripts",
                                "testlib"))
from cluster_testlib import TestFailure, check  # noqa: E402
from duo_cluster import LauncherCluster  # noqa: E402


def sql(port, statement):
    proc = subprocess.run(["mariadb", "-h127.0.0.1", "-P%d" % port, "-uroot", "-N", "-B", "-e",
                           statement], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=120)
    check(proc.returncode == 0, "`%s` failed:\n%s" % (statement, proc.stdout))
    return proc.stdout


def sysbench(args, port, command):
    cmd = ["sysbench", "oltp_read_write", "--mysql-host=127.0.0.1", "--mysql-port=%d" % port,
           "--mysql-user=root", "--mysql-db=sbtest", "--tables=%d" % args.tables,
           "--table-size=%d" % args.table_size, "--threads=%d" % args.threads,
           "--time=%d" % args.seconds, "--rand-seed=1", command]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=args.seconds + 600)
    print(proc.stdout[-3000:] if command == "run" else proc.stdout[-600:], flush=True)
    check(proc.returncode == 0, "sysbench %s failed (exit %d)" % (command, proc.returncode))
    return proc.stdout


def run(args, work_dir):
    cluster = LauncherCluster(os.path.abspath(args.bin), work_dir)
    try:
        cluster.start()
        port = cluster.sql_port
        sql(port, "CREATE DATABASE sbtest")
        sysbench(args, port, "prepare")
        out = sysbench(args, port, "run")
        errors = re.search(r"^\s+ignored errors:\s+(\d+)", out, re.M)
        transactions = re.search(r"^\s+transactions:\s+(\d+)", out, re.M)
        check(errors and transactions, "unexpected sysbench output")
        check(int(errors.group(1)) == 0, "sysbench reported %s errors" % errors.group(1))
        check(int(transactions.group(1)) > 0, "sysbench committed no transaction")
        for t in range(1, args.tables + 1):
            counts = sql(port, "SELECT COUNT(*), COUNT(DISTINCT id), MIN(id), MAX(id) "
                               "FROM sbtest.sbtest%d" % t).split()
            check(counts == [str(args.table_size), str(args.table_size), "1",
                             str(args.table_size)],
                  "sbtest%d is not whole after the run: COUNT, COUNT DISTINCT, MIN, MAX of id "
                  "= %s" % (t, counts))
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
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit("terminated by signal %d" % s))
    work_dir = tempfile.mkdtemp(prefix="duo-sysbench-")
    started = time.time()
    try:
        run(args, work_dir)
    except TestFailure as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    print("sysbench test: passed in %.1f s" % (time.time() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
