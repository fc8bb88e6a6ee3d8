// The whole game of Moon River: phases, legal actions, apply, clone
// (moonriver_env/moonriver/rules/game.py, which stays the readable reference).
//
// The state is a value type: ``Game`` copies with its defaulted copy constructor. It holds no
// generator: the setup's draws (scenario, boards, box and pile order, seat order) come from
// draw_setup (numpy's generator, draw for draw the engine's) or are handed in, and the game
// draws nothing later.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "actions.h"
#include "ranch.h"
#include "scoring.h"
#include "tables.h"

namespace moonriver {

struct SplitMix64;

constexpr int NUM_COWS = 32;
constexpr int BONUS_ROW = 9;  // 2 players: reaching the 10th row earns a bonus tile
constexpr int MAX_CHOICES = 256;

enum Phase : int {
  SETUP = 0,
  BUILD,
  DISCARD,
  DROUGHT,
  RECRUIT,
  COWBOY_PHASE,
  DESPERADO_PHASE,
  THIEF,
  BONUS,
  SELECT,
  GAME_OVER
};

// History entries (ints): a decision, or a chance event the Python side turns into the
// engine's record dicts.
enum Event : int { EV_DECISION = 0, EV_COLUMN = 1, EV_SALOON = 2, EV_BONUS_LOST = 3 };

struct Setup {
  int num_players = 4;
  int scenario = 0;  // 0: base game
  bool auto_forced = false;
  std::vector<int> capacity;   // per player
  std::vector<Cells> bridges;  // per player
  std::vector<int> box, pile;  // as drawn (the last entry is drawn first)
  std::vector<int> setup_order;
  std::vector<int> board_ids;  // per player: the observation's board one-hot index
  // Per player: its board's index in the plan's boards (draw_setup's draw); empty for a
  // set-up handed in without a plan.
  std::vector<int> board_indices;
};

// A board a seat may sit at: its reserve capacity, bridge cells and observation index.
struct BoardSpec {
  int capacity = 1;
  Cells bridges = 0;
  int board_id = -1;
};

// What a config fixes of a set-up and what its seed draws (engine.game.setup_draws).
struct SetupPlan {
  int num_players = 4;
  bool auto_forced = false;
  int scenario = 0;  // the config's (0: base game) unless draw_scenario
  bool draw_scenario = false;
  int scenario_low = 1, scenario_high = 5;  // draw_scenario: integers(low, high)
  std::vector<BoardSpec> boards;  // draw_boards: the legend pool by name, else one per seat
  bool draw_boards = false;       // seats' boards: permutation(pool size)[:num_players]
  int num_plots = 0, num_partners = 0;
};

// A set-up plan with the tables it draws over (what the bindings hand around).
struct PlanAndTables {
  std::shared_ptr<const Tables> tables;
  SetupPlan plan;
};

// The set-up of the game seeded with ``seed`` (an int's little-endian 32-bit words), drawn
// as the engine draws it from numpy.random.default_rng(seed): scenario, legend boards (each
// seat's index in plan.boards), box, pile, seat order.
Setup draw_setup(const SetupPlan& plan, const std::vector<std::uint32_t>& seed);
// A plan over ``tables`` from per-board columns, checked (std::invalid_argument, saying what
// is allowed): the one place the bindings build set-up arguments.
SetupPlan make_plan(const Tables& tables, int num_players, bool auto_forced, int scenario,
                    bool draw_scenario, int scenario_low, int scenario_high,
                    const std::vector<int>& capacity, const std::vector<Cells>& bridges,
                    const std::vector<int>& board_ids, bool draw_boards);

// Everything of fixed size (trivially copyable: pickled as bytes). Like Ranch, every byte is
// a member with a value (the pad_ members, always 0, fill the gaps the compiler would leave):
// the same game gives the same bytes in any process.
struct Fixed {
  int n = 4, rows = 5, scenario = 0;
  bool auto_forced = false;
  std::array<std::uint8_t, 3> pad_flags{};
  std::array<Ranch, MAX_PLAYERS> ranches{};  // seats past n: never read, default values
  std::array<std::int8_t, MAX_PLAYERS> board_ids{};
  int supply = NUM_COWS;
  std::array<std::int16_t, SALOON_SLOTS> saloon{};
  std::array<bool, 2> bonus_tiles{};
  std::array<std::int8_t, 4> setup_order{};
  int setup_len = 0, setup_index = 0;
  std::array<std::int16_t, COLUMN_SIZE> active{}, pending{};
  bool has_active = false, has_pending = false;
  std::array<std::int8_t, COLUMN_SIZE> active_owner{}, pending_owner{};
  std::array<std::uint8_t, 2> pad_columns{};
  int round = 0;
  bool last_round = false, recruited_this_round = false;
  std::array<std::int8_t, COLUMN_SIZE> order{};
  std::array<std::uint8_t, 2> pad_order{};
  int order_len = 0, turn_index = 0;
  bool emptying = false;
  std::array<std::int8_t, MAX_PLAYERS> empty_order{};
  std::array<std::uint8_t, 3> pad_emptying{};
  int empty_len = 0;
  // The turn's pending context.
  bool forced = false;
  std::array<std::uint8_t, 3> pad_forced{};
  int builds_done = 0, builds_allowed = 0;
  std::array<std::int8_t, 4> skulls{};
  int skulls_len = 0;
  std::array<std::int8_t, MAX_CIRCLES> circles{};
  std::array<std::uint8_t, 2> pad_circles{};
  int effect_cell = -1, cowboy_moves_left = 0;
  std::array<std::int16_t, MAX_CHOICES> choices{};  // legal ids of a non-build phase
  int choices_len = 0;
  int player = 0, phase = SETUP;
  std::array<Score, MAX_PLAYERS> final_scores{};
  std::array<std::uint8_t, 8> pad_end{};
};
static_assert(std::has_unique_object_representations_v<Fixed>,
              "Fixed has a gap the compiler fills with stray bytes: make it a pad_ member");

// Every seat's board index unknown (-1): a game handed its boards.
constexpr std::array<int, MAX_PLAYERS> no_board_indices() {
  std::array<int, MAX_PLAYERS> none{};
  for (int& i : none) i = -1;
  return none;
}

class Game {
 public:
  Game(std::shared_ptr<const Tables> tables, const Setup& setup);
  Game(const Game&) = default;
  Game& operator=(const Game&) = default;

