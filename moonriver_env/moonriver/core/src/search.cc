#include "search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace moonriver {

void determinize(Game& game, SplitMix64& rng) {
  for (std::vector<std::int16_t>* v : {&game.box_in_place(), &game.pile_in_place()})
    for (int i = static_cast<int>(v->size()) - 1; i > 0; --i)
      std::swap((*v)[i], (*v)[rng.bounded(i + 1)]);
}

void search_copy(Game& scratch, const Game& root, SplitMix64& rng) {
  scratch = root;
  scratch.set_lazy_reshuffle(&rng);
}

namespace {

// agents.greedy.plot_value: a static worth of a plot (the same sum, in the same order).
double plot_value(const Tables& t, int plot) {
  const KindRow& k = t.of_plot(plot);
  return k.nugget + k.beaver + k.corn + 1.5 * k.cows + 1.0 * (k.circle ? 1 : 0) -
         0.5 * (k.skull ? 1 : 0) + k.number / 25.0;
}

}  // namespace

void greedy_values(const Game& game, const std::int64_t* ids, int count, double* value,
                   std::int64_t* shape, const int* totals) {
  const Fixed& f = game.state();
  const Tables& t = game.tables();
  const int me = f.player;
  const Ranch& ranch = f.ranches[me];
  std::fill(shape, shape + count, 0);
  if (f.phase == SETUP || f.phase == SELECT) {
    const bool setup = f.phase == SETUP;
    const auto& column = setup ? f.active : f.pending;
    const auto& owner = setup ? f.active_owner : f.pending_owner;
    for (int i = 0; i < count; ++i) {
      const int pos = static_cast<int>(ids[i]) - SELECT0;
      double best_left = 0.0;
      bool any = false;
      for (int p = 0; p < COLUMN_SIZE; ++p)
        if (p != pos && owner[p] < 0 && column[p] >= 0) {
          const double v = plot_value(t, column[p]);
          if (!any || v > best_left) best_left = v;
          any = true;
        }
      value[i] = plot_value(t, column[pos]) - 0.5 * (any ? best_left : 0.0);
    }
    return;
  }
  if (f.phase == DISCARD) {
    for (int i = 0; i < count; ++i) {
      const SlotPair s = PAIRS.unordered[ids[i] - DISCARD0];
      value[i] = -(plot_value(t, ranch.hand[s.first]) + plot_value(t, ranch.hand[s.second]));
    }
    return;
  }
  if (f.phase == DESPERADO_PHASE) {
    for (int i = 0; i < count; ++i) {
      if (ids[i] == PASS_ID) {
        value[i] = 0.0;
        continue;
      }
      const int a = static_cast<int>(ids[i]) - DESPERADO0;
      const int mine = a / (MAX_OPPONENTS * HAND_SLOTS);
      const int rest = a % (MAX_OPPONENTS * HAND_SLOTS);
      const int opponent = rest / HAND_SLOTS + 1, theirs = rest % HAND_SLOTS;
      const Ranch& other = f.ranches[(me + opponent) % f.n];
      value[i] = plot_value(t, other.hand[theirs]) - plot_value(t, ranch.hand[mine]);
    }
    return;
  }
  int now[MAX_PLAYERS];
  for (int p = 0; p < f.n; ++p) now[p] = totals ? totals[p] : game.running_score(p).total();
  const int base = margin_of(now, f.n, me);
  Game child(game);  // one copy's storage, reused for every action
  for (int i = 0; i < count; ++i) {
    const int aid = static_cast<int>(ids[i]);
    if (i > 0) child = game;
    child.apply(aid);
    if (child.is_over()) {
      value[i] = static_cast<double>(margin(child, me) - base);
    } else {
      int totals[MAX_PLAYERS];  // most decisions change only the mover's ranch, many none
      child.running_totals(totals, game, now);
      value[i] = static_cast<double>(margin_of(totals, f.n, me) - base);
    }
    if (aid == PASS_ID) {
      shape[i] = -1;
    } else if (aid >= BUILD0 && aid < PASS_ID) {
      const int q = (aid - BUILD0) / NUM_PLACEMENTS, k = (aid - BUILD0) % NUM_PLACEMENTS;
      const int cells[2] = {k / 2, grid().second[k]};
      const int slots[2] = {PAIRS.ordered[q].first, PAIRS.ordered[q].second};
      int touching = 0;
      for (int j = 0; j < 2; ++j) {
        const int held = t.of_plot(ranch.hand[slots[j]]).terrain;
        for (Cells nb = grid().neighbours[cells[j]]; nb; nb &= nb - 1)
          touching += ranch.terrain[__builtin_ctzll(nb)] == held;
      }
      shape[i] = touching;
    }
  }
}

void greedy_prior_at(const Game& game, const std::int64_t* ids, int m, double shape_weight,
                     const int* totals, float* prior) {
  double values[NUM_ACTIONS];
  std::int64_t shape[NUM_ACTIONS];
  std::fill_n(prior, m, 0.0f);
  if (m < 2) return;
  greedy_values(game, ids, m, values, shape, totals);
  for (int i = 0; i < m; ++i)
    prior[i] = static_cast<float>(values[i] + shape_weight * static_cast<double>(shape[i]));
}

void greedy_prior_row(const Game& game, double shape_weight, float* row) {
  std::int64_t ids[NUM_ACTIONS];
  float prior[NUM_ACTIONS];
  std::fill_n(row, NUM_ACTIONS, 0.0f);
  const int m = game.legal_ids(ids);
  greedy_prior_at(game, ids, m, shape_weight, nullptr, prior);
  for (int i = 0; i < m; ++i) row[ids[i]] = prior[i];
}

