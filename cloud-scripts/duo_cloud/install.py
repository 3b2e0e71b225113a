"""Installing and starting DuoDB on the VMs, the same for every provider: the tarball
unpacked into /opt/duodb (skipped when the same tarball is already there), config.ini
written on the mgmd VM from the VMs' private addresses, then each role started in order
— mgmd, the data nodes, the sqlds — waiting for the data nodes to report started
(`duo_mgm -e "all status"`, bounded), a smoke query through each sqld, and the
connection strings printed. Not thread-safe.
"""

import hashlib
import os
import re
import shlex
import time

from . import plan as plan_mod
from .runner import StepError, quote

OPT = "/opt/duodb"
VAR = "/var/lib/duodb"
CONFIG = "/etc/duodb/config.ini"
STARTED_RE = re.compile(r"^Node (\d+): started", re.M)
POLL_INTERVAL_S = 2
SMOKE_SQL = ("CREATE DATABASE IF NOT EXISTS duodb_smoke",
             "CREATE TABLE IF NOT EXISTS duodb_smoke.t (id INT PRIMARY KEY, v VARCHAR(32))",
             "REPLACE INTO duodb_smoke.t VALUES (1, 'hello from duo-cloud-installer')",
             "SELECT v FROM duodb_smoke.t WHERE id = 1")
SMOKE_CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "smoke_client.py")


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def role_dir(node):
    """A role's directory under /var/lib/duodb, as the packaged units name it."""
    return {"mgmd": "mgmd", "data": "datad", "sqld": "sqld-%d" % node.node_id}[node.role]


def role_argv(role, node, host, mgm_address, address, foreground):
    """The command line of one role's process on its VM."""
    bin_dir = host.path(OPT + "/bin")
    connect = "--ndb-connectstring=%s:%d" % (mgm_address, plan_mod.MGM_PORT)
    fg = ["--foreground"] if foreground else []
    if role == "mgmd":
        return ([bin_dir + "/duo_mgmd", "--config-file=" + host.path(CONFIG),
                 "--configdir=" + host.path(VAR + "/mgmd"), "--initial",
                 "--ndb-nodeid=%d" % node.node_id] + fg)
    if role == "data":
        return [bin_dir + "/duo_datad", connect, "--ndb-nodeid=%d" % node.node_id] + fg
    return ([bin_dir + "/duo_sqld", connect, "--ndb-nodeid=%d" % node.node_id,
             "--port=%d" % plan_mod.SQL_PORT, "--bind-address=" + address,
             "--datadir=" + host.path(VAR + "/" + role_dir(node))] + fg)


def pid_file(role, node, host):
    """Where the self-daemonizing binaries write their pid (the local provider's)."""
    return {"mgmd": host.path(VAR + "/mgmd/ndb_%d.pid" % node.node_id),
            "data": host.path(VAR + "/datad/ndb_%d.pid" % node.node_id),
            "sqld": host.path(VAR + "/%s/duo_sqld.pid" % role_dir(node))}[role]