  const Tables& tables() const { return *tables_; }
  std::shared_ptr<const Tables> tables_ptr() const { return tables_; }
  const Fixed& state() const { return f_; }
  const std::vector<std::int16_t>& box() const { return box_; }
  const std::vector<std::int16_t>& pile() const { return pile_; }
  const std::vector<std::int16_t>& removed() const { return removed_; }
  const std::vector<std::int16_t>& discarded() const { return discarded_; }
  const std::vector<std::int32_t>& history() const { return history_; }
  // The box and pile's new orders: the same items, reordered (else std::invalid_argument).
  void set_hidden(const std::vector<int>& box, const std::vector<int>& pile);
  // The box and pile in place, for a caller's in-place reshuffle (determinize).
  std::vector<std::int16_t>& box_in_place() { return box_; }
  std::vector<std::int16_t>& pile_in_place() { return pile_; }
  // Search copies only: with a generator set, the box and pile count as unshuffled and each
  // draw first swaps the next item with a uniform one of those left (Fisher-Yates, one step
  // per draw: the same orders' distribution as a full reshuffle, paid only for what is
  // drawn). The generator is the search's (never serialized; nullptr: draws as stored).
  void set_lazy_reshuffle(SplitMix64* rng) { reshuffle_ = rng; }

  int num_players() const { return f_.n; }
  int phase() const { return f_.phase; }
  bool is_over() const { return f_.phase == GAME_OVER; }
  int current_player() const { return is_over() ? -1 : f_.player; }
  // What the set-up made of this game, kept so that nobody draws it again: the scenario
  // (state().scenario), the seats' setup order, and each seat's board as its index in the
  // set-up plan's boards: -1 for a game handed its boards (a Setup without board_indices, or
  // deserialized: the bytes name no plan).
  std::vector<int> setup_order() const;
  int board_index(int player) const { return board_indices_[player]; }

  // Legality.
  bool is_legal(int aid) const;
  int legal_ids(std::int64_t* out) const;   // ascending; returns the count (<= NUM_ACTIONS)
  void legal_mask(std::int8_t* out) const;  // NUM_ACTIONS entries
  int num_legal() const;
  int only_action() const;  // the single legal id, or -1

  // Play one legal decision (then the forced ones with auto_forced); false if illegal.
  bool apply(int aid);

  Score running_score(int player) const;
  // Each player's running_score total into ``totals``; a ranch whose change count is that of
  // ``before``'s (a game this one came from, whose totals are ``before_totals``) keeps its
  // total there: every change that scoring reads bumps the count.
  void running_totals(int* totals, const Game& before, const int* before_totals) const;
  Score final_score(int player) const { return f_.final_scores[player]; }
  std::vector<int> winners() const;

  // Byte state (pickling, state.cc): a header with the format version and a 64-bit FNV-1a
  // checksum, then the fixed part and the vectors. deserialize refuses (std::invalid_argument,
  // naming the field) damaged bytes and any field out of range for the tables and variant.
  std::string serialize() const;
  static Game deserialize(std::shared_ptr<const Tables> tables, const std::string& bytes);
  static constexpr std::uint32_t STATE_FORMAT = 2;
  static constexpr std::size_t STATE_FIXED_AT = 20;  // where Fixed starts in the bytes

 private:
  Game() = default;
  void check_state() const;  // state.cc: every field against the tables and the variant
  void check_choices() const;
  void build_rows(std::array<Placements, NUM_PAIRS>& rows, int& count) const;
  bool can_build() const;
  void play(int aid, bool automatic);
  void settle();
  void dispatch(int aid);
  void enter(int phase);
  void choose(int aid) { f_.choices[f_.choices_len++] = static_cast<std::int16_t>(aid); }
  void reset_turn_context();
  bool draw_column(std::array<std::int16_t, COLUMN_SIZE>& column);
  void refill_saloon();
  void column_choices(const std::array<std::int16_t, COLUMN_SIZE>& column,
                      const std::array<std::int8_t, COLUMN_SIZE>& owner);
  void list_choices();  // the legal ids of the (non-build) phase, from the state alone
  Cells skull_herd() const;
  void discard_choices();
  void drought_choices(Cells herd);
  void recruit_choices();
  void effect_choices();
  void do_setup(int pos);
  void start_round();
  void start_turn();
  void to_expansion();
  void finish_expansion();
  void build(int a, int b, int cell_a, int cell_b);
  void put(Ranch& ranch, int cell, int plot, int kind, int circle_index);
  void resolve();
  void recruit(int slot, int face, int circle);
  void place_bonus(int tile, int face, int cell);
  void end_turn();
  void end_round();
  void start_emptying();
  void next_emptying();
  void finish_game();
  void cowboy_moves();
  void desperado_swaps();
  void thefts();
  void bonus_placements();

  std::shared_ptr<const Tables> tables_;
  Fixed f_;
  std::vector<std::int16_t> box_, pile_, removed_, discarded_;
  std::vector<std::int32_t> history_;
  SplitMix64* reshuffle_ = nullptr;
  std::array<int, MAX_PLAYERS> board_indices_ = no_board_indices();
};

}  // namespace moonriver
