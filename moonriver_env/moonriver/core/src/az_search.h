// A batched search with network-valued leaves (AlphaZero's PUCT or Gumbel AlphaZero's root):
// one tree per game kept here, the leaves of every game handed out in one batch per step and
// valued by the caller's network (moonriver_env/moonriver/search.py wraps it).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "game.h"
#include "playout.h"

namespace moonriver {

class AzNet;

struct AzParams {
  int simulations = 32;
  std::uint64_t seed = 0;
  bool gumbel = true;       // false: PUCT everywhere
  int max_considered = 16;  // Gumbel: root actions sampled (Gumbel-top-k)
  double c_visit = 50.0;    // Gumbel: sigma(q) = (c_visit + max N) * c_scale * q
  double c_scale = 1.0;
  double c_puct = 1.5;
  double gumbel_scale = 1.0;  // 0: no Gumbel noise (the top logits, deterministic)
  int threads = 1;
  // > 0: seconds from the search's construction after which each game's search stops at the
  // next step once it has backed up a simulation (checked between steps): the result so far.
  double time_limit = 0.0;
  bool timers = false;  // true: time each phase of the search (AzSearch::phase_seconds)
  // Leaf values mixed with a random playout's (AlphaGo's lambda): each expanded leaf's value
  // is (1 - rollout_weight) x the network's + rollout_weight x the softmax of the running
  // totals, divided by ``rollout_temperature`` points, after ``rollout_depth`` uniformly random
  // decisions (0: to the end of the game). A softmax, not the outcome's win shares, even when
  // the playout ends the game. Weight 0: the network's value alone (no playout, no draw).
  double rollout_weight = 0.0;
  int rollout_depth = 0;
  double rollout_temperature = 10.0;
};

// The phases a search's time is split into (AzParams::timers), named by AZ_PHASE_NAMES.
enum AzPhase {
  AZ_SELECT,
  AZ_DETERMINIZE,
  AZ_APPLY,
  AZ_OBSERVE,
  AZ_PRIOR,
  AZ_NETWORK,
  AZ_ROLLOUT,
  AZ_BACKUP
};
constexpr int AZ_NUM_PHASES = AZ_BACKUP + 1;
extern const char* const AZ_PHASE_NAMES[AZ_NUM_PHASES];

// Refuse (std::invalid_argument) what no search can use: simulations >= 1, max_considered
// >= 1, threads >= 1, the constants and time_limit finite and >= 0 (c_scale > 0),
// rollout_weight in [0, 1], rollout_depth >= 0, rollout_temperature finite and >= 1e-3.
void check_az_params(const AzParams& params);

class AzSearch {
 public:
  // One search per game of ``roots`` (none over); ``indices``: each game's place in the
  // seeding (its generator is SplitMix64 of ``params.seed`` and its index, never of the batch).
  AzSearch(const std::vector<const Game*>& roots, const std::vector<std::int64_t>& indices,
           const AzParams& params);
  ~AzSearch();
  AzSearch(const AzSearch&) = delete;
  AzSearch& operator=(const AzSearch&) = delete;

  int num_games() const;
  bool busy = false;  // set by the bindings while a call runs without the GIL
  // Run every unfinished search to its next leaf (terminal states are backed up here) and
  // return how many leaves are pending (0: every search is finished). Called again before
  // evaluate: the same leaves.
  int prepare();
  // The pending leaves, in game order: each state's observation by the seat to move there
  // (rows of OBSERVATION_SIZE), legal mask (rows of NUM_ACTIONS), that seat, the game's index
  // in this batch and its player count.
  void write_leaves(float* observation, std::int8_t* mask, std::int32_t* seat, std::int32_t* game,
                    std::int32_t* num_players) const;
  // The pending leaves' Greedy priors (rows of NUM_ACTIONS, greedy_prior_row in search.h).
  void write_priors(double shape_weight, float* prior) const;
  int num_pending() const { return static_cast<int>(pending_.size()); }
  // Each game's root (its state as given): the observation by the player to move (rows of
  // OBSERVATION_SIZE), the legal mask (rows of NUM_ACTIONS) and, when ``prior`` is not null,
  // Greedy's prior (rows of NUM_ACTIONS, greedy_prior_row): what self-play records of a step.
  void write_roots(float* observation, std::int8_t* mask, double shape_weight, float* prior) const;
  // The ``i``-th pending leaf's state (a determinized copy).
  const Game& leaf_state(int i) const;
  // Expand the pending leaves with ``logits`` (leaves x NUM_ACTIONS; legal entries finite)
  // and back up ``values`` (leaves x MAX_PLAYERS; the seats in play within [0, 1]). Checked
  // before anything changes (std::invalid_argument).
  void evaluate(const float* logits, const float* values, int count);
  bool finished() const;
  // Seconds spent in each phase (AzPhase) so far, summed over the games (with threads > 1,
  // over the threads); zeros unless ``params.timers``.
  std::vector<double> phase_seconds() const;
  // Run every search to its end with each leaf valued here by ``net`` (the leaves a step at a
  // time, as prepare and evaluate; ``shape_weight``: the greedy prior's tie-break weight, read
  // when the network uses the prior); returns the number of leaves valued. Pending leaves, or
  // a network whose output is not finite at a leaf (its logits at the legal ids, its shares):
  // std::invalid_argument, and the search is then unusable (every later call refused).
  int run(const AzNet& net, double shape_weight);
  // Each game's result (finished only, else std::invalid_argument), one row each: the chosen
  // action, the improved policy (NUM_ACTIONS), the root's value per seat (MAX_PLAYERS), its
  // visits (NUM_ACTIONS) and whether it was searched (0: one legal id, its value NaN).
  void result(std::int64_t* action, float* policy, float* root_value, std::int32_t* visits,
              std::uint8_t* searched) const;

 private:
  struct Tree;
  AzParams params_;
  std::vector<std::unique_ptr<Tree>> trees_;
  std::vector<int> pending_;  // games whose leaf waits for evaluate, in game order
  bool broken_ = false;       // a run stopped at a network output it could not use
  std::chrono::steady_clock::time_point start_;  // time_limit counts from here
  void check_usable() const;
};

}  // namespace moonriver
