#!/usr/bin/env python3
"""Views across duo_sqld processes, with real processes: a view created through one
duo_sqld is listed, readable and writable through a second one at once (the dictionary's
schema event), CREATE OR REPLACE / DROP on one are seen by the other, a CREATE of a name
the other sqld just took as a view is 1050, and the views survive a system restart
(duo down / duo up) with their definitions (SHOW CREATE VIEW) and rows.

Usage: views_test.py --bin build/<dir>/bin   (CTest label `cluster`)
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../..", "scripts",
                                "testlib"))
from cluster_testlib import check, run_in_work_dir  # noqa: E402
from duo_cluster import LauncherCluster  # noqa: E402
from two_sqld_test import connect, error_code, query, start_second_sqld  # noqa: E402


def run(bin_dir, work_dir):
    cluster = LauncherCluster(bin_dir, work_dir, extra_ports=1)
    second = None
    try:
        cluster.start()
        second = start_second_sqld(bin_dir, cluster, cluster.extra_ports[0],
                                   os.path.join(work_dir, "sqld2"))
        a = connect(cluster.sql_port)
        b = connect(cluster.extra_ports[0])

        query(a, "CREATE DATABASE shop")
        query(a, "CREATE TABLE shop.orders (id INT PRIMARY KEY, item VARCHAR(20), qty INT)")
        query(a, "INSERT INTO shop.orders VALUES (1, 'apple', 3), (2, 'pear', 0), (3, 'fig', 7)")
        query(a, "CREATE VIEW shop.open_orders AS SELECT id, item, qty FROM shop.orders "
                 "WHERE qty > 0 WITH CHECK OPTION")

        # The second sqld sees the view at once: listed, readable, writable.
        check(query(b, "SHOW FULL TABLES FROM shop") ==
              (("open_orders", "VIEW"), ("orders", "BASE TABLE")),
              "B's SHOW FULL TABLES: %r" % (query(b, "SHOW FULL TABLES FROM shop"),))
        check(query(b, "SELECT id, item FROM shop.open_orders ORDER BY id") ==
              ((1, "apple"), (3, "fig")), "B reads the view")
        query(b, "INSERT INTO shop.open_orders VALUES (4, 'plum', 2)")
        check(error_code(b, "INSERT INTO shop.open_orders VALUES (5, 'kiwi', 0)") == 1369,
              "B's INSERT against the CHECK OPTION was not refused")
        check(query(a, "SELECT COUNT(*) FROM shop.open_orders") == ((3,),),
              "A sees B's row through the view")

        # Changes on one are seen by the other; names stay unique across both.
        query(b, "CREATE OR REPLACE VIEW shop.open_orders AS SELECT id, qty FROM shop.orders "
                 "WHERE qty > 2")
        check(query(a, "SELECT * FROM shop.open_orders ORDER BY id") == ((1, 3), (3, 7)),
              "A reads B's replaced view")
        query(a, "CREATE VIEW shop.totals (n, total) AS SELECT COUNT(*), SUM(qty) FROM shop.orders")
        check(error_code(b, "CREATE TABLE shop.totals (k INT PRIMARY KEY)") == 1050,
              "B created a table over A's view")
        check(error_code(b, "CREATE VIEW shop.totals AS SELECT 1") == 1050,
              "B created a view over A's view")
        query(b, "CREATE VIEW shop.scratch AS SELECT 1 AS one")
        query(a, "DROP VIEW shop.scratch")
        check(error_code(b, "SELECT * FROM shop.scratch") == 1146, "B still reads a dropped view")
        create_text = query(a, "SHOW CREATE VIEW shop.open_orders")[0][1]
        a.close()
        b.close()
        second.kill()
        second.wait()
        second = None

        # System restart: the views and their definitions are back.
        cluster.stop()
        cluster.start()
        a = connect(cluster.sql_port)
        check(query(a, "SHOW CREATE VIEW shop.open_orders")[0][1] == create_text,
              "SHOW CREATE VIEW after the restart")
        check(query(a, "SELECT * FROM shop.open_orders ORDER BY id") == ((1, 3), (3, 7)),
              "the view's rows after the restart")
        check(query(a, "SELECT n, total FROM shop.totals") == ((4, 12),),
              "the aggregate view after the restart: %r" % (query(a, "SELECT * FROM shop.totals"),))
        check(query(a, "SELECT TABLE_NAME, IS_UPDATABLE FROM information_schema.VIEWS "
                       "WHERE TABLE_SCHEMA = 'shop' ORDER BY TABLE_NAME") ==
              (("open_orders", "YES"), ("totals", "NO")), "information_schema.VIEWS")
        # DROP DATABASE drops its views too.
        query(a, "DROP DATABASE shop")
        query(a, "CREATE DATABASE shop")
        check(query(a, "SHOW TABLES FROM shop") == (), "views left after DROP DATABASE")
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
    return run_in_work_dir("duo-views-", "views",
                           lambda work_dir: run(os.path.abspath(args.bin), work_dir))


if __name__ == "__main__":
    sys.exit(main())
