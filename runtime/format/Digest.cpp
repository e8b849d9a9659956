// Section digests of a .wafer program. Each section is hashed as a byte
// stream built from the values of its fields, never from the file's bytes,
// so that any writer can produce it. In the streams below every integer is
// little-endian, u32 or u64 as said; a string or bytes field is its u64
// length and then its bytes; a message "serialized" is its u64 length and
// then protobuf's serialization of it, fields in field-number order (what
// SerializeToString gives for these messages, which hold no maps).
//
//   code:      per wafer: u32 index, u64 regions; per region: name, kind,
//              u32 x, y, w, h, sram_bytes_per_pe, u64 instructions, each
//              Instr serialized, u64 filters, each u32 px, py, color,
//              first, count, period
//   routes:    per wafer: u32 index, u64 routes, each u32 x, y, color, in,
//              out_mask, u64 dead PEs, each u32 x, y; then u64 links, each
//              u32 src_wafer, src_x, src_y, color, dst_wafer, dst_x, dst_y,
//              dst_color
//   sram_init: per wafer, per region: u64 inits, each u32 px, py, offset and
//              the data bytes
//   external:  u64 blobs, each u32 id and the data bytes
//   host:      u32 format_version, the Arch serialized, u64 inputs, each
//              HostTensor serialized, u64 outputs, each serialized, u32 tokens,
//              then, only when the program has `generation`, it serialized,
//              then, only when estimated_cycles is not 0, u64 estimated_cycles
#include "wsc/format/Digest.h"

#include <cstring>

