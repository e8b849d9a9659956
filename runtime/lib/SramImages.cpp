// A program parsed without its SRAM images, which stay in its file: the
// parse walks the encoding down to each SramInit's `data`, notes where it
// lies and skips it, and leaves every other field to protobuf.
#include "SramImages.h"

#include "wsc/format/Digest.h"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <cerrno>

#include <sys/stat.h>
#include <unistd.h>

namespace wsc::runtime::detail {
namespace {

using google::protobuf::io::CodedInputStream;

// Field numbers in wafer.proto on the way to an image's words.
constexpr uint32_t kProgramWafers = 3, kWaferRegions = 2, kRegionInit = 9, kInitData = 4;
enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5
};
constexpr uint32_t tagOf(uint32_t field) { return field << 3 | kLengthDelimited; }
/// As protobuf's parser nests groups at most.
constexpr int kMaxGroupDepth = 100;

void putVarint(std::string &out, uint64_t v) {
  for (; v >= 0x80; v >>= 7)
    out.push_back(char(v | 0x80));
  out.push_back(char(v));
}

bool preadAll(int fd, char *to, size_t size, uint64_t at) {
  while (size) {
    ssize_t got = ::pread(fd, to, size, off_t(at));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return false;
    to += got, at += uint64_t(got), size -= size_t(got);
  }
  return true;
}

} // namespace

/// Parses a Program from a file, leaving out the images' words.
class SramImageFile::Parser {
public:
  Parser(CodedInputStream &in, uint64_t fileBytes, SramImageFile &index)
      : in_(in), fileBytes_(fileBytes), index_(index) {}

  bool program(format::Program &p) {
    std::string raw;
    return fields(raw, tagOf(kProgramWafers),
                  [&] { return wafer(*p.add_wafers(), index_.kernels_.emplace_back()); }) &&
           p.MergeFromString(raw);
  }

private:
  bool wafer(format::Wafer &w, std::vector<Kernel> &kernels) {
    std::string raw;
    return fields(raw, tagOf(kWaferRegions),
                  [&] { return region(*w.add_regions(), kernels.emplace_back()); }) &&
           w.MergeFromString(raw);
  }
  bool region(format::Region &r, Kernel &k) {
    std::string raw;
    bool ok = fields(raw, tagOf(kRegionInit),
                     [&] { return init(*r.add_init(), k.images.emplace_back()); }) &&
              r.MergeFromString(raw);
    k.name = r.name();
    return ok;
  }
  /// The words are skipped (the last `data` counts, as protobuf's does).
  bool init(format::SramInit &s, Image &im) {
    std::string raw;
    im = Image{};
    bool ok = fields(raw, tagOf(kInitData),
                     [&] {
                       im.at = uint32_t(in_.CurrentPosition());
                       im.size = uint32_t(in_.BytesUntilLimit());
                       return in_.Skip(int(im.size));
                     }) &&
              s.MergeFromString(raw);
    im.px = s.px(), im.py = s.py(), im.offset = s.offset();
    return ok;
  }
  /// Reads the fields of the message being read, to its end: each field of
  /// `tag` by `inner`, within the limit of its length; the others' encoding
  /// into `raw`, for protobuf to merge.
  template <typename Inner> bool fields(std::string &raw, uint32_t tag, Inner inner) {
    while (uint32_t t = in_.ReadTag()) {
      if (t != tag) {
        if (!copyField(t, raw, 0))
          return false;
        continue;
      }
      uint32_t length;
      if (!in_.ReadVarint32(&length) || length > left())
        return false;
      CodedInputStream::Limit limit = in_.PushLimit(int(length));
      bool ok = inner() && in_.BytesUntilLimit() == 0;
      in_.PopLimit(limit);
      if (!ok)
        return false;
    }
    return in_.ConsumedEntireMessage();
  }
  /// Appends the encoding of a field of tag `t` (its tag read) to `raw`.
  bool copyField(uint32_t t, std::string &raw, int depth) {
    putVarint(raw, t);
    uint64_t v;
    uint32_t length;
    switch (t & 7) {
    case kVarint:
      if (!in_.ReadVarint64(&v))
        return false;
      putVarint(raw, v);
      return true;
    case kFixed64:
      return copyRaw(8, raw);
    case kFixed32:
      return copyRaw(4, raw);
    case kLengthDelimited:
      if (!in_.ReadVarint32(&length) || length > left())
        return false;
      putVarint(raw, length);
      return copyRaw(length, raw);
    case kStartGroup:
      if (depth == kMaxGroupDepth)
        return false;
      while (uint32_t inner = in_.ReadTag()) {
        if ((inner & 7) == kEndGroup) {
          putVarint(raw, inner);
          return inner >> 3 == t >> 3;
        }
        if (!copyField(inner, raw, depth + 1))
          return false;
      }
      return false;
    default: // an end of a group that did not start
      return false;
    }
  }
  bool copyRaw(uint32_t bytes, std::string &raw) {
    size_t at = raw.size();
    raw.resize(at + bytes);
    return in_.ReadRaw(raw.data() + at, int(bytes));
  }
  /// The file's bytes after the stream's place.
  uint64_t left() const { return fileBytes_ - uint64_t(in_.CurrentPosition()); }

