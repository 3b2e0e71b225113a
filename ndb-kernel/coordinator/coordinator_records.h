// The coordinator's records of transactions, their operations and scans: private to
// the CoordinatorBlock's translation units (coordinator_block.cc for the data path,
// coordinator_takeover.cc for node failure handling).
//
// Thread-safety: plain data owned by one CoordinatorBlock.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ndb-kernel/coordinator/coordinator_block.h"

namespace duo::coordinator {

struct CoordinatorBlock::Operation {
  uint32_t op_index = 0;
  uint8_t flags = 0;
  // The replica it was sent to: the primary, except for a committed read of a
  // read-backup table served by a backup (coordinator_block.h "Read backup").
  uint16_t first = 0;
  bool done = false;
  protocol::ReplicaChain chain;  // where it was sent (a node failure there fails it)
  // Unique-index maintenance (protocol/unique_index.h): an operation on a hidden table
  // run for the base operation tx.ops[parent]; a base operation whose LQH_KEYCONF came
  // keeps its result in `held` until its `children` are all answered.
  static constexpr uint32_t kNoParent = UINT32_MAX;
  uint32_t parent = kNoParent;
  uint32_t index_table = 0;  // a child's hidden table
  uint32_t children = 0;
  bool failed = false;  // a child failed: the error is its result, not `held`
  protocol::OpResultMsg held;
};

struct CoordinatorBlock::Transaction {
  enum class State : uint8_t { kActive, kCommitting, kAborting };

  ApiKey key;
  kernel::BlockAddress client;
  uint64_t transid = 0;
  State state = State::kActive;
  std::vector<Operation> ops;
  uint32_t outstanding = 0;  // operations sent, not yet answered
  bool executing = false;    // the client ended a batch and waits for the answer
  bool commit_requested = false;
  bool rollback_requested = false;
  ErrorCode error = ErrorCode::kOk;  // first fatal error: the transaction must abort
  std::string error_message;
  std::vector<std::pair<uint16_t, uint16_t>> participants;  // (node, log part)
  std::vector<bool> answered;                  // per participant, from the commit / abort on
  uint32_t awaiting = 0;                       // LQH_COMMITCONF / LQH_ABORTCONF still expected
  uint32_t gci = 0;                            // the GCI it commits in (0 until the commit starts)
  std::vector<protocol::OpResultMsg> results;  // of the current batch

  // Makes a released record new again for the next transaction (CoordinatorBlock keeps
  // a few released records, find_or_create): every field as a new record has it, but its
  // lists keep their buffers unless they grew past kKeptCapacity entries, so a
  // transaction of a few operations allocates nothing here.
  static constexpr size_t kKeptCapacity = 64;
  void reset_for_reuse() {
    std::vector<Operation> kept_ops = std::move(ops);
    std::vector<std::pair<uint16_t, uint16_t>> kept_participants = std::move(participants);
    std::vector<bool> kept_answered = std::move(answered);
    std::vector<protocol::OpResultMsg> kept_results = std::move(results);
    *this = Transaction{};
    keep(&kept_ops, &ops);
    keep(&kept_participants, &participants);
    keep(&kept_answered, &answered);
    keep(&kept_results, &results);
  }

 private:
  template <typename List>
  static void keep(List* kept, List* into) {
    kept->clear();
    if (kept->capacity() <= kKeptCapacity) *into = std::move(*kept);
  }
};

struct CoordinatorBlock::Scan {
  struct Fragment {
    uint32_t fragment = 0;
    uint16_t node = 0;
    uint16_t log_part = 0;
    bool done = false;
    bool in_flight = false;  // a SCAN_FRAGREQ / NEXTREQ awaits its answer
  };
  uint32_t ptr = 0;
  kernel::BlockAddress client;
  uint64_t api_tx = 0;
  uint32_t scan_id = 0;
  uint64_t transid = 0;
  std::vector<Fragment> fragments;
  uint32_t batch_rows = 0;  // per fragment batch, as every SCAN_FRAGREQ asked
  // Fragment batches of the current round not yet sent to the client: at most one
  // SCAN_TABCONF's worth (a fuller one is sent first), so a scan holds ≤ 64 KiB here.
  protocol::ScanTabConf pending;
  bool closing = false;      // the client closed it, or it failed: nothing more is forwarded
  bool client_done = false;  // the client has had its final SCAN_TABCONF / SCAN_TABREF
};

}  // namespace duo::coordinator
