#include "pool.h"

#include <unistd.h>

#include <algorithm>

namespace moonriver {

namespace {
// A worker done with a run watches for the next for twice the caller's usual gap between runs
// plus MIN_WATCH_US, then sleeps; a caller whose gap is longer than MAX_GAP_US (a network's
// forward pass) is not worth a spinning core: MIN_WATCH_US alone. The caller watches for up to
// MAX_GAP_US for its last worker to finish.
constexpr int MIN_WATCH_US = 50, MAX_GAP_US = 500;
}  // namespace

WorkerPool::WorkerPool(int workers)
    : shares_(workers + 1),
      sync_(std::make_unique<Sync>()),
      owner_(static_cast<long>(getpid())),
      watch_us_(MIN_WATCH_US) {
  threads_.reserve(workers);
  try {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this, i] { loop(i + 1); });
  } catch (...) {  // no more threads to be had: stop the ones started, then say so
    stop_workers();
    throw;
  }
}

WorkerPool::~WorkerPool() {
  if (!usable()) {  // a forked child: the threads and their waits are the parent's; let them
    new std::vector<std::thread>(std::move(threads_));  // go untouched: never joined, and
    (void)sync_.release();                              // never destroyed
    return;
  }
  stop_workers();
}

void WorkerPool::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(sync_->mutex);
    stop_ = true;
  }
  sync_->wake.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool WorkerPool::usable() const { return static_cast<long>(getpid()) == owner_; }

WorkerPool& calling_thread_pool(int workers) {
  thread_local std::unique_ptr<WorkerPool> pool;
  if (!pool || !pool->usable() || pool->workers() < workers)
    pool = std::make_unique<WorkerPool>(workers);
  return *pool;
}

void WorkerPool::fail(std::exception_ptr error) {
  failed_.store(true, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(sync_->mutex);
  if (!error_) error_ = std::move(error);
}

namespace {
// Poll ``ready`` for up to ``watch_us`` (the clock read every 64 polls); whether it held.
template <typename Ready>
bool watch(Ready&& ready, int watch_us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(watch_us);
  for (int i = 1;; ++i) {
    if (ready()) return true;
    if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}
}  // namespace

void WorkerPool::loop(int thread) {
  std::uint64_t seen = 0;
  for (;;) {
    const std::function<void(int)>* body;
    watch([&] { return generation_.load(std::memory_order_acquire) != seen; },
          watch_us_.load(std::memory_order_relaxed));
    {
      std::unique_lock<std::mutex> lock(sync_->mutex);
      sync_->wake.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      // woke after the caller finished (nothing left), or not one of this run's threads
      if (!open_ || thread >= threads_in_run_) continue;
      ++active_;
      body = body_;
    }
    try {
      (*body)(thread);
    } catch (...) {
      fail(std::current_exception());
    }
    {
      std::lock_guard<std::mutex> lock(sync_->mutex);
      if (--active_ == 0) sync_->done.notify_one();
    }
  }
}

void WorkerPool::run(int threads, const std::function<void(int)>& body) {
  if (returned_ != std::chrono::steady_clock::time_point{}) {  // a run before this one
    const double gap =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - returned_)
            .count();
    gap_us_ = gap_us_ < 0.0 ? gap : 0.75 * gap_us_ + 0.25 * gap;
    watch_us_.store(
        gap_us_ < MAX_GAP_US ? MIN_WATCH_US + static_cast<int>(2.0 * gap_us_) : MIN_WATCH_US,
        std::memory_order_relaxed);
  }
  {
    std::lock_guard<std::mutex> lock(sync_->mutex);
    body_ = &body;
    threads_in_run_ = threads;
    open_ = true;
    error_ = nullptr;
    failed_.store(false, std::memory_order_relaxed);
    ++generation_;
  }
  sync_->wake.notify_all();
  try {
    body(0);
  } catch (...) {
    fail(std::current_exception());
  }
  {
    std::lock_guard<std::mutex> lock(sync_->mutex);
    open_ = false;  // no worker joins from here on
  }
  // A worker still inside is on its last chunk: watch for it before sleeping.
  if (!watch([&] { return active_.load(std::memory_order_acquire) == 0; }, MAX_GAP_US)) {
    std::unique_lock<std::mutex> lock(sync_->mutex);
    sync_->done.wait(lock, [&] { return active_ == 0; });
  }
  returned_ = std::chrono::steady_clock::now();
  if (error_) std::rethrow_exception(error_);  // every worker is out: only this thread reads it
}

void WorkerPool::split(int n, int chunk, int threads, const std::function<void(int, int)>& body) {
  const int chunks = (n + chunk - 1) / chunk;
  for (int t = 0; t < threads; ++t) {
    shares_[t].next.store(t * chunks / threads, std::memory_order_relaxed);
    shares_[t].end = (t + 1) * chunks / threads;
  }
  run(threads, [&](int me) {
    for (int k = 0; k < threads; ++k) {  // its own share first, then the others'
      Share& share = shares_[(me + k) % threads];
      for (int i = share.next.fetch_add(1); i < share.end; i = share.next.fetch_add(1)) {
        if (failed_.load(std::memory_order_relaxed)) return;
        body(i * chunk, std::min(n, (i + 1) * chunk));
      }
    }
  });
}

}  // namespace moonriver
