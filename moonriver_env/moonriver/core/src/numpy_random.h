// numpy's default generator in C++, draw for draw: ``numpy.random.default_rng(seed)`` (a
// SeedSequence feeding PCG64) and the few Generator methods the reference engine calls
// (``integers(lo, hi)``, ``permutation(n)``, ``shuffle(list)``). The set-up and the
// determinization of the core use it, so every seed gives the reference's games.
// Sources: numpy/random/bit_generator.pyx (SeedSequence), src/pcg64/pcg64.h (PCG64 XSL-RR),
// src/distributions/distributions.c (random_interval, buffered_bounded_lemire_uint32) and
// _generator.pyx (shuffle, permutation, integers); tests/core/test_rng.py checks them against
// the installed numpy.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace moonriver {

// The seed as numpy reads an int: little-endian 32-bit words (0 is one zero word).
inline std::vector<std::uint32_t> seed_words(std::uint64_t seed) {
  std::vector<std::uint32_t> words;
  do {
    words.push_back(static_cast<std::uint32_t>(seed));
    seed >>= 32;
  } while (seed != 0);
  return words;
}

// ``words`` (an int as seed_words) plus ``add``, in place: a batch's seed + g + N * k.
inline void add_to_words(std::vector<std::uint32_t>& words, std::uint64_t add) {
  for (std::size_t i = 0; add != 0; ++i) {
    if (i == words.size()) words.push_back(0);
    const std::uint64_t sum = static_cast<std::uint64_t>(words[i]) + (add & 0xFFFFFFFFULL);
    words[i] = static_cast<std::uint32_t>(sum);
    add = (add >> 32) + (sum >> 32);
  }
}

// numpy.random.SeedSequence(entropy).generate_state(n_words) for a spawn-free sequence.
class SeedSequence {
 public:
  explicit SeedSequence(const std::vector<std::uint32_t>& entropy) {
    std::uint32_t hash_const = kInitA;
    for (std::size_t i = 0; i < kPool; ++i)
      pool_[i] = hashmix(i < entropy.size() ? entropy[i] : 0, hash_const);
    for (std::size_t src = 0; src < kPool; ++src)
      for (std::size_t dst = 0; dst < kPool; ++dst)
        if (src != dst) pool_[dst] = mix(pool_[dst], hashmix(pool_[src], hash_const));
    for (std::size_t src = kPool; src < entropy.size(); ++src)
      for (std::size_t dst = 0; dst < kPool; ++dst)
        pool_[dst] = mix(pool_[dst], hashmix(entropy[src], hash_const));
  }

  // ``n`` 32-bit words of state (numpy's generate_state(n, np.uint32)).
  std::vector<std::uint32_t> generate_state(std::size_t n) const {
    std::vector<std::uint32_t> state(n);
    std::uint32_t hash_const = kInitB;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t value = pool_[i % kPool] ^ hash_const;
      hash_const *= kMultB;
      value *= hash_const;
      state[i] = value ^ (value >> kXShift);
    }
    return state;
  }

 private:
  static constexpr std::size_t kPool = 4;
  static constexpr std::uint32_t kInitA = 0x43b0d7e5U, kMultA = 0x931e8875U;
  static constexpr std::uint32_t kInitB = 0x8b51f9ddU, kMultB = 0x58f38dedU;
  static constexpr std::uint32_t kMixL = 0xca01f9ddU, kMixR = 0x4973f715U;
  static constexpr int kXShift = 16;

  static std::uint32_t hashmix(std::uint32_t value, std::uint32_t& hash_const) {
    value ^= hash_const;
    hash_const *= kMultA;
    value *= hash_const;
    return value ^ (value >> kXShift);
  }
  static std::uint32_t mix(std::uint32_t x, std::uint32_t y) {
    const std::uint32_t result = kMixL * x - kMixR * y;
    return result ^ (result >> kXShift);
  }

  std::uint32_t pool_[kPool] = {};
};

// numpy's PCG64 bit generator (128-bit LCG, XSL-RR output) with its buffered 32-bit draws.
// Its fields are those of ``bit_generator.state``: state, inc, has_uint32, uinteger.
struct Pcg64 {
  using u128 = unsigned __int128;
  u128 state = 0, inc = 0;
  bool has_uint32 = false;
  std::uint32_t uinteger = 0;

