#!/usr/bin/env python3
"""A fake cloud for the installer's command tests: stands in for the `aws`, `az`,
`gcloud`, `ssh` and `scp` executables (the test puts wrappers by those names first on
PATH). Every call appends its argv as one JSON line to $FAKE_CLOUD_DIR/calls.jsonl. The
cloud CLIs answer with canned JSON shaped like the real CLIs' output for the calls the
installer makes, and keep the resources they "created" in $FAKE_CLOUD_DIR/state.json, so
that a listing after a create finds it, a delete removes it, and a delete that the real
cloud refuses while something depends on it (a VPC with subnets, a network with
instances ...) fails here too. When $FAKE_CLOUD_FAIL_AT=N, the N-th cloud CLI call fails
(exit 1) without changing anything: the injected failure. ssh answers the installer's
status poll ("Node N: started") and smoke query; scp accepts everything.

Usage (from a wrapper): fake_cloud.py TOOL ARG...
"""

import fcntl
import json
import os
import re
import sys

CLI_TOOLS = ("aws", "az", "gcloud")


class Refused(Exception):
    pass


def parse(tokens):
    """(leading words, {option: [values]}): an option takes every token up to the next
    --option as its values (none for a flag)."""
    words, options, current = [], {}, None
    for token in tokens:
        if token.startswith("--"):
            current = token
            options.setdefault(current, [])
        elif current is None:
            words.append(token)
        else:
            options[current].append(token)
    return words, options


def one(options, name, default=None):
    values = options.get(name)
    return values[0] if values else default


class Cloud:
    def __init__(self, state):
        self.state = state
        self.resources = state.setdefault("resources", [])

    def new_id(self, prefix):
        self.state["next_id"] = self.state.get("next_id", 0) + 1
        return "%s-%04d" % (prefix, self.state["next_id"])

    def add(self, kind, **fields):
        resource = dict(kind=kind, **fields)
        self.resources.append(resource)
        return resource

    def find(self, kind, **match):
        return [r for r in self.resources if r["kind"] == kind and
                all(r.get(k) == v for k, v in match.items())]

    def get(self, kind, **match):
        found = self.find(kind, **match)
        if not found:
            raise Refused("%s %s not found" % (kind, match))
        return found[0]

    def remove(self, resource):
        self.resources.remove(resource)


# --- aws ----------------------------------------------------------------------------
def aws_tags(options):
    spec = one(options, "--tag-specifications", "")
    tags = {}
    inner = spec[spec.find("Tags=[") + 6:spec.rfind("]")]
    for item in inner.split("},{"):
        item = item.strip("{}")
        fields = dict(part.split("=", 1) for part in item.split(",") if "=" in part)
        if "Key" in fields:
            tags[fields["Key"]] = fields.get("Value", "")
    return tags


def aws_tag_list(tags):
    return [{"Key": k, "Value": v} for k, v in tags.items()]


def aws_filtered(cloud, kind, options):
    found = cloud.find(kind)
    for spec in options.get("--filters", []):
        fields = dict(part.split("=", 1) for part in spec.split(",", 1))
        name, values = fields["Name"], fields["Values"].split(",")
        if name.startswith("tag:"):
            found = [r for r in found if r["tags"].get(name[4:]) in values]
        elif name == "instance-state-name":
            found = [r for r in found if r["state"] in values]
    return found


