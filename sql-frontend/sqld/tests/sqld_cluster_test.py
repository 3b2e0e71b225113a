#!/usr/bin/env python3
"""End-to-end test of duo_sqld over a real cluster: duo_mgmd + two duo_datad (two
replicas) + duo_sqld on free ports of 127.0.0.1 in a temporary directory, driven by the
`mariadb` CLI in batch mode and by PyMySQL, as applications use it.

Covers: the CLI's connect-time queries, CREATE/DROP DATABASE, USE, SHOW DATABASES/TABLES,
CREATE TABLE, DESCRIBE, INSERT (multi-row, defaults, AUTO_INCREMENT), SELECT by key, by
IN list and by scan (pushed filter and sqld-evaluated WHERE), ORDER BY/LIMIT, COUNT(*),
UPDATE (interpreted k=k+1 and read-modify-write by scan), DELETE by key and by scan,
prepared statements with bound parameters (duo_sqld_prepared_client, libmariadb),
MySQL error codes (1046 1049 1050 1054 1062 1064 1146 1048 1364), a transaction rolled
back and one committed (BEGIN and PyMySQL's autocommit=0), row locks (SELECT ... FOR
UPDATE holds off an UPDATE by scan, which then applies to the committed value), KILL QUERY
(SLEEP interrupted, the connection kept), TLS with the certificate duo_sqld generates and
a caching_sha2_password account (refused without TLS), MySQL Connector/Python when it is
installed (not in Debian 12: a local run only), and the data still there after
duo_sqld is killed (SIGKILL) and started again. Every process is killed by its pid and
the directory removed, also when a check fails.

Usage: sqld_cluster_test.py --mgmd P --datad P --sqld P   (CTest label `cluster`)
"""

import argparse
import datetime
import decimal
import inspect
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../..", "scripts", "testlib"))
from cluster_testlib import (TestFailure, check, eventually, reap, start_datad,  # noqa: E402
                             start_mgmd)
from config_ini import config_ini, small_ndbd_default  # noqa: E402
from duo_cluster import pick_ports  # noqa: E402

import pymysql  # noqa: E402  (python3-pymysql, installed by scripts/bootstrap)


def cluster_config(directory):
    """Two data nodes on 127.0.0.1, the [mysqld] slot of duo_sqld and one API slot."""
    return config_ini(small_ndbd_default(directory, "16M"), (1, 2),
                      {"HostName": "127.0.0.1", "DataDir": directory}, mysqld_slots=(50,),
                      api_slots=(51,))


def free_port():
    # Below the ephemeral range: see duo_cluster.pick_ports.
    return pick_ports(1)


class Env:
    def __init__(self, args):
        self.args = args
        self.dir = tempfile.mkdtemp(prefix="duo_sqld_test.")
        self.config_path = os.path.join(self.dir, "config.ini")
        with open(self.config_path, "w") as f:
            f.write(cluster_config(self.dir))
        self.processes = []
        self.mgm_port = None
        self.sql_port = free_port()
        self.sqld = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is not None:
            for name in ("sqld.log", "datad_1.log", "datad_2.log"):
                path = os.path.join(self.dir, name)
                if os.path.exists(path):
                    with open(path, errors="replace") as f:
                        sys.stderr.write("---- %s (tail)\n%s\n" % (name, f.read()[-3000:]))
        reap(self.processes, [], self.dir)
        return False

    def start_cluster(self):
        mgmd, self.mgm_port = start_mgmd(self.args.mgmd, self.config_path,
                                         os.path.join(self.dir, "configdir"),
                                         os.path.join(self.dir, "mgmd.log"))
        self.processes.append(mgmd)
        for node in (1, 2):
            self.processes.append(start_datad(self.args.datad, "127.0.0.1:%d" % self.mgm_port,
                                              node, os.path.join(self.dir, "datad_%d.log" % node)))

    def start_sqld(self):
        log = open(os.path.join(self.dir, "sqld.log"), "ab")
        self.sqld = subprocess.Popen(
            [self.args.sqld, "-c", "127.0.0.1:%d" % self.mgm_port, "--port=%d" % self.sql_port,
             "--bind-address=127.0.0.1", "--datadir=" + os.path.join(self.dir, "sqld"),
             "--socket=" + os.path.join(self.dir, "sqld", "mysqld.sock"),
             "--foreground"], stdout=log, stderr=log)
        log.close()
        self.processes.append(self.sqld)

        def accepting():
            check(self.sqld.poll() is None, "duo_sqld exited with %s" % self.sqld.returncode)
            try:
                self.connect().close()
                return True
            except pymysql.err.OperationalError:
                return False
        eventually(accepting, timeout=120, message="duo_sqld accepting connections", interval=0.5)

    def connect(self, **kwargs):
        return pymysql.connect(host="127.0.0.1", port=self.sql_port, user="root", password="",
                               connect_timeout=5, read_timeout=60, **kwargs)

    def cli(self, sql, database=None):
        """Runs `sql` with the mariadb CLI in batch mode: (rc, stdout, stderr)."""
        command = [self.args.cli, "-h127.0.0.1", "-P%d" % self.sql_port, "-uroot", "--batch",
                   "--skip-ssl", "-e", sql]
        if database:
            command.insert(1, "--database=" + database)
        proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def expect_error(cursor, sql, code, args=None):
    try:
        cursor.execute(sql, args)
    except (pymysql.err.MySQLError) as e:
        check(e.args[0] == code, "%s: expected error %d, got %r" % (sql, code, e.args))
        return e.args[1]
    raise TestFailure("%s: expected error %d, it succeeded" % (sql, code))


