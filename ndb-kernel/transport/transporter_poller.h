// TransporterPoller: a Transporter as the ThreadPoller of the data node's receive thread
// (runtime/thread_poller.h). The receive thread then runs the transporter's I/O loop
// itself, between its signals: bytes read from a socket become signals on its own queue
// (or another thread's), handled without a hand-off to and from an I/O thread.
//
// Thread-safety: poll() on the one receive thread; wake() from any thread.
#pragma once

#include <cstdint>

#include "ndb-kernel/common/clock.h"
#include "ndb-kernel/runtime/thread_poller.h"
#include "ndb-kernel/transport/transporter.h"

namespace duo::transport {

class TransporterPoller final : public kernel::ThreadPoller {
 public:
  // `transporter` (created with options.io_thread = false) must outlive the runtime's
  // threads.
  explicit TransporterPoller(Transporter* transporter) : transporter_(transporter) {}

  void poll(uint64_t max_wait_ns) override {
    // epoll counts in milliseconds: round up, so a timer due in 0.3 ms is not polled for
    // in a busy loop of zero-length waits.
    const uint64_t wait_ms = (max_wait_ns + kNanosPerMilli - 1) / kNanosPerMilli;
    // Only before start() or after stop() does this fail: nothing to poll then.
    transporter_->poll(wait_ms).ignore_error();
  }
  void wake() override { transporter_->wake_poller(); }

 private:
  Transporter* const transporter_;
};

}  // namespace duo::transport
