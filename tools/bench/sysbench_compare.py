#!/usr/bin/env python3
"""sysbench through duo_sqld beside MariaDB and a two-node Galera cluster, with what each
transaction costs every process: the figures of docs/benchmarks.md (issues 4 and 14).

Two modes.

Compare (the default): for each target of --targets, one after the other on this machine,
start it in a temporary directory on free ports, load the sysbench tables, and run every
workload of --workloads at every thread count of --threads (a short unmeasured warm-up,
then the measured `sysbench run`), then stop it. Targets:
  duo      a two-replica DuoDB cluster with duo_sqld: `duo up --initial` from --bin
           (1 duo_mgmd, 2 duo_datad with NoOfReplicas=2, 1 duo_sqld);
  mariadb  a private mariadbd configured as the fair single-box comparison
           (../shared/peers/mariadb.sh): InnoDB, binary log off,
           innodb_flush_log_at_trx_commit=2 (commits in memory, like a DuoDB commit
           acknowledged in memory on two replicas), a 2 GB buffer pool holding the data;
  galera   a two-node MariaDB Galera cluster (../shared/peers/galera.sh): the same InnoDB
           settings, 1 GB buffer pool per node, node 2 joined by an rsync state transfer;
           sysbench runs against node 1 (writes are certified on both).

A/B (--duo-bin-b DIR): DuoDB only. Loads the tables once with build A (--bin), then for
--rounds rounds starts A, measures, stops it, starts B on the same data directory
(`duo up` without --initial: the data nodes recover the data), measures, stops it, and
prints for every metric the median and min-max of each build over the rounds and the
ratio of the medians B/A. This is how an optimisation is judged: interleaved, same data,
same measured phase.

Measured per workload x threads x target (x build and round), over the `sysbench run`
phase only (sampled right before it starts and right after it exits):
  - throughput (QPS for oltp_point_select, TPS otherwise), p95 latency, and the
    transactions sysbench retried (deadlocks, lock wait timeouts: "ignored errors");
  - per server process (DuoDB: duo_sqld, each duo_datad, duo_mgmd; MariaDB: mariadbd;
    Galera: both mariadbd) CPU microseconds per transaction, from /proc/<pid>/stat
    utime+stime (process-wide, exited threads included), and voluntary and involuntary
    context switches per transaction, summed over /proc/<pid>/task/*/status. duo_sqld's
    session threads end with their connections, so threads are polled every
    SWITCH_POLL_INTERVAL_S and a thread's last figures count after it has gone;
  - the server total of both, and sysbench's own (the client; from its rusage, so
    process-wide; not part of the server total);
  - for duo_sqld, round trips per statement: the waits of session threads for the
    cluster (SHOW GLOBAL STATUS Ndb_api_wait_exec_complete_count +
    Ndb_api_wait_scan_result_count + Ndb_api_wait_meta_request_count, as NDB names them)
    divided by the statements sysbench ran, and the bytes sent to and received from the
    data nodes per transaction (Ndb_api_bytes_*_count) where the build reports them;
  - the machine's other load: CPU time of the whole machine (/proc/stat) not spent by the
    processes above, in cores; noise from other users of the machine shows up there.

Output: progress lines on stderr, the Markdown tables on stdout, every raw figure in
--json FILE. Everything the script starts is stopped on exit, also on failure, SIGINT,
SIGTERM and SIGHUP; --keep-dir keeps the temporary directory (logs, data) afterwards.
An error sysbench cannot retry makes the run fail.

Usage: sysbench_compare.py [--bin build/release/bin] [--targets duo,mariadb,galera]
         [--workloads oltp_point_select,oltp_read_write] [--threads 4,16]
         [--tables 2] [--table-size 50000] [--seconds 20] [--warmup 2] [--json FILE]
         [--duo-bin-b DIR [--rounds 3]] [--data-memory MB] [--keep-dir]
       sysbench_compare.py --self-test   (CTest sysbench_compare_self_test, label unit)
"""

import argparse
import datetime
import json
import os
import pwd
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from bench_bin import default_bin_dir
import traceback


CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
# How often threads' context switches are read during a run. A thread that ends between
# two polls loses at most one interval of its counts; every poll costs this script about
# a millisecond of CPU (counted as the machine's other load, not as a server's).
SWITCH_POLL_INTERVAL_S = 0.5
PROGRESS_INTERVAL_S = 10  # how often a long client run reports its current throughput
SQL_TIMEOUT_S = 60
DUO_UP_TIMEOUT_S = 400  # the launcher waits up to 120 s for the data nodes, then sqld
DUO_UP_ATTEMPTS = 3
MARIADB_START_TIMEOUT_S = 120
GALERA_LIBRARY = "/usr/lib/galera/libgalera_smm.so"
# Galera's failure detection, relaxed as its documentation suggests for slow (WAN) links:
# on a shared 2-core machine a node may not run for seconds, and with the defaults (no
# message for 3 s, suspected after 5 s) node 1 then drops node 2 and, alone of two, stops
# serving (1047 "WSREP has not yet prepared node"). Steady-state work is unchanged.
GALERA_TIMEOUTS = ("gmcast.peer_timeout=PT15S;evs.suspect_timeout=PT30S;"
                   "evs.inactive_timeout=PT1M;evs.install_timeout=PT1M")
# sqld's counters of the waits for the cluster (round trips), as NDB names them.
ROUND_TRIP_COUNTERS = ("Ndb_api_wait_exec_complete_count", "Ndb_api_wait_scan_result_count",
                       "Ndb_api_wait_meta_request_count")
BYTE_COUNTERS = ("Ndb_api_bytes_sent_count", "Ndb_api_bytes_received_count")
TARGET_NAMES = {"duo": "DuoDB", "mariadb": "MariaDB", "galera": "Galera"}

STARTED_AT = time.monotonic()


class BenchError(Exception):
    """A step failed; the message says which and shows the relevant output."""


class Interrupted(BaseException):
    """SIGINT, SIGTERM or SIGHUP: unwinds through every finally, which stops the servers."""


def progress(message):
    print("[%6.0fs] %s" % (time.monotonic() - STARTED_AT, message), file=sys.stderr, flush=True)


def run(cmd, timeout_s, what=None, env=None):
    """Runs `cmd` to completion; its output, or BenchError with the output's tail."""
    what = what or os.path.basename(cmd[0])
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired as error:
        out = error.stdout.decode(errors="replace") if isinstance(error.stdout, bytes) else (
            error.stdout or "")
        raise BenchError("%s timed out after %d s: %s\n%s" % (what, timeout_s, " ".join(cmd),
                                                              out[-4000:]))
    except OSError as error:
        raise BenchError("%s could not run: %s (%s)" % (what, " ".join(cmd), error))
    if proc.returncode != 0:
        raise BenchError("%s failed (exit %d): %s\n%s" % (what, proc.returncode, " ".join(cmd),
                                                          proc.stdout[-4000:]))
    return proc.stdout


def sql(port, statement, timeout_s=SQL_TIMEOUT_S):
    """Runs `statement` as root over TCP; its rows as lists of tab-separated fields."""
    out = run(["mariadb", "--connect-timeout=5", "-h127.0.0.1", "-P%d" % port, "-uroot", "-N",
               "-B", "-e", statement], timeout_s, "SQL on port %d" % port)
    return [line.split("\t") for line in out.splitlines() if line]


def sql_answers(port):
    try:
        return subprocess.run(["mariadb", "--connect-timeout=3", "-h127.0.0.1", "-P%d" % port,
                               "-uroot", "-e", "SELECT 1"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=30).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def log_tail(path, lines=25):
    try:
        with open(path, errors="replace") as f:
            tail = f.read().splitlines()[-lines:]
    except OSError:
        return "(no %s)" % path
    return "--- %s (last %d lines) ---\n%s" % (path, len(tail), "\n".join(tail))


# ---- Ports ----

def port_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("", port))
        except OSError:
            return False
    return True


