#!/usr/bin/env python3
"""Command generation tests of the cloud installer (CTest label `unit`): the installer
runs against a fake cloud (fake_cloud.py behind stub `aws`, `az`, `gcloud`, `ssh` and
`scp` executables first on PATH, which record every argv as a JSON line and answer with
canned JSON). Checked, per provider:
  - the golden call sequence of deploy + destroy, per architecture (tests/golden/;
    DUO_UPDATE_GOLDEN=1 rewrites them after a deliberate change);
  - the firewall rules: SSH only from the admin CIDR, the cluster ports only from inside
    the cluster; data nodes without public addresses; the VM types of the architecture;
  - every resource deploy creates is gone after destroy (the fake cloud is empty), and
    each kind of create call has its delete call;
  - a failure injected at each cloud CLI call in turn: deploy stops with what to fix,
    and destroy then leaves nothing behind;
  - re-running deploy creates nothing more; --dry-run runs no command at all.
Plus option validation and the config.ini of a 4-data-node plan.
"""

import contextlib
import functools
import glob
import hashlib
import http.server
import io
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from duo_cloud import main as installer  # noqa: E402
from duo_cloud import plan as plan_mod  # noqa: E402

GOLDEN_DIR = os.path.join(HERE, "golden")
ADMIN_CIDR = "198.51.100.7/32"
CLUSTER = "golden"
CREATE_VERBS = re.compile(r"^(create|run|import|attach|associate|authorize)")


class FakeCloud:
    """A temp directory with the stub executables, the call log and the fake state."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="duo_fake_cloud_")
        self.bin = os.path.join(self.dir, "bin")
        os.makedirs(self.bin)
        for tool in ("aws", "az", "gcloud", "ssh", "scp"):
            path = os.path.join(self.bin, tool)
            with open(path, "w") as f:
                f.write("#!/bin/sh\nexec %s -S -E %s %s \"$@\"\n" %
                        (sys.executable, os.path.join(HERE, "fake_cloud.py"), tool))
            os.chmod(path, 0o755)
        self.key = os.path.join(self.dir, "id_test")
        with open(self.key, "w") as f:
            f.write("private\n")
        with open(self.key + ".pub", "w") as f:
            f.write("ssh-ed25519 AAAATESTKEY test@duodb\n")
        self.tarballs = {}
        for arch, machine in (("x86_64", "x86_64"), ("arm64", "aarch64")):
            self.tarballs[arch] = os.path.join(
                self.dir, "duodb-0.1.0-linux-glibc2.36-%s.tar.gz" % machine)
            with open(self.tarballs[arch], "wb") as f:
                f.write(b"a fixed stand-in: the fake ssh never unpacks it\n")

    def run(self, *args, fail_at=0):
        """Runs the installer in this process with the stubs first on PATH; returns
        (exit code, stdout, stderr)."""
        env = {"PATH": self.bin + os.pathsep + os.environ.get("PATH", ""),
               "FAKE_CLOUD_DIR": self.dir, "FAKE_CLOUD_FAIL_AT": str(fail_at)}
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = installer.main(list(args))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        return code, out.getvalue(), err.getvalue()

    def common(self, provider, arch="x86_64"):
        args = ["--provider", provider, "--cluster", CLUSTER, "--arch", arch,
                "--ssh-key", self.key, "--admin-cidr", ADMIN_CIDR,
                "--state-dir", os.path.join(self.dir, "state"), "--wait-timeout", "5"]
        if provider == "gcp":
            args += ["--project", "duodb-test"]
        return args

    def deploy(self, provider, arch="x86_64", fail_at=0, extra=()):
        return self.run("deploy", *self.common(provider, arch), "--tarball", self.tarballs[arch],
                        *extra, fail_at=fail_at)

    def destroy(self, provider, arch="x86_64"):
        return self.run("destroy", *self.common(provider, arch))

    def calls(self):
        path = os.path.join(self.dir, "calls.jsonl")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [json.loads(line) for line in f]

    def cli_calls(self):
        return [c for c in self.calls() if c[0] in ("aws", "az", "gcloud")]

    def resources(self):
        path = os.path.join(self.dir, "state.json")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return json.load(f).get("resources", [])

    def reset(self):
        for name in ("calls.jsonl", "state.json"):
            path = os.path.join(self.dir, name)
            if os.path.exists(path):
                os.remove(path)
        shutil.rmtree(os.path.join(self.dir, "written"), ignore_errors=True)

    def normalized(self, calls):
        """Calls with this run's temp directory replaced, for the golden files."""
        text = json.dumps(calls)
        return json.loads(text.replace(self.dir, "$FAKE").replace(
            os.path.dirname(HERE), "$CLOUD_SCRIPTS"))

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def verb(call):
    """The operation of a cloud CLI call: `create-vpc`, `vm create`, `instances delete`."""
    words = [w for w in call[1:] if not w.startswith("-")]
    if call[0] == "aws":
        return words[1]
    if call[0] == "az":
        return " ".join(w for w in words[:4] if w in ("group", "network", "vnet", "asg", "nsg",
                                                      "rule", "subnet", "vm", "create", "delete",
                                                      "list", "update"))
    return " ".join(words[1:3] if words[2] in ("create", "delete", "list") else words[1:4])


