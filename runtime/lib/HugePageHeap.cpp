// Starting a tool again with glibc's heap in transparent huge pages (HugePageHeap.h).
#include "wsc/runtime/HugePageHeap.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WSC_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define WSC_ASAN 1
#endif

namespace wsc::runtime {

namespace {

constexpr const char *kTunable = "glibc.malloc.hugetlb";

/// The size of the regular file at `path`, or 0.
uint64_t regularFileBytes(const char *path) {
  struct stat st;
  return ::stat(path, &st) == 0 && S_ISREG(st.st_mode) ? uint64_t(st.st_size) : 0;
}

void restart(uint64_t inputBytes, char **argv) {
#if defined(__GLIBC__) && !defined(WSC_ASAN)
  std::optional<std::string> set = hugePageHeapTunables(std::getenv("GLIBC_TUNABLES"), inputBytes);
  if (set && ::setenv("GLIBC_TUNABLES", set->c_str(), 1) == 0)
    ::execv("/proc/self/exe", argv);
#else
  // Another allocator (a sanitizer's, or not glibc's) does not read the tunable.
  (void)inputBytes, (void)argv;
#endif
}

} // namespace

std::optional<std::string> hugePageHeapTunables(const char *tunables, uint64_t inputBytes) {
  if (inputBytes < kHugePageHeapInput || (tunables && std::strstr(tunables, kTunable)))
    return std::nullopt;
  std::string set = tunables && *tunables ? std::string(tunables) + ":" : std::string();
  return set + kTunable + "=1";
}

void restartWithHugePageHeap(const std::string &path, char **argv) {
  restart(regularFileBytes(path.c_str()), argv);
}

void restartWithHugePageHeapForArgs(int argc, char **argv) {
  uint64_t largest = 0;
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-')
      largest = std::max(largest, regularFileBytes(argv[i]));
  restart(largest, argv);
}

} // namespace wsc::runtime