def aws(cloud, tokens):
    words, o = parse(tokens)
    service, op = words[0], words[1]
    if service == "ssm" and op == "get-parameters":
        arch = one(o, "--names").rsplit("/", 1)[-1]
        return {"Parameters": [{"Name": one(o, "--names"), "Value": "ami-debian12-" + arch}]}
    if op == "wait":
        return None
    if op == "describe-vpcs":
        return {"Vpcs": [{"VpcId": r["id"], "Tags": aws_tag_list(r["tags"])}
                         for r in aws_filtered(cloud, "vpc", o)]}
    if op == "create-vpc":
        r = cloud.add("vpc", id=cloud.new_id("vpc"), tags=aws_tags(o), cidr=one(o, "--cidr-block"))
        return {"Vpc": {"VpcId": r["id"], "CidrBlock": r["cidr"]}}
    if op == "delete-vpc":
        vpc = cloud.get("vpc", id=one(o, "--vpc-id"))
        dependants = [r for r in cloud.resources if r.get("vpc") == vpc["id"]]
        if dependants:
            raise Refused("DependencyViolation: %s has dependencies %s" %
                          (vpc["id"], [d["id"] for d in dependants]))
        cloud.remove(vpc)
        return None
    if op == "describe-internet-gateways":
        return {"InternetGateways": [
            {"InternetGatewayId": r["id"],
             "Attachments": [{"VpcId": r["vpc"], "State": "available"}] if r.get("vpc") else []}
            for r in aws_filtered(cloud, "igw", o)]}
    if op == "create-internet-gateway":
        r = cloud.add("igw", id=cloud.new_id("igw"), tags=aws_tags(o))
        return {"InternetGateway": {"InternetGatewayId": r["id"], "Attachments": []}}
    if op == "attach-internet-gateway":
        cloud.get("vpc", id=one(o, "--vpc-id"))
        cloud.get("igw", id=one(o, "--internet-gateway-id"))["vpc"] = one(o, "--vpc-id")
        return None
    if op == "detach-internet-gateway":
        cloud.get("igw", id=one(o, "--internet-gateway-id")).pop("vpc", None)
        return None
    if op == "delete-internet-gateway":
        gateway = cloud.get("igw", id=one(o, "--internet-gateway-id"))
        if gateway.get("vpc"):
            raise Refused("DependencyViolation: gateway still attached")
        cloud.remove(gateway)
        return None
    if op == "describe-subnets":
        return {"Subnets": [{"SubnetId": r["id"], "VpcId": r["vpc"]}
                            for r in aws_filtered(cloud, "subnet", o)]}
    if op == "create-subnet":
        cloud.get("vpc", id=one(o, "--vpc-id"))
        r = cloud.add("subnet", id=cloud.new_id("subnet"), tags=aws_tags(o), vpc=one(o, "--vpc-id"))
        return {"Subnet": {"SubnetId": r["id"], "VpcId": r["vpc"]}}
    if op == "delete-subnet":
        subnet = cloud.get("subnet", id=one(o, "--subnet-id"))
        if cloud.find("instance", subnet=subnet["id"]) or any(
                a["SubnetId"] == subnet["id"] for t in cloud.find("rtb") for a in t["assoc"]):
            raise Refused("DependencyViolation: subnet in use")
        cloud.remove(subnet)
        return None
    if op == "describe-route-tables":
        return {"RouteTables": [{"RouteTableId": r["id"], "Routes": r["routes"],
                                 "Associations": r["assoc"]}
                                for r in aws_filtered(cloud, "rtb", o)]}
    if op == "create-route-table":
        cloud.get("vpc", id=one(o, "--vpc-id"))
        r = cloud.add("rtb", id=cloud.new_id("rtb"), tags=aws_tags(o), vpc=one(o, "--vpc-id"),
                      routes=[], assoc=[])
        return {"RouteTable": {"RouteTableId": r["id"]}}
    if op == "create-route":
        cloud.get("igw", id=one(o, "--gateway-id"))
        cloud.get("rtb", id=one(o, "--route-table-id"))["routes"].append(
            {"DestinationCidrBlock": one(o, "--destination-cidr-block"),
             "GatewayId": one(o, "--gateway-id")})
        return {"Return": True}
    if op == "associate-route-table":
        cloud.get("subnet", id=one(o, "--subnet-id"))
        association = cloud.new_id("rtbassoc")
        cloud.get("rtb", id=one(o, "--route-table-id"))["assoc"].append(
            {"RouteTableAssociationId": association, "SubnetId": one(o, "--subnet-id")})
        return {"AssociationId": association}
    if op == "disassociate-route-table":
        for table in cloud.find("rtb"):
            table["assoc"] = [a for a in table["assoc"]
                              if a["RouteTableAssociationId"] != one(o, "--association-id")]
        return None
    if op == "delete-route-table":
        table = cloud.get("rtb", id=one(o, "--route-table-id"))
        if table["assoc"]:
            raise Refused("DependencyViolation: route table has associations")
        cloud.remove(table)
        return None
    if op == "describe-security-groups":
        return {"SecurityGroups": [{"GroupId": r["id"], "IpPermissions": r["rules"]}
                                   for r in aws_filtered(cloud, "sg", o)]}
    if op == "create-security-group":
        cloud.get("vpc", id=one(o, "--vpc-id"))
        r = cloud.add("sg", id=cloud.new_id("sg"), tags=aws_tags(o), vpc=one(o, "--vpc-id"),
                      rules=[])
        return {"GroupId": r["id"]}
    if op == "authorize-security-group-ingress":
        cloud.get("sg", id=one(o, "--group-id"))["rules"] += json.loads(one(o, "--ip-permissions"))
        return {"Return": True}
    if op == "delete-security-group":
        group = cloud.get("sg", id=one(o, "--group-id"))
        if cloud.find("instance", group=group["id"]):
            raise Refused("DependencyViolation: group in use by instances")
        cloud.remove(group)
        return None
    if op == "describe-key-pairs":
        return {"KeyPairs": [{"KeyName": r["name"], "KeyPairId": r["id"]}
                             for r in aws_filtered(cloud, "key", o)]}
    if op == "import-key-pair":
        r = cloud.add("key", id=cloud.new_id("key"), name=one(o, "--key-name"), tags=aws_tags(o))
        return {"KeyName": r["name"], "KeyPairId": r["id"]}
    if op == "delete-key-pair":
        cloud.remove(cloud.get("key", name=one(o, "--key-name")))
        return None
    if op == "run-instances":
        nic = dict(part.split("=", 1) for part in one(o, "--network-interfaces").split(","))
        cloud.get("subnet", id=nic["SubnetId"])
        cloud.get("sg", id=nic["Groups"])
        cloud.get("key", name=one(o, "--key-name"))
        number = len(cloud.find("instance")) + 1
        r = cloud.add("instance", id=cloud.new_id("i"), tags=aws_tags(o), subnet=nic["SubnetId"],
                      group=nic["Groups"], state="running", type=one(o, "--instance-type"),
                      image=one(o, "--image-id"), private="10.42.1.%d" % (10 + number),
                      public="203.0.113.%d" % number
                      if nic["AssociatePublicIpAddress"] == "true" else "")
        return {"Instances": [aws_instance(r)]}
    if op == "describe-instances":
        return {"Reservations": [{"Instances": [aws_instance(r)]}
                                 for r in aws_filtered(cloud, "instance", o)]}
    if op == "terminate-instances":
        for instance_id in o["--instance-ids"]:
            cloud.remove(cloud.get("instance", id=instance_id))
        return {"TerminatingInstances": [{"InstanceId": i} for i in o["--instance-ids"]]}
    raise Refused("fake aws does not know `%s %s`" % (service, op))


