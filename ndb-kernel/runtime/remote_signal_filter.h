// RemoteSignalFilter: the hook by which a node's kernel logic drops signals that arrive
// from another node before any block sees them (NDB's receive-side check of the sender
// node's state: a node declared dead is not heard until it has started again).
//
// One filter per node at most; a block installs it through its BlockContext
// (Block::set_remote_signal_filter; the membership block does, see
// membership/signal_gate.h). Both runtimes consult it at the same point: right before a
// signal whose sender is on another node would be handed to its block (the simulator in
// Simulator::deliver, after a paused node's held signals are released; the
// ThreadRuntime on the receiving block's thread). So the simulator and duo_datad drop
// exactly the same signals. Signals between blocks of one node and harness-injected
// signals are never filtered.
//
// Thread-safety: drops() is called on any block thread of the node (in duo_datad
// concurrently, and concurrently with the owner's updates), so implementations are
// thread-safe and lock-free (DESIGN.md §3: no mutex on the hot path).
#pragma once

#include "ndb-kernel/runtime/signal.h"

namespace duo::kernel {

class RemoteSignalFilter {
 public:
  virtual ~RemoteSignalFilter() = default;

  // True if `signal`, sent by a block of another node, must be dropped unseen. Counts
  // and logs its drops itself; the runtime only discards the signal.
  virtual bool drops(const Signal& signal) = 0;
};

}  // namespace duo::kernel
