#include "az_search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "az_net.h"
#include "observation.h"
#include "per_thread.h"
#include "pool.h"
#include "search.h"

namespace moonriver {

namespace {

constexpr double NEG_INF = -std::numeric_limits<double>::infinity();

// A child of a node: the action, its node (-1: never taken) and the network's logit.
struct Edge {
  std::int32_t action = 0;
  std::int32_t child = -1;
  float logit = 0.0f;
};

// A node keyed by the actions from the root (information-set style: its children are the
// ids legal in whichever determinization reaches it).
struct Node {
  std::vector<Edge> edges;  // ascending action
  double value_sum[MAX_PLAYERS] = {};
  float raw[MAX_PLAYERS] = {};  // the network's values at expansion
  float low_logit = 0.0f;       // the lowest logit at expansion: an id first legal later gets it
  int visits = 0;
  bool expanded = false;
};

// mctx's sequence of considered visits (sequential halving): the visit count an action must
// have to be chosen at each simulation index.
std::vector<int> considered_visits(int considered, int simulations) {
  std::vector<int> sequence;
  if (considered <= 1) {
    for (int i = 0; i < simulations; ++i) sequence.push_back(i);
    return sequence;
  }
  const int log2max = static_cast<int>(std::ceil(std::log2(considered)));
  std::vector<int> visits(considered, 0);
  int num = considered;
  while (static_cast<int>(sequence.size()) < simulations) {
    const int extra = std::max(1, simulations / (log2max * num));
    for (int r = 0; r < extra; ++r) {
      sequence.insert(sequence.end(), visits.begin(), visits.begin() + num);
      for (int i = 0; i < num; ++i) visits[i] += 1;
    }
    num = std::max(2, num / 2);
  }
  sequence.resize(simulations);
  return sequence;
}

// Each seat's win share of a finished game (1 / the number of winners, 0 for the others).
void win_share(const Game& game, double* out) {
  std::fill(out, out + MAX_PLAYERS, 0.0);
  const std::vector<int> winners = game.winners();
  for (int p : winners) out[p] = 1.0 / static_cast<double>(winners.size());
}

// Play the forced decisions (one legal id) until a real choice or the end.
void play_forced(Game& game) {
  while (!game.is_over()) {
    const int only = game.only_action();
    if (only < 0) return;
    game.apply(only);
  }
}

// What makes a leaf's network output unusable ("" when nothing): a logit that is not finite at
// one of its ``m`` legal ``ids`` (``row``: NUM_ACTIONS logits) or a value of one of its
// ``players`` seats outside [0, 1]; ``i``: the leaf's row, for the message.
std::string leaf_problem(const std::int64_t* ids, int m, int players, const float* row,
                         const float* values, int i) {
  for (int k = 0; k < m; ++k)
    if (!std::isfinite(row[ids[k]]))
      return "policy_logits row " + std::to_string(i) + " is not finite at legal id " +
             std::to_string(ids[k]);
  for (int s = 0; s < players; ++s)
    if (!(values[s] >= 0.0f && values[s] <= 1.0f))
      return "values row " + std::to_string(i) + " seat " + std::to_string(s) +
             " must be within [0, 1] (got " + std::to_string(values[s]) + ")";
  return "";
}

// Softmax of ``x`` (``m`` entries) into ``out``.
void softmax(const double* x, int m, double* out) {
  double hi = NEG_INF;
  for (int i = 0; i < m; ++i) hi = std::max(hi, x[i]);
  double sum = 0.0;
  for (int i = 0; i < m; ++i) sum += out[i] = std::exp(x[i] - hi);
  for (int i = 0; i < m; ++i) out[i] /= sum;
}

int argmax(const double* x, int m) {
  int best = 0;
  for (int i = 1; i < m; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

// Run ``fn(i)`` for i in [0, count) on up to ``threads`` threads (each i independent), with
// the calling thread's pool of workers (kept between searches: starting threads at each of a
// search's phases cost more than the phase).
template <typename F>
void parallel(int threads, int count, F&& fn) {
  const int t = std::min(threads, count);
  if (t <= 1) {
    for (int i = 0; i < count; ++i) fn(i);
    return;
  }
  calling_thread_pool(t - 1).split(count, 1, t, [&](int lo, int hi) {
    for (int i = lo; i < hi; ++i) fn(i);
  });
}

// Per legal id of the node at hand: a search's working rows (one set per thread, not per game).
struct Buffers {
  std::int64_t ids[NUM_ACTIONS];
  int edge[NUM_ACTIONS], visits[NUM_ACTIONS];
  double logit[NUM_ACTIONS], q[NUM_ACTIONS], work[NUM_ACTIONS], prob[NUM_ACTIONS];
};

// A leaf's rows when the core values it (run).
struct LeafRows {
  float prior[NUM_ACTIONS], row[NUM_ACTIONS];
  SparseObservation observation;
};

}  // namespace

const char* const AZ_PHASE_NAMES[AZ_NUM_PHASES] = {"select", "determinize", "apply",   "observe",
                                                   "prior",  "network",     "rollout", "backup"};

void check_az_params(const AzParams& p) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("search: " + what); };
  auto finite_nonneg = [&](double v, const char* name) {
    if (!std::isfinite(v) || v < 0)
      fail(std::string(name) + " must be finite and >= 0 (got " + std::to_string(v) + ")");
  };
  if (p.simulations < 1) fail("simulations must be >= 1");
  if (p.max_considered < 1) fail("max_considered must be >= 1");
  if (p.threads < 1) fail("threads must be >= 1");
  finite_nonneg(p.c_visit, "c_visit");
  finite_nonneg(p.c_puct, "c_puct");
  finite_nonneg(p.gumbel_scale, "gumbel_scale");
  finite_nonneg(p.time_limit, "time_limit");
  if (!std::isfinite(p.c_scale) || p.c_scale <= 0) fail("c_scale must be finite and > 0");
  if (!(p.rollout_weight >= 0 && p.rollout_weight <= 1))
    fail("rollout_weight must be within [0, 1] (got " + std::to_string(p.rollout_weight) + ")");
  if (p.rollout_depth < 0) fail("rollout_depth must be >= 0 (0: to the end of the game)");
  if (!std::isfinite(p.rollout_temperature) || !(p.rollout_temperature >= 1e-3))
    fail("rollout_temperature must be finite and >= 0.001 (points)");
}

// One game's search: its root, generator, tree and the simulation in flight.
struct AzSearch::Tree {
  Game root, scratch;  // scratch: the simulation's determinized copy (the pending leaf's state)
  SplitMix64 rng;
  const AzParams& params;
  std::vector<Node> nodes;
  std::vector<int> path;
  std::vector<std::int64_t> root_ids;  // the root's legal ids (its edges, in this order)
  std::vector<double> gumbel;          // per root id
  int root_totals[MAX_PLAYERS] = {};   // the root's running scores, kept by unchanged ranches
  std::vector<int> schedule;           // Gumbel: considered visits per simulation
  int done = 0;                        // simulations backed up
  bool searched = true;                // false: a forced root (one legal id)
  bool pending = false;
  bool stopped = false;  // the time limit passed: no more simulations
  // Nanoseconds of this tree's work by phase (params.timers), and the clock's last reading.
  std::int64_t ns[AZ_NUM_PHASES] = {};
  std::chrono::steady_clock::time_point mark;

