// What this host's memory costs, printed beside the emulator's figures: the
// emulator's run is bound by dependent loads and by first touches of fresh
// pages, torch's by arithmetic from cache, so the ratio moves with these.
//   host_probe   -> "host: dependent load N ns (512 MiB), fresh page N us (1 GiB)"
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

int main() {
  using Clock = std::chrono::steady_clock;
  // A random cycle through 512 MiB: each load waits for the one before.
  size_t n = size_t(1) << 26;
  std::vector<uint64_t> next(n);
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937_64(1));
  for (size_t i = 0; i < n; ++i)
    next[order[i]] = order[(i + 1) % n];
  uint64_t at = 0, loads = 20'000'000;
  auto t0 = Clock::now();
  for (uint64_t i = 0; i < loads; ++i)
    at = next[at];
  double loadNs = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / loads;
  volatile uint64_t keep = at; // the chain must be walked
  (void)keep;

  // First touches of a fresh 1 GiB anonymous mapping, one word per 4 KiB page.
  size_t bytes = size_t(1) << 30;
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "error: host_probe: cannot map 1 GiB\n");
    return 1;
  }
  volatile char *c = static_cast<char *>(p);
  auto t1 = Clock::now();
  for (size_t i = 0; i < bytes; i += 4096)
    c[i] = 1;
  double pageUs =
      std::chrono::duration<double, std::micro>(Clock::now() - t1).count() / double(bytes / 4096);
  munmap(p, bytes);
  std::printf("host: dependent load %.0f ns (512 MiB), fresh page %.2f us (1 GiB)\n", loadNs,
              pageUs);
  return 0;
}
