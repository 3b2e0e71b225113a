"""The local provider: the installer's whole flow on one Linux machine, for tests. Each
"VM" is a network namespace duo-<vm name> with one veth (eth0, an address of the
cluster's private subnet that exists only inside these namespaces) whose peer is a
port of the bridge br0 in a namespace of its own, duo-<cluster>-net; nothing is added to
the machine's own namespace, so the cluster's traffic never leaves the namespaces. An
nftables table `inet duodb_sg` in each VM namespace is the security group: SSH only from
the admin CIDR, 1186, the data node port and 3306 only from the cluster's subnet,
everything else dropped. `ip netns exec` replaces ssh; <local-dir>/<vm name>/ stands for
the VM's file system (/opt/duodb, /var/lib/duodb, /etc/duodb under it). There is no
systemd inside: the daemons run as background processes whose pid files the installer
reads. destroy kills every process inside the namespaces, deletes them (which deletes
the veths and nftables tables in them) and removes <local-dir>. Needs root, iproute2
and nft. Not thread-safe.
"""

import os
import shutil
import sys
import time

from .. import plan as plan_mod
from ..hosts import NetnsHost
from ..install import VAR
from ..runner import StepError
from ..services import LocalProcesses
from . import Vm

BRIDGE = "br0"
VM_NIC = "eth0"
FIRST_HOST_NUMBER = 10
STOP_TIMEOUT_S = 20
MARKER = ".duodb-local-cluster"


