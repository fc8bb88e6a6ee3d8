// A Game's byte state (pickling), format 2 (docs/core.md):
//
//   magic (u32 0x4d524331) | format (u32 2) | FNV-1a 64 of the payload (u64) | payload
//   payload: sizeof(Fixed) (u32) | Fixed | box, pile, removed, discarded, history
//            (each: a u32 count, then the items: int16, history int32), little-endian.
//
// Reading checks the checksum (one damaged byte is always caught), then every field against
// the tables and the variant, and the state as a whole (every plot and token in exactly one
// place, no cell named twice, a decision unless the game is over), so bytes crafted with a
// valid checksum still cannot make the rules read or write out of bounds or stall: each
// refusal is a std::invalid_argument naming the field. Writing copies Fixed as bytes: it has
// no gaps of stray memory (game.h), so the same game gives the same bytes in any process.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "game.h"

namespace moonriver {

namespace {

constexpr std::uint32_t MAGIC = 0x4d524331;
constexpr std::size_t HEADER = 16;  // magic, format, checksum
constexpr int MAX_RESERVE = 4;      // the largest board reserve (engine/data.py)
constexpr int NUM_BOARDS = 5;       // the observation's board one-hot width

std::uint64_t fnv1a(const char* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ULL;
  }
  return h;
}

[[noreturn]] void refuse(const char* what) {
  throw std::invalid_argument(std::string("moonriver core: state refused: ") + what);
}

// Refuse unless ``ok``: ``field`` is a printf format taking up to two ints (the indices).
void need(bool ok, const char* field, const char* rule, int i = 0, int j = 0) {
  if (ok) return;
  char name[96];
  std::snprintf(name, sizeof name, field, i, j);
  throw std::invalid_argument(std::string("moonriver core: state refused: field ") + name +
                              " must be " + rule);
}

bool within(int v, int lo, int hi) { return v >= lo && v <= hi; }
// A bool's byte read as a byte (a corrupt value other than 0 or 1 is never loaded as bool).
bool is_bool(const bool& b) {
  unsigned char byte;
  std::memcpy(&byte, &b, 1);
  return byte <= 1;
}
bool is_plot(const Tables& t, int id) { return within(id, 0, t.num_plots() - 1); }
bool is_token(const Tables& t, int id) { return within(id, 0, t.num_partners() - 1); }
bool is_cell(int cell) { return within(cell, 0, NUM_CELLS - 1); }

template <typename T>
void put_vec(std::string& s, const std::vector<T>& v) {
  const std::uint32_t n = static_cast<std::uint32_t>(v.size());
  s.append(reinterpret_cast<const char*>(&n), sizeof n);
  if (n) s.append(reinterpret_cast<const char*>(v.data()), n * sizeof(T));
}

template <typename T>
void get_vec(const std::string& s, std::size_t& at, std::vector<T>& v, const char* field) {
  std::uint32_t n;
  need(at + sizeof n <= s.size(), field, "present (the state is truncated)");
  std::memcpy(&n, s.data() + at, sizeof n);
  at += sizeof n;
  need(std::size_t{n} * sizeof(T) <= s.size() - at, field, "within the state's length");
  v.resize(n);
  if (n) std::memcpy(v.data(), s.data() + at, n * sizeof(T));
  at += n * sizeof(T);
}

// One cell's own fields (those the rules set; the rest is derived and checked by rebuilding).
void check_cell(const Ranch& r, int p, int c, Cells usable, bool two_player, const Tables& t) {
  const int plot = r.plot[c];
  if (plot == -1) {
    need(r.kind[c] == -1 && r.terrain[c] == -1, "ranches[%d].kind[%d]", "-1 on an empty cell", p,
         c);
    need(r.cows[c] == 0, "ranches[%d].cows[%d]", "0 on an empty cell", p, c);
    need(r.partner[c] == -1 && r.face[c] == -1, "ranches[%d].partner[%d]", "-1 on an empty cell", p,
         c);
    return;
  }
  need(usable >> c & 1, "ranches[%d].plot[%d]", "-1 off the ranch's rows and on the homestead", p,
       c);
  if (plot >= 0) {
    need(is_plot(t, plot), "ranches[%d].plot[%d]", "a plot id of the tables, or -1", p, c);
    need(r.kind[c] == t.plot_kind[plot], "ranches[%d].kind[%d]", "the kind of its plot", p, c);
  } else {
    need(two_player && (plot == -2 || plot == -3), "ranches[%d].plot[%d]",
         "a plot id, -1, or a 2-player bonus tile (-2, -3)", p, c);
    const int tile = -2 - plot;
    need(r.kind[c] == t.bonus_kind(tile, 0) || r.kind[c] == t.bonus_kind(tile, 1),
         "ranches[%d].kind[%d]", "a face of its bonus tile", p, c);
  }
  need(r.terrain[c] == t.kinds[r.kind[c]].terrain, "ranches[%d].terrain[%d]",
       "the terrain of its kind", p, c);
  need(within(r.cows[c], 0, NUM_COWS), "ranches[%d].cows[%d]", "0..32", p, c);
  if (r.partner[c] == -1)
    need(r.face[c] == -1, "ranches[%d].face[%d]", "-1 without a partner", p, c);
  else
    need(is_token(t, r.partner[c]) && within(r.face[c], 0, 1), "ranches[%d].partner[%d]",
         "a partner token of the tables with face 0 or 1", p, c);
}

// The derived fields (territories, bitsets, resource counts) against a ranch rebuilt from the
// cells' own fields.
void check_derived(const Ranch& r, int p, const Tables& t) {
  Ranch want(r.rows, r.capacity, r.bridge_cells);
  for (int c = 0; c < NUM_CELLS; ++c) {
    if (r.plot[c] == -1) continue;
    const KindRow& k = t.kinds[r.kind[c]];
    want.place(c, r.plot[c], r.kind[c], k.terrain, k.nugget, k.beaver, k.corn);
  }
  for (int c = 0; c < NUM_CELLS; ++c) {
    if (r.cows[c]) want.add_cows(c, r.cows[c]);
    if (r.partner[c] >= 0) want.set_partner(c, r.partner[c], r.face[c]);
  }
  const char* rule = "what its cells make";
  need(r.label == want.label, "ranches[%d].label", rule, p);
  need(r.size == want.size, "ranches[%d].size", rule, p);
  need(r.empty_cells == want.empty_cells, "ranches[%d].empty_cells", rule, p);
  need(r.cow_cells == want.cow_cells, "ranches[%d].cow_cells", rule, p);
  need(r.partner_cells == want.partner_cells, "ranches[%d].partner_cells", rule, p);
  need(r.free == want.free, "ranches[%d].free", rule, p);
  need(r.bridged == want.bridged, "ranches[%d].bridged", rule, p);
  need(r.first_adj == want.first_adj, "ranches[%d].first_adj", rule, p);
  need(r.second_adj == want.second_adj, "ranches[%d].second_adj", rule, p);
  need(r.adj_cells == want.adj_cells, "ranches[%d].adj_cells", rule, p);
  need(r.terrain_cells == want.terrain_cells, "ranches[%d].terrain_cells", rule, p);
  need(r.nuggets == want.nuggets && r.beavers == want.beavers && r.corn == want.corn,
       "ranches[%d].nuggets", rule, p);
  need(r.reach == want.reach, "ranches[%d].reach", rule, p);
}

// One ranch; returns its cows.
int check_ranch(const Ranch& r, int p, int rows, bool two_player, const Tables& t) {
  need(r.rows == rows, "ranches[%d].rows", "10 with 2 players, else 5", p);
  need(within(r.capacity, 1, MAX_RESERVE), "ranches[%d].capacity", "1..4", p);
  need(within(r.hand_size, 0, HAND_SLOTS), "ranches[%d].hand_size", "0..5", p);
  for (int i = 0; i < r.hand_size; ++i)
    need(is_plot(t, r.hand[i]), "ranches[%d].hand[%d]", "a plot id of the tables", p, i);
  need(is_bool(r.bonus_taken), "ranches[%d].bonus_taken", "a bool", p);
  const Cells usable = usable_cells(rows);
  need((r.bridge_cells & ~usable) == 0, "ranches[%d].bridge_cells", "usable cells", p);
  int cows = 0;
  for (int c = 0; c < NUM_CELLS; ++c) {
    check_cell(r, p, c, usable, two_player, t);
    cows += r.cows[c];
  }
  check_derived(r, p, t);
  return cows;
}

// Columns: each position -1 or a plot, its owner -1 or a player.
void check_column(const std::array<std::int16_t, COLUMN_SIZE>& plots,
                  const std::array<std::int8_t, COLUMN_SIZE>& owners, const Tables& t, int n,
                  const char* plot_field, const char* owner_field) {
  for (int i = 0; i < COLUMN_SIZE; ++i) {
    need(plots[i] == -1 || is_plot(t, plots[i]), plot_field, "-1 or a plot id of the tables", i);
    need(within(owners[i], -1, n - 1), owner_field, "-1 or a player", i);
  }
}

// Fields of any phase: ranges against the tables and the variant.
void check_fields(const Fixed& f, const Tables& t) {
  need(within(f.n, 2, MAX_PLAYERS), "n", "2..4 (the player count)");
  need(f.rows == (f.n == 2 ? 10 : 5), "rows", "10 with 2 players, else 5");
  need(within(f.scenario, 0, 4), "scenario", "0 (base game) or a Legends scenario 1..4");
  const std::pair<const bool*, const char*> flags[] = {
      {&f.auto_forced, "auto_forced"},
      {&f.bonus_tiles[0], "bonus_tiles[0]"},
      {&f.bonus_tiles[1], "bonus_tiles[1]"},
      {&f.has_active, "has_active"},
      {&f.has_pending, "has_pending"},
      {&f.last_round, "last_round"},
      {&f.emptying, "emptying"},
      {&f.forced, "forced"},
      {&f.recruited_this_round, "recruited_this_round"}};
  for (const auto& [flag, name] : flags) need(is_bool(*flag), name, "a bool");
  need(f.n == 2 || (!f.bonus_tiles[0] && !f.bonus_tiles[1]), "bonus_tiles",
       "false unless 2 players play");
  int cows = 0;
  for (int p = 0; p < f.n; ++p) {
    cows += check_ranch(f.ranches[p], p, f.rows, f.n == 2, t);
    need(within(f.board_ids[p], -1, NUM_BOARDS - 1), "board_ids[%d]", "-1..4", p);
  }
  need(within(f.supply, 0, NUM_COWS) && f.supply + cows == NUM_COWS, "supply",
       "the 32 cows less those on the ranches");
  for (int s = 0; s < SALOON_SLOTS; ++s)
    need(f.saloon[s] == -1 || is_token(t, f.saloon[s]), "saloon[%d]",
         "-1 or a partner token of the tables", s);
  need(within(f.setup_len, 1, 4), "setup_len", "1..4");
  need(within(f.setup_index, 0, f.setup_len), "setup_index", "0..setup_len");
  for (int i = 0; i < 4; ++i)
    need(within(f.setup_order[i], 0, f.n - 1), "setup_order[%d]", "a player", i);
  check_column(f.active, f.active_owner, t, f.n, "active[%d]", "active_owner[%d]");
  check_column(f.pending, f.pending_owner, t, f.n, "pending[%d]", "pending_owner[%d]");
  for (int i = 0; i < COLUMN_SIZE; ++i)
    need(f.pending_owner[i] < 0 || f.pending[i] >= 0, "pending[%d]", "a plot once chosen", i);
  need(f.round >= 0, "round", ">= 0");
  need(within(f.order_len, 0, COLUMN_SIZE), "order_len", "0..4");
  need(within(f.turn_index, 0, COLUMN_SIZE), "turn_index", "0..4");
  for (int i = 0; i < COLUMN_SIZE; ++i)
    need(within(f.order[i], 0, COLUMN_SIZE - 1), "order[%d]", "a column position 0..3", i);
  need(within(f.empty_len, 0, f.n), "empty_len", "0..players");
  for (int i = 0; i < MAX_PLAYERS; ++i)
    need(within(f.empty_order[i], 0, f.n - 1), "empty_order[%d]", "a player", i);
  need(within(f.builds_done, 0, 2), "builds_done", "0..2");
  need(within(f.builds_allowed, 0, 2), "builds_allowed", "0..2");
  need(within(f.skulls_len, 0, 2), "skulls_len", "0..2");
  for (int i = 0; i < 4; ++i) need(is_cell(f.skulls[i]), "skulls[%d]", "a cell 0..49", i);
  for (int i = 0; i < MAX_CIRCLES; ++i)
    need(f.circles[i] == -1 || is_cell(f.circles[i]), "circles[%d]", "-1 or a cell 0..49", i);
  need(f.effect_cell == -1 || is_cell(f.effect_cell), "effect_cell", "-1 or a cell 0..49");
  need(within(f.cowboy_moves_left, 0, COWBOY_MOVES), "cowboy_moves_left", "0..3");
  need(within(f.choices_len, 0, MAX_CHOICES), "choices_len", "0..256");
  for (int i = 0; i < f.choices_len; ++i)
    need(within(f.choices[i], 0, NUM_ACTIONS - 1), "choices[%d]", "an action id 0..2709", i);
  need(within(f.player, 0, f.n - 1), "player", "a player");
  need(within(f.phase, SETUP, GAME_OVER), "phase", "0..10");
}

int count_owned(const std::array<std::int8_t, COLUMN_SIZE>& owners) {
  int k = 0;
  for (std::int8_t o : owners) k += o >= 0;
  return k;
}

// The next column: drawn (each position a plot) from the set-up's end until the last round,
// none (every position -1, no owner) in the set-up and the last round; a Select then always
// has a plot to take.
void check_pending(const Fixed& f) {
  const bool drawn = f.phase != SETUP && !f.last_round;
  need(f.has_pending == drawn, "has_pending",
       "true from the set-up's end until the last round, else false");
  for (int i = 0; i < COLUMN_SIZE; ++i) {
    if (drawn)
      need(f.pending[i] >= 0, "pending[%d]", "a plot until the last round", i);
    else
      need(f.pending[i] == -1 && f.pending_owner[i] == -1, "pending[%d]",
           "-1 without an owner in the set-up and the last round", i);
  }
}

// The turn structure the phase's next steps read (who plays, whose plots come next).
void check_turn(const Fixed& f) {
  const int ph = f.phase;
  if (ph == GAME_OVER) return;
  check_pending(f);
  if (ph == SETUP) {
    need(f.setup_index < f.setup_len, "setup_index", "below setup_len during the setup");
    need(f.player == f.setup_order[f.setup_index], "player", "the setup's next player");
    return;
  }
  if (f.emptying) {
    need(f.last_round && ph != SELECT && ph != DISCARD, "emptying",
         "set only in the last round, outside Select and Discard");
    need(f.turn_index < f.empty_len, "turn_index", "below empty_len while emptying");
    need(f.player == f.empty_order[f.turn_index], "player", "the emptying's current player");
    return;
  }
  need(within(f.order_len, 1, COLUMN_SIZE), "order_len", "1..4 during a round");
  need(f.turn_index < f.order_len, "turn_index", "below order_len during a round");
  for (int i = 0; i < f.order_len; ++i) {
    need(f.active_owner[f.order[i]] >= 0, "order[%d]", "a position with an owner", i);
    for (int j = 0; j < i; ++j)
      need(f.order[j] != f.order[i], "order[%d]", "a position not taken earlier in the round", i);
    if (i > f.turn_index)
      need(f.active[f.order[i]] >= 0, "active[%d]", "a plot until its owner's turn", f.order[i]);
  }
  need(f.player == f.active_owner[f.order[f.turn_index]], "player", "the turn's owner");
  if (!f.last_round)
    need(count_owned(f.pending_owner) == f.turn_index, "pending_owner",
         "one chosen position per earlier turn of the round");
  if (ph == DROUGHT) need(f.skulls_len >= 1, "skulls_len", ">= 1 in a drought");
  if (ph == COWBOY_PHASE) need(f.cowboy_moves_left >= 1, "cowboy_moves_left", ">= 1");
  if (ph == THIEF)
    need(f.effect_cell >= 0 && f.ranches[f.player].terrain[f.effect_cell] >= 0, "effect_cell",
         "a built cell of the thief's ranch");
  if (ph == BONUS) need(f.n == 2, "phase", "Bonus only with 2 players");
}

// Whether ``cell`` of ``r`` holds a plot whose kind has the symbol ``has`` (circle or skull).
bool built_with(const Ranch& r, int cell, const Tables& t, bool KindRow::* has) {
  return r.plot[cell] != -1 && t.kinds[r.kind[cell]].*has;
}

// The turn's cells: circles (a partner may be recruited there) are plots the player just
// built with the circle symbol, without a partner; skulls (droughts to come) plots with the
// skull symbol; no cell named twice.
void check_turn_cells(const Fixed& f, const Tables& t) {
  if (f.phase == GAME_OVER) return;
  const Ranch& mine = f.ranches[f.player];
  for (int i = 0; i < MAX_CIRCLES; ++i) {
    const int c = f.circles[i];
    need(c == -1 || (built_with(mine, c, t, &KindRow::circle) && mine.partner[c] == -1),
         "circles[%d]",
         "-1 or a built cell without a partner of the player's ranch, its plot with the circle "
         "symbol",
         i);
  }
  need(f.circles[0] == -1 || f.circles[1] != f.circles[0], "circles[1]",
       "another cell than circles[0]");
  for (int i = 0; i < f.skulls_len; ++i) {
    need(built_with(mine, f.skulls[i], t, &KindRow::skull), "skulls[%d]",
         "a built cell of the player's ranch, its plot with the skull symbol", i);
    for (int j = 0; j < i; ++j)
      need(f.skulls[j] != f.skulls[i], "skulls[%d]", "another cell than the earlier skulls", i);
  }
  for (int i = 0; i < f.empty_len; ++i)
    for (int j = 0; j < i; ++j)
      need(f.empty_order[j] != f.empty_order[i], "empty_order[%d]",
           "a player not named earlier in the order", i);
}

constexpr const char* PLOT_PLACES =
    "in exactly one place (the box, a column, a hand, a ranch, the removed or the discarded "
    "plots)";
constexpr const char* TOKEN_PLACES = "in exactly one place (the pile, the saloon or a ranch)";

// Every plot (box, columns, hands, ranches, removed, discarded) and token (pile, saloon,
// ranches) is in exactly one place: none lost, none doubled.
void check_pieces(const Fixed& f, const Tables& t,
                  std::initializer_list<const std::vector<std::int16_t>*> plot_lists,
                  const std::vector<std::int16_t>& pile) {
  std::vector<int> seen(static_cast<std::size_t>(t.num_plots()), 0);
  std::vector<int> held(static_cast<std::size_t>(t.num_partners()), 0);
  auto plot = [&](int id) {
    if (id >= 0) need(++seen[id] == 1, "plot %d", PLOT_PLACES, id);
  };
  auto token = [&](int id) {
    if (id >= 0) need(++held[id] == 1, "token %d", TOKEN_PLACES, id);
  };
  for (const auto* list : plot_lists)
    for (std::int16_t id : *list) plot(id);
  for (int i = 0; i < COLUMN_SIZE; ++i) {
    plot(f.active[i]);
    plot(f.pending[i]);
  }
  for (int p = 0; p < f.n; ++p) {
    const Ranch& r = f.ranches[p];
    for (int i = 0; i < r.hand_size; ++i) plot(r.hand[i]);
    for (int c = 0; c < NUM_CELLS; ++c) {
      plot(r.plot[c]);
      token(r.partner[c]);
    }
  }
  for (std::int16_t id : pile) token(id);
  for (int s = 0; s < SALOON_SLOTS; ++s) token(f.saloon[s]);
  for (int id = 0; id < t.num_plots(); ++id) need(seen[id] == 1, "plot %d", PLOT_PLACES, id);
  for (int id = 0; id < t.num_partners(); ++id) need(held[id] == 1, "token %d", TOKEN_PLACES, id);
}

// The history's events (the Python side turns them into records).
void check_history(const std::vector<std::int32_t>& h, int n, const Tables& t) {
  const int size = static_cast<int>(h.size());
  int i = 0;
  auto item = [&](int k) {
    need(i + k < size, "history[%d]", "a whole event", i);
    return h[i + k];
  };
  while (i < size) {
    const int ev = h[i];
    if (ev == EV_DECISION) {
      need(
          within(item(1), 0, n - 1) && within(item(2), 0, NUM_ACTIONS - 1) && within(item(3), 0, 1),
          "history[%d]", "a decision (player, action id, automatic 0/1)", i);
      i += 4;
    } else if (ev == EV_COLUMN) {
      for (int k = 1; k <= COLUMN_SIZE; ++k)
        need(is_plot(t, item(k)), "history[%d]", "a column of plot ids", i);
      i += 1 + COLUMN_SIZE;
    } else if (ev == EV_SALOON) {
      const int m = item(1);
      need(within(m, 1, SALOON_SLOTS), "history[%d]", "a refill of 1..5 slots", i);
      for (int k = 0; k < m; ++k)
        need(within(item(2 + 2 * k), 0, SALOON_SLOTS - 1) && is_token(t, item(3 + 2 * k)),
             "history[%d]", "a refill of (slot, token) pairs", i);
      i += 2 + 2 * m;
    } else {
      need(ev == EV_BONUS_LOST && within(item(1), 0, n - 1) && within(item(2), 0, 1), "history[%d]",
           "an event 0..3", i);
      i += 3;
    }
  }
}

void check_items(const std::vector<std::int16_t>& v, bool (*ok)(const Tables&, int),
                 const Tables& t, const char* field, const char* rule) {
  for (std::size_t i = 0; i < v.size(); ++i) need(ok(t, v[i]), field, rule, static_cast<int>(i));
}

// ``f`` with its gaps zero and the seats past its player count at their defaults: what a
// game of this build holds there (a state written by an earlier build held stray bytes).
void canonical(Fixed& f) {
  const int n = within(f.n, 0, MAX_PLAYERS) ? f.n : MAX_PLAYERS;  // n itself is checked later
  for (int p = n; p < MAX_PLAYERS; ++p) f.ranches[p] = Ranch();
  for (Ranch& r : f.ranches) {
    r.pad_size = {};
    r.pad_cells = {};
    r.pad_bonus = {};
    r.pad_end = {};
  }
  f.pad_flags = {};
  f.pad_columns = {};
  f.pad_order = {};
  f.pad_emptying = {};
  f.pad_forced = {};
  f.pad_circles = {};
  f.pad_end = {};
}

bool same_score(const Score& a, const Score& b) {
  return a.territories == b.territories && a.resources == b.resources && a.partners == b.partners &&
         a.scenario == b.scenario && a.largest_territory == b.largest_territory && a.cows == b.cows;
}

}  // namespace

