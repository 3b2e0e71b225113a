// ThreadConfig: NDB's config.ini parameter that lays out a data node's threads by hand,
// e.g. ThreadConfig=main,recv={count=1},tc,ldm={count=4,cpubind=2-5} — parsed into a
// ThreadLayout (thread_layout.h) and per-thread CPU bindings.
//
// Accepted thread types and counts: main, rep (0 or 1; rep work runs on the main thread,
// and with main={count=0} both run on the single receive thread), recv (1..16), ldm
// (0..64; 0: local query work on the receive thread), tc (0 or 1: DuoDB runs one
// coordinator per node), send (0..8), and io, wd, watchdog, idxbld (accepted; DuoDB's IO
// threads are DiskIOThreadPool's, its other helpers are not separate threads). Types not
// named get NDB's defaults: 1 main, 1 recv, 1 ldm, 0 tc, 0 send. Properties: count,
// cpubind and cpuset (CPU ids and ranges: "1,2,5-7"; cpubind pins thread i of the type
// to the i-th CPU, cpuset lets all of them run on the set), cpubind_exclusive and
// cpuset_exclusive (applied as the non-exclusive form), spintime, realtime, thread_prio
// and nosend (accepted and ignored). Anything else is an error naming the entry.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/runtime/thread_layout.h"

namespace duo::kernel {

struct ThreadConfig {
  ThreadLayout layout;
  // CPUs each thread may run on, by thread index (layout's numbering); empty: any.
  std::vector<std::vector<uint32_t>> cpus;
  // Properties accepted without effect ("spintime of ldm"), for the startup log.
  std::vector<std::string> ignored;
};

// Parses a ThreadConfig value. kConfigError with what is wrong.
Result<ThreadConfig> parse_thread_config(std::string_view text);

}  // namespace duo::kernel
