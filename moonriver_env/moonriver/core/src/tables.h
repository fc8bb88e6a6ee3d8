// The data tables of one set of data files, read in Python by the engine's own loader
// (moonriver_env/moonriver/rules/data.py) and handed over as plain arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace moonriver {

enum Terrain : int { DESERT = 0, CANYON, MEADOW, FOREST, CORNFIELD, FARM, NUM_TERRAINS };
enum PartnerKind : int {
  COWBOY = 0,
  DESPERADO,
  CATTLE_THIEF,
  GOLD_DIGGER,
  TRAPPER,
  FARMER,
  NUM_PARTNER_KINDS
};
enum Face : int { SPECIALIST = 0, COWBOY_FACE = 1 };

struct KindRow {
  int terrain, nugget, beaver, corn, cows;
  bool skull, circle;
  int number;
};

struct Tables {
  std::vector<KindRow> kinds;  // box kinds, then the bonus faces (tile t face f at 2t+f)
  int num_box_kinds = 0;
  std::vector<std::int16_t> plot_kind;  // plot id -> kind id
  std::vector<std::int8_t> specialist;  // partner token -> its specialist kind
  int num_plots() const { return static_cast<int>(plot_kind.size()); }
  int num_partners() const { return static_cast<int>(specialist.size()); }
  int bonus_kind(int tile, int face) const { return num_box_kinds + 2 * tile + face; }
  const KindRow& of_plot(int plot) const { return kinds[plot_kind[plot]]; }
};

// The tables from the flat arrays Python hands over: kinds as rows of 8 (terrain, nugget,
// beaver, corn, cows, skull, circle, number), then plot id -> kind and token -> specialist.
// Throws std::invalid_argument (a ValueError in Python) when the kinds are not rows of 8.
std::shared_ptr<const Tables> make_tables(const std::int64_t* kinds, std::size_t kinds_len,
                                          int num_box_kinds, const std::int64_t* plot_kind,
                                          std::size_t num_plots, const std::int64_t* specialist,
                                          std::size_t num_partners);

}  // namespace moonriver
