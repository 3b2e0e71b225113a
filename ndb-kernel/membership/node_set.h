// NodeSet: a set of data node ids, the unit membership reasons in (the live nodes, the
// failed set of a round, the survivors an arbitrator decides about).
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <set>
#include <string>

namespace duo::membership {

// A set of data node ids, ascending.
using NodeSet = std::set<uint16_t>;

// "{1,3,4}", for logs.
std::string format_node_set(const NodeSet& nodes);

}  // namespace duo::membership
