"""duo-cloud-installer: creates a DuoDB cluster on AWS, Azure, GCP or (for tests) in
local network namespaces, installs the tarball, starts mgmd, the data nodes and the
sqlds, checks the cluster with a smoke query, and prints how to connect.

    duo-cloud-installer.sh deploy  --provider aws|azure|gcp|local --cluster NAME
                                   --tarball PATH|URL [--ssh-key KEY] [--admin-cidr CIDR] ...
    duo-cloud-installer.sh status  --provider P --cluster NAME [--json]
    duo-cloud-installer.sh destroy --provider P --cluster NAME

Re-running deploy finds what exists (by tag, label, resource group or namespace name)
and creates or starts only what is missing. --dry-run prints every command and runs
none. A failed step stops with what failed and what to fix; everything already created
carries the cluster's tag, so `destroy` removes it. Exit codes: 0 done, 1 a step failed,
64 bad options. Options and what each provider creates: cloud-scripts/README.md.
"""

import argparse
import json
import os
import re
import sys
import urllib.request

from . import plan as plan_mod
from .install import Installer, OPT, file_sha256
from .providers import make_provider
from .runner import Runner, StepError, quote

DEFAULT_STATE_DIR = os.path.join(os.path.expanduser("~"), ".duodb-cloud")


def parse_options(argv):
    parser = argparse.ArgumentParser(prog="duo-cloud-installer.sh",
                                     description="Create, inspect or destroy a DuoDB cluster.")
    parser.add_argument("command", choices=("deploy", "destroy", "status"))
    parser.add_argument("--provider", required=True, choices=("aws", "azure", "gcp", "local"))
    parser.add_argument("--cluster", required=True,
                        help="cluster name: names the resources, and is their tag/label "
                             "(duodb-cluster=NAME) and the Azure resource group")
    parser.add_argument("--region", help="region (Azure: location); default per provider")
    parser.add_argument("--zone", help="availability zone (AWS, GCP; Azure: zone number)")
    parser.add_argument("--project", help="GCP project (default: gcloud's configured one)")
    parser.add_argument("--arch", default="x86_64", choices=plan_mod.ARCHITECTURES,
                        help="CPU architecture: picks the VM families and the Debian 12 image")
    parser.add_argument("--data-nodes", type=int, default=2,
                        help="data nodes, in node groups of 2 (NoOfReplicas=2); default 2")
    parser.add_argument("--sqld-nodes", type=int, default=1, help="sqld VMs (default 1)")
    for role, what in (("data", "data nodes (memory-optimised)"), ("sqld", "sqld (compute)"),
                       ("mgmd", "mgmd (small)")):
        parser.add_argument("--%s-type" % role, help="VM type of the %s" % what)
    parser.add_argument("--disk-gb", type=int, default=50, help="OS disk per VM (default 50)")
    parser.add_argument("--data-memory", type=int, metavar="MB",
                        help="DataMemory per data node (default 4096; local: 64)")
    parser.add_argument("--config-param", action="append", default=[], metavar="NAME=VALUE",
                        help="an extra [ndbd default] parameter of config.ini (repeatable)")
    parser.add_argument("--tarball", help="DuoDB tarball: a path or an http(s) URL (deploy)")
    parser.add_argument("--ssh-key", default=os.path.join(os.path.expanduser("~"), ".ssh",
                                                          "id_ed25519"),
                        help="private key; KEY.pub goes onto the VMs (default ~/.ssh/id_ed25519)")
    parser.add_argument("--ssh-user", help="login user (default: admin on AWS, duodb elsewhere)")
    parser.add_argument("--admin-cidr", default=None,
                        help="the only addresses SSH is open to (required for deploy on a "
                             "cloud, e.g. 203.0.113.7/32)")
    parser.add_argument("--state-dir", default=DEFAULT_STATE_DIR,
                        help="where downloads and ssh known_hosts are kept (default %s)"
                             % DEFAULT_STATE_DIR)
    parser.add_argument("--wait-timeout", type=int, default=600,
                        help="seconds to wait for the data nodes and the smoke query")
    parser.add_argument("--local-dir", help="local provider: the VMs' directories "
                                            "(default /tmp/duodb-local/CLUSTER)")
    parser.add_argument("--local-subnet", default="10.42.1",
                        help="local provider: the /24 (a.b.c) used inside the namespaces")
    parser.add_argument("--dry-run", action="store_true", help="print every command, run none")
    parser.add_argument("--json", action="store_true", help="status: print JSON")
    return parser.parse_args(argv)


def build_plan(options):
    error = plan_mod.validate(options.cluster, options.data_nodes, options.sqld_nodes,
                              options.arch)
    if error:
        return None, error
    types = dict(plan_mod.VM_TYPES[(options.provider, options.arch)])
    for role in plan_mod.ROLES:
        chosen = getattr(options, "%s_type" % role)
        if chosen:
            types[role] = chosen
    extra = {}
    for item in options.config_param:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            return None, "--config-param %r: NAME=VALUE" % item
        extra[name.strip()] = value.strip()
    memory = options.data_memory or (64 if options.provider == "local" else 4096)
    return plan_mod.ClusterPlan(options.cluster, options.provider, options.arch,
                                options.data_nodes, options.sqld_nodes, types, options.disk_gb,
                                memory, extra), None


