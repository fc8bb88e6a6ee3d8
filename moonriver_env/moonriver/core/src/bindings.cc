// The private module moonriver_env.moonriver.core._core: one module, each area bound by its own
// file (bindings.h); the public API is moonriver_env.moonriver.core and the packages over it.
#include "bindings.h"

#include <nanobind/nanobind.h>

NB_MODULE(_core, m) {
  m.doc() = "Moon River's compiled rules (private: use moonriver_env.moonriver.core).";
  bind_game(m);
  bind_setup(m);
  bind_search(m);
  bind_az_search(m);
  bind_network(m);
  bind_vector(m);
}
