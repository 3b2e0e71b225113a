"""What the three cloud providers share: ssh to the VMs (data nodes through the mgmd VM
as jump host), systemd services, the same paths on every VM, and the firewall rule set
they all express: SSH only from the admin CIDR (and from inside the cluster, for the
jump hop), the management, data node and SQL ports only from inside the cluster.
"""

import os

from .. import plan as plan_mod
from ..hosts import SshHost
from ..install import VAR
from ..services import SystemdServices

# The ports open between the cluster's VMs: ssh (the jump hop to the data nodes), mgmd,
# the data nodes' transporter port, and MySQL.
INTERNAL_PORTS = (plan_mod.SSH_PORT,) + plan_mod.CLUSTER_PORTS


class CloudProvider:
    services = SystemdServices()

    def __init__(self, options, plan, runner):
        self.options = options
        self.plan = plan
        self.runner = runner
        self.cluster = plan.cluster
        self.user = options.ssh_user
        self.key = options.ssh_key
        self.public_key = options.ssh_key + ".pub"
        self.known_hosts = os.path.join(options.state_dir, "%s-known_hosts" % self.cluster)

    def data_dir_of(self, name):
        del name
        return VAR

    def host(self, vm, vms):
        jump = None
        if not vm.public_ip:
            mgmd = next(v for v in vms.values() if v.role == "mgmd")
            jump = (self.user, mgmd.public_ip)
        return SshHost(self.runner, vm.name, self.user, vm.public_ip or vm.private_ip,
                       self.key, self.known_hosts, jump)

    def read_public_key(self):
        if self.runner.dry_run and not os.path.exists(self.public_key):
            return "<contents of %s>" % self.public_key
        with open(self.public_key) as f:
            return f.read().strip()

    def missing_nodes(self, existing):
        return [n for n in self.plan.nodes() if n.name not in existing]
