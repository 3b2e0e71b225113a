"""The config.ini of a process test's cluster, built from the parameters the test sets:
one [ndbd default], the management server [ndb_mgmd], one [ndbd] per data node, then the
[mysqld] and [api] slots. The tests that start duo_mgmd from a config.ini of their own
(datad, bank fault, netns split, sqld and mgmd cluster tests) all build it here, so each
states only the parameters it chooses and why, and the section and parameter names are
written in one place.

    config_ini(ndbd_default={"NoOfReplicas": 2, "DataDir": d + "/datad"},
               data_nodes=(1, 2), mgmd={"HostName": "127.0.0.1", "DataDir": d},
               api_slots=(50, 51))

Parameters are written in the order given (dicts keep it), so a test that names a line
of the file (mgmd_cluster_test.py's config errors) can count on it. `duo up`
(tools/launcher/duo.py) writes its own config.ini: it is installed alone as bin/duo and
imports nothing from the test tree.

Pure functions; safe from any thread.
"""

import os

# The management server's node id in every test cluster (its files in configdir are
# named after it: ndb_49_cluster.log, ndb_49_config.bin.N).
MGM_NODE_ID = 49


def config_ini(ndbd_default, data_nodes, mgmd, api_slots=(), mysqld_slots=(), per_node=None,
               host="127.0.0.1", header=None):
    """Returns the config.ini text.

    ndbd_default: the [ndbd default] parameters (name -> value).
    data_nodes: the data node ids, one [ndbd] each with HostName=host.
    mgmd: the [ndb_mgmd] parameters after NodeId=MGM_NODE_ID (HostName, DataDir, ...).
    api_slots / mysqld_slots: node ids of the [api] / [mysqld] sections (written after the
        data nodes, mysqld first).
    per_node: data node id -> parameters of its [ndbd] section besides NodeId; a HostName
        there replaces `host` (a node in its own network namespace).
    header: a comment written as the first line.
    """
    per_node = per_node or {}
    sections = [("ndbd default", ndbd_default),
                ("ndb_mgmd", dict({"NodeId": MGM_NODE_ID}, **mgmd))]
    for node_id in data_nodes:
        sections.append(("ndbd", dict({"NodeId": node_id, "HostName": host},
                                      **per_node.get(node_id, {}))))
    sections += [("mysqld", {"NodeId": node_id}) for node_id in mysqld_slots]
    sections += [("api", {"NodeId": node_id}) for node_id in api_slots]
    text = "\n".join("[%s]\n%s" % (name, "".join("%s=%s\n" % item for item in params.items()))
                     for name, params in sections)
    return ("# %s\n" % header if header else "") + text


def small_ndbd_default(directory, data_memory, **more):
    """The [ndbd default] of the tests' two-replica clusters: little memory, all of it
    allocated and touched at start (DataMemory `data_memory`, e.g. "16M"; TransactionMemory
    automatic; no shared pool), the data nodes' files under <directory>/datad, and a global
    checkpoint every 500 ms so that what was committed is durable within half a second.
    `more`: the test's own parameters, written after these."""
    return dict({"NoOfReplicas": 2, "DataMemory": data_memory, "DiskPageBufferMemory": "4M",
                 "SchemaMemory": "1M", "SharedGlobalMemory": 0, "TotalMemoryConfig": 0,
                 "DataDir": os.path.join(directory, "datad"),
                 "TimeBetweenGlobalCheckpoints": 500}, **more)
