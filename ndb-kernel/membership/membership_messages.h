// The membership block's signal payloads (NDB's QMGR signals; ids in
// protocol/signal_ids.h, 400..429 and 480..489 for node restart; wire layout in
// docs/formats/kernel-protocol.md "Membership"). Node sets travel as a fixed bitmask of
// kNodeSetWords words, bit n of the mask = data node id n, so a set of any size fits the inline
// payload and needs no section.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ndb-kernel/membership/node_set.h"
#include "ndb-kernel/runtime/signal.h"

namespace duo::membership {

// 8 words = 256 ids: every data node id (config::kDataNodeIdMax = 144) fits.
inline constexpr size_t kNodeSetWords = 8;
inline constexpr uint16_t kNodeSetIdMax = kNodeSetWords * 32 - 1;

// Writes `nodes` as a bitmask into words [first_word, first_word + kNodeSetWords). Ids
// above kNodeSetIdMax are a caller bug (configuration bounds them) and abort.
void put_node_set(kernel::Signal& signal, size_t first_word, const NodeSet& nodes);
// Reads the bitmask written by put_node_set.
NodeSet get_node_set(const kernel::Signal& signal, size_t first_word);

// PREP_FAILREQ / COMMIT_FAILREQ: one failure round of the president.
struct FailRoundMsg {
  uint32_t round = 0;
  uint16_t president = 0;
  NodeSet failed;

  kernel::Signal to_signal(kernel::SignalId id) const;
  static FailRoundMsg from_signal(const kernel::Signal& signal);
};

// ARBIT_REQ: the president asks the arbitrator whether `survivors` may continue
// without `failed`.
struct ArbitReqMsg {
  uint32_t round = 0;
  uint16_t president = 0;
  NodeSet survivors;
  NodeSet failed;

  kernel::Signal to_signal() const;
  static ArbitReqMsg from_signal(const kernel::Signal& signal);
};

// INCLUDE_ORD: the president adds `node` (a restarting node) to the membership; `live` is
// the membership with it (what the included node adopts).
struct IncludeOrdMsg {
  uint32_t round = 0;
  uint16_t president = 0;
  uint16_t node = 0;
  NodeSet live;

  kernel::Signal to_signal() const;
  static IncludeOrdMsg from_signal(const kernel::Signal& signal);
};

// Why the president refuses INCLUDE_NODEREQ (INCLUDE_NODEREF w1). Every refusal is
// temporary for the requester: it retries later (or gives the restart up).
enum class IncludeRefusal : uint32_t {
  kNotPresident = 1,         // ask the president (this node is not it, or is joining)
  kFailureRoundRunning = 2,  // a failure round runs or a suspicion waits for one
  kAlreadyLive = 3,          // the node is in the membership already
  kIncludeRunning = 4,       // another include runs: one at a time
  kSuperseded = 5,           // a failure round started during the include and undid it
  kNotADataNode = 6,         // the node is not a data node of the topology, or is this node
};
std::string include_refusal_text(IncludeRefusal reason);

// Why a president orders its survivors to shut down (CLUSTER_SHUTDOWN_ORD w2) or why the
// arbitrator refused (ARBIT_REF w1).
enum class ShutdownReason : uint32_t {
  kNodeGroupLost = 1,          // w3 = the node group
  kArbitrationRefused = 2,     // the arbitrator granted a competing side
  kArbitratorUnreachable = 3,  // no answer within ArbitrationTimeout
  kNoArbitrator = 4,           // arbitration needed, none configured
};
std::string shutdown_reason_text(ShutdownReason reason, uint32_t detail);

}  // namespace duo::membership
