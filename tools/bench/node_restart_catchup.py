#!/usr/bin/env python3
"""How long a killed data node takes to catch up (node restart), with and without load:
the catch-up figure issue 5 asks for (docs/reliability.md).

Starts a fresh two-replica cluster (`duo up --initial` in a temporary directory), loads
--rows rows with duo_datacheck, SIGKILLs data node 2, waits until node 1 declared it
dead, optionally changes --change-percent K% of the rows meanwhile (K% more rows
inserted: rows changed since node 2's last complete GCI), starts it again (`duo up` on
the running cluster) and measures the time from that start until mgmd reports node 2
STARTED. A normal node restart recovers node 2's own disk to its last complete GCI and
copies only the rows changed since (whole) and the keys of the others; with --initial
node 2's file system is removed first (as `--initial` does) and every row is copied.
With --load, duo_bench writes through the client library during the catch-up. Then
node 1 is killed and duo_datacheck verifies every row through node 2 alone: the copy
was complete. Prints the catch-up time, rows per second and the rows sent whole / as
keys (from node 2's log).

Usage: node_restart_catchup.py [--bin build/release/bin] [--rows 1000000] [--load]
                               [--data-memory 1024] [--change-percent K] [--delete-rows N]
                               [--initial]
"""

import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts", "testlib"))
from duo_cluster import LauncherCluster  # noqa: E402


def run(command, timeout=1800):
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (exit %d):\n%s" % (" ".join(command), proc.returncode,
                                                         proc.stdout[-3000:]))
    return proc.stdout


def run_bench(command):
    """duo_bench counts errors instead of failing: its first one is printed."""
    output = run(command)
    error = re.search(r"^duo_bench: (?:load|insert|read|update|delete): .*$", output,
                      re.MULTILINE)
    if error:
        raise RuntimeError("%s: %s" % (" ".join(command), error.group(0)))
    return output


