"""Google Cloud with `gcloud compute`: a custom-mode VPC network <cluster>-net with one
subnet <cluster>-subnet (10.42.1.0/24) in the region, two firewall rules (SSH from the
admin CIDR to the VMs with the network tag duodb-<cluster>-jump — mgmd and sqld; SSH,
1186, the data node port and 3306 from VMs with the network tag duodb-<cluster> to the
same; GCP denies all other ingress), and the VMs, labelled duodb-cluster=<cluster> and
duodb-role=<role> (Debian 12 image family for the architecture; data nodes with
--no-address). Networks, subnets and firewall rules carry no labels in GCP: they are
found by their names, which all start with the cluster name. destroy deletes the VMs,
the firewall rules, the subnet and the network. Not thread-safe.
"""

from .. import plan as plan_mod
from . import CLUSTER_TAG, ROLE_TAG, Vm
from .cloud import CloudProvider, INTERNAL_PORTS


class GcpProvider(CloudProvider):
    def __init__(self, options, plan, runner):
        super().__init__(options, plan, runner)
        self.region = options.region
        self.zone = options.zone
        self.project = ["--project", options.project] if options.project else []
        self.network = self.cluster + "-net"
        self.subnet = self.cluster + "-subnet"
        self.tag = "duodb-" + self.cluster
        self.jump_tag = self.tag + "-jump"

    def gcloud(self, *args):
        return ["gcloud", "compute"] + list(args) + self.project + ["--format", "json"]

    def listed(self, kind, filter_text):
        found = self.runner.query(self.gcloud(*(kind + ["list", "--filter", filter_text])),
                                  "list " + " ".join(kind),
                                  "check `gcloud auth login` and --project", empty=[])
        return found or []

    fix_quota = "check the project's quota and permissions in this region"

    def firewall_rules(self):
        return [(self.cluster + "-allow-ssh-admin",
                 ["--allow", "tcp:%d" % plan_mod.SSH_PORT, "--source-ranges",
                  self.options.admin_cidr, "--target-tags", self.jump_tag]),
                (self.cluster + "-allow-cluster",
                 ["--allow", ",".join("tcp:%d" % p for p in INTERNAL_PORTS),
                  "--source-tags", self.tag, "--target-tags", self.tag])]

    def ensure_infrastructure(self):
        if not self.listed(["networks"], "name=" + self.network):
            self.runner.run(self.gcloud("networks", "create", self.network,
                                        "--subnet-mode", "custom", "--description",
                                        "%s=%s" % (CLUSTER_TAG, self.cluster)),
                            "create the network", self.fix_quota, json_out=True)
        if not self.listed(["networks", "subnets"], "name=" + self.subnet):
            self.runner.run(self.gcloud("networks", "subnets", "create", self.subnet,
                                        "--network", self.network, "--region", self.region,
                                        "--range", plan_mod.SUBNET_CIDR),
                            "create the subnet", self.fix_quota, json_out=True)
        existing = {r["name"] for r in self.listed(["firewall-rules"],
                                                   "network~%s$" % self.network)}
        for name, options in self.firewall_rules():
            if name not in existing:
                self.runner.run(self.gcloud("firewall-rules", "create", name, "--network",
                                            self.network, "--direction", "INGRESS", *options),
                                "add firewall rule %s" % name, self.fix_quota, json_out=True)

    def discover_vms(self):
        vms = {}
        for vm in self.listed(["instances"], "labels.%s=%s" % (CLUSTER_TAG, self.cluster)):
            nic = (vm.get("networkInterfaces") or [{}])[0]
            access = (nic.get("accessConfigs") or [{}])[0]
            vms[vm["name"]] = Vm(vm["name"], (vm.get("labels") or {}).get(ROLE_TAG, ""),
                                 nic.get("networkIP", ""), access.get("natIP", ""),
                                 vm.get("zone", "").rsplit("/", 1)[-1])
        return vms

    def ensure_vms(self):
        existing = self.discover_vms()
        key = self.read_public_key()
        for node in self.missing_nodes(existing):
            answer = self.runner.run(
                self.gcloud("instances", "create", node.name, "--zone", self.zone,
                            "--machine-type", self.plan.vm_types[node.role],
                            "--image-family", plan_mod.GCP_IMAGE_FAMILY[self.plan.arch],
                            "--image-project", "debian-cloud",
                            "--boot-disk-size", "%dGB" % self.plan.disk_gb,
                            "--subnet", self.subnet,
                            *([] if node.public else ["--no-address"]),
                            "--tags", ",".join([self.tag] + ([self.jump_tag] if node.public
                                                             else [])),
                            "--labels", "%s=%s,%s=%s" % (CLUSTER_TAG, self.cluster,
                                                         ROLE_TAG, node.role),
                            "--metadata", "ssh-keys=%s:%s" % (self.user, key)),
                "create VM %s" % node.name,
                "check the quota for %s in %s (or pick another --%s-type)" %
                (self.plan.vm_types[node.role], self.zone, node.role), json_out=True,
                placeholder=[{"name": node.name, "networkInterfaces": [
                    {"networkIP": "<private ip of %s>" % node.name,
                     "accessConfigs": [{"natIP": "<public ip of %s>" % node.name}]
                     if node.public else []}]}])
            nic = answer[0]["networkInterfaces"][0]
            access = (nic.get("accessConfigs") or [{}])[0]
            existing[node.name] = Vm(node.name, node.role, nic.get("networkIP", ""),
                                     access.get("natIP", ""), self.zone)
        return existing

    def destroy(self):
        fix = "run destroy again, or delete what is left in the console (names start with %s-)" \
            % self.cluster
        by_zone = {}
        for vm in self.discover_vms().values():
            by_zone.setdefault(vm.id or self.zone, []).append(vm.name)
        for zone, names in sorted(by_zone.items()):
            self.runner.run(self.gcloud("instances", "delete", *sorted(names), "--zone", zone,
                                        "--quiet"), "delete the VMs", fix, json_out=True)
        for rule in self.listed(["firewall-rules"], "network~%s$" % self.network):
            self.runner.run(self.gcloud("firewall-rules", "delete", rule["name"], "--quiet"),
                            "delete firewall rule %s" % rule["name"], fix, json_out=True)
        if self.listed(["networks", "subnets"], "name=" + self.subnet):
            self.runner.run(self.gcloud("networks", "subnets", "delete", self.subnet,
                                        "--region", self.region, "--quiet"),
                            "delete the subnet", fix, json_out=True)
        if self.listed(["networks"], "name=" + self.network):
            self.runner.run(self.gcloud("networks", "delete", self.network, "--quiet"),
                            "delete the network", fix, json_out=True)
