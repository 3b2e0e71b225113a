// ThreadLayout: which threads a data node runs and which of them runs what, and
// automatic_thread_layout(), the default for a machine's core count (RonDB's automatic
// thread configuration: the operator says nothing and gets a sensible split).
//
// Roles (DESIGN.md §3):
//   main  the node-global blocks: file system, membership, dictionary, distribution;
//         light but latency sensitive (heartbeats).
//   recv  polls the transporter (the sockets to other nodes) and delivers what arrives;
//         it also runs the coordinator unless there is a tc thread, and the local query
//         work when there are no ldm threads.
//   tc    the coordinator (DBTC), when it gets a thread of its own (at most one: DuoDB
//         runs one coordinator per node).
//   send  writes to the transporters; with 0 send threads, block threads send their own
//         buffered data (cheapest on small machines, where a handoff costs more than it
//         saves).
//   ldm   "local data manager" workers: each owns a share of the fragments with its
//         instances of local_query. With none, the receive thread runs them.
//
// Why receive-only layouts on small machines: every hand-off between threads is a
// wake-up (10-25 µs on a VM). With the receive thread running coordinator and local
// query work, a key request is read from the socket, coordinated, executed and answered
// on one thread (RonDB uses receive threads only below 5 CPUs). Larger machines keep
// separate ldm threads, so that the work of many clients spreads over the cores.
//
// Threads are numbered main first, then the separate recv threads, then send, then tc,
// then ldm; the *_thread() functions give the index of each, which is what
// ThreadRuntime::add_block takes.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace duo::kernel {

struct ThreadLayout {
  // 0: the local query instances run on the receive thread.
  uint32_t ldm_threads = 1;
  uint32_t recv_threads = 1;
  uint32_t send_threads = 0;
  // The main thread also does the receive work (only with recv_threads == 1). On small
  // machines a dedicated receive thread would sit mostly idle on a whole core.
  bool main_runs_recv = true;
  // 0 or 1; 0: the coordinator runs on the receive thread.
  uint32_t tc_threads = 0;

  // Total threads: 1 main + separate recv + send + tc + ldm.
  uint32_t thread_count() const {
    return 1 + separate_recv_threads() + send_threads + tc_threads + ldm_threads;
  }
  // Receive threads that are not the main thread.
  uint32_t separate_recv_threads() const { return main_runs_recv ? 0 : recv_threads; }
  uint32_t main_thread() const { return 0; }
  // Index of receive thread `i` (0 = the main thread when main_runs_recv).
  uint32_t recv_thread(uint32_t i) const { return main_runs_recv ? i : 1 + i; }
  uint32_t send_thread(uint32_t i) const { return 1 + separate_recv_threads() + i; }
  // The coordinator's thread.
  uint32_t tc_thread() const { return tc_threads > 0 ? send_thread(send_threads) : recv_thread(0); }
  // Index of ldm thread `i` (only with ldm_threads > 0).
  uint32_t ldm_thread(uint32_t i) const { return send_thread(send_threads) + tc_threads + i; }
  // The thread of the local query instance of log part `part`: the ldm threads in turn,
  // or the receive thread when there are none.
  uint32_t ldm_thread_of_part(uint32_t part) const {
    return ldm_threads > 0 ? ldm_thread(part % ldm_threads) : recv_thread(0);
  }
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
//   cores 1..4   1 main+recv thread that runs everything (coordinator and local query
//                work included): one thread, no hand-off on a request's path
//   cores 5..8   1 main, 1 recv (+ coordinator), cores-2 ldm
//   cores 9..16  1 main, 2 recv, 1 send, cores-4 ldm
//   cores > 16   1 main, cores/8 recv (at most kRecvThreadsMax), cores/16 send (at most
//                kSendThreadsMax), the rest ldm (at most kLdmThreadsMax; spare cores
//                are left to the OS and the IO threads)
// So the non-LDM share shrinks to about a fifth on large machines, as in RonDB, where
// receive and send work grows with the number of LDM threads feeding them.
ThreadLayout automatic_thread_layout(uint32_t core_count);

// Cores available to this process (std::thread::hardware_concurrency, at least 1).
uint32_t available_core_count();

}  // namespace duo::kernel
