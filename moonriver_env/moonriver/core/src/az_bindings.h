// The batched search's bindings (az_bindings.cc), added to the _core module by bindings.cc.
#pragma once

#include <nanobind/nanobind.h>

void bind_az_search(nanobind::module_& m);