def cli_checks(env):
    rc, out, err = env.cli("SELECT @@version_comment LIMIT 1; SELECT DATABASE(), 1 + 1")
    check(rc == 0, "cli select: %s" % err)
    check("@@version_comment\nDuoDB" in out and "DATABASE()\t1 + 1\nNULL\t2\n" in out,
          "cli output: %r" % out)
    rc, out, err = env.cli("CREATE DATABASE shop; SHOW DATABASES")
    check(rc == 0 and "shop\n" in out and "information_schema\n" in out, "databases: %r %s" % (out, err))
    rc, out, err = env.cli("CREATE DATABASE shop")
    check(rc != 0 and "ERROR 1007" in err, "create twice: %s" % err)
    rc, out, err = env.cli(
        "CREATE TABLE items (id INT NOT NULL PRIMARY KEY, name VARCHAR(32) NOT NULL,"
        " qty BIGINT NOT NULL DEFAULT 0, price DECIMAL(8,2), added DATE, KEY by_name (name))"
        " ENGINE=NDBCLUSTER;"
        "INSERT INTO items VALUES (1,'apple',10,1.50,'2024-01-02'),(2,'pear',5,2.25,NULL),"
        "(3,'plum',0,NULL,'2024-03-04');"
        "INSERT INTO items (id, name) VALUES (4, 'fig');"
        "SELECT id, name, qty, price, added FROM items ORDER BY id", database="shop")
    check(rc == 0, "cli table: %s" % err)
    check(out == "id\tname\tqty\tprice\tadded\n1\tapple\t10\t1.50\t2024-01-02\n"
                 "2\tpear\t5\t2.25\tNULL\n3\tplum\t0\tNULL\t2024-03-04\n4\tfig\t0\tNULL\tNULL\n",
          "select all: %r" % out)
    rc, out, err = env.cli("SHOW TABLES; DESCRIBE items", database="shop")
    check(rc == 0 and "Tables_in_shop\nitems\n" in out, "show tables: %r %s" % (out, err))
    check("id\tint\tNO\tPRI\tNULL\t\n" in out and "name\tvarchar(32)\tNO\tMUL\tNULL\t\n" in out and
          "qty\tbigint\tNO\t\t0\t\n" in out, "describe: %r" % out)
    rc, out, err = env.cli("SELECT * FROM nope", database="shop")
    check(rc != 0 and "ERROR 1146 (42S02)" in err and "Table 'shop.nope' doesn't exist" in err,
          "1146: %s" % err)
    rc, out, err = env.cli("SELEC 1")
    check(rc != 0 and "ERROR 1064 (42000)" in err, "1064: %s" % err)


