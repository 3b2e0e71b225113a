// Where rows live: the cluster's node groups, the distribution hash of a primary key,
// and the placement of a table's fragments on node groups, replicas and local_query
// instances (DESIGN.md §5). Every data node and the client library compute the same
// answers from the same configuration, so placement needs no messages.
//
// Rules (docs/formats/kernel-protocol.md "Distribution"), for a table of F fragments:
//   fragment   = distribution_hash(key) % F
//   node group = fragment % node_groups
//   round      = fragment / node_groups       (rounds = ceil(F / node_groups))
//   replicas   = the group's nodes ascending, rotated left by round % replicas, so
//                primaries spread evenly; the first is the primary.
//   log part   = (round / share) % log_parts   (local_query instance; NDB's redo log
//                part, NoOfFragmentLogParts, the same on every data node), where share
//                = replicas when rounds is a multiple of replicas * log_parts, else 1.
//                So with ClassicFragmentation's count (and its multiples) `replicas`
//                consecutive rounds (whose primaries rotate) share a log part, and every
//                log part of a node holds as many primaries as backups: reads use all
//                LDM threads. A smaller table's rounds are dealt over the log parts one
//                by one, so its few fragments still spread over them (NDB deals a
//                table's fragments over the LDM instances the same way).
// A table's fragment count is fixed when the table is created; by default it is
// node_groups * replicas * PartitionsPerNode (2: the partitions per data node, RonDB's
// default), or with ClassicFragmentation node_groups * replicas * log_parts (every log
// part of every node holds one primary and replicas-1 backups; NDB's default, which
// counts LDM threads). Nodes with Nodegroup=65536 hold no data and are left out.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "ndb-kernel/common/config/config_parser.h"
#include "ndb-kernel/common/status.h"
#include "storage/row/attr_values.h"
#include "storage/row/table_schema.h"

namespace duo::protocol {

// Fragments of one table at most (NDB's MAX_NDB_PARTITIONS): PARTITIONS n above it is
// refused.
inline constexpr uint32_t kFragmentCountMax = 8160;

struct ClusterTopology {
  std::vector<std::vector<uint16_t>> node_groups;  // data node ids per group, ascending
  uint32_t log_parts = 4;                          // NoOfFragmentLogParts
  uint32_t partitions_per_node = 2;                // PartitionsPerNode
  bool classic_fragmentation = false;              // ClassicFragmentation (RonDB's default)

  // From a validated configuration (node groups assigned, equal NoOfReplicas,
  // NoOfFragmentLogParts, PartitionsPerNode and ClassicFragmentation).
  static Result<ClusterTopology> from_config(const config::ClusterConfig& config);

  // A new table's fragments per data node: its log parts with ClassicFragmentation,
  // else PartitionsPerNode.
  uint32_t fragments_per_node() const {
    return classic_fragmentation ? log_parts : partitions_per_node;
  }
  uint32_t default_fragment_count() const {
    const size_t replicas = node_groups.empty() ? 0 : node_groups.front().size();
    return static_cast<uint32_t>(node_groups.size() * replicas) * fragments_per_node();
  }
  std::vector<uint16_t> data_nodes() const;  // ascending
};

struct FragmentPlacement {
  uint32_t node_group = 0;
  uint16_t log_part = 0;
  std::vector<uint16_t> replicas;  // primary first
};

// Fragment `fragment` of a table of `fragment_count` fragments.
FragmentPlacement place_fragment(const ClusterTopology& topology, uint32_t fragment,
                                 uint32_t fragment_count);

// place_fragment() over the live nodes: the replicas in `dead_nodes` are left out, so the
// first live replica is the primary (node failure handling, DESIGN.md §5). Empty
// replicas when the whole node group is dead. Every routing block (coordinator,
// local_query's forwarding) uses this with the same dead set.
//
// `starting_nodes` are replicas in a node restart (copying from the live replica): they
// stay in the chain but move to its end, so they take every write and are never the
// primary (reads and scans use the primary). A fragment whose only live replicas are
// starting has no primary: empty replicas, as if its group were dead.
FragmentPlacement place_fragment_live(const ClusterTopology& topology, uint32_t fragment,
                                      uint32_t fragment_count,
                                      const std::vector<uint16_t>& dead_nodes,
                                      const std::vector<uint16_t>& starting_nodes = {});

// Hash of the primary-key columns of `key` (in schema.primary_key order, each column's
// collation respected, so 'abc' and 'ABC ' hash alike in a CI column). A different seed
// from the fragment's own hash index, so the two hashes are independent.
// kInvalidArgument when a key column is missing or NULL.
Result<uint32_t> distribution_hash(const storage::TableSchema& schema,
                                   const storage::AttrValues& key);

}  // namespace duo::protocol
