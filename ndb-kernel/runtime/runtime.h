// BlockContext: the runtime as one block sees it — the block's only way to send
// signals, set timers, read the time and draw random numbers (DESIGN.md §3).
//
// Two runtimes implement it: the real one (runtime/thread_runtime.h: block threads,
// lock-free queues, steady-clock timers) and the deterministic simulator
// (sim/simulator.h: one thread, virtual time, a simulated network). A runtime gives
// every block its own BlockContext when the block is registered; the context knows the
// block's node and owns the block's random stream, so one block's draws never shift
// another's sequence.
//
// Delivery guarantees every runtime provides:
//   - Signals from one block to another block are delivered in the order they were
//     sent (per sender/receiver FIFO). Signals from different senders may interleave.
//   - A delayed signal is delivered no earlier than its delay; delayed signals are not
//     ordered with respect to undelayed ones.
//   - A signal to another node may be lost (link cut, node failure); a signal to a block
//     of the same node is lost only if the node itself stops.
//
// Thread-safety: a BlockContext is used only by its block, i.e. only on the thread that
// runs the block's handlers. It is not safe to call from anywhere else.
#pragma once

#include <cstdint>

#include "ndb-kernel/common/clock.h"
#include "ndb-kernel/common/random.h"
#include "ndb-kernel/common/status.h"
#include "ndb-kernel/runtime/remote_signal_filter.h"
#include "ndb-kernel/runtime/signal.h"

namespace duo::kernel {

class BlockContext {
 public:
  virtual ~BlockContext() = default;

  // Queues `signal` for its receiver() (sender and receiver already filled in). Errors:
  //   kInvalidArgument  the signal is not sendable (no id, section over the limit), or
  //                     its receiver is a block that does not exist on this node;
  //   kTemporary        the receiver's queue (or the runtime's event budget) is full:
  //                     overload, the caller refuses its own request or retries later;
  //   kNotSupported     the receiver is on another node and no transport is attached.
  // A signal to another node that is lost in the network is not an error here.
  virtual Status send(Signal signal) = 0;

  // Delivers `signal` to its receiver no earlier than `delay_ms` from now. The receiver
  // must be on this node (timers do not cross the network; a block that wants a remote
  // timeout sets a local timer and sends when it fires). Errors as for send(), plus
  // kInvalidArgument for a receiver on another node and kTemporary when the timer
  // budget is exhausted.
  virtual Status send_delayed(Signal signal, uint64_t delay_ms) = 0;

  // The runtime's clock: steady time in the real runtime, virtual time in the simulator.
  virtual const Clock& clock() const = 0;
  // The block's own deterministic random stream.
  virtual Random& random() = 0;
  // The node this block runs on.
  virtual uint16_t node_id() const = 0;

  // Installs `filter` (not owned; nullptr removes it) for every signal that reaches this
  // node from another node (remote_signal_filter.h). One per node: a later call
  // replaces it. The filter must live as long as the node's blocks; the runtime forgets
  // it when it destroys them (a crashed node restarts without one).
  virtual void set_remote_signal_filter(RemoteSignalFilter* filter) = 0;
};

}  // namespace duo::kernel