def pymysql_checks(env):
    conn = env.connect(database="shop", autocommit=True)
    cur = conn.cursor()
    # Key lookups, IN lists, scans with pushed and sqld-side conditions.
    cur.execute("SELECT name, qty FROM items WHERE id = %s", (2,))
    check(cur.fetchall() == (("pear", 5),), "by key")
    cur.execute("SELECT id FROM items WHERE id IN (4, 1, 9) ORDER BY id")
    check(cur.fetchall() == ((1,), (4,)), "by IN")
    cur.execute("SELECT id FROM items WHERE qty >= 5 AND name LIKE 'p%' ORDER BY id")
    check(cur.fetchall() == ((2,),), "pushed scan")
    cur.execute("SELECT id, qty * 2 AS dbl FROM items WHERE qty + 1 > 1 OR price IS NULL "
                "ORDER BY dbl DESC, id LIMIT 2")
    check(cur.fetchall() == ((1, 20), (2, 10)), "sqld-evaluated scan")
    cur.execute("SELECT COUNT(*) FROM items WHERE added IS NOT NULL")
    check(cur.fetchall() == ((2,),), "count")
    cur.execute("SELECT price FROM items WHERE id = 1")
    check(str(cur.fetchone()[0]) == "1.50", "decimal")
    # Updates and deletes.
    check(cur.execute("UPDATE items SET qty = qty + 1 WHERE id = %s", (1,)) == 1, "interpreted update")
    check(cur.execute("UPDATE items SET qty = qty + 1 WHERE id = 99") == 0, "update of no row")
    check(cur.execute("UPDATE items SET price = 9.99, qty = 7 WHERE name = 'fig'") == 1, "update by scan")
    cur.execute("SELECT id, qty, price FROM items WHERE id IN (1, 4) ORDER BY id")
    rows = cur.fetchall()
    check(rows[0][:2] == (1, 11) and rows[1][:2] == (4, 7) and str(rows[1][2]) == "9.99",
          "after updates: %r" % (rows,))
    check(cur.execute("DELETE FROM items WHERE id = 3") == 1, "delete by key")
    check(cur.execute("DELETE FROM items WHERE id = 3") == 0, "delete missing key")
    # Errors with MySQL's codes.
    message = expect_error(cur, "INSERT INTO items (id, name) VALUES (1, 'again')", 1062)
    check(message == "Duplicate entry '1' for key 'items.PRIMARY'", "1062 message: %r" % message)
    expect_error(cur, "INSERT INTO items (id, name) VALUES (5, NULL)", 1048)
    expect_error(cur, "INSERT INTO items (id) VALUES (5)", 1364)
    expect_error(cur, "SELECT nosuch FROM items", 1054)
    expect_error(cur, "SELECT * FROM items WHERE nosuch = 1", 1054)
    expect_error(cur, "CREATE TABLE items (a INT PRIMARY KEY)", 1050)
    expect_error(cur, "CREATE TABLE nokey (a INT)", 1235)
    expect_error(cur, "USE nodb", 1049)
    expect_error(cur, "INSERT INTO items (id, name) VALUES (6, 'waytoolongname_waytoolongname_xxxxx')", 1406)
    other = env.connect()
    expect_error(other.cursor(), "SELECT * FROM items", 1046)
    other.close()
    # UNIQUE and KEY become ordered indexes of the cluster table. (Uniqueness across
    # fragments needs the kernel's global unique indexes, not there yet: not tested.)
    cur.execute("CREATE TABLE users (id INT PRIMARY KEY, email VARCHAR(40), UNIQUE KEY by_email (email))")
    cur.execute("INSERT INTO users VALUES (1, 'a@x'), (2, NULL), (3, NULL)")
    cur.execute("SHOW COLUMNS FROM users LIKE 'email'")
    check(cur.fetchall() == (("email", "varchar(40)", "YES", "UNI", None, ""),), "unique column")
    # AUTO_INCREMENT.
    cur.execute("CREATE TABLE log (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, msg TEXT)")
    cur.execute("INSERT INTO log (msg) VALUES ('a'), ('b')")
    check(cur.lastrowid == 1, "first auto id: %r" % cur.lastrowid)
    cur.execute("INSERT INTO log (msg) VALUES ('c')")
    check(cur.lastrowid == 3, "next auto id: %r" % cur.lastrowid)
    cur.execute("INSERT INTO log (id, msg) VALUES (10, 'explicit')")
    cur.execute("INSERT INTO log (msg) VALUES ('after explicit')")
    check(cur.lastrowid == 11, "auto id after an explicit one: %r" % cur.lastrowid)
    # A transaction rolled back, one committed.
    cur.execute("BEGIN")
    cur.execute("INSERT INTO items (id, name) VALUES (10, 'ten')")
    cur.execute("UPDATE items SET qty = 100 WHERE id = 2")
    cur.execute("ROLLBACK")
    cur.execute("SELECT COUNT(*) FROM items WHERE id = 10 OR qty = 100")
    check(cur.fetchone()[0] == 0, "rolled back")
    conn.close()
    tx = env.connect(database="shop")  # PyMySQL's default: autocommit off
    tcur = tx.cursor()
    tcur.execute("INSERT INTO items (id, name, qty) VALUES (11, 'eleven', 11)")
    watcher = env.connect(database="shop", autocommit=True)
    wcur = watcher.cursor()
    wcur.execute("SELECT COUNT(*) FROM items WHERE id = 11")
    check(wcur.fetchone()[0] == 0, "uncommitted row invisible to others")
    tx.commit()
    wcur.execute("SELECT qty FROM items WHERE id = 11")
    check(wcur.fetchone() == (11,), "committed row visible")
    tx.close()
    watcher.close()
    # Row locks: UPDATE by scan re-reads its rows with an exclusive lock, so it waits for
    # a transaction holding the row FOR UPDATE and then applies to the committed value.
    holder = env.connect(database="shop")
    hcur = holder.cursor()
    hcur.execute("SELECT qty FROM items WHERE id = 11 FOR UPDATE")
    check(hcur.fetchone() == (11,), "locked read")
    hcur.execute("UPDATE items SET qty = 20 WHERE id = 11")
    outcome = {}

    def update_by_scan():
        try:
            c = env.connect(database="shop", autocommit=True)
            outcome["rows"] = c.cursor().execute("UPDATE items SET qty = qty * 2 WHERE name = 'eleven'")
            c.close()
        except pymysql.err.MySQLError as e:
            outcome["error"] = e.args
    worker = threading.Thread(target=update_by_scan)
    worker.start()
    time.sleep(0.3)
    check(worker.is_alive(), "the update did not wait for the row lock: %r" % outcome)
    holder.commit()
    worker.join(timeout=30)
    check(outcome.get("rows") == 1, "update after the lock was released: %r" % outcome)
    wconn = env.connect(database="shop", autocommit=True)
    wc = wconn.cursor()
    wc.execute("SELECT qty FROM items WHERE id = 11")
    check(wc.fetchone() == (40,), "update applied to the committed value")
    wc.execute("UPDATE items SET qty = 11 WHERE id = 11")
    wconn.close()
    holder.close()