def fill_defaults(options):
    options.region = options.region or plan_mod.DEFAULT_REGION[options.provider]
    if options.zone is None:
        options.zone = plan_mod.DEFAULT_ZONE[options.provider]
    options.ssh_user = options.ssh_user or plan_mod.DEFAULT_SSH_USER[options.provider]
    if options.admin_cidr is None and options.provider == "local":
        options.admin_cidr = "%s.0/24" % options.local_subnet


def fetch_tarball(options, runner):
    """The tarball as a local file: a URL is downloaded into the state directory once;
    either is checked against its .sha256 when there is one."""
    source = options.tarball
    if not source.startswith(("http://", "https://")):
        if not runner.dry_run and not os.path.isfile(source):
            raise StepError("--tarball %s: no such file" % source,
                            "give the path of duodb-<version>-linux-*.tar.gz")
        checksum = source + ".sha256"  # packaging/ ships one beside the tarball
        if not runner.dry_run and os.path.isfile(checksum):
            with open(checksum) as f:
                expected = (f.read().split() or [""])[0]
            if file_sha256(source) != expected:
                raise StepError("%s does not match %s" % (source, checksum),
                                "copy or download the tarball again")
        return os.path.abspath(source)
    target = os.path.join(options.state_dir, "downloads", os.path.basename(source))
    runner.say("+ download %s -> %s" % (source, target))
    if runner.dry_run or os.path.exists(target):
        return target
    os.makedirs(os.path.dirname(target), exist_ok=True)
    try:
        urllib.request.urlretrieve(source, target + ".part")
        try:
            with urllib.request.urlopen(source + ".sha256", timeout=30) as answer:
                expected = answer.read().decode().split()[0]
        except OSError:
            expected = None
        if expected:
            if file_sha256(target + ".part") != expected:
                os.remove(target + ".part")
                raise StepError("%s does not match %s.sha256" % (source, source),
                                "download it again or check the URL")
        os.replace(target + ".part", target)
    except OSError as error:
        raise StepError("download of %s failed: %s" % (source, error), "check the URL")
    return target


# The machine name in a tarball's file name (packaging/) for each --arch.
TARBALL_ARCH = {"x86_64": "x86_64", "arm64": "aarch64"}


def check_tarball_arch(tarball, arch):
    """A tarball built for the other architecture would install programs that cannot run:
    refused before anything is created. A name without an architecture is trusted."""
    match = re.search(r"-(x86_64|aarch64)\.tar\.gz$", os.path.basename(tarball))
    if match and match.group(1) != TARBALL_ARCH[arch]:
        raise StepError("--tarball %s is built for %s, but --arch is %s"
                        % (os.path.basename(tarball), match.group(1), arch),
                        "pass the ...-%s.tar.gz tarball, or --arch %s"
                        % (TARBALL_ARCH[arch],
                           {v: k for k, v in TARBALL_ARCH.items()}[match.group(1)]))


def deploy(options, plan, provider, runner):
    if options.provider != "local" and not options.admin_cidr:
        raise StepError("--admin-cidr is required: SSH is opened to that range only",
                        "pass your address, e.g. --admin-cidr $(curl -s ifconfig.me)/32")
    if not options.tarball:
        raise StepError("--tarball is required for deploy", "give a path or URL")
    check_tarball_arch(options.tarball, options.arch)
    if options.provider != "local" and not runner.dry_run and \
            not os.path.exists(options.ssh_key + ".pub"):
        raise StepError("no public key %s.pub" % options.ssh_key,
                        "create one (ssh-keygen -t ed25519) or pass --ssh-key")
    if not runner.dry_run:
        os.makedirs(options.state_dir, exist_ok=True)
    tarball = fetch_tarball(options, runner)
    runner.say("== network and firewall (%s, cluster %s)" % (options.provider, plan.cluster))
    provider.ensure_infrastructure()
    runner.say("== VMs")
    vms = provider.ensure_vms()
    hosts = {name: provider.host(vm, vms) for name, vm in vms.items()}
    addresses = {name: vm.private_ip for name, vm in vms.items()}
    installer = Installer(runner, plan, provider.services, tarball, options.wait_timeout,
                          getattr(provider, "smoke_python", "python3"))
    runner.say("== install %s" % os.path.basename(tarball))
    for node in plan.nodes():
        hosts[node.name].wait_reachable()
        installer.install_tarball(hosts[node.name])
    mgmd = plan.of_role("mgmd")[0]
    mgm_address = addresses[mgmd.name]
    installer.write_config(hosts[mgmd.name], addresses, provider.data_dir_of)
    runner.say("== start: mgmd, data nodes, sqld")
    installer.start_role(hosts[mgmd.name], mgmd, mgm_address, mgm_address)
    for node in plan.of_role("data"):
        installer.start_role(hosts[node.name], node, mgm_address, addresses[node.name])
    installer.wait_data_nodes(hosts[mgmd.name], mgm_address)
    for node in plan.of_role("sqld"):
        installer.start_role(hosts[node.name], node, mgm_address, addresses[node.name])
    for node in plan.of_role("sqld"):
        installer.smoke_query(hosts[node.name], addresses[node.name])
    print_connection(options, plan, vms, mgm_address, runner)