  CodedInputStream &in_;
  uint64_t fileBytes_;
  SramImageFile &index_;
};

bool SramImageFile::parse(int fd, const std::string &path, format::Program &program,
                          std::unique_ptr<SramImageFile> &images, uint64_t &sramInitDigest,
                          int &readErrno) {
  readErrno = 0;
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return false;
  images.reset(new SramImageFile());
  images->path_ = path;
  images->fd_ = ::dup(fd);
  {
    google::protobuf::io::FileInputStream raw(fd, 1 << 20);
    CodedInputStream in(&raw);
    bool parsed = images->fd_ >= 0 && Parser(in, uint64_t(st.st_size), *images).program(program);
    readErrno = raw.GetErrno();
    if (!parsed)
      return false;
  }
  // The digests, from a second read of the images.
  format::SramInitDigest all;
  for (std::vector<Kernel> &wafer : images->kernels_)
    for (Kernel &k : wafer) {
      all.region(k.images.size());
      bool read = images->scan(k, k.digest, [&](const Image &im, const char *bytes) {
        all.image(im.px, im.py, im.offset, im.size);
        all.bytes(bytes, im.size);
      });
      if (!read)
        return false;
    }
  sramInitDigest = all.digest();
  return true;
}

SramImageFile::~SramImageFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

bool SramImageFile::scan(const Kernel &k, uint64_t &digest,
                         const std::function<void(const Image &, const char *)> &fn) const {
  // In runs of up to kChunk bytes of the file: a region's images lie one
  // after the other there, between its other fields.
  constexpr uint64_t kChunk = 4 << 20;
  std::vector<char> buffer;
  uint64_t from = 0, to = 0; // the file's bytes in `buffer`
  uint64_t end = k.images.empty() ? 0 : k.images.back().at + uint64_t(k.images.back().size);
  format::Xxh64 h;
  for (const Image &im : k.images) {
    if (im.at < from || im.at + uint64_t(im.size) > to) {
      from = im.at;
      to = from + std::max<uint64_t>(im.size, std::min(kChunk, std::max(end, from) - from));
      buffer.resize(to - from);
      if (!preadAll(fd_, buffer.data(), buffer.size(), from))
        return false;
    }
    const char *bytes = buffer.data() + (im.at - from);
    h.update(bytes, im.size);
    fn(im, bytes);
  }
  digest = h.digest();
  return true;
}

Status SramImageFile::read(uint32_t wafer, uint32_t region, const Visit &visit) const {
  const Kernel &k = kernels_[wafer][region];
  uint64_t digest;
  bool read = scan(k, digest, [&](const Image &im, const char *bytes) {
    visit(im.px, im.py, im.offset, bytes, im.size);
  });
  if (!read || digest != k.digest)
    return Status::failure(fmt::format("{}: changed since it loaded: the SRAM images of kernel "
                                       "'{}' differ from those checked then",
                                       path_, k.name));
  return Status::success();
}

uint64_t SramImageFile::bytes() const {
  uint64_t bytes = sizeof(*this);
  for (const std::vector<Kernel> &wafer : kernels_)
    for (const Kernel &k : wafer)
      bytes += sizeof(Kernel) + k.images.capacity() * sizeof(Image) + k.name.capacity();
  return bytes;
}

uint64_t SramImageFile::imageBytes() const {
  uint64_t bytes = 0;
  for (const std::vector<Kernel> &wafer : kernels_)
    for (const Kernel &k : wafer)
      for (const Image &im : k.images)
        bytes += im.size;
  return bytes;
}

} // namespace wsc::runtime::detail
