// ThreadPoller: something a block thread waits on besides its signal queue — the node's
// transporter, on the thread that receives from the network (DESIGN.md §3: on small
// machines a request is received, coordinated and executed on one thread, with no
// hand-off between threads).
//
// A thread with a poller (ThreadRuntime::set_thread_poller) calls poll() when it has
// nothing queued, with the time until its next timer as the longest wait, instead of
// sleeping on its condition variable; and, while busy, now and then with no wait at
// all, so the network is not starved by a long queue. A sender that finds the thread
// asleep calls wake() instead of notifying the condition variable. Whatever poll()
// receives, it delivers into the runtime (normally onto the polling thread's own queue,
// which the thread then drains without any wake-up).
//
// Thread-safety: poll() is called only by the owning block thread; wake() from any
// thread.
#pragma once

#include <cstdint>

namespace duo::kernel {

class ThreadPoller {
 public:
  virtual ~ThreadPoller() = default;
  // Handles what is ready, waiting at most `max_wait_ns` (0: not at all) for something
  // to arrive or for wake().
  virtual void poll(uint64_t max_wait_ns) = 0;
  // Makes a poll() that is waiting return soon.
  virtual void wake() = 0;
};

}  // namespace duo::kernel
