// Worker threads shared by a batch's steps and the batched search's phases.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace moonriver {

// Threads kept for the lifetime of their owner (a calling thread's batch steps and searches):
// starting threads at every step costs more than a small batch's step. split() hands chunks of [0,
// n) to the caller and every worker that wakes before the work is done: each thread first takes the
// chunks of its own share (the same games at every step, so their state stays in that core's
// cache), then helps with the others' shares, so a worker that wakes late (a busy machine) leaves
// its share to the others instead of making the caller wait. Workers done with a run watch for the
// next for about twice the caller's usual gap between runs before they sleep, and the caller
// watches for the last worker to finish before it sleeps: waking a sleeping thread costs more than
// a small step.
class WorkerPool {
 public:
  explicit WorkerPool(int workers);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  int workers() const { return static_cast<int>(threads_.size()); }
  // Whether its threads are this process's (a child made by fork() has none of them: make a
  // new pool there; the old one is let go without touching its threads).
  bool usable() const;
  // body(lo, hi) over chunks of ``chunk`` items of [0, n), shared among the caller and the
  // first ``threads - 1`` workers (at most workers() + 1 threads). An exception thrown by a
  // body stops the others' next chunks and is rethrown here once every thread is out.
  void split(int n, int chunk, int threads, const std::function<void(int, int)>& body);

 private:
  struct alignas(64) Share {  // one thread's chunks: [next, end), taken one at a time
    std::atomic<int> next{0};
    int end = 0;
  };
  // body(thread) on the caller (thread 0) and on workers 1..threads-1 that wake in time.
  void run(int threads, const std::function<void(int)>& body);
  void loop(int thread);
  void fail(std::exception_ptr error);  // keep the first error; stop handing out chunks
  void stop_workers();                  // wake every worker to end, then join it
  std::vector<std::thread> threads_;
  std::vector<Share> shares_;
  struct Sync {        // on the heap: a fork() child lets it go without destroying it (a
    std::mutex mutex;  // condition variable the parent's threads waited on cannot be destroyed)
    std::condition_variable wake, done;
  };
  std::unique_ptr<Sync> sync_;
  const std::function<void(int)>* body_ = nullptr;
  int threads_in_run_ = 0;                    // the run's threads (workers above it skip it)
  bool open_ = false;                         // the caller is still working: workers may join
  std::atomic<int> active_{0};                // workers inside the body (changed under the mutex)
  std::atomic<std::uint64_t> generation_{0};  // written under the mutex, read while watching
  bool stop_ = false;
  std::exception_ptr error_;         // the run's first exception (under the mutex)
  std::atomic<bool> failed_{false};  // set with it: no more chunks
  long owner_;                       // the process that started the threads (getpid)
  // The caller's gap between runs (running mean) sets how long workers watch for the next run.
  std::chrono::steady_clock::time_point returned_{};
  double gap_us_ = -1.0;  // none measured yet
  std::atomic<int> watch_us_;
};

// The calling thread's own pool with at least ``workers`` workers, kept between calls (made
// anew after a fork).
WorkerPool& calling_thread_pool(int workers);

}  // namespace moonriver