class ProviderTests:
    """Mixed into one TestCase per provider."""
    provider = None

    def setUp(self):
        self.fake = FakeCloud()

    def tearDown(self):
        self.fake.remove()

    def deploy_ok(self, arch="x86_64"):
        code, out, err = self.fake.deploy(self.provider, arch)
        self.assertEqual(code, 0, "deploy failed:\n%s\n%s" % (out[-3000:], err))
        return out

    def destroy_ok(self, arch="x86_64"):
        code, out, err = self.fake.destroy(self.provider, arch)
        self.assertEqual(code, 0, "destroy failed:\n%s\n%s" % (out[-3000:], err))
        return out

    def check_golden(self, arch):
        self.deploy_ok(arch)
        self.destroy_ok(arch)
        calls = self.fake.normalized(self.fake.calls())
        path = os.path.join(GOLDEN_DIR, "%s-%s.jsonl" % (self.provider, arch))
        if os.environ.get("DUO_UPDATE_GOLDEN"):
            with open(path, "w") as f:
                f.write("".join(json.dumps(c) + "\n" for c in calls))
        with open(path) as f:
            golden = [json.loads(line) for line in f]
        for i, (got, want) in enumerate(zip(calls, golden)):
            self.assertEqual(got, want, "call %d differs from %s" % (i + 1, path))
        self.assertEqual(len(calls), len(golden), "number of calls vs %s" % path)
        self.assertEqual(self.fake.resources(), [], "destroy left resources")

    def test_golden_x86_64(self):
        self.check_golden("x86_64")

    def test_golden_arm64(self):
        self.check_golden("arm64")

    def test_vm_types_and_no_public_data_nodes(self):
        for arch in plan_mod.ARCHITECTURES:
            self.fake.reset()
            self.deploy_ok(arch)
            vms = self.vms()
            self.assertEqual(sorted(vms), ["%s-data1" % CLUSTER, "%s-data2" % CLUSTER,
                                           "%s-mgmd1" % CLUSTER, "%s-sqld1" % CLUSTER])
            for name, vm in vms.items():
                role = {"mgmd": "mgmd", "data": "data", "sqld": "sqld"}[
                    re.sub(r"\d+$", "", name.split("-")[-1])]
                self.assertEqual(vm["type"], plan_mod.VM_TYPES[(self.provider, arch)][role])
                self.assertEqual(bool(vm["public"]), role != "data", name)
            self.destroy_ok(arch)

    def test_units_are_the_packaged_ones_with_one_environment_file_per_vm(self):
        self.deploy_ok()
        written = os.path.join(self.fake.dir, "written")
        envs = sorted(glob.glob(os.path.join(written, "*", "etc/duodb/duodb.env")))
        self.assertEqual(len(envs), 4, envs)  # mgmd, two data nodes, sqld
        configs = glob.glob(os.path.join(written, "*", "etc/duodb/config.ini"))
        self.assertEqual(len(configs), 1)
        with open(configs[0]) as f:
            mgm_host = re.search(r"\[ndb_mgmd\][^\[]*?HostName=(\S+)", f.read()).group(1)
        binds = set()
        for path in envs:
            with open(path) as f:
                env = dict(line.split("=", 1) for line in f.read().splitlines())
            self.assertEqual(env["DUODB_CONNECTSTRING"], "%s:1186" % mgm_host, path)
            self.assertEqual(env["DUODB_SQL_PORT"], "3306")
            binds.add(env["DUODB_SQL_BIND"])
        self.assertEqual(len(binds), 4, "each VM binds its own private address")
        installs = [c for c in self.fake.calls() if c[0] == "ssh" and "systemctl" not in c[-1]
                    and "/etc/systemd/system/" in c[-1]]
        self.assertEqual(len(installs), 4)
        for call in installs:
            self.assertRegex(call[-1], r"^sudo install -m 644 /opt/duodb/share/duodb/systemd/"
                                       r"duodb-(mgmd|datad@|sqld@)\.service /etc/systemd/system/")

    def test_destroy_forgets_the_host_keys(self):
        self.deploy_ok()
        known_hosts = os.path.join(self.fake.dir, "state", "%s-known_hosts" % CLUSTER)
        with open(known_hosts, "w") as f:  # as ssh leaves it
            f.write("203.0.113.1 ssh-ed25519 AAAA\n")
        self.destroy_ok()
        self.assertFalse(os.path.exists(known_hosts))

    def test_every_create_has_its_delete(self):
        self.deploy_ok()
        deploy_calls = self.fake.cli_calls()
        self.assertTrue(self.fake.resources())
        self.destroy_ok()
        destroy_calls = self.fake.cli_calls()[len(deploy_calls):]
        self.assertEqual(self.fake.resources(), [], "destroy left resources")
        created = {verb(c) for c in deploy_calls if CREATE_VERBS.match(verb(c).split()[-1])}
        deleted = {verb(c) for c in destroy_calls}
        for create, delete in self.create_delete_pairs():
            if create in created:
                self.assertIn(delete, deleted, "%s has no %s in destroy" % (create, delete))
        unpaired = created - {c for c, _ in self.create_delete_pairs()}
        self.assertEqual(unpaired, set(), "creates without a known delete")

    def test_failure_at_each_step_leaves_nothing_after_destroy(self):
        self.deploy_ok()
        steps = len(self.fake.cli_calls())
        self.fake.reset()
        for step in range(1, steps + 1):
            self.fake.reset()
            code, out, err = self.fake.deploy(self.provider, fail_at=step)
            self.assertEqual(code, 1, "deploy with a failure at step %d: %s" % (step, err))
            self.assertIn("injected failure", err)
            self.assertIn("to fix:", err, "step %d: no advice:\n%s" % (step, err))
            self.assertIn("destroy --provider %s --cluster %s" % (self.provider, CLUSTER), err)
            code, out, err = self.fake.destroy(self.provider)
            self.assertEqual(code, 0, "destroy after a failure at step %d:\n%s" % (step, err))
            self.assertEqual(self.fake.resources(), [],
                             "failure at step %d: destroy left resources" % step)

    def test_rerun_creates_nothing(self):
        self.deploy_ok()
        first = len(self.fake.cli_calls())
        resources = self.fake.resources()
        self.deploy_ok()
        again = self.fake.cli_calls()[first:]
        creates = [c for c in again if CREATE_VERBS.match(verb(c).split()[-1])]
        self.assertEqual(creates, [], "the second deploy created something")
        self.assertEqual(len(self.fake.resources()), len(resources))
        self.destroy_ok()

    def test_dry_run_runs_nothing(self):
        code, out, err = self.fake.deploy(self.provider, extra=("--dry-run",))
        self.assertEqual(code, 0, err)
        self.assertEqual(self.fake.calls(), [], "a dry run ran commands")
        self.assertFalse(os.path.exists(os.path.join(self.fake.dir, "state")),
                         "a dry run made the state directory")
        printed = [line for line in out.splitlines() if line.startswith("+ ")]
        self.assertGreater(len(printed), 20)
        self.assertTrue(any(self.dry_run_create in line for line in printed), out[:2000])
        self.assertTrue(any("duo_smoke_client.py" in line for line in printed))

    def test_failed_step_says_what_to_fix(self):
        code, out, err = self.fake.run("deploy", *self.fake.common(self.provider)[:-2],
                                       "--tarball", "/nonexistent/duodb.tar.gz")
        self.assertEqual(code, 1)
        self.assertIn("no such file", err)
        self.assertEqual(self.fake.calls(), [])

    def test_tarball_of_the_other_architecture_is_refused(self):
        code, out, err = self.fake.run("deploy", *self.fake.common(self.provider, "arm64"),
                                       "--tarball", self.fake.tarballs["x86_64"])
        self.assertEqual(code, 1)
        self.assertIn("built for x86_64, but --arch is arm64", err)
        self.assertEqual(self.fake.calls(), [])


