#include "tables.h"

#include <stdexcept>

namespace moonriver {

std::shared_ptr<const Tables> make_tables(const std::int64_t* kinds, std::size_t kinds_len,
                                          int num_box_kinds, const std::int64_t* plot_kind,
                                          std::size_t num_plots, const std::int64_t* specialist,
                                          std::size_t num_partners) {
  if (kinds_len % 8 != 0) throw std::invalid_argument("kinds table: 8 columns per kind");
  const std::size_t num_kinds = kinds_len / 8;
  // Every id the rules follow must land in its table: box kinds and four bonus faces.
  if (num_box_kinds < 0 || static_cast<std::size_t>(num_box_kinds) + 4 > num_kinds)
    throw std::invalid_argument("kinds table: the box kinds, then 4 bonus-tile faces");
  for (std::size_t i = 0; i < kinds_len; i += 8)
    if (kinds[i] < 0 || kinds[i] >= NUM_TERRAINS || kinds[i + 4] < 0 || kinds[i + 4] > 32)
      throw std::invalid_argument("kinds table: terrain 0..5 and cows 0..32 per kind");
  if (num_plots > 32767 || num_partners > 32767)
    throw std::invalid_argument("tables: at most 32767 plots and partner tokens");
  for (std::size_t i = 0; i < num_plots; ++i)
    if (plot_kind[i] < 0 || plot_kind[i] >= num_box_kinds)
      throw std::invalid_argument("plot kinds: each a box kind id");
  for (std::size_t i = 0; i < num_partners; ++i)
    if (specialist[i] < 1 || specialist[i] >= NUM_PARTNER_KINDS)
      throw std::invalid_argument("partner specialists: each a specialist kind 1..5");
  auto t = std::make_shared<Tables>();
  for (std::size_t i = 0; i < kinds_len; i += 8)
    t->kinds.push_back(KindRow{int(kinds[i]), int(kinds[i + 1]), int(kinds[i + 2]),
                               int(kinds[i + 3]), int(kinds[i + 4]), kinds[i + 5] != 0,
                               kinds[i + 6] != 0, int(kinds[i + 7])});
  t->num_box_kinds = num_box_kinds;
  for (std::size_t i = 0; i < num_plots; ++i)
    t->plot_kind.push_back(static_cast<std::int16_t>(plot_kind[i]));
  for (std::size_t i = 0; i < num_partners; ++i)
    t->specialist.push_back(static_cast<std::int8_t>(specialist[i]));
  return t;
}

}  // namespace moonriver
