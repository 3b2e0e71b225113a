"""The YCSB client (core 0.17.0, pinned in ycsb/pom.xml) with the project's JDBC binding
(ycsb/src/org/duodb/ycsb/JdbcDb.java, MySQL Connector/J): the class path, compiling the
binding, the table, the load and run commands, and parsing YCSB's report.
"""

import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
POM = os.path.join(HERE, "ycsb", "pom.xml")
BINDING_SOURCE = os.path.join(HERE, "ycsb", "src", "org", "duodb", "ycsb", "JdbcDb.java")
WORKLOAD_DIR = os.path.join(HERE, "ycsb", "workloads")
BINDING_CLASS = "org.duodb.ycsb.JdbcDb"
FIELD_COUNT = 10
FIELD_LENGTH = 100
# YCSB's operation types whose counts are statements sent (READ-MODIFY-WRITE is a READ
# and an UPDATE, each counted under its own name as well).
STATEMENT_OPERATIONS = ("READ", "UPDATE", "INSERT", "SCAN", "DELETE")
STATUS_INTERVAL_S = 5  # twice per progress line of the suite (every 10 s)


class YcsbError(Exception):
    pass


def class_path(work_dir):
    """The pinned jars' class path, from the local Maven repository (scripts/bootstrap
    resolved them; -o: no network at benchmark time)."""
    out_file = os.path.join(work_dir, "ycsb-classpath.txt")
    proc = subprocess.run(["mvn", "-o", "-q", "-B", "-f", POM, "dependency:build-classpath",
                           "-Dmdep.outputFile=" + out_file], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    if proc.returncode != 0:
        raise YcsbError("mvn dependency:build-classpath failed (run scripts/bootstrap):\n%s"
                        % proc.stdout[-3000:])
    with open(out_file) as f:
        return f.read().strip()


def compile_binding(work_dir, jars):
    """javac of the binding into work_dir/ycsb-classes; the full class path to run with."""
    classes = os.path.join(work_dir, "ycsb-classes")
    os.makedirs(classes, exist_ok=True)
    proc = subprocess.run(["javac", "-Xlint:all", "-Werror", "-cp", jars, "-d", classes,
                           BINDING_SOURCE], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=300)
    if proc.returncode != 0:
        raise YcsbError("javac of the YCSB binding failed:\n%s" % proc.stdout[-3000:])
    return classes + ":" + jars


def create_table_sql():
    fields = ", ".join("FIELD%d VARCHAR(%d)" % (i, FIELD_LENGTH) for i in range(FIELD_COUNT))
    return ("DROP DATABASE IF EXISTS ycsb; CREATE DATABASE ycsb; "
            "CREATE TABLE ycsb.usertable (YCSB_KEY VARCHAR(64) PRIMARY KEY, %s)" % fields)


def jdbc_url(port):
    """The URL of one server, or of several (a list of ports) separated by ';': the
    binding gives each YCSB thread the next one in turn."""
    if isinstance(port, (list, tuple)):
        return ";".join(jdbc_url(p) for p in port)
    # Client-side prepared statements (the default): text queries, as sysbench sends them.
    return ("jdbc:mysql://127.0.0.1:%d/ycsb?sslMode=DISABLED&allowPublicKeyRetrieval=true"
            "&useServerPrepStmts=false&cachePrepStmts=true" % port)


def ycsb_cmd(classpath, port, workload, threads, records, seconds=None):
    """`load` (seconds None: insert `records` rows) or a run of `seconds`, against `port`
    (or a list of ports)."""
    cmd = ["java", "-cp", classpath, "site.ycsb.Client", "-db", BINDING_CLASS,
           "-P", os.path.join(WORKLOAD_DIR, "workload" + workload),
           "-threads", str(threads), "-s",
           "-p", "db.url=" + jdbc_url(port), "-p", "db.user=root", "-p", "db.passwd=",
           "-p", "recordcount=%d" % records, "-p", "fieldcount=%d" % FIELD_COUNT,
           "-p", "fieldlength=%d" % FIELD_LENGTH,
           "-p", "status.interval=%d" % STATUS_INTERVAL_S,
           "-p", "measurementtype=hdrhistogram", "-p", "hdrhistogram.percentiles=50,95,99"]
    if seconds is None:
        # CoreWorkload reads operationcount even when loading (zipfian's key space).
        return cmd + ["-load", "-p", "operationcount=%d" % records]
    # Enough operations never to end before maxexecutiontime.
    return cmd + ["-t", "-p", "operationcount=%d" % (2 ** 31 - 1),
                  "-p", "maxexecutiontime=%d" % seconds]


def parse_ycsb(out):
    """Figures of YCSB's report: throughput, run time, transactions (top-level operations),
    statements, errors, p50/p95/p99 in ms (the highest of the operation types: YCSB keeps
    one histogram per type) and {type: {operations, p50_ms, p95_ms, p99_ms}}."""
    rows = {}
    for line in out.splitlines():
        match = re.match(r"^\[([A-Z-]+)\], ([^,]+), ([\d.eE+-]+)\s*$", line.strip())
        if match:
            rows.setdefault(match.group(1), {})[match.group(2)] = float(match.group(3))
    overall = rows.get("OVERALL", {})
    if "Throughput(ops/sec)" not in overall or "RunTime(ms)" not in overall:
        raise YcsbError("no [OVERALL] figures in YCSB's output:\n%s" % out[-3000:])
    operations = {}
    errors = 0
    for name, values in rows.items():
        if name in ("OVERALL", "CLEANUP") or name.startswith("TOTAL_GC") or \
                "Operations" not in values:
            continue
        if name.endswith("-FAILED"):
            errors += values["Operations"]
            continue
        errors += sum(v for k, v in values.items() if k.startswith("Return=") and
                      k not in ("Return=OK", "Return=NOT_FOUND"))
        operations[name] = {"operations": values["Operations"]}
        for p in (50, 95, 99):
            us = values.get("%dthPercentileLatency(us)" % p)
            operations[name]["p%d_ms" % p] = None if us is None else us / 1000.0
    if not operations:
        raise YcsbError("no operations in YCSB's output:\n%s" % out[-3000:])
    throughput = overall["Throughput(ops/sec)"]
    run_time_s = overall["RunTime(ms)"] / 1000.0
    worst = {}
    for p in (50, 95, 99):
        values = [o["p%d_ms" % p] for o in operations.values() if o["p%d_ms" % p] is not None]
        worst["p%d_ms" % p] = max(values) if values else None
    return dict(worst, throughput=throughput, run_time_s=run_time_s,
                transactions=round(throughput * run_time_s),
                statements=sum(o["operations"] for n, o in operations.items()
                               if n in STATEMENT_OPERATIONS),
                errors=errors, operations=operations)


def current_throughput(out):
    """The last status line's current ops/s (`... 10 sec: 1234 operations; 123.4 current
    ops/sec; ...`), or None."""
    found = re.findall(r"(\d+) sec: \d+ operations; ([\d.]+) current ops/sec", out)
    return float(found[-1][1]) if found else None