def all_status(cluster):
    proc = subprocess.run([os.path.join(cluster.bin_dir, "duo_mgm"), "-c",
                           cluster.connect_string, "-e", "all status"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    return proc.stdout


def wait_for(predicate, timeout_s, what):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise RuntimeError("timed out waiting for " + what)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="build/release/bin")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--load", action="store_true",
                        help="duo_bench writes during the catch-up")
    parser.add_argument("--data-memory", type=int, default=1024, help="DataMemory in MB")
    parser.add_argument("--change-percent", type=float, default=0.0,
                        help="insert this %% of --rows more rows while node 2 is down")
    parser.add_argument("--delete-rows", type=int, default=0,
                        help="duo_bench loads 2N rows of its own table before the kill and "
                             "deletes N of them while node 2 is down; at the end they are "
                             "inserted again through node 2 alone (fails if it still has any)")
    parser.add_argument("--initial", action="store_true",
                        help="restart node 2 with an empty file system (copies every row)")
    args = parser.parse_args()
    changed = int(args.rows * args.change_percent / 100)
    total_rows = args.rows + changed
    bin_dir = os.path.abspath(args.bin)
    work_dir = tempfile.mkdtemp(prefix="duo-catchup-")
    cluster = LauncherCluster(bin_dir, work_dir, data_memory_mb=args.data_memory)
    bench = None
    try:
        cluster.start()
        datacheck = [os.path.join(bin_dir, "duo_datacheck")]
        connect = ["--connect", cluster.connect_string]
        started = time.time()
        run(datacheck + ["load", "--rows", str(args.rows), "--batch", "1000"] + connect)
        print("loaded %d rows in %.1f s" % (args.rows, time.time() - started), flush=True)
        bench_table = [os.path.join(bin_dir, "duo_bench"), "--connect=" + cluster.connect_string,
                       "--threads=1", "--table=catchup_deletes"]
        if args.delete_rows > 0:
            run_bench(bench_table + ["--op=insert", "--rows=%d" % (2 * args.delete_rows)])
        time.sleep(2.5)  # a global checkpoint
        os.kill(cluster.data_node_pid(2), signal.SIGKILL)
        wait_for(lambda: "Node 2: not connected" in all_status(cluster), 60, "node 2 dead")
        time.sleep(1)
        if changed > 0:
            started = time.time()
            run(datacheck + ["load", "--rows", str(changed), "--start", str(args.rows),
                             "--batch", "1000"] + connect)
            print("changed %d rows (%.1f%%) while node 2 was down, in %.1f s"
                  % (changed, args.change_percent, time.time() - started), flush=True)
        if args.delete_rows > 0:
            run_bench(bench_table + ["--op=delete", "--rows=%d" % args.delete_rows])
            print("deleted %d rows while node 2 was down" % args.delete_rows, flush=True)
        if args.initial:
            for fs_dir in glob.glob(os.path.join(cluster.data_dir, "**", "ndb_2_fs"),
                                    recursive=True):
                shutil.rmtree(fs_dir)
        if args.load:
            bench = subprocess.Popen(
                [os.path.join(bin_dir, "duo_bench"), "--connect=" + cluster.connect_string,
                 "--threads=2", "--rows=100000", "--op=mixed", "--duration=600"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(2)
        started = time.time()
        cluster.up_again()
        seconds = time.time() - started
        log = open(os.path.join(cluster.data_dir, "datad", "ndb_1_out.log"),
                   errors="replace").read()
        copied = re.findall(r"node restart of data node 2 complete: (\d+) rows copied, ([\d.]+) s",
                            log)
        # What each of node 1's log parts sent (records by kind, and MB when logged).
        for line in re.findall(r"log part \d+: copied to node 2: .*", log):
            print("node 1 %s" % line, flush=True)
        log2 = open(os.path.join(cluster.data_dir, "datad", "ndb_2_out.log"),
                    errors="replace").read()
        how = re.findall(r"node restart: started in GCI \d+ after [\d.e-]+ s; ([^;]*);", log2)
        print("node 2: %s" % (how[-1] if how else "?"), flush=True)
        # Where node 2's time went, from its log's timestamps: allowed to start ->
        # (local data restored ->) schema copied / files discarded -> started.
        stamps = {}
        for label, pattern in (("allowed", "node restart: allowed by node"),
                               ("restored", "node restart: local data restored"),
                               ("ready", "waiting for the (?:changed )?rows"),
                               ("started", "node restart: started in GCI")):
            found = re.findall(r"^(\S+) .*" + pattern, log2, re.MULTILINE)
            if found:
                stamps[label] = found[-1]
        print("node 2 phases (log timestamps): %s" % ", ".join(
            "%s %s" % (label, stamps[label][11:23]) for label in
            ("allowed", "restored", "ready", "started") if label in stamps), flush=True)
        print("node 2 caught up in %.1f s (start to STARTED%s); the copy itself: %s rows in "
              "%s s" % (seconds, ", under duo_bench updates" if args.load else "",
                        copied[-1][0] if copied else "?", copied[-1][1] if copied else "?"),
              flush=True)
        print("rows per second over the whole node restart: %.0f" % (total_rows / seconds),
              flush=True)
        if bench is not None:
            bench.terminate()
            bench.wait(timeout=30)
            bench = None
        os.kill(cluster.data_node_pid(1), signal.SIGKILL)
        wait_for(lambda: "Node 1: not connected" in all_status(cluster), 60, "node 1 dead")
        # The client library learns node 1's failure a little after mgmd shows it.
        deadline = time.time() + 60
        while True:
            try:
                run(datacheck + ["verify", "--rows", str(total_rows)] + connect)
                break
            except RuntimeError as error:
                if "not connected" not in str(error) or time.time() > deadline:
                    raise
                time.sleep(1)
        print("every row verified on the restarted node alone", flush=True)
        if args.delete_rows > 0:
            run_bench(bench_table + ["--op=insert", "--rows=%d" % args.delete_rows])
            print("the %d rows deleted while it was down are gone on the restarted node"
                  % args.delete_rows, flush=True)
    finally:
        if bench is not None:
            bench.kill()
        cluster.stop()
        shutil.rmtree(work_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
