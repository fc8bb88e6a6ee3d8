// The observation: one flat float32 vector of named views (moonriver_env/observation.py,
// whose ``VIEWS`` a test compares with these offsets).
#pragma once

#include <cstdint>

#include "game.h"

namespace moonriver {

constexpr int NUM_RANCH_CHANNELS = 22;
constexpr int NUM_PLOT_FEATURES = 14;
constexpr int NUM_SPECIALISTS = 5;
constexpr int NUM_PHASES = GAME_OVER + 1;
constexpr int NUM_CONTEXT = 9;
constexpr int NUM_GAME = 12;
constexpr int NUM_ROUNDS = 24;  // observation scale of the round
constexpr double SCORE_SCALE = 100.0;
constexpr double NUMBER_SCALE = 25.0;

// Ranch channels.
constexpr int CH_TERRAIN = 0, CH_NUGGET = 6, CH_BEAVER = 7, CH_CORN = 8, CH_SKULL = 9,
              CH_CIRCLE = 10, CH_COWS = 11, CH_PARTNER = 12, CH_BRIDGE = 18, CH_HOMESTEAD = 19,
              CH_FREE = 20, CH_PENDING = 21;
constexpr int RANCH_SIZE = NUM_RANCH_CHANNELS * NUM_CELLS;

// View offsets, in order.
constexpr int O_RANCHES = 0;
constexpr int O_RESERVES = O_RANCHES + MAX_PLAYERS * RANCH_SIZE;
constexpr int O_COLUMNS = O_RESERVES + MAX_PLAYERS * HAND_SLOTS * NUM_PLOT_FEATURES;
constexpr int O_COLUMN_OWNERS = O_COLUMNS + 2 * COLUMN_SIZE * NUM_PLOT_FEATURES;
constexpr int O_RESERVE_SIZE = O_COLUMN_OWNERS + 2 * COLUMN_SIZE * MAX_PLAYERS;
constexpr int O_BOARDS = O_RESERVE_SIZE + MAX_PLAYERS;
constexpr int O_SALOON = O_BOARDS + MAX_PLAYERS * 5;
constexpr int O_PILE = O_SALOON + SALOON_SLOTS * NUM_SPECIALISTS;
constexpr int O_PHASE = O_PILE + NUM_SPECIALISTS;
constexpr int O_ACTING = O_PHASE + NUM_PHASES;
constexpr int O_CONTEXT = O_ACTING + MAX_PLAYERS;
constexpr int O_SCORES = O_CONTEXT + NUM_CONTEXT;
constexpr int O_TURN_ORDER = O_SCORES + MAX_PLAYERS;
constexpr int O_GAME = O_TURN_ORDER + MAX_PLAYERS * COLUMN_SIZE;
constexpr int OBSERVATION_SIZE = O_GAME + NUM_GAME;
static_assert(OBSERVATION_SIZE == 4934, "the observation has 4934 values");
// The game view's one-hots whose product names the variant (observation.py's PLAYERS_ONEHOT and
// MODE_ONEHOT): players 2 to 4, then the mode (base, scenarios 1 to 4).
constexpr int O_PLAYERS_ONEHOT = O_GAME + 4, NUM_PLAYER_CODES = 3;
constexpr int O_MODE_ONEHOT = O_GAME + 7, NUM_MODE_CODES = 5;
constexpr int NUM_VARIANT_CODES = NUM_PLAYER_CODES * NUM_MODE_CODES;
static_assert(O_MODE_ONEHOT + NUM_MODE_CODES == OBSERVATION_SIZE, "the mode one-hot ends it");

// The compact observation (docs/observation.md): the same values as raw integers in uint8, at
// the float observation's offsets (a scaled feature holds its numerator; the free plane's -1 is
// 255), then each seat's score's high byte (its low byte at O_SCORES) and the two denominators
// of the game view's plot and partner fractions. expand_observation (observation.py) gives the
// float observation back exactly.
constexpr int O_SCORES_HIGH = OBSERVATION_SIZE;
constexpr int O_NUM_PLOTS = O_SCORES_HIGH + MAX_PLAYERS;
constexpr int O_NUM_PARTNERS = O_NUM_PLOTS + 1;
constexpr int COMPACT_SIZE = O_NUM_PARTNERS + 1;

// Write ``viewer``'s observation into ``out`` (OBSERVATION_SIZE floats; zero-filled first).
// ``totals``: the players' running score totals when the caller keeps them (null: scored here).
void observe(const Game& game, int viewer, float* out, const int* totals = nullptr);
// The same as a compact observation (COMPACT_SIZE bytes; zero-filled first).
void observe_compact(const Game& game, int viewer, std::uint8_t* out, const int* totals = nullptr);

// An observation's non-zero values and their indices, in ascending index order: what a network
// with sparse first layers reads (a few hundred of the OBSERVATION_SIZE values are not zero).
struct SparseObservation {
  int count = 0;
  std::int32_t index[OBSERVATION_SIZE];
  float value[OBSERVATION_SIZE];
};

// ``viewer``'s observation as its non-zero values (the same values observe writes), without
// writing or scanning the dense array.
void observe_sparse(const Game& game, int viewer, SparseObservation* out,
                    const int* totals = nullptr);
// The non-zero values of ``n`` floats ``x`` (NaN included, -0.0 not), their indices shifted by
// ``offset``, appended to ``index`` and ``value`` from position ``count``; returns the new count.
int append_nonzeros(const float* x, int n, int offset, std::int32_t* index, float* value,
                    int count);

}  // namespace moonriver
