#!/usr/bin/env python3
"""Large values end to end, with real processes: PyMySQL stores and reads back 16 MiB
values in MEDIUMBLOB / LONGBLOB / LONGTEXT columns (text protocol, and the binary
protocol through server-side parameters is the C client's part), replaces them by
shorter and longer ones, deletes them, and a statement over max_allowed_packet is
refused with 1153; then the libmariadb client (large_values_client.cc) stores 16 MiB
with COM_STMT_SEND_LONG_DATA and reads it back through both protocols.

Usage: large_values_test.py --bin build/<dir>/bin --client PATH   (CTest label `cluster`)
"""

import argparse
import hashlib
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../..", "scripts",
                                "testlib"))
from cluster_testlib import check, run_in_work_dir  # noqa: E402
from duo_cluster import LauncherCluster  # noqa: E402
from two_sqld_test import connect, error_code, query  # noqa: E402

MIB = 1024 * 1024


def digest(value):
    return hashlib.sha256(value).hexdigest()


def run(bin_dir, client, work_dir):
    cluster = LauncherCluster(bin_dir, work_dir, data_memory_mb=768)
    try:
        cluster.start()
        conn = connect(cluster.sql_port)
        query(conn, "CREATE DATABASE big")
        query(conn, "USE big")
        query(conn, "CREATE TABLE docs (id INT PRIMARY KEY, mb MEDIUMBLOB, lb LONGBLOB, "
                    "lt LONGTEXT)")
        rng = random.Random(16)
        medium = rng.randbytes(16 * MIB - 1)  # MEDIUMBLOB's largest value
        long_value = rng.randbytes(16 * MIB)
        text = ("0123456789abcdef" * MIB).encode()
        query(conn, "INSERT INTO docs VALUES (1, %s, %s, %s)", (medium, long_value, text))
        rows = query(conn, "SELECT mb, lb, lt FROM docs WHERE id = 1")
        check(len(rows) == 1, "one row back")
        check(digest(rows[0][0]) == digest(medium), "MEDIUMBLOB 16 MiB - 1 back byte for byte")
        check(digest(rows[0][1]) == digest(long_value), "LONGBLOB 16 MiB back byte for byte")
        check(rows[0][2].encode() == text, "LONGTEXT 16 MiB back")
        check(error_code(conn, "INSERT INTO docs (id, mb) VALUES (2, REPEAT('x', 16777216))")
              == 1406, "MEDIUMBLOB refuses 16 MiB (1406)")
        # Replaced by a shorter value, then a longer one: no byte of the old one left.
        query(conn, "UPDATE docs SET lb = %s WHERE id = 1", (long_value[:5000],))
        check(query(conn, "SELECT LENGTH(lb), lb FROM docs WHERE id = 1")[0]
              == (5000, long_value[:5000]), "LONGBLOB shrunk to 5000 bytes")
        bigger = rng.randbytes(20 * MIB)
        query(conn, "UPDATE docs SET lb = %s WHERE id = 1", (bigger,))
        check(digest(query(conn, "SELECT lb FROM docs WHERE id = 1")[0][0]) == digest(bigger),
              "LONGBLOB grown to 20 MiB")
        # A scan returns whole values too.
        query(conn, "INSERT INTO docs VALUES (3, %s, NULL, 'x')", (medium[:3 * MIB],))
        rows = query(conn, "SELECT id, LENGTH(mb), SHA2(mb, 256) FROM docs ORDER BY id")
        check([(r[0], r[1]) for r in rows] == [(1, 16 * MIB - 1), (3, 3 * MIB)],
              "a scan's lengths: %r" % ([(r[0], r[1]) for r in rows],))
        check(rows[1][2] == digest(medium[:3 * MIB]), "SHA2 of a scanned value")
        query(conn, "DELETE FROM docs WHERE id = 1")
        check(query(conn, "SELECT COUNT(*) FROM docs")[0][0] == 1, "row 1 deleted")
        # A statement beyond max_allowed_packet (64 MiB): 1153, the connection is closed.
        try:
            query(conn, "SELECT LENGTH(%s)", (b"y" * (64 * MIB + 10),))
            check(False, "a statement over max_allowed_packet was accepted")
        except Exception as e:  # PyMySQL reports 1153, or the closed connection
            check("1153" in str(e) or "max_allowed_packet" in str(e) or "Lost" in str(e)
                  or "closed" in str(e).lower(), "over max_allowed_packet: %s" % str(e)[:200])
        conn = connect(cluster.sql_port, "big")
        check(query(conn, "SELECT COUNT(*) FROM docs")[0][0] == 1, "a new connection works")
        if client:
            query(conn, "CREATE DATABASE big_c")
            done = subprocess.run([client, str(cluster.sql_port), "big_c"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  timeout=600)
            print(done.stdout, end="")
            check(done.returncode == 0, "large_values_client failed")
    finally:
        cluster.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--client", default="")
    args = parser.parse_args()
    return run_in_work_dir("duo-large-", "large values",
                           lambda work_dir: run(os.path.abspath(args.bin), args.client, work_dir))


if __name__ == "__main__":
    sys.exit(main())
