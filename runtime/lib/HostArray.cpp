// Host arrays, whole-file I/O and the .npy format (read and write).
#include "wsc/runtime/HostArray.h"

#include "FileIO.h"
#include "wsc/runtime/OutputFiles.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace wsc::runtime {

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::Bool:
    return "bool";
  case DType::F64:
    return "f64";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I8:
    return "i8";
  case DType::I16:
    return "i16";
  case DType::U8:
    return "u8";
  case DType::U16:
    return "u16";
  case DType::U32:
    return "u32";
  case DType::U64:
    return "u64";
  }
  return "?";
}

bool isFloatType(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}

bool isIntegerType(DType t) { return !isFloatType(t) && t != DType::Bool; }

void integerRange(DType t, int64_t &lo, int64_t &hi) {
  switch (t) {
  case DType::Bool:
    lo = 0, hi = 1;
    return;
  case DType::I8:
    lo = INT8_MIN, hi = INT8_MAX;
    return;
  case DType::I16:
    lo = INT16_MIN, hi = INT16_MAX;
    return;
  case DType::I32:
    lo = INT32_MIN, hi = INT32_MAX;
    return;
  case DType::U8:
    lo = 0, hi = UINT8_MAX;
    return;
  case DType::U16:
    lo = 0, hi = UINT16_MAX;
    return;
  case DType::U32:
    lo = 0, hi = UINT32_MAX;
    return;
  case DType::U64:
    lo = 0, hi = INT64_MAX;
    return;
  default:
    lo = INT64_MIN, hi = INT64_MAX;
    return;
  }
}

namespace {

uint32_t floatBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}

float bitsFloat(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

} // namespace

uint16_t floatToHalfBits(float f) {
  uint32_t x = floatBits(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t a = x & 0x7fffffff;
  if (a > 0x7f800000) // NaN: quiet, with the payload's high bits
    return uint16_t(sign | 0x7e00 | ((a >> 13) & 0x3ff));
  // 65520 = f16 max (65504) + half its ulp: a tie, and 65504 is odd, so inf.
  if (a >= 0x477ff000)
    return uint16_t(sign | 0x7c00);
  uint32_t e = a >> 23;
  if (e < 113) {
    // Below 2^-14: an f16 subnormal (units of 2^-24) or zero. Below 2^-25
    // (e < 102), even f32 subnormals, rounds to zero.
    if (e < 102)
      return uint16_t(sign);
    uint32_t m = (a & 0x7fffff) | 0x800000; // value = m * 2^(e - 150)
    uint32_t shift = 126 - e;                // 14..24
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
      ++q; // may carry into the smallest normal, 0x0400: still right
    return uint16_t(sign | q);
  }
  uint32_t h = ((e - 112) << 10) | ((a >> 13) & 0x3ff);
  uint32_t rem = a & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
    ++h; // a carry into the exponent is right; it cannot reach inf (checked above)
  return uint16_t(sign | h);
}

float halfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0x1f)
    return bitsFloat(sign | 0x7f800000 | (m << 13));
  if (e == 0) {
    float v = std::ldexp(float(m), -24);
    return sign ? -v : v;
  }
  return bitsFloat(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t floatToBfloat16Bits(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffff) > 0x7f800000) // NaN: quiet, so that no payload bit is lost into inf
    return uint16_t((x | 0x00400000) >> 16);
  x += 0x7fff + ((x >> 16) & 1); // nearest even; a carry may reach inf, as it should
  return uint16_t(x >> 16);
}

float bfloat16BitsToFloat(uint16_t b) { return bitsFloat(uint32_t(b) << 16); }

float roundToFloatType(DType t, float f) {
  if (t == DType::F16)
    return halfBitsToFloat(floatToHalfBits(f));
  if (t == DType::BF16)
    return bfloat16BitsToFloat(floatToBfloat16Bits(f));
  return f;
}

int64_t HostArray::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

HostArray HostArray::floats(std::vector<int64_t> shape, std::vector<float> data) {
  HostArray a;
  a.shape = std::move(shape);
  a.f32 = std::move(data);
  return a;
}

HostArray HostArray::floats(DType t, std::vector<int64_t> shape, std::vector<float> data) {
  HostArray a = floats(std::move(shape), std::move(data));
  a.dtype = t;
  return a;
}

