// Worker threads shared by a batch's steps and the batched search's phases.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace moonriver {

// Threads kept for the lifetime of their owner (a batch, a calling thread's searches): starting
// threads at every step costs more than a small batch's step. split() hands chunks of [0, n) to the
// caller and every worker that wakes before the work is done: each thread first takes the chunks of
// its own share (the same games at every step, so their state stays in that core's cache), then
// helps with the others' shares, so a worker that wakes late (a busy machine) leaves its share to
// the others instead of making the caller wait. Workers done with a run watch for the next for
// about twice the caller's usual gap between runs before they sleep, and the caller watches for the
// last worker to finish before it sleeps: waking a sleeping thread costs more than a small step.
class WorkerPool {
 public:
  explicit WorkerPool(int workers);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  int workers() const { return static_cast<int>(threads_.size()); }
  // body(lo, hi) over chunks of ``chunk`` items of [0, n), shared among the caller and the
  // first ``threads - 1`` workers (at most workers() + 1 threads).
  void split(int n, int chunk, int threads, const std::function<void(int, int)>& body);

 private:
  struct alignas(64) Share {  // one thread's chunks: [next, end), taken one at a time
    std::atomic<int> next{0};
    int end = 0;
  };
  void run(const std::function<void(int)>& body);  // body(thread): the caller is thread 0
  void loop(int thread);
  std::vector<std::thread> threads_;
  std::vector<Share> shares_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* body_ = nullptr;
  bool open_ = false;                         // the caller is still working: workers may join
  std::atomic<int> active_{0};                // workers inside the body (changed under mutex_)
  std::atomic<std::uint64_t> generation_{0};  // written under mutex_, read while watching
  bool stop_ = false;
  // The caller's gap between runs (running mean) sets how long workers watch for the next run.
  std::chrono::steady_clock::time_point returned_{};
  double gap_us_ = -1.0;  // none measured yet
  std::atomic<int> watch_us_;
};

}  // namespace moonriver
