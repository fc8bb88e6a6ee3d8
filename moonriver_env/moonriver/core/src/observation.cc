#include "observation.h"

#include <cstring>

#include "per_thread.h"

namespace moonriver {
namespace {

// Where the observation goes: floats (each value scaled) or compact bytes (raw integers).
// ``touched`` (sparse observations): a bit per index given a value that is not zero, on
// buffers kept zero between observations (cleared entry by entry as they are read), so that
// nothing is zero-filled.
struct FloatSink {
  using Value = float;
  static constexpr int SIZE = OBSERVATION_SIZE;
  float* out;
  std::uint64_t* touched = nullptr;
  void clear() {
    if (!touched) std::memset(out, 0, sizeof(float) * SIZE);
  }
  void put(int i, float x) {
    out[i] = x;
    if (touched && x != 0.0f) touched[i >> 6] |= std::uint64_t{1} << (i & 63);
  }
  void set(int i, int v) { put(i, static_cast<float>(v)); }
  void scaled(int i, int v, double scale) { put(i, static_cast<float>(v / scale)); }
  void score(int i, int total) { scaled(i, total, SCORE_SCALE); }
  void fraction(int i, int num, int den, int) {
    put(i, static_cast<float>(static_cast<double>(num) / den));
  }
};

struct CompactSink {
  using Value = std::uint8_t;
  static constexpr int SIZE = COMPACT_SIZE;
  std::uint8_t* out;
  void clear() { std::memset(out, 0, SIZE); }
  void set(int i, int v) { out[i] = static_cast<std::uint8_t>(v); }  // -1: 255
  void scaled(int i, int v, double) { set(i, v); }
  void score(int i, int total) {
    set(i, total & 0xFF);
    set(O_SCORES_HIGH + i - O_SCORES, (total >> 8) & 0xFF);
  }
  void fraction(int i, int num, int den, int den_slot) {
    set(i, num);
    set(den_slot, den);
  }
};

template <typename Sink>
void plot_features(const Tables& t, int plot, Sink& s, int row) {
  if (plot < 0) return;  // no plot: zeros
  const KindRow& k = t.of_plot(plot);
  s.set(row, 1);
  s.set(row + 1 + k.terrain, 1);
  s.set(row + 7, k.nugget);
  s.set(row + 8, k.beaver);
  s.set(row + 9, k.corn);
  s.set(row + 10, k.cows);
  s.set(row + 11, k.skull ? 1 : 0);
  s.set(row + 12, k.circle ? 1 : 0);
  s.scaled(row + 13, k.number, NUMBER_SCALE);
}

template <typename Sink>
void ranch_planes(const Tables& t, const Ranch& r, Sink& s, int base) {
  const Cells usable = usable_cells(r.rows);
  auto at = [base](int channel, int cell) { return base + channel * NUM_CELLS + cell; };
  s.set(at(CH_HOMESTEAD, HOMESTEAD), 1);
  // Only the set cells are visited (the buffer is zero-filled): bridges, free cells, then the
  // built ones (every placed plot is in one terrain's cell set).
  for (Cells b = r.bridge_cells; b; b &= b - 1) s.set(at(CH_BRIDGE, __builtin_ctzll(b)), 1);
  Cells built = 0;
  for (int t = 0; t < NUM_TERRAINS; ++t) built |= r.terrain_cells[t];
  for (Cells b = usable & ~built; b; b &= b - 1) s.set(at(CH_FREE, __builtin_ctzll(b)), 1);
  for (Cells b = built; b; b &= b - 1) {
    const int c = __builtin_ctzll(b);
    const KindRow& k = t.kinds[r.kind[c]];
    s.set(at(CH_FREE, c), (usable >> c & 1) ? 0 : -1);
    s.set(at(CH_TERRAIN + k.terrain, c), 1);
    s.set(at(CH_NUGGET, c), k.nugget);
    s.set(at(CH_BEAVER, c), k.beaver);
    s.set(at(CH_CORN, c), k.corn);
    s.set(at(CH_SKULL, c), k.skull ? 1 : 0);
    s.set(at(CH_CIRCLE, c), k.circle ? 1 : 0);
    s.set(at(CH_COWS, c), r.cows[c]);
  }
  for (Cells p = r.partner_cells; p; p &= p - 1) {
    const int c = __builtin_ctzll(p);
    const int kind = r.face[c] == COWBOY_FACE ? COWBOY : t.specialist[r.partner[c]];
    s.set(at(CH_PARTNER + kind, c), 1);
  }
}

template <typename Sink>
void observe_into(const Game& game, int viewer, Sink s, const int* totals) {
  s.clear();
  const Fixed& f = game.state();
  const Tables& t = game.tables();
  const int n = f.n;
  auto rel = [&](int p) { return ((p - viewer) % n + n) % n; };
  for (int i = 0; i < n; ++i) {
    const int p = (viewer + i) % n;
    const Ranch& r = f.ranches[p];
    ranch_planes(t, r, s, O_RANCHES + i * RANCH_SIZE);
    for (int slot = 0; slot < r.hand_size && slot < HAND_SLOTS; ++slot)
      plot_features(t, r.hand[slot], s, O_RESERVES + (i * HAND_SLOTS + slot) * NUM_PLOT_FEATURES);
    s.scaled(O_RESERVE_SIZE + i, r.capacity, 4.0);
    if (f.board_ids[p] >= 0) s.set(O_BOARDS + 5 * i + f.board_ids[p], 1);  // -1: no place
    s.score(O_SCORES + i, totals ? totals[p] : game.running_score(p).total());
  }
  const bool columns[2] = {f.has_active, f.has_pending};
  const std::array<std::int16_t, COLUMN_SIZE>* plots[2] = {&f.active, &f.pending};
  const std::array<std::int8_t, COLUMN_SIZE>* owners[2] = {&f.active_owner, &f.pending_owner};
  for (int c = 0; c < 2; ++c) {
    if (!columns[c]) continue;
    for (int pos = 0; pos < COLUMN_SIZE; ++pos) {
      plot_features(t, (*plots[c])[pos], s,
                    O_COLUMNS + (c * COLUMN_SIZE + pos) * NUM_PLOT_FEATURES);
      const int who = (*owners[c])[pos];
      if (who >= 0) s.set(O_COLUMN_OWNERS + (c * COLUMN_SIZE + pos) * MAX_PLAYERS + rel(who), 1);
    }
  }
  for (int i = 0; i < f.order_len; ++i) {
    const int pos = f.order[i], who = f.active_owner[pos];
    if (who >= 0) s.set(O_TURN_ORDER + rel(who) * COLUMN_SIZE + pos, 1);
  }
  s.set(O_PHASE + f.phase, 1);
  if (f.phase != GAME_OVER) {
    const int a = rel(f.player);
    s.set(O_ACTING + a, 1);
    const int pending = O_RANCHES + a * RANCH_SIZE + CH_PENDING * NUM_CELLS;
    const int cells[4] = {f.circles[0], f.circles[1], f.effect_cell,
                          f.phase == DROUGHT ? f.skulls[0] : -1};
    for (int cell : cells)
      if (cell >= 0) s.set(pending + cell, 1);
  }
  int left[NUM_SPECIALISTS] = {};
  for (int slot = 0; slot < SALOON_SLOTS; ++slot)
    if (f.saloon[slot] >= 0)
      s.set(O_SALOON + slot * NUM_SPECIALISTS + t.specialist[f.saloon[slot]] - 1, 1);
  for (std::int16_t token : game.pile()) left[t.specialist[token] - 1] += 1;
  for (int k = 0; k < NUM_SPECIALISTS; ++k) s.scaled(O_PILE + k, left[k], 5.0);
  s.set(O_CONTEXT + 0, f.forced ? 1 : 0);
  s.set(O_CONTEXT + 1, f.emptying ? 1 : 0);
  s.set(O_CONTEXT + 2, f.last_round ? 1 : 0);
  s.scaled(O_CONTEXT + 3, f.builds_done, 2.0);
  s.scaled(O_CONTEXT + 4, f.builds_allowed, 2.0);
  s.scaled(O_CONTEXT + 5, f.cowboy_moves_left, 3.0);
  s.set(O_CONTEXT + 6, f.circles[0] >= 0 ? 1 : 0);
  s.set(O_CONTEXT + 7, f.circles[1] >= 0 ? 1 : 0);
  s.scaled(O_CONTEXT + 8, f.bonus_tiles[0] + f.bonus_tiles[1], 2.0);
  s.scaled(O_GAME + 0, f.round, NUM_ROUNDS);
  s.fraction(O_GAME + 1, static_cast<int>(game.box().size()), t.num_plots(), O_NUM_PLOTS);
  s.fraction(O_GAME + 2, static_cast<int>(game.pile().size()), t.num_partners(), O_NUM_PARTNERS);
  s.scaled(O_GAME + 3, f.supply, NUM_COWS);
  s.set(O_PLAYERS_ONEHOT + n - 2, 1);
  s.set(O_MODE_ONEHOT + f.scenario, 1);
}

// observe_sparse's buffers, zero between calls: the values and a bit per index written.
struct Flagged {
  static constexpr int WORDS = (OBSERVATION_SIZE + 63) / 64;
  float values[OBSERVATION_SIZE];
  std::uint64_t touched[WORDS];
};

}  // namespace

void observe(const Game& game, int viewer, float* out, const int* totals) {
  observe_into(game, viewer, FloatSink{out}, totals);
}

void observe_compact(const Game& game, int viewer, std::uint8_t* out, const int* totals) {
  observe_into(game, viewer, CompactSink{out}, totals);
}

void observe_sparse(const Game& game, int viewer, SparseObservation* out, const int* totals) {
  Flagged& buffers = per_thread<Flagged>();
  float* values = buffers.values;
  std::uint64_t* touched = buffers.touched;
  observe_into(game, viewer, FloatSink{values, touched}, totals);
  int count = 0;
  for (int w = 0; w < Flagged::WORDS; ++w) {  // the set bits, in index order
    for (std::uint64_t bits = touched[w]; bits; bits &= bits - 1) {
      const int i = w * 64 + __builtin_ctzll(bits);
      out->index[count] = i;
      out->value[count] = values[i];
      count += values[i] != 0.0f;  // a value written over with zero: dropped
      values[i] = 0.0f;
    }
    touched[w] = 0;
  }
  out->count = count;
}

int append_nonzeros(const float* x, int n, int offset, std::int32_t* index, float* value,
                    int count) {
  for (int i = 0; i < n; ++i) {  // written always, kept when not zero: no branch to mispredict
    index[count] = i + offset;
    value[count] = x[i];
    count += x[i] != 0.0f;
  }
  return count;
}

}  // namespace moonriver