def kill_checks(env):
    """KILL QUERY interrupts the statement a connection runs; the connection stays."""
    victim = env.connect(autocommit=True)
    vcur = victim.cursor()
    vcur.execute("SELECT CONNECTION_ID()")
    victim_id = vcur.fetchone()[0]
    outcome = {}

    def sleep():
        started = time.time()
        try:
            vcur.execute("SELECT SLEEP(60)")
            outcome["rows"] = vcur.fetchall()
        except pymysql.err.MySQLError as e:
            outcome["error"] = e.args
        outcome["seconds"] = time.time() - started
    worker = threading.Thread(target=sleep)
    worker.start()
    killer = env.connect(autocommit=True)
    kcur = killer.cursor()
    deadline = time.time() + 20
    while time.time() < deadline:  # KILL QUERY before the statement starts would be lost
        kcur.execute("SHOW PROCESSLIST")
        if any(row[0] == victim_id and row[7] == "SELECT SLEEP(60)" for row in kcur.fetchall()):
            break
        time.sleep(0.05)
    kcur.execute("KILL QUERY %d" % victim_id)
    worker.join(timeout=30)
    check(not worker.is_alive() and outcome.get("rows") == ((1,),) and outcome["seconds"] < 30,
          "SLEEP interrupted by KILL QUERY returns 1: %r" % outcome)
    vcur.execute("SELECT 1")
    check(vcur.fetchall() == ((1,),), "the connection survives KILL QUERY")
    vcur.execute("SELECT SLEEP(0.01)")
    check(vcur.fetchall() == ((0,),), "the next statement is not interrupted")
    expect_error(kcur, "KILL QUERY 999999", 1094)
    expect_error(kcur, "KILL QUERY CONNECTION_ID()", 1317)
    kcur.execute("SELECT 2")
    check(kcur.fetchall() == ((2,),), "a connection that killed its own query goes on")
    victim.close()
    killer.close()


