// Block dispatch and the block-side wrappers around BlockContext.
#include "ndb-kernel/runtime/block.h"

#include <utility>

#include "ndb-kernel/runtime/kernel_check.h"

namespace duo::kernel {

Block::Block(std::string name, uint16_t block_number, uint16_t instance)
    : name_(std::move(name)), address_{0, block_number, instance} {
  log_tag_ = name_ + "." + std::to_string(instance);
}

Block::~Block() = default;

void Block::attach(BlockContext& context) {
  DUO_KERNEL_CHECK(context_ == nullptr, "block attached twice");
  context_ = &context;
  address_.node_id = context.node_id();
  log_tag_ =
      name_ + "." + std::to_string(address_.instance) + "@n" + std::to_string(address_.node_id);
}

void Block::register_handler(SignalId id, Handler handler) {
  DUO_KERNEL_CHECK(id != kNoSignal, "handler for signal id 0");
  DUO_KERNEL_CHECK(handler != nullptr, "null signal handler");
  if (handlers_.size() <= id) handlers_.resize(size_t{id} + 1, nullptr);
  DUO_KERNEL_CHECK(handlers_[id] == nullptr, "two handlers for one signal id");
  handlers_[id] = handler;
}

void Block::deliver(Signal& signal) {
  const SignalId id = signal.id();
  if (id < handlers_.size() && handlers_[id] != nullptr) {
    (this->*handlers_[id])(signal);
    return;
  }
  ++unknown_signal_count_;
  DUO_BLOCK_LOG(ERROR) << "no handler for signal " << signal.describe() << "; dropped";
}

BlockContext& Block::context() const {
  DUO_KERNEL_CHECK(context_ != nullptr, "block used before it was attached to a runtime");
  return *context_;
}

Status Block::send(const BlockAddress& receiver, Signal signal) {
  signal.set_sender(address_);
  signal.set_receiver(receiver);
  return context().send(std::move(signal));
}

Status Block::send_delayed(const BlockAddress& receiver, Signal signal, uint64_t delay_ms) {
  signal.set_sender(address_);
  signal.set_receiver(receiver);
  return context().send_delayed(std::move(signal), delay_ms);
}

const Clock& Block::clock() const {
  return context().clock();
}

Random& Block::random() {
  return context().random();
}

void Block::set_remote_signal_filter(RemoteSignalFilter* filter) {
  context().set_remote_signal_filter(filter);
}

}  // namespace duo::kernel
