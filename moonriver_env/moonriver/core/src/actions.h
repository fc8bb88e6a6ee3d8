// The action enumeration: one fixed Discrete(2710) space for every variant, in segments.
// Mirrors moonriver_env/moonriver/rules/actions.py (ids, pair orders); a test compares the two.
#pragma once

#include <array>

namespace moonriver {

constexpr int COLS = 5;
constexpr int MAX_ROWS = 10;
constexpr int NUM_CELLS = MAX_ROWS * COLS;
constexpr int HOMESTEAD = 2;                   // row 0, column 2
constexpr int NUM_PLACEMENTS = NUM_CELLS * 2;  // k = 2 * cell + orientation (0 right, 1 below)
constexpr int HAND_SLOTS = 5;                  // largest reserve (4) plus the plot in hand
constexpr int SALOON_SLOTS = 5;
constexpr int MAX_OPPONENTS = 3;
constexpr int MAX_PLAYERS = 4;
constexpr int MAX_CIRCLES = 2;
constexpr int COWBOY_MOVES = 3;
constexpr int COLUMN_SIZE = 4;
constexpr int NUM_PAIRS = HAND_SLOTS * (HAND_SLOTS - 1);  // ordered (a, b), a != b
constexpr int NUM_UNORDERED = NUM_PAIRS / 2;

// Segment bases, in id order.
constexpr int SELECT0 = 0;                                    // Select(position): 4
constexpr int BUILD0 = SELECT0 + COLUMN_SIZE;                 // Build(pair, placement): 2000
constexpr int PASS_ID = BUILD0 + NUM_PAIRS * NUM_PLACEMENTS;  // Pass(): 1
constexpr int DISCARD0 = PASS_ID + 1;                         // Discard({a, b}): 10
constexpr int RECRUIT0 = DISCARD0 + NUM_UNORDERED;            // Recruit(slot, face, circle): 20
constexpr int COWBOY0 = RECRUIT0 + SALOON_SLOTS * 2 * MAX_CIRCLES;  // CowboyMove(cell, dir): 200
constexpr int DROUGHT0 = COWBOY0 + NUM_CELLS * 4;                   // Drought(cell): 50
constexpr int DESPERADO0 = DROUGHT0 + NUM_CELLS;                    // Desperado(i, o, j): 75
constexpr int THIEF0 = DESPERADO0 + HAND_SLOTS * MAX_OPPONENTS * HAND_SLOTS;  // Thief(o, cell): 150
constexpr int BONUS0 = THIEF0 + MAX_OPPONENTS * NUM_CELLS;  // Bonus(tile, face, cell): 200
constexpr int NUM_ACTIONS = BONUS0 + 2 * 2 * NUM_CELLS;
static_assert(NUM_ACTIONS == 2710, "the enumeration has 2710 ids");

// Ordered build pairs sorted by (max(a, b), a, b): the pairs within h held plots are a prefix
// (2, 6, 12, 20 pairs for h = 2..5).
struct SlotPair {
  int first = 0, second = 0;
};
struct PairTables {
  std::array<SlotPair, NUM_PAIRS> ordered{};
  std::array<SlotPair, NUM_UNORDERED> unordered{};  // (a < b), lexicographic
  std::array<int, HAND_SLOTS + 1> prefix{};         // pairs within h held plots
  constexpr PairTables() {
    int i = 0;
    for (int hi = 1; hi < HAND_SLOTS; ++hi) {
      // pairs with max == hi, in (a, b) order: (0,hi), (1,hi), ..., (hi,0), (hi,1), ...
      for (int a = 0; a < hi; ++a) ordered[i++] = {a, hi};
      for (int b = 0; b < hi; ++b) ordered[i++] = {hi, b};
    }
    for (int h = 0; h <= HAND_SLOTS; ++h) prefix[h] = h < 2 ? 0 : h * (h - 1);
    int u = 0;
    for (int a = 0; a < HAND_SLOTS; ++a)
      for (int b = a + 1; b < HAND_SLOTS; ++b) unordered[u++] = {a, b};
  }
};
inline constexpr PairTables PAIRS{};

}  // namespace moonriver