def tls_checks(env):
    """duo_sqld offers TLS with the certificate it generated in its --datadir (MySQL's
    auto_generate_certs), so a caching_sha2_password account logs in: full
    authentication over TLS, refused without TLS (no RSA keys) until the server has
    cached the account, as MySQL does."""
    root = env.connect(autocommit=True)
    cur = root.cursor()
    cur.execute("CREATE USER 'sha2'@'%' IDENTIFIED WITH caching_sha2_password BY 'Secret-1'")
    cur.execute("GRANT ALL ON *.* TO 'sha2'@'%'")
    root.close()
    no_verify = {"check_hostname": False, "verify_mode": ssl.CERT_NONE}

    # PyMySQL >= 1.1 uses TLS whenever the server offers it, unless told not to.
    plain = ({"ssl_disabled": True}
             if "ssl_disabled" in inspect.signature(pymysql.connections.Connection).parameters
             else {})

    def login(use_tls):
        options = {"ssl": no_verify} if use_tls else plain
        conn = pymysql.connect(host="127.0.0.1", port=env.sql_port, user="sha2", password="Secret-1",
                               **options)
        on_tls = isinstance(conn._sock, ssl.SSLSocket)
        conn.close()
        return on_tls
    try:
        login(False)
        check(False, "caching_sha2_password full authentication without TLS was accepted")
    except pymysql.err.OperationalError as e:
        check(e.args[0] == 1045, "refusal without TLS: %r" % (e.args,))
    check(login(True), "the session did not run over TLS")
    # (PyMySQL then still fails without TLS: after the switch from the handshake's
    # mysql_native_password it scrambles over the nonce with its trailing NUL, so fast
    # authentication never matches; MySQL would fall back to its RSA keys. The
    # connector checks below log in from the cache.)
    for name in ("ca.pem", "server-cert.pem", "server-key.pem"):
        check(os.path.exists(os.path.join(env.dir, "sqld", name)), "%s not generated" % name)
    check(os.stat(os.path.join(env.dir, "sqld", "server-key.pem")).st_mode & 0o077 == 0,
          "server-key.pem readable by others")


