// The run's SRAM, kernel by kernel (KernelSram.h).
#include "KernelSram.h"

#include "HugePages.h"

#include <sys/mman.h>

namespace wsc::runtime::detail {
namespace {

uint64_t alignUp(uint64_t bytes) { return (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1); }

/// The PEs that hold a piece of an output.
std::vector<bool> outputPes(const Model &m) {
  std::vector<bool> holds(m.numPes);
  for (const TensorRef &t : m.outputs)
    for (const PieceRef &p : t.pieces)
      holds[p.pe] = true;
  return holds;
}

} // namespace

KernelSram::KernelSram(const Model &m, PeStates &pes, const std::function<bool(uint64_t)> &owned,
                       Load load)
    : kernels_(m.regions.size()), load_(std::move(load)) {
  // Byte offsets from base_ first: the outputs' PEs, then each region's others.
  std::vector<bool> kept = outputPes(m);
  std::vector<uint64_t> at(m.numPes);
  uint64_t bytes = 0;
  for (uint64_t pe = 0; pe < m.numPes; ++pe)
    if (kept[pe])
      at[pe] = bytes, bytes += uint64_t(m.sramWords[pe]) * 4;
  for (size_t r = 0; r < m.regions.size(); ++r) {
    const Region &reg = m.regions[r];
    uint64_t first = reg.firstPe, end = first + uint64_t(reg.w) * reg.h, size = 0;
    for (uint64_t pe = first; pe < end; ++pe)
      size += kept[pe] ? 0 : uint64_t(m.sramWords[pe]) * 4;
    // A small kernel shares its pages and keeps them: a page each would
    // take a thousand small kernels' address space by the gigabyte.
    Kernel &k = kernels_[r];
    bool own = size >= kHugePageBytes;
    k.lo = bytes = own ? alignUp(bytes) : bytes;
    for (uint64_t pe = first; pe < end; ++pe) {
      k.running += owned(pe) ? 1 : 0;
      if (!kept[pe])
        at[pe] = bytes, bytes += uint64_t(m.sramWords[pe]) * 4;
    }
    if (own)
      bytes = alignUp(bytes);
    k.hi = own ? bytes : k.lo;
  }
  mapBytes_ = alignUp(bytes) + kHugePageBytes;
  map_ = static_cast<char *>(mapHugePages(mapBytes_));
  base_ = map_ + (alignUp(uintptr_t(map_)) - uintptr_t(map_));
  for (uint64_t pe = 0; pe < m.numPes; ++pe) {
    pes[pe].sram = reinterpret_cast<uint32_t *>(base_ + at[pe]);
    pes[pe].sramWords = m.sramWords[pe];
  }
}

KernelSram::~KernelSram() { ::munmap(map_, mapBytes_); }

Status KernelSram::load(uint32_t r) {
  std::lock_guard<std::mutex> lock(mu_);
  Kernel &k = kernels_[r];
  if (k.loaded.load(std::memory_order_relaxed))
    return Status::success();
  if (Status s = load_(r); !s)
    return s;
  k.loaded.store(true, std::memory_order_release);
  return Status::success();
}

void KernelSram::ended(uint32_t r) {
  Kernel &k = kernels_[r];
  if (k.running.fetch_sub(1, std::memory_order_acq_rel) == 1 && k.hi > k.lo)
    ::madvise(base_ + k.lo, k.hi - k.lo, MADV_DONTNEED);
}

} // namespace wsc::runtime::detail