  Tree(const Game& game, std::uint64_t seed, const AzParams& p)
      : root(game), scratch(game), rng(seed), params(p) {
    root.set_lazy_reshuffle(nullptr);
    std::int64_t buf[NUM_ACTIONS];
    root_ids.assign(buf, buf + root.legal_ids(buf));
    if (!root.is_over())
      for (int q = 0; q < root.num_players(); ++q) root_totals[q] = root.running_score(q).total();
    searched = root_ids.size() > 1;
    nodes.reserve(static_cast<std::size_t>(std::min(p.simulations, 1 << 20)) + 1);
    nodes.emplace_back();
  }

  bool finished() const {
    return !searched || (nodes[0].expanded && (done >= params.simulations || stopped));
  }

  void start_clock() {
    if (params.timers) mark = std::chrono::steady_clock::now();
  }

  // The time since the last reading goes to ``phase``.
  void lap(AzPhase phase) {
    if (!params.timers) return;
    const auto now = std::chrono::steady_clock::now();
    ns[phase] += std::chrono::duration_cast<std::chrono::nanoseconds>(now - mark).count();
    mark = now;
  }

  void backup(const double* value) {
    for (int index : path) {
      Node& nd = nodes[index];
      nd.visits += 1;
      for (int s = 0; s < MAX_PLAYERS; ++s) nd.value_sum[s] += value[s];
    }
  }

