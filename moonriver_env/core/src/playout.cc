#include "playout.h"

namespace moonriver {

int random_playout(Game& game, SplitMix64& rng) {
  std::int64_t ids[NUM_ACTIONS];
  int decisions = 0;
  while (!game.is_over()) {
    const int m = game.legal_ids(ids);
    game.apply(static_cast<int>(ids[rng.below(m)]));
    ++decisions;
  }
  return decisions;
}

std::vector<double> random_playouts(const Game& start, int count, std::uint64_t seed) {
  std::vector<double> totals;
  totals.reserve(static_cast<std::size_t>(count) * start.num_players());
  SplitMix64 rng(seed);
  for (int i = 0; i < count; ++i) {
    Game g(start);
    random_playout(g, rng);
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
    decisions += random_playout(g, rng);
  }
  return {count, decisions};
}

}  // namespace moonriver