def free_ports(offsets, taken):
    """A base port b such that b + every offset is free and not in `taken` (which grows)."""
    for _ in range(500):
        base = random.randint(20000, 45000)
        ports = [base + offset for offset in offsets]
        if all(p not in taken and port_free(p) for p in ports):
            taken.update(ports)
            return base
    raise BenchError("no free ports found for offsets %s" % (offsets,))


# ---- Processes ----

def process_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def kill_group(pid, sig=signal.SIGKILL):
    """Signals `pid`'s process group (every server here leads its own session)."""
    try:
        os.killpg(os.getpgid(pid), sig)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def wait_exit(pids, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(process_alive(p) for p in pids):
            return True
        time.sleep(0.2)
    return not any(process_alive(p) for p in pids)


def cpu_ticks(pid):
    """utime + stime of the whole process (its exited threads included), in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5)


def task_switches(pid):
    """{tid: (voluntary, involuntary)} context switches of each live thread of `pid`."""
    switches = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return switches
    for tid in tids:
        voluntary = involuntary = None
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        voluntary = int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches:"):
                        involuntary = int(line.split()[1])
        except OSError:
            continue  # the thread ended meanwhile
        if voluntary is not None and involuntary is not None:
            switches[int(tid)] = (voluntary, involuntary)
    return switches


class SwitchCounter:
    """Context switches of one process's threads since start(), counting threads that
    end before stop() with the figures of the last poll() that saw them."""

    def __init__(self, pid, read=task_switches):
        self.pid = pid
        self.read = read
        self.base = read(pid)
        self.last = dict(self.base)
        self.gone = [0, 0]  # switches of threads whose tid was reused meanwhile

    def poll(self):
        for tid, now in self.read(self.pid).items():
            seen = self.last.get(tid)
            if seen is not None and (now[0] < seen[0] or now[1] < seen[1]):
                # A new thread with the tid of one that ended: bank the old one's count.
                base = self.base.pop(tid, (0, 0))
                self.gone[0] += seen[0] - base[0]
                self.gone[1] += seen[1] - base[1]
            self.last[tid] = now

    def delta(self):
        voluntary, involuntary = self.gone
        for tid, now in self.last.items():
            base = self.base.get(tid, (0, 0))
            voluntary += now[0] - base[0]
            involuntary += now[1] - base[1]
        return voluntary, involuntary


def machine_ticks():
    """(busy, total) clock ticks of the whole machine since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    total = sum(values[:8])  # guest time is already in user
    return total - idle, total


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(v) for v in f.read().split()[:3]]


# ---- sysbench ----

def sysbench_cmd(args, port, workload, threads, seconds, command):
    """`port`: one port, or a list (sysbench spreads its connections over the servers).
    `workload` is a built-in oltp_* name or the path of a Lua script (the suite's
    batched key lookup). With args.histogram, sysbench prints its latency histogram (the
    suite's p50 and p99); with args.report_interval, a progress line every that many s."""
    ports = list(port) if isinstance(port, (list, tuple)) else [port]
    return ["sysbench", workload, "--db-driver=mysql",
            "--mysql-host=" + ",".join(["127.0.0.1"] * len(ports)),
            "--mysql-port=" + ",".join(str(p) for p in ports), "--mysql-user=root",
            "--mysql-db=sbtest",
            "--tables=%d" % args.tables, "--table-size=%d" % args.table_size,
            "--threads=%d" % threads, "--time=%d" % seconds,
            "--report-interval=%d" % getattr(args, "report_interval", 0),
            "--rand-seed=1", "--percentile=95"] + (
                ["--histogram=on"] if getattr(args, "histogram", False) else []) + (
                getattr(args, "workload_options", {}).get(workload, [])) + [command]


def histogram_percentile(histogram, fraction):
    """The smallest latency (ms) at or below which `fraction` of the events of sysbench's
    histogram [(ms, count)] fall; None for an empty histogram."""
    total = sum(count for _, count in histogram)
    if total == 0:
        return None
    seen = 0
    for value, count in sorted(histogram):
        seen += count
        if seen >= fraction * total:
            return value
    return histogram[-1][0]


def parse_histogram(out):
    """[(ms, count)] of the `--histogram=on` section of a sysbench report ([] if none)."""
    start = out.find("Latency histogram")
    if start < 0:
        return []
    rows = []
    for line in out[start:].splitlines()[2:]:
        match = re.match(r"^\s*([\d.]+)\s*\|[^|]*?\s(\d+)\s*$", line)
        if not match:
            break
        rows.append((float(match.group(1)), int(match.group(2))))
    return rows


def parse_sysbench(out):
    """The figures of a `sysbench ... run` report."""
    def number(pattern):
        match = re.search(pattern, out, re.M)
        if not match:
            raise BenchError("unexpected sysbench output (no %r):\n%s" % (pattern, out[-3000:]))
        return float(match.group(1))
    return {
        "read": number(r"^\s+read:\s+(\d+)"),
        "write": number(r"^\s+write:\s+(\d+)"),
        "other": number(r"^\s+other:\s+(\d+)"),
        "queries": number(r"^\s+total:\s+(\d+)"),
        "transactions": number(r"^\s+transactions:\s+(\d+)"),
        "tps": number(r"^\s+transactions:\s+\d+\s+\(([\d.]+) per sec"),
        "qps": number(r"^\s+queries:\s+\d+\s+\(([\d.]+) per sec"),
        "errors": number(r"^\s+ignored errors:\s+(\d+)"),
        "reconnects": number(r"^\s+reconnects:\s+(\d+)"),
        "total_time_s": number(r"^\s+total time:\s+([\d.]+)s"),
        "latency_avg_ms": number(r"^\s+avg:\s+([\d.]+)"),
        "latency_max_ms": number(r"^\s+max:\s+([\d.]+)"),
        "p95_ms": number(r"^\s+95th percentile:\s+([\d.]+)"),
        "p50_ms": histogram_percentile(parse_histogram(out), 0.50),
        "p99_ms": histogram_percentile(parse_histogram(out), 0.99),
    }


