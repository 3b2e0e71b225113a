// DUO_KERNEL_CHECK: the always-on invariant check of the kernel runtime.
//
// A failed check means a programming bug in kernel code (a handler registered twice, a
// block attached to two runtimes, a signal word index past the fixed payload). It prints
// the condition, the location and a message, then aborts the process: a data node whose
// kernel invariants are broken must stop before it can spread corruption to its peers
// (DESIGN.md §10, STYLE.md "Three assertion tiers"). Input from outside the node (a peer's
// signal, a client packet) must never reach a DUO_KERNEL_CHECK; it gets a Status instead.
//
// Thread-safety: may be used from any thread.
#pragma once

#include <cstdio>
#include <cstdlib>

#define DUO_KERNEL_CHECK(condition, message)                                               \
  do {                                                                                     \
    if (!(condition)) [[unlikely]] {                                                       \
      std::fprintf(stderr, "%s:%d: kernel invariant failed: %s: %s\n", __FILE__, __LINE__, \
                   #condition, (message));                                                 \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)
