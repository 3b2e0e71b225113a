"""Helpers shared by the cluster tests (CTest label `cluster`) that start real DuoDB
processes: failures, polling with a deadline, reading a pipe line with a deadline, and
cleanup that kills every started process and removes the test directory.

Import from a test script with:
    sys.path.insert(0, <repo>/scripts/testlib); from cluster_testlib import ...
"""

import os
import select
import shutil
import signal
import subprocess
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


def reap(processes, pids, directory):
    """Kills and waits for every started process and daemon pid, removes the directory.
    Safe to call whatever state the test left things in."""
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
    shutil.rmtree(directory, ignore_errors=True)
