// A program's SRAM images (the weights) left in its file when it loads, and
// read from there as their kernel starts: the host holds a kernel's weights
// only while the kernel runs.
#ifndef WSC_RUNTIME_LIB_SRAMIMAGES_H
#define WSC_RUNTIME_LIB_SRAMIMAGES_H

#include "wafer.pb.h"
#include "wsc/runtime/Status.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace wsc::runtime::detail {

/// Where each `SramInit`'s words lie in a program's file.
class SramImageFile {
public:
  /// Parses the program in `fd` (a regular file named `path`, of at most
  /// 2 GiB) as Program::ParseFromZeroCopyStream would, but leaves each
  /// SramInit's `data` empty: the result's index says where it lies.
  /// `sramInitDigest`: the images' sram_init digest (format::SramInitDigest).
  /// False when the bytes are not a Program, or could not be read (then
  /// `readErrno` is the error).
  static bool parse(int fd, const std::string &path, format::Program &program,
                    std::unique_ptr<SramImageFile> &images, uint64_t &sramInitDigest,
                    int &readErrno);
  ~SramImageFile();
  SramImageFile(const SramImageFile &) = delete;
  SramImageFile &operator=(const SramImageFile &) = delete;

  /// The bytes of init `i` of region `region` of wafer `wafer`.
  uint64_t size(uint32_t wafer, uint32_t region, int i) const {
    return kernels_[wafer][region].images[size_t(i)].size;
  }
  /// One image: the PE's local (px, py) and SRAM byte offset, its bytes.
  using Visit = std::function<void(uint32_t px, uint32_t py, uint32_t offset, const char *bytes,
                                   size_t size)>;
  /// Reads the images of region `region` of wafer `wafer` in order; an
  /// error naming the file when it no longer holds them.
  Status read(uint32_t wafer, uint32_t region, const Visit &visit) const;
  /// The host memory the index takes.
  uint64_t bytes() const;
  /// The images' bytes, which the file holds.
  uint64_t imageBytes() const;

private:
  struct Image {
    uint32_t px, py, offset; ///< where it goes
    uint32_t at, size;       ///< where it is in the file
  };
  struct Kernel {
    std::string name;
    std::vector<Image> images;
    uint64_t digest = 0; ///< XXH64 of the images' bytes, in order
  };
  class Parser;
  SramImageFile() = default;
  /// Reads kernel `k`'s images, calling `fn` on each; `digest`: of their
  /// bytes. False when the file does not hold them all.
  bool scan(const Kernel &k, uint64_t &digest,
            const std::function<void(const Image &, const char *)> &fn) const;
  std::string path_;
  int fd_ = -1;
  std::vector<std::vector<Kernel>> kernels_; ///< per wafer, per region
};

} // namespace wsc::runtime::detail

#endif