  Pcg64() = default;
  // numpy.random.PCG64(seed): seeded through SeedSequence(seed) as numpy does.
  explicit Pcg64(const std::vector<std::uint32_t>& seed) {
    const std::vector<std::uint32_t> w = SeedSequence(seed).generate_state(8);
    const auto word64 = [&w](int i) {
      return static_cast<std::uint64_t>(w[2 * i]) |
             (static_cast<std::uint64_t>(w[2 * i + 1]) << 32);
    };
    const u128 initstate = (static_cast<u128>(word64(0)) << 64) | word64(1);
    const u128 initseq = (static_cast<u128>(word64(2)) << 64) | word64(3);
    inc = (initseq << 1) | 1;
    step();
    state += initstate;
    step();
  }

  void step() { state = state * kMult + inc; }
  std::uint64_t next_uint64() {
    step();
    const std::uint64_t hi = static_cast<std::uint64_t>(state >> 64);
    const std::uint64_t xored = hi ^ static_cast<std::uint64_t>(state);
    const unsigned rot = static_cast<unsigned>(hi >> 58);
    return (xored >> rot) | (xored << ((64 - rot) & 63));
  }
  std::uint32_t next_uint32() {
    if (has_uint32) {
      has_uint32 = false;
      return uinteger;
    }
    const std::uint64_t next = next_uint64();
    has_uint32 = true;
    uinteger = static_cast<std::uint32_t>(next >> 32);
    return static_cast<std::uint32_t>(next);
  }

 private:
  static constexpr u128 kMult =
      (static_cast<u128>(2549297995355413924ULL) << 64) | 4865540595714422341ULL;
};

// numpy's C interface to any of its bit generators (numpy/random/bitgen.h, the struct behind
// ``bit_generator.capsule``): its draws are the generator's own, wherever it stands.
struct NumpyBitgen {
  void* state;
  std::uint64_t (*next_uint64)(void* st);
  std::uint32_t (*next_uint32)(void* st);
  double (*next_double)(void* st);
  std::uint64_t (*next_raw)(void* st);
};

// A numpy bit generator seen through the draws below (``Bits``: next_uint32/next_uint64).
struct NumpyBits {
  NumpyBitgen* gen;
  std::uint32_t next_uint32() { return gen->next_uint32(gen->state); }
  std::uint64_t next_uint64() { return gen->next_uint64(gen->state); }
};

// random_interval: a draw in 0..max by masked rejection (Generator.shuffle's draw).
template <typename Bits>
std::uint64_t random_interval(Bits& bits, std::uint64_t max) {
  if (max == 0) return 0;
  std::uint64_t mask = max;
  for (int shift = 1; shift <= 32; shift *= 2) mask |= mask >> shift;
  std::uint64_t value;
  if (max <= 0xFFFFFFFFULL) {
    while ((value = (bits.next_uint32() & mask)) > max) {
    }
  } else {
    while ((value = (bits.next_uint64() & mask)) > max) {
    }
  }
  return value;
}

// Generator.integers(low, high) for a range of at most 2**32 - 1 values past low (numpy's
// buffered_bounded_lemire_uint32: Lemire's multiply-shift with rejection).
inline std::int64_t integers(Pcg64& bits, std::int64_t low, std::int64_t high) {
  const std::uint32_t range = static_cast<std::uint32_t>(high - 1 - low);  // closed range
  if (range == 0) return low;
  if (range == 0xFFFFFFFFU) return low + bits.next_uint32();
  const std::uint32_t range_excl = range + 1;
  std::uint64_t m = static_cast<std::uint64_t>(bits.next_uint32()) * range_excl;
  std::uint32_t leftover = static_cast<std::uint32_t>(m);
  if (leftover < range_excl) {
    const std::uint32_t threshold = (0xFFFFFFFFU - range) % range_excl;
    while (leftover < threshold) {
      m = static_cast<std::uint64_t>(bits.next_uint32()) * range_excl;
      leftover = static_cast<std::uint32_t>(m);
    }
  }
  return low + static_cast<std::int64_t>(m >> 32);
}

// Generator.shuffle(list): Fisher-Yates from the end with random_interval.
template <typename Bits, typename T>
void shuffle(Bits& bits, std::vector<T>& items) {
  for (std::size_t i = items.size() > 0 ? items.size() - 1 : 0; i > 0; --i)
    std::swap(items[i], items[random_interval(bits, i)]);
}

// Generator.permutation(n): a shuffled 0..n-1.
inline std::vector<int> permutation(Pcg64& bits, int n) {
  std::vector<int> out(n);
  for (int i = 0; i < n; ++i) out[i] = i;
  shuffle(bits, out);
  return out;
}

}  // namespace moonriver