class Bench:
    """What the run started (stopped again in reverse order by stop_all) and its figures."""

    def __init__(self, args, work_dir):
        self.args = args
        self.work_dir = work_dir
        self.stoppers = []  # [(what, callable)], started order
        self.taken_ports = set()
        self.client = None  # the running benchmark client's Popen (sysbench, YCSB...)
        self.commands = []  # every benchmark client command run, in order
        self.runs = []  # every measured run, as stored in --json
        self.loads = []  # every table load

    # -- Stopping --

    def on_stop(self, what, stop):
        self.stoppers.append((what, stop))
        return (what, stop)

    def stop(self, token):
        """Runs one stopper; it stays registered until it returned (an interrupted stop is
        done again by stop_all)."""
        if token in self.stoppers:
            progress("stopping %s" % token[0])
            token[1]()
            self.stoppers.remove(token)

    def stop_since(self, mark):
        """Runs the stoppers registered after the first `mark` ones, newest first."""
        while len(self.stoppers) > mark:
            self.stop(self.stoppers[-1])

    def stop_all(self):
        if self.client is not None and self.client.poll() is None:
            kill_group(self.client.pid)
        while self.stoppers:
            what, stop = self.stoppers.pop()
            progress("stopping %s" % what)
            try:
                stop()
            except Exception as error:  # keep stopping the others; say what failed
                progress("stopping %s failed: %s" % (what, error))

    # -- One measured run --

    def run_client(self, cmd, out_path, timeout_s, what, on_poll=None, on_progress=None):
        """Runs a benchmark client `cmd` in its own process group, output to `out_path`;
        (output, rusage). Calls on_poll every SWITCH_POLL_INTERVAL_S and
        on_progress(out_path) every PROGRESS_INTERVAL_S while it runs."""
        with open(out_path, "w") as out:
            self.client = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                           start_new_session=True)
        proc = self.client
        started = time.monotonic()
        deadline = started + timeout_s
        next_poll = started + SWITCH_POLL_INTERVAL_S
        next_progress = started + PROGRESS_INTERVAL_S
        while True:
            # wait4, not Popen.wait: its rusage is the client's CPU and context switches.
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                break
            now = time.monotonic()
            if now > deadline:
                kill_group(proc.pid)
                proc.wait()
                self.client = None
                raise BenchError("%s did not end within %d s:\n%s"
                                 % (what, timeout_s, log_tail(out_path, 40)))
            if on_poll and now >= next_poll:
                on_poll()
                next_poll += SWITCH_POLL_INTERVAL_S
            if on_progress and now >= next_progress:
                on_progress(out_path)
                next_progress += PROGRESS_INTERVAL_S
            time.sleep(0.05)
        self.client = None
        with open(out_path, errors="replace") as f:
            out = f.read()
        if proc.returncode != 0:
            raise BenchError("%s failed (exit %d): %s\n%s"
                             % (what, proc.returncode, " ".join(cmd), out[-4000:]))
        return out, rusage

    def sysbench_run(self, port, workload, threads, seconds, on_poll=None, on_progress=None):
        """Runs `sysbench run` against `port` (or a list of ports); (output, rusage)."""
        cmd = sysbench_cmd(self.args, port, workload, threads, seconds, "run")
        self.commands.append(" ".join(cmd))
        return self.run_client(cmd, os.path.join(self.work_dir, "sysbench.out"), seconds + 120,
                               "sysbench %s, %d threads" % (workload, threads), on_poll,
                               on_progress)

    def sample(self, server, label, run_client):
        """The server's processes and the machine sampled around `run_client(on_poll)`,
        which runs the measured client and returns (output, rusage): the figures of one
        run, without the client's own (throughput, transactions), which the caller adds."""
        processes = server.processes()
        status_before = server.status()
        load_before = loadavg()
        busy_before, total_before = machine_ticks()
        ticks_before = {name: cpu_ticks(pid) for name, pid in processes.items()}
        switches = {name: SwitchCounter(pid) for name, pid in processes.items()}
        wall_started = time.monotonic()

        def poll():
            for counter in switches.values():
                counter.poll()
        out, rusage = run_client(poll)
        poll()
        ticks_after = {name: cpu_ticks(pid) for name, pid in processes.items()}
        wall_s = time.monotonic() - wall_started
        busy_after, total_after = machine_ticks()
        load_after = loadavg()
        status_after = server.status()
        dead = [name for name, pid in processes.items() if not process_alive(pid)]
        if dead:
            raise BenchError("%s: %s died during the run" % (label, ", ".join(dead)))
        figures = {
            "wall_s": wall_s, "output": out, "processes": {},
            "client": {"cpu_us": (rusage.ru_utime + rusage.ru_stime) * 1e6,
                       "voluntary": rusage.ru_nvcsw, "involuntary": rusage.ru_nivcsw},
            "status": {name: status_after[name] - status_before[name]
                       for name in status_after if name in status_before},
            "machine": {"busy_ticks": busy_after - busy_before,
                        "total_ticks": total_after - total_before,
                        "loadavg_before": load_before, "loadavg_after": load_after},
        }
        for name, pid in processes.items():
            ticks = ticks_after[name] - ticks_before[name]
            voluntary, involuntary = switches[name].delta()
            figures["processes"][name] = {"pid": pid, "cpu_ticks": ticks,
                                          "cpu_us": ticks * 1e6 / CLOCK_TICKS_PER_S,
                                          "voluntary": voluntary, "involuntary": involuntary}
        return figures

    def measure(self, server, workload, threads, label, on_progress=None, name=None):
        """A warm-up, then the measured run of `workload` (named `name` in progress lines:
        a Lua script's path is long) against `server`."""
        args = self.args
        name = name or workload
        # A server with several SQL front-ends (DuoDB with two duo_sqld) names them all.
        ports = getattr(server, "client_ports", None) or server.port
        if args.warmup > 0:
            progress("%s: %s, %d threads: warm-up %d s" % (label, name, threads, args.warmup))
            self.sysbench_run(ports, workload, threads, args.warmup)
        server.check(label)
        progress("%s: %s, %d threads: measuring %d s" % (label, name, threads, args.seconds))
        figures = self.sample(server, label, lambda poll: self.sysbench_run(
            ports, workload, threads, args.seconds, poll, on_progress))
        server.check(label)
        out = figures.pop("output")
        bench = parse_sysbench(out)
        figures.update({"workload": workload, "threads": threads, "seconds": args.seconds,
                        "sysbench": bench, "sysbench_output": out})
        derive(figures)
        progress("%s: %s, %d threads: %.0f %s, p95 %.2f ms, server %.0f us CPU/tx%s"
                 % (label, name, threads, figures["throughput"],
                    throughput_unit(workload), bench["p95_ms"],
                    figures["per_tx"]["server_cpu_us"],
                    "" if figures["round_trips_per_statement"] is None else
                    ", %.2f round trips/statement" % figures["round_trips_per_statement"]))
        return figures

    def load(self, server, label):
        """Creates sbtest and loads the tables with `sysbench oltp_common prepare`."""
        args = self.args
        sql(server.port, "DROP DATABASE IF EXISTS sbtest")
        sql(server.port, "CREATE DATABASE sbtest")
        progress("%s: loading %d x %d rows" % (label, args.tables, args.table_size))
        started = time.monotonic()
        run(sysbench_cmd(args, server.port, "oltp_read_write", max(args.threads), 0, "prepare"),
            3600, "sysbench prepare on %s" % label)
        load_s = time.monotonic() - started
        server.after_load()
        self.loads.append({"target": server.target, "label": label, "load_s": load_s})
        progress("%s: loaded in %.1f s" % (label, load_s))
        return load_s


def throughput_unit(workload):
    return "QPS" if workload == "oltp_point_select" else "TPS"


def derive(figures):
    """Adds the per-transaction figures of one run. A sysbench run counts its transactions
    and statements itself; another client's run brings figures["counts"] ({"transactions",
    "statements"}) and figures["throughput"]."""
    bench = figures.get("sysbench")
    counts = figures.get("counts") or {"transactions": bench["transactions"],
                                       "statements": bench["queries"]}
    tx = max(counts["transactions"], 1)
    per_tx = {"server_cpu_us": 0.0, "server_voluntary": 0.0, "server_involuntary": 0.0,
              "processes": {}}
    for name, p in figures["processes"].items():
        per_tx["processes"][name] = {"cpu_us": p["cpu_us"] / tx, "voluntary": p["voluntary"] / tx,
                                     "involuntary": p["involuntary"] / tx}
        per_tx["server_cpu_us"] += p["cpu_us"] / tx
        per_tx["server_voluntary"] += p["voluntary"] / tx
        per_tx["server_involuntary"] += p["involuntary"] / tx
    client = figures["client"]
    per_tx["client_cpu_us"] = client["cpu_us"] / tx
    per_tx["client_voluntary"] = client["voluntary"] / tx
    per_tx["client_involuntary"] = client["involuntary"] / tx
    status = figures["status"]
    trips = [status[name] for name in ROUND_TRIP_COUNTERS if name in status]
    figures["round_trip_counters"] = [name for name in ROUND_TRIP_COUNTERS if name in status]
    figures["round_trips_per_statement"] = (sum(trips) / max(counts["statements"], 1)
                                            if trips else None)
    per_tx["round_trips"] = sum(trips) / tx if trips else None
    for name in BYTE_COUNTERS:
        per_tx[name] = status[name] / tx if name in status else None
    machine = figures["machine"]
    ours_ticks = sum(p["cpu_ticks"] for p in figures["processes"].values()) + (
        client["cpu_us"] * CLOCK_TICKS_PER_S / 1e6)
    figures["other_load_cores"] = max(0.0, machine["busy_ticks"] - ours_ticks) / (
        CLOCK_TICKS_PER_S * figures["wall_s"])
    figures["per_tx"] = per_tx
    if bench is not None:
        figures["throughput"] = bench["qps"] if figures["workload"] == "oltp_point_select" \
            else bench["tps"]


