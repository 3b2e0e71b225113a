#!/usr/bin/env python3
"""End-to-end test of the cloud installer with its `local` provider (CTest label
`cluster`; about a minute): deploys the DuoDB tarball into network namespaces — 1 mgmd,
2 data nodes, 1 sqld, each a "VM" with its own address behind a bridge in a namespace of
its own and an nftables security group — and then, all through the sqld it started,
from inside a namespace:
  1. runs SQL (a table, rows written and read back);
  2. SIGKILLs data node 2's processes: the cluster keeps serving (writes and reads);
  3. runs deploy again: idempotent (no namespace made again, the tarball not copied
     again), it starts only the killed data node, which rejoins by a node restart;
  4. cuts data node 2's link (its bridge port down): node 1, which still reaches mgmd,
     is granted the arbitration and keeps serving; node 2 shuts itself down;
  5. destroys the cluster and checks that no namespace, veth, nftables table, process
     or directory of it is left, and that the machine's own namespace never had an
     address or route of the cluster's subnet (its traffic stayed in the namespaces).
Prints the deploy time. Without root, `ip` or `nft` it exits 77 (CTest skip). Every
wait is bounded; the cluster is destroyed on any failure and on SIGTERM/SIGINT.

A deploy of a corrupt tarball comes first: it stops with what to fix, and the deploy
above resumes from what it left (the namespaces), so step 5 also shows that a failed
run leaves nothing that destroy does not remove.

Usage: local_deploy_test.py --build-dir build/release [--source-dir .] [--keep]
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
INSTALLER = os.path.join(os.path.dirname(HERE), "duo-cloud-installer.sh")
SMOKE_CLIENT = os.path.join(os.path.dirname(HERE), "duo_cloud", "smoke_client.py")
sys.path.insert(0, HERE)
from tarball_for_tests import tarball_for_tests  # noqa: E402

SKIP_EXIT_CODE = 77
DEPLOY_TIMEOUT_S = 300
SQL_RETRY_S = 60
NODE_EXIT_TIMEOUT_S = 60


class TestFailure(Exception):
    pass


class Terminated(Exception):
    pass


def check(condition, message):
    if not condition:
        raise TestFailure(message)


def log(text):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), text), flush=True)


def run(argv, timeout=60, input_text=None):
    return subprocess.run(argv, input=input_text, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=timeout)


def eventually(predicate, timeout_s, what):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise TestFailure("timed out after %ds waiting for %s" % (timeout_s, what))


def skip_reason():
    if os.geteuid() != 0:
        return "not root (network namespaces and nftables need CAP_NET_ADMIN / CAP_SYS_ADMIN)"
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            return "`%s` is not installed" % tool
    probe = "duoprobe%d" % os.getpid()
    if run(["ip", "netns", "add", probe]).returncode != 0:
        return "cannot create a network namespace"
    try:
        proc = run(["ip", "netns", "exec", probe, "nft", "add", "table", "inet", "probe"])
        if proc.returncode != 0:
            return "nft does not work inside a namespace: %s" % proc.stdout.strip()
    finally:
        run(["ip", "netns", "del", probe])
    return None


def free_subnet():
    """A 10.x.y /24 that the machine's own namespace does not use (so that the check that
    it never appears there means something)."""
    in_use = run(["ip", "-4", "addr"]).stdout + run(["ip", "-4", "route", "show", "table",
                                                      "all"]).stdout
    rng = random.Random(os.getpid() ^ int(time.time()))
    for _ in range(200):
        subnet = "10.%d.%d" % (rng.randrange(100, 250), rng.randrange(0, 256))
        if subnet + "." not in in_use:
            return subnet
    raise TestFailure("no free 10.x.y.0/24")


class LocalCluster:
    def __init__(self, tarball, work_dir):
        self.name = "lt%d" % (os.getpid() % 100000)
        self.local_dir = os.path.join(work_dir, "vms")
        self.subnet = free_subnet()
        self.tarball = tarball
        self.layout = None

    def installer(self, command, *extra, timeout=DEPLOY_TIMEOUT_S):
        argv = [INSTALLER, command, "--provider", "local", "--cluster", self.name,
                "--local-dir", self.local_dir, "--local-subnet", self.subnet] + list(extra)
        return run(argv, timeout=timeout)

    def deploy(self, tarball=None):
        proc = self.deploy_run(tarball or self.tarball)
        check(proc.returncode == 0, "deploy failed (exit %d):\n%s" %
              (proc.returncode, proc.stdout[-6000:]))
        status = self.installer("status", "--json", timeout=60)
        check(status.returncode == 0, "status failed:\n%s" % status.stdout)
        self.layout = json.loads(status.stdout)["local"]
        return proc.stdout

    def deploy_run(self, tarball):
        return self.installer("deploy", "--tarball", tarball, "--wait-timeout", "120",
                              # Fast failure detection and a short wait for an arbitrator
                              # that cannot be reached, so step 4 takes seconds.
                              "--config-param", "HeartbeatIntervalDbDb=500",
                              "--config-param", "ArbitrationTimeout=3000",
                              "--config-param", "TimeBetweenGlobalCheckpoints=500")

    def vm(self, name_suffix):
        return next(v for v in self.layout["vms"] if v["name"] == "%s-%s" % (self.name,
                                                                             name_suffix))

    def sql(self, statement):
        """Runs one statement through the sqld, from inside the sqld's namespace (the
        mariadb client if installed, else the installer's smoke client)."""
        sqld = self.vm("sqld1")
        if shutil.which("mariadb"):
            argv = ["mariadb", "-h", sqld["address"], "-P", "3306", "-u", "root", "--batch",
                    "--skip-column-names", "--connect-timeout=10", "-e", statement]
        else:
            argv = [sys.executable, SMOKE_CLIENT, sqld["address"], "3306", "root", statement]
        return run(["ip", "netns", "exec", sqld["namespace"]] + argv, timeout=60)

    def sql_ok(self, statement, what):
        """Runs the statement, retrying (bounded) while the cluster answers with errors
        (a failover in progress); returns its output."""
        last = []

        def attempt():
            proc = self.sql(statement)
            last[:] = [proc.stdout]
            return (proc.stdout,) if proc.returncode == 0 else None
        try:
            return eventually(attempt, SQL_RETRY_S, what)[0]
        except TestFailure:
            raise TestFailure("%s: `%s` kept failing: %s" % (what, statement, last[0] if last
                                                               else ""))

    def mgm_status(self):
        mgmd = self.vm("mgmd1")
        proc = run(["ip", "netns", "exec", mgmd["namespace"],
                    os.path.join(mgmd["root"], "opt/duodb/bin/duo_mgm"), "-c",
                    "%s:1186" % mgmd["address"], "-e", "all status"], timeout=30)
        return proc.stdout

    def pids(self, vm):
        proc = run(["ip", "netns", "pids", vm["namespace"]])
        return [int(p) for p in proc.stdout.split() if p.isdigit()]

    def cluster_log(self):
        path = os.path.join(self.vm("mgmd1")["root"], "var/lib/duodb/mgmd/ndb_49_cluster.log")
        with open(path, errors="replace") as f:
            return f.read()

    def destroy(self):
        return self.installer("destroy", timeout=180)


