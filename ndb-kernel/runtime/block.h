// Block: the base class of every kernel module (membership, coordinator, local_query...).
//
// A block owns its state and reacts only to signals (DESIGN.md §3). A concrete block
// registers one handler per signal id in its constructor:
//
//   class Pinger : public Block {
//    public:
//     Pinger() : Block("pinger", kPingerBlock) { on(kPong, &Pinger::on_pong); }
//    private:
//     void on_pong(Signal& signal) { ... send(peer_, Signal(kPing, {n})); }
//   };
//
// A runtime (ThreadRuntime or sim::Simulator) attaches the block to a BlockContext,
// calls on_start() once, then deliver()s signals one at a time. Everything a block
// needs from the outside world — sending, timers, the clock, randomness — comes
// through that context; a block never touches threads, sockets, files, the wall clock
// or unseeded randomness (enforced by the kernel tidy test, runtime/kernel_tidy.py).
// A signal with no registered handler is logged as an error and counted, never a crash:
// a peer running a newer version may send signals this node does not know.
//
// Thread-safety: a block is single-threaded. The runtime calls attach(), on_start()
// and deliver() from the one thread that owns the block, never concurrently. Subclasses
// that expose counters to test threads make them atomic themselves.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/common/status.h"
#include "ndb-kernel/runtime/runtime.h"
#include "ndb-kernel/runtime/signal.h"

namespace duo::kernel {

class Block {
 public:
  // `name` is for logs ("pinger"); (block_number, instance) is the block's address on
  // its node. The node id is learned at attach().
  Block(std::string name, uint16_t block_number, uint16_t instance = 0);
  virtual ~Block();
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  const std::string& name() const { return name_; }
  // The block's address; node_id is 0 until attached.
  const BlockAddress& address() const { return address_; }
  bool attached() const { return context_ != nullptr; }
  // Signals that arrived without a registered handler.
  uint64_t unknown_signal_count() const { return unknown_signal_count_; }

  // ---- Called by runtimes only ----

  // Binds the block to its runtime. Aborts if already attached: a block belongs to
  // exactly one runtime for its whole life (a restarted node gets new blocks).
  void attach(BlockContext& context);
  // Called once after attach(), before any signal, on the block's thread: where a block
  // sends its first signals or arms its first timers.
  virtual void on_start() {}
  // Runs the handler registered for signal.id(). The handler may move parts (the
  // section) out of `signal`; the runtime discards it afterwards.
  void deliver(Signal& signal);

 protected:
  using Handler = void (Block::*)(Signal&);

  // Registers `handler` for `id`. Call from the subclass constructor. Aborts on a
  // second handler for one id (two handlers for one signal is always a bug).
  template <typename Derived>
  void on(SignalId id, void (Derived::*handler)(Signal&)) {
    static_assert(std::is_base_of_v<Block, Derived>, "handlers must be members of a Block");
    // Derived-to-base member pointer conversion: valid because Block is a non-virtual
    // base, and the handler is only ever invoked on the Derived object itself.
    register_handler(id, static_cast<Handler>(handler));
  }

  // Sends `signal` to `receiver`, filling in the sender. Errors: see BlockContext::send.
  Status send(const BlockAddress& receiver, Signal signal);
  // Sends `signal` to `receiver` (on this node) after `delay_ms`.
  Status send_delayed(const BlockAddress& receiver, Signal signal, uint64_t delay_ms);

  const Clock& clock() const;
  Random& random();
  // Installs the node's filter of signals from other nodes (see
  // BlockContext::set_remote_signal_filter). Only the membership block does.
  void set_remote_signal_filter(RemoteSignalFilter* filter);
  uint16_t node_id() const { return address_.node_id; }
  // The address of block (block_number, instance) on this block's node.
  BlockAddress local_address(uint16_t block_number, uint16_t instance = 0) const {
    return BlockAddress{address_.node_id, block_number, instance};
  }
  // Log component of this block, "pinger.0@n1"; see DUO_BLOCK_LOG.
  const std::string& log_tag() const { return log_tag_; }

 private:
  void register_handler(SignalId id, Handler handler);
  BlockContext& context() const;

  // Constant after attach().
  const std::string name_;
  BlockAddress address_;
  std::string log_tag_;
  BlockContext* context_ = nullptr;

  // Indexed by SignalId; null entries have no handler. Dense because GSNs are small
  // consecutive numbers (NDB has under a thousand), so lookup is one load.
  std::vector<Handler> handlers_;
  uint64_t unknown_signal_count_ = 0;
};

}  // namespace duo::kernel

// DUO_BLOCK_LOG(INFO) << "...": logs with the block's tag as component. Use inside
// Block member functions.
#define DUO_BLOCK_LOG(level) DUO_LOG(level, log_tag())
