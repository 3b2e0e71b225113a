// Random helpers and the xoshiro256** / splitmix64 generators, written from the
// published algorithm descriptions.
#include "ndb-kernel/common/random.h"

#include <cstdio>
#include <cstdlib>

namespace duo {
namespace {

[[noreturn]] void random_precondition_failed(const char* what) {
  std::fprintf(stderr, "Random: precondition failed: %s\n", what);
  std::abort();
}

inline uint64_t rotate_left(uint64_t x, int bits) {
  return (x << bits) | (x >> (64 - bits));
}

}  // namespace

uint64_t Random::uniform(uint64_t n) {
  if (n == 0) random_precondition_failed("uniform(0)");
  // Lemire, "Fast Random Integer Generation in an Interval" (2019): the high word of
  // x * n is uniform in [0, n) once the low word avoids the first (2^64 mod n) values.
  unsigned __int128 product = static_cast<unsigned __int128>(next_u64()) * n;
  uint64_t low = static_cast<uint64_t>(product);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    while (low < threshold) {
      product = static_cast<unsigned __int128>(next_u64()) * n;
      low = static_cast<uint64_t>(product);
    }
  }
  return static_cast<uint64_t>(product >> 64);
}

uint64_t Random::uniform_range(uint64_t lo, uint64_t hi) {
  if (lo > hi) random_precondition_failed("uniform_range(lo > hi)");
  const uint64_t span = hi - lo;
  if (span == UINT64_MAX) return next_u64();  // the full range: span + 1 would wrap to 0
  return lo + uniform(span + 1);
}

double Random::next_double() {
  // The top 53 bits fill a double's mantissa exactly, so every value is equally likely.
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

bool Random::bernoulli(double p) {
  if (p <= 0.0) return false;  // also consumes no randomness, keeping sequences stable
  if (p >= 1.0) return true;
  return next_double() < p;
}

uint64_t splitmix64_next(uint64_t& state) {
  state += 0x9E3779B97F4A7C15ULL;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

SeededRandom::SeededRandom(uint64_t seed) : seed_(seed) {
  uint64_t expander = seed;
  for (uint64_t& word : state_) word = splitmix64_next(expander);
  // splitmix64's output mix is a bijection and the four inputs differ, so at most one
  // word can be zero; the check documents the invariant xoshiro needs.
  if ((state_[0] | state_[1] | state_[2] | state_[3]) == 0) {
    random_precondition_failed("all-zero state");
  }
}

SeededRandom SeededRandom::from_state(const std::array<uint64_t, 4>& state) {
  if ((state[0] | state[1] | state[2] | state[3]) == 0) {
    random_precondition_failed("from_state with all-zero state");
  }
  SeededRandom random;
  random.state_ = state;
  return random;
}

uint64_t SeededRandom::next_u64() {
  const uint64_t result = rotate_left(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotate_left(state_[3], 45);
  return result;
}

SeededRandom SeededRandom::fork() {
  return SeededRandom(next_u64());
}

}  // namespace duo
