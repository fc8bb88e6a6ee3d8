// Search loops that stay in the core: a determinized copy, Greedy's whole ranking of a
// decision, and IS-MCTS (agents/mcts.py's algorithm). The caller owns the seeded generator.
#pragma once

#include <cstdint>
#include <vector>

#include "game.h"
#include "playout.h"

namespace moonriver {

// Reshuffle what is hidden (the box and pile orders) in place with ``rng`` (Fisher-Yates).
void determinize(Game& game, SplitMix64& rng);

// A search's determinized copy of ``root`` in ``scratch`` (its storage reused: no allocation
// once warm): the hidden order reshuffled lazily, one Fisher-Yates step per draw, with ``rng``
// (which must outlive the copy's play).
void search_copy(Game& scratch, const Game& root, SplitMix64& rng);

// Greedy's ranking of each legal id (agents/greedy.py ``action_values``): ``value`` and the
// tie-break ``shape``, compared in that order. ``ids`` are the legal ids, ascending;
// ``totals``: the players' running score totals when the caller has them (null: scored here).
void greedy_values(const Game& game, const std::int64_t* ids, int count, double* value,
                   std::int64_t* shape, const int* totals = nullptr);

// agents.pretrained.greedy_prior of ``game`` into ``row`` (NUM_ACTIONS floats): Greedy's value
// + ``shape_weight`` x tie-break at each legal id, 0 elsewhere (all 0 for a forced decision).
void greedy_prior_row(const Game& game, double shape_weight, float* row);
// The same at the ``m`` legal ``ids`` only, into ``prior`` (m floats; ``totals`` as in
// greedy_values).
void greedy_prior_at(const Game& game, const std::int64_t* ids, int m, double shape_weight,
                     const int* totals, float* prior);

// Greedy's best legal ids (the highest value, then tie-break), ascending, into ``ties``;
// returns the number of legal ids (1: ``ties`` holds the only one, 0: the game is over).
int greedy_ties(const Game& game, std::vector<std::int64_t>& ties);

struct MctsParams {
  int simulations = 100;
  double seconds = 0.0;  // > 0: search until this many seconds have passed (>= 1 simulation)
  // > 0: also stop once this many seconds have passed since the search began (checked between
  // simulations, >= 1 simulation): the tree so far, for a caller with a deadline.
  double time_limit = 0.0;
  int rollout_depth = 20;
  double exploration = 1.0;
  double value_scale = 20.0;
};

// Refuse (std::invalid_argument) parameters no search can use: simulations >= 1, seconds and
// time_limit finite >= 0, rollout_depth >= 0, exploration finite >= 0, value_scale finite > 0.
void check_params(const MctsParams& params);

struct MctsResult {
  std::vector<std::int64_t> actions;  // the root's children, ascending
  std::vector<std::int64_t> visits;
  int simulations = 0;
};

// IS-MCTS from ``root`` (agents/mcts.py): each simulation determinizes a copy, walks one
// shared tree with UCB among the children legal there, expands one node, rolls out at random
// for ``rollout_depth`` decisions and backs up every player's squashed margin (max^n).
MctsResult mcts_search(const Game& root, const MctsParams& params, std::uint64_t seed);

}  // namespace moonriver
