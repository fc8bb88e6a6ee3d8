#include "observation.h"

#include <cstring>

namespace moonriver {
namespace {

void plot_features(const Tables& t, int plot, float* row) {
  if (plot < 0) return;  // no plot: zeros
  const KindRow& k = t.of_plot(plot);
  row[0] = 1.0f;
  row[1 + k.terrain] = 1.0f;
  row[7] = static_cast<float>(k.nugget);
  row[8] = static_cast<float>(k.beaver);
  row[9] = static_cast<float>(k.corn);
  row[10] = static_cast<float>(k.cows);
  row[11] = k.skull ? 1.0f : 0.0f;
  row[12] = k.circle ? 1.0f : 0.0f;
  row[13] = static_cast<float>(k.number / NUMBER_SCALE);
}

void ranch_planes(const Tables& t, const Ranch& r, float* planes) {
  const Cells usable = usable_cells(r.rows);
  float* const plane[NUM_RANCH_CHANNELS] = {
      planes + 0 * NUM_CELLS,  planes + 1 * NUM_CELLS,  planes + 2 * NUM_CELLS,
      planes + 3 * NUM_CELLS,  planes + 4 * NUM_CELLS,  planes + 5 * NUM_CELLS,
      planes + 6 * NUM_CELLS,  planes + 7 * NUM_CELLS,  planes + 8 * NUM_CELLS,
      planes + 9 * NUM_CELLS,  planes + 10 * NUM_CELLS, planes + 11 * NUM_CELLS,
      planes + 12 * NUM_CELLS, planes + 13 * NUM_CELLS, planes + 14 * NUM_CELLS,
      planes + 15 * NUM_CELLS, planes + 16 * NUM_CELLS, planes + 17 * NUM_CELLS,
      planes + 18 * NUM_CELLS, planes + 19 * NUM_CELLS, planes + 20 * NUM_CELLS,
      planes + 21 * NUM_CELLS};
  plane[CH_HOMESTEAD][HOMESTEAD] = 1.0f;
  // Only the set cells are visited (the buffer is zero-filled): bridges, free cells, then the
  // built ones (every placed plot is in one terrain's cell set).
  for (Cells b = r.bridge_cells; b; b &= b - 1) plane[CH_BRIDGE][__builtin_ctzll(b)] = 1.0f;
  Cells built = 0;
  for (int t = 0; t < NUM_TERRAINS; ++t) built |= r.terrain_cells[t];
  for (Cells b = usable & ~built; b; b &= b - 1) plane[CH_FREE][__builtin_ctzll(b)] = 1.0f;
  for (Cells b = built; b; b &= b - 1) {
    const int c = __builtin_ctzll(b);
    const KindRow& k = t.kinds[r.kind[c]];
    plane[CH_FREE][c] = (usable >> c & 1) ? 0.0f : -1.0f;
    plane[CH_TERRAIN + k.terrain][c] = 1.0f;
    plane[CH_NUGGET][c] = static_cast<float>(k.nugget);
    plane[CH_BEAVER][c] = static_cast<float>(k.beaver);
    plane[CH_CORN][c] = static_cast<float>(k.corn);
    plane[CH_SKULL][c] = k.skull ? 1.0f : 0.0f;
    plane[CH_CIRCLE][c] = k.circle ? 1.0f : 0.0f;
    plane[CH_COWS][c] = static_cast<float>(r.cows[c]);
  }
  for (Cells p = r.partner_cells; p; p &= p - 1) {
    const int c = __builtin_ctzll(p);
    const int kind = r.face[c] == COWBOY_FACE ? COWBOY : t.specialist[r.partner[c]];
    plane[CH_PARTNER + kind][c] = 1.0f;
  }
}

}  // namespace

void observe(const Game& game, int viewer, float* out, const int* totals) {
  std::memset(out, 0, sizeof(float) * OBSERVATION_SIZE);
  const Fixed& f = game.state();
  const Tables& t = game.tables();
  const int n = f.n;
  auto rel = [&](int p) { return ((p - viewer) % n + n) % n; };
  for (int i = 0; i < n; ++i) {
    const int p = (viewer + i) % n;
    const Ranch& r = f.ranches[p];
    ranch_planes(t, r, out + O_RANCHES + i * RANCH_SIZE);
    for (int s = 0; s < r.hand_size && s < HAND_SLOTS; ++s)
      plot_features(t, r.hand[s], out + O_RESERVES + (i * HAND_SLOTS + s) * NUM_PLOT_FEATURES);
    out[O_RESERVE_SIZE + i] = static_cast<float>(r.capacity / 4.0);
    if (f.board_ids[p] >= 0) out[O_BOARDS + 5 * i + f.board_ids[p]] = 1.0f;  // -1: no place
    const int total = totals ? totals[p] : game.running_score(p).total();
    out[O_SCORES + i] = static_cast<float>(total / SCORE_SCALE);
  }
  const bool columns[2] = {f.has_active, f.has_pending};
  const std::array<std::int16_t, COLUMN_SIZE>* plots[2] = {&f.active, &f.pending};
  const std::array<std::int8_t, COLUMN_SIZE>* owners[2] = {&f.active_owner, &f.pending_owner};
  for (int c = 0; c < 2; ++c) {
    if (!columns[c]) continue;
    for (int pos = 0; pos < COLUMN_SIZE; ++pos) {
      plot_features(t, (*plots[c])[pos],
                    out + O_COLUMNS + (c * COLUMN_SIZE + pos) * NUM_PLOT_FEATURES);
      const int who = (*owners[c])[pos];
      if (who >= 0) out[O_COLUMN_OWNERS + (c * COLUMN_SIZE + pos) * MAX_PLAYERS + rel(who)] = 1.0f;
    }
  }
  for (int i = 0; i < f.order_len; ++i) {
    const int pos = f.order[i], who = f.active_owner[pos];
    if (who >= 0) out[O_TURN_ORDER + rel(who) * COLUMN_SIZE + pos] = 1.0f;
  }
  out[O_PHASE + f.phase] = 1.0f;
  if (f.phase != GAME_OVER) {
    const int a = rel(f.player);
    out[O_ACTING + a] = 1.0f;
    float* pending = out + O_RANCHES + a * RANCH_SIZE + CH_PENDING * NUM_CELLS;
    const int cells[4] = {f.circles[0], f.circles[1], f.effect_cell,
                          f.phase == DROUGHT ? f.skulls[0] : -1};
    for (int cell : cells)
      if (cell >= 0) pending[cell] = 1.0f;
  }
  int left[NUM_SPECIALISTS] = {};
  for (int s = 0; s < SALOON_SLOTS; ++s)
    if (f.saloon[s] >= 0)
      out[O_SALOON + s * NUM_SPECIALISTS + t.specialist[f.saloon[s]] - 1] = 1.0f;
  for (std::int16_t token : game.pile()) left[t.specialist[token] - 1] += 1;
  for (int k = 0; k < NUM_SPECIALISTS; ++k) out[O_PILE + k] = static_cast<float>(left[k] / 5.0);
  float* ctx = out + O_CONTEXT;
  ctx[0] = f.forced ? 1.0f : 0.0f;
  ctx[1] = f.emptying ? 1.0f : 0.0f;
  ctx[2] = f.last_round ? 1.0f : 0.0f;
  ctx[3] = static_cast<float>(f.builds_done / 2.0);
  ctx[4] = static_cast<float>(f.builds_allowed / 2.0);
  ctx[5] = static_cast<float>(f.cowboy_moves_left / 3.0);
  ctx[6] = f.circles[0] >= 0 ? 1.0f : 0.0f;
  ctx[7] = f.circles[1] >= 0 ? 1.0f : 0.0f;
  ctx[8] = static_cast<float>((f.bonus_tiles[0] + f.bonus_tiles[1]) / 2.0);
  float* g = out + O_GAME;
  g[0] = static_cast<float>(f.round / static_cast<double>(NUM_ROUNDS));
  g[1] = static_cast<float>(static_cast<double>(game.box().size()) / t.num_plots());
  g[2] = static_cast<float>(static_cast<double>(game.pile().size()) / t.num_partners());
  g[3] = static_cast<float>(f.supply / static_cast<double>(NUM_COWS));
  g[2 + n] = 1.0f;
  g[7 + f.scenario] = 1.0f;
}

}  // namespace moonriver