# ---- Servers ----

class DuoServer:
    """A DuoDB cluster under `data_dir`, started with the launcher of one build."""
    target = "duo"
    BINARIES = ("duo_mgmd", "duo_datad", "duo_sqld")

    def __init__(self, bench, bin_dir, data_dir):
        self.bench = bench
        self.data_dir = data_dir
        self.set_build(bin_dir)
        self.base_port = None
        self.port = None
        self.token = None

    def set_build(self, bin_dir):
        self.bin_dir = os.path.realpath(bin_dir)
        for name in ("duo",) + self.BINARIES:
            if not os.access(os.path.join(self.bin_dir, name), os.X_OK):
                raise BenchError("%s not found in %s" % (name, self.bin_dir))

    def launcher(self, *args):
        return [sys.executable, os.path.join(self.bin_dir, "duo")] + list(args) + [
            "--data-dir", self.data_dir]

    def up(self, initial, label):
        """`duo up` (retried after a `duo down`); with `initial`, on fresh ports and data."""
        for attempt in range(1, DUO_UP_ATTEMPTS + 1):
            if initial:
                shutil.rmtree(self.data_dir, ignore_errors=True)
                self.base_port = free_ports((0, 1, 2), self.bench.taken_ports)
                self.port = free_ports((0,), self.bench.taken_ports)
                extra = ["--initial", "--base-port", str(self.base_port), "--sql-port",
                         str(self.port), "--data-memory", str(self.bench.args.data_memory)]
            else:
                extra = []
            progress("%s: duo up%s (%s), attempt %d" % (label, " --initial" if initial else "",
                                                       self.bin_dir, attempt))
            if self.token is None:
                self.token = self.bench.on_stop("DuoDB in %s" % self.data_dir, self.down)
            try:
                run(self.launcher("up", *extra), DUO_UP_TIMEOUT_S, "duo up")
                with open(os.path.join(self.data_dir, "sqld.port")) as f:
                    self.port = int(f.read())
                with open(os.path.join(self.data_dir, "mgmd.port")) as f:
                    self.base_port = int(f.read())
                procs = self.processes()
                progress("%s: up (mgmd port %d, SQL port %d, pids %s)"
                         % (label, self.base_port, self.port,
                            " ".join("%s=%d" % kv for kv in procs.items())))
                return
            except BenchError as error:
                progress("%s: duo up failed:\n%s" % (label, error))
                self.down()
                if attempt == DUO_UP_ATTEMPTS:
                    raise BenchError("%s: `duo up` failed %d times; the last error is above"
                                     % (label, attempt))
                time.sleep(3)

    def down(self):
        """`duo down`, then SIGKILL to whatever of this cluster still runs."""
        try:
            run(self.launcher("down"), 180, "duo down")
        except BenchError as error:
            progress("duo down failed (%s); killing what is left" % error)
        leftovers = self.find_processes()
        for pid in leftovers:
            kill_group(pid)
        if leftovers and not wait_exit(leftovers, 10):
            raise BenchError("DuoDB processes still running: %s" % leftovers)

    def processes(self):
        """{name: pid} of the running cluster, from the pid files, checked against
        /proc/<pid>/exe: every process must be one of this build's binaries."""
        procs = {}
        for sub, pattern, binary in (("sqld", r"^duo_sqld\.pid$", "duo_sqld"),
                                     ("datad", r"^ndb_(\d+)\.pid$", "duo_datad"),
                                     ("mgmd", r"^ndb_(\d+)\.pid$", "duo_mgmd")):
            directory = os.path.join(self.data_dir, sub)
            for entry in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
                match = re.match(pattern, entry)
                if not match:
                    continue
                try:
                    with open(os.path.join(directory, entry)) as f:
                        pid = int(f.read().strip())
                except (OSError, ValueError):
                    continue
                if not process_alive(pid):
                    continue
                exe = os.readlink("/proc/%d/exe" % pid).replace(" (deleted)", "")
                expected = os.path.realpath(os.path.join(self.bin_dir, binary))
                if exe != expected:  # an A/B run must measure the build it names
                    raise BenchError("pid %d of %s/%s runs %s, not %s" % (
                        pid, sub, entry, exe, expected))
                name = binary if binary != "duo_datad" else "duo_datad %s" % match.group(1)
                procs[name] = pid
        names = set(procs)
        if "duo_sqld" not in names or "duo_mgmd" not in names or not any(
                n.startswith("duo_datad") for n in names):
            raise BenchError("DuoDB processes missing in %s: found %s" % (self.data_dir, procs))
        return procs

    def find_processes(self):
        """Pids of every duo_* process of this cluster: named by its pid files, or running
        a DuoDB binary with this cluster's directory or mgmd port on its command line."""
        pids = set()
        for sub in ("sqld", "datad", "mgmd"):
            directory = os.path.join(self.data_dir, sub)
            for entry in os.listdir(directory) if os.path.isdir(directory) else []:
                if entry.endswith(".pid"):
                    try:
                        with open(os.path.join(directory, entry)) as f:
                            pids.add(int(f.read().strip()))
                    except (OSError, ValueError):
                        pass
        connect = "--ndb-connectstring=127.0.0.1:%d" % self.base_port if self.base_port else None
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                exe = os.path.basename(os.readlink("/proc/%s/exe" % entry))
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    argv = f.read().decode(errors="replace").split("\0")
            except OSError:
                continue
            if exe.split(" ")[0] in self.BINARIES and any(
                    arg == connect or (self.data_dir + "/") in arg or arg.endswith(self.data_dir)
                    for arg in argv):
                pids.add(int(entry))
        return [pid for pid in pids if process_alive(pid)]

    def status(self):
        """sqld's Ndb_api_* counters (only those this build has)."""
        rows = sql(self.port, "SHOW GLOBAL STATUS LIKE 'Ndb_api%'")
        return {row[0]: int(row[1]) for row in rows if len(row) == 2 and row[1].isdigit()}

    def after_load(self):
        pass

    def check(self, label):
        pass

    def check_tables(self, label):
        """After a restart: every table recovered whole (oltp_read_write deletes and
        re-inserts rows, so each still holds --table-size rows)."""
        for i in range(1, self.bench.args.tables + 1):
            count = int(sql(self.port, "SELECT COUNT(*) FROM sbtest.sbtest%d" % i)[0][0])
            if count != self.bench.args.table_size:
                progress("%s: warning: sbtest%d holds %d rows after the restart, not %d"
                         % (label, i, count, self.bench.args.table_size))


