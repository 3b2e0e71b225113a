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


def duo_figures(args, bindir, data_dir):
    base = ["--connect=127.0.0.1:%d" % args.port, "--rows=%d" % args.rows,
            "--batch=%d" % args.batch, "--parallelism=%d" % args.parallelism,
            "--threads=%d" % args.threads]
    out = run([os.path.join(bindir, "duo_bench")] + base + ["--op=insert"])
    figures = {"insert": parse_duo(out, "insert")}
    out = run([os.path.join(bindir, "duo_bench")] + base +
              ["--op=read", "--duration=%d" % args.seconds])
    figures["read"] = parse_duo(out, "read")
    out = run([os.path.join(bindir, "duo_bench")] + base +
              ["--op=update", "--duration=%d" % args.seconds])
    figures["update"] = parse_duo(out, "update")
    return figures


def parse_duo(out, phase):
    match = re.search(r"^%s\s+loop \d+: \d+ ops in [\d.]+ s = (\d+) ops/s; latency us p50 (\d+) "
                      r"p95 (\d+) p99 (\d+)" % phase, out, re.M)
    if not match:
        raise RuntimeError("no %s figures in duo_bench output:\n%s" % (phase, out))
    return {"ops": int(match.group(1)), "p50": int(match.group(2)), "p99": int(match.group(4))}


def redis_figures(args):
    redis_dir = tempfile.mkdtemp(prefix="duo_redis.")
    try:
        subprocess.run(["redis-server", "--port", str(REDIS_PORT), "--save", "", "--appendonly",
                        "no", "--daemonize", "yes", "--dir", redis_dir,
                        "--pidfile", os.path.join(redis_dir, "redis.pid")], check=True,
                       stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        out = run(["redis-benchmark", "-p", str(REDIS_PORT), "-t", "set,get", "-P", "32",
                   "-n", "2000000", "-q", "-r", str(args.rows), "-d", "100"])
        figures = {}
        for name in ("SET", "GET"):
            match = re.search(r"^%s: ([\d.]+) requests per second" % name, out, re.M)
            if not match:
                raise RuntimeError("no %s figure in redis-benchmark output:\n%s" % (name, out))
            figures[name] = float(match.group(1))
        return figures
    finally:
        subprocess.run(["redis-cli", "-p", str(REDIS_PORT), "shutdown", "nosave"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