void Game::check_state() const {
  const Tables& t = *tables_;
  check_fields(f_, t);
  check_turn(f_);
  need(f_.phase != SETUP || box_.size() >= COLUMN_SIZE, "box",
       "at least a column (4 plots) in the set-up: the next column is drawn at its end");
  check_turn_cells(f_, t);
  check_items(box_, is_plot, t, "box[%d]", "a plot id of the tables");
  check_items(pile_, is_token, t, "pile[%d]", "a partner token of the tables");
  check_items(removed_, is_plot, t, "removed[%d]", "a plot id of the tables");
  check_items(discarded_, is_plot, t, "discarded[%d]", "a plot id of the tables");
  check_pieces(f_, t, {&box_, &removed_, &discarded_}, pile_);
  check_history(history_, f_.n, t);
  check_choices();
  // A game that is not over waits on a decision (every search and playout draws among them).
  need(is_over() || num_legal() > 0, "phase", "game over (10) when no decision is legal");
}

// The legal ids a non-build phase holds are those its state gives; a finished game holds its
// final scores.
void Game::check_choices() const {
  if (f_.phase == GAME_OVER) {
    for (int p = 0; p < f_.n; ++p)
      need(same_score(f_.final_scores[p], score_ranch(f_.ranches[p], *tables_, f_.scenario, false)),
           "final_scores[%d]", "the ranch's final score", p);
    return;
  }
  if (f_.phase == BUILD) return;  // build ids are computed from the ranch at each call
  Game fresh(*this);
  fresh.list_choices();
  need(fresh.f_.choices_len == f_.choices_len &&
           std::equal(f_.choices.begin(), f_.choices.begin() + f_.choices_len,
                      fresh.f_.choices.begin()),
       "choices", "the legal ids of the phase's state");
}