def print_connection(options, plan, vms, mgm_address, runner):
    sqlds = [vms[n.name] for n in plan.of_role("sqld")]
    mgmd = vms[plan.of_role("mgmd")[0].name]
    runner.say("DuoDB cluster %s is up (%s, %d data nodes in %d node groups, %d sqld)." %
               (plan.cluster, options.provider, plan.data_nodes,
                plan.data_nodes // plan_mod.NO_OF_REPLICAS, plan.sqld_nodes))
    runner.say("  Connect string (management server): %s:%d" % (mgm_address, plan_mod.MGM_PORT))
    for vm in sqlds:
        runner.say("  SQL: mysql -h %s -P %d -u root" % (vm.private_ip, plan_mod.SQL_PORT))
    if options.provider == "local":
        runner.say("  (from inside the namespaces: ip netns exec duo-%s mysql -h %s -P %d -u root)"
                   % (sqlds[0].name, sqlds[0].private_ip, plan_mod.SQL_PORT))
    else:
        runner.say("  From your machine: ssh -i %s -N -L %d:%s:%d %s@%s, then mysql -h 127.0.0.1 "
                   "-P %d -u root" % (options.ssh_key, plan_mod.SQL_PORT, sqlds[0].private_ip,
                                      plan_mod.SQL_PORT, options.ssh_user, sqlds[0].public_ip,
                                      plan_mod.SQL_PORT))
        runner.say("  Cluster status: ssh %s@%s %s/bin/duo_mgm -c %s:%d -e show" %
                   (options.ssh_user, mgmd.public_ip, OPT, mgm_address, plan_mod.MGM_PORT))


def status(options, plan, provider, runner):
    vms = provider.discover_vms()
    if options.json:
        answer = {"cluster": plan.cluster, "provider": options.provider,
                  "vms": [vars(vm) for vm in vms.values()]}
        if hasattr(provider, "describe") and options.provider == "local":
            answer["local"] = provider.describe()
        print(json.dumps(answer, indent=2))
        return 0
    if not vms:
        runner.say("cluster %s: no VMs found on %s" % (plan.cluster, options.provider))
        return 0
    for vm in vms.values():
        runner.say("%-24s %-5s private %-15s public %s" % (vm.name, vm.role, vm.private_ip,
                                                           vm.public_ip or "-"))
    mgmd = next((vm for vm in vms.values() if vm.role == "mgmd"), None)
    if mgmd is not None:
        host = provider.host(mgmd, vms)
        out = host.run("%s -c %s:%d -e show" % (host.path(OPT + "/bin/duo_mgm"), mgmd.private_ip,
                                                plan_mod.MGM_PORT), "cluster status", check=False)
        runner.say(out if out is not None else "mgmd does not answer")
    return 0


def main(argv):
    try:
        options = parse_options(argv)
    except SystemExit as exit_:
        return 0 if exit_.code == 0 else 64
    fill_defaults(options)
    plan, error = build_plan(options)
    if error:
        print("duo-cloud-installer: %s" % error, file=sys.stderr)
        return 64
    runner = Runner(dry_run=options.dry_run, verbose=options.command != "status" or
                    options.dry_run)
    provider = make_provider(options.provider, options, plan, runner)
    try:
        if options.command == "deploy":
            deploy(options, plan, provider, runner)
        elif options.command == "destroy":
            provider.destroy()
            known_hosts = getattr(provider, "known_hosts", None)
            if known_hosts and os.path.exists(known_hosts) and not runner.dry_run:
                os.remove(known_hosts)  # new VMs at the same addresses have new host keys
            runner.say("cluster %s destroyed on %s" % (plan.cluster, options.provider))
        else:
            return status(options, plan, provider, runner)
    except StepError as failure:
        print("duo-cloud-installer: error: %s" % failure, file=sys.stderr)
        if failure.fix:
            print("duo-cloud-installer: to fix: %s" % failure.fix, file=sys.stderr)
        if options.command == "deploy":
            print("duo-cloud-installer: what was created so far is tagged duodb-cluster=%s; "
                  "fix the cause and run deploy again (it resumes), or remove it all with: %s"
                  % (plan.cluster, quote(["duo-cloud-installer.sh", "destroy", "--provider",
                                          options.provider, "--cluster", plan.cluster])),
                  file=sys.stderr)
        return 1
    return 0
