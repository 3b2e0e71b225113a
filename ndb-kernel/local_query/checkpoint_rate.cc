// The checkpoint write-rate rule and budget (checkpoint_rate.h).
//
// Why these rules. A checkpoint exists to let redo go: until it completes, every byte
// of redo since it began must be kept (and replayed by a restart). Writing it fast
// makes redo short but takes disk bandwidth from the redo log's own writes and fsyncs,
// which every commit waits for. NDB therefore writes checkpoints at a configured rate
// (MaxDiskWriteSpeed), faster while a node restarts (the restarting node is not
// recoverable on its own until its first checkpoint completes:
// MaxDiskWriteSpeedOwnRestart; the others give it room: MaxDiskWriteSpeedOtherNodeRestart),
// slower down to MinDiskWriteSpeed when the node is busy, and faster when the redo log
// fills up. The busy signal here is the redo log itself: a redo buffer that does not
// drain means its writes already compete for the disk. The redo rules win over the
// others: a slow checkpoint must never be why redo grows without bound. Past
// redo_raise_bytes (the redo that starts the next checkpoint) the checkpoint is behind
// and goes at the fastest configured limit; past twice that the limit is off, so the
// redo a throttled checkpoint keeps is at most about twice what an unthrottled one
// would keep, and the redo buffer's own overload refusal (NDB error 1221) still guards
// the writers as before.
//
// Thread-safety: see the header.
#include "ndb-kernel/local_query/checkpoint_rate.h"

#include <algorithm>

namespace duo::local_query {

std::string_view lcp_speed_reason_name(LcpSpeedReason reason) {
  switch (reason) {
    case LcpSpeedReason::kUnlimited:
      return "unlimited";
    case LcpSpeedReason::kNormal:
      return "normal";
    case LcpSpeedReason::kRedoBacklog:
      return "redo backlog";
    case LcpSpeedReason::kOtherNodeRestart:
      return "other node restart";
    case LcpSpeedReason::kOwnRestart:
      return "own restart";
    case LcpSpeedReason::kRedoFilling:
      return "redo filling";
    case LcpSpeedReason::kRedoOverflowing:
      return "redo overflowing";
  }
  return "unknown";
}

LcpSpeed choose_lcp_write_speed(const LcpWriteSpeeds& speeds, const LcpSpeedInputs& inputs) {
  if (!speeds.limited()) return {0, LcpSpeedReason::kUnlimited};
  if (speeds.redo_raise_bytes != 0) {
    if (inputs.redo_bytes_since_start / 2 >= speeds.redo_raise_bytes) {
      return {0, LcpSpeedReason::kRedoOverflowing};
    }
    if (inputs.redo_bytes_since_start >= speeds.redo_raise_bytes) {
      const uint64_t fastest =
          std::max({speeds.normal_bytes_per_s, speeds.other_node_restart_bytes_per_s,
                    speeds.own_restart_bytes_per_s});
      return {fastest, LcpSpeedReason::kRedoFilling};
    }
  }
  // A restart's limits are raises: a configuration setting them below the normal one
  // (datad refuses it, tests may not) never slows a restart down.
  if (inputs.own_restart) {
    return {std::max(speeds.own_restart_bytes_per_s, speeds.normal_bytes_per_s),
            LcpSpeedReason::kOwnRestart};
  }
  if (inputs.other_node_restart) {
    return {std::max(speeds.other_node_restart_bytes_per_s, speeds.normal_bytes_per_s),
            LcpSpeedReason::kOtherNodeRestart};
  }
  if (inputs.redo_backlog && speeds.min_bytes_per_s != 0) {
    return {std::min(speeds.min_bytes_per_s, speeds.normal_bytes_per_s),
            LcpSpeedReason::kRedoBacklog};
  }
  return {speeds.normal_bytes_per_s, LcpSpeedReason::kNormal};
}

void LcpWriteBudget::advance(uint64_t now_ns, uint64_t slice_bytes) {
  const uint64_t slice = now_ns / kLcpRateSliceNs;
  if (slice <= slice_) return;
  const uint64_t passed = slice - slice_;
  slice_ = slice;
  // passed * slice_bytes may overflow after a long pause: compare by division first.
  if (passed > owed_bytes_ / slice_bytes) {
    owed_bytes_ = 0;
  } else {
    owed_bytes_ -= passed * slice_bytes;
  }
}

uint64_t LcpWriteBudget::wait_ns(uint64_t now_ns, uint64_t bytes_per_s) {
  if (bytes_per_s == 0) {
    // Unlimited: nothing is owed once a limit applies again.
    owed_bytes_ = 0;
    slice_ = now_ns / kLcpRateSliceNs;
    return 0;
  }
  const uint64_t slice_bytes = std::max<uint64_t>(1, bytes_per_s / kLcpRateSlicesPerSecond);
  advance(now_ns, slice_bytes);
  if (owed_bytes_ < slice_bytes) return 0;
  // After m more slices the debt is below one slice's budget.
  const uint64_t slices = owed_bytes_ / slice_bytes;
  return (slice_ + slices) * kLcpRateSliceNs - now_ns;
}

void LcpWriteBudget::charge(uint64_t bytes) {
  // wait_ns() brought the debt to this slice just before (the block charges in the same
  // event it asked in), so only the bytes are added.
  owed_bytes_ += bytes;
}

}  // namespace duo::local_query
