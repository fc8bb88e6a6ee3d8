// Features computed from a sparse input, remembered by that input's exact entries. A search
// values many leaves whose ranches are the same (a ranch changes only when its owner places a
// plot), so a ranch's per-cell features are computed once and read back after.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace moonriver {

class FeatureMemo {
 public:
  // One remembered input: its owner (a network), its entries and its features.
  struct Slot {
    std::uint64_t owner = 0, hash = 0;
    std::vector<std::int32_t> index;
    std::vector<float> value, features;
  };

  // The slot for ``owner``'s input of ``count`` entries, its features sized to ``width``:
  // ``*hit`` when they are that input's (else the caller writes them, then calls keep).
  Slot& find(std::uint64_t owner, const std::int32_t* index, const float* value, int count,
             int width, bool* hit) {
    if (slots_.empty()) slots_.resize(SLOTS);
    std::uint64_t h = owner * 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(count);
    for (int j = 0; j < count; ++j) {
      std::uint32_t bits;
      std::memcpy(&bits, value + j, sizeof bits);
      h = (h ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(index[j])) << 32 | bits)) *
          0xBF58476D1CE4E5B9ULL;
    }
    h ^= h >> 31;
    Slot& slot = slots_[h & (SLOTS - 1)];
    const std::size_t n = static_cast<std::size_t>(count);
    // The values compared as bits (-0.0 is not 0.0); no entries: nothing to compare (an empty
    // slot's data() may be null, which memcmp must not get).
    *hit = slot.owner == owner && slot.hash == h && slot.index.size() == n &&
           std::equal(index, index + count, slot.index.begin()) &&
           (n == 0 || std::memcmp(value, slot.value.data(), n * sizeof(float)) == 0) &&
           slot.features.size() == static_cast<std::size_t>(width);
    if (!*hit) {
      slot.owner = 0;  // not this input's until keep
      slot.hash = h;
      slot.features.resize(static_cast<std::size_t>(width));
    }
    return slot;
  }

  // Marks ``slot`` (from find, its features written) as holding this input's features.
  static void keep(Slot& slot, std::uint64_t owner, const std::int32_t* index, const float* value,
                   int count) {
    slot.index.assign(index, index + count);
    slot.value.assign(value, value + count);
    slot.owner = owner;
  }

 private:
  static constexpr std::size_t SLOTS = 2048;  // a power of two
  std::vector<Slot> slots_;
};

}  // namespace moonriver
