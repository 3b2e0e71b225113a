#!/usr/bin/env python3
"""Local checkpoint write rate of real data nodes (MaxDiskWriteSpeed, issue 3): how fast
checkpoints write, and under which limit, at the default limits and with
MaxDiskWriteSpeed raised.

For each setting a fresh two-node cluster is started (`duo up` in a temporary
directory), stopped, its config.ini given the setting, started again (a system restart
of the empty cluster, so the setting applies), and --rows rows are loaded with
duo_datacheck. The redo the load writes starts checkpoints by itself (every
lcp_redo_bytes per log part). Then --extra-rows more rows are loaded, the cluster is
stopped and started again: that restart's own checkpoint is full (every row) and goes
at MaxDiskWriteSpeedOwnRestart. Prints, per checkpoint of data node 1, its bytes (all
log parts), the time the slowest part took, the node's MB/s and the limit each part
logged, from the "LCP n complete" lines of ndb_1_out.log.

Usage: lcp_write_rate.py [--bin build/rel/bin] [--rows 1000000] [--data-memory 1024]
                         [--setting "MaxDiskWriteSpeed=200M" ...]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts", "testlib"))
from duo_cluster import LauncherCluster  # noqa: E402

LCP_RE = re.compile(
    r"log part (\d+): LCP (\d+) complete, (\d+) rows in \d+ fragments \((\d+) partial\), "
    r"redo kept from GCI \d+, ([\d.]+) MB in ([\d.]+) s, ([\d.]+) MB/s, limit ([^(]+)\(([^)]*)\)")


def run(command, timeout=1800):
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (exit %d):\n%s" % (" ".join(command), proc.returncode,
                                                         proc.stdout[-3000:]))
    return proc.stdout


def checkpoints(log_path, skip_lines=0):
    """(lcp id, life) -> summary over the log parts, for the log after `skip_lines`."""
    lcps = {}
    with open(log_path, errors="replace") as f:
        lines = f.read().splitlines()[skip_lines:]
    for line in lines:
        m = LCP_RE.search(line)
        if not m:
            continue
        part, lcp_id, rows, partial, mb, seconds, _, limit, reason = m.groups()
        entry = lcps.setdefault(int(lcp_id), {"rows": 0, "mb": 0.0, "s": 0.0, "partial": 0,
                                              "limits": set()})
        entry["rows"] += int(rows)
        entry["mb"] += float(mb)
        entry["s"] = max(entry["s"], float(seconds))
        entry["partial"] += int(partial)
        entry["limits"].add("%s(%s)" % (limit.strip(), reason))
    return lcps, len(lines) + skip_lines


def report(title, lcps):
    print(title, flush=True)
    for lcp_id in sorted(lcps):
        e = lcps[lcp_id]
        rate = e["mb"] / e["s"] if e["s"] > 0 else 0.0
        print("  LCP %d: %d rows (%d partial files), %.1f MB in %.2f s = %.1f MB/s per node; "
              "per-part limit %s" % (lcp_id, e["rows"], e["partial"], e["mb"], e["s"], rate,
                                     ", ".join(sorted(e["limits"]))), flush=True)


def measure(bin_dir, rows, extra_rows, data_memory, setting):
    work_dir = tempfile.mkdtemp(prefix="duo-lcprate-")
    cluster = LauncherCluster(bin_dir, work_dir, data_memory_mb=data_memory)
    log = os.path.join(cluster.data_dir, "datad", "ndb_1_out.log")
    try:
        cluster.start()
        cluster.stop()
        config = os.path.join(cluster.data_dir, "config.ini")
        with open(config) as f:
            text = f.read()
        if setting:
            text = text.replace("[ndbd default]\n", "[ndbd default]\n%s\n" % setting, 1)
        with open(config, "w") as f:
            f.write(text)
        cluster.start()
        _, seen = checkpoints(log)
        datacheck = [os.path.join(bin_dir, "duo_datacheck")]
        connect = ["--connect", cluster.connect_string]
        started = time.time()
        run(datacheck + ["load", "--rows", str(rows), "--batch", "1000"] + connect)
        print("[%s] loaded %d rows in %.1f s" % (setting or "defaults", rows,
                                                time.time() - started), flush=True)
        time.sleep(5)  # let a checkpoint running at the end of the load complete
        lcps, seen = checkpoints(log, seen)
        report("[%s] checkpoints started by the load's redo:" % (setting or "defaults"), lcps)
        run(datacheck + ["load", "--rows", str(extra_rows), "--start", str(rows),
                         "--batch", "1000"] + connect)
        time.sleep(3)  # a global checkpoint
        cluster.stop()
        cluster.start()
        lcps, seen = checkpoints(log, seen)
        report("[%s] the system restart's own checkpoint (full) and later ones:"
               % (setting or "defaults"), lcps)
        run(datacheck + ["verify", "--rows", str(rows + extra_rows)] + connect)
    finally:
        cluster.stop()
    shutil.rmtree(work_dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="build/rel/bin")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--extra-rows", type=int, default=1000)
    parser.add_argument("--data-memory", type=int, default=1024, help="DataMemory in MB")
    parser.add_argument("--setting", action="append",
                        help="a line for [ndbd default] (default: none, then "
                             "MaxDiskWriteSpeed=200M)")
    args = parser.parse_args()
    settings = args.setting or ["", "MaxDiskWriteSpeed=200M"]
    for setting in settings:
        measure(os.path.abspath(args.bin), args.rows, args.extra_rows, args.data_memory, setting)


if __name__ == "__main__":
    main()
