// The tunables a tool starts again with for a heap in huge pages.
#include "wsc/runtime/HugePageHeap.h"

#include <gtest/gtest.h>

using namespace wsc::runtime;

TEST(HugePageHeap, AddsTheTunableForALargeInput) {
  EXPECT_EQ(hugePageHeapTunables(nullptr, kHugePageHeapInput), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(hugePageHeapTunables("", kHugePageHeapInput), "glibc.malloc.hugetlb=1");
}

TEST(HugePageHeap, KeepsTheTunablesItWasGiven) {
  EXPECT_EQ(hugePageHeapTunables("glibc.malloc.tcache_count=0", 1ull << 30),
            "glibc.malloc.tcache_count=0:glibc.malloc.hugetlb=1");
}

TEST(HugePageHeap, NoRestartForASmallInputOrAHugetlbAlreadySet) {
  EXPECT_FALSE(hugePageHeapTunables(nullptr, kHugePageHeapInput - 1));
  // The user's choice, and the second start: never a third.
  EXPECT_FALSE(hugePageHeapTunables("glibc.malloc.hugetlb=0", 1ull << 30));
  EXPECT_FALSE(
      hugePageHeapTunables("glibc.malloc.tcache_count=0:glibc.malloc.hugetlb=1", 1ull << 30));
}