def root_namespace_state():
    return {"links": sorted(line.split(":")[1].strip().split("@")[0]
                            for line in run(["ip", "-o", "link"]).stdout.splitlines()),
            "tables": run(["nft", "list", "tables"]).stdout}


def processes_under(path):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if path.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def connects(namespace, address, port):
    code = ("import socket,sys\ntry:\n socket.create_connection((%r, %d), timeout=2).close()\n"
            "except OSError:\n sys.exit(1)" % (address, port))
    return run(["ip", "netns", "exec", namespace, sys.executable, "-c", code]).returncode == 0


def check_security_group(cluster):
    """The nftables rule set lets the cluster's ports through and drops any other: a
    listener on a port outside the rule set in data node 1's namespace is not reachable
    from the sqld's namespace, while the data node's transporter port is."""
    data1, sqld = cluster.vm("data1"), cluster.vm("sqld1")
    listener = subprocess.Popen(
        ["ip", "netns", "exec", data1["namespace"], sys.executable, "-c",
         "import socket,time\ns=socket.socket()\ns.bind(('0.0.0.0', 15555))\ns.listen(1)\n"
         "print('listening', flush=True)\ntime.sleep(30)"], stdout=subprocess.PIPE, text=True)
    try:
        check(listener.stdout.readline().strip() == "listening", "test listener started")
        check(connects(sqld["namespace"], data1["address"], 11860),
              "the data node port 11860 is reachable from the sqld VM")
        check(not connects(sqld["namespace"], data1["address"], 15555),
              "port 15555 (not in the security group) is reachable from the sqld VM")
        check(connects(data1["namespace"], "127.0.0.1", 15555),
              "the test listener answers inside its own VM")
    finally:
        listener.kill()
        listener.wait(timeout=10)
    log("security group: cluster port open, other port dropped")


