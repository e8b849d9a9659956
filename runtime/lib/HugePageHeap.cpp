// Starting a tool again with glibc's heap in transparent huge pages (HugePageHeap.h).
#include "wsc/runtime/HugePageHeap.h"

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
} // namespace

std::optional<std::string> hugePageHeapTunables(const char *tunables, uint64_t inputBytes) {
  if (inputBytes < kHugePageHeapInput || (tunables && std::strstr(tunables, kTunable)))
    return std::nullopt;
  std::string set = tunables && *tunables ? std::string(tunables) + ":" : std::string();
  return set + kTunable + "=1";
}

void restartWithHugePageHeap(const std::string &path, char **argv) {
#if defined(__GLIBC__) && !defined(WSC_ASAN)
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return;
  std::optional<std::string> set =
      hugePageHeapTunables(std::getenv("GLIBC_TUNABLES"), uint64_t(st.st_size));
  if (set && ::setenv("GLIBC_TUNABLES", set->c_str(), 1) == 0)
    ::execv("/proc/self/exe", argv);
#else
  // Another allocator (a sanitizer's, or not glibc's) does not read the tunable.
  (void)path, (void)argv;
#endif
}

} // namespace wsc::runtime
