"""Azure with the `az` CLI: everything lives in one resource group named after the
cluster (tagged duodb-cluster=<cluster>): a virtual network (10.42.0.0/16) with one
subnet (10.42.1.0/24), an application security group that every VM's NIC joins, a
network security group on the subnet (SSH from the admin CIDR; SSH, 1186, the data node
port and 3306 from the application security group; everything else from the virtual
network denied, overriding Azure's default AllowVnetInBound), and the VMs (Debian 12
image for the architecture; data nodes with no public IP). destroy deletes the resource
group, which deletes everything in it. Not thread-safe.
"""

from .. import plan as plan_mod
from . import CLUSTER_TAG, ROLE_TAG, Vm
from .cloud import CloudProvider, INTERNAL_PORTS


class AzureProvider(CloudProvider):
    def __init__(self, options, plan, runner):
        super().__init__(options, plan, runner)
        self.location = options.region
        self.zone = options.zone
        self.group = self.cluster
        self.vnet = self.cluster + "-vnet"
        self.subnet = self.cluster + "-subnet"
        self.nsg = self.cluster + "-nsg"
        self.asg = self.cluster + "-asg"

    def az(self, *args):
        return ["az"] + list(args) + ["--output", "json"]

    def in_group(self, *args):
        return self.az(*(list(args) + ["--resource-group", self.group]))

    def names(self, *listing):
        found = self.runner.query(self.in_group(*listing), "list " + " ".join(listing[:2]),
                                  "check `az login` and the subscription", empty=[])
        return {item["name"] for item in (found or [])}

    fix_quota = "check the subscription's quota and permissions in this location"

    def ensure_infrastructure(self):
        groups = self.runner.query(self.az("group", "list", "--tag",
                                           "%s=%s" % (CLUSTER_TAG, self.cluster)),
                                   "list resource groups", "check `az login`", empty=[])
        if not any(g["name"] == self.group for g in (groups or [])):
            self.runner.run(self.az("group", "create", "--name", self.group, "--location",
                                    self.location, "--tags", "%s=%s" % (CLUSTER_TAG, self.cluster)),
                            "create the resource group", self.fix_quota, json_out=True)
        tags = ["--tags", "%s=%s" % (CLUSTER_TAG, self.cluster)]
        if self.vnet not in self.names("network", "vnet", "list"):
            self.runner.run(self.in_group("network", "vnet", "create", "--name", self.vnet,
                                          "--location", self.location, "--address-prefixes",
                                          plan_mod.NETWORK_CIDR, "--subnet-name", self.subnet,
                                          "--subnet-prefixes", plan_mod.SUBNET_CIDR, *tags),
                            "create the virtual network", self.fix_quota, json_out=True)
        if self.asg not in self.names("network", "asg", "list"):
            self.runner.run(self.in_group("network", "asg", "create", "--name", self.asg,
                                          "--location", self.location, *tags),
                            "create the application security group", self.fix_quota,
                            json_out=True)
        if self.nsg not in self.names("network", "nsg", "list"):
            self.runner.run(self.in_group("network", "nsg", "create", "--name", self.nsg,
                                          "--location", self.location, *tags),
                            "create the network security group", self.fix_quota, json_out=True)
        existing_rules = self.names("network", "nsg", "rule", "list", "--nsg-name", self.nsg)
        for rule in self.nsg_rules():
            if rule[0] not in existing_rules:
                self.runner.run(self.in_group("network", "nsg", "rule", "create", "--nsg-name",
                                              self.nsg, "--name", *rule),
                                "add firewall rule %s" % rule[0], self.fix_quota, json_out=True)
        self.runner.run(self.in_group("network", "vnet", "subnet", "update", "--vnet-name",
                                      self.vnet, "--name", self.subnet,
                                      "--network-security-group", self.nsg),
                        "put the network security group on the subnet", self.fix_quota,
                        json_out=True)

    def nsg_rules(self):
        """(name, options...) of each inbound rule, in priority order."""
        common = ["--direction", "Inbound", "--protocol", "Tcp", "--source-port-ranges", "*"]
        return [
            ("allow-ssh-admin", "--priority", "100", "--access", "Allow", *common,
             "--source-address-prefixes", self.options.admin_cidr,
             "--destination-port-ranges", str(plan_mod.SSH_PORT)),
            ("allow-cluster", "--priority", "110", "--access", "Allow", *common,
             "--source-asgs", self.asg, "--destination-asgs", self.asg,
             "--destination-port-ranges", *[str(p) for p in INTERNAL_PORTS]),
            ("deny-vnet-other", "--priority", "4000", "--access", "Deny", "--direction",
             "Inbound", "--protocol", "*", "--source-port-ranges", "*",
             "--source-address-prefixes", "VirtualNetwork", "--destination-port-ranges", "*"),
        ]

    def discover_vms(self):
        found = self.runner.query(self.in_group("vm", "list", "--show-details"), "list VMs",
                                  "check `az login`", empty=[])
        vms = {}
        for vm in found or []:
            tags = vm.get("tags") or {}
            vms[vm["name"]] = Vm(vm["name"], tags.get(ROLE_TAG, ""),
                                 (vm.get("privateIps") or "").split(",")[0],
                                 (vm.get("publicIps") or "").split(",")[0], vm.get("id", ""))
        return vms

    def ensure_vms(self):
        existing = self.discover_vms()
        for node in self.missing_nodes(existing):
            public = (["--public-ip-sku", "Standard"] if node.public
                      else ["--public-ip-address", ""])
            zone = ["--zone", self.zone] if self.zone else []
            answer = self.runner.run(
                self.in_group("vm", "create", "--name", node.name, "--location", self.location,
                              *zone, "--image", plan_mod.AZURE_IMAGE[self.plan.arch],
                              "--size", self.plan.vm_types[node.role],
                              "--admin-username", self.user,
                              "--ssh-key-values", self.public_key,
                              "--vnet-name", self.vnet, "--subnet", self.subnet,
                              "--nsg", "", "--asgs", self.asg, *public,
                              "--os-disk-size-gb", str(self.plan.disk_gb),
                              "--tags", "%s=%s" % (CLUSTER_TAG, self.cluster),
                              "%s=%s" % (ROLE_TAG, node.role)),
                "create VM %s" % node.name,
                "check the quota for %s in %s (or pick another --%s-type)" %
                (self.plan.vm_types[node.role], self.location, node.role), json_out=True,
                placeholder={"privateIpAddress": "<private ip of %s>" % node.name,
                             "publicIpAddress": "<public ip of %s>" % node.name
                             if node.public else ""})
            existing[node.name] = Vm(node.name, node.role, answer.get("privateIpAddress", ""),
                                     answer.get("publicIpAddress", "") or "", answer.get("id", ""))
        return existing

    def destroy(self):
        groups = self.runner.query(self.az("group", "list", "--tag",
                                           "%s=%s" % (CLUSTER_TAG, self.cluster)),
                                   "list resource groups", "check `az login`", empty=[])
        for group in groups or []:
            self.runner.run(self.az("group", "delete", "--name", group["name"], "--yes"),
                            "delete resource group %s" % group["name"],
                            "run destroy again, or delete the resource group in the portal")
