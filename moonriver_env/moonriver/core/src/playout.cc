#include "playout.h"

#include <climits>
#include <cstdint>

namespace moonriver {

int random_rollout(Game& game, int depth, SplitMix64& rng) {
  std::int64_t ids[NUM_ACTIONS];
  int decisions = 0;
  while (decisions < depth && !game.is_over()) {
    const int m = game.legal_ids(ids);
    if (m == 0) break;  // no decision (a state the checks refuse): never draw among none
    game.apply(static_cast<int>(ids[rng.below(m)]));
    ++decisions;
  }
  return decisions;
}

int margin_of(const int* totals, int n, int player) {
  int best_other = INT32_MIN;
  for (int p = 0; p < n; ++p)
    if (p != player && totals[p] > best_other) best_other = totals[p];
  return totals[player] - best_other;
}

int margin(const Game& game, int player) {
  int totals[MAX_PLAYERS];
  for (int p = 0; p < game.num_players(); ++p) totals[p] = game.running_score(p).total();
  return margin_of(totals, game.num_players(), player);
}

void one_ply_margins(const Game& game, int player, const std::int64_t* ids, int count,
                     std::int64_t* out) {
  const int base = margin(game, player);
  for (int i = 0; i < count; ++i) {
    Game child(game);
    if (!child.apply(static_cast<int>(ids[i]))) {
      out[i] = INT64_MIN;  // not legal: the binding checks first
      continue;
    }
    out[i] = margin(child, player) - base;
  }
}

std::vector<double> random_playouts(const Game& start, int count, std::uint64_t seed) {
  std::vector<double> totals;
  totals.reserve(static_cast<std::size_t>(count) * start.num_players());
  SplitMix64 rng(seed);
  for (int i = 0; i < count; ++i) {
    Game g(start);
    random_rollout(g, INT_MAX, rng);
    for (int p = 0; p < g.num_players(); ++p) totals.push_back(g.final_score(p).total());
  }
  return totals;
}

std::pair<std::int64_t, std::int64_t> random_play_counts(const Game& start, int count,
                                                         std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::int64_t decisions = 0;
  for (int i = 0; i < count; ++i) {
    Game g(start);
    decisions += random_rollout(g, INT_MAX, rng);
  }
  return {count, decisions};
}

}  // namespace moonriver
