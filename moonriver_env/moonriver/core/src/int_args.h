// Integer arguments of the bindings taken whole (PyInt: any Python int, or an object with
// __index__ such as numpy's ints, as nanobind's own casters take them) and narrowed with
// ``arg``: a value outside the C++ type's range (or a tighter one) is a ValueError naming the
// argument and the range allowed. nanobind's int casters refuse such a value with a TypeError
// ("incompatible function arguments") that names neither.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace moonriver {

struct PyInt {
  nanobind::object value;  // a Python int
};

namespace int_args {

// ``x`` as a 128-bit int when it fits in [-2**63, 2**64) (``fits`` false otherwise).
inline __int128 wide(const PyInt& x, bool& fits) {
  int overflow = 0;
  const long long s = PyLong_AsLongLongAndOverflow(x.value.ptr(), &overflow);
  fits = true;
  if (overflow == 0) return s;
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(x.value.ptr());
    if (!PyErr_Occurred()) return static_cast<__int128>(u);
    PyErr_Clear();
  }
  fits = false;
  return 0;
}

// The shown value: the int itself, or its size when it is too long to print.
inline std::string shown(const PyInt& x) {
  const long long bits = nanobind::cast<long long>(x.value.attr("bit_length")());
  if (bits > 128) return "an int of " + std::to_string(bits) + " bits";
  return nanobind::cast<std::string>(nanobind::str(x.value));
}

}  // namespace int_args

// ``x`` as a ``T`` within [lo, hi] (default: all of ``T``), else a ValueError naming ``name``.
template <typename T>
T arg(const PyInt& x, const std::string& name, T lo = std::numeric_limits<T>::min(),
      T hi = std::numeric_limits<T>::max()) {
  bool fits;
  const __int128 v = int_args::wide(x, fits);
  if (!fits || v < static_cast<__int128>(lo) || v > static_cast<__int128>(hi))
    throw nanobind::value_error((name + " must be an int in [" + std::to_string(lo) + ", " +
                                 std::to_string(hi) + "], got " + int_args::shown(x))
                                    .c_str());
  return static_cast<T>(v);
}

// Each of ``xs`` as a ``T`` within [lo, hi]; a ValueError names the entry (``name[i]``).
template <typename T>
std::vector<T> args(const std::vector<PyInt>& xs, const std::string& name,
                    T lo = std::numeric_limits<T>::min(), T hi = std::numeric_limits<T>::max()) {
  std::vector<T> out;
  out.reserve(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i)
    out.push_back(arg<T>(xs[i], name + "[" + std::to_string(i) + "]", lo, hi));
  return out;
}

}  // namespace moonriver

namespace nanobind::detail {

// Takes what nanobind's int casters take (an int, a subclass such as bool, and with implicit
// conversion an object with __index__), of any size; typed ``int`` in the stubs.
template <>
struct type_caster<moonriver::PyInt> {
  NB_TYPE_CASTER(moonriver::PyInt, const_name("int"))

  bool from_python(handle src, uint8_t flags, cleanup_list*) noexcept {
    if (PyLong_Check(src.ptr())) {
      value.value = borrow(src);
      return true;
    }
    if (!(flags & static_cast<uint8_t>(cast_flags::convert)) || PyFloat_Check(src.ptr()) ||
        !PyIndex_Check(src.ptr()))
      return false;
    PyObject* index = PyNumber_Index(src.ptr());
    if (!index) {
      PyErr_Clear();
      return false;
    }
    value.value = steal(index);
    return true;
  }

  static handle from_cpp(const moonriver::PyInt& x, rv_policy, cleanup_list*) noexcept {
    return x.value.inc_ref();
  }
};

}  // namespace nanobind::detail
