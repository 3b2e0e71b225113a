#!/usr/bin/env python3
"""sysbench through duo_sqld beside MariaDB, on this machine, in one run.

Starts a two-replica DuoDB cluster with duo_sqld (`duo up` in a temporary directory) and
a private MariaDB configured as the fair single-box comparison (InnoDB, binary log off,
innodb_flush_log_at_trx_commit=2 — commits in memory like a DuoDB commit acknowledged
in memory on two replicas — and a buffer pool that holds the data), loads the same
sysbench tables into each, runs the same workloads with the same threads against each,
and prints one Markdown table with the ratios: the figures docs/benchmarks.md reports.
An error sysbench cannot retry makes the run fail; the transactions it retried
(deadlocks, lock wait timeouts) are reported beside the figures. Everything it starts is
stopped again, also on failure.

Usage: sysbench_vs_mariadb.py [--bin build/release/bin] [--tables 4] [--table-size 100000]
                              [--threads 4] [--seconds 30]
                              [--workloads oltp_point_select,oltp_read_write]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def run(cmd, timeout=3600):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(cmd), proc.returncode,
                                                   proc.stdout[-4000:]))
    return proc.stdout


def sql(port, statement):
    run(["mariadb", "-h127.0.0.1", "-P%d" % port, "-uroot", "-e", statement], timeout=120)


def sysbench(args, port, workload, command):
    cmd = ["sysbench", workload, "--mysql-host=127.0.0.1", "--mysql-port=%d" % port,
           "--mysql-user=root", "--mysql-db=sbtest", "--tables=%d" % args.tables,
           "--table-size=%d" % args.table_size, "--threads=%d" % args.threads,
           "--time=%d" % args.seconds, "--report-interval=0", "--rand-seed=1", command]
    return run(cmd)


def parse_run(out):
    """QPS, TPS, p95 latency (ms) and the error count of a `sysbench ... run`."""
    def number(pattern):
        match = re.search(pattern, out, re.M)
        if not match:
            raise RuntimeError("unexpected sysbench output:\n%s" % out)
        return float(match.group(1))
    return {
        "tps": number(r"^\s+transactions:\s+\d+\s+\(([\d.]+) per sec"),
        "qps": number(r"^\s+queries:\s+\d+\s+\(([\d.]+) per sec"),
        "errors": number(r"^\s+ignored errors:\s+(\d+)"),
        "p95": number(r"^\s+95th percentile:\s+([\d.]+)"),
    }


def measure(args, port, name):
    """Loads the tables and runs every workload against the server on `port`."""
    sql(port, "DROP DATABASE IF EXISTS sbtest")
    sql(port, "CREATE DATABASE sbtest")
    started = time.monotonic()
    print("%s: loading %d x %d rows" % (name, args.tables, args.table_size), flush=True)
    sysbench(args, port, "oltp_read_write", "prepare")
    figures = {"load_s": time.monotonic() - started}
    for workload in args.workloads:
        print("%s: %s, %d threads, %d s" % (name, workload, args.threads, args.seconds),
              flush=True)
        result = parse_run(sysbench(args, port, workload, "run"))
        figures[workload] = result
    return figures


def start_mariadb(port, data_dir):
    os.makedirs(data_dir)
    run(["mariadb-install-db", "--no-defaults", "--datadir=" + os.path.join(data_dir, "data"),
         "--user=root", "--auth-root-authentication-method=normal"])
    log = open(os.path.join(data_dir, "server.log"), "w")
    subprocess.Popen(["mariadbd", "--no-defaults", "--datadir=" + os.path.join(data_dir, "data"),
                      "--user=root", "--port=%d" % port, "--bind-address=127.0.0.1",
                      "--socket=" + os.path.join(data_dir, "sock"),
                      "--pid-file=" + os.path.join(data_dir, "mariadbd.pid"), "--skip-log-bin",
                      "--innodb-flush-log-at-trx-commit=2", "--innodb-buffer-pool-size=2G",
                      "--max-connections=500", "--skip-name-resolve"],
                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(120):
        if subprocess.run(["mariadb", "-h127.0.0.1", "-P%d" % port, "-uroot", "-e", "SELECT 1"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
            break
        time.sleep(0.5)
    else:
        raise RuntimeError("mariadbd did not start; see %s/server.log" % data_dir)
    sql(port, "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; "
              "GRANT ALL ON *.* TO 'root'@'127.0.0.1'")


def stop_mariadb(port):
    subprocess.run(["mariadb-admin", "-h127.0.0.1", "-P%d" % port, "-uroot", "shutdown"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "../../build/release/bin"))
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--table-size", type=int, default=100000)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--workloads", default="oltp_point_select,oltp_read_write")
    parser.add_argument("--base-port", type=int, default=22186)
    parser.add_argument("--sql-port", type=int, default=22306)
    parser.add_argument("--mariadb-port", type=int, default=22399)
    parser.add_argument("--data-memory", type=int, default=1024,
                        help="DataMemory per data node in MB")
    args = parser.parse_args()
    args.workloads = args.workloads.split(",")
    bindir = os.path.abspath(args.bin)
    duo = os.path.join(bindir, "duo")
    work_dir = tempfile.mkdtemp(prefix="duo_sysbench.")
    try:
        print("starting a 2-replica DuoDB cluster with duo_sqld in %s" % work_dir, flush=True)
        cluster_dir = os.path.join(work_dir, "duo")
        run([duo, "up", "--initial", "--data-dir", cluster_dir, "--base-port",
             str(args.base_port), "--sql-port", str(args.sql_port), "--data-memory",
             str(args.data_memory)])
        try:
            duo_result = measure(args, args.sql_port, "DuoDB")
        finally:
            subprocess.run([duo, "down", "--data-dir", cluster_dir], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        print("starting MariaDB on 127.0.0.1:%d" % args.mariadb_port, flush=True)
        try:
            start_mariadb(args.mariadb_port, os.path.join(work_dir, "mariadb"))
            mariadb_result = measure(args, args.mariadb_port, "MariaDB")
        finally:
            stop_mariadb(args.mariadb_port)
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)

    print()
    print("| workload (%d threads) | DuoDB | p95 ms | retried | MariaDB | p95 ms | retried | "
          "ratio |" % args.threads)
    print("|---|---|---|---|---|---|---|---|")
    for workload in args.workloads:
        unit = "QPS" if workload == "oltp_point_select" else "TPS"
        key = unit.lower()
        d, m = duo_result[workload], mariadb_result[workload]
        print("| %s (%s) | %.0f | %.2f | %d | %.0f | %.2f | %d | %.2f |" % (
            workload, unit, d[key], d["p95"], d["errors"], m[key], m["p95"], m["errors"],
            d[key] / m[key]))
    print("| sysbench prepare (%d x %d rows), s | %.1f | | | %.1f | | | %.2f |" % (
        args.tables, args.table_size, duo_result["load_s"], mariadb_result["load_s"],
        mariadb_result["load_s"] / duo_result["load_s"]))
    print()
    print("sysbench %s; duo_sqld, 2 data nodes, mgmd, MariaDB and "
          "sysbench on this machine (%d cores); MariaDB: InnoDB, no binlog, "
          "flush_log_at_trx_commit=2" % (
              run(["sysbench", "--version"]).strip(), os.cpu_count()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