class AwsTest(ProviderTests, unittest.TestCase):
    provider = "aws"
    dry_run_create = "aws ec2 create-vpc"

    def create_delete_pairs(self):
        return [("create-vpc", "delete-vpc"),
                ("create-internet-gateway", "delete-internet-gateway"),
                ("attach-internet-gateway", "detach-internet-gateway"),
                ("create-subnet", "delete-subnet"), ("create-route-table", "delete-route-table"),
                ("associate-route-table", "disassociate-route-table"),
                ("create-route", "delete-route-table"),
                ("create-security-group", "delete-security-group"),
                ("authorize-security-group-ingress", "delete-security-group"),
                ("import-key-pair", "delete-key-pair"), ("run-instances", "terminate-instances")]

    def vms(self):
        return {r["tags"]["Name"]: {"type": r["type"], "public": r["public"]}
                for r in self.fake.resources() if r["kind"] == "instance"}

    def test_firewall_rules(self):
        self.deploy_ok()
        groups = [r for r in self.fake.resources() if r["kind"] == "sg"]
        self.assertEqual(len(groups), 1)
        group = groups[0]
        from_cidrs = [(rule["FromPort"], ip["CidrIp"]) for rule in group["rules"]
                      for ip in rule.get("IpRanges", [])]
        self.assertEqual(from_cidrs, [(22, ADMIN_CIDR)], "only SSH from the admin CIDR")
        from_group = sorted(rule["FromPort"] for rule in group["rules"]
                            if rule.get("UserIdGroupPairs") == [
                                {"GroupId": group["id"], "Description": "inside the cluster"}])
        self.assertEqual(from_group, [22, 1186, 3306, 11860])
        for rule in group["rules"]:
            self.assertEqual(rule["FromPort"], rule["ToPort"])
        instances = [r for r in self.fake.resources() if r["kind"] == "instance"]
        self.assertTrue(all(i["group"] == group["id"] for i in instances))

    def test_every_resource_is_tagged(self):
        self.deploy_ok()
        for r in self.fake.resources():
            self.assertEqual(r["tags"].get("duodb-cluster"), CLUSTER, r)