std::string Game::serialize() const {
  static_assert(std::is_trivially_copyable<Fixed>::value, "Fixed is copied as bytes");
  std::string s(HEADER, '\0');
  const std::uint32_t fixed_size = sizeof(Fixed);
  s.append(reinterpret_cast<const char*>(&fixed_size), sizeof fixed_size);
  s.append(reinterpret_cast<const char*>(&f_), sizeof f_);
  put_vec(s, box_);
  put_vec(s, pile_);
  put_vec(s, removed_);
  put_vec(s, discarded_);
  put_vec(s, history_);
  const std::uint32_t head[2] = {MAGIC, STATE_FORMAT};
  const std::uint64_t sum = fnv1a(s.data() + HEADER, s.size() - HEADER);
  std::memcpy(&s[0], head, sizeof head);
  std::memcpy(&s[sizeof head], &sum, sizeof sum);
  return s;
}

Game Game::deserialize(std::shared_ptr<const Tables> tables, const std::string& s) {
  if (s.size() < HEADER) refuse("truncated (shorter than its header)");
  std::uint32_t head[2];
  std::uint64_t sum;
  std::memcpy(head, s.data(), sizeof head);
  std::memcpy(&sum, s.data() + sizeof head, sizeof sum);
  if (head[0] != MAGIC) refuse("not a core game state (bad magic)");
  if (head[1] != STATE_FORMAT) {
    if (head[1] > STATE_FORMAT && head[1] < 256) refuse("written by a newer core (format > 2)");
    refuse(
        "written by an older core (format 1, without a checksum); this core reads format 2: "
        "make the game again from its config and seed, or replay its record");
  }
  if (fnv1a(s.data() + HEADER, s.size() - HEADER) != sum)
    refuse("checksum mismatch (the bytes were damaged)");
  std::size_t at = HEADER;
  std::uint32_t fixed_size;
  need(s.size() >= at + sizeof fixed_size + sizeof(Fixed), "Fixed", "whole (truncated state)");
  std::memcpy(&fixed_size, s.data() + at, sizeof fixed_size);
  need(fixed_size == sizeof(Fixed), "sizeof(Fixed)", "this build's (a state of another build)");
  at += sizeof fixed_size;
  static_assert(HEADER + sizeof(std::uint32_t) == STATE_FIXED_AT, "the documented layout");
  Game g;
  g.tables_ = std::move(tables);
  std::memcpy(&g.f_, s.data() + at, sizeof(Fixed));
  at += sizeof(Fixed);
  canonical(g.f_);
  get_vec(s, at, g.box_, "box");
  get_vec(s, at, g.pile_, "pile");
  get_vec(s, at, g.removed_, "removed");
  get_vec(s, at, g.discarded_, "discarded");
  get_vec(s, at, g.history_, "history");
  need(at == s.size(), "history", "the state's last field (trailing bytes)");
  g.check_state();
  return g;
}

}  // namespace moonriver
