"""The providers: each creates (or finds, by tag/label/resource group) the network, the
firewall rules and the VMs of a cluster, tells how to reach each VM, and destroys all of
it. The interface every provider implements:

    ensure_infrastructure()   network, subnet, firewall rules / security group
    ensure_vms() -> {name: Vm}  the plan's VMs, created where missing, with their addresses
    discover_vms() -> {name: Vm}  what exists now (no change)
    host(vm, vms) -> SshHost | NetnsHost
    services                  SystemdServices | LocalProcesses
    data_dir_of(name)         where that VM's processes keep their files
    destroy()                 everything the cluster's tag/label/resource group finds

Every resource is tagged (or named, where the provider has no tags for it) at creation,
in the create call itself, so a run that fails between two steps leaves nothing that
`destroy` cannot find.
"""

from dataclasses import dataclass

CLUSTER_TAG = "duodb-cluster"
ROLE_TAG = "duodb-role"


@dataclass
class Vm:
    name: str
    role: str
    private_ip: str
    public_ip: str = ""
    id: str = ""


def make_provider(name, options, plan, runner):
    if name == "aws":
        from .aws import AwsProvider
        return AwsProvider(options, plan, runner)
    if name == "azure":
        from .azure import AzureProvider
        return AzureProvider(options, plan, runner)
    if name == "gcp":
        from .gcp import GcpProvider
        return GcpProvider(options, plan, runner)
    from .local import LocalProvider
    return LocalProvider(options, plan, runner)
