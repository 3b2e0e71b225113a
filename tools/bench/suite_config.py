"""duo-bench-suite's configuration file, in the manner of RonDB's autobench.conf: one
`NAME = value` per line, `#` starts a comment, lists are comma-separated. Every name has
a default (below); a file names only what it changes. Unknown names are errors, so a typo
does not silently run the default.
"""

import re

SQL_TARGETS = ("duo", "mariadb", "galera")
TARGETS = SQL_TARGETS + ("redis",)
SYSBENCH_WORKLOADS = ("oltp_point_select", "oltp_read_only", "oltp_read_write",
                      "oltp_write_only", "oltp_update_index", "oltp_insert",
                      "oltp_batch_point_select")
YCSB_WORKLOADS = ("a", "b", "c", "f")
NATIVE_WORKLOADS = ("insert", "read", "update")

# name: (kind, default)
SETTINGS = {
    "TARGETS": ("targets", "duo,mariadb,galera,redis"),
    "DATA_MEMORY_MB": ("int", 1024),  # DataMemory per DuoDB data node
    "SQLD_COUNT": ("int", 1),  # duo_sqld of DuoDB (1 or 2); clients spread over them
    "SYSBENCH_WORKLOADS": ("sysbench", ",".join(SYSBENCH_WORKLOADS)),
    "SYSBENCH_THREADS": ("ints", "4,16"),
    "SYSBENCH_TABLES": ("int", 2),
    "SYSBENCH_TABLE_SIZE": ("int", 50000),
    "SYSBENCH_SECONDS": ("int", 20),
    "SYSBENCH_WARMUP_SECONDS": ("int0", 2),
    "BATCH_KEYS": ("int", 100),  # keys per IN list of oltp_batch_point_select
    "YCSB_WORKLOADS": ("ycsb", ",".join(YCSB_WORKLOADS)),
    "YCSB_THREADS": ("ints", "8"),
    "YCSB_RECORDS": ("int", 100000),
    "YCSB_SECONDS": ("int", 30),
    "NATIVE_WORKLOADS": ("native", ",".join(NATIVE_WORKLOADS)),
    "NATIVE_THREADS": ("int", 2),  # duo_bench threads
    "NATIVE_PARALLELISM": ("int", 8),  # duo_bench transactions in flight per thread
    "NATIVE_BATCH": ("int", 100),  # duo_bench operations per transaction
    "NATIVE_ROWS": ("int", 500000),
    "NATIVE_SECONDS": ("int", 10),
    "REDIS_REQUESTS": ("int", 2000000),  # redis-benchmark -n per test
}


class ConfigError(Exception):
    pass


def _value(name, kind, text):
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    allowed = {"targets": TARGETS, "sysbench": SYSBENCH_WORKLOADS, "ycsb": YCSB_WORKLOADS,
               "native": NATIVE_WORKLOADS}.get(kind)
    if allowed is not None:
        for item in items:
            if item not in allowed:
                raise ConfigError("%s: unknown %s (one of %s)" % (name, item, ", ".join(allowed)))
        return items
    try:
        numbers = [int(t) for t in items]
    except ValueError:
        raise ConfigError("%s: not a number: %s" % (name, text))
    if not numbers or min(numbers) < (0 if kind == "int0" else 1):
        raise ConfigError("%s: must be %s" % (name, "0 or more" if kind == "int0" else
                                              "positive"))
    if kind == "ints":
        return numbers
    if len(numbers) != 1:
        raise ConfigError("%s: one number" % name)
    return numbers[0]


def parse_config(text, source="config"):
    """{NAME: value} of a configuration file's text, defaults filled in."""
    given = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.match(r"^([A-Z][A-Z0-9_]*)\s*=\s*(.*)$", line)
        if not match:
            raise ConfigError("%s:%d: not NAME = value: %s" % (source, number, line))
        name, value = match.groups()
        if name not in SETTINGS:
            raise ConfigError("%s:%d: unknown setting %s" % (source, number, name))
        given[name] = value
    config = {}
    for name, (kind, default) in SETTINGS.items():
        config[name] = _value(name, kind, given.get(name, default))
    if config["SQLD_COUNT"] > 2:
        raise ConfigError("SQLD_COUNT: 1 or 2 (the launcher's config.ini has API slots for "
                          "the others)")
    return config


def load_config(path):
    with open(path) as f:
        return parse_config(f.read(), path)


def expected_results(config):
    """[(target, kind, workload, threads)] that a complete run of `config` measures."""
    expected = []
    for target in config["TARGETS"]:
        if target in SQL_TARGETS:
            for workload in config["SYSBENCH_WORKLOADS"]:
                for threads in config["SYSBENCH_THREADS"]:
                    expected.append((target, "sysbench", workload, threads))
            for workload in config["YCSB_WORKLOADS"]:
                for threads in config["YCSB_THREADS"]:
                    expected.append((target, "ycsb", "ycsb_" + workload, threads))
        if target in ("duo", "redis"):
            for workload in config["NATIVE_WORKLOADS"]:
                expected.append((target, "native", "native_" + workload,
                                 config["NATIVE_THREADS"]))
    return expected
