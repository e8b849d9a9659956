// Starting a tool again with glibc's heap in transparent huge pages.
#ifndef WSC_RUNTIME_HUGEPAGEHEAP_H
#define WSC_RUNTIME_HUGEPAGEHEAP_H

#include <cstdint>
#include <optional>
#include <string>

namespace wsc::runtime {

/// Inputs from this size on are worth a second start: their heap is
/// gigabytes, where a fault per 4 KiB page costs seconds, and a start costs
/// tens of milliseconds.
constexpr uint64_t kHugePageHeapInput = 32ull << 20;

/// The GLIBC_TUNABLES to start again with so that glibc's heap is in 2 MiB
/// transparent huge pages (its glibc.malloc.hugetlb=1 added to `tunables`,
/// which may be null), or nullopt: an input smaller than kHugePageHeapInput,
/// or tunables that already set glibc.malloc.hugetlb (the user's choice, or
/// the second start).
std::optional<std::string> hugePageHeapTunables(const char *tunables, uint64_t inputBytes);

/// For a tool whose main input is the file at `path`: starts the process
/// again (exec of /proc/self/exe with `argv`, main's own) with those
/// tunables, since glibc reads them at startup only. Returns when it does
/// not: no restart is due, the input is not a regular file, or exec failed.
/// Call it before the input is read.
void restartWithHugePageHeap(const std::string &path, char **argv);

/// The same for a tool whose input is one of its arguments, unparsed yet:
/// by the largest regular file that an argument names.
void restartWithHugePageHeapForArgs(int argc, char **argv);

} // namespace wsc::runtime

#endif
