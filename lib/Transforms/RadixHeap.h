//===- RadixHeap.h - a min-queue for monotone float keys --------*- C++ -*-===//
//
// The router's searches pop their keys in nondecreasing order: A* with a
// consistent heuristic (distance, with every hop costing at least 1) and
// Dijkstra both do. A radix heap uses that: a push files an item by the
// highest bit in which its key differs from the last key popped, and a pop
// only redistributes the lowest nonempty bucket. Both are cheap next to a
// binary heap's sift, which took half of the router's time. Equal keys pop
// newest first, so a search prefers the deeper of two equally good nodes.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_TRANSFORMS_RADIXHEAP_H
#define WSC_LIB_TRANSFORMS_RADIXHEAP_H

#include "llvm/ADT/bit.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace wsc::route {

template <typename T> class RadixHeap {
public:
  bool empty() const { return count == 0; }

  /// Drops every item; keeps the buckets' storage for the next search.
  void clear() {
    for (auto &b : buckets)
      b.clear();
    last = 0;
    count = 0;
  }

  /// Adds `value` at `key` (>= 0). A key below the last popped one (a
  /// rounding step of float sums) is filed at the last popped key.
  void push(float key, T value) {
    uint32_t k = std::max(llvm::bit_cast<uint32_t>(std::max(key, 0.0f)), last);
    buckets[bucketOf(k)].push_back({k, value});
    ++count;
  }

  /// Removes an item of the smallest key; returns the key and the item.
  std::pair<float, T> pop() {
    if (buckets[0].empty()) {
      size_t i = 1;
      while (buckets[i].empty())
        ++i;
      auto &from = buckets[i];
      last = std::min_element(from.begin(), from.end(),
                              [](const auto &a, const auto &b) { return a.first < b.first; })
                 ->first;
      for (const auto &item : from)
        buckets[bucketOf(item.first)].push_back(item);
      from.clear();
    }
    auto [k, value] = buckets[0].back();
    buckets[0].pop_back();
    --count;
    return {llvm::bit_cast<float>(k), value};
  }

private:
  /// 0 for the last popped key, else 1 + the highest bit that differs.
  size_t bucketOf(uint32_t k) const { return k == last ? 0 : 32 - llvm::countl_zero(k ^ last); }

  // Nonnegative floats order as their bit patterns do.
  std::array<std::vector<std::pair<uint32_t, T>>, 33> buckets;
  uint32_t last = 0;
  size_t count = 0;
};

} // namespace wsc::route

#endif // WSC_LIB_TRANSFORMS_RADIXHEAP_H