  // Run simulations until one stops at a leaf for the network (true) or the budget is spent.
  bool advance() {
    if (!searched || pending) return pending;
    start_clock();
    if (!nodes[0].expanded) {  // the root itself is the first leaf
      scratch = root;
      path.assign(1, 0);
      lap(AZ_DETERMINIZE);
      return pending = true;
    }
    while (done < params.simulations && !stopped) {
      search_copy(scratch, root, rng);
      lap(AZ_DETERMINIZE);
      path.assign(1, 0);
      int node = 0;
      while (true) {
        if (scratch.is_over()) {
          double value[MAX_PLAYERS];
          win_share(scratch, value);
          backup(value);
          ++done;
          lap(AZ_BACKUP);
          break;
        }
        if (!nodes[node].expanded) {
          lap(AZ_SELECT);
          return pending = true;
        }
        const int e = select(node);
        lap(AZ_SELECT);
        scratch.apply(nodes[node].edges[e].action);
        play_forced(scratch);
        lap(AZ_APPLY);
        int child = nodes[node].edges[e].child;
        if (child < 0) {
          child = static_cast<int>(nodes.size());
          nodes.emplace_back();
          nodes[node].edges[e].child = child;
        }
        node = child;
        path.push_back(node);
      }
    }
    return false;
  }

  // Fill the buffers for the ids legal in ``scratch`` at ``node`` (edges added for ids first
  // legal here); returns their count.
  int gather(int node, int mover, Buffers& b) {
    const int m = scratch.legal_ids(b.ids);
    Node& nd = nodes[node];
    for (int pass = 0; pass < 2; ++pass) {
      bool missing = false;
      std::size_t c = 0;
      for (int i = 0; i < m; ++i) {
        while (c < nd.edges.size() && nd.edges[c].action < b.ids[i]) ++c;
        const bool found = c < nd.edges.size() && nd.edges[c].action == b.ids[i];
        b.edge[i] = found ? static_cast<int>(c) : -1;
        missing |= !found;
      }
      if (!missing) break;
      for (int i = 0; i < m; ++i)
        if (b.edge[i] < 0)
          nd.edges.push_back({static_cast<std::int32_t>(b.ids[i]), -1, nd.low_logit});
      std::sort(nd.edges.begin(), nd.edges.end(),
                [](const Edge& a, const Edge& b) { return a.action < b.action; });
    }
    for (int i = 0; i < m; ++i) {
      const Edge& e = nd.edges[b.edge[i]];
      b.logit[i] = e.logit;
      b.visits[i] = e.child >= 0 ? nodes[e.child].visits : 0;
      b.q[i] = b.visits[i] > 0 ? nodes[e.child].value_sum[mover] / b.visits[i] : 0.0;
    }
    return m;
  }

