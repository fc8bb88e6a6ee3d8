// The nanobind array types and the array helpers shared by the bindings (the *_bindings.cc).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <initializer_list>

namespace moonriver {

// C-contiguous CPU arrays: In* read-only arguments, Out* arguments written in place.
template <typename T>
using In1 =
    nanobind::ndarray<const T, nanobind::ndim<1>, nanobind::c_contig, nanobind::device::cpu>;
template <typename T>
using In2 =
    nanobind::ndarray<const T, nanobind::ndim<2>, nanobind::c_contig, nanobind::device::cpu>;
template <typename T>
using Out1 = nanobind::ndarray<T, nanobind::ndim<1>, nanobind::c_contig, nanobind::device::cpu>;
template <typename T>
using Out2 = nanobind::ndarray<T, nanobind::ndim<2>, nanobind::c_contig, nanobind::device::cpu>;

// The numpy arrays the bindings hand out (owned() makes them), as the stubs name them.
template <typename T>
using Array1 = nanobind::ndarray<nanobind::numpy, T, nanobind::ndim<1>>;
template <typename T>
using Array2 = nanobind::ndarray<nanobind::numpy, T, nanobind::ndim<2>>;

// A zeroed array of ``n`` (at least one) for owned() to hand out.
template <typename T>
T* fresh(std::size_t n) {
  return new T[n > 0 ? n : 1]();
}

// A new numpy array of ``shape`` owning ``data`` (from new[]), typed by Extra (nb::ndim,
// nb::shape) as the stubs name it; a const T makes it read-only.
template <typename T, typename... Extra>
nanobind::ndarray<nanobind::numpy, T, Extra...> owning(T* data,
                                                       std::initializer_list<std::size_t> shape) {
  nanobind::capsule owner(data, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return {data, shape, owner};
}

// A new numpy array of ``rows`` x ``cols`` (cols 0: one dimension) owning ``data`` (from new[]).
template <typename T>
nanobind::object owned(T* data, std::size_t rows, std::size_t cols) {
  if (cols == 0) return nanobind::cast(owning<T, nanobind::ndim<1>>(data, {rows}));
  return nanobind::cast(owning<T, nanobind::ndim<2>>(data, {rows, cols}));
}

}  // namespace moonriver
