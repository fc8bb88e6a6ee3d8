#include "vector.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>

#include "numpy_random.h"
#include "observation.h"
#include "search.h"

namespace moonriver {

namespace {
constexpr double SCORE_UNIT = 100.0;  // observation.py's SCORE_SCALE: "score" and "margin"
// Fewer games than this a thread in a batch whose built-in seats are at most random: fewer
// threads (below it a second thread gained nothing on the 2-core machine; docs/vector.md has
// the measurements). Greedy and MCTS seats, and greedy_prior, cost far more a game: any count.
constexpr int MIN_CHEAP_GAMES_PER_THREAD = 16;
constexpr int CHUNKS_PER_THREAD = 8;  // a thread's share comes in about this many chunks

// Greedy's pick (called with several legal ids): the best value, then tie-break, ties drawn.
int greedy_pick(const Game& game, SplitMix64& rng) {
  thread_local std::vector<std::int64_t> ties;  // no allocation once warm
  greedy_ties(game, ties);
  return static_cast<int>(ties[rng.below(static_cast<int>(ties.size()))]);
}

// MCTSAgent's pick: IS-MCTS with ``simulations`` (its default depth, exploration and value
// scale), seeded from the game's stream; the most visited action, ties drawn.
int mcts_pick(const Game& game, int simulations, SplitMix64& rng) {
  MctsParams params;
  params.simulations = simulations;
  params.rollout_depth = 20;
  params.exploration = 1.0;
  params.value_scale = 20.0;  // agents/mcts.py's VALUE_SCALE
  const MctsResult r = mcts_search(game, params, rng.next());
  const std::int64_t most = *std::max_element(r.visits.begin(), r.visits.end());
  int k = rng.below(static_cast<int>(std::count(r.visits.begin(), r.visits.end(), most)));
  for (std::size_t i = 0; i < r.actions.size(); ++i)
    if (r.visits[i] == most && k-- == 0) return static_cast<int>(r.actions[i]);
  return static_cast<int>(r.actions[0]);
}

// The per-game generator of built-in seats: distinct streams for (seed, game).
std::uint64_t game_stream(std::uint64_t seed, int g) {
  SplitMix64 mix(seed ^ (0xD1B54A32D192ED03ULL * (static_cast<std::uint64_t>(g) + 1)));
  return mix.next();
}

// Greedy and MCTS seats: far more work a decision than a random one (a network seat's
// decisions are made outside the core).
bool costly_seat(int kind) {
  return kind != SEAT_LEARNER && kind != SEAT_RANDOM && kind != SEAT_NETWORK;
}

void check_seats(const std::vector<int>& kinds, int num_players) {
  if (static_cast<int>(kinds.size()) != num_players)
    throw std::invalid_argument("one seat kind per player");
  for (int k : kinds)
    if (k != SEAT_LEARNER && k != SEAT_RANDOM && k != SEAT_GREEDY && k != SEAT_NETWORK &&
        (k <= SEAT_MCTS || k > SEAT_MCTS + MAX_MCTS_SIMULATIONS))
      throw std::invalid_argument(
          "seat kinds are SEAT_LEARNER, SEAT_RANDOM, SEAT_GREEDY, SEAT_NETWORK or SEAT_MCTS + "
          "simulations (1..65535)");
  if (std::none_of(kinds.begin(), kinds.end(), [](int s) { return s == SEAT_LEARNER; }))
    throw std::invalid_argument("at least one seat must be a learner");
}
}  // namespace

VectorGames::VectorGames(int num_games, std::vector<int> seats, int reward_mode,
                         std::uint64_t agent_seed, std::shared_ptr<const Tables> tables,
                         SetupPlan plan, bool autoreset, bool compact)
    : num_players_(plan.num_players),
      reward_mode_(reward_mode),
      tables_(std::move(tables)),
      plan_(std::move(plan)),
      autoreset_(autoreset),
      compact_(compact) {
  const int num_players = num_players_;
  if (num_games < 1) throw std::invalid_argument("num_games must be at least 1");
  if (reward_mode < REWARD_WIN || reward_mode > REWARD_MARGIN)
    throw std::invalid_argument("reward_mode must be 0..3 (win, rank, score, margin)");
  check_seats(seats, num_players);
  seats_.reserve(static_cast<std::size_t>(num_games) * num_players);
  for (int g = 0; g < num_games; ++g) seats_.insert(seats_.end(), seats.begin(), seats.end());
  costly_seats_ = std::count_if(seats_.begin(), seats_.end(), costly_seat);
  games_.resize(num_games);
  bases_.resize(num_games);
  episodes_.assign(num_games, 0);
  strides_.assign(num_games, static_cast<std::uint64_t>(num_games));
  builtin_.assign(num_games, 0);
  actors_.assign(num_games, 0);
  totals_.assign(num_games, Totals{});
  rngs_.reserve(num_games);
  driver_rngs_.reserve(num_games);
  for (int g = 0; g < num_games; ++g) {
    rngs_.emplace_back(game_stream(agent_seed, g));
    driver_rngs_.emplace_back(game_stream(~agent_seed, g));
  }
}

int VectorGames::games_per_thread() const {
  return costly_seats_ > 0 ? 1 : MIN_CHEAP_GAMES_PER_THREAD;
}

void VectorGames::set_seats(int g, const std::vector<int>& kinds) {
  check_seats(kinds, num_players_);
  const auto at = seats_.begin() + static_cast<std::ptrdiff_t>(g) * num_players_;
  costly_seats_ += std::count_if(kinds.begin(), kinds.end(), costly_seat) -
                   std::count_if(at, at + num_players_, costly_seat);
  std::copy(kinds.begin(), kinds.end(), at);
}

void VectorGames::begin(int g, std::vector<std::uint32_t> base, std::int64_t k,
                        std::uint64_t stride) {
  bases_[g] = std::move(base);
  strides_[g] = stride;
  episodes_[g] = k;
  set_up(g);
}

void VectorGames::set_up(int g) {
  std::vector<std::uint32_t> seed = bases_[g];
  add_to_words(seed, strides_[g] * static_cast<std::uint64_t>(episodes_[g]));
  games_[g].emplace(tables_, draw_setup(plan_, seed));
  totals_[g].known = false;
}

std::int64_t VectorGames::builtin_decisions() const {
  return std::accumulate(builtin_.begin(), builtin_.end(), std::int64_t{0});
}

int VectorGames::first_illegal(const std::int64_t* actions) const {
  for (int g = 0; g < num_games(); ++g) {
    if (games_[g]->is_over()) continue;  // a finished game of a fixed list: skipped
    const std::int64_t a = actions[g];
    if (a < 0 || a >= NUM_ACTIONS || !games_[g]->is_legal(static_cast<int>(a))) return g;
  }
  return -1;
}

void VectorGames::run_builtin(int g) {
  Game& game = *games_[g];
  SplitMix64& rng = rngs_[g];
  const int* kinds = seats(g);
  std::int64_t ids[NUM_ACTIONS];
  while (!game.is_over()) {
    const int player = game.current_player();
    const int kind = kinds[player];
    if (kind == SEAT_LEARNER) return;
    const int m = game.legal_ids(ids);
    if (kind == SEAT_NETWORK && m > 1) return;  // decided outside the core: step_network
    int action = static_cast<int>(ids[0]);
    if (m > 1 && kind == SEAT_RANDOM)
      action = static_cast<int>(ids[rng.below(m)]);
    else if (m > 1 && kind == SEAT_GREEDY)
      action = greedy_pick(game, rng);
    else if (m > 1)
      action = mcts_pick(game, kind - SEAT_MCTS, rng);
    game.apply(action);
    ++builtin_[g];
  }
}

void VectorGames::final_rewards(const Game& game, float* out) const {
  const int n = num_players_;
  std::array<Score, MAX_PLAYERS> s;
  for (int p = 0; p < n; ++p) s[p] = game.final_score(p);
  if (reward_mode_ == REWARD_WIN) {
    for (int p = 0; p < n; ++p) out[p] = -1.0f;
    for (int w : game.winners()) out[w] = 1.0f;
  } else if (reward_mode_ == REWARD_SCORE) {
    for (int p = 0; p < n; ++p) out[p] = static_cast<float>(s[p].total() / SCORE_UNIT);
  } else if (reward_mode_ == REWARD_MARGIN) {
    int totals[MAX_PLAYERS];
    for (int p = 0; p < n; ++p) totals[p] = s[p].total();
    for (int p = 0; p < n; ++p) out[p] = static_cast<float>(margin_of(totals, n, p) / SCORE_UNIT);
  } else {  // rank: +1 first to -1 last in equal steps; players equal on every key share
    auto key = [&](int p) {
      return std::make_tuple(s[p].total(), s[p].largest_territory, s[p].cows);
    };
    std::array<int, MAX_PLAYERS> ranked{};
    std::iota(ranked.begin(), ranked.begin() + n, 0);
    std::stable_sort(ranked.begin(), ranked.begin() + n,
                     [&](int a, int b) { return key(a) > key(b); });
    int r = 0;
    while (r < n) {
      int t = r;
      while (t < n && key(ranked[t]) == key(ranked[r])) ++t;
      double share = 0.0;
      for (int i = r; i < t; ++i) share += 1.0 - 2.0 * i / (n - 1);
      share /= (t - r);
      for (int i = r; i < t; ++i) out[ranked[i]] = static_cast<float>(share);
      r = t;
    }
  }
}

const int* VectorGames::running_totals(int g) {
  const Game& game = *games_[g];
  Totals& t = totals_[g];
  for (int p = 0; p < num_players_; ++p) {
    const std::uint32_t changes = game.state().ranches[p].changes;
    if (!t.known || t.changes[p] != changes) {
      t.total[p] = game.running_score(p).total();
      t.changes[p] = changes;
    }
  }
  t.known = true;
  return t.total.data();
}

void VectorGames::observe_row(const Game& game, int viewer, void* rows, int g,
                              const int* totals) const {
  if (compact_)
    observe_compact(game, viewer,
                    static_cast<std::uint8_t*>(rows) + static_cast<std::size_t>(g) * COMPACT_SIZE,
                    totals);
  else
    observe(game, viewer,
            static_cast<float*>(rows) + static_cast<std::size_t>(g) * OBSERVATION_SIZE, totals);
}

void VectorGames::write(int g, const VectorOutputs& out) {
  const Game& game = *games_[g];
  const int player = game.current_player();
  out.player[g] = player;
  if (game.is_over()) {  // a finished game of a fixed list: no decision, obs left as it was
    std::fill_n(out.mask + static_cast<std::size_t>(g) * NUM_ACTIONS, NUM_ACTIONS, 0);
    return;
  }
  observe_row(game, player, out.obs, g, running_totals(g));
  game.legal_mask(out.mask + static_cast<std::size_t>(g) * NUM_ACTIONS);
}

void VectorGames::start_range(const VectorOutputs& out, int lo, int hi) {
  for (int g = lo; g < hi; ++g) {
    run_builtin(g);
    std::fill_n(out.rewards + static_cast<std::size_t>(g) * num_players_, num_players_, 0.0f);
    out.done[g] = 0;
    write(g, out);
  }
}

void VectorGames::step_range(const std::int64_t* actions, const VectorOutputs& out, int lo,
                             int hi) {
  for (int g = lo; g < hi; ++g) {
    std::fill_n(out.rewards + static_cast<std::size_t>(g) * num_players_, num_players_, 0.0f);
    out.done[g] = 0;
    const Game& game = *games_[g];
    if (!game.is_over()) {  // else it ended earlier, no next game: skipped
      actors_[g] = game.current_player();
      play_on(g, static_cast<int>(actions[g]), out);
    }
    write(g, out);
  }
}

void VectorGames::play_on(int g, int action, const VectorOutputs& out) {
  Game& game = *games_[g];
  game.apply(action);
  run_builtin(g);
  if (!game.is_over()) return;
  out.done[g] = 1;
  final_rewards(game, out.rewards + static_cast<std::size_t>(g) * num_players_);
  if (out.final_obs) observe_row(game, actors_[g], out.final_obs, g, nullptr);
  if (autoreset_) {
    ++episodes_[g];
    set_up(g);
    run_builtin(g);
  }
}

const char* VectorGames::network_refusal(std::int64_t g, std::int64_t action) const {
  if (g < 0 || g >= num_games()) return "no such game";
  const std::optional<Game>& game = games_[g];
  if (!game || game->is_over() ||
      seats(static_cast<int>(g))[game->current_player()] != SEAT_NETWORK)
    return "the game does not wait on a network seat";
  if (action < 0 || action >= NUM_ACTIONS || !game->is_legal(static_cast<int>(action)))
    return "the action is not legal";
  return nullptr;
}

void VectorGames::step_network(const std::int64_t* games, const std::int64_t* actions, int count,
                               const VectorOutputs& out, int threads) {
  std::vector<char> listed(num_games(), 0);
  for (int r = 0; r < count; ++r) {
    if (const char* why = network_refusal(games[r], actions[r]))
      throw std::invalid_argument(std::string("step_network: game ") + std::to_string(games[r]) +
                                  ": " + why);
    if (listed[games[r]]++) throw std::invalid_argument("step_network: a game listed twice");
  }
  parallel(threads, count, games_per_thread(), [&](int lo, int hi) {
    for (int r = lo; r < hi; ++r) {
      const int g = static_cast<int>(games[r]);
      ++builtin_[g];
      play_on(g, static_cast<int>(actions[r]), out);
      write(g, out);
    }
  });
}

template <typename F>
void VectorGames::parallel(int threads, int n, int min_per_thread, F&& body) {
  if (n < 1) return;
  threads = std::max(1, std::min(threads, n / min_per_thread));
  if (threads == 1) {
    body(0, n);
    return;
  }
  // The calling thread's pool (the batched search's too). Each game's result depends on the
  // game alone, never on which thread steps it.
  calling_thread_pool(threads - 1)
      .split(n, std::max(1, n / (threads * CHUNKS_PER_THREAD)), threads, body);
}

void VectorGames::random_actions(std::int64_t* out, int threads) {
  // About 0.1 us a game, a tenth of a cheap game-step: four times the games a thread (each
  // game draws from its own stream, so the split never changes a draw).
  parallel(threads, num_games(), 4 * games_per_thread(), [&](int lo, int hi) {
    std::int64_t ids[NUM_ACTIONS];
    for (int g = lo; g < hi; ++g) {
      const int m = games_[g]->legal_ids(ids);
      out[g] = m > 0 ? ids[driver_rngs_[g].below(m)] : 0;  // 0 for a game that is over
    }
  });
}

void VectorGames::start(const VectorOutputs& out, int threads) {
  for (int g = 0; g < num_games(); ++g)
    if (!games_[g]) throw std::logic_error("every game needs a current game before start");
  parallel(threads, num_games(), games_per_thread(),
           [&](int lo, int hi) { start_range(out, lo, hi); });
}

void VectorGames::step(const std::int64_t* actions, const VectorOutputs& out, int threads) {
  for (int g = 0; g < num_games(); ++g)
    if (!games_[g]) throw std::logic_error("every game needs a current game to step");
  parallel(threads, num_games(), games_per_thread(),
           [&](int lo, int hi) { step_range(actions, out, lo, hi); });
}

void VectorGames::greedy_prior(const std::int64_t* games, int count, double shape_weight,
                               float* out, int threads) {
  for (int r = 0; r < count; ++r)
    if (games[r] < 0 || games[r] >= num_games() || games_[games[r]]->is_over())
      throw std::invalid_argument("greedy_prior: every listed game must exist and not be over");
  parallel(threads, count, 1, [&](int lo, int hi) {
    for (int r = lo; r < hi; ++r)
      greedy_prior_row(*games_[games[r]], shape_weight,
                       out + static_cast<std::size_t>(r) * NUM_ACTIONS);
  });
}

}  // namespace moonriver
