#include "scoring.h"

#include <algorithm>

namespace moonriver {
namespace {

int scenario_value(int units) {
  return SCENARIO_BASE + SCENARIO_PER_UNIT * (units - SCENARIO_MIN_UNITS);
}

int partner_points(int kind, int nuggets, int beavers, int corn) {
  return kind == GOLD_DIGGER ? nuggets : kind == TRAPPER ? beavers : kind == FARMER ? corn : 0;
}

// Orthogonally connected groups of ``cells``, each passed to ``visit`` as a cell set.
template <typename Visit>
void for_each_group(Cells cells, Visit visit) {
  const Grid& g = grid();
  while (cells) {
    Cells group = cells & (~cells + 1), frontier = group;
    while (frontier) {
      const int c = __builtin_ctzll(frontier);
      frontier &= frontier - 1;
      const Cells fresh = g.neighbours[c] & cells & ~group;
      group |= fresh;
      frontier |= fresh;
    }
    cells &= ~group;
    visit(group);
  }
}

}  // namespace

Score score_ranch(const Ranch& r, const Tables& tables, int scenario, bool cap_cows) {
  Score s;
  bool any = false;
  Cells built = 0;  // a territory is named by one of its cells: only built cells name one
  for (int t = 0; t < NUM_TERRAINS; ++t) built |= r.terrain_cells[t];
  for (Cells bits = built; bits; bits &= bits - 1) {
    const int c = __builtin_ctzll(bits);
    if (r.label[c] == c) {
      any = true;
      s.largest_territory = std::max<int>(s.largest_territory, r.size[c]);
    }
  }
  if (!any) return s;
  for (Cells bits = r.cow_cells; bits; bits &= bits - 1) {
    const int cell = __builtin_ctzll(bits);
    const int cows = cap_cows ? 1 : r.cows[cell];
    s.cows += cows;
    const int t = r.label[cell];
    if (r.terrain[t] != CORNFIELD) s.territories += r.size[t] * cows;
  }
  s.resources = r.nuggets + r.beavers + r.corn;
  for (Cells bits = r.partner_cells; bits; bits &= bits - 1) {
    const int cell = __builtin_ctzll(bits);
    if (r.face[cell] == SPECIALIST)
      s.partners +=
          partner_points(tables.specialist[r.partner[cell]], r.nuggets, r.beavers, r.corn);
  }
  if (scenario == 1 || scenario == 4) {
    // 1 Timber Rafting: forests touching the river; 4 Moon River City: farms.
    const int wanted = scenario == 1 ? FOREST : FARM;
    Cells riverside = 0;
    for (int c = 0; c < COLS; ++c)
      if (r.label[c] >= 0) riverside |= Cells{1} << r.label[c];
    for (int t = 0; t < NUM_CELLS; ++t) {
      if (r.label[t] == t && r.terrain[t] == wanted && r.size[t] >= SCENARIO_MIN_UNITS &&
          (scenario == 4 || (riverside >> t & 1)))
        s.scenario += scenario_value(r.size[t]);
    }
  } else if (scenario == 2) {  // Gold Rush: groups of nugget plots
    Cells nugget_cells = 0;
    for (int c = 0; c < NUM_CELLS; ++c)
      if (r.kind[c] >= 0 && tables.kinds[r.kind[c]].nugget > 0) nugget_cells |= Cells{1} << c;
    for_each_group(nugget_cells, [&](Cells group) {
      if (__builtin_popcountll(group) < SCENARIO_MIN_UNITS) return;
      int units = 0;
      for (Cells b = group; b; b &= b - 1) units += tables.kinds[r.kind[__builtin_ctzll(b)]].nugget;
      s.scenario += scenario_value(units);
    });
  } else if (scenario == 3) {  // Outlaws: groups of partners with an outlaw specialist
    for_each_group(r.partner_cells, [&](Cells group) {
      if (__builtin_popcountll(group) < SCENARIO_MIN_UNITS) return;
      bool outlaw = false;
      for (Cells b = group; b; b &= b - 1) {
        const int c = __builtin_ctzll(b);
        const int k = tables.specialist[r.partner[c]];
        if (r.face[c] == SPECIALIST && (k == DESPERADO || k == CATTLE_THIEF)) outlaw = true;
      }
      if (outlaw) s.scenario += scenario_value(__builtin_popcountll(group));
    });
  }
  return s;
}

}  // namespace moonriver
