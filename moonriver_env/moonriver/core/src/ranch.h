// One player's ranch: the grid, cows and partners on it, the reserve, and placement legality
// kept as bitsets updated on each placement (moonriver_env/moonriver/rules/ranch.py).
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include "grid.h"
#include "tables.h"

namespace moonriver {

constexpr int MAX_HAND = 8;  // room beyond HAND_SLOTS; the rules never exceed it

// Copied as bytes into the byte state (state.cc): every byte is a member with a value, the
// gaps the compiler would leave included (the pad_ members, always 0), so the same game gives
// the same bytes in any process (the static_assert below keeps it so).
struct Ranch {
  int rows = 5;
  int capacity = 3;
  std::array<std::int16_t, NUM_CELLS> kind{};  // plot kind id, -1 empty
  std::array<std::int16_t, NUM_CELLS> cows{};
  std::array<std::int16_t, NUM_CELLS> partner{};  // token id, -1 none
  std::array<std::int16_t, NUM_CELLS> face{};     // Face, -1 none
  std::array<std::int16_t, NUM_CELLS> plot{};     // plot id (bonus tile t: -2 - t), -1 empty
  std::array<std::int8_t, NUM_CELLS> terrain{};   // -1 empty
  // Territory of each cell, named by its smallest cell index (-1 empty), and the number of
  // plots of each territory by its name.
  std::array<std::int8_t, NUM_CELLS> label{};
  std::array<std::int8_t, NUM_CELLS> size{};
  std::array<std::uint8_t, 6> pad_size{};
  Cells empty_cells = 0;  // free cells a plot may go on
  Cells bridge_cells = 0;
  Cells cow_cells = 0;  // cells holding at least one cow
  Cells partner_cells = 0;
  std::array<std::uint8_t, 8> pad_cells{};
  Placements free = 0;                                // placements on two free cells
  Placements bridged = 0;                             // placements covering a bridge
  std::array<Placements, NUM_TERRAINS> first_adj{};   // first plot next to terrain t
  std::array<Placements, NUM_TERRAINS> second_adj{};  // second plot next to terrain t
  std::array<Cells, NUM_TERRAINS> adj_cells{};
  std::array<Cells, NUM_TERRAINS> terrain_cells{};
  int nuggets = 0, beavers = 0, corn = 0;     // resource symbols on the ranch
  int reach = -1;                             // furthest row holding a plot
  std::array<std::int16_t, MAX_HAND> hand{};  // reserve plots, then any plot in hand
  int hand_size = 0;
  bool bonus_taken = false;
  std::array<std::uint8_t, 3> pad_bonus{};
  // Bumped by every change that scoring reads (plots, cows, partners): a ranch whose count
  // did not change since it was scored keeps its score.
  std::uint32_t changes = 0;
  std::array<std::uint8_t, 4> pad_end{};

  Ranch() = default;
  Ranch(int rows, int capacity, Cells bridges);

  bool in_hand() const { return hand_size > capacity; }
  void hand_push(int plot);
  void hand_erase(int slot);
  void place(int cell, int plot_id, int kind_id, int terrain_id, int nugget, int beaver,
             int corn_symbols);
  void add_cows(int cell, int count);
  void set_partner(int cell, int token, int face_id);
  int cap_cows();  // overpopulation: at most one cow per plot; returns the cows removed
  Cells territory(int cell) const;  // cells of the territory holding ``cell``
  Cells protected_cells() const;    // cells whose territory holds a partner
  Cells single_bits(int terrain_id) const {
    return empty_cells & (bridge_cells | adj_cells[terrain_id]);
  }
};
static_assert(std::has_unique_object_representations_v<Ranch>,
              "Ranch has a gap the compiler fills with stray bytes: make it a pad_ member");

}  // namespace moonriver
