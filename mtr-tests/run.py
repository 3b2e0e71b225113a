#!/usr/bin/env python3
"""run.py: runs the mysqltest-format suites of mtr-tests/ against a DuoDB cluster it starts.

    run.py --bin DIR [--suite S]... [--record] [--mysqltest PATH] [FILTER]...

Starts one cluster with duo_sqld (`DIR/duo up` in a temporary data directory on free
ports), then runs every `<suite>/t/<test>.test` below this folder with Debian's
`mysqltest` (package mariadb-test), which compares the output with
`<suite>/r/<test>.result` itself. Each test runs in a fresh database `test` (created
before, dropped after), so tests start from nothing and results do not depend on the
order of tests. Prints one line per test, mysqltest's diff for a failing test, and
`N passed, N failed`; exits 1 if a test failed or the cluster did not start.
`--record` writes the result files instead of comparing (read them before committing:
every line must be what MySQL prints). `--suite` picks suites; FILTER arguments are
shell patterns matched against `test` or `suite/test`. The cluster is always stopped
(`duo down`) and its directory removed, also on failure or SIGTERM (a CTest timeout).

Tests may open extra connections with
`connect (con2,127.0.0.1,root,,test,$MASTER_MYPORT);`: the runner exports the SQL port
as MASTER_MYPORT, the variable name mysql-test-run uses.

Why Python: like tools/launcher/duo.py it only orchestrates processes; the comparison
is mysqltest's own. Single-threaded; one cluster per run, tests run one after another.

Exit codes: 0 all passed, 1 failures or no cluster, 64 usage error.
"""

import argparse
import fnmatch
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts",
                                "testlib"))
from duo_cluster import LauncherCluster, LauncherError  # noqa: E402

SUITES_DIR = os.path.dirname(os.path.abspath(__file__))
TEST_DATABASE = "test"
TEST_TIMEOUT_S = 120  # one .test; a hung statement must not hang the whole run


class RunError(Exception):
    """The run cannot go on (no mysqltest); the message says why."""


def find_tests(suites, filters):
    """[(suite, test name, .test path, .result path)] sorted by suite and test."""
    found = []
    for suite in sorted(os.listdir(SUITES_DIR)):
        t_dir = os.path.join(SUITES_DIR, suite, "t")
        if not os.path.isdir(t_dir) or (suites and suite not in suites):
            continue
        for file in sorted(os.listdir(t_dir)):
            if not file.endswith(".test"):
                continue
            name = file[:-len(".test")]
            if filters and not any(fnmatch.fnmatch(name, f) or
                                   fnmatch.fnmatch("%s/%s" % (suite, name), f)
                                   for f in filters):
                continue
            found.append((suite, name, os.path.join(t_dir, file),
                          os.path.join(SUITES_DIR, suite, "r", name + ".result")))
    return found


