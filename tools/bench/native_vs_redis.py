#!/usr/bin/env python3
"""Native key-value throughput of DuoDB beside Redis, on this machine, in one run.

Starts a two-replica DuoDB cluster (`duo up` in a temporary directory), runs duo_bench
with batched primary-key writes (inserts) and reads, then a private redis-server
(no persistence) with pipelined SET and GET from redis-benchmark, and prints one
Markdown table with the ratios — the figures docs/benchmarks.md reports. Everything
it starts is stopped again, also on failure.

Usage: native_vs_redis.py [--bin build/release/bin] [--rows 500000] [--batch 100]
                          [--parallelism 8] [--threads 2] [--seconds 10]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from bench_bin import default_bin_dir


REDIS_PORT = 6399


def run(cmd, timeout=600):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(cmd), proc.returncode, proc.stdout))
    return proc.stdout


def duo_bench_cmd(bindir, connect_port, rows, batch, parallelism, threads, op, seconds=None):
    """duo_bench (flexAsynch-style, over the client library) against the mgmd on
    127.0.0.1:connect_port; `op` insert loads the rows, read/update repeat for `seconds`."""
    return [os.path.join(bindir, "duo_bench"), "--connect=127.0.0.1:%d" % connect_port,
            "--rows=%d" % rows, "--batch=%d" % batch, "--parallelism=%d" % parallelism,
            "--threads=%d" % threads, "--op=%s" % op] + (
                ["--duration=%d" % seconds] if seconds else [])


def duo_figures(args, bindir, data_dir):
    def bench(op, seconds=None):
        cmd = duo_bench_cmd(bindir, args.port, args.rows, args.batch, args.parallelism,
                            args.threads, op, seconds)
        return parse_duo(run(cmd), op)
    figures = {"insert": bench("insert")}
    figures["read"] = bench("read", args.seconds)
    figures["update"] = bench("update", args.seconds)
    return figures


def parse_duo(out, phase):
    """ops/s and latency percentiles (µs per batch) of one phase of duo_bench's report."""
    match = re.search(r"^%s\s+loop \d+: (\d+) ops in ([\d.]+) s = (\d+) ops/s; latency us "
                      r"p50 (\d+) p95 (\d+) p99 (\d+)" % phase, out, re.M)
    if not match:
        raise RuntimeError("no %s figures in duo_bench output:\n%s" % (phase, out))
    return {"operations": int(match.group(1)), "seconds": float(match.group(2)),
            "ops": int(match.group(3)), "p50": int(match.group(4)), "p95": int(match.group(5)),
            "p99": int(match.group(6))}


def redis_server_cmd(port, directory):
    """A private redis-server without persistence, in the foreground (its starter owns it)."""
    return ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", directory]


def redis_benchmark_cmd(port, rows, requests, tests="set,get"):
    """Pipelined (-P 32) redis-benchmark of 100-byte values over `rows` keys, CSV output."""
    return ["redis-benchmark", "-p", str(port), "-t", tests, "-P", "32", "-n", str(requests),
            "-r", str(rows), "-d", "100", "--csv"]


def parse_redis(out):
    """{"SET": {"ops", "p50", "p95", "p99"}, "GET": ...} of redis-benchmark --csv (ms)."""
    figures = {}
    for line in out.splitlines():
        fields = [f.strip('"') for f in line.strip().split(",")]
        if len(fields) == 8 and fields[0] != "test":
            try:
                values = [float(v) for v in fields[1:]]
            except ValueError:
                continue
            figures[fields[0]] = {"ops": values[0], "p50": values[3], "p95": values[4],
                                  "p99": values[5]}
    if not figures:
        raise RuntimeError("no figures in redis-benchmark output:\n%s" % out)
    return figures


def redis_figures(args):
    redis_dir = tempfile.mkdtemp(prefix="duo_redis.")
    server = subprocess.Popen(redis_server_cmd(REDIS_PORT, redis_dir), stdout=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        time.sleep(0.5)
        out = run(redis_benchmark_cmd(REDIS_PORT, args.rows, 2000000))
        return {name: f["ops"] for name, f in parse_redis(out).items()}
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(redis_dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=default_bin_dir(__file__))
    parser.add_argument("--rows", type=int, default=500000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--parallelism", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--port", type=int, default=21186)
    args = parser.parse_args()
    bindir = os.path.abspath(args.bin)
    data_dir = tempfile.mkdtemp(prefix="duo_native_bench.")
    duo = os.path.join(bindir, "duo")
    try:
        print("starting a 2-replica DuoDB cluster in %s" % data_dir, flush=True)
        run([duo, "up", "--data-dir", data_dir, "--base-port", str(args.port)])
        duo_result = duo_figures(args, bindir, data_dir)
    finally:
        subprocess.run([duo, "down", "--data-dir", data_dir], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(data_dir, ignore_errors=True)
    print("running redis-benchmark (pipelined, -P 32)", flush=True)
    redis = redis_figures(args)
    rows = [
        ("PK writes, batch %d (insert, 2 replicas)" % args.batch, duo_result["insert"], redis["SET"],
         "SET"),
        ("PK updates, batch %d (2 replicas)" % args.batch, duo_result["update"], redis["SET"], "SET"),
        ("PK reads, batch %d" % args.batch, duo_result["read"], redis["GET"], "GET"),
    ]
    print()
    print("| workload | DuoDB ops/s | p50 / p99 (µs per batch) | Redis pipelined | ratio |")
    print("|---|---|---|---|---|")
    for name, duo_fig, redis_ops, redis_name in rows:
        print("| %s | %d | %d / %d | %s %.0f | %.2f |" % (
            name, duo_fig["ops"], duo_fig["p50"], duo_fig["p99"], redis_name, redis_ops,
            duo_fig["ops"] / redis_ops))
    print()
    print("duo_bench: %d thread(s) x %d transactions in flight x %d ops; %d rows of 100 bytes; "
          "client, 2 data nodes and mgmd on this machine (%d cores)" % (
              args.threads, args.parallelism, args.batch, args.rows, os.cpu_count()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