class LocalProvider:
    services = LocalProcesses()

    def __init__(self, options, plan, runner):
        self.options = options
        self.plan = plan
        self.runner = runner
        self.cluster = plan.cluster
        self.local_dir = os.path.abspath(options.local_dir or
                                         os.path.join("/tmp/duodb-local", self.cluster))
        self.subnet = options.local_subnet  # "a.b.c": a /24 inside the namespaces only
        self.net_namespace = "duo-%s-net" % self.cluster
        self.smoke_python = sys.executable

    # --- names -----------------------------------------------------------------------
    def namespace(self, vm_name):
        return "duo-" + vm_name

    def bridge_port(self, index):
        return "p%d" % index

    def address(self, index):
        return "%s.%d" % (self.subnet, FIRST_HOST_NUMBER + index)

    def root(self, vm_name):
        return os.path.join(self.local_dir, vm_name)

    def data_dir_of(self, name):
        return self.root(name) + VAR

    def indexed_nodes(self):
        return list(enumerate(self.plan.nodes()))

    # --- queries ---------------------------------------------------------------------
    def namespaces(self):
        out = self.runner.query(["ip", "netns", "list"], "list network namespaces",
                                "run as root", empty="", json_out=False) or ""
        return {line.split()[0] for line in out.splitlines() if line.strip()}

    def ours(self, namespaces):
        prefix = "duo-%s-" % self.cluster
        return sorted(ns for ns in namespaces if ns.startswith(prefix))

    def check_tools(self):
        if self.runner.dry_run:
            return
        if os.geteuid() != 0:
            raise StepError("the local provider needs root (network namespaces, nftables)",
                            "run it as root")
        for tool, package in (("ip", "iproute2"), ("nft", "nftables")):
            if shutil.which(tool) is None:
                raise StepError("`%s` is not installed" % tool,
                                "apt-get install %s" % package)

    # --- infrastructure ------------------------------------------------------------
    def ensure_infrastructure(self):
        self.check_tools()
        if not self.runner.dry_run:
            os.makedirs(self.local_dir, exist_ok=True)
            with open(os.path.join(self.local_dir, MARKER), "w") as f:
                f.write(self.cluster + "\n")
        if self.net_namespace in self.namespaces():
            return
        ns = self.net_namespace
        fix = "run destroy, then deploy again"
        self.runner.run(["ip", "netns", "add", ns], "create the network namespace", fix)
        self.runner.run(["ip", "-n", ns, "link", "add", BRIDGE, "type", "bridge"],
                        "create the bridge", fix)
        self.runner.run(["ip", "-n", ns, "link", "set", BRIDGE, "up"], "start the bridge", fix)

    def security_group(self):
        """The nftables rule set of every "VM": the cloud providers' firewall rules."""
        ports = ", ".join(str(p) for p in plan_mod.CLUSTER_PORTS)
        return ("table inet duodb_sg\n"
                "flush table inet duodb_sg\n"
                "table inet duodb_sg {\n"
                "  chain input {\n"
                "    type filter hook input priority 0; policy drop;\n"
                "    iif \"lo\" accept\n"
                "    ct state established,related accept\n"
                "    icmp type echo-request accept\n"
                "    ip saddr %s tcp dport %d accept\n"
                "    ip saddr %s.0/24 tcp dport { %s } accept\n"
                "  }\n"
                "}\n" % (self.options.admin_cidr, plan_mod.SSH_PORT, self.subnet, ports))

    def vm_complete(self, ns, index):
        out = self.runner.run(["ip", "-n", ns, "-4", "-o", "addr", "show", "dev", VM_NIC],
                              "read the VM's address", check=False)
        return out is not None and (self.address(index) + "/") in out

    def create_vm(self, index, node):
        ns, net = self.namespace(node.name), self.net_namespace
        port = self.bridge_port(index)
        fix = "run destroy, then deploy again"
        self.runner.run(["ip", "netns", "add", ns], "create namespace %s" % ns, fix)
        self.runner.run(["ip", "-n", net, "link", "add", port, "type", "veth", "peer", "name",
                         VM_NIC, "netns", ns], "create the veth of %s" % node.name, fix)
        self.runner.run(["ip", "-n", net, "link", "set", port, "master", BRIDGE, "up"],
                        "connect %s to the bridge" % node.name, fix)
        self.runner.run(["ip", "-n", ns, "addr", "add", self.address(index) + "/24", "dev",
                         VM_NIC], "address %s" % node.name, fix)
        for nic in ("lo", VM_NIC):
            self.runner.run(["ip", "-n", ns, "link", "set", nic, "up"],
                            "start %s of %s" % (nic, node.name), fix)

    def ensure_vms(self):
        existing = self.namespaces()
        for index, node in self.indexed_nodes():
            ns = self.namespace(node.name)
            if ns in existing and not self.vm_complete(ns, index):
                # Left half made by a failed run: made again from scratch.
                self.runner.run(["ip", "netns", "del", ns], "remove half-made %s" % ns)
                self.runner.run(["ip", "-n", self.net_namespace, "link", "del",
                                 self.bridge_port(index)], "remove its bridge port", check=False)
                existing.discard(ns)
            if ns not in existing:
                self.create_vm(index, node)
            self.runner.run(["ip", "netns", "exec", ns, "nft", "-f", "-"],
                            "install the security group of %s" % node.name,
                            "check that nft works inside a namespace",
                            input_text=self.security_group())
            if not self.runner.dry_run:
                os.makedirs(self.root(node.name), exist_ok=True)
        return self.discover_vms(all_planned=True)

    def discover_vms(self, all_planned=False):
        present = self.namespaces()
        return {node.name: Vm(node.name, node.role, self.address(index), "",
                              self.namespace(node.name))
                for index, node in self.indexed_nodes()
                if all_planned or self.namespace(node.name) in present}

    def host(self, vm, vms):
        del vms
        return NetnsHost(self.runner, vm.name, self.namespace(vm.name), self.root(vm.name))

    def describe(self):
        """What tests and `status --json` need to reach the "VMs"."""
        return {"bridge_namespace": self.net_namespace, "bridge": BRIDGE,
                "local_dir": self.local_dir,
                "vms": [{"name": node.name, "role": node.role, "node_id": node.node_id,
                         "namespace": self.namespace(node.name), "address": self.address(index),
                         "bridge_port": self.bridge_port(index), "root": self.root(node.name)}
                        for index, node in self.indexed_nodes()]}

    # --- destroy -------------------------------------------------------------------
    def pids_in(self, namespaces):
        pids = set()
        for ns in namespaces:
            out = self.runner.run(["ip", "netns", "pids", ns], "list processes in %s" % ns,
                                  check=False) or ""
            pids |= {int(p) for p in out.split() if p.isdigit()}
        return pids

    def destroy(self):
        self.check_tools()
        namespaces = self.ours(self.namespaces())
        for sig, wait_s in (("TERM", STOP_TIMEOUT_S), ("KILL", STOP_TIMEOUT_S)):
            pids = self.pids_in(namespaces)
            if not pids:
                break
            self.runner.run(["kill", "-" + sig] + sorted(pids),
                            "stop the processes in the namespaces", check=False)
            deadline = time.time() + wait_s
            while not self.runner.dry_run and self.pids_in(namespaces) and time.time() < deadline:
                time.sleep(0.2)
        left = self.pids_in(namespaces)
        if left:
            raise StepError("processes %s still run in the cluster's namespaces" % sorted(left),
                            "kill them, then run destroy again")
        for ns in namespaces:  # their veths and nftables tables go with them
            self.runner.run(["ip", "netns", "del", ns], "delete namespace %s" % ns,
                            "run destroy again")
        if os.path.exists(os.path.join(self.local_dir, MARKER)):
            self.runner.run(["rm", "-rf", "--one-file-system", self.local_dir],
                            "remove %s" % self.local_dir)
        elif os.path.isdir(self.local_dir) and not self.runner.dry_run:
            self.runner.say("left %s in place: it has no %s marker, so it is not ours" %
                            (self.local_dir, MARKER))