class Installer:
    def __init__(self, runner, plan, services, tarball, wait_timeout_s, python="python3"):
        self.runner = runner
        self.plan = plan
        self.services = services
        self.tarball = tarball
        self.wait_timeout_s = wait_timeout_s
        self.python = python

    def install_tarball(self, host):
        digest = "<sha256 of %s>" % self.tarball if self.runner.dry_run else \
            file_sha256(self.tarball)
        marker = host.path(OPT + "/.tarball-sha256")
        current = host.run("cat %s 2>/dev/null || true" % shlex.quote(marker),
                           "read the installed tarball's checksum")
        if current is not None and current.strip() == digest:
            self.runner.say("%s: DuoDB from this tarball already installed" % host.name)
            return
        staged = host.path("/tmp/duodb.tar.gz")
        host.put_file(self.tarball, staged, "copy the tarball")
        s = host.sudo
        host.run(
            "{s}mkdir -p {opt} {var} {etc} && {s}tar -xzf {t} -C {opt} --strip-components=1 && "
            "rm -f {t} && echo {d} | {s}tee {m} >/dev/null".format(
                s=s, opt=shlex.quote(host.path(OPT)), var=shlex.quote(host.path(VAR)),
                etc=shlex.quote(os.path.dirname(host.path(CONFIG))), t=shlex.quote(staged),
                d=shlex.quote(digest), m=shlex.quote(marker)),
            "unpack the tarball", "check the tarball (tar -tzf) and the VM's free disk space")
        if s:  # cloud VMs: the daemons run as their own system user
            host.run("id -u duodb >/dev/null 2>&1 || sudo useradd --system --home-dir %s "
                     "--shell /usr/sbin/nologin duodb; sudo chown -R duodb: %s" % (VAR, VAR),
                     "create the duodb user")

    def write_config(self, host, addresses, data_dir_of):
        text = plan_mod.config_ini(self.plan, addresses, data_dir_of)
        host.put_text(host.path(CONFIG), text, "write config.ini")
        return text

    def start_role(self, host, node, mgm_address, address):
        description = {"mgmd": "DuoDB management server (node %d)",
                       "data": "DuoDB data node %d",
                       "sqld": "DuoDB SQL server (node %d)"}[node.role] % node.node_id
        data_dir = shlex.quote(host.path(VAR + "/" + role_dir(node)))
        # On a cloud VM the daemons run as the duodb user, which must own their directory.
        host.run("sudo install -d -o duodb -g duodb %s" % data_dir if host.sudo
                 else "mkdir -p %s" % data_dir, "create the data directory")
        argv = role_argv(node.role, node, host, mgm_address, address, self.services.foreground)
        env = {"DUODB_CONNECTSTRING": "%s:%d" % (mgm_address, plan_mod.MGM_PORT),
               "DUODB_SQL_BIND": address, "DUODB_SQL_PORT": str(plan_mod.SQL_PORT)}
        self.services.start(host, node.role, node.node_id, argv, env, description,
                            pid_file(node.role, node, host))

    def wait_data_nodes(self, mgm_host, mgm_address):
        """Polls `duo_mgm -e "all status"` on the mgmd VM until every data node is started."""
        expected = {n.node_id for n in self.plan.of_role("data")}
        command = "%s -c %s:%d -e %s" % (shlex.quote(mgm_host.path(OPT + "/bin/duo_mgm")),
                                         mgm_address, plan_mod.MGM_PORT,
                                         shlex.quote("all status"))
        if self.runner.dry_run:
            mgm_host.run(command, "cluster status")
            return
        deadline = time.time() + self.wait_timeout_s
        last = None
        while True:
            out = mgm_host.run(command, "cluster status", check=False, echo=last is None) or ""
            started = {int(n) for n in STARTED_RE.findall(out)}
            if started >= expected:
                self.runner.say("all %d data nodes started" % len(expected))
                return
            state = out.strip().replace("\n", "; ")
            if state != last:
                self.runner.say("waiting for the data nodes: %s" % (state or "mgmd not answering"))
                last = state
            if time.time() > deadline:
                raise StepError("the data nodes did not all start within %d s (started: %s)" %
                                (self.wait_timeout_s, sorted(started)),
                                "read the data node logs (%s/datad/ndb_<id>_out.log on each data "
                                "VM) and the cluster log (%s/mgmd/ndb_%d_cluster.log)" %
                                (VAR, VAR, plan_mod.MGM_NODE_ID))
            time.sleep(POLL_INTERVAL_S)

    def smoke_query(self, host, address):
        """Runs SMOKE_SQL through the sqld on `address` from its own VM (retried while the
        sqld is still starting, bounded). Returns the answer of the last statement."""
        client = host.path("/tmp/duo_smoke_client.py")
        host.put_file(SMOKE_CLIENT, client, "copy the smoke client")
        command = "%s %s %s %d root %s" % (self.python, shlex.quote(client), address,
                                            plan_mod.SQL_PORT, quote(SMOKE_SQL))
        if self.runner.dry_run:
            host.run(command, "smoke query")
            return ""
        deadline = time.time() + self.wait_timeout_s
        attempts = 0
        while True:
            out = host.run(command, "smoke query", check=False, echo=attempts == 0)
            attempts += 1
            if out is not None and "hello from duo-cloud-installer" in out:
                self.runner.say("%s: smoke query answered: %s" % (host.name, out.strip()))
                return out.strip()
            if time.time() > deadline:
                raise StepError("the smoke query through %s:%d did not succeed within %d s" %
                                (address, plan_mod.SQL_PORT, self.wait_timeout_s),
                                "read %s/sqld/duo_sqld_out.log on %s" % (VAR, host.name))
            time.sleep(POLL_INTERVAL_S)
