// Many games in one object: batched steps with built-in seats played inside the core
// (moonriver_env/moonriver/batch/games.py is the Python side). Plain C++ (no Python headers).
//
// Each game slot holds the game being played, set up in the core from its seed (draw_setup:
// the engine's draws): game g's k-th episode is seeded with base[g] + stride * k (stride: N,
// or a pool's size for a batch that is part of one). With autoreset, a game that ends inside
// ``step`` is replaced there at once by the slot's next episode (no Python work per game);
// without, the slot keeps its ended game: later steps skip it (fixed lists of games).
// Built-in seats draw from a per-game SplitMix64, so results never depend on how the batch
// is split over threads.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "game.h"
#include "playout.h"
#include "pool.h"

namespace moonriver {

// Seat kinds; SEAT_MCTS + N (N = 1..MAX_MCTS_SIMULATIONS) is the core's IS-MCTS with N
// simulations (mcts_search, agents.MCTSAgent's defaults), seeded from the game's stream.
// SEAT_NETWORK: a seat decided outside the core (a network in Python): the core plays its
// forced decisions (one legal action) and stops at its others as at a learner's; the caller
// applies them with step_network, the learner step they belong to still going on.
enum SeatKind : int {
  SEAT_LEARNER = 0,
  SEAT_RANDOM = 1,
  SEAT_GREEDY = 2,
  SEAT_NETWORK = 3,
  SEAT_MCTS = 1 << 16
};
constexpr int MAX_MCTS_SIMULATIONS = SEAT_MCTS - 1;
enum RewardMode : int { REWARD_WIN = 0, REWARD_RANK = 1, REWARD_SCORE = 2, REWARD_MARGIN = 3 };

// Where one step writes its results (row g of each array belongs to game g).
struct VectorOutputs {
  std::int32_t* player;  // N: the learner seat to decide next (-1: the game is over)
  void* obs;             // N x OBSERVATION_SIZE float32 (compact: N x COMPACT_SIZE uint8):
                         // from that seat's view
  std::int8_t* mask;     // N x NUM_ACTIONS (all zero once the game is over)
  float* rewards;        // N x num_players: every seat's reward of this step
  std::uint8_t* done;    // N: the game ended in this step (and was replaced)
  void* final_obs;       // like obs, or null: on done, the ended game seen by the seat that
                         // made the last learner decision
};

class VectorGames {
 public:
  VectorGames(int num_games, std::vector<int> seats, int reward_mode, std::uint64_t agent_seed,
              std::shared_ptr<const Tables> tables, SetupPlan plan, bool autoreset,
              bool compact = false);

  int num_games() const { return static_cast<int>(games_.size()); }
  int num_players() const { return num_players_; }
  // Whether observations are written compact (COMPACT_SIZE bytes a row) or float32.
  bool compact() const { return compact_; }
  // The seat kinds of game g (num_players entries); every game starts with the batch's.
  const int* seats(int g) const {
    return seats_.data() + static_cast<std::size_t>(g) * num_players_;
  }
  // Set game g's seat kinds (at least one learner), for its current and later games.
  void set_seats(int g, const std::vector<int>& kinds);

  // Start game g at episode ``k`` of the series seeded from ``base`` (an int's 32-bit words):
  // its game is set up from base + stride * k.
  void begin(int g, std::vector<std::uint32_t> base, std::int64_t k, std::uint64_t stride);
  // The episode game g plays now (k of base + stride * k).
  std::int64_t episode(int g) const { return episodes_[g]; }
  const Game& game(int g) const { return *games_[g]; }

  // Play the built-in seats of every game until a learner (or a network seat) decides; write
  // the outputs (rewards and done cleared). Threads split the batch (1: the calling thread).
  void start(const VectorOutputs& out, int threads);
  // The index of the first game whose action is not legal now, or -1 (nothing changes).
  int first_illegal(const std::int64_t* actions) const;
  // Apply each game's learner decision, play built-in seats, replace ended games that have a
  // next one; every action of a game not over must be legal (first_illegal == -1). Games over
  // before the step are skipped (their action is ignored; done 0, player -1).
  void step(const std::int64_t* actions, const VectorOutputs& out, int threads);
  // Why the network decision ``action`` cannot be applied to game g (it does not wait on a
  // SEAT_NETWORK seat, or the action is not legal), or null.
  const char* network_refusal(std::int64_t g, std::int64_t action) const;
  // Apply the ``count`` listed games' network-seat decisions (none refused by
  // network_refusal, no game listed twice) and play on as step does, within the learner step
  // that stopped at them: their rewards and done are kept unless a game ends now (then its
  // rewards, done and final_obs, seen by the seat of the step's learner decision, as step
  // writes them). Only the listed games' rows change.
  void step_network(const std::int64_t* games, const std::int64_t* actions, int count,
                    const VectorOutputs& out, int threads);
  // For each of the ``count`` listed games (none over): Greedy's value plus ``shape_weight`` x
  // its tie-break for every legal action, 0 elsewhere (all 0 when one action is legal), into
  // row r of ``out`` (count x NUM_ACTIONS): agents.pretrained.greedy_prior in batch.
  void greedy_prior(const std::int64_t* games, int count, double shape_weight, float* out,
                    int threads);
  // One uniform random legal id per game into ``out`` (a random driver for benchmarks and
  // baselines), from a per-game stream apart from the built-in seats'.
  void random_actions(std::int64_t* out, int threads);
  // How many decisions built-in seats made inside the core so far.
  std::int64_t builtin_decisions() const;

 private:
  void run_builtin(int g);
  void set_up(int g);
  void write(int g, const VectorOutputs& out);
  void observe_row(const Game& game, int viewer, void* rows, int g, const int* totals) const;
  const int* running_totals(int g);
  void final_rewards(const Game& game, float* out) const;
  void step_range(const std::int64_t* actions, const VectorOutputs& out, int lo, int hi);
  // Apply ``action`` to game g and play on; on an ending write its rewards, done and
  // final_obs (seen by the seat of the step's learner decision) and set up the next game.
  void play_on(int g, int action, const VectorOutputs& out);
  void start_range(const VectorOutputs& out, int lo, int hi);
  template <typename F>
  void parallel(int threads, int n, int min_per_thread, F&& body);
  // The fewest games a thread takes in start and step (more when every seat is cheap).
  int games_per_thread() const;

  int num_players_;
  std::vector<int> seats_;
  std::int64_t costly_seats_ = 0;  // greedy and MCTS seats over every game
  int reward_mode_;
  std::vector<std::optional<Game>> games_;
  std::shared_ptr<const Tables> tables_;
  SetupPlan plan_;
  bool autoreset_;
  bool compact_;
  std::vector<std::vector<std::uint32_t>> bases_;
  std::vector<std::int64_t> episodes_;
  std::vector<std::uint64_t> strides_;
  std::vector<SplitMix64> rngs_, driver_rngs_;
  std::vector<std::int64_t> builtin_;
  std::vector<int> actors_;  // the seat of each game's last learner decision (final_obs's)
  // Each game's players' running score totals and the ranch change counts they were scored at
  // (reset when a game takes the slot).
  struct Totals {
    std::array<std::uint32_t, MAX_PLAYERS> changes;
    std::array<int, MAX_PLAYERS> total;
    bool known = false;
  };
  std::vector<Totals> totals_;
};

}  // namespace moonriver
