// The areas of the private module moonriver_env.moonriver.core._core, each registering its part
// (bindings.cc calls them in this order: the search adds methods to bind_game's Game).
#pragma once

#include <nanobind/nanobind.h>

// game_bindings.cc: the data tables and one game (state, legality, play, observation, bytes).
void bind_game(nanobind::module_& m);
// setup_bindings.cc: numpy's generator (Pcg64) and a config's set-up plan (SetupPlan).
void bind_setup(nanobind::module_& m);
// search_bindings.cc: search inside the core over one game (Game's playout and search methods).
void bind_search(nanobind::module_& m);
// az_bindings.cc: the batched search whose leaves a network values (AzSearch).
void bind_az_search(nanobind::module_& m);
// network_bindings.cc: the search network evaluated in C++ (AzNet).
void bind_network(nanobind::module_& m);
// vector_bindings.cc: the batched games (Batch).
void bind_vector(nanobind::module_& m);