def aws_instance(r):
    answer = {"InstanceId": r["id"], "PrivateIpAddress": r["private"],
              "State": {"Name": r["state"]}, "Tags": aws_tag_list(r["tags"]),
              "InstanceType": r["type"]}
    if r["public"]:
        answer["PublicIpAddress"] = r["public"]
    return answer


# --- az -----------------------------------------------------------------------------
def az_tags(values):
    return dict(v.split("=", 1) for v in values or [])


def az(cloud, tokens):
    words, o = parse(tokens)
    path = " ".join(words)
    group = one(o, "--resource-group")
    if path == "group list":
        key, value = one(o, "--tag").split("=", 1)
        return [{"name": r["name"], "tags": r["tags"]} for r in cloud.find("group")
                if r["tags"].get(key) == value]
    if path == "group create":
        if not cloud.find("group", name=one(o, "--name")):
            cloud.add("group", name=one(o, "--name"), tags=az_tags(o.get("--tags")),
                      location=one(o, "--location"))
        return {"name": one(o, "--name"), "properties": {"provisioningState": "Succeeded"}}
    if path == "group delete":
        cloud.remove(cloud.get("group", name=one(o, "--name")))
        for r in [r for r in cloud.resources if r.get("group") == one(o, "--name")]:
            cloud.remove(r)
        return None
    cloud.get("group", name=group)
    kinds = {"network vnet": "vnet", "network asg": "asg", "network nsg": "nsg",
             "network nsg rule": "nsg-rule", "vm": "vm"}
    verb = words[-1]
    kind = kinds.get(" ".join(words[:-1]))
    if verb == "list" and kind == "vm":
        return [{"name": r["name"], "id": "/vm/" + r["name"], "tags": r["tags"],
                 "privateIps": r["private"], "publicIps": r["public"]}
                for r in cloud.find("vm", group=group)]
    if verb == "list" and kind == "nsg-rule":
        return [{"name": r["name"]} for r in cloud.find("nsg-rule", group=group,
                                                         nsg=one(o, "--nsg-name"))]
    if verb == "list" and kind:
        return [{"name": r["name"]} for r in cloud.find(kind, group=group)]
    if path == "network nsg rule create":
        cloud.get("nsg", group=group, name=one(o, "--nsg-name"))
        if "--source-asgs" in o:
            for name in o["--source-asgs"] + o["--destination-asgs"]:
                cloud.get("asg", group=group, name=name)
        cloud.add("nsg-rule", group=group, nsg=one(o, "--nsg-name"), name=one(o, "--name"),
                  options=o)
        return {"name": one(o, "--name")}
    if path == "network vnet subnet update":
        cloud.get("nsg", group=group, name=one(o, "--network-security-group"))
        cloud.get("vnet", group=group, name=one(o, "--vnet-name"))["subnet_nsg"] = \
            one(o, "--network-security-group")
        return {"name": one(o, "--name")}
    if path == "vm create":
        vnet = cloud.get("vnet", group=group, name=one(o, "--vnet-name"))
        if one(o, "--subnet") != vnet["subnet"]:
            raise Refused("subnet %s not in %s" % (one(o, "--subnet"), vnet["name"]))
        cloud.get("asg", group=group, name=one(o, "--asgs"))
        number = len(cloud.find("vm")) + 1
        public = "" if o.get("--public-ip-address") == [""] else "203.0.113.%d" % number
        r = cloud.add("vm", group=group, name=one(o, "--name"), tags=az_tags(o.get("--tags")),
                      size=one(o, "--size"), image=one(o, "--image"),
                      private="10.42.1.%d" % (10 + number), public=public)
        return {"id": "/vm/" + r["name"], "privateIpAddress": r["private"],
                "publicIpAddress": r["public"], "powerState": "VM running"}
    if verb == "create" and kind:
        fields = {"subnet": one(o, "--subnet-name")} if kind == "vnet" else {}
        cloud.add(kind, group=group, name=one(o, "--name"), tags=az_tags(o.get("--tags")), **fields)
        return {"name": one(o, "--name")}
    raise Refused("fake az does not know `%s`" % path)


