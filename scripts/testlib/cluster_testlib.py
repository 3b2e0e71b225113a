"""Helpers shared by the cluster tests (CTest label `cluster`) that start real DuoDB
processes: failures, polling with a deadline, reading a pipe line with a deadline,
starting duo_mgmd and duo_datad in the foreground with their output in a log file,
cleanup that kills every started process and removes the test directory, and the main
loops of the tests: scenarios each in a fresh environment, or one run in a work directory.

Import from a test script with:
    sys.path.insert(0, <repo>/scripts/testlib); from cluster_testlib import ...
"""

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time


class TestFailure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise TestFailure(message)


def eventually(predicate, timeout=20, message="condition", interval=0.1):
    """Polls predicate() until it returns something truthy (returned) or time runs out."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TestFailure("timed out after %ss waiting for %s" % (timeout, message))


def read_line(stream, timeout):
    """Reads one line from a pipe with a deadline (b"" at EOF)."""
    deadline = time.time() + timeout
    data = b""
    fd = stream.fileno()
    while not data.endswith(b"\n"):
        left = deadline - time.time()
        if left <= 0:
            raise TestFailure("timed out reading a line; got %r" % data)
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 1)
        if not chunk:
            break
        data += chunk
    return data


def start_mgmd(mgmd, config_path, configdir, log_path, host="127.0.0.1", port=0):
    """Starts duo_mgmd in the foreground on host:port (0: a port the OS picks) with its
    stderr appended to log_path; returns (process, the port it reported listening on)."""
    with open(log_path, "ab") as log_file:
        proc = subprocess.Popen(
            [mgmd, "--config-file=" + config_path, "--configdir=" + configdir,
             "--port=%d" % port, "--bind-address=" + host, "--foreground"],
            stdout=subprocess.PIPE, stderr=log_file)
    try:
        line = read_line(proc.stdout, 20)
        match = re.search(rb"listening on .*:(\d+)", line)
        check(match is not None, "mgmd did not report its port: %r" % line)
    except BaseException:
        reap([proc], [], None)  # the caller never sees it
        raise
    return proc, int(match.group(1))


def start_datad(datad, connect_string, node_id, log_path, initial=True, extra=(), prefix=()):
    """Starts data node `node_id` in the foreground (under the command prefix `prefix`,
    e.g. `ip netns exec NS`) with stdout and stderr appended to log_path."""
    with open(log_path, "ab") as log_file:
        return subprocess.Popen(
            list(prefix) + [datad, "-c", connect_string, "--ndb-nodeid=%d" % node_id,
                            "--foreground"] + (["--initial"] if initial else []) + list(extra),
            stdout=log_file, stderr=log_file)


def reap(processes, pids, directory):
    """Kills and waits for every started process and daemon pid, removes the directory
    (None: none). Safe to call whatever state the test left things in."""
    for proc in processes:
        if proc.poll() is None:
            proc.kill()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)


def scenarios_in(namespace, prefix="scenario_"):
    """The scenarios of a test script by name: its functions scenario_NAME (globals())."""
    return {name[len(prefix):]: fn for name, fn in namespace.items() if name.startswith(prefix)}


def run_scenarios(scenarios, choice, make_env, on_failure=None):
    """Runs the scenario named `choice`, or every one by name for "all", each in a fresh
    environment `with make_env(name) as env` (it cleans up), and prints PASS or FAIL with
    the time taken. A failure (TestFailure, a subprocess timeout, an OSError) does not stop
    the others; on_failure(env, error) may print logs or keep the directory before the
    cleanup. Returns the exit code: 1 if any scenario failed."""
    names = sorted(scenarios) if choice == "all" else [choice]
    failed = 0
    for name in names:
        start = time.time()
        with make_env(name) as env:
            try:
                scenarios[name](env)
                print("PASS %s (%.1fs)" % (name, time.time() - start), flush=True)
            except (TestFailure, subprocess.TimeoutExpired, OSError) as error:
                failed += 1
                print("FAIL %s: %s" % (name, error), flush=True)
                if on_failure:
                    on_failure(env, error)
    return 1 if failed else 0


def run_in_work_dir(prefix, what, run):
    """Calls run(work_dir) with a fresh temporary directory, removed afterwards; prints
    "FAIL: ..." on a TestFailure or "<what>: passed in S s". SIGTERM (a CTest timeout)
    exits through the cleanup. Returns the exit code."""
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit("terminated by signal %d" % s))
    work_dir = tempfile.mkdtemp(prefix=prefix)
    started = time.time()
    try:
        run(work_dir)
    except TestFailure as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    print("%s: passed in %.1f s" % (what, time.time() - started))
    return 0
