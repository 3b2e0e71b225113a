#!/usr/bin/env python3
"""duo_sqld's Unix socket over a real cluster: `duo up` gives duo_sqld a socket in its
data directory and prints it; the `mysql` CLI (libmariadb) connects with `-S path`, as
`mysql -uroot` does with the default path, and PyMySQL with unix_socket=; @@socket names
the path; a second duo_sqld asked for the same path sees it in use, says so in its log
and serves TCP only; the socket file is removed when duo_sqld stops (`duo down`).

Usage: unix_socket_test.py --bin build/<dir>/bin [--cli mysql]   (CTest label `cluster`)
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../..", "scripts",
                                "testlib"))
from cluster_testlib import check, eventually, run_in_work_dir  # noqa: E402
from duo_cluster import LauncherCluster  # noqa: E402

import pymysql  # noqa: E402  (python3-pymysql, installed by scripts/bootstrap)


def cli(binary, socket_path, sql):
    """The CLI over the socket only (no host, no port): (rc, stdout, stderr)."""
    proc = subprocess.run([binary, "-uroot", "-S", socket_path, "--batch", "-e", sql],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def run(bin_dir, cli_binary, work_dir):
    cluster = LauncherCluster(bin_dir, work_dir, extra_ports=1)
    second = None
    try:
        cluster.start()
        path = cluster.sql_socket
        check(path in cluster.up_output,
              "`duo up` does not print the socket %s:\n%s" % (path, cluster.up_output))
        check(os.path.exists(path), "no socket file at %s" % path)

        rc, out, err = cli(cli_binary, path, "select 1")
        check(rc == 0 and out.split() == ["1", "1"], "CLI over the socket: rc %d %r %r"
              % (rc, out, err))
        rc, out, err = cli(cli_binary, path, "SELECT @@socket, USER(); "
                           "CREATE DATABASE s; CREATE TABLE s.t (id INT PRIMARY KEY, v INT); "
                           "INSERT INTO s.t VALUES (1, 10), (2, 20); SELECT SUM(v) FROM s.t")
        check(rc == 0, "CLI statements over the socket failed: %r" % err)
        lines = out.splitlines()
        check(lines[1].split("\t")[0] == path, "@@socket is %r, not %s" % (lines[1], path))
        check(lines[1].split("\t")[1] == "root@localhost",
              "a socket client's host is not localhost: %r" % lines[1])
        check(lines[-1] == "30", "SUM over the socket: %r" % lines)

        # PyMySQL over the socket sees what the CLI wrote; TCP sees the same.
        conn = pymysql.connect(unix_socket=path, user="root", password="", autocommit=True)
        with conn.cursor() as cursor:
            cursor.execute("SELECT v FROM s.t WHERE id = 2")
            check(cursor.fetchall() == ((20,),), "PyMySQL over the socket")
        conn.close()
        conn = pymysql.connect(host="127.0.0.1", port=cluster.sql_port, user="root", password="")
        with conn.cursor() as cursor:
            cursor.execute("SELECT @@socket, COUNT(*) FROM s.t")
            check(cursor.fetchall() == ((path, 2),), "@@socket over TCP")
        conn.close()

        # A second duo_sqld given the same path: in use, so it serves TCP only and says so.
        directory = os.path.join(work_dir, "sqld2")
        os.makedirs(directory)
        log_path = os.path.join(directory, "out.log")
        port = cluster.extra_ports[0]
        with open(log_path, "w") as log:
            second = subprocess.Popen([os.path.join(bin_dir, "duo_sqld"), "--foreground",
                                       "--ndb-connectstring=" + cluster.connect_string,
                                       "--port=%d" % port, "--datadir=" + directory,
                                       "--socket=" + path], stdout=log, stderr=subprocess.STDOUT)

        def accepts():
            check(second.poll() is None, "the second duo_sqld exited; see %s" % log_path)
            try:
                pymysql.connect(host="127.0.0.1", port=port, user="root", password="").close()
                return True
            except pymysql.MySQLError:
                return False
        eventually(accepts, timeout=60, message="the second duo_sqld to accept connections")
        with open(log_path) as f:
            log_text = f.read()
        check("cannot listen on Unix socket %s: another server is listening on it; serving TCP "
              "only" % path in log_text, "no clear log line about the socket:\n" + log_text)
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="")
        with conn.cursor() as cursor:
            cursor.execute("SELECT @@socket")
            check(cursor.fetchall() == (("",),), "the second sqld reports a socket it lacks")
        conn.close()
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)
        second = None
        # The first one's socket is still there and still serves.
        rc, out, _ = cli(cli_binary, path, "select 2")
        check(rc == 0 and out.split() == ["2", "2"], "the socket stopped serving")
        cli(cli_binary, path, "DROP DATABASE s")
    finally:
        if second is not None:
            second.kill()
            second.wait()
        cluster.stop()
    check(not os.path.exists(cluster.sql_socket), "duo_sqld left its socket file behind")

    # `duo up --socket PATH` (what scripts/quickstart passes for /run/mysqld/mysqld.sock)
    # puts the socket there, and the next `duo up` remembers it.
    chosen = os.path.join(work_dir, "chosen", "my.sock")
    try:
        cluster.started = True
        for extra in (["--socket", chosen], []):
            proc = subprocess.run([sys.executable, cluster.duo, "up", "--data-dir",
                                   cluster.data_dir] + extra, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=300)
            check(proc.returncode == 0 and chosen in proc.stdout,
                  "`duo up %s` does not serve or print %s:\n%s" % (" ".join(extra), chosen,
                                                                  proc.stdout))
            rc, out, err = cli(cli_binary, chosen, "SELECT @@socket")
            check(rc == 0 and out.split() == ["@@socket", chosen],
                  "CLI over the chosen socket: rc %d %r %r" % (rc, out, err))
            cluster.stop()
            cluster.started = True
    finally:
        cluster.stop()
    check(not os.path.exists(chosen), "duo_sqld left the chosen socket file behind")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--cli", default=shutil.which("mysql") or shutil.which("mariadb"))
    args = parser.parse_args()
    check(args.cli is not None, "no mysql/mariadb CLI installed")
    return run_in_work_dir("duo-unix-socket-", "unix_socket",
                           lambda work_dir: run(args.bin, args.cli, work_dir))


if __name__ == "__main__":
    sys.exit(main())
