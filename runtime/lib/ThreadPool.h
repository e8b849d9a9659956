// A minimal fork-join pool: parallelFor hands out indices dynamically.
// Which thread runs an index never matters to the emulator's results.
#ifndef WSC_RUNTIME_LIB_THREADPOOL_H
#define WSC_RUNTIME_LIB_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace wsc::runtime::detail {

class ThreadPool {
public:
  /// `threads` counts the calling thread too.
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  /// Calls fn(i) for every i < count and returns when all calls are done.
  /// With `parallel` false every call runs on the calling thread (worker 0):
  /// for work too small to pay for waking the workers.
  void parallelFor(size_t count, const std::function<void(size_t)> &fn, bool parallel = true);
  /// The same, with the calling worker's id in [0, threads()): fn(i, worker).
  void parallelFor(size_t count, const std::function<void(size_t, unsigned)> &fn,
                   bool parallel = true);
  unsigned threads() const { return unsigned(workers_.size()) + 1; }

private:
  void worker(unsigned id);
  void drain(unsigned id);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  size_t finished_ = 0; ///< workers done with the current generation
  const std::function<void(size_t, unsigned)> *fn_ = nullptr;
  size_t count_ = 0;
  std::atomic<size_t> next_{0};
};

} // namespace wsc::runtime::detail

#endif
