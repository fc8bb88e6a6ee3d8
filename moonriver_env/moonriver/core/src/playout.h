// Loops that stay in the core: random playouts for search and benchmarks. The driver owns
// its seeded generator (never the state).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "game.h"

namespace moonriver {

// A small, fast generator (SplitMix64) owned by whoever drives the games.
struct SplitMix64 {
  std::uint64_t state;
  explicit SplitMix64(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>((next() >> 33) % static_cast<std::uint64_t>(n)); }
  // A draw in 0..n-1 by multiply-shift (no division): reshuffles, where it runs per item.
  int bounded(int n) {
    return static_cast<int>(((next() >> 32) * static_cast<std::uint64_t>(n)) >> 32);
  }
};

// Play up to ``depth`` uniformly random legal decisions in place (fewer if the game ends;
// INT_MAX: a playout to the end); returns the decisions made.
int random_rollout(Game& game, int depth, SplitMix64& rng);
// ``player``'s total minus the best opponent's, of ``n`` players' ``totals`` (Greedy's and
// search's margin).
int margin_of(const int* totals, int n, int player);
// margin_of over the game's running scores.
int margin(const Game& game, int player);
// Greedy's one-ply values: for each id, ``player``'s running-score margin over the best
// opponent after playing it on a copy, minus the margin now.
void one_ply_margins(const Game& game, int player, const std::int64_t* ids, int count,
                     std::int64_t* out);
// ``count`` playouts from copies of ``start``: final totals, count x players, flat.
std::vector<double> random_playouts(const Game& start, int count, std::uint64_t seed);
// ``count`` playouts from copies of ``start``: (games, decisions).
std::pair<std::int64_t, std::int64_t> random_play_counts(const Game& start, int count,
                                                         std::uint64_t seed);

}  // namespace moonriver