HostArray HostArray::integers(DType t, std::vector<int64_t> shape, std::vector<int64_t> data) {
  HostArray a;
  a.dtype = t;
  a.shape = std::move(shape);
  a.ints = std::move(data);
  return a;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

namespace detail {

namespace {

const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

Status notRegular(const std::string &path, mode_t mode) {
  return Status::failure(fmt::format("{}: is {}, not a regular file", path, fileKind(mode)));
}

} // namespace

Status openForReading(const std::string &path, int &fd, struct stat &st) {
  fd = -1;
  if (int named = namedDescriptor(path); named >= 0) {
    // Already open: a pipe from the shell is fine, a device or a directory is not.
    fd = ::fcntl(named, F_DUPFD_CLOEXEC, 0);
    if (fd < 0 || ::fstat(fd, &st) != 0) {
      int err = errno;
      if (fd >= 0)
        ::close(fd);
      return Status::failure(fmt::format("{}: cannot open: {}", path, std::strerror(err)));
    }
    if (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
      return Status::success();
    ::close(fd);
    fd = -1;
    return notRegular(path, st.st_mode);
  }
  if (::stat(path.c_str(), &st) != 0)
    return Status::failure(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return notRegular(path, st.st_mode);
  // Non-blocking, in case it became a FIFO since: then it is refused below.
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Status::failure(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fd = -1;
    return notRegular(path, st.st_mode);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return Status::success();
}

Expected<std::string> readWhole(const std::string &path, int fd, const struct stat &st,
                                uint64_t maxBytes) {
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  auto tooLarge = [&] {
    return Status::failure(fmt::format("{}: larger than {} bytes", path, maxBytes));
  };
  std::string bytes;
  // Reserved up front where the size is known (not for a pipe): a .wafer can
  // be hundreds of MB, and a growing string copies it several times.
  if (S_ISREG(st.st_mode)) {
    if (uint64_t(st.st_size) > maxBytes)
      return tooLarge();
    bytes.reserve(size_t(st.st_size));
  }
  std::vector<char> buf(size_t(1) << 20);
  for (;;) {
    ssize_t got = ::read(fd, buf.data(), buf.size());
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return Status::failure(fmt::format("{}: read error: {}", path, std::strerror(errno)));
    if (got == 0)
      return bytes;
    if (bytes.size() + uint64_t(got) > maxBytes)
      return tooLarge();
    bytes.append(buf.data(), size_t(got));
  }
}

} // namespace detail

Expected<std::string> readFileBytes(const std::string &path, uint64_t maxBytes) {
  int fd;
  struct stat st;
  if (Status s = detail::openForReading(path, fd, st); !s)
    return s;
  return detail::readWhole(path, fd, st, maxBytes);
}

Status writeFileAtomic(const std::string &path, const std::string &bytes) {
  OutputFiles out;
  if (Status s = out.stage(path, bytes); !s)
    return s;
  return out.commit();
}

namespace {

/// Finds `'key': value` in a .npy header dict and returns the value text.
bool headerField(const std::string &h, const std::string &key, std::string &value) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos)
    return false;
  size_t colon = h.find(':', k);
  if (colon == std::string::npos)
    return false;
  size_t b = h.find_first_not_of(' ', colon + 1);
  if (b == std::string::npos)
    return false;
  size_t e;
  if (h[b] == '(')
    e = h.find(')', b) + 1;
  else if (h[b] == '\'')
    e = h.find('\'', b + 1) + 1;
  else
    e = h.find_first_of(",}", b);
  if (e == std::string::npos || e == 0)
    return false;
  value = h.substr(b, e - b);
  return true;
}

/// A .npy element type this runtime reads: kind 'f' float, 'i' signed,
/// 'u' unsigned, 'b' bool.
struct NpyType {
  const char *descr;
  DType dtype;
  size_t width;
  char kind;
};

const NpyType *npyType(const std::string &descr) {
  // Quoted as in the header. One-byte types are '|' in numpy's files; '<' is
  // read too.
  static const NpyType kTypes[] = {
      {"'<f4'", DType::F32, 4, 'f'}, {"'<f8'", DType::F64, 8, 'f'},
      {"'<f2'", DType::F16, 2, 'f'}, {"'|b1'", DType::Bool, 1, 'b'},
      {"'|i1'", DType::I8, 1, 'i'},  {"'<i1'", DType::I8, 1, 'i'},
      {"'<i2'", DType::I16, 2, 'i'}, {"'<i4'", DType::I32, 4, 'i'},
      {"'<i8'", DType::I64, 8, 'i'}, {"'|u1'", DType::U8, 1, 'u'},
      {"'<u1'", DType::U8, 1, 'u'},  {"'<u2'", DType::U16, 2, 'u'},
      {"'<u4'", DType::U32, 4, 'u'}, {"'<u8'", DType::U64, 8, 'u'},
  };
  for (const NpyType &t : kTypes)
    if (descr == t.descr)
      return &t;
  return nullptr;
}

} // namespace

Expected<HostArray> parseNpy(const std::string &bytes, const std::string &name) {
  auto bad = [&](const std::string &why) {
    return Status::failure(fmt::format("{}: not a readable .npy file ({})", name, why));
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return bad("bad magic");
  unsigned major = uint8_t(bytes[6]);
  size_t hlen, hstart;
  if (major == 1) {
    hlen = uint8_t(bytes[8]) | (size_t(uint8_t(bytes[9])) << 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return bad("truncated header");
    hlen = 0;
    for (int i = 0; i < 4; ++i)
      hlen |= size_t(uint8_t(bytes[8 + i])) << (8 * i);
    hstart = 12;
  } else {
    return bad(fmt::format("version {}", major));
  }
  if (hstart + hlen > bytes.size())
    return bad("truncated header");
  std::string h = bytes.substr(hstart, hlen);
  std::string descr, fortran, shapeText;
  if (!headerField(h, "descr", descr) || !headerField(h, "fortran_order", fortran) ||
      !headerField(h, "shape", shapeText))
    return bad("header lacks descr, fortran_order or shape");
  HostArray a;
  // A Python tuple of non-negative integers: "()", "(5,)", "(2, 8)". Every
  // dimension must be digits only ("8.9", "x8" and "-1" are refused); a
  // comma may trail, and must for one dimension ("(5)" is no tuple).
  auto badShape = [&] {
    return bad("shape " + shapeText + " is not a tuple of non-negative integers");
  };
  if (shapeText.size() < 2 || shapeText.front() != '(' || shapeText.back() != ')')
    return badShape();
  std::string inner = shapeText.substr(1, shapeText.size() - 2);
  if (inner.find_first_not_of(' ') != std::string::npos) {
    for (size_t i = 0;;) {
      size_t j = inner.find(',', i);
      std::string dim = inner.substr(i, j == std::string::npos ? std::string::npos : j - i);
      size_t b = dim.find_first_not_of(' '), e = dim.find_last_not_of(' ');
      if (b == std::string::npos) {
        // Empty: only after a trailing comma, "(5,)".
        if (j != std::string::npos || a.shape.empty())
          return badShape();
        break;
      }
      dim = dim.substr(b, e - b + 1);
      if (dim.size() > 18 || dim.find_first_not_of("0123456789") != std::string::npos)
        return badShape();
      a.shape.push_back(std::stoll(dim));
      if (j == std::string::npos) {
        if (a.shape.size() == 1) // "(5)" is 5, not a tuple
          return badShape();
        break;
      }
      i = j + 1;
    }
  }
  const NpyType *type = npyType(descr);
  if (!type)
    return bad("dtype " + descr +
               "; float16/32/64, int8/16/32/64, uint8/16/32/64 and bool are supported");
  a.dtype = type->dtype;
  const size_t width = type->width;
  uint64_t n = 1;
  for (int64_t d : a.shape)
    if (__builtin_mul_overflow(n, uint64_t(d), &n))
      return bad("shape too large");
  size_t data = hstart + hlen;
  if (n > (bytes.size() - data) / width || bytes.size() - data != n * width)
    return bad(fmt::format("{} data bytes for shape {}", bytes.size() - data, shapeString(a.shape)));
  const char *p = bytes.data() + data;
  if (a.isFloat())
    a.f32.resize(n);
  else
    a.ints.resize(n);
  for (uint64_t i = 0; i < n; ++i, p += width) {
    uint64_t raw = 0;
    std::memcpy(&raw, p, width); // little-endian host
    switch (type->kind) {
    case 'f':
      if (width == 2) {
        a.f32[i] = halfBitsToFloat(uint16_t(raw));
      } else if (width == 4) {
        std::memcpy(&a.f32[i], p, 4);
      } else {
        double v;
        std::memcpy(&v, p, 8);
        a.f32[i] = float(v);
      }
      break;
    case 'b':
      // numpy's bool is one byte, 0 or 1; anything else is not a bool.
      if (raw > 1)
        return bad(fmt::format("element {} of the bool array is byte {}, not 0 or 1", i, raw));
      a.ints[i] = int64_t(raw);
      break;
    case 'i':
      // Sign-extend from `width` bytes.
      a.ints[i] = width == 8 ? int64_t(raw) : int64_t(raw << (64 - 8 * width)) >> (64 - 8 * width);
      break;
    default:
      if (raw > uint64_t(INT64_MAX))
        return bad(fmt::format("element {} of the uint64 array is {}, beyond the int64 range", i,
                               raw));
      a.ints[i] = int64_t(raw);
      break;
    }
  }
  if (fortran == "True" && a.shape.size() > 1) {
    // Column-major on disk: permute into row-major.
    HostArray c = a;
    size_t rank = a.shape.size();
    std::vector<int64_t> idx(rank, 0);
    for (uint64_t f = 0; f < n; ++f) {
      uint64_t r = 0;
      for (size_t k = 0; k < rank; ++k)
        r = r * uint64_t(a.shape[k]) + uint64_t(idx[k]);
      if (a.isFloat())
        c.f32[r] = a.f32[f];
      else
        c.ints[r] = a.ints[f];
      for (size_t k = 0; k < rank && ++idx[k] == a.shape[k]; ++k)
        idx[k] = 0;
    }
    a = std::move(c);
  } else if (fortran != "False" && fortran != "True") {
    return bad("bad fortran_order");
  }
  return a;
}

Expected<HostArray> readNpy(const std::string &path) {
  Expected<std::string> bytes = readFileBytes(path);
  if (!bytes)
    return bytes.status();
  return parseNpy(*bytes, path);
}

const char *npyDescr(DType t) {
  switch (t) {
  case DType::F32:
  case DType::BF16:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::F16:
    return "<f2";
  case DType::I8:
    return "|i1";
  case DType::I16:
    return "<i2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::U8:
    return "|u1";
  case DType::U16:
    return "<u2";
  case DType::U32:
    return "<u4";
  case DType::U64:
    return "<u8";
  case DType::Bool:
    return "|b1";
  }
  return "?";
}

std::string encodeNpy(const HostArray &a) {
  std::string shape;
  for (int64_t d : a.shape)
    shape += fmt::format("{}, ", d);
  if (a.shape.size() > 1)
    shape.resize(shape.size() - 1 - 1);
  else if (a.shape.size() == 1)
    shape.pop_back(); // "(n,)"
  std::string h = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                              npyDescr(a.dtype), shape);
  // Pad so that the data start at a multiple of 64 bytes; the header ends in '\n'.
  // Version 1.0 has a 16-bit header length; a longer header (a shape of
  // thousands of dimensions) takes version 2.0's 32-bit one, as numpy does.
  bool wide = 10 + h.size() + 1 > 65535;
  size_t prefix = wide ? 12 : 10, total = prefix + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out(wide ? "\x93NUMPY\x02\x00" : "\x93NUMPY\x01\x00", 8);
  for (size_t i = 0; i < prefix - 8; ++i)
    out += char((h.size() >> (8 * i)) & 0xff);
  out += h;
  // Little-endian host: an element is the low `width` bytes of its value.
  auto put = [&](uint64_t v, size_t width) {
    out.append(reinterpret_cast<const char *>(&v), width);
  };
  switch (a.dtype) {
  case DType::F32:
    out.append(reinterpret_cast<const char *>(a.f32.data()), a.f32.size() * 4);
    break;
  case DType::F64:
    for (float v : a.f32) {
      double d = v;
      out.append(reinterpret_cast<const char *>(&d), 8);
    }
    break;
  case DType::F16:
    for (float v : a.f32)
      put(floatToHalfBits(v), 2);
    break;
  case DType::BF16:
    for (float v : a.f32) {
      float r = roundToFloatType(DType::BF16, v);
      out.append(reinterpret_cast<const char *>(&r), 4);
    }
    break;
  case DType::Bool:
    for (int64_t v : a.ints)
      out += char(v != 0 ? 1 : 0);
    break;
  default: {
    size_t width = npyDescr(a.dtype)[2] - '0';
    for (int64_t v : a.ints)
      put(uint64_t(v), width);
    break;
  }
  }
  return out;
}

Status checkIntegerRange(const HostArray &a, const std::string &what) {
  if (!isIntegerType(a.dtype))
    return Status::success();
  int64_t lo, hi;
  integerRange(a.dtype, lo, hi);
  for (size_t i = 0; i < a.ints.size(); ++i)
    if (a.ints[i] < lo || a.ints[i] > hi)
      return Status::failure(fmt::format("{}: element {} = {} does not fit {}", what, i, a.ints[i],
                                         dtypeName(a.dtype)));
  return Status::success();
}

Status writeNpy(const std::string &path, const HostArray &a) {
  if (Status s = checkIntegerRange(a, path); !s)
    return s;
  return writeFileAtomic(path, encodeNpy(a));
}

} // namespace wsc::runtime