class AzureTest(ProviderTests, unittest.TestCase):
    provider = "azure"
    dry_run_create = "az group create"

    def create_delete_pairs(self):
        # Everything lives in the resource group; deleting it deletes all of it.
        return [(c, "group delete") for c in ("group create", "network vnet create",
                                              "network asg create", "network nsg create",
                                              "network nsg rule create", "vm create")]

    def vms(self):
        return {r["name"]: {"type": r["size"], "public": r["public"]}
                for r in self.fake.resources() if r["kind"] == "vm"}

    def test_firewall_rules(self):
        self.deploy_ok()
        rules = {r["name"]: r["options"] for r in self.fake.resources() if r["kind"] == "nsg-rule"}
        self.assertEqual(sorted(rules), ["allow-cluster", "allow-ssh-admin", "deny-vnet-other"])
        ssh = rules["allow-ssh-admin"]
        self.assertEqual((ssh["--source-address-prefixes"], ssh["--destination-port-ranges"],
                          ssh["--access"]), ([ADMIN_CIDR], ["22"], ["Allow"]))
        cluster = rules["allow-cluster"]
        self.assertEqual(cluster["--source-asgs"], [CLUSTER + "-asg"])
        self.assertEqual(cluster["--destination-asgs"], [CLUSTER + "-asg"])
        self.assertEqual(sorted(cluster["--destination-port-ranges"], key=int),
                         ["22", "1186", "3306", "11860"])
        deny = rules["deny-vnet-other"]
        self.assertEqual((deny["--access"], deny["--source-address-prefixes"]),
                         (["Deny"], ["VirtualNetwork"]))
        self.assertGreater(int(deny["--priority"][0]), int(cluster["--priority"][0]))
        vnet = next(r for r in self.fake.resources() if r["kind"] == "vnet")
        self.assertEqual(vnet.get("subnet_nsg"), CLUSTER + "-nsg", "the NSG guards the subnet")