int greedy_ties(const Game& game, std::vector<std::int64_t>& ties) {
  std::int64_t ids[NUM_ACTIONS];
  const int m = game.legal_ids(ids);
  ties.clear();
  if (m <= 1) {
    if (m == 1) ties.push_back(ids[0]);
    return m;
  }
  double value[NUM_ACTIONS];
  std::int64_t shape[NUM_ACTIONS];
  greedy_values(game, ids, m, value, shape);
  int best = 0;
  for (int i = 1; i < m; ++i)
    if (value[i] > value[best] || (value[i] == value[best] && shape[i] > shape[best])) best = i;
  for (int i = 0; i < m; ++i)
    if (value[i] == value[best] && shape[i] == shape[best]) ties.push_back(ids[i]);
  return m;
}

namespace {

struct Node {
  int player = 0;  // the player who chose the action leading here (the root: the one to act)
  int visits = 0;
  int available = 0;
  double total = 0.0;
  std::vector<std::pair<std::int32_t, std::int32_t>> children;  // (action, node), ascending
};

}  // namespace

void check_params(const MctsParams& p) {
  auto fail = [](const char* what) { throw std::invalid_argument(std::string("mcts: ") + what); };
  if (p.simulations < 1) fail("simulations must be >= 1");
  if (!std::isfinite(p.seconds) || p.seconds < 0) fail("seconds must be finite and >= 0");
  if (!std::isfinite(p.time_limit) || p.time_limit < 0)
    fail("time_limit must be finite and >= 0 (0: no limit)");
  if (p.rollout_depth < 0) fail("rollout_depth must be >= 0");
  if (!std::isfinite(p.exploration) || p.exploration < 0)
    fail("exploration must be finite and >= 0");
  if (!std::isfinite(p.value_scale) || p.value_scale <= 0)
    fail("value_scale must be finite and > 0");
}

MctsResult mcts_search(const Game& root_game, const MctsParams& params, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<Node> nodes;
  // One node per simulation (capped: a huge budget, or one in seconds, grows as it goes).
  nodes.reserve(static_cast<std::size_t>(std::clamp(params.simulations, 64, 1 << 20)) + 1);
  nodes.emplace_back();
  nodes[0].player = root_game.current_player();
  std::int64_t legal[NUM_ACTIONS];
  std::int32_t child_of[NUM_ACTIONS];  // per legal id: its child node, or -1 (untried)
  std::int32_t untried[NUM_ACTIONS];
  std::vector<int> path;
  const auto start = std::chrono::steady_clock::now();
  const int n = root_game.num_players();
  Game game(root_game);  // each simulation's determinized copy, in reused storage
  int done = 0;
  auto elapsed = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (true) {
    if (params.seconds > 0) {
      if (done > 0 && elapsed() >= params.seconds) break;
    } else if (done >= params.simulations) {
      break;
    }
    if (params.time_limit > 0 && done > 0 && elapsed() >= params.time_limit) break;
    search_copy(game, root_game, rng);
    path.assign(1, 0);
    int node = 0;
    while (!game.is_over()) {
      const int m = game.legal_ids(legal);
      if (m == 0) break;  // no decision (a state the checks refuse): a leaf, never a draw
      // Children seen in this determinization are available once more (a merge of the
      // ascending legal ids with the ascending children).
      int u = 0;
      {
        const auto& ch = nodes[node].children;
        std::size_t c = 0;
        for (int i = 0; i < m; ++i) {
          while (c < ch.size() && ch[c].first < legal[i]) ++c;
          if (c < ch.size() && ch[c].first == legal[i]) {
            child_of[i] = ch[c].second;
            nodes[ch[c].second].available += 1;
          } else {
            child_of[i] = -1;
            untried[u++] = static_cast<std::int32_t>(legal[i]);
          }
        }
      }
      if (u > 0) {
        const int action = untried[rng.below(u)];
        const int mover = game.current_player();
        game.apply(action);
        const int index = static_cast<int>(nodes.size());
        nodes.emplace_back();
        nodes[index].player = mover;  // values at this node are for the player who moved
        nodes[index].available = 1;
        auto& ch = nodes[node].children;
        ch.insert(std::lower_bound(ch.begin(), ch.end(), std::make_pair(action, INT32_MIN)),
                  {action, index});
        path.push_back(index);
        break;
      }
      int best = -1;
      double best_value = -INFINITY;
      for (int i = 0; i < m; ++i) {
        const Node& c = nodes[child_of[i]];
        const double v =
            c.total / c.visits + params.exploration * std::sqrt(std::log(c.available) / c.visits);
        if (v > best_value) {
          best = i;
          best_value = v;
        }
      }
      if (best < 0) best = 0;  // every value NaN: the first legal id, as the Python search
      game.apply(static_cast<int>(legal[best]));
      node = child_of[best];
      path.push_back(node);
    }
    random_rollout(game, params.rollout_depth, rng);
    double values[MAX_PLAYERS];
    int totals[MAX_PLAYERS];
    for (int p = 0; p < n; ++p) totals[p] = game.running_score(p).total();
    for (int p = 0; p < n; ++p) values[p] = std::tanh(margin_of(totals, n, p) / params.value_scale);
    for (std::size_t i = 0; i < path.size(); ++i) {
      Node& nd = nodes[path[i]];
      nd.visits += 1;
      if (i > 0) nd.total += values[nd.player];
    }
    ++done;
  }
  MctsResult result;
  result.simulations = done;
  for (const auto& [action, index] : nodes[0].children) {
    result.actions.push_back(action);
    result.visits.push_back(nodes[index].visits);
  }
  return result;
}

}  // namespace moonriver