def failed_deploy_resumes(cluster, work_dir):
    """A deploy that fails half-way (a corrupt tarball: the namespaces exist, unpacking
    fails) stops with what to fix and the destroy command; the next deploy resumes."""
    corrupt = os.path.join(work_dir, "corrupt.tar.gz")
    with open(corrupt, "wb") as f:
        f.write(b"not a tarball")
    proc = cluster.deploy_run(corrupt)
    check(proc.returncode == 1, "deploy of a corrupt tarball exits 1, got %d:\n%s" %
          (proc.returncode, proc.stdout[-3000:]))
    check("unpack the tarball" in proc.stdout and "to fix: check the tarball" in proc.stdout
          and "destroy --provider local --cluster %s" % cluster.name in proc.stdout,
          "the failure says what failed, what to fix and how to destroy:\n%s" %
          proc.stdout[-3000:])
    log("a deploy of a corrupt tarball stopped with what to fix")


def scenario(cluster, work_dir):
    failed_deploy_resumes(cluster, work_dir)
    start = time.time()
    output = cluster.deploy()
    deploy_s = time.time() - start
    log("deployed (resumed after the failure) in %.1fs (2 data nodes + mgmd + sqld in "
        "namespaces, subnet %s.0/24)" %
        (deploy_s, cluster.subnet))
    check("hello from duo-cloud-installer" in output, "the smoke query's answer is printed")
    check("ip netns add" not in output, "the deploy after the failed one made no namespace "
          "again:\n%s" % output)
    check("mysql -h %s" % cluster.vm("sqld1")["address"] in output,
          "the connection string names the sqld:\n%s" % output[-2000:])
    roots = run(["ip", "-4", "addr"]).stdout + run(["ip", "-4", "route", "show", "table",
                                                    "all"]).stdout
    check(cluster.subnet + "." not in roots,
          "the machine's own namespace has an address or route of %s.0/24" % cluster.subnet)

    check_security_group(cluster)

    # 1. SQL through the sqld.
    cluster.sql_ok("CREATE DATABASE IF NOT EXISTS e2e", "create database")
    cluster.sql_ok("CREATE TABLE e2e.kv (k INT PRIMARY KEY, v VARCHAR(40))", "create table")
    cluster.sql_ok("INSERT INTO e2e.kv VALUES " + ",".join("(%d,'v%d')" % (i, i)
                                                          for i in range(1, 101)), "insert")
    out = cluster.sql_ok("SELECT COUNT(*), SUM(k) FROM e2e.kv", "count")
    check(out.split() == ["100", "5050"], "100 rows read back, got %r" % out)
    log("SQL through the sqld: 100 rows written and read back")

    # 2. A data node's processes killed: the cluster keeps serving.
    data2 = cluster.vm("data2")
    pids = cluster.pids(data2)
    check(pids, "data node 2 has processes in %s" % data2["namespace"])
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    eventually(lambda: not cluster.pids(data2), 30, "data node 2's processes to die")
    cluster.sql_ok("INSERT INTO e2e.kv VALUES (101, 'written with node 2 dead')",
                   "insert with data node 2 dead")
    out = cluster.sql_ok("SELECT COUNT(*) FROM e2e.kv", "count with data node 2 dead")
    check(out.split() == ["101"], "101 rows with data node 2 dead, got %r" % out)
    log("data node 2 killed (pids %s): the cluster keeps serving" % pids)

    # 3. deploy again: idempotent, and it starts the killed data node (node restart).
    start = time.time()
    output = cluster.deploy()
    check("ip netns add" not in output, "the second deploy made no namespace:\n%s" % output)
    check(len(re.findall(r"^\S+: DuoDB from this tarball already installed$", output, re.M)) == 4,
          "the tarball was not copied again:\n%s" % output)
    running = re.findall(r"^%s-(\w+): .* already running$" % cluster.name, output, re.M)
    check(sorted(running) == ["data1", "mgmd1", "sqld1"],
          "only data node 2 was started (running: %s):\n%s" % (running, output))
    check(cluster.pids(data2), "data node 2 runs again")
    out = cluster.sql_ok("SELECT COUNT(*) FROM e2e.kv", "count after node 2's restart")
    check(out.split() == ["101"], "101 rows after the node restart, got %r" % out)
    log("deploy again: idempotent, data node 2 restarted and rejoined in %.1fs" %
        (time.time() - start))

    # 4. Data node 2's link cut: arbitration lets node 1 (which reaches mgmd) go on.
    log_before = len(cluster.cluster_log())
    run(["ip", "-n", cluster.layout["bridge_namespace"], "link", "set", data2["bridge_port"],
         "down"])
    cut = time.time()
    eventually(lambda: not cluster.pids(data2), NODE_EXIT_TIMEOUT_S,
               "data node 2 to shut down after losing its link")
    log("data node 2 cut off: it shut down after %.1fs" % (time.time() - cut))
    cluster_log = cluster.cluster_log()[log_before:]
    check("Node 1: Arbitration granted: data nodes {1} continue without {2}" in cluster_log,
          "the cluster log records the arbitration for node 1:\n%s" % cluster_log[-3000:])
    cluster.sql_ok("INSERT INTO e2e.kv VALUES (102, 'written after the split')",
                   "insert after the split")
    out = cluster.sql_ok("SELECT COUNT(*) FROM e2e.kv", "count after the split")
    check(out.split() == ["102"], "102 rows after the split, got %r" % out)
    # Not checked: that mgmd shows node 2 gone. Its management session was cut
    # silently and mgmd has no keepalive on it, so it shows node 2 started until TCP
    # gives up on the session (minutes).
    status = cluster.mgm_status()
    check("Node 1: started" in status, "mgmd shows node 1 started:\n%s" % status)
    log("arbitration: node 1 granted, keeps serving; node 2 stopped")
    return deploy_s


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--source-dir", default=os.path.dirname(os.path.dirname(HERE)))
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    options = parser.parse_args()
    reason = skip_reason()
    if reason:
        print("SKIP: %s" % reason, flush=True)
        return SKIP_EXIT_CODE

    def on_signal(signum, frame):
        raise Terminated("signal %d" % signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    work_dir = tempfile.mkdtemp(prefix="duo_cloud_local_")
    before = root_namespace_state()
    cluster = None
    failed = False
    try:
        tarball = tarball_for_tests(os.path.abspath(options.build_dir),
                                    os.path.abspath(options.source_dir), work_dir)
        log("tarball %s" % tarball)
        cluster = LocalCluster(tarball, work_dir)
        scenario(cluster, work_dir)
    except (TestFailure, Terminated, subprocess.TimeoutExpired, OSError) as error:
        failed = True
        log("FAIL: %s" % error)
    finally:
        if cluster is not None:
            proc = cluster.destroy()
            if proc.returncode != 0:
                failed = True
                log("FAIL: destroy exited %d:\n%s" % (proc.returncode, proc.stdout[-3000:]))
            try:
                # 5. Nothing left.
                left_ns = [ns for ns in run(["ip", "netns", "list"]).stdout.split()
                           if ns.startswith("duo-%s-" % cluster.name)]
                check(not left_ns, "namespaces left: %s" % left_ns)
                after = root_namespace_state()
                # Only names the local provider uses count: other tests running in
                # parallel (netns_split_*) add and remove links of their own here.
                new_links = set(after["links"]) - set(before["links"])
                ours = sorted(link for link in new_links
                              if re.match(r"^(p\d+|br0|eth0)$", link))
                check(not ours, "links left in the machine's namespace: %s" % ours)
                check("duodb_sg" not in after["tables"], "an nftables table is left: %s" %
                      after["tables"])
                left = processes_under(cluster.local_dir)
                check(not left, "processes left: %s" % left)
                check(not os.path.exists(cluster.local_dir), "%s left" % cluster.local_dir)
                log("destroyed: no namespace, veth, nftables table, process or directory left")
            except TestFailure as error:
                failed = True
                log("FAIL: %s" % error)
        if options.keep:
            log("kept %s" % work_dir)
        else:
            shutil.rmtree(work_dir, ignore_errors=True)
    print("%d passed, %d failed" % (0 if failed else 1, 1 if failed else 0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