class GcpTest(ProviderTests, unittest.TestCase):
    provider = "gcp"
    dry_run_create = "gcloud compute networks create"

    def create_delete_pairs(self):
        return [("networks create", "networks delete"),
                ("networks subnets create", "networks subnets delete"),
                ("firewall-rules create", "firewall-rules delete"),
                ("instances create", "instances delete")]

    def vms(self):
        return {r["name"]: {"type": r["type"], "public": r["public"]}
                for r in self.fake.resources() if r["kind"] == "instances"}

    def test_firewall_rules(self):
        self.deploy_ok()
        rules = {r["name"]: r["options"] for r in self.fake.resources()
                 if r["kind"] == "firewall-rules"}
        ssh = rules[CLUSTER + "-allow-ssh-admin"]
        self.assertEqual((ssh["--allow"], ssh["--source-ranges"], ssh["--target-tags"]),
                         (["tcp:22"], [ADMIN_CIDR], ["duodb-%s-jump" % CLUSTER]))
        cluster = rules[CLUSTER + "-allow-cluster"]
        self.assertEqual(cluster["--allow"], ["tcp:22,tcp:1186,tcp:11860,tcp:3306"])
        self.assertEqual(cluster["--source-tags"], ["duodb-" + CLUSTER])
        self.assertNotIn("--source-ranges", cluster)
        self.assertEqual(len(rules), 2)
        for vm in (r for r in self.fake.resources() if r["kind"] == "instances"):
            self.assertIn("duodb-" + CLUSTER, vm["tags"])
            self.assertEqual("duodb-%s-jump" % CLUSTER in vm["tags"], bool(vm["public"]))


