"""What a DuoDB cluster is made of, independent of where it runs: the VMs (one mgmd,
data nodes in node groups of two, sqld hosts), their node ids and names, the VM type
and image of each role per provider and architecture, and the config.ini written from
the VMs' private addresses. Pure data and functions; safe from any thread.
"""

import re
from dataclasses import dataclass, field

MGM_NODE_ID = 49
FIRST_SQLD_NODE_ID = 50
SPARE_API_SLOTS = 4  # for duo_bench, applications and tools (ids after the sqlds)
MGM_PORT = 1186
# Every data node listens on this one fixed transporter port, so the firewall rules can
# name it (NDB's ServerPort; otherwise the OS would pick one).
DATA_NODE_PORT = 11860
SQL_PORT = 3306
CLUSTER_PORTS = (MGM_PORT, DATA_NODE_PORT, SQL_PORT)
SSH_PORT = 22
NO_OF_REPLICAS = 2

ROLES = ("mgmd", "data", "sqld")
ARCHITECTURES = ("x86_64", "arm64")

# VM types per provider, architecture and role: memory-optimised data nodes (the rows
# live in memory), compute-optimised sqld (parsing and result encoding), a small mgmd.
VM_TYPES = {
    ("aws", "x86_64"): {"data": "r6i.xlarge", "sqld": "c6i.xlarge", "mgmd": "t3.small"},
    ("aws", "arm64"): {"data": "r7g.xlarge", "sqld": "c7g.xlarge", "mgmd": "t4g.small"},
    ("azure", "x86_64"): {"data": "Standard_E4s_v5", "sqld": "Standard_F4s_v2",
                          "mgmd": "Standard_B2s"},
    ("azure", "arm64"): {"data": "Standard_E4ps_v5", "sqld": "Standard_D4ps_v5",
                         "mgmd": "Standard_B2pts_v2"},
    ("gcp", "x86_64"): {"data": "n2-highmem-4", "sqld": "c3-standard-4", "mgmd": "e2-small"},
    ("gcp", "arm64"): {"data": "c4a-highmem-4", "sqld": "c4a-highcpu-4",
                       "mgmd": "t2a-standard-1"},
    ("local", "x86_64"): {"data": "netns", "sqld": "netns", "mgmd": "netns"},
    ("local", "arm64"): {"data": "netns", "sqld": "netns", "mgmd": "netns"},
}

# Debian 12 images: the AWS SSM public parameter naming the AMI, Azure URNs, GCP families.
AWS_AMI_PARAMETER = {"x86_64": "/aws/service/debian/release/12/latest/amd64",
                     "arm64": "/aws/service/debian/release/12/latest/arm64"}
AZURE_IMAGE = {"x86_64": "Debian:debian-12:12-gen2:latest",
               "arm64": "Debian:debian-12-arm64:12-arm64:latest"}
GCP_IMAGE_FAMILY = {"x86_64": "debian-12", "arm64": "debian-12-arm64"}

DEFAULT_REGION = {"aws": "eu-north-1", "azure": "northeurope", "gcp": "europe-north1",
                  "local": "local"}
DEFAULT_ZONE = {"aws": "eu-north-1a", "azure": "", "gcp": "europe-north1-a", "local": ""}
DEFAULT_SSH_USER = {"aws": "admin", "azure": "duodb", "gcp": "duodb", "local": "root"}

NETWORK_CIDR = "10.42.0.0/16"
SUBNET_CIDR = "10.42.1.0/24"

CLUSTER_NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,19}$")


@dataclass(frozen=True)
class NodePlan:
    """One VM of the cluster: its name (also its cloud name), role, and the node id of
    the process it runs."""
    name: str
    role: str
    node_id: int
    public: bool  # has a public address (mgmd and sqld: the jump hosts); data nodes never


