#include "game.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "numpy_random.h"
#include "playout.h"

namespace moonriver {

namespace {

// Whether ``items`` holds each of 0..count-1 once.
bool is_permutation_of(const std::vector<int>& items, int count) {
  if (static_cast<int>(items.size()) != count) return false;
  std::vector<bool> seen(static_cast<std::size_t>(count), false);
  for (int id : items) {
    if (id < 0 || id >= count || seen[id]) return false;
    seen[id] = true;
  }
  return true;
}

// Whether ``a`` and ``b`` hold the same items (in any order).
template <typename T, typename U>
bool same_items(const std::vector<T>& a, const std::vector<U>& b) {
  std::vector<int> x(a.begin(), a.end()), y(b.begin(), b.end());
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y;
}

// The setup's values against the tables (ids in range) before anything reads them.
void check_setup(const Setup& s, const Tables& t) {
  const int n = s.num_players;
  auto fail = [](const char* what) {
    throw std::invalid_argument(std::string("moonriver core: inconsistent setup: ") + what);
  };
  if (n < 2 || n > MAX_PLAYERS) fail("num_players must be 2..4");
  if (static_cast<int>(s.capacity.size()) != n || static_cast<int>(s.bridges.size()) != n ||
      static_cast<int>(s.board_ids.size()) != n)
    fail("capacity, bridges and board_ids need one entry per player");
  if (s.setup_order.empty() || s.setup_order.size() > 4) fail("setup_order needs 1..4 players");
  if (s.scenario < 0 || s.scenario > 4) fail("scenario must be 0 (base) or 1..4");
  const Cells usable = usable_cells(n == 2 ? MAX_ROWS : 5);
  for (int p = 0; p < n; ++p) {
    if (s.capacity[p] < 1 || s.capacity[p] > HAND_SLOTS - 1) fail("capacity must be 1..4");
    if (s.bridges[p] & ~usable) fail("bridges must be usable cells of the ranch");
    if (s.board_ids[p] < -1 || s.board_ids[p] > 4) fail("board_ids must be -1..4");
  }
  for (int p : s.setup_order)
    if (p < 0 || p >= n) fail("setup_order holds players 0..num_players-1");
  if (!s.board_indices.empty() && static_cast<int>(s.board_indices.size()) != n)
    fail("board_indices need one entry per player (or none)");
  for (int i : s.board_indices)
    if (i < 0) fail("board_indices are indices in a plan's boards (>= 0)");
  for (int id : s.box)
    if (id < 0 || id >= t.num_plots()) fail("box holds plot ids of the tables");
  for (int id : s.pile)
    if (id < 0 || id >= t.num_partners()) fail("pile holds partner tokens of the tables");
  // Every piece in exactly one place from the start (the byte state's checks hold each state
  // to it).
  if (!is_permutation_of(s.box, t.num_plots())) fail("box holds each plot id of the tables once");
  if (!is_permutation_of(s.pile, t.num_partners()))
    fail("pile holds each partner token of the tables once");
  if (s.box.size() < 2 * COLUMN_SIZE)
    fail("box must hold at least 8 plots (the set-up's column and the next)");
}
}  // namespace

SetupPlan make_plan(const Tables& tables, int num_players, bool auto_forced, int scenario,
                    bool draw_scenario, int scenario_low, int scenario_high,
                    const std::vector<int>& capacity, const std::vector<Cells>& bridges,
                    const std::vector<int>& board_ids, bool draw_boards) {
  auto fail = [](const char* what) {
    throw std::invalid_argument(std::string("set-up plan: ") + what);
  };
  const int n = num_players;
  const std::size_t boards = capacity.size();
  if (n < 2 || n > MAX_PLAYERS) fail("num_players must be 2..4");
  if (draw_scenario && (scenario_low < 1 || scenario_high > 5 || scenario_low >= scenario_high))
    fail("a drawn scenario's range must lie in 1..4");
  if (bridges.size() != boards || board_ids.size() != boards)
    fail("capacity, bridges and board_ids need one entry per board");
  if (static_cast<int>(boards) < n || (!draw_boards && static_cast<int>(boards) != n))
    fail("boards: one per seat, or a pool of at least num_players to draw from");
  SetupPlan plan{
      n,  auto_forced, scenario,           draw_scenario,        scenario_low, scenario_high,
      {}, draw_boards, tables.num_plots(), tables.num_partners()};
  for (std::size_t i = 0; i < boards; ++i)
    plan.boards.push_back(BoardSpec{capacity[i], bridges[i], board_ids[i]});
  return plan;
}

Setup draw_setup(const SetupPlan& plan, const std::vector<std::uint32_t>& seed) {
  Pcg64 rng(seed);
  const int n = plan.num_players;
  Setup s;
  s.num_players = n;
  s.auto_forced = plan.auto_forced;
  s.scenario = plan.draw_scenario
                   ? static_cast<int>(integers(rng, plan.scenario_low, plan.scenario_high))
                   : plan.scenario;
  std::vector<int> seats(n);
  if (plan.draw_boards) {
    const std::vector<int> order = permutation(rng, static_cast<int>(plan.boards.size()));
    std::copy(order.begin(), order.begin() + n, seats.begin());
  } else {
    for (int p = 0; p < n; ++p) seats[p] = p;
  }
  for (int index : seats) {
    const BoardSpec& b = plan.boards[index];
    s.capacity.push_back(b.capacity);
    s.bridges.push_back(b.bridges);
    s.board_ids.push_back(b.board_id);
  }
  s.box = permutation(rng, plan.num_plots);
  s.pile = permutation(rng, plan.num_partners);
  const std::vector<int> first = permutation(rng, n);
  s.setup_order = n == 2 ? std::vector<int>{first[0], first[1], first[1], first[0]} : first;
  s.board_indices = std::move(seats);
  return s;
}

Game::Game(std::shared_ptr<const Tables> tables, const Setup& s) : tables_(std::move(tables)) {
  const int n = s.num_players;
  check_setup(s, *tables_);
  f_.n = n;
  f_.rows = n == 2 ? 10 : 5;
  f_.scenario = s.scenario;
  f_.auto_forced = s.auto_forced;
  for (int p = 0; p < n; ++p) {
    f_.ranches[p] = Ranch(f_.rows, s.capacity[p], s.bridges[p]);
    f_.board_ids[p] = static_cast<std::int8_t>(s.board_ids[p]);
    if (!s.board_indices.empty()) board_indices_[p] = s.board_indices[p];
  }
  f_.supply = NUM_COWS;
  for (int v : s.box) box_.push_back(static_cast<std::int16_t>(v));
  for (int v : s.pile) pile_.push_back(static_cast<std::int16_t>(v));
  f_.saloon.fill(-1);
  f_.bonus_tiles = {n == 2, n == 2};
  f_.setup_len = static_cast<int>(s.setup_order.size());
  for (int i = 0; i < f_.setup_len; ++i)
    f_.setup_order[i] = static_cast<std::int8_t>(s.setup_order[i]);
  refill_saloon();
  f_.active.fill(-1);  // stays so if the box cannot fill a column
  f_.has_active = draw_column(f_.active);
  f_.active_owner.fill(-1);
  f_.pending.fill(-1);
  f_.has_pending = false;
  f_.pending_owner.fill(-1);
  reset_turn_context();
  f_.player = f_.setup_order[0];
  f_.setup_index = 0;
  enter(SETUP);
  column_choices(f_.active, f_.active_owner);
  settle();
  if (!is_over() && num_legal() == 0)
    throw std::invalid_argument(
        "moonriver core: inconsistent setup: the box must fill the first column (4 plots)");
}

std::vector<int> Game::setup_order() const {
  return std::vector<int>(f_.setup_order.begin(), f_.setup_order.begin() + f_.setup_len);
}

void Game::set_hidden(const std::vector<int>& box, const std::vector<int>& pile) {
  for (int id : box)
    if (id < 0 || id >= tables_->num_plots())
      throw std::invalid_argument("set_hidden: the box holds plot ids of the tables");
  for (int id : pile)
    if (id < 0 || id >= tables_->num_partners())
      throw std::invalid_argument("set_hidden: the pile holds partner tokens of the tables");
  // A new order of the same items: nothing hidden is lost, doubled or swapped for another.
  if (!same_items(box, box_) || !same_items(pile, pile_))
    throw std::invalid_argument("set_hidden: the box and pile keep their items (a new order)");
  box_.assign(box.begin(), box.end());
  pile_.assign(pile.begin(), pile.end());
}

// ------------------------------------------------------------------ legality

void Game::build_rows(std::array<Placements, NUM_PAIRS>& rows, int& count) const {
  const Ranch& r = f_.ranches[f_.player];
  const int h = std::min(r.hand_size, HAND_SLOTS);
  count = PAIRS.prefix[h];
  int held[HAND_SLOTS];
  for (int i = 0; i < h; ++i) held[i] = tables_->of_plot(r.hand[i]).terrain;
  const Placements base = r.free & r.bridged;
  for (int q = 0; q < count; ++q) {
    const auto [a, b] = PAIRS.ordered[q];
    rows[q] = base | (r.free & (r.first_adj[held[a]] | r.second_adj[held[b]]));
  }
}

bool Game::can_build() const {
  const Ranch& r = f_.ranches[f_.player];
  if (r.hand_size < 2) return false;
  Placements reach = r.bridged;
  for (int i = 0; i < r.hand_size; ++i) {
    const int t = tables_->of_plot(r.hand[i]).terrain;
    reach |= r.first_adj[t] | r.second_adj[t];
  }
  return (r.free & reach) != 0;
}

static bool can_pass_build(const Fixed& f) {
  return !f.emptying && !(f.forced && f.builds_done == 0);
}

bool Game::is_legal(int aid) const {
  if (aid < 0 || aid >= NUM_ACTIONS || is_over()) return false;
  if (f_.phase != BUILD) {
    for (int i = 0; i < f_.choices_len; ++i)
      if (f_.choices[i] == aid) return true;
    return false;
  }
  if (aid == PASS_ID) return can_pass_build(f_);
  if (aid < BUILD0 || aid >= PASS_ID) return false;
  std::array<Placements, NUM_PAIRS> rows;
  int count;
  build_rows(rows, count);
  const int q = (aid - BUILD0) / NUM_PLACEMENTS, k = (aid - BUILD0) % NUM_PLACEMENTS;
  return q < count && (rows[q] >> k & 1);
}

int Game::legal_ids(std::int64_t* out) const {
  if (is_over()) return 0;
  int m = 0;
  if (f_.phase != BUILD) {
    for (int i = 0; i < f_.choices_len; ++i) out[m++] = f_.choices[i];
    std::sort(out, out + m);
    return m;
  }
  std::array<Placements, NUM_PAIRS> rows;
  int count;
  build_rows(rows, count);
  for (int q = 0; q < count; ++q)
    for (Placements r = rows[q]; r; r &= r - 1)
      out[m++] = BUILD0 + q * NUM_PLACEMENTS + lowest_bit(r);
  if (can_pass_build(f_)) out[m++] = PASS_ID;
  return m;
}

void Game::legal_mask(std::int8_t* out) const {
  std::memset(out, 0, NUM_ACTIONS);
  if (is_over()) return;
  if (f_.phase != BUILD) {
    for (int i = 0; i < f_.choices_len; ++i) out[f_.choices[i]] = 1;
    return;
  }
  std::array<Placements, NUM_PAIRS> rows;
  int count;
  build_rows(rows, count);
  for (int q = 0; q < count; ++q)
    for (Placements r = rows[q]; r; r &= r - 1)
      out[BUILD0 + q * NUM_PLACEMENTS + lowest_bit(r)] = 1;
  if (can_pass_build(f_)) out[PASS_ID] = 1;
}

int Game::num_legal() const {
  if (is_over()) return 0;
  if (f_.phase != BUILD) return f_.choices_len;
  std::array<Placements, NUM_PAIRS> rows;
  int count, total = can_pass_build(f_) ? 1 : 0;
  build_rows(rows, count);
  for (int q = 0; q < count; ++q) total += popcount(rows[q]);
  return total;
}

int Game::only_action() const {
  if (f_.phase != BUILD) return f_.choices_len == 1 ? f_.choices[0] : -1;
  std::array<Placements, NUM_PAIRS> rows;
  int count, builds = 0;
  build_rows(rows, count);
  for (int q = 0; q < count; ++q) builds += popcount(rows[q]);
  const bool pass = can_pass_build(f_);
  if (builds + (pass ? 1 : 0) != 1) return -1;
  if (pass) return PASS_ID;
  for (int q = 0; q < count; ++q)
    if (rows[q]) return BUILD0 + q * NUM_PLACEMENTS + lowest_bit(rows[q]);
  return -1;
}

// ------------------------------------------------------------------ playing

bool Game::apply(int aid) {
  if (!is_legal(aid)) return false;
  play(aid, false);
  settle();
  return true;
}

void Game::play(int aid, bool automatic) {
  history_.insert(history_.end(), {EV_DECISION, f_.player, aid, automatic ? 1 : 0});
  dispatch(aid);
}

void Game::settle() {
  while (f_.auto_forced && f_.phase != GAME_OVER) {
    const int aid = only_action();
    if (aid < 0) return;
    play(aid, true);
  }
}

void Game::enter(int phase) {
  f_.phase = phase;
  f_.choices_len = 0;
}

void Game::reset_turn_context() {
  f_.forced = false;
  f_.builds_done = 0;
  f_.builds_allowed = 0;
  f_.skulls_len = 0;
  f_.circles = {-1, -1};
  f_.effect_cell = -1;
  f_.cowboy_moves_left = 0;
  f_.choices_len = 0;
}

bool Game::draw_column(std::array<std::int16_t, COLUMN_SIZE>& column) {
  if (static_cast<int>(box_.size()) < COLUMN_SIZE) return false;
  for (int i = 0; i < COLUMN_SIZE; ++i) {
    if (reshuffle_)
      std::swap(box_[reshuffle_->bounded(static_cast<int>(box_.size()))], box_.back());
    column[i] = box_.back();
    box_.pop_back();
  }
  // Stable: equal numbers keep the draw order.
  std::stable_sort(column.begin(), column.end(), [this](std::int16_t a, std::int16_t b) {
    return tables_->of_plot(a).number < tables_->of_plot(b).number;
  });
  history_.push_back(EV_COLUMN);
  history_.insert(history_.end(), column.begin(), column.end());
  return true;
}

void Game::refill_saloon() {
  std::int32_t filled[2 * SALOON_SLOTS];
  int m = 0;
  for (int s = 0; s < SALOON_SLOTS; ++s) {
    if (f_.saloon[s] < 0 && !pile_.empty()) {
      if (reshuffle_)
        std::swap(pile_[reshuffle_->bounded(static_cast<int>(pile_.size()))], pile_.back());
      f_.saloon[s] = pile_.back();
      pile_.pop_back();
      filled[m++] = s;
      filled[m++] = f_.saloon[s];
    }
  }
  if (m) {
    history_.push_back(EV_SALOON);
    history_.push_back(m / 2);
    history_.insert(history_.end(), filled, filled + m);
  }
}

void Game::column_choices(const std::array<std::int16_t, COLUMN_SIZE>& column,
                          const std::array<std::int8_t, COLUMN_SIZE>& owner) {
  for (int p = 0; p < COLUMN_SIZE; ++p)
    if (owner[p] < 0 && column[p] >= 0) choose(SELECT0 + p);
}

void Game::dispatch(int aid) {
  const int ph = f_.phase;
  Ranch& me = f_.ranches[f_.player];
  if (ph == SETUP) {
    do_setup(aid - SELECT0);
  } else if (ph == SELECT) {
    f_.pending_owner[aid - SELECT0] = static_cast<std::int8_t>(f_.player);
    end_turn();
  } else if (aid == PASS_ID) {
    if (ph == BUILD) {
      finish_expansion();
    } else {
      f_.effect_cell = -1;
      f_.cowboy_moves_left = 0;
      resolve();
    }
  } else if (ph == BUILD) {
    const int q = (aid - BUILD0) / NUM_PLACEMENTS, k = (aid - BUILD0) % NUM_PLACEMENTS;
    build(PAIRS.ordered[q].first, PAIRS.ordered[q].second, k / 2, grid().second[k]);
  } else if (ph == DISCARD) {
    const auto [a, b] = PAIRS.unordered[aid - DISCARD0];
    discarded_.push_back(me.hand[a]);
    discarded_.push_back(me.hand[b]);
    me.hand_erase(b);
    me.hand_erase(a);
    finish_expansion();
  } else if (ph == DROUGHT) {
    me.add_cows(aid - DROUGHT0, -1);
    f_.supply += 1;
    for (int i = 1; i < f_.skulls_len; ++i) f_.skulls[i - 1] = f_.skulls[i];
    --f_.skulls_len;
    resolve();
  } else if (ph == RECRUIT) {
    const int s = (aid - RECRUIT0) / 4, rest = (aid - RECRUIT0) % 4;
    recruit(s, rest / 2, rest % 2);
  } else if (ph == COWBOY_PHASE) {
    const int cell = (aid - COWBOY0) / 4, d = (aid - COWBOY0) % 4;
    me.add_cows(cell, -1);
    me.add_cows(cell + DIR_ROW[d] * COLS + DIR_COL[d], 1);
    f_.cowboy_moves_left -= 1;
    f_.choices_len = 0;
    if (f_.cowboy_moves_left) effect_choices();
    if (!f_.choices_len) {
      f_.effect_cell = -1;
      f_.cowboy_moves_left = 0;
      resolve();
    }
  } else if (ph == DESPERADO_PHASE) {
    const int i = (aid - DESPERADO0) / (MAX_OPPONENTS * HAND_SLOTS);
    const int rest = (aid - DESPERADO0) % (MAX_OPPONENTS * HAND_SLOTS);
    const int o = rest / HAND_SLOTS, j = rest % HAND_SLOTS;
    Ranch& them = f_.ranches[(f_.player + o + 1) % f_.n];
    std::swap(me.hand[i], them.hand[j]);
    f_.effect_cell = -1;
    resolve();
  } else if (ph == THIEF) {
    const int o = (aid - THIEF0) / NUM_CELLS, cell = (aid - THIEF0) % NUM_CELLS;
    f_.ranches[(f_.player + o + 1) % f_.n].add_cows(cell, -1);
    me.add_cows(f_.effect_cell, 1);
    f_.effect_cell = -1;
    resolve();
  } else if (ph == BONUS) {
    const int tf = (aid - BONUS0) / NUM_CELLS, cell = (aid - BONUS0) % NUM_CELLS;
    place_bonus(tf / 2, tf % 2, cell);
  }
}

void Game::do_setup(int pos) {
  f_.active_owner[pos] = static_cast<std::int8_t>(f_.player);
  f_.setup_index += 1;
  if (f_.setup_index < f_.setup_len) {
    f_.player = f_.setup_order[f_.setup_index];
    f_.choices_len = 0;
    column_choices(f_.active, f_.active_owner);
    return;
  }
  for (int p = 0; p < COLUMN_SIZE; ++p) {  // 3 players: the unchosen plot leaves
    if (f_.active_owner[p] < 0 && f_.active[p] >= 0) {
      removed_.push_back(f_.active[p]);
      f_.active[p] = -1;
    }
  }
  f_.has_pending = draw_column(f_.pending);
  start_round();
}

void Game::start_round() {
  f_.round += 1;
  f_.recruited_this_round = false;
  f_.order_len = 0;
  for (int p = 0; p < COLUMN_SIZE; ++p)
    if (f_.active_owner[p] >= 0) f_.order[f_.order_len++] = static_cast<std::int8_t>(p);
  f_.turn_index = 0;
  start_turn();
}

void Game::start_turn() {
  const int pos = f_.order[f_.turn_index];
  f_.player = f_.active_owner[pos];
  Ranch& r = f_.ranches[f_.player];
  r.hand_push(f_.active[pos]);
  f_.active[pos] = -1;
  reset_turn_context();
  f_.forced = r.in_hand();
  f_.builds_allowed = r.hand_size >= 4 ? 2 : 1;
  to_expansion();
}

void Game::to_expansion() {
  f_.phase = BUILD;
  Ranch& r = f_.ranches[f_.player];
  const bool can = r.hand_size >= 2 && can_build();
  if (f_.emptying) {
    if (can) return;
    for (int i = 0; i < r.hand_size; ++i) discarded_.push_back(r.hand[i]);
    r.hand_size = 0;
    next_emptying();
    return;
  }
  if (f_.builds_done < f_.builds_allowed && r.hand_size >= 2) {
    if (f_.forced && f_.builds_done == 0) {
      if (!can) {
        enter(DISCARD);
        discard_choices();
      }
      return;
    }
    if (can) return;
  }
  finish_expansion();
}

void Game::finish_expansion() {
  if (f_.last_round) {
    end_turn();
  } else {
    enter(SELECT);
    column_choices(f_.pending, f_.pending_owner);
  }
}

void Game::build(int a, int b, int cell_a, int cell_b) {
  Ranch& r = f_.ranches[f_.player];
  const int plot_a = r.hand[a], plot_b = r.hand[b];
  r.hand_erase(std::max(a, b));
  r.hand_erase(std::min(a, b));
  f_.builds_done += 1;
  put(r, cell_a, plot_a, tables_->plot_kind[plot_a], 0);
  put(r, cell_b, plot_b, tables_->plot_kind[plot_b], 1);
  resolve();
}

void Game::put(Ranch& r, int cell, int plot, int kind, int circle_index) {
  const KindRow& k = tables_->kinds[kind];
  r.place(cell, plot, kind, k.terrain, k.nugget, k.beaver, k.corn);
  if (k.cows) {
    const int cows = std::min(k.cows, f_.supply);
    r.add_cows(cell, cows);  // the cell was empty
    f_.supply -= cows;
  }
  // Skulls resolve after every cow of the domino: both plots are put before resolve().
  if (k.skull) f_.skulls[f_.skulls_len++] = static_cast<std::int8_t>(cell);
  if (k.circle) f_.circles[circle_index] = static_cast<std::int8_t>(cell);
}

void Game::resolve() {
  Ranch& r = f_.ranches[f_.player];
  while (f_.skulls_len) {
    const Cells herd = skull_herd();
    if (herd) {
      enter(DROUGHT);
      drought_choices(herd);
      return;
    }
    for (int i = 1; i < f_.skulls_len; ++i) f_.skulls[i - 1] = f_.skulls[i];
    --f_.skulls_len;
  }
  if (f_.circles[0] >= 0 || f_.circles[1] >= 0) {
    bool any = false;
    for (int s = 0; s < SALOON_SLOTS; ++s) any |= f_.saloon[s] >= 0;
    if (any) {
      enter(RECRUIT);
      recruit_choices();
      return;
    }
    f_.circles = {-1, -1};
  }
  if (f_.n == 2 && !r.bonus_taken && (f_.bonus_tiles[0] || f_.bonus_tiles[1]) &&
      r.reach >= BONUS_ROW) {
    const int saved_phase = f_.phase;
    enter(BONUS);
    bonus_placements();
    if (f_.choices_len) return;
    f_.phase = saved_phase;
    const int lost = f_.bonus_tiles[0] ? 0 : 1;  // cannot be placed: the tile leaves the game
    f_.bonus_tiles[lost] = false;
    r.bonus_taken = true;
    history_.insert(history_.end(), {EV_BONUS_LOST, f_.player, lost});
  }
  to_expansion();
}

void Game::recruit(int slot, int face, int circle) {
  Ranch& r = f_.ranches[f_.player];
  const int token = f_.saloon[slot];
  f_.saloon[slot] = -1;
  f_.recruited_this_round = true;
  const int cell = f_.circles[circle];
  f_.circles[circle] = -1;
  r.set_partner(cell, token, face);
  const int kind = face == COWBOY_FACE ? COWBOY : tables_->specialist[token];
  f_.effect_cell = cell;
  if (kind == COWBOY || kind == DESPERADO || kind == CATTLE_THIEF) {
    f_.cowboy_moves_left = kind == COWBOY ? COWBOY_MOVES : 0;
    const int phase = kind == COWBOY ? COWBOY_PHASE : kind == DESPERADO ? DESPERADO_PHASE : THIEF;
    const int saved_phase = f_.phase;
    enter(phase);
    effect_choices();
    if (f_.choices_len) return;
    f_.phase = saved_phase;
  }
  f_.effect_cell = -1;
  f_.cowboy_moves_left = 0;
  resolve();
}

void Game::place_bonus(int tile, int face, int cell) {
  Ranch& r = f_.ranches[f_.player];
  f_.bonus_tiles[tile] = false;
  r.bonus_taken = true;
  put(r, cell, -2 - tile, tables_->bonus_kind(tile, face), 0);
  resolve();
}

void Game::end_turn() {
  f_.turn_index += 1;
  if (f_.turn_index < f_.order_len)
    start_turn();
  else
    end_round();
}

void Game::end_round() {
  for (int p = 0; p < COLUMN_SIZE; ++p) {
    if (f_.active[p] >= 0) {
      removed_.push_back(f_.active[p]);
      f_.active[p] = -1;
    }
  }
  if (f_.last_round) {
    refill_saloon();  // the end of every round refills, the last one included
    f_.empty_len = 0;
    for (int i = 0; i < f_.order_len; ++i) {
      const std::int8_t who = f_.active_owner[f_.order[i]];
      bool seen = false;
      for (int j = 0; j < f_.empty_len; ++j) seen |= f_.empty_order[j] == who;
      if (!seen) f_.empty_order[f_.empty_len++] = who;
    }
    f_.emptying = true;
    f_.turn_index = 0;
    start_emptying();
    return;
  }
  f_.active = f_.pending;
  f_.has_active = f_.has_pending;
  f_.active_owner = f_.pending_owner;
  f_.pending_owner.fill(-1);
  f_.has_pending = draw_column(f_.pending);
  if (!f_.has_pending) f_.pending.fill(-1);
  refill_saloon();
  if (!f_.has_pending) f_.last_round = true;
  start_round();
}

void Game::start_emptying() {
  f_.player = f_.empty_order[f_.turn_index];
  reset_turn_context();
  to_expansion();
}

void Game::next_emptying() {
  f_.turn_index += 1;
  if (f_.turn_index < f_.empty_len)
    start_emptying();
  else
    finish_game();
}

void Game::finish_game() {
  for (int p = 0; p < f_.n; ++p) f_.supply += f_.ranches[p].cap_cows();
  f_.phase = GAME_OVER;
  reset_turn_context();
  for (int p = 0; p < f_.n; ++p)
    f_.final_scores[p] = score_ranch(f_.ranches[p], *tables_, f_.scenario, false);
}

// ------------------------------------------------------------------ options

void Game::list_choices() {
  f_.choices_len = 0;
  switch (f_.phase) {
    case SETUP:
      column_choices(f_.active, f_.active_owner);
      break;
    case SELECT:
      column_choices(f_.pending, f_.pending_owner);
      break;
    case DISCARD:
      discard_choices();
      break;
    case DROUGHT:
      drought_choices(skull_herd());
      break;
    case RECRUIT:
      recruit_choices();
      break;
    case COWBOY_PHASE:
    case DESPERADO_PHASE:
    case THIEF:
      effect_choices();
      break;
    case BONUS:
      bonus_placements();
      break;
    default:
      break;
  }
}

Cells Game::skull_herd() const {
  const Ranch& r = f_.ranches[f_.player];
  return r.territory(f_.skulls[0]) & r.cow_cells;
}

void Game::discard_choices() {
  for (int i = 0; i < NUM_UNORDERED; ++i)
    if (PAIRS.unordered[i].second < f_.ranches[f_.player].hand_size) choose(DISCARD0 + i);
}

void Game::drought_choices(Cells herd) {
  for (Cells h = herd; h; h &= h - 1) choose(DROUGHT0 + __builtin_ctzll(h));
}

void Game::recruit_choices() {
  for (int s = 0; s < SALOON_SLOTS; ++s) {
    if (f_.saloon[s] < 0) continue;
    for (int face = 0; face < 2; ++face)
      for (int c = 0; c < MAX_CIRCLES; ++c)
        if (f_.circles[c] >= 0) choose(RECRUIT0 + (s * 2 + face) * 2 + c);
  }
}

// The options of a partner's immediate effect, and Pass (every one may be declined).
void Game::effect_choices() {
  if (f_.phase == COWBOY_PHASE)
    cowboy_moves();
  else if (f_.phase == DESPERADO_PHASE)
    desperado_swaps();
  else
    thefts();
  if (f_.choices_len) choose(PASS_ID);
}

void Game::cowboy_moves() {
  const Ranch& r = f_.ranches[f_.player];
  for (Cells bits = r.cow_cells; bits; bits &= bits - 1) {
    const int cell = __builtin_ctzll(bits);
    for (int d = 0; d < 4; ++d) {
      const int n = step(cell, d, r.rows);
      if (n >= 0 && r.terrain[n] >= 0 && r.terrain[n] != CORNFIELD) choose(COWBOY0 + cell * 4 + d);
    }
  }
}

void Game::desperado_swaps() {
  const int mine = f_.ranches[f_.player].hand_size;
  for (int o = 1; o < f_.n; ++o) {
    const int theirs = f_.ranches[(f_.player + o) % f_.n].hand_size;
    for (int i = 0; i < mine; ++i)
      for (int j = 0; j < theirs; ++j)
        choose(DESPERADO0 + (i * MAX_OPPONENTS + o - 1) * HAND_SLOTS + j);
  }
}

void Game::thefts() {
  if (f_.ranches[f_.player].terrain[f_.effect_cell] == CORNFIELD) return;
  for (int o = 1; o < f_.n; ++o) {
    const Ranch& victim = f_.ranches[(f_.player + o) % f_.n];
    if (!victim.cow_cells) continue;
    const Cells open = victim.cow_cells & ~victim.protected_cells();
    for (Cells b = open; b; b &= b - 1) choose(THIEF0 + (o - 1) * NUM_CELLS + __builtin_ctzll(b));
  }
}

void Game::bonus_placements() {
  const Ranch& r = f_.ranches[f_.player];
  for (int t = 0; t < 2; ++t) {
    if (!f_.bonus_tiles[t]) continue;
    for (int face = 0; face < 2; ++face) {
      const Cells bits = r.single_bits(tables_->kinds[tables_->bonus_kind(t, face)].terrain);
      for (Cells b = bits; b; b &= b - 1)
        choose(BONUS0 + (t * 2 + face) * NUM_CELLS + __builtin_ctzll(b));
    }
  }
}

// ------------------------------------------------------------------ scores

Score Game::running_score(int player) const {
  if (is_over()) return f_.final_scores[player];
  return score_ranch(f_.ranches[player], *tables_, f_.scenario, true);
}

void Game::running_totals(int* totals, const Game& before, const int* before_totals) const {
  for (int p = 0; p < f_.n; ++p)
    totals[p] = !is_over() && f_.ranches[p].changes == before.f_.ranches[p].changes
                    ? before_totals[p]
                    : running_score(p).total();
}

std::vector<int> Game::winners() const {
  std::vector<int> out;
  auto key = [this](int p) {
    const Score s = running_score(p);
    return std::array<int, 3>{s.total(), s.largest_territory, s.cows};
  };
  std::array<int, 3> best{-1, -1, -1};
  for (int p = 0; p < f_.n; ++p) best = std::max(best, key(p));
  for (int p = 0; p < f_.n; ++p)
    if (key(p) == best) out.push_back(p);
  return out;
}

}  // namespace moonriver