class OptionTests(unittest.TestCase):
    def run_installer(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = installer.main(list(args))
        return code, out.getvalue(), err.getvalue()

    def test_data_nodes_come_in_pairs(self):
        code, _, err = self.run_installer("deploy", "--provider", "aws", "--cluster", "c1",
                                          "--data-nodes", "3", "--dry-run")
        self.assertEqual(code, 64)
        self.assertIn("node groups of 2", err)

    def test_cluster_name_is_checked(self):
        code, _, err = self.run_installer("deploy", "--provider", "gcp", "--cluster", "Bad_Name",
                                          "--dry-run")
        self.assertEqual(code, 64)
        self.assertIn("--cluster", err)

    def test_cloud_deploy_needs_admin_cidr(self):
        code, _, err = self.run_installer("deploy", "--provider", "azure", "--cluster", "c1",
                                          "--tarball", "x.tar.gz", "--dry-run")
        self.assertEqual(code, 1)
        self.assertIn("--admin-cidr", err)

    def test_local_dry_run_prints_namespaces_and_rule_sets(self):
        code, out, err = self.run_installer("deploy", "--provider", "local", "--cluster", "c1",
                                            "--tarball", "x.tar.gz", "--dry-run",
                                            "--local-dir", "/nonexistent/c1")
        self.assertEqual(code, 0, err)
        self.assertIn("+ ip netns add duo-c1-net", out)
        self.assertIn("+ ip -n duo-c1-net link add p1 type veth peer name eth0 netns duo-c1-data1",
                      out)
        self.assertIn("+ ip netns exec duo-c1-data2 nft -f -", out)
        self.assertFalse(os.path.exists("/nonexistent/c1"))

    def test_tarball_url_is_downloaded_and_checked(self):
        served = tempfile.mkdtemp(prefix="duo_served_")
        state = tempfile.mkdtemp(prefix="duo_state_")
        try:
            with open(os.path.join(served, "duodb.tar.gz"), "wb") as f:
                f.write(b"tarball bytes")
            with open(os.path.join(served, "duodb.tar.gz.sha256"), "w") as f:
                f.write(hashlib.sha256(b"tarball bytes").hexdigest() + "  duodb.tar.gz\n")
            with open(os.path.join(served, "bad.tar.gz"), "wb") as f:
                f.write(b"corrupted")
            with open(os.path.join(served, "bad.tar.gz.sha256"), "w") as f:
                f.write(hashlib.sha256(b"tarball bytes").hexdigest() + "\n")
            handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=served)
            handler.log_message = lambda *args: None
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            try:
                base = "http://127.0.0.1:%d/" % server.server_address[1]
                options = installer.parse_options(["deploy", "--provider", "local", "--cluster",
                                                   "c1", "--state-dir", state, "--tarball",
                                                   base + "duodb.tar.gz"])
                runner = installer.Runner(out=io.StringIO())
                path = installer.fetch_tarball(options, runner)
                with open(path, "rb") as f:
                    self.assertEqual(f.read(), b"tarball bytes")
                options.tarball = base + "bad.tar.gz"
                with self.assertRaises(installer.StepError) as raised:
                    installer.fetch_tarball(options, runner)
                self.assertIn("does not match", str(raised.exception))
                self.assertEqual(os.listdir(os.path.join(state, "downloads")), ["duodb.tar.gz"])
            finally:
                server.shutdown()
                server.server_close()
        finally:
            shutil.rmtree(served, ignore_errors=True)
            shutil.rmtree(state, ignore_errors=True)

    def test_config_ini_of_four_data_nodes(self):
        plan = plan_mod.ClusterPlan("c4", "aws", "arm64", 4, 2, {}, 50, 1024)
        addresses = {n.name: "10.42.1.%d" % (10 + i) for i, n in enumerate(plan.nodes())}
        text = plan_mod.config_ini(plan, addresses, lambda name: "/var/lib/duodb")
        self.assertEqual(text.count("[ndbd]"), 4)
        self.assertEqual(text.count("[mysqld]"), 2)
        self.assertEqual(text.count("[api]"), plan_mod.SPARE_API_SLOTS)
        self.assertIn("NoOfReplicas=2\n", text)
        self.assertIn("ServerPort=11860\n", text)
        self.assertIn("DataMemory=1024M\n", text)
        self.assertIn("[ndb_mgmd]\nNodeId=49\nHostName=10.42.1.10\nPortNumber=1186\n", text)
        self.assertIn("[ndbd]\nNodeId=4\nHostName=10.42.1.14\n", text)
        self.assertIn("[mysqld]\nNodeId=51\nHostName=10.42.1.16\n", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
