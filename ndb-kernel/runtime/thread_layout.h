// ThreadLayout: which threads a data node runs, and automatic_thread_layout(), the
// default for a machine's core count (in the spirit of RonDB's automatic thread
// configuration: the operator says nothing and gets a sensible split).
//
// Roles (DESIGN.md §3):
//   main  the node-global blocks: membership, cluster_control, dictionary, distribution;
//         light but latency sensitive (heartbeats).
//   recv  reads the transporters (sockets to other nodes) and routes arriving signals.
//   send  writes to the transporters; with 0 send threads, block threads send their own
//         buffered data (cheapest on small machines, where a handoff costs more than it
//         saves).
//   ldm   "local data manager" workers: each owns a share of the fragments with its
//         instances of local_query, tuple_store, the indexes. Nearly all work is here.
//
// Threads are numbered main first, then the separate recv threads, then send, then
// ldm; the *_thread() functions give the index of each, which is what
// ThreadRuntime::add_block takes.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace duo::kernel {

struct ThreadLayout {
  uint32_t ldm_threads = 1;
  uint32_t recv_threads = 1;
  uint32_t send_threads = 0;
  // The main thread also does the receive work (only with recv_threads == 1). On small
  // machines a dedicated receive thread would sit mostly idle on a whole core.
  bool main_runs_recv = true;

  // Total threads: 1 main + separate recv + send + ldm.
  uint32_t thread_count() const { return 1 + separate_recv_threads() + send_threads + ldm_threads; }
  // Receive threads that are not the main thread.
  uint32_t separate_recv_threads() const { return main_runs_recv ? 0 : recv_threads; }
  uint32_t main_thread() const { return 0; }
  // Index of receive thread `i` (0 = the main thread when main_runs_recv).
  uint32_t recv_thread(uint32_t i) const { return main_runs_recv ? i : 1 + i; }
  uint32_t send_thread(uint32_t i) const { return 1 + separate_recv_threads() + i; }
  uint32_t ldm_thread(uint32_t i) const { return send_thread(send_threads) + i; }
  // One name per thread, in index order: "main+recv", "ldm0", "ldm1", ...
  std::vector<std::string> thread_names() const;
  // "main+recv, 1 ldm" for the startup log.
  std::string describe() const;
  // Empty if consistent, else what is wrong (e.g. main_runs_recv with 2 recv threads).
  std::string validate() const;

  friend bool operator==(const ThreadLayout&, const ThreadLayout&) = default;
};

// Upper bound on LDM threads: the redo log has one part per LDM thread and fragments are
// spread over them, so very wide nodes gain little beyond this.
inline constexpr uint32_t kLdmThreadsMax = 64;
// Upper bounds of the automatic layout for receive and send threads: enough to feed
// kLdmThreadsMax LDM threads (about one recv per four ldm, one send per eight).
inline constexpr uint32_t kRecvThreadsMax = 16;
inline constexpr uint32_t kSendThreadsMax = 8;

// The automatic layout for `core_count` usable cores (0 is treated as 1). The rule:
//   cores 1..2   1 main+recv thread, 1 ldm            (2 threads even on 1 core: the
//                                                       main thread is mostly idle, and
//                                                       keeping ldm separate keeps the
//                                                       thread model the same everywhere)
//   cores 3..4   1 main+recv thread, cores-1 ldm
//   cores 5..8   1 main, 1 recv, cores-2 ldm
//   cores 9..16  1 main, 2 recv, 1 send, cores-4 ldm
//   cores > 16   1 main, cores/8 recv (at most kRecvThreadsMax), cores/16 send (at most
//                kSendThreadsMax), the rest ldm (at most kLdmThreadsMax; spare cores
//                are left to the OS and the IO threads)
// So the non-LDM share shrinks from a half (2 cores) to about a fifth (large machines),
// as in RonDB, where receive and send work grows with the number of LDM threads feeding
// them.
ThreadLayout automatic_thread_layout(uint32_t core_count);

// Cores available to this process (std::thread::hardware_concurrency, at least 1).
uint32_t available_core_count();

}  // namespace duo::kernel
