// Scoring: territories, resources, partners, scenarios, tie-break keys
// (moonriver_env/moonriver/rules/scoring.py).
#pragma once

#include "ranch.h"
#include "tables.h"

namespace moonriver {

constexpr int SCENARIO_BASE = 10;      // a qualifying group scores 10 ...
constexpr int SCENARIO_PER_UNIT = 10;  // ... plus 10 per unit beyond the third
constexpr int SCENARIO_MIN_UNITS = 3;

struct Score {
  int territories = 0, resources = 0, partners = 0, scenario = 0, largest_territory = 0, cows = 0;
  int total() const { return territories + resources + partners + scenario; }
};

// One ranch's score; ``cap_cows`` counts at most one cow per plot (overpopulation).
Score score_ranch(const Ranch& ranch, const Tables& tables, int scenario, bool cap_cows);

}  // namespace moonriver