class Runner:
    """Runs .test files with mysqltest against one SQL port."""

    def __init__(self, mysqltest, port, work_dir, record):
        self.mysqltest = mysqltest
        self.port = port
        self.log_dir = os.path.join(work_dir, "mysqltest")
        os.makedirs(self.log_dir, exist_ok=True)
        self.record = record
        # MYSQLTEST_VARDIR: where tests write their scratch files (--write_file, LOAD DATA).
        self.env = dict(os.environ, MASTER_MYPORT=str(port), MYSQLTEST_VARDIR=self.log_dir)

    def base_args(self):
        # --logdir and --tmpdir keep mysqltest's logs and temporary files out of the tree.
        return [self.mysqltest, "--host=127.0.0.1", "--port=%d" % self.port, "--user=root",
                "--logdir=" + self.log_dir, "--tmpdir=" + self.log_dir, "--silent"]

    def sql(self, statements):
        """Runs setup SQL through mysqltest itself (reading the script from stdin), so the
        runner needs no other client; returns (ok, output)."""
        proc = subprocess.run(self.base_args(), input=statements, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=self.env,
                              timeout=TEST_TIMEOUT_S)
        return proc.returncode == 0, proc.stdout

    def run_test(self, test_path, result_path):
        """Returns (passed, output to show on failure)."""
        ok, out = self.sql("DROP DATABASE IF EXISTS %s;\nCREATE DATABASE %s;\n"
                           % (TEST_DATABASE, TEST_DATABASE))
        if not ok:
            return False, "could not create database %s:\n%s" % (TEST_DATABASE, out)
        args = self.base_args() + ["--database=" + TEST_DATABASE,
                                   "--test-file=" + test_path,
                                   "--result-file=" + result_path]
        if self.record:
            os.makedirs(os.path.dirname(result_path), exist_ok=True)
            args.append("--record")
        try:
            proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, errors="replace", env=self.env,
                                  timeout=TEST_TIMEOUT_S)
            passed, out = proc.returncode == 0, proc.stdout
        except subprocess.TimeoutExpired as e:
            passed = False
            out = "timed out after %d s\n%s" % (TEST_TIMEOUT_S, e.stdout or "")
        # mysqltest writes <test>.reject beside the result file whatever --logdir says;
        # its diff is already in `out`, and a shared source tree must stay clean.
        reject = os.path.splitext(result_path)[0] + ".reject"
        if os.path.exists(reject):
            os.remove(reject)
        dropped, drop_out = self.sql("DROP DATABASE IF EXISTS %s;\n" % TEST_DATABASE)
        if not dropped:
            # A leftover database would make the next test's setup fail anyway; say why.
            passed = False
            out += "\ncould not drop database %s:\n%s" % (TEST_DATABASE, drop_out)
        return passed, out


def parse_args(argv):
    p = argparse.ArgumentParser(description="Run the mtr-tests suites against a fresh cluster.")
    p.add_argument("--bin", required=True,
                   help="directory with duo, duo_mgmd, duo_datad, duo_mgm and duo_sqld "
                        "(build/<dir>/bin)")
    p.add_argument("--suite", action="append", default=[],
                   help="run only this suite (repeatable)")
    p.add_argument("--record", action="store_true",
                   help="write the result files instead of comparing with them")
    p.add_argument("--mysqltest", default=shutil.which("mysqltest") or
                   shutil.which("mariadb-test"), help="the mysqltest binary")
    p.add_argument("filters", nargs="*", metavar="FILTER",
                   help="shell pattern on `test` or `suite/test`")
    return p.parse_args(argv)


def on_sigterm(signum, frame):
    # CTest kills a test that runs past its TIMEOUT with SIGTERM first; turning that into
    # an exception lets the finally block stop the cluster instead of leaking daemons.
    raise SystemExit("mtr: terminated by signal %d" % signum)


def main(argv):
    try:
        options = parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 64
    if not options.mysqltest or not os.path.exists(options.mysqltest):
        print("mtr: no mysqltest binary (apt-get install mariadb-test)", file=sys.stderr)
        return 1
    tests = find_tests(options.suite, options.filters)
    if not tests:
        print("mtr: no test matches", file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, on_sigterm)
    started_at = time.time()
    work_dir = tempfile.mkdtemp(prefix="duo-mtr-")
    cluster = None
    passed = failed = 0
    try:
        cluster = LauncherCluster(os.path.abspath(options.bin), work_dir)
        print("mtr: starting a cluster (mgmd port %d, SQL port %d)"
              % (cluster.base_port, cluster.sql_port), flush=True)
        cluster.start()
        runner = Runner(options.mysqltest, cluster.sql_port, work_dir, options.record)
        for suite, name, test_path, result_path in tests:
            test_started = time.time()
            ok, out = runner.run_test(test_path, result_path)
            verdict = ("recorded" if options.record else "pass") if ok else "FAIL"
            print("%-40s %-8s %6.1fs" % ("%s/%s" % (suite, name), verdict,
                                          time.time() - test_started), flush=True)
            if ok:
                passed += 1
            else:
                failed += 1
                print(out.rstrip() + "\n", flush=True)
    except (RunError, LauncherError, subprocess.TimeoutExpired) as e:
        print("mtr: %s" % e, file=sys.stderr)
        return 1
    finally:
        try:
            if cluster is not None:
                cluster.stop()
        finally:
            shutil.rmtree(work_dir, ignore_errors=True)
    print("%d passed, %d failed (%.0f s)" % (passed, failed, time.time() - started_at))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
