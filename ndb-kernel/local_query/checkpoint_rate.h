// The write-rate limit of local checkpoints (NDB's MaxDiskWriteSpeed family): which
// limit applies to a checkpoint right now, and the per-slice budget that holds its
// chunk writes to it. Pure logic on times and byte counts the caller passes in — the
// local_query block asks before each checkpoint slice and waits out the answer with a
// delayed signal (local_query_checkpoint.cc). docs/formats/redo-and-lcp.md
// ("Checkpoint write rate") describes the rule and why.
//
// The limits are a data node's (bytes per second); datad splits them evenly over the
// node's LDM (local_query) instances, so each instance holds its own share and no
// state is shared between them.
//
// Thread-safety: values and pure functions; an LcpWriteBudget belongs to one block.
#pragma once

#include <cstdint>
#include <string_view>

#include "ndb-kernel/common/clock.h"

namespace duo::local_query {

// NDB measures and limits checkpoint writes in 100 ms slices.
inline constexpr uint64_t kLcpRateSliceNs = 100 * kNanosPerMilli;
inline constexpr uint64_t kLcpRateSlicesPerSecond = kNanosPerSecond / kLcpRateSliceNs;

// One instance's share of the node's limits, bytes per second; 0 means "no limit"
// (checkpoints write as fast as the file system takes them, as before the limits).
struct LcpWriteSpeeds {
  uint64_t normal_bytes_per_s = 0;              // MaxDiskWriteSpeed
  uint64_t other_node_restart_bytes_per_s = 0;  // MaxDiskWriteSpeedOtherNodeRestart
  uint64_t own_restart_bytes_per_s = 0;         // MaxDiskWriteSpeedOwnRestart
  uint64_t min_bytes_per_s = 0;                 // MinDiskWriteSpeed
  // Redo written since the checkpoint began past which it is falling behind: the
  // fastest configured limit applies from there, and no limit from twice that on
  // (0: never raised). datad sets it to the redo that starts the next checkpoint.
  uint64_t redo_raise_bytes = 0;
  bool limited() const { return normal_bytes_per_s != 0; }
};

// Why a limit applies, in order of precedence from the bottom up (the redo rules win).
enum class LcpSpeedReason : uint8_t {
  kUnlimited = 0,         // no limits configured
  kNormal = 1,            // MaxDiskWriteSpeed
  kRedoBacklog = 2,       // MinDiskWriteSpeed: the redo log's own writes lag behind
  kOtherNodeRestart = 3,  // another data node is restarting (it needs our checkpoints
                          // less than it needs our CPU and disk for its copy)
  kOwnRestart = 4,        // this node's restart is not complete until this checkpoint is
  kRedoFilling = 5,       // redo since the checkpoint began passed redo_raise_bytes
  kRedoOverflowing = 6,   // ... and twice that: the limit is off
};
// "normal", "own restart", ... (log lines).
std::string_view lcp_speed_reason_name(LcpSpeedReason reason);

// What the checkpoint's situation is when a slice is about to be written.
struct LcpSpeedInputs {
  bool own_restart = false;         // this node is starting (restore, copy, or the first
                                    // checkpoint after them)
  bool other_node_restart = false;  // some other data node is starting
  bool redo_backlog = false;        // the redo buffer holds more than it should
  uint64_t redo_bytes_since_start = 0;
};

struct LcpSpeed {
  uint64_t bytes_per_s = 0;  // 0: no limit
  LcpSpeedReason reason = LcpSpeedReason::kUnlimited;
};

// The limit that applies (the adaptive rule of the file comment of checkpoint_rate.cc):
//   redo since start >= 2 * redo_raise_bytes: none;  >= redo_raise_bytes: the fastest
//   configured limit; else own restart, other node restart, redo backlog (the minimum),
//   normal — the first that holds.
LcpSpeed choose_lcp_write_speed(const LcpWriteSpeeds& speeds, const LcpSpeedInputs& inputs);

// What one checkpoint's data files cost in writes (the LCP log line, tests).
struct LcpWriteStats {
  uint32_t lcp_id = 0;
  uint64_t bytes = 0;      // data file chunks written (delete records and rows)
  uint64_t write_ns = 0;   // from the start until the last data file was synced
  uint64_t waited_ns = 0;  // of it, waiting for the budget
  LcpSpeed last_speed;     // the limit at the last chunk
  // The highest-precedence rule that applied at some chunk (the redo rules last).
  LcpSpeedReason strongest_reason = LcpSpeedReason::kUnlimited;
  // bytes / write_ns in MB/s (10^6 bytes), 0 when nothing took time.
  double achieved_mb_per_s() const {
    return write_ns == 0 ? 0.0 : static_cast<double>(bytes) * 1e3 / static_cast<double>(write_ns);
  }
};

// The budget of one instance's checkpoint writes: each 100 ms slice (slices are
// aligned on the clock) may take bytes_per_s / 10 bytes. A write is charged whole
// once it is let through, so a slice can end over budget (by less than one chunk);
// the excess is carried into the next slices, which keeps the long-run rate exact.
class LcpWriteBudget {
 public:
  // 0 when a write may start at `now_ns` under `bytes_per_s` (0: no limit); otherwise
  // how many nanoseconds to wait (until the slice in which the carried excess is paid).
  uint64_t wait_ns(uint64_t now_ns, uint64_t bytes_per_s);
  // Charges `bytes` about to be written; call right after wait_ns() answered 0.
  void charge(uint64_t bytes);
  // Bytes charged to the current slice and carried from earlier ones (tests).
  uint64_t owed_bytes() const { return owed_bytes_; }

 private:
  // Moves to the slice of `now_ns`, paying off `slice_bytes` per slice passed.
  void advance(uint64_t now_ns, uint64_t slice_bytes);

  uint64_t slice_ = 0;  // index of the slice owed_bytes_ was last brought to
  uint64_t owed_bytes_ = 0;
};

}  // namespace duo::local_query
