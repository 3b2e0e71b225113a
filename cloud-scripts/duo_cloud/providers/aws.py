"""AWS with the `aws` CLI (v2), every resource tagged duodb-cluster=<cluster>:
a VPC (10.42.0.0/16), an internet gateway attached to it, a subnet (10.42.1.0/24) in the
zone, a route table with the default route to the gateway associated with the subnet,
one security group (SSH from the admin CIDR; SSH, 1186, the data node port and 3306
from members of the group itself), an imported key pair, and the instances (Debian 12
AMI from the public SSM parameter for the architecture; data nodes without a public IP).
destroy terminates the instances (and waits), then deletes the key pair, security group,
route table (after its associations), subnet, gateway (after detaching) and VPC, each
found by the tag. Not thread-safe.
"""

import json

from .. import plan as plan_mod
from ..runner import StepError
from . import CLUSTER_TAG, ROLE_TAG, Vm
from .cloud import CloudProvider, INTERNAL_PORTS

LIVE_STATES = "pending,running,stopping,stopped"


class AwsProvider(CloudProvider):
    def __init__(self, options, plan, runner):
        super().__init__(options, plan, runner)
        self.region = options.region
        self.zone = options.zone

    # --- helpers -------------------------------------------------------------------
    def ec2(self, *args):
        return ["aws", "ec2"] + list(args) + ["--region", self.region, "--output", "json"]

    def tags(self, resource_type, name, role=None):
        tags = [{"Key": CLUSTER_TAG, "Value": self.cluster}, {"Key": "Name", "Value": name}]
        if role:
            tags.append({"Key": ROLE_TAG, "Value": role})
        return "ResourceType=%s,Tags=[%s]" % (resource_type, ",".join(
            "{Key=%s,Value=%s}" % (t["Key"], t["Value"]) for t in tags))

    def tag_filter(self):
        return "Name=tag:%s,Values=%s" % (CLUSTER_TAG, self.cluster)

    def describe(self, command, key, extra_filters=()):
        found = self.runner.query(self.ec2(command, "--filters", self.tag_filter(),
                                           *extra_filters),
                                  "list %s" % key, "check `aws configure` and the region",
                                  empty={key: []})
        return (found or {}).get(key, [])

    fix_quota = "check the account's quota and permissions in this region"

    # --- infrastructure ------------------------------------------------------------
    def ensure_infrastructure(self):
        vpcs = self.describe("describe-vpcs", "Vpcs")
        if vpcs:
            self.vpc = vpcs[0]["VpcId"]
        else:
            self.vpc = self.runner.run(
                self.ec2("create-vpc", "--cidr-block", plan_mod.NETWORK_CIDR,
                         "--tag-specifications", self.tags("vpc", self.cluster + "-vpc")),
                "create the VPC", self.fix_quota, json_out=True,
                placeholder={"Vpc": {"VpcId": "<vpc-id>"}})["Vpc"]["VpcId"]
        gateways = self.describe("describe-internet-gateways", "InternetGateways")
        if gateways:
            self.gateway = gateways[0]["InternetGatewayId"]
            attached = [a for a in gateways[0].get("Attachments", []) if a.get("VpcId") == self.vpc]
        else:
            self.gateway = self.runner.run(
                self.ec2("create-internet-gateway", "--tag-specifications",
                         self.tags("internet-gateway", self.cluster + "-igw")),
                "create the internet gateway", self.fix_quota, json_out=True,
                placeholder={"InternetGateway": {"InternetGatewayId": "<igw-id>"}}
            )["InternetGateway"]["InternetGatewayId"]
            attached = []
        if not attached:
            self.runner.run(self.ec2("attach-internet-gateway", "--internet-gateway-id",
                                     self.gateway, "--vpc-id", self.vpc),
                            "attach the internet gateway", self.fix_quota)
        subnets = self.describe("describe-subnets", "Subnets")
        if subnets:
            self.subnet = subnets[0]["SubnetId"]
        else:
            self.subnet = self.runner.run(
                self.ec2("create-subnet", "--vpc-id", self.vpc, "--cidr-block",
                         plan_mod.SUBNET_CIDR, "--availability-zone", self.zone,
                         "--tag-specifications", self.tags("subnet", self.cluster + "-subnet")),
                "create the subnet", "check that --zone %s is in --region %s" %
                (self.zone, self.region), json_out=True,
                placeholder={"Subnet": {"SubnetId": "<subnet-id>"}})["Subnet"]["SubnetId"]
        self.ensure_route_table()
        self.ensure_security_group()
        self.ensure_key_pair()

    def ensure_route_table(self):
        tables = self.describe("describe-route-tables", "RouteTables")
        if tables:
            table = tables[0]
            self.route_table = table["RouteTableId"]
        else:
            table = {}
            self.route_table = self.runner.run(
                self.ec2("create-route-table", "--vpc-id", self.vpc, "--tag-specifications",
                         self.tags("route-table", self.cluster + "-rt")),
                "create the route table", self.fix_quota, json_out=True,
                placeholder={"RouteTable": {"RouteTableId": "<rtb-id>"}}
            )["RouteTable"]["RouteTableId"]
        if not any(r.get("DestinationCidrBlock") == "0.0.0.0/0" for r in table.get("Routes", [])):
            self.runner.run(self.ec2("create-route", "--route-table-id", self.route_table,
                                     "--destination-cidr-block", "0.0.0.0/0",
                                     "--gateway-id", self.gateway),
                            "add the default route", self.fix_quota)
        if not any(a.get("SubnetId") == self.subnet for a in table.get("Associations", [])):
            self.runner.run(self.ec2("associate-route-table", "--route-table-id",
                                     self.route_table, "--subnet-id", self.subnet),
                            "associate the route table", self.fix_quota)

    def ingress_rules(self, group_id):
        """SSH from the admin CIDR; SSH, mgmd, data node and SQL ports from the group."""
        rules = [{"IpProtocol": "tcp", "FromPort": plan_mod.SSH_PORT,
                  "ToPort": plan_mod.SSH_PORT,
                  "IpRanges": [{"CidrIp": self.options.admin_cidr,
                                "Description": "ssh from the admin network"}]}]
        rules += [{"IpProtocol": "tcp", "FromPort": port, "ToPort": port,
                   "UserIdGroupPairs": [{"GroupId": group_id,
                                         "Description": "inside the cluster"}]}
                  for port in INTERNAL_PORTS]
        return rules

    def ensure_security_group(self):
        groups = self.describe("describe-security-groups", "SecurityGroups")
        if groups:
            self.group = groups[0]["GroupId"]
            if groups[0].get("IpPermissions"):
                return
        else:
            self.group = self.runner.run(
                self.ec2("create-security-group", "--group-name", self.cluster + "-cluster",
                         "--description", "DuoDB cluster %s" % self.cluster, "--vpc-id", self.vpc,
                         "--tag-specifications", self.tags("security-group",
                                                           self.cluster + "-cluster")),
                "create the security group", self.fix_quota, json_out=True,
                placeholder={"GroupId": "<sg-id>"})["GroupId"]
        self.runner.run(self.ec2("authorize-security-group-ingress", "--group-id", self.group,
                                 "--ip-permissions", json.dumps(self.ingress_rules(self.group),
                                                                separators=(",", ":"))),
                        "add the firewall rules", self.fix_quota)

    def ensure_key_pair(self):
        self.key_name = self.cluster + "-key"
        if self.describe("describe-key-pairs", "KeyPairs"):
            return
        self.runner.run(self.ec2("import-key-pair", "--key-name", self.key_name,
                                 "--public-key-material", "fileb://" + self.public_key,
                                 "--tag-specifications", self.tags("key-pair", self.key_name)),
                        "import the ssh key", "check --ssh-key (its .pub must exist)",
                        json_out=True)

    # --- VMs -----------------------------------------------------------------------
    def image(self):
        parameter = plan_mod.AWS_AMI_PARAMETER[self.plan.arch]
        answer = self.runner.query(["aws", "ssm", "get-parameters", "--names", parameter,
                                    "--region", self.region, "--output", "json"],
                                   "look up the Debian 12 AMI", "check the region",
                                   empty={"Parameters": [{"Value": "<ami-id>"}]})
        values = (answer or {}).get("Parameters") or []
        if not values:
            raise StepError("no Debian 12 AMI for %s in %s" % (self.plan.arch, self.region),
                            "pick another --region")
        return values[0]["Value"]

    def discover_vms(self):
        found = self.describe("describe-instances", "Reservations",
                              ("Name=instance-state-name,Values=" + LIVE_STATES,))
        vms = {}
        for reservation in found:
            for instance in reservation.get("Instances", []):
                tags = {t["Key"]: t["Value"] for t in instance.get("Tags", [])}
                name = tags.get("Name", instance["InstanceId"])
                vms[name] = Vm(name, tags.get(ROLE_TAG, ""), instance.get("PrivateIpAddress", ""),
                               instance.get("PublicIpAddress", ""), instance["InstanceId"])
        return vms

    def ensure_vms(self):
        existing = self.discover_vms()
        missing = self.missing_nodes(existing)
        if missing:
            ami = self.image()
            created = []
            for node in missing:
                answer = self.runner.run(
                    self.ec2("run-instances", "--image-id", ami, "--count", "1",
                             "--instance-type", self.plan.vm_types[node.role],
                             "--key-name", self.key_name,
                             "--network-interfaces",
                             "DeviceIndex=0,SubnetId=%s,Groups=%s,AssociatePublicIpAddress=%s" %
                             (self.subnet, self.group, "true" if node.public else "false"),
                             "--block-device-mappings",
                             "DeviceName=/dev/xvda,Ebs={VolumeSize=%d,VolumeType=gp3,"
                             "DeleteOnTermination=true}" % self.plan.disk_gb,
                             "--tag-specifications", self.tags("instance", node.name, node.role)),
                    "create VM %s" % node.name,
                    "check the quota for %s in %s (or pick another --%s-type)" %
                    (self.plan.vm_types[node.role], self.region, node.role), json_out=True,
                    placeholder={"Instances": [{"InstanceId": "<id of %s>" % node.name}]})
                created.append(answer["Instances"][0]["InstanceId"])
            self.runner.run(["aws", "ec2", "wait", "instance-running", "--region", self.region,
                             "--instance-ids"] + created, "wait for the VMs to run",
                            "check the instances in the EC2 console")
            existing = self.discover_vms() if not self.runner.dry_run else {}
        return self.with_placeholders(existing)

    def with_placeholders(self, vms):
        for node in self.plan.nodes():
            if node.name not in vms:  # only in a dry run
                vms[node.name] = Vm(node.name, node.role, "<private ip of %s>" % node.name,
                                    "<public ip of %s>" % node.name if node.public else "")
        return vms

    # --- destroy -------------------------------------------------------------------
    def destroy(self):
        fix = "run destroy again; anything left is tagged %s=%s" % (CLUSTER_TAG, self.cluster)
        ids = [vm.id for vm in self.discover_vms().values()]
        if ids:
            self.runner.run(self.ec2("terminate-instances", "--instance-ids", *ids),
                            "terminate the VMs", fix, json_out=True)
            self.runner.run(["aws", "ec2", "wait", "instance-terminated", "--region", self.region,
                             "--instance-ids"] + ids, "wait for the VMs to terminate", fix)
        for pair in self.describe("describe-key-pairs", "KeyPairs"):
            self.runner.run(self.ec2("delete-key-pair", "--key-name", pair["KeyName"]),
                            "delete the key pair", fix)
        for group in self.describe("describe-security-groups", "SecurityGroups"):
            self.runner.run(self.ec2("delete-security-group", "--group-id", group["GroupId"]),
                            "delete the security group", fix)
        for table in self.describe("describe-route-tables", "RouteTables"):
            for association in table.get("Associations", []):
                self.runner.run(self.ec2("disassociate-route-table", "--association-id",
                                         association["RouteTableAssociationId"]),
                                "disassociate the route table", fix)
            self.runner.run(self.ec2("delete-route-table", "--route-table-id",
                                     table["RouteTableId"]), "delete the route table", fix)
        for subnet in self.describe("describe-subnets", "Subnets"):
            self.runner.run(self.ec2("delete-subnet", "--subnet-id", subnet["SubnetId"]),
                            "delete the subnet", fix)
        for gateway in self.describe("describe-internet-gateways", "InternetGateways"):
            for attachment in gateway.get("Attachments", []):
                self.runner.run(self.ec2("detach-internet-gateway", "--internet-gateway-id",
                                         gateway["InternetGatewayId"], "--vpc-id",
                                         attachment["VpcId"]), "detach the gateway", fix)
            self.runner.run(self.ec2("delete-internet-gateway", "--internet-gateway-id",
                                     gateway["InternetGatewayId"]), "delete the gateway", fix)
        for vpc in self.describe("describe-vpcs", "Vpcs"):
            self.runner.run(self.ec2("delete-vpc", "--vpc-id", vpc["VpcId"]),
                            "delete the VPC", fix)
