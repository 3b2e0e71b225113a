#!/usr/bin/env python3
"""Two duo_sqld over one cluster: DDL on one is visible on the other at once, DML on
either is seen by both, and killing one (SIGKILL, with a transaction open) loses nothing
committed and leaves nothing of the open transaction.

Starts the cluster with the `duo` launcher (mgmd, two data nodes, the first duo_sqld),
then a second duo_sqld on its own port; drives both with PyMySQL. Everything is stopped
and removed at the end, also on failure.

Usage: two_sqld_test.py --bin build/<dir>/bin   (CTest label `cluster`)
"""

import argparse
import os
import signal
import subprocess
import sys
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../..", "scripts",
                                "testlib"))
from cluster_testlib import check, eventually, run_in_work_dir  # noqa: E402
from duo_cluster import LauncherCluster  # noqa: E402

import pymysql  # noqa: E402  (python3-pymysql, installed by scripts/bootstrap)


def connect(port, database=None, autocommit=True):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           database=database, autocommit=autocommit, connect_timeout=10)


def query(conn, statement, args=None):
    with conn.cursor() as cursor:
        cursor.execute(statement, args)
        return cursor.fetchall()


def error_code(conn, statement):
    try:
        query(conn, statement)
    except pymysql.MySQLError as e:
        return e.args[0]
    return 0


def start_second_sqld(bin_dir, cluster, port, directory):
    os.makedirs(directory)
    log = open(os.path.join(directory, "out.log"), "w")
    proc = subprocess.Popen([os.path.join(bin_dir, "duo_sqld"), "--foreground",
                             "--ndb-connectstring=" + cluster.connect_string,
                             "--port=%d" % port, "--datadir=" + directory,
                             "--socket=" + os.path.join(directory, "mysqld.sock")],
                            stdout=log, stderr=subprocess.STDOUT)

    def accepts():
        try:
            connect(port).close()
            return True
        except pymysql.MySQLError:
            check(proc.poll() is None, "the second duo_sqld exited; see %s/out.log" % directory)
            return False
    eventually(accepts, timeout=60, message="the second duo_sqld to accept connections")
    return proc


def run(bin_dir, work_dir):
    cluster = LauncherCluster(bin_dir, work_dir, extra_ports=1)
    second = None
    try:
        cluster.start()
        second = start_second_sqld(bin_dir, cluster, cluster.extra_ports[0],
                                   os.path.join(work_dir, "sqld2"))
        a = connect(cluster.sql_port)
        b = connect(cluster.extra_ports[0])

        # DDL on A, visible on B at once.
        query(a, "CREATE DATABASE shop")
        check(("shop",) in query(b, "SHOW DATABASES"), "B does not see database shop")
        query(a, "CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(40), qty INT)")
        query(b, "INSERT INTO shop.items VALUES (1, 'apple', 5), (2, 'pear', 7)")
        check(query(a, "SELECT id, name, qty FROM shop.items ORDER BY id") ==
              ((1, "apple", 5), (2, "pear", 7)), "A does not see B's rows")
        query(a, "UPDATE shop.items SET qty = qty + 1 WHERE id = 1")
        check(query(b, "SELECT qty FROM shop.items WHERE id = 1") == ((6,),),
              "B does not see A's update")

        # A table dropped and re-created on B with other columns: A uses the new one.
        query(b, "DROP TABLE shop.items")
        check(error_code(a, "SELECT * FROM shop.items") == 1146,
              "A still reads a table B dropped")
        query(b, "CREATE TABLE shop.items (sku VARCHAR(10) PRIMARY KEY, price DECIMAL(8,2))")
        query(a, "INSERT INTO shop.items VALUES ('x1', 9.50)")
        check(query(b, "SELECT sku, price FROM shop.items") == (("x1", Decimal("9.50")),),
              "B does not see A's insert into the re-created table")

        # SIGKILL of B with a transaction open: committed rows stay, the open one vanishes
        # and its row locks are released (A can update the row at once).
        query(b, "INSERT INTO shop.items VALUES ('x2', 1.00)")
        b_tx = connect(cluster.extra_ports[0], autocommit=False)
        query(b_tx, "BEGIN")
        query(b_tx, "INSERT INTO shop.items VALUES ('x3', 3.00)")
        query(b_tx, "UPDATE shop.items SET price = 99 WHERE sku = 'x1'")
        second.send_signal(signal.SIGKILL)
        second.wait(timeout=30)
        second = None
        check(query(a, "SELECT sku FROM shop.items ORDER BY sku") == (("x1",), ("x2",)),
              "after SIGKILL of B: committed rows lost or its open transaction visible")
        # The killed sqld's transaction is aborted by the cluster once its link closes;
        # until then its lock on x1 makes A wait (bounded by the lock wait timeout).
        eventually(lambda: error_code(a, "UPDATE shop.items SET price = 2 WHERE sku = 'x1'") == 0,
                   timeout=30, message="B's locks to be released after its SIGKILL")
        check(query(a, "SELECT price FROM shop.items WHERE sku = 'x1'")[0][0] == 2,
              "A's update after B's death did not apply")
        query(a, "DROP DATABASE shop")
        a.close()
    finally:
        if second is not None:
            second.kill()
            second.wait()
        cluster.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    args = parser.parse_args()
    return run_in_work_dir("duo-two-sqld-", "two_sqld",
                           lambda work_dir: run(os.path.abspath(args.bin), work_dir))


if __name__ == "__main__":
    sys.exit(main())
