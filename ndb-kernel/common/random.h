// Random: the interface through which kernel code gets randomness, and SeededRandom,
// a small deterministic generator (xoshiro256**, seeded through splitmix64).
//
// Unseeded randomness is banned in kernel code: no rand(), std::random_device,
// time-seeded engines or reading /dev/urandom in blocks. A block receives a Random&
// from its runtime; the real runtime seeds it once at start (and logs the seed), the
// simulator derives every generator from the run's seed, so a failing run replays bit
// for bit. Derive independent streams with SeededRandom::fork() rather than by sharing
// one generator across components, so adding a draw in one block does not shift every
// other block's sequence.
//
// Thread-safety: thread-compatible. A generator is owned by one thread (one block
// instance); give each thread its own via fork().
#pragma once

#include <array>
#include <cstdint>

namespace duo {

class Random {
 public:
  virtual ~Random() = default;

  // 64 uniformly distributed bits.
  virtual uint64_t next_u64() = 0;

  // Uniform in [0, n). Precondition: n > 0 (aborts otherwise: a caller bug). Unbiased
  // (Lemire's multiply-and-reject), because modulo bias would skew simulated fault
  // rates in ways that are hard to notice.
  uint64_t uniform(uint64_t n);
  // Uniform in the closed range [lo, hi]. Precondition: lo <= hi.
  uint64_t uniform_range(uint64_t lo, uint64_t hi);
  // Uniform double in [0, 1) with 53 random bits.
  double next_double();
  // True with probability p (p <= 0: never, p >= 1: always).
  bool bernoulli(double p);
};

// One splitmix64 step: advances `state` and returns the next output. Used to expand a
// 64-bit seed into generator state (it maps any seed, including 0, to a good state).
uint64_t splitmix64_next(uint64_t& state);

// xoshiro256** (Blackman & Vigna): 256 bits of state, period 2^256 - 1, fast, and good
// enough for simulation and load generation. Not cryptographic: never use it for
// passwords, salts or TLS.
class SeededRandom final : public Random {
 public:
  explicit SeededRandom(uint64_t seed);
  // Direct state, for reproducing reference sequences in tests. Precondition: not all
  // words zero (the all-zero state is a fixed point of the generator).
  static SeededRandom from_state(const std::array<uint64_t, 4>& state);

  uint64_t next_u64() override;

  // The seed this generator was built from (0 for from_state), for logging.
  uint64_t seed() const { return seed_; }
  // A new generator seeded from this one's next output: an independent-looking stream
  // whose position depends only on how many draws this one made before the fork.
  SeededRandom fork();

 private:
  SeededRandom() = default;

  uint64_t seed_ = 0;
  std::array<uint64_t, 4> state_{};
};

}  // namespace duo
