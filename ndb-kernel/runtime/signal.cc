// Signal value operations and the process-wide signal name registry.
#include "ndb-kernel/runtime/signal.h"

#include <mutex>
#include <unordered_map>

#include "ndb-kernel/runtime/kernel_check.h"

namespace duo::kernel {
namespace {

struct SignalNameRegistry {
  std::mutex mutex;
  std::unordered_map<SignalId, std::string> names;  // GUARDED_BY(mutex)
};

SignalNameRegistry& registry() {
  // Leaked on purpose: blocks on other threads may still log while static destructors
  // run at process exit.
  static SignalNameRegistry* instance = new SignalNameRegistry;
  return *instance;
}

}  // namespace

std::string BlockAddress::to_string() const {
  return "n" + std::to_string(node_id) + ".b" + std::to_string(block) + ".i" +
         std::to_string(instance);
}

Signal::Signal(SignalId id, std::initializer_list<uint32_t> words) : id_(id) {
  DUO_KERNEL_CHECK(words.size() <= kSignalWordsMax, "too many inline signal words");
  for (uint32_t w : words) words_[length_words_++] = w;
}

Signal Signal::clone() const {
  Signal copy(id_);
  copy.length_words_ = length_words_;
  copy.sender_ = sender_;
  copy.receiver_ = receiver_;
  copy.words_ = words_;
  copy.section_ = section_;
  return copy;
}

Status Signal::check_sendable() const {
  if (id_ == kNoSignal) {
    return Status(ErrorCode::kInvalidArgument, "signal has no signal id");
  }
  if (section_.size() > kSectionBytesMax) {
    return Status(ErrorCode::kInvalidArgument,
                  "signal " + signal_name(id_) + " section of " + std::to_string(section_.size()) +
                      " bytes exceeds the limit of " + std::to_string(kSectionBytesMax) + " bytes");
  }
  return Status::OK();
}

std::string Signal::describe() const {
  std::string text =
      signal_name(id_) + " " + sender_.to_string() + "->" + receiver_.to_string() + " [";
  for (uint32_t i = 0; i < length_words_; ++i) {
    if (i > 0) text += ' ';
    text += std::to_string(words_[i]);
  }
  text += "] +" + std::to_string(section_.size()) + "B";
  return text;
}

Status register_signal_name(SignalId id, std::string_view name) {
  if (id == kNoSignal) return Status(ErrorCode::kInvalidArgument, "signal id 0 is reserved");
  if (name.empty()) return Status(ErrorCode::kInvalidArgument, "empty signal name");
  SignalNameRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto [it, inserted] = r.names.emplace(id, std::string(name));
  if (!inserted && it->second != name) {
    return Status(ErrorCode::kInvalidArgument, "signal id " + std::to_string(id) +
                                                   " is already registered as " + it->second +
                                                   ", not " + std::string(name));
  }
  return Status::OK();
}

std::string signal_name(SignalId id) {
  SignalNameRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.names.find(id);
  if (it != r.names.end()) return it->second;
  return "GSN" + std::to_string(id);
}

}  // namespace duo::kernel