def connector_python_checks(env):
    """MySQL Connector/Python (pure Python), when installed: not in Debian 12, so CI
    skips it; run locally with a virtualenv that has mysql-connector-python."""
    try:
        import mysql.connector  # noqa: PLC0415
    except ImportError:
        print("mysql-connector-python not installed: its checks skipped")
        return
    conn = mysql.connector.connect(host="127.0.0.1", port=env.sql_port, user="root", password="",
                                   use_pure=True)
    cur = conn.cursor()
    cur.execute("SELECT VERSION(), @@autocommit")
    version, autocommit = cur.fetchone()
    check("DuoDB" in version and autocommit == 0, "connect-time state: %r" % ((version, autocommit),))
    cur.execute("CREATE TABLE shop.conn_py (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(8,2), "
                "at DATETIME, d DATE, f DOUBLE, b VARBINARY(10), n BIGINT UNSIGNED)")
    rows = [(1, "a", decimal.Decimal("1.50"), datetime.datetime(2024, 1, 2, 3, 4, 5),
             datetime.date(2024, 1, 2), 1.25, b"\x00\x01", 2 ** 63),
            (2, "\u00e9", None, None, None, None, None, None)]
    cur.executemany("INSERT INTO shop.conn_py VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", rows)
    conn.commit()
    cur.execute("SELECT * FROM shop.conn_py ORDER BY id")
    check([tuple(r) for r in cur.fetchall()] == rows, "text protocol round trip")
    prepared = conn.cursor(prepared=True)
    prepared.execute("SELECT * FROM shop.conn_py WHERE id = ?", (1,))
    check([tuple(r) for r in prepared.fetchall()] == rows[:1], "binary protocol round trip")
    prepared.execute("INSERT INTO shop.conn_py (id, name, at) VALUES (?, ?, ?)",
                     (3, "c", datetime.datetime(2025, 5, 6, 7, 8, 9)))
    conn.rollback()
    cur.execute("SELECT COUNT(*) FROM shop.conn_py")
    check(cur.fetchone()[0] == 2, "rollback")
    try:
        cur.execute("INSERT INTO shop.conn_py (id) VALUES (1)")
        check(False, "duplicate accepted")
    except mysql.connector.Error as e:
        check((e.errno, e.sqlstate) == (1062, "23000"), "1062: %r" % ((e.errno, e.sqlstate),))
    cur.execute("DROP TABLE shop.conn_py")
    conn.close()
    # The connector's default: TLS when offered, caching_sha2_password.
    sha2 = mysql.connector.connect(host="127.0.0.1", port=env.sql_port, user="sha2",
                                   password="Secret-1", use_pure=True)
    cur = sha2.cursor()
    cur.execute("SELECT CURRENT_USER()")
    check(cur.fetchone()[0] == "sha2@%", "caching_sha2_password login")
    sha2.close()
    cached = mysql.connector.connect(host="127.0.0.1", port=env.sql_port, user="sha2",
                                     password="Secret-1", use_pure=True, ssl_disabled=True)
    cached.close()  # fast authentication from the cache, no TLS needed


def final_rows(env):
    conn = env.connect(database="shop", autocommit=True)
    cur = conn.cursor()
    cur.execute("SELECT id, name, qty FROM items ORDER BY id")
    rows = cur.fetchall()
    conn.close()
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mgmd", required=True)
    parser.add_argument("--datad", required=True)
    parser.add_argument("--sqld", required=True)
    parser.add_argument("--cli", default=shutil.which("mariadb") or shutil.which("mysql"))
    parser.add_argument("--prepared-client", default=None,
                        help="duo_sqld_prepared_client (libmariadb prepared statements)")
    args = parser.parse_args()
    check(args.cli is not None, "no mariadb/mysql CLI installed")
    started = time.time()
    with Env(args) as env:
        env.start_cluster()
        env.start_sqld()
        cli_checks(env)
        pymysql_checks(env)
        kill_checks(env)
        tls_checks(env)
        connector_python_checks(env)
        if args.prepared_client:
            proc = subprocess.run([args.prepared_client, str(env.sql_port), "shop"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
            out = proc.stdout.decode(errors="replace")
            check(proc.returncode == 0 and "prepared client passed" in out,
                  "prepared statements:\n%s" % out)
        else:
            print("prepared statements skipped: libmariadb was not found at build time")
        before = final_rows(env)
        check(before == ((1, "apple", 11), (2, "pear", 5), (4, "fig", 7), (11, "eleven", 11)),
              "rows: %r" % (before,))
        # sqld keeps no data: kill it hard and start another.
        env.sqld.kill()
        env.sqld.wait(timeout=10)
        env.start_sqld()
        check(final_rows(env) == before, "rows after sqld restart")
        # The AUTO_INCREMENT counter lives in the cluster, not in the sqld that died.
        conn = env.connect(database="shop", autocommit=True)
        cur = conn.cursor()
        cur.execute("INSERT INTO log (msg) VALUES ('after restart')")
        check(cur.lastrowid == 12, "auto id after sqld restart: %r" % cur.lastrowid)
        conn.close()
        rc, out, err = env.cli("DROP DATABASE shop; SHOW DATABASES")
        check(rc == 0 and "shop" not in out, "drop database: %r %s" % (out, err))
        env.sqld.terminate()
        check(env.sqld.wait(timeout=20) == 0, "duo_sqld exit code after SIGTERM")
    print("sqld cluster test passed in %.1fs" % (time.time() - started))


if __name__ == "__main__":
    try:
        main()
    except TestFailure as failure:
        print("FAILED: %s" % failure)
        sys.exit(1)
