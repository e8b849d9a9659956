#include "ThreadPool.h"

namespace wsc::runtime::detail {

ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned i = 1; i < threads; ++i)
    workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void ThreadPool::drain(unsigned id) {
  for (size_t i = next_.fetch_add(1); i < count_; i = next_.fetch_add(1))
    (*fn_)(i, id);
}

void ThreadPool::worker(unsigned id) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_)
      return;
    seen = generation_;
    lock.unlock();
    drain(id);
    lock.lock();
    if (++finished_ == workers_.size())
      done_.notify_all();
  }
}

void ThreadPool::parallelFor(size_t count, const std::function<void(size_t)> &fn, bool parallel) {
  parallelFor(count, std::function<void(size_t, unsigned)>([&](size_t i, unsigned) { fn(i); }),
              parallel);
}

void ThreadPool::parallelFor(size_t count, const std::function<void(size_t, unsigned)> &fn,
                             bool parallel) {
  if (!parallel || workers_.empty() || count < 2) {
    for (size_t i = 0; i < count; ++i)
      fn(i, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    count_ = count;
    next_.store(0);
    finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  drain(0);
  // Every worker takes part in every generation, so none can still hold `fn`.
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return finished_ == workers_.size(); });
  fn_ = nullptr;
}

} // namespace wsc::runtime::detail