  // Gumbel's sigma(completed Q) per legal id into ``work`` (mctx's
  // qtransform_completed_by_mix_value without the min-max rescale: values are in [0, 1]).
  void completed_q(const Node& nd, int mover, int m, Buffers& b) {
    softmax(b.logit, m, b.prob);
    int sum_n = 0, max_n = 0;
    double weighted = 0.0, mass = 0.0;
    for (int i = 0; i < m; ++i) {
      sum_n += b.visits[i];
      max_n = std::max(max_n, b.visits[i]);
      if (b.visits[i] > 0) {
        const double p = std::max(b.prob[i], 1e-30);
        weighted += p * b.q[i];
        mass += p;
      }
    }
    const double raw = nd.raw[mover];
    const double mixed = sum_n > 0 ? (raw + sum_n * weighted / mass) / (1.0 + sum_n) : raw;
    const double scale = (params.c_visit + max_n) * params.c_scale;
    for (int i = 0; i < m; ++i) b.work[i] = scale * (b.visits[i] > 0 ? b.q[i] : mixed);
  }

  // Gumbel's root score with sequential halving: only ids with ``considered`` visits compete.
  int root_choice(int m, int considered, Buffers& b) {
    double hi = NEG_INF;
    for (int i = 0; i < m; ++i) hi = std::max(hi, b.logit[i]);
    for (int i = 0; i < m; ++i)
      b.work[i] = b.visits[i] == considered
                      ? std::max(-1e9, gumbel[i] + b.logit[i] - hi + b.work[i])
                      : NEG_INF;
    return argmax(b.work, m);
  }

  // The edge to follow from an expanded ``node`` in ``scratch``.
  int select(int node) {
    Buffers& b = per_thread<Buffers>();
    const int mover = scratch.current_player();
    const int m = gather(node, mover, b);
    const Node& nd = nodes[node];
    int best;
    if (params.gumbel) {
      completed_q(nd, mover, m, b);
      if (node == 0) {
        best = root_choice(m, schedule[std::min<std::size_t>(done, schedule.size() - 1)], b);
      } else {
        int sum_n = 0;
        for (int i = 0; i < m; ++i) {
          b.work[i] += b.logit[i];
          sum_n += b.visits[i];
        }
        softmax(b.work, m, b.prob);
        for (int i = 0; i < m; ++i) b.work[i] = b.prob[i] - b.visits[i] / (1.0 + sum_n);
        best = argmax(b.work, m);
      }
    } else {
      softmax(b.logit, m, b.prob);
      const double fpu = nd.visits > 0 ? nd.value_sum[mover] / nd.visits : 0.0;
      const double explore = params.c_puct * std::sqrt(static_cast<double>(nd.visits));
      for (int i = 0; i < m; ++i)
        b.work[i] = (b.visits[i] > 0 ? b.q[i] : fpu) + explore * b.prob[i] / (1.0 + b.visits[i]);
      best = argmax(b.work, m);
    }
    return b.edge[best];
  }

  // Expand the pending leaf with one row of logits and back up one row of values.
  void expand(const float* row_logits, const float* row_values) {
    Buffers& b = per_thread<Buffers>();
    Node& nd = nodes[path.back()];
    const int m = scratch.legal_ids(b.ids);
    nd.edges.resize(m);
    float low = std::numeric_limits<float>::infinity();
    for (int i = 0; i < m; ++i) {
      nd.edges[i] = {static_cast<std::int32_t>(b.ids[i]), -1, row_logits[b.ids[i]]};
      low = std::min(low, nd.edges[i].logit);
    }
    nd.low_logit = m > 0 ? low : 0.0f;
    const int n = scratch.num_players();
    double value[MAX_PLAYERS] = {};
    for (int s = 0; s < n; ++s) value[s] = row_values[s];
    if (params.rollout_weight > 0) mix_rollout(n, value);
    for (int s = 0; s < n; ++s) nd.raw[s] = static_cast<float>(value[s]);
    nd.expanded = true;
    const bool at_root = path.size() == 1;
    if (at_root) start_root(m);
    backup(value);
    if (!at_root) ++done;
    pending = false;
  }