# --- gcloud -------------------------------------------------------------------------
def gcloud(cloud, tokens):
    words, o = parse(tokens)
    assert words[0] == "compute"
    verbs = ("list", "create", "delete")
    at = next(i for i, w in enumerate(words) if w in verbs)
    kind, verb, names = " ".join(words[1:at]), words[at], words[at + 1:]
    if verb == "list":
        text = one(o, "--filter", "")
        if kind == "instances":
            key, value = text[len("labels."):].split("=", 1)
            return [gcp_instance(r) for r in cloud.find("instances")
                    if r["labels"].get(key) == value]
        if kind == "firewall-rules":
            network = text[len("network~"):].rstrip("$")
            return [{"name": r["name"], "network": r["network"]}
                    for r in cloud.find(kind) if r["network"] == network]
        return [{"name": r["name"]} for r in cloud.find(kind) if r["name"] == text[len("name="):]]
    if verb == "create":
        name = names[0]
        if cloud.find(kind, name=name):
            raise Refused("already exists: %s %s" % (kind, name))
        if kind == "networks subnets":
            cloud.get("networks", name=one(o, "--network"))
            cloud.add(kind, name=name, network=one(o, "--network"), region=one(o, "--region"))
            return [{"name": name}]
        if kind == "firewall-rules":
            cloud.get("networks", name=one(o, "--network"))
            cloud.add(kind, name=name, network=one(o, "--network"), options=o)
            return [{"name": name}]
        if kind == "instances":
            subnet = cloud.get("networks subnets", name=one(o, "--subnet"))
            number = len(cloud.find("instances")) + 1
            labels = dict(p.split("=", 1) for p in one(o, "--labels").split(","))
            r = cloud.add(kind, name=name, zone=one(o, "--zone"), labels=labels,
                          network=subnet["network"], subnet=subnet["name"],
                          tags=one(o, "--tags").split(","), type=one(o, "--machine-type"),
                          image=one(o, "--image-family"), private="10.42.1.%d" % (10 + number),
                          public="" if "--no-address" in o else "203.0.113.%d" % number)
            return [gcp_instance(r)]
        cloud.add(kind, name=name)
        return [{"name": name}]
    if verb == "delete":
        for name in names:
            resource = cloud.get(kind, name=name)
            if kind == "networks":
                users = [r["name"] for r in cloud.resources if r.get("network") == name]
                if users:
                    raise Refused("network %s is in use by %s" % (name, users))
            if kind == "networks subnets" and cloud.find("instances", subnet=name):
                raise Refused("subnet %s is in use" % name)
            cloud.remove(resource)
        return []
    raise Refused("fake gcloud does not know `%s %s`" % (kind, verb))


