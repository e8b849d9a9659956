// Large host arrays in 2 MB pages where the host allows them: the emulator
// fills arrays of hundreds of megabytes (PE states, router slots, receive
// queues), and a fresh 4 KB page costs a fault each, which on a virtual
// machine takes microseconds.
#ifndef WSC_RUNTIME_LIB_HUGEPAGES_H
#define WSC_RUNTIME_LIB_HUGEPAGES_H

#include <cstddef>
#include <new>

#include <sys/mman.h>

namespace wsc::runtime::detail {

/// Below this an allocation comes from the heap.
constexpr size_t kHugePageBytes = size_t(2) << 20;

/// A zeroed anonymous mapping of `bytes`, advised to use huge pages; throws
/// std::bad_alloc when the host has no room.
inline void *mapHugePages(size_t bytes) {
  void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw std::bad_alloc();
  ::madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

/// A std::vector allocator that maps large arrays with mapHugePages.
template <typename T> struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U> HugePageAllocator(const HugePageAllocator<U> &) {}
  T *allocate(size_t n) {
    size_t bytes = n * sizeof(T);
    if (bytes >= kHugePageBytes)
      return static_cast<T *>(mapHugePages(bytes));
    return static_cast<T *>(::operator new(bytes, std::align_val_t(alignof(T))));
  }
  void deallocate(T *p, size_t n) {
    size_t bytes = n * sizeof(T);
    if (bytes >= kHugePageBytes)
      ::munmap(p, bytes);
    else
      ::operator delete(p, std::align_val_t(alignof(T)));
  }
  template <typename U> bool operator==(const HugePageAllocator<U> &) const { return true; }
  template <typename U> bool operator!=(const HugePageAllocator<U> &) const { return false; }
};

} // namespace wsc::runtime::detail

#endif
