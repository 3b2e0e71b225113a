// Block numbers of the data node's blocks and of the client library's receiver
// (BlockAddress::block). NDB's numbers are kept where a block has an NDB twin, so traces
// read alike (DBTC 245, DBLQH 247, DBDICT 250).
//
// Thread-safety: constants.
#pragma once

#include <cstdint>

namespace duo::protocol {

inline constexpr uint16_t kCoordinatorBlock = 245;  // DBTC: transactions, scans fan-out
inline constexpr uint16_t kLocalQueryBlock = 247;   // DBLQH+DBTUP+DBACC+DBTUX: fragments
inline constexpr uint16_t kDictionaryBlock = 250;   // DBDICT: schema
inline constexpr uint16_t kDistributionBlock = 246;  // DBDIH: GCP, LCP, restart
inline constexpr uint16_t kFileSystemBlock = 253;    // NDBFS: file IO for the blocks
inline constexpr uint16_t kMembershipBlock = 252;     // QMGR: heartbeats, node failure, arbitration
// The arbitrator's receiver: in duo_datad a proxy on the node itself that asks duo_mgmd
// (`arbitrate`); in the simulator a SimArbitrator on its own node.
inline constexpr uint16_t kArbitratorBlock = 4003;
// The client library's receiver on an API node (one per API node; the instance is 0).
inline constexpr uint16_t kApiBlock = 4002;

}  // namespace duo::protocol
