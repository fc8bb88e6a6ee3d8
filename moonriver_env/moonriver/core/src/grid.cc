#include "grid.h"

namespace moonriver {

Grid::Grid() {
  std::array<Placements, NUM_CELLS> first_at{}, second_at{};
  for (int k = 0; k < NUM_PLACEMENTS; ++k) {
    const int a = k / 2;
    second[k] = step(a, k % 2 == 0 ? 1 : 2);
    if (second[k] < 0) continue;
    touch[a] |= bit(k);
    touch[second[k]] |= bit(k);
    first_at[a] |= bit(k);
    second_at[second[k]] |= bit(k);
  }
  for (int c = 0; c < NUM_CELLS; ++c) {
    for (int d = 0; d < 4; ++d) {
      const int n = step(c, d);
      if (n < 0) continue;
      neighbours[c] |= Cells{1} << n;
      first_nb[c] |= first_at[n];
      second_nb[c] |= second_at[n];
    }
  }
}

const Grid& grid() {
  static const Grid g;
  return g;
}

Cells usable_cells(int rows) {
  const Cells rows_cells = rows * COLS >= 64 ? ~Cells{0} : (Cells{1} << (rows * COLS)) - 1;
  return rows_cells & ~(Cells{1} << HOMESTEAD);
}

Placements placements_within(Cells cells) {
  Placements out = 0;
  for (int k = 0; k < NUM_PLACEMENTS; ++k) {
    const int b = grid().second[k];
    if (b >= 0 && (cells >> (k / 2) & 1) && (cells >> b & 1)) out |= bit(k);
  }
  return out;
}

Placements placements_touching(Cells cells) {
  Placements out = 0;
  for (int c = 0; c < NUM_CELLS; ++c)
    if (cells >> c & 1) out |= grid().touch[c];
  return out;
}

}  // namespace moonriver
