// The run's SRAM, kernel by kernel: a kernel's words are on the host only
// while the kernel runs.
#ifndef WSC_RUNTIME_LIB_KERNELSRAM_H
#define WSC_RUNTIME_LIB_KERNELSRAM_H

#include "Machine.h"

#include <atomic>
#include <functional>
#include <mutex>
#include <vector>

namespace wsc::runtime::detail {

/// Every PE's SRAM in one zeroed mapping: a kernel's images are copied in
/// when one of its PEs first runs, and a kernel of 2 MB or more has pages
/// of its own, which go back to the host when its last PE ends. The PEs
/// that hold an output come first and keep their words to the end. A
/// pipeline's kernels run and end in turn, so the host holds the weights
/// of the kernels running, not all of them.
class KernelSram {
public:
  /// Copies region `r`'s images into its PEs' SRAM.
  using Load = std::function<Status(uint32_t r)>;
  /// Gives every PE that runs a kernel its SRAM (PeState::sram and
  /// sramWords); `owned(pe)`: the PEs this process runs.
  KernelSram(const Model &m, PeStates &pes, const std::function<bool(uint64_t)> &owned, Load load);
  ~KernelSram();
  KernelSram(const KernelSram &) = delete;
  KernelSram &operator=(const KernelSram &) = delete;

  /// Before a PE of region `r` runs: its kernel's images are in SRAM.
  Status enter(uint32_t r) {
    return kernels_[r].loaded.load(std::memory_order_acquire) ? Status::success() : load(r);
  }
  /// A PE of region `r` ended; after the last, the region's pages go back.
  void ended(uint32_t r);

private:
  Status load(uint32_t r);
  struct Kernel {
    std::atomic<bool> loaded{false};
    std::atomic<uint64_t> running{0}; ///< owned PEs not ended
    uint64_t lo = 0, hi = 0;          ///< its own pages, in bytes from base_ (none: lo = hi)
  };
  std::vector<Kernel> kernels_;
  Load load_;
  std::mutex mu_;
  char *map_ = nullptr, *base_ = nullptr; ///< base_: map_ on a 2 MB page
  size_t mapBytes_ = 0;
};

} // namespace wsc::runtime::detail

#endif
