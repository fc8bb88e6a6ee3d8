// Ranch grid geometry shared by every variant (moonriver_env/moonriver/rules/grid.py).
//
// Cells are numbered row-major over the largest grid (10 rows x 5 columns); row 0 borders the
// river and the homestead is cell 2. A 3-4 player ranch uses rows 0-4 only.
//
//      col: 0   1   2   3   4
// row 0:    0   1  [2]  3   4     <- river side; [2] is the homestead
// row 1:    5   6   7   8   9
//  ...
// row 9:   45  46  47  48  49
//
// Placement k = 2 * cell + orientation: 0 puts the second plot to the right, 1 below it.
// Placement sets are 128-bit masks (bit k), cell sets 64-bit masks (bit c).
#pragma once

#include <array>
#include <cstdint>

#include "actions.h"

namespace moonriver {

using Placements = unsigned __int128;
using Cells = std::uint64_t;

constexpr int DIR_ROW[4] = {-1, 0, 1, 0};  // up (toward the river), right, down, left
constexpr int DIR_COL[4] = {0, 1, 0, -1};

constexpr int step(int cell, int direction, int rows = MAX_ROWS) {
  const int r = cell / COLS + DIR_ROW[direction], c = cell % COLS + DIR_COL[direction];
  return (r >= 0 && r < rows && c >= 0 && c < COLS) ? r * COLS + c : -1;
}

inline int popcount(Placements x) {
  return __builtin_popcountll(static_cast<std::uint64_t>(x)) +
         __builtin_popcountll(static_cast<std::uint64_t>(x >> 64));
}
inline int lowest_bit(Placements x) {
  const auto lo = static_cast<std::uint64_t>(x);
  return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll(static_cast<std::uint64_t>(x >> 64));
}
inline Placements bit(int k) { return Placements{1} << k; }

struct Grid {
  std::array<int, NUM_PLACEMENTS> second{};       // second cell of placement k (-1 off the grid)
  std::array<Placements, NUM_CELLS> touch{};      // placements covering cell c
  std::array<Placements, NUM_CELLS> first_nb{};   // placements whose first plot is next to c
  std::array<Placements, NUM_CELLS> second_nb{};  // ... whose second plot is next to c
  std::array<Cells, NUM_CELLS> neighbours{};
  Grid();
};

const Grid& grid();

// Cells a ranch of ``rows`` rows can build on (the homestead excluded).
Cells usable_cells(int rows);
// Placements whose two cells are both in ``cells``.
Placements placements_within(Cells cells);
// Placements covering at least one of ``cells``.
Placements placements_touching(Cells cells);

}  // namespace moonriver