class MariadbNode:
    """One mariadbd started by this script, in its own session."""

    def __init__(self, name, directory, port, extra_args, owner_nobody=False):
        self.name = name
        self.dir = directory
        self.port = port
        self.data_dir = os.path.join(directory, "data")
        self.log = os.path.join(directory, "server.log")
        self.pid_file = os.path.join(directory, "mariadbd.pid")
        self.popen = None
        self.args = ["mariadbd", "--no-defaults", "--datadir=" + self.data_dir, "--user=root",
                     "--port=%d" % port, "--bind-address=127.0.0.1",
                     "--socket=" + os.path.join(directory, "sock"), "--pid-file=" + self.pid_file,
                     "--skip-log-bin", "--innodb-flush-log-at-trx-commit=2",
                     "--max-connections=500", "--skip-name-resolve"] + extra_args
        self.owner_nobody = owner_nobody

    def install(self):
        os.makedirs(self.dir, exist_ok=True)
        run(["mariadb-install-db", "--no-defaults", "--datadir=" + self.data_dir, "--user=root",
             "--auth-root-authentication-method=normal"], 300, "mariadb-install-db")

    def start(self):
        os.makedirs(self.data_dir, exist_ok=True)
        if self.owner_nobody and os.getuid() == 0:
            # A joiner's data comes by rsync SST; the rsync daemon MariaDB starts for it runs
            # as nobody when the server runs as root (../shared/peers/galera.sh).
            nobody = pwd.getpwnam("nobody")
            os.chown(self.data_dir, nobody.pw_uid, nobody.pw_gid)
        with open(self.log, "a") as log:
            self.popen = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True)
        deadline = time.monotonic() + MARIADB_START_TIMEOUT_S
        while not sql_answers(self.port):
            if self.popen.poll() is not None or time.monotonic() > deadline:
                raise BenchError("%s did not start on port %d (%s)\n%s" % (
                    self.name, self.port, "exited %s" % self.popen.returncode
                    if self.popen.returncode is not None else "timed out", log_tail(self.log)))
            time.sleep(0.5)

    def pid(self):
        try:
            with open(self.pid_file) as f:
                pid = int(f.read().strip())
            if process_alive(pid):
                return pid
        except (OSError, ValueError):
            pass
        if self.popen is not None and self.popen.poll() is None:
            return self.popen.pid
        raise BenchError("%s is not running\n%s" % (self.name, log_tail(self.log)))

    def stop(self):
        if self.popen is None:
            return
        if self.popen.poll() is None:
            subprocess.run(["mariadb-admin", "--connect-timeout=5", "-h127.0.0.1",
                            "-P%d" % self.port, "-uroot", "shutdown"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=60)
            try:
                self.popen.wait(60)
            except subprocess.TimeoutExpired:
                progress("%s did not shut down within 60 s: SIGKILL" % self.name)
        # Leftovers of its session too (the rsync daemon of a state transfer).
        kill_group(self.popen.pid)
        try:
            self.popen.wait(10)
        except subprocess.TimeoutExpired:
            raise BenchError("%s (pid %d) survived SIGKILL" % (self.name, self.popen.pid))


class MariadbServer:
    """A private MariaDB as ../shared/peers/mariadb.sh sets it up."""
    target = "mariadb"

    def __init__(self, bench, directory):
        self.bench = bench
        self.port = free_ports((0,), bench.taken_ports)
        self.node = MariadbNode("mariadbd", directory, self.port,
                                ["--innodb-buffer-pool-size=2G"])

    def up(self, label):
        progress("%s: starting mariadbd on 127.0.0.1:%d" % (label, self.port))
        self.node.install()
        self.bench.on_stop("MariaDB on port %d" % self.port, self.node.stop)
        self.node.start()
        sql(self.port, "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; "
                       "GRANT ALL ON *.* TO 'root'@'127.0.0.1'")

    def processes(self):
        return {"mariadbd": self.node.pid()}

    def status(self):
        return {}

    def after_load(self):
        pass

    def check(self, label):
        pass


class GaleraServer:
    """A two-node MariaDB Galera cluster as ../shared/peers/galera.sh sets it up; clients
    use node 1."""
    target = "galera"

    def __init__(self, bench, directory):
        if not os.path.exists(GALERA_LIBRARY):
            raise BenchError("%s not found: install galera-4 (scripts/bootstrap)" % GALERA_LIBRARY)
        if shutil.which("rsync") is None:
            raise BenchError("rsync not found: install it (scripts/bootstrap)")
        self.bench = bench
        self.dir = directory
        taken = bench.taken_ports
        sql_base = free_ports((0, 1), taken)
        # Each node: group communication on g, IST on g + 10, SST on g + 20.
        group = free_ports((0, 1, 10, 11, 20, 21), taken)
        cluster_name = "duo-bench-%d" % os.getpid()
        self.nodes = []
        for i in (1, 2):
            g = group + i - 1
            extra = ["--innodb-buffer-pool-size=1G", "--binlog-format=ROW",
                     "--innodb-autoinc-lock-mode=2", "--wsrep-on=ON",
                     "--wsrep-provider=" + GALERA_LIBRARY, "--wsrep-cluster-name=" + cluster_name,
                     "--wsrep-node-address=127.0.0.1:%d" % g, "--wsrep-sst-method=rsync",
                     "--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:%d;"
                     "ist.recv_addr=127.0.0.1:%d;%s" % (g, g + 10, GALERA_TIMEOUTS),
                     "--wsrep-sst-receive-address=127.0.0.1:%d" % (g + 20)]
            extra += (["--wsrep-cluster-address=gcomm://", "--wsrep-new-cluster"] if i == 1
                      else ["--wsrep-cluster-address=gcomm://127.0.0.1:%d" % group])
            self.nodes.append(MariadbNode("galera node %d" % i, os.path.join(directory, "n%d" % i),
                                          sql_base + i - 1, extra, owner_nobody=(i == 2)))
        self.port = self.nodes[0].port

    def up(self, label):
        first, second = self.nodes
        progress("%s: starting node 1 on 127.0.0.1:%d" % (label, first.port))
        os.makedirs(self.dir, exist_ok=True)
        for directory in (self.bench.work_dir, self.dir):
            os.chmod(directory, 0o755)  # the SST's rsync daemon (nobody) must reach n2/data
        first.install()
        self.bench.on_stop("Galera node 1 on port %d" % first.port, first.stop)
        first.start()
        sql(first.port, "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; "
                        "GRANT ALL ON *.* TO 'root'@'127.0.0.1'")
        progress("%s: starting node 2 on 127.0.0.1:%d (rsync state transfer)"
                 % (label, second.port))
        os.makedirs(second.dir, exist_ok=True)
        self.bench.on_stop("Galera node 2 on port %d" % second.port, second.stop)
        second.start()
        self.wait_synced(label, need_size=True)

    def wait_synced(self, label, need_size=False, timeout_s=300):
        """Until node 2 is Synced in a 2-node cluster with nothing left to apply."""
        deadline = time.monotonic() + timeout_s
        while True:
            rows = dict(tuple(r) for r in sql(self.nodes[1].port, "SHOW STATUS LIKE 'wsrep_%'")
                        if len(r) == 2)
            if (rows.get("wsrep_cluster_size") == "2"
                    and rows.get("wsrep_local_state_comment") == "Synced"
                    and rows.get("wsrep_local_recv_queue") == "0"):
                if need_size:
                    progress("%s: 2 nodes synced" % label)
                return
            if time.monotonic() > deadline:
                raise BenchError("%s: node 2 not synced within %d s (cluster size %s, state %s)\n%s"
                                 % (label, timeout_s, rows.get("wsrep_cluster_size"),
                                    rows.get("wsrep_local_state_comment"),
                                    log_tail(self.nodes[1].log)))
            time.sleep(0.5)

    def processes(self):
        return {"mariadbd node 1": self.nodes[0].pid(), "mariadbd node 2": self.nodes[1].pid()}

    def status(self):
        return {}

    def after_load(self):
        self.wait_synced("Galera")

    def check(self, label):
        """Both nodes in the primary component, node 2 caught up: else the figures would
        be those of a single node (or sysbench fails with 1047)."""
        rows = dict(tuple(r) for r in sql(self.port, "SHOW STATUS LIKE 'wsrep_%'") if len(r) == 2)
        if (rows.get("wsrep_cluster_size") != "2" or rows.get("wsrep_cluster_status") != "Primary"
                or rows.get("wsrep_ready") != "ON"):
            raise BenchError("%s: the Galera cluster broke up (node 1: cluster size %s, %s, "
                             "ready %s)\n%s\n%s" % (
                                 label, rows.get("wsrep_cluster_size"),
                                 rows.get("wsrep_cluster_status"), rows.get("wsrep_ready"),
                                 log_tail(self.nodes[0].log), log_tail(self.nodes[1].log)))
        self.wait_synced(label)


# ---- Reports ----

def fmt(value, digits=None):
    if value is None:
        return "–"
    if digits is None:
        digits = 0 if abs(value) >= 100 else 1 if abs(value) >= 10 else 2
    return "%.*f" % (digits, value)


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def compare_markdown(args, runs, loads, machine):
    lines = []
    targets = [t for t in args.targets]
    by_key = {(r["target"], r["workload"], r["threads"]): r for r in runs}
    for workload in args.workloads:
        unit = throughput_unit(workload)
        lines.append("**%s** (%d tables x %d rows, %d s per run; per transaction: CPU and "
                     "context switches, voluntary + involuntary)" % (
                         workload, args.tables, args.table_size, args.seconds))
        lines.append("")
        lines.append("| threads | target | %s | p95 ms | retried | server CPU µs/tx | server cs/tx "
                     "| sysbench CPU µs/tx | sysbench cs/tx | round trips/stmt | other load, "
                     "cores |" % unit)
        lines.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for threads in args.threads:
            for target in targets:
                r = by_key.get((target, workload, threads))
                if r is None:
                    continue
                t = r["per_tx"]
                lines.append("| %d | %s | %.0f | %.2f | %d | %s | %s + %s | %s | %s + %s | %s | %.2f |"
                             % (threads, TARGET_NAMES[target], r["throughput"],
                                r["sysbench"]["p95_ms"], r["sysbench"]["errors"],
                                fmt(t["server_cpu_us"]), fmt(t["server_voluntary"]),
                                fmt(t["server_involuntary"]), fmt(t["client_cpu_us"]),
                                fmt(t["client_voluntary"]), fmt(t["client_involuntary"]),
                                fmt(r["round_trips_per_statement"], 2), r["other_load_cores"]))
        lines.append("")
        peers = [t for t in targets if t != "duo"]
        if "duo" in targets and peers:
            header = "| threads |" + "".join(" %s %s | server CPU/tx vs %s |" % (
                unit, "vs " + TARGET_NAMES[p], TARGET_NAMES[p]) for p in peers)
            lines.append("DuoDB / peer:")
            lines.append("")
            lines.append(header)
            lines.append("|---:|" + "---:|---:|" * len(peers))
            for threads in args.threads:
                duo = by_key.get(("duo", workload, threads))
                if duo is None:
                    continue
                cells = []
                for p in peers:
                    peer = by_key.get((p, workload, threads))
                    cells.append(fmt(ratio(duo["throughput"], peer and peer["throughput"]), 2))
                    cells.append(fmt(ratio(duo["per_tx"]["server_cpu_us"],
                                           peer and peer["per_tx"]["server_cpu_us"]), 2))
                lines.append("| %d | %s |" % (threads, " | ".join(cells)))
            lines.append("")
        lines.append("| threads | target | process | CPU µs/tx | voluntary cs/tx | "
                     "involuntary cs/tx |")
        lines.append("|---:|---|---|---:|---:|---:|")
        for threads in args.threads:
            for target in targets:
                r = by_key.get((target, workload, threads))
                if r is None:
                    continue
                for name, p in sorted(r["per_tx"]["processes"].items(), key=process_order):
                    lines.append("| %d | %s | %s | %s | %s | %s |" % (
                        threads, TARGET_NAMES[target], name, fmt(p["cpu_us"]),
                        fmt(p["voluntary"]), fmt(p["involuntary"])))
                lines.append("| %d | %s | sysbench (client) | %s | %s | %s |" % (
                    threads, TARGET_NAMES[target], fmt(r["per_tx"]["client_cpu_us"]),
                    fmt(r["per_tx"]["client_voluntary"]), fmt(r["per_tx"]["client_involuntary"])))
        lines.append("")
    if loads:
        lines.append("sysbench prepare (%d x %d rows): %s." % (
            args.tables, args.table_size,
            ", ".join("%s %.1f s" % (TARGET_NAMES[l["target"]], l["load_s"]) for l in loads)))
        lines.append("")
    if "duo" in targets:
        lines.append("DuoDB: %s (%s). %s" % (args.bin, build_version(args.bin),
                                             footer(args, runs, machine)))
    else:
        lines.append(footer(args, runs, machine))
    return "\n".join(lines)


def process_order(item):
    name = item[0]
    order = ("duo_sqld", "duo_datad", "duo_mgmd", "mariadbd")
    return ([i for i, prefix in enumerate(order) if name.startswith(prefix)] or [9])[0], name


def footer(args, runs, machine):
    machine = machine or {}
    others = [r["other_load_cores"] for r in runs]
    loads = [v for r in runs for v in r["machine"]["loadavg_before"][:1] +
             r["machine"]["loadavg_after"][:1]]
    counters = sorted({c for r in runs for c in r.get("round_trip_counters", [])})
    return ("%s; %d cores (%s); servers, sysbench and this script on the same machine. "
            "Server CPU and context switches: every server process (DuoDB: duo_sqld, 2 "
            "duo_datad, duo_mgmd; Galera: both nodes), over the measured run only. Round "
            "trips/stmt: duo_sqld's waits for the cluster (%s) per statement. Other load: CPU "
            "of the rest of the machine during the runs, %.2f-%.2f cores; 1-minute load "
            "average %.1f-%.1f. MariaDB/Galera: InnoDB, no binlog, "
            "innodb_flush_log_at_trx_commit=2, buffer pool holding the data.%s" % (
                machine.get("sysbench", "sysbench"), os.cpu_count(), machine.get("cpu", "?"),
                " + ".join(counters) if counters else "none reported",
                min(others) if others else 0, max(others) if others else 0,
                min(loads) if loads else 0, max(loads) if loads else 0,
                " Generated %s by `%s`." % (machine.get("date"), machine.get("command"))))


def ab_metrics(r):
    """(metric name, value) of one run, in report order."""
    t = r["per_tx"]
    out = [(throughput_unit(r["workload"]), r["throughput"]),
           ("p95 ms", r["sysbench"]["p95_ms"]),
           ("retried", r["sysbench"]["errors"]),
           ("server CPU µs/tx", t["server_cpu_us"]),
           ("server voluntary cs/tx", t["server_voluntary"]),
           ("server involuntary cs/tx", t["server_involuntary"])]
    for name, p in sorted(t["processes"].items(), key=process_order):
        out += [("%s CPU µs/tx" % name, p["cpu_us"]),
                ("%s voluntary cs/tx" % name, p["voluntary"]),
                ("%s involuntary cs/tx" % name, p["involuntary"])]
    out += [("sysbench CPU µs/tx", t["client_cpu_us"]),
            ("sysbench voluntary cs/tx", t["client_voluntary"]),
            ("sysbench involuntary cs/tx", t["client_involuntary"]),
            ("round trips/stmt", r["round_trips_per_statement"]),
            ("round trips/tx", t["round_trips"]),
            ("bytes sent to data nodes/tx", t["Ndb_api_bytes_sent_count"]),
            ("bytes received from data nodes/tx", t["Ndb_api_bytes_received_count"]),
            ("other load, cores", r["other_load_cores"])]
    return out


def ab_markdown(args, runs, machine):
    lines = []
    summary = []
    for workload in args.workloads:
        for threads in args.threads:
            per_build = {}
            for build in ("A", "B"):
                per_build[build] = [r for r in runs if r["build"] == build and
                                    r["workload"] == workload and r["threads"] == threads]
            if not per_build["A"] or not per_build["B"]:
                continue
            lines.append("**%s, %d threads** (%d rounds of A then B; median [min–max])" % (
                workload, threads, args.rounds))
            lines.append("")
            lines.append("| metric | A | B | B/A |")
            lines.append("|---|---:|---:|---:|")
            names = [name for name, _ in ab_metrics(per_build["A"][0])]
            for name in names:
                cells = []
                medians = {}
                for build in ("A", "B"):
                    values = [v for r in per_build[build] for n, v in ab_metrics(r)
                              if n == name and v is not None]
                    if not values:
                        cells.append("–")
                        medians[build] = None
                        continue
                    medians[build] = statistics.median(values)
                    cells.append("%s [%s–%s]" % (fmt(medians[build]), fmt(min(values)),
                                                 fmt(max(values))))
                r = ratio(medians["B"], medians["A"])
                if name == "retried":  # whole transactions
                    cells = ["%d [%d–%d]" % (medians[b], *min_max(per_build[b], name))
                             for b in ("A", "B")]
                lines.append("| %s | %s | %s | %s |" % (name, cells[0], cells[1], fmt(r, 3)))
                summary.append({"workload": workload, "threads": threads, "metric": name,
                                "median_a": medians["A"], "median_b": medians["B"],
                                "b_over_a": r})
            lines.append("")
    notes = []
    for build, path in (("A", args.bin), ("B", args.duo_bin_b)):
        counters = sorted({c for r in runs if r["build"] == build
                           for c in r.get("round_trip_counters", [])})
        notes.append("%s = %s (%s; round trips from %s)" % (
            build, path, build_version(path),
            " + ".join(counters) if counters else "no counters"))
    lines.append("%s. Before the counters of issue 14, Ndb_api_wait_exec_complete_count counted "
                 "batches executed and there was no scan or dictionary wait count: such a "
                 "build's round trips are not comparable. %s" % (
                     "; ".join(notes), footer(args, runs, machine)))
    return "\n".join(lines), summary


def min_max(runs, name):
    values = [v for r in runs for n, v in ab_metrics(r) if n == name and v is not None]
    return min(values), max(values)


def build_version(bin_dir):
    """The commit a build is of: its COMMIT file (a copied build), else its tree's HEAD."""
    try:
        with open(os.path.join(bin_dir, "COMMIT")) as f:
            return "commit " + f.read().strip()[:9]
    except OSError:
        pass
    head = subprocess.run(["git", "-C", bin_dir, "rev-parse", "--short=9", "HEAD"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if head.returncode != 0:
        return "commit unknown"
    dirty = subprocess.run(["git", "-C", bin_dir, "diff", "--quiet", "HEAD"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0
    return "commit %s%s" % (head.stdout.strip(), " + uncommitted changes" if dirty else "")


# ---- Self-test (CTest: sysbench_compare_self_test) ----

SAMPLE_SYSBENCH_RUN = """
SQL statistics:
    queries performed:
        read:                            140000
        write:                           40000
        other:                           20000
        total:                           200000
    transactions:                        10000  (499.90 per sec.)
    queries:                             200000 (9998.00 per sec.)
    ignored errors:                      3      (0.15 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          20.0040s
    total number of events:              10000

Latency (ms):
         min:                                    2.10
         avg:                                    8.00
         max:                                   61.30
         95th percentile:                       13.95
         sum:                                79990.12
"""

SAMPLE_HISTOGRAM = """
Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       0.185 |******                                   41
       0.189 |**************************************** 282
       0.192 |*************************                173
       0.196 |*****                                    33
       0.203 |*                                        6

"""


def self_test():
    """Checks the parsing, the per-transaction arithmetic, the thread bookkeeping and the
    A/B summary on made-up figures, and the /proc readers on this process."""
    bench = parse_sysbench(SAMPLE_SYSBENCH_RUN)
    assert bench["transactions"] == 10000 and bench["queries"] == 200000, bench
    assert bench["tps"] == 499.90 and bench["p95_ms"] == 13.95 and bench["errors"] == 3, bench
    assert bench["p50_ms"] is None and bench["p99_ms"] is None, bench  # no --histogram
    with_histogram = parse_sysbench(SAMPLE_SYSBENCH_RUN + SAMPLE_HISTOGRAM)
    assert with_histogram["p50_ms"] == 0.189 and with_histogram["p99_ms"] == 0.203, with_histogram

    # Thread 11 runs throughout, 12 ends after the first poll, 13 starts and then its tid
    # is reused by a new thread (fewer switches than seen before).
    views = iter([{10: (5, 1), 11: (100, 10), 12: (50, 5)},
                  {10: (5, 1), 11: (150, 12), 12: (70, 6), 13: (30, 3)},
                  {10: (5, 1), 11: (200, 15), 13: (4, 1)}])
    counter = SwitchCounter(0, read=lambda _pid: next(views))
    counter.poll()
    counter.poll()
    assert counter.delta() == ((100 + 20 + 30 + 4), (5 + 1 + 3 + 1)), counter.delta()

    figures = {
        "workload": "oltp_read_write", "threads": 4, "seconds": 20, "wall_s": 20.0,
        "sysbench": bench,
        "processes": {"duo_sqld": {"cpu_ticks": 1000, "cpu_us": 1000 * 1e6 / CLOCK_TICKS_PER_S,
                                   "voluntary": 50000, "involuntary": 2000},
                      "duo_datad 1": {"cpu_ticks": 500, "cpu_us": 500 * 1e6 / CLOCK_TICKS_PER_S,
                                      "voluntary": 30000, "involuntary": 1000}},
        "client": {"cpu_us": 2e6, "voluntary": 40000, "involuntary": 100},
        "status": {"Ndb_api_wait_exec_complete_count": 150000,
                   "Ndb_api_wait_scan_result_count": 48000,
                   "Ndb_api_wait_meta_request_count": 2000, "Ndb_api_bytes_sent_count": 10 ** 7},
        "machine": {"busy_ticks": 3000, "total_ticks": 4000, "loadavg_before": [1.0, 1, 1],
                    "loadavg_after": [2.0, 1, 1]},
    }
    derive(figures)
    t = figures["per_tx"]
    assert abs(t["server_cpu_us"] - 1500 * 1e6 / CLOCK_TICKS_PER_S / 10000) < 1e-6, t
    assert t["server_voluntary"] == 8.0 and abs(t["server_involuntary"] - 0.3) < 1e-9, t
    assert t["client_cpu_us"] == 200.0, t
    assert figures["round_trips_per_statement"] == 1.0 and t["round_trips"] == 20.0, figures
    assert t["Ndb_api_bytes_sent_count"] == 1000 and t["Ndb_api_bytes_received_count"] is None
    other = (3000 - 1500 - 2 * CLOCK_TICKS_PER_S) / (CLOCK_TICKS_PER_S * 20.0)
    assert abs(figures["other_load_cores"] - max(0.0, other)) < 1e-9, figures
    assert figures["throughput"] == 499.90

    args = argparse.Namespace(workloads=["oltp_read_write"], threads=[4], rounds=2,
                              bin="/a", duo_bin_b="/b", tables=2, table_size=10, seconds=20)
    runs = []
    for build, cpu in (("A", 100.0), ("B", 80.0), ("A", 120.0), ("B", 90.0)):
        run_ = json.loads(json.dumps(figures))
        run_["build"] = build
        run_["per_tx"]["server_cpu_us"] = cpu
        runs.append(run_)
    markdown, summary = ab_markdown(args, runs, {})
    row = [r for r in summary if r["metric"] == "server CPU µs/tx"][0]
    assert row["median_a"] == 110.0 and row["median_b"] == 85.0, row
    assert abs(row["b_over_a"] - 85.0 / 110.0) < 1e-9, row
    assert "| server CPU µs/tx | 110 [100–120] | 85.0 [80.0–90.0] | 0.773 |" in markdown, markdown

    assert cpu_ticks(os.getpid()) >= 0
    own = task_switches(os.getpid())
    assert os.getpid() in own and all(v >= 0 and n >= 0 for v, n in own.values()), own
    busy, total = machine_ticks()
    assert 0 < busy <= total, (busy, total)
    print("sysbench_compare self-test: ok")
    return 0


# ---- Main ----

def machine_info(args):
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M).group(1).strip()
    except (OSError, AttributeError):
        pass
    top = subprocess.run(["top", "-bn1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True).stdout.splitlines()[:20] if shutil.which("top") else []
    return {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "command": " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]),
        "cores": os.cpu_count(), "cpu": cpu, "kernel": os.uname().release,
        "sysbench": run(["sysbench", "--version"], 30).strip(),
        "mariadbd": subprocess.run(["mariadbd", "--version"], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True).stdout.strip()
        if shutil.which("mariadbd") else None,
        "loadavg_at_start": loadavg(), "top_at_start": top,
        "builds": {"A": build_version(args.bin),
                   "B": build_version(args.duo_bin_b) if args.duo_bin_b else None},
    }


def run_compare(bench, args):
    """Each target in turn: start, load, measure every workload x threads, stop."""
    for target in args.targets:
        label = TARGET_NAMES[target]
        directory = os.path.join(bench.work_dir, target)
        mark = len(bench.stoppers)
        try:
            if target == "duo":
                server = DuoServer(bench, args.bin, directory)
                server.up(initial=True, label=label)
            else:
                server = MariadbServer(bench, directory) if target == "mariadb" else \
                    GaleraServer(bench, directory)
                server.up(label)
            bench.load(server, label)
            for workload in args.workloads:
                for threads in args.threads:
                    figures = bench.measure(server, workload, threads, label)
                    figures.update({"target": target, "build": None, "round": 1})
                    bench.runs.append(figures)
        finally:
            bench.stop_since(mark)


def run_ab(bench, args):
    builds = {"A": args.bin, "B": args.duo_bin_b}
    server = DuoServer(bench, builds["A"], os.path.join(bench.work_dir, "duo"))
    DuoServer(bench, builds["B"], server.data_dir)  # checks B's binaries before any work
    server.up(initial=True, label="DuoDB A")
    bench.load(server, "DuoDB A")
    server.down()
    for round_no in range(1, args.rounds + 1):
        for build in ("A", "B"):
            label = "round %d/%d, DuoDB %s" % (round_no, args.rounds, build)
            server.set_build(builds[build])
            server.up(initial=False, label=label)
            server.check_tables(label)
            for workload in args.workloads:
                for threads in args.threads:
                    figures = bench.measure(server, workload, threads, label)
                    figures.update({"target": "duo", "build": build, "round": round_no,
                                    "bin": server.bin_dir})
                    bench.runs.append(figures)
            server.down()


def parse_args(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(
        description=" ".join(__doc__.split("\n\n")[0].split()),
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--bin", default=default_bin_dir(__file__),
                        help="DuoDB build (A) bin directory (default: the tarball's bin/ "
                             "when installed, else build/release/bin)")
    parser.add_argument("--duo-bin-b", metavar="DIR",
                        help="A/B mode: a second build's bin directory, run interleaved with --bin")
    parser.add_argument("--rounds", type=int, default=3, help="A/B rounds (default 3)")
    parser.add_argument("--targets", default=None,
                        help="comma-separated duo,mariadb,galera (default all; duo with "
                             "--duo-bin-b)")
    parser.add_argument("--workloads", default="oltp_point_select,oltp_read_write",
                        help="comma-separated sysbench oltp_* workloads")
    parser.add_argument("--threads", default="4,16", help="comma-separated thread counts")
    parser.add_argument("--tables", type=int, default=2)
    parser.add_argument("--table-size", type=int, default=50000)
    parser.add_argument("--seconds", type=int, default=20, help="measured seconds per run")
    parser.add_argument("--warmup", type=int, default=2,
                        help="unmeasured seconds of the same workload before each run")
    parser.add_argument("--data-memory", type=int, default=1024,
                        help="DataMemory per data node in MB")
    parser.add_argument("--json", metavar="FILE", help="write every raw figure to FILE")
    parser.add_argument("--keep-dir", action="store_true",
                        help="keep the temporary directory (data, logs)")
    parser.add_argument("--self-test", action="store_true",
                        help="check the script's own arithmetic and /proc readers, then exit")
    args = parser.parse_args(argv)
    if args.self_test:
        return args
    args.workloads = [w for w in args.workloads.split(",") if w]
    for w in args.workloads:
        if not re.match(r"^oltp_\w+$", w):
            parser.error("not a sysbench oltp_* workload: %s" % w)
    try:
        args.threads = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        parser.error("--threads: comma-separated numbers")
    if not args.threads or min(args.threads) < 1:
        parser.error("--threads: at least one positive number")
    if args.targets is None:
        args.targets = "duo" if args.duo_bin_b else "duo,mariadb,galera"
    args.targets = [t for t in args.targets.split(",") if t]
    for t in args.targets:
        if t not in TARGET_NAMES:
            parser.error("unknown target %s (duo, mariadb, galera)" % t)
    if args.duo_bin_b and args.targets != ["duo"]:
        parser.error("--duo-bin-b compares two DuoDB builds: --targets must be duo")
    if args.rounds < 1 or args.seconds < 1 or args.warmup < 0:
        parser.error("--rounds and --seconds must be positive, --warmup not negative")
    args.bin = os.path.abspath(args.bin)
    if args.duo_bin_b:
        args.duo_bin_b = os.path.abspath(args.duo_bin_b)
    return args


def main(argv):
    args = parse_args(argv)
    if args.self_test:
        return self_test()
    for tool in ["sysbench", "mariadb"] + (["mariadbd", "mariadb-install-db", "mariadb-admin"]
                                           if set(args.targets) - {"duo"} else []):
        if shutil.which(tool) is None:
            print("sysbench_compare: %s not found (scripts/bootstrap installs it)" % tool,
                  file=sys.stderr)
            return 1

    def on_signal(signum, _frame):
        raise Interrupted(signal.Signals(signum).name)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)

    work_dir = tempfile.mkdtemp(prefix="duo_sysbench.")
    bench = Bench(args, work_dir)
    machine = None
    failed = None
    interrupted = False
    try:
        machine = machine_info(args)
        progress("work directory %s; load average %s; %s" % (
            work_dir, " ".join("%.2f" % v for v in machine["loadavg_at_start"]),
            "A/B %s vs %s, %d rounds" % (args.bin, args.duo_bin_b, args.rounds)
            if args.duo_bin_b else "targets " + ",".join(args.targets)))
        if args.duo_bin_b:
            run_ab(bench, args)
        else:
            run_compare(bench, args)
    except Interrupted as why:
        failed = "interrupted by %s" % why
        interrupted = True
    except BenchError as error:
        failed = str(error)
    except Exception:  # a bug here: still stop everything and keep what was measured
        failed = traceback.format_exc()
    finally:
        # Nothing may interrupt the stopping; a second Ctrl-C would leave servers behind.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        bench.stop_all()
        if args.keep_dir or (failed and not interrupted):
            progress("kept %s (logs and data)" % work_dir)
        else:
            shutil.rmtree(work_dir, ignore_errors=True)

    summary = None
    markdown = None
    if bench.runs:
        if args.duo_bin_b:
            markdown, summary = ab_markdown(args, bench.runs, machine)
        else:
            markdown = compare_markdown(args, bench.runs, bench.loads, machine)
    if args.json:
        config = {k: v for k, v in vars(args).items()}
        with open(args.json, "w") as f:
            json.dump({"config": config, "machine": machine, "loads": bench.loads,
                       "runs": bench.runs, "ab_summary": summary, "failed": failed}, f, indent=1)
    if failed:
        print("sysbench_compare: FAILED: %s" % failed, file=sys.stderr)
        if markdown:
            print("(figures of the runs that completed follow)", file=sys.stderr)
            print(markdown)
        return 1
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
