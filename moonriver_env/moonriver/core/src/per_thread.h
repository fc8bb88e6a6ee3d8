// One object of a type per thread, its address looked up once per call.
#pragma once

namespace moonriver {

// This thread's T (value-initialized on first use). Not inlined: inside a shared library GCC
// would otherwise look a thread_local's address up again (a __tls_get_addr call) at every use
// in a loop, not once.
template <typename T>
__attribute__((noinline)) T& per_thread() {
  static thread_local T object{};
  return object;
}

}  // namespace moonriver