@dataclass
class ClusterPlan:
    cluster: str
    provider: str
    arch: str
    data_nodes: int
    sqld_nodes: int
    vm_types: dict
    disk_gb: int
    data_memory_mb: int
    extra_config: dict = field(default_factory=dict)

    def nodes(self):
        """mgmd first, then the data nodes, then the sqlds: the order they start in."""
        out = [NodePlan("%s-mgmd1" % self.cluster, "mgmd", MGM_NODE_ID, True)]
        out += [NodePlan("%s-data%d" % (self.cluster, i), "data", i, False)
                for i in range(1, self.data_nodes + 1)]
        out += [NodePlan("%s-sqld%d" % (self.cluster, i), "sqld", FIRST_SQLD_NODE_ID + i - 1, True)
                for i in range(1, self.sqld_nodes + 1)]
        return out

    def node(self, name):
        return next(n for n in self.nodes() if n.name == name)

    def of_role(self, role):
        return [n for n in self.nodes() if n.role == role]


def validate(cluster, data_nodes, sqld_nodes, arch):
    """Returns an error message for impossible options, or None."""
    if not CLUSTER_NAME_RE.match(cluster):
        return ("--cluster %r: 1-20 characters, lower-case letters, digits and '-', starting "
                "with a letter (it names resources, tags and labels on every provider)" % cluster)
    if data_nodes < 2 or data_nodes % NO_OF_REPLICAS:
        return ("--data-nodes %d: data nodes come in node groups of %d (NoOfReplicas=%d): "
                "give 2, 4, 6 ..." % (data_nodes, NO_OF_REPLICAS, NO_OF_REPLICAS))
    if data_nodes > 48:
        return "--data-nodes %d: at most 48 data nodes (node ids 1..48)" % data_nodes
    if not 1 <= sqld_nodes <= 8:
        return "--sqld-nodes %d: 1 to 8" % sqld_nodes
    if arch not in ARCHITECTURES:
        return "--arch %s: one of %s" % (arch, ", ".join(ARCHITECTURES))
    return None


def memory_parameters(data_memory_mb):
    """The [ndbd default] memory lines: DataMemory as asked, TransactionMemory an eighth
    of it (at least 16 MB), small page cache and schema areas, no shared pool."""
    return {"DataMemory": "%dM" % data_memory_mb,
            "TransactionMemory": "%dM" % max(16, data_memory_mb // 8),
            "DiskPageBufferMemory": "8M", "SchemaMemory": "2M", "SharedGlobalMemory": 0,
            "TotalMemoryConfig": 0}


def config_ini(plan, addresses, data_dir_of):
    """The cluster's config.ini. addresses: VM name -> private address; data_dir_of: VM
    name -> the directory under which that VM's process keeps its files (the same path
    on every cloud VM; a directory per "VM" in the local provider)."""
    default = {"NoOfReplicas": NO_OF_REPLICAS}
    default.update(memory_parameters(plan.data_memory_mb))
    default["ServerPort"] = DATA_NODE_PORT
    default.update(plan.extra_config)
    lines = ["# Written by duo-cloud-installer for cluster %s (%s, %s)." %
             (plan.cluster, plan.provider, plan.arch), "[ndbd default]"]
    lines += ["%s=%s" % item for item in default.items()]
    mgmd = plan.of_role("mgmd")[0]
    lines += ["", "[ndb_mgmd]", "NodeId=%d" % mgmd.node_id, "HostName=%s" % addresses[mgmd.name],
              "PortNumber=%d" % MGM_PORT, "ArbitrationRank=1",
              "DataDir=%s/mgmd" % data_dir_of(mgmd.name)]
    for node in plan.of_role("data"):
        lines += ["", "[ndbd]", "NodeId=%d" % node.node_id, "HostName=%s" % addresses[node.name],
                  "DataDir=%s/datad" % data_dir_of(node.name)]
    for node in plan.of_role("sqld"):
        lines += ["", "[mysqld]", "NodeId=%d" % node.node_id,
                  "HostName=%s" % addresses[node.name]]
    first_spare = FIRST_SQLD_NODE_ID + plan.sqld_nodes
    for node_id in range(first_spare, first_spare + SPARE_API_SLOTS):
        lines += ["", "[api]", "NodeId=%d" % node_id]
    return "\n".join(lines) + "\n"
