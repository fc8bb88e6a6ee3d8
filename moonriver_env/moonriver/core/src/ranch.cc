#include "ranch.h"

#include <algorithm>
#include <stdexcept>

namespace moonriver {

Ranch::Ranch(int rows_, int capacity_, Cells bridges) : rows(rows_), capacity(capacity_) {
  kind.fill(-1);
  cows.fill(0);
  partner.fill(-1);
  face.fill(-1);
  plot.fill(-1);
  terrain.fill(-1);
  label.fill(-1);
  size.fill(0);
  const Cells usable = usable_cells(rows);
  empty_cells = usable;
  bridge_cells = bridges;
  free = placements_within(usable);
  bridged = placements_touching(bridges);
}

void Ranch::hand_push(int p) {
  if (hand_size == MAX_HAND) throw std::logic_error("moonriver core: reserve overflow");
  hand[hand_size++] = static_cast<std::int16_t>(p);
}

void Ranch::hand_erase(int slot) {
  for (int i = slot; i + 1 < hand_size; ++i) hand[i] = hand[i + 1];
  --hand_size;
}

void Ranch::place(int cell, int plot_id, int kind_id, int t, int nugget, int beaver,
                  int corn_symbols) {
  const Grid& g = grid();
  ++changes;
  kind[cell] = static_cast<std::int16_t>(kind_id);
  plot[cell] = static_cast<std::int16_t>(plot_id);
  terrain[cell] = static_cast<std::int8_t>(t);
  nuggets += nugget;
  beavers += beaver;
  corn += corn_symbols;
  if (cell / COLS > reach) reach = cell / COLS;
  Cells same = g.neighbours[cell] & terrain_cells[t];
  terrain_cells[t] |= Cells{1} << cell;
  if (!same) {
    label[cell] = static_cast<std::int8_t>(cell);  // a new territory
    size[cell] = 1;
  } else {
    // Territories only merge: the joined one takes the smallest name.
    Cells joined = 0;  // names (as cell bits) of the territories joined
    for (Cells s = same; s; s &= s - 1) joined |= Cells{1} << label[__builtin_ctzll(s)];
    const int name = std::min(cell, __builtin_ctzll(joined));
    int total = 1;
    for (Cells j = joined; j; j &= j - 1) {
      const int t_name = __builtin_ctzll(j);
      total += size[t_name];
      if (t_name != name) {
        for (int c = 0; c < NUM_CELLS; ++c)
          if (label[c] == t_name) label[c] = static_cast<std::int8_t>(name);
        size[t_name] = 0;
      }
    }
    label[cell] = static_cast<std::int8_t>(name);
    size[name] = static_cast<std::int8_t>(total);
  }
  free &= ~g.touch[cell];
  empty_cells &= ~(Cells{1} << cell);
  first_adj[t] |= g.first_nb[cell];
  second_adj[t] |= g.second_nb[cell];
  adj_cells[t] |= g.neighbours[cell];
}

void Ranch::add_cows(int cell, int count) {
  ++changes;
  cows[cell] = static_cast<std::int16_t>(cows[cell] + count);
  if (cows[cell] > 0)
    cow_cells |= Cells{1} << cell;
  else
    cow_cells &= ~(Cells{1} << cell);
}

void Ranch::set_partner(int cell, int token, int face_id) {
  ++changes;
  partner[cell] = static_cast<std::int16_t>(token);
  face[cell] = static_cast<std::int16_t>(face_id);
  partner_cells |= Cells{1} << cell;
}

int Ranch::cap_cows() {
  ++changes;
  int excess = 0;
  for (int c = 0; c < NUM_CELLS; ++c) {
    if (cows[c] > 1) {
      excess += cows[c] - 1;
      cows[c] = 1;
    }
  }
  return excess;
}

Cells Ranch::territory(int cell) const {
  Cells out = 0;
  const int name = label[cell];
  for (int c = 0; c < NUM_CELLS; ++c)
    if (label[c] == name) out |= Cells{1} << c;
  return out;
}

Cells Ranch::protected_cells() const {
  Cells guarded_names = 0;
  for (Cells p = partner_cells; p; p &= p - 1) {
    const int c = __builtin_ctzll(p);
    if (label[c] >= 0) guarded_names |= Cells{1} << label[c];
  }
  Cells out = 0;
  for (int c = 0; c < NUM_CELLS; ++c)
    if (label[c] >= 0 && (guarded_names >> label[c] & 1)) out |= Cells{1} << c;
  return out;
}

}  // namespace moonriver