namespace wsc::format {
namespace {

constexpr uint64_t P1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t P2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t P3 = 0x165667B19E3779F9ULL;
constexpr uint64_t P4 = 0x85EBCA77C2B2AE63ULL;
constexpr uint64_t P5 = 0x27D4EB2F165667C5ULL;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t read64(const unsigned char *p) {
  uint64_t v;
  std::memcpy(&v, p, 8); // little-endian hosts only, as the format
  return v;
}
inline uint32_t read32(const unsigned char *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t round(uint64_t acc, uint64_t input) {
  acc += input * P2;
  acc = rotl(acc, 31);
  return acc * P1;
}
inline uint64_t merge(uint64_t acc, uint64_t v) {
  acc ^= round(0, v);
  return acc * P1 + P4;
}

/// Builds a section's stream in a small buffer, hashing it as it fills.
class Stream {
public:
  void u32(uint32_t v) { put(&v, 4); }
  void u64(uint64_t v) { put(&v, 8); }
  void bytes(const std::string &s) {
    u64(s.size());
    if (s.size() < sizeof buf_ / 4) {
      put(s.data(), s.size());
      return;
    }
    flush();
    h_.update(s.data(), s.size());
  }
  template <typename M> void message(const M &m) {
    m.SerializeToString(&scratch_);
    bytes(scratch_);
  }
  uint64_t digest() {
    flush();
    return h_.digest();
  }

private:
  void put(const void *p, size_t n) {
    if (used_ + n > sizeof buf_)
      flush();
    std::memcpy(buf_ + used_, p, n);
    used_ += n;
  }
  void flush() {
    h_.update(buf_, used_);
    used_ = 0;
  }
  Xxh64 h_;
  unsigned char buf_[4096];
  size_t used_ = 0;
  std::string scratch_;
};

} // namespace

Xxh64::Xxh64(uint64_t seed) : seed_(seed) {
  v_[0] = seed + P1 + P2;
  v_[1] = seed + P2;
  v_[2] = seed;
  v_[3] = seed - P1;
}

void Xxh64::update(const void *data, size_t size) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  const unsigned char *end = p + size;
  total_ += size;
  if (used_ + size < 32) {
    if (size)
      std::memcpy(buf_ + used_, p, size);
    used_ += size;
    return;
  }
  if (used_) {
    size_t take = 32 - used_;
    std::memcpy(buf_ + used_, p, take);
    p += take;
    for (int i = 0; i < 4; ++i)
      v_[i] = round(v_[i], read64(buf_ + 8 * i));
    used_ = 0;
  }
  for (; p + 32 <= end; p += 32)
    for (int i = 0; i < 4; ++i)
      v_[i] = round(v_[i], read64(p + 8 * i));
  used_ = size_t(end - p);
  if (used_)
    std::memcpy(buf_, p, used_);
}

uint64_t Xxh64::digest() const {
  uint64_t h;
  if (total_ >= 32) {
    h = rotl(v_[0], 1) + rotl(v_[1], 7) + rotl(v_[2], 12) + rotl(v_[3], 18);
    for (int i = 0; i < 4; ++i)
      h = merge(h, v_[i]);
  } else {
    h = seed_ + P5;
  }
  h += total_;
  const unsigned char *p = buf_, *end = buf_ + used_;
  for (; p + 8 <= end; p += 8) {
    h ^= round(0, read64(p));
    h = rotl(h, 27) * P1 + P4;
  }
  if (p + 4 <= end) {
    h ^= uint64_t(read32(p)) * P1;
    h = rotl(h, 23) * P2 + P3;
    p += 4;
  }
  for (; p < end; ++p) {
    h ^= uint64_t(*p) * P5;
    h = rotl(h, 11) * P1;
  }
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

uint64_t Xxh64::of(const void *data, size_t size, uint64_t seed) {
  Xxh64 h(seed);
  h.update(data, size);
  return h.digest();
}

void SramInitDigest::region(uint64_t inits) { h_.update(&inits, 8); }

void SramInitDigest::image(uint32_t px, uint32_t py, uint32_t offset, uint64_t size) {
  for (uint32_t v : {px, py, offset})
    h_.update(&v, 4);
  h_.update(&size, 8);
}

SectionDigests computeDigests(const Program &p) {
  SectionDigests d;
  Stream code, routes, external, host;
  SramInitDigest init;
  for (const Wafer &w : p.wafers()) {
    code.u32(w.index());
    code.u64(uint64_t(w.regions_size()));
    for (const Region &r : w.regions()) {
      code.bytes(r.name());
      code.bytes(r.kind());
      for (uint32_t v : {r.x(), r.y(), r.w(), r.h(), r.sram_bytes_per_pe()})
        code.u32(v);
      code.u64(uint64_t(r.code_size()));
      for (const Instr &in : r.code())
        code.message(in);
      code.u64(uint64_t(r.filters_size()));
      for (const Filter &f : r.filters())
        for (uint32_t v : {f.px(), f.py(), f.color(), f.first(), f.count(), f.period()})
          code.u32(v);
      init.region(uint64_t(r.init_size()));
      for (const SramInit &s : r.init()) {
        init.image(s.px(), s.py(), s.offset(), s.data().size());
        init.bytes(s.data().data(), s.data().size());
      }
    }
    routes.u32(w.index());
    routes.u64(uint64_t(w.routes_size()));
    for (const Route &r : w.routes())
      for (uint32_t v : {r.x(), r.y(), r.color(), uint32_t(r.in()), r.out_mask()})
        routes.u32(v);
    routes.u64(uint64_t(w.dead_pes_size()));
    for (const Pe &pe : w.dead_pes()) {
      routes.u32(pe.x());
      routes.u32(pe.y());
    }
  }
  routes.u64(uint64_t(p.links_size()));
  for (const InterWaferLink &l : p.links())
    for (uint32_t v : {l.src_wafer(), l.src_x(), l.src_y(), l.color(), l.dst_wafer(), l.dst_x(),
                       l.dst_y(), l.dst_color()})
      routes.u32(v);
  external.u64(uint64_t(p.external_size()));
  for (const ExternalBlob &b : p.external()) {
    external.u32(b.id());
    external.bytes(b.data());
  }
  host.u32(p.format_version());
  host.message(p.arch());
  host.u64(uint64_t(p.inputs_size()));
  for (const HostTensor &t : p.inputs())
    host.message(t);
  host.u64(uint64_t(p.outputs_size()));
  for (const HostTensor &t : p.outputs())
    host.message(t);
  host.u32(p.tokens());
  // Absent, nothing: the streams of programs that do not generate are unchanged.
  if (p.has_generation())
    host.message(p.generation());
  if (p.estimated_cycles())
    host.u64(p.estimated_cycles());
  d.set_code(code.digest());
  d.set_routes(routes.digest());
  d.set_sram_init(init.digest());
  d.set_external(external.digest());
  d.set_host(host.digest());
  return d;
}

std::string mismatchedSection(const Program &p, const uint64_t *sramInit) {
  if (!p.has_digests())
    return "";
  const SectionDigests &want = p.digests();
  if (!want.has_code() || !want.has_routes() || !want.has_sram_init() || !want.has_external() ||
      !want.has_host())
    return "digests";
  SectionDigests have = computeDigests(p);
  if (sramInit)
    have.set_sram_init(*sramInit);
  if (have.code() != want.code())
    return "code";
  if (have.routes() != want.routes())
    return "routes";
  if (have.sram_init() != want.sram_init())
    return "sram_init";
  if (have.external() != want.external())
    return "external";
  if (have.host() != want.host())
    return "host";
  return "";
}

} // namespace wsc::format
