// Integrity digests of a .wafer program, section by section: written by the
// compiler, checked by the runtime when it loads a file. Part of the format
// library (wsc_wafer_proto), so both sides compute them with the same code.
#ifndef WSC_FORMAT_DIGEST_H
#define WSC_FORMAT_DIGEST_H

#include "wafer.pb.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace wsc::format {

/// XXH64 (https://github.com/Cyan4973/xxHash, the 64-bit variant), fed piece
/// by piece: the digest of the concatenation of everything fed.
class Xxh64 {
public:
  explicit Xxh64(uint64_t seed = 0);
  void update(const void *data, size_t size);
  uint64_t digest() const;
  static uint64_t of(const void *data, size_t size, uint64_t seed = 0);

private:
  uint64_t v_[4];
  uint64_t seed_, total_ = 0;
  unsigned char buf_[32];
  size_t used_ = 0;
};

/// The sram_init section's digest, fed as the images come: for each region
/// in order, `region` with its count of inits, then for each init `image`
/// and its bytes, in any pieces.
class SramInitDigest {
public:
  void region(uint64_t inits);
  void image(uint32_t px, uint32_t py, uint32_t offset, uint64_t size);
  void bytes(const void *data, size_t size) { h_.update(data, size); }
  uint64_t digest() const { return h_.digest(); }

private:
  Xxh64 h_;
};

/// The digests of `program`'s sections (see SectionDigests in wafer.proto
/// and the canonical byte streams in Digest.cpp); `program.digests` itself is
/// not read.
SectionDigests computeDigests(const Program &program);

/// "" when `program` has no digests or they all match its content; else the
/// name of the first section that does not match ("code", "routes",
/// "sram_init", "external", "host"), or "digests" when one is missing.
/// `sramInit`, when given, is the sram_init digest of the images that
/// `program` does not hold (a loader's SramInitDigest).
std::string mismatchedSection(const Program &program, const uint64_t *sramInit = nullptr);

} // namespace wsc::format

#endif
