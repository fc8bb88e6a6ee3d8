// The batched games' bindings (vector_bindings.cc), added to the _core module by bindings.cc.
#pragma once

#include <nanobind/nanobind.h>

void bind_vector(nanobind::module_& m);