def gcp_instance(r):
    return {"name": r["name"], "zone": "projects/p/zones/" + r["zone"], "labels": r["labels"],
            "tags": {"items": r["tags"]}, "machineType": r["type"],
            "networkInterfaces": [{"networkIP": r["private"], "accessConfigs":
                                   [{"natIP": r["public"]}] if r["public"] else []}]}


# --- ssh / scp ----------------------------------------------------------------------
def ssh(tokens):
    command = tokens[-1]
    text = sys.stdin.read() if not sys.stdin.isatty() else ""
    tee = re.search(r"sudo tee (\S+) >/dev/null$", command)
    if tee:  # kept per host so tests can read what the installer wrote
        written = os.path.join(os.environ["FAKE_CLOUD_DIR"], "written", tokens[-2],
                               tee.group(1).lstrip("/"))
        os.makedirs(os.path.dirname(written), exist_ok=True)
        with open(written, "w") as f:
            f.write(text)
    if "duo_mgm" in command and "all status" in command:
        print("\n".join("Node %d: started (DuoDB-0.1.0)" % i for i in range(1, 49)))
    elif "duo_smoke_client.py" in command:
        print("hello from duo-cloud-installer")
    return 0


def main():
    tool, tokens = sys.argv[1], sys.argv[2:]
    directory = os.environ["FAKE_CLOUD_DIR"]
    with open(os.path.join(directory, "lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(os.path.join(directory, "calls.jsonl"), "a") as calls:
            calls.write(json.dumps([tool] + tokens) + "\n")
        if tool == "ssh":
            return ssh(tokens)
        if tool == "scp":
            return 0
        state_path = os.path.join(directory, "state.json")
        state = {}
        if os.path.exists(state_path):
            with open(state_path) as f:
                state = json.load(f)
        state["cli_calls"] = state.get("cli_calls", 0) + 1
        fail_at = int(os.environ.get("FAKE_CLOUD_FAIL_AT", "0"))
        cloud = Cloud(state)
        try:
            if state["cli_calls"] == fail_at:
                raise Refused("injected failure at call %d" % fail_at)
            answer = {"aws": aws, "az": az, "gcloud": gcloud}[tool](cloud, tokens)
            code = 0
        except Refused as error:
            print("%s: error: %s" % (tool, error), file=sys.stderr)
            answer, code = None, 1
        if code == 0:
            with open(state_path + ".tmp", "w") as f:
                json.dump(state, f, indent=1)
            os.replace(state_path + ".tmp", state_path)
        else:  # count the call, change nothing else
            with open(state_path) if os.path.exists(state_path) else open(os.devnull) as f:
                text = f.read()
            old = json.loads(text) if text else {}
            old["cli_calls"] = state["cli_calls"]
            with open(state_path + ".tmp", "w") as f:
                json.dump(old, f, indent=1)
            os.replace(state_path + ".tmp", state_path)
        if answer is not None:
            print(json.dumps(answer, indent=1))
        return code


if __name__ == "__main__":
    sys.exit(main())