  // Mix ``value`` with a random playout's from the leaf (AzParams::rollout_weight). The
  // playout runs in ``scratch``, which the next simulation copies anew from the root; at the
  // root itself it first takes a determinized copy (the hidden order is never the real one).
  void mix_rollout(int n, double* value) {
    lap(AZ_BACKUP);
    if (path.size() == 1) search_copy(scratch, root, rng);
    random_rollout(scratch, params.rollout_depth > 0 ? params.rollout_depth : INT_MAX, rng);
    double share[MAX_PLAYERS], hi = NEG_INF, sum = 0.0;
    for (int s = 0; s < n; ++s) {  // T >= 1e-3 (check_az_params): total / T stays finite
      share[s] = scratch.running_score(s).total() / params.rollout_temperature;
      hi = std::max(hi, share[s]);
    }
    for (int s = 0; s < n; ++s) sum += share[s] = std::exp(share[s] - hi);
    const double w = params.rollout_weight;
    for (int s = 0; s < n; ++s) value[s] = (1.0 - w) * value[s] + w * share[s] / sum;
    lap(AZ_ROLLOUT);
  }

  // The root's Gumbel noise (one draw per legal id) and sequential-halving schedule.
  void start_root(int m) {
    gumbel.assign(m, 0.0);
    for (int i = 0; i < m; ++i) {
      const double u = (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1.0p-53;
      gumbel[i] = params.gumbel_scale * -std::log(-std::log(u));
    }
    schedule = considered_visits(std::min(params.max_considered, m), params.simulations);
  }

  // This search's result (see AzSearch::result) into one row of each output.
  void result(std::int64_t* action, float* policy, float* root_value, std::int32_t* out_visits,
              std::uint8_t* out_searched) {
    Buffers& b = per_thread<Buffers>();
    std::fill(policy, policy + NUM_ACTIONS, 0.0f);
    std::fill(out_visits, out_visits + NUM_ACTIONS, 0);
    *out_searched = searched;
    if (!searched) {
      *action = root_ids[0];
      policy[root_ids[0]] = 1.0f;
      std::fill(root_value, root_value + MAX_PLAYERS, std::numeric_limits<float>::quiet_NaN());
      return;
    }
    scratch = root;
    const int mover = root.current_player();
    const int m = gather(0, mover, b);
    int max_n = 0, sum_n = 0;
    for (int i = 0; i < m; ++i) {
      out_visits[b.ids[i]] = b.visits[i];
      max_n = std::max(max_n, b.visits[i]);
      sum_n += b.visits[i];
    }
    int best;
    if (params.gumbel) {
      completed_q(nodes[0], mover, m, b);
      for (int i = 0; i < m; ++i) b.prob[i] = b.work[i] + b.logit[i];
      softmax(b.prob, m, b.q);  // q: the improved policy
      for (int i = 0; i < m; ++i) policy[b.ids[i]] = static_cast<float>(b.q[i]);
      best = root_choice(m, max_n, b);
    } else {
      for (int i = 0; i < m; ++i) {
        policy[b.ids[i]] = static_cast<float>(b.visits[i]) / static_cast<float>(sum_n);
        b.work[i] = b.visits[i] + 1e-6 * std::tanh(b.logit[i]);  // ties: the higher prior
      }
      best = argmax(b.work, m);
    }
    *action = b.ids[best];
    const Node& r = nodes[0];
    for (int s = 0; s < MAX_PLAYERS; ++s)
      root_value[s] = s < root.num_players() ? static_cast<float>(r.value_sum[s] / r.visits) : 0;
  }
};

AzSearch::AzSearch(const std::vector<const Game*>& roots, const std::vector<std::int64_t>& indices,
                   const AzParams& params)
    : params_(params), start_(std::chrono::steady_clock::now()) {
  check_az_params(params_);
  if (indices.size() != roots.size()) throw std::invalid_argument("search: one index per game");
  for (std::size_t g = 0; g < roots.size(); ++g) {
    if (roots[g]->is_over())
      throw std::invalid_argument("search: game " + std::to_string(g) + " is over");
    if (roots[g]->num_legal() == 0)
      throw std::invalid_argument("search: game " + std::to_string(g) +
                                  " is not over and has no legal decision");
    SplitMix64 mix(params_.seed ^ (0xD1B54A32D192ED03ULL * static_cast<std::uint64_t>(indices[g])));
    mix.next();
    trees_.push_back(std::make_unique<Tree>(*roots[g], mix.next(), params_));
  }
}

AzSearch::~AzSearch() = default;

int AzSearch::num_games() const { return static_cast<int>(trees_.size()); }

void AzSearch::check_usable() const {
  if (broken_)
    throw std::invalid_argument(
        "search: unusable after run() met a network output it could not "
        "use; start a new search");
}

int AzSearch::prepare() {
  check_usable();
  // Checked once per step, before the games advance: every game sees the same clock.
  if (params_.time_limit > 0 &&
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() >=
          params_.time_limit)
    for (auto& t : trees_)
      if (t->done > 0 && !t->pending) t->stopped = true;  // >= 1 simulation: visits to rank
  parallel(params_.threads, num_games(), [this](int g) { trees_[g]->advance(); });
  pending_.clear();
  for (int g = 0; g < num_games(); ++g)
    if (trees_[g]->pending) pending_.push_back(g);
  return num_pending();
}

void AzSearch::write_leaves(float* observation, std::int8_t* mask, std::int32_t* seat,
                            std::int32_t* game, std::int32_t* num_players) const {
  parallel(params_.threads, num_pending(), [&](int i) {
    Tree& tree = *trees_[pending_[i]];
    tree.start_clock();
    const Game& state = tree.scratch;
    const std::size_t row = static_cast<std::size_t>(i);
    observe(state, state.current_player(), observation + row * OBSERVATION_SIZE);
    state.legal_mask(mask + row * NUM_ACTIONS);
    seat[i] = state.current_player();
    game[i] = pending_[i];
    num_players[i] = state.num_players();
    tree.lap(AZ_OBSERVE);
  });
}

void AzSearch::write_priors(double shape_weight, float* prior) const {
  parallel(params_.threads, num_pending(), [&](int i) {
    Tree& tree = *trees_[pending_[i]];
    tree.start_clock();
    greedy_prior_row(tree.scratch, shape_weight, prior + static_cast<std::size_t>(i) * NUM_ACTIONS);
    tree.lap(AZ_PRIOR);
  });
}

void AzSearch::write_roots(float* observation, std::int8_t* mask, double shape_weight,
                           float* prior) const {
  parallel(params_.threads, num_games(), [&](int g) {
    const Game& root = trees_[g]->root;
    const std::size_t row = static_cast<std::size_t>(g);
    observe(root, root.current_player(), observation + row * OBSERVATION_SIZE);
    root.legal_mask(mask + row * NUM_ACTIONS);
    if (prior) greedy_prior_row(root, shape_weight, prior + row * NUM_ACTIONS);
  });
}

const Game& AzSearch::leaf_state(int i) const {
  if (i < 0 || i >= num_pending()) throw std::out_of_range("search: leaf index out of range");
  return trees_[pending_[i]]->scratch;
}

void AzSearch::evaluate(const float* logits, const float* values, int count) {
  check_usable();
  if (pending_.empty())
    throw std::invalid_argument("evaluate: no leaves are pending (call leaves() first)");
  if (count != num_pending())
    throw std::invalid_argument("evaluate: " + std::to_string(num_pending()) +
                                " leaves are pending, got " + std::to_string(count) + " rows");
  for (int i = 0; i < count; ++i) {
    const Game& state = trees_[pending_[i]]->scratch;
    std::int64_t ids[NUM_ACTIONS];
    const int m = state.legal_ids(ids);
    const std::string problem = leaf_problem(ids, m, state.num_players(),
                                             logits + static_cast<std::size_t>(i) * NUM_ACTIONS,
                                             values + static_cast<std::size_t>(i) * MAX_PLAYERS, i);
    if (!problem.empty()) throw std::invalid_argument("evaluate: " + problem);
  }
  parallel(params_.threads, count, [&](int i) {
    const std::size_t row = static_cast<std::size_t>(i);
    Tree& tree = *trees_[pending_[i]];
    tree.start_clock();
    tree.expand(logits + row * NUM_ACTIONS, values + row * MAX_PLAYERS);
    tree.lap(AZ_BACKUP);
  });
  pending_.clear();
}

int AzSearch::run(const AzNet& net, double shape_weight) {
  check_usable();
  if (!pending_.empty())
    throw std::invalid_argument("run: leaves are pending (evaluate them first)");
  int valued = 0;
  while (prepare() > 0) {
    std::atomic<bool> unusable{false};
    parallel(params_.threads, num_pending(), [&](int i) {
      LeafRows& rows = per_thread<LeafRows>();
      float *prior = rows.prior, *row = rows.row;
      SparseObservation& obs = rows.observation;
      std::int64_t ids[NUM_ACTIONS];
      float logits[NUM_ACTIONS], relative[MAX_PLAYERS], value[MAX_PLAYERS] = {};
      Tree& tree = *trees_[pending_[i]];
      tree.start_clock();
      const Game& state = tree.scratch;
      const int seat = state.current_player(), n = state.num_players();
      int totals[MAX_PLAYERS];  // scored once for the observation and the prior
      state.running_totals(totals, tree.root, tree.root_totals);
      observe_sparse(state, seat, &obs, totals);
      tree.lap(AZ_OBSERVE);
      const int m = state.legal_ids(ids);
      if (net.uses_prior()) greedy_prior_at(state, ids, m, shape_weight, totals, prior);
      tree.lap(AZ_PRIOR);
      net.evaluate(obs, prior, ids, m, n, logits, relative);
      tree.lap(AZ_NETWORK);
      for (int k = 0; k < m; ++k) row[ids[k]] = logits[k];  // expand reads the legal ids only
      for (int k = 0; k < n; ++k) value[(seat + k) % n] = relative[k];
      if (!leaf_problem(ids, m, n, row, value, i).empty()) {  // evaluate's checks
        unusable = true;
        return;
      }
      tree.expand(row, value);
      tree.lap(AZ_BACKUP);
    });
    if (unusable) {
      broken_ = true;
      pending_.clear();
      throw std::invalid_argument(
          "run: the network's output is not finite at a leaf (its weights or the greedy "
          "prior overflow float32); this search is unusable");
    }
    valued += num_pending();
    pending_.clear();
  }
  return valued;
}

std::vector<double> AzSearch::phase_seconds() const {
  std::vector<double> seconds(AZ_NUM_PHASES, 0.0);
  for (const auto& t : trees_)
    for (int k = 0; k < AZ_NUM_PHASES; ++k) seconds[k] += 1e-9 * static_cast<double>(t->ns[k]);
  return seconds;
}

bool AzSearch::finished() const {
  for (const auto& t : trees_)
    if (!t->finished()) return false;
  return true;
}

void AzSearch::result(std::int64_t* action, float* policy, float* root_value, std::int32_t* visits,
                      std::uint8_t* searched) const {
  check_usable();
  if (!finished())
    throw std::invalid_argument(
        "result: the search is not finished (call leaves() and evaluate() until leaves() "
        "returns None)");
  parallel(params_.threads, num_games(), [&](int g) {
    const std::size_t row = static_cast<std::size_t>(g);
    trees_[g]->result(action + g, policy + row * NUM_ACTIONS, root_value + row * MAX_PLAYERS,
                      visits + row * NUM_ACTIONS, searched + g);
  });
}

}  // namespace moonriver
