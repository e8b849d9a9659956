// Host arrays, whole-file I/O and the .npy format (read and write).
#include "wsc/runtime/HostArray.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
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
  }
  return "?";
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

Expected<std::string> readFileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::failure(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  // Reserved up front where the size is known (not for a pipe): a .wafer can
  // be hundreds of MB, and a growing string stream copies it several times.
  std::string bytes;
  if (in.seekg(0, std::ios::end)) {
    if (std::streamoff size = in.tellg(); size > 0)
      bytes.reserve(size_t(size));
    in.seekg(0);
  }
  in.clear();
  std::vector<char> buf(size_t(1) << 20);
  while (in.read(buf.data(), std::streamsize(buf.size())) || in.gcount() > 0)
    bytes.append(buf.data(), size_t(in.gcount()));
  if (in.bad())
    return Status::failure(fmt::format("{}: read error", path));
  return bytes;
}

Status writeFileAtomic(const std::string &path, const std::string &bytes) {
  std::string tmp = fmt::format("{}.tmp{}", path, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return Status::failure(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return Status::failure(fmt::format("{}: write error", path));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    return Status::failure(fmt::format("{}: cannot write: {}", path, std::strerror(err)));
  }
  return Status::success();
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
  for (size_t i = 1; i + 1 < shapeText.size();) {
    size_t j = shapeText.find_first_of(",)", i);
    std::string dim = shapeText.substr(i, j - i);
    i = j + 1;
    if (dim.find_first_not_of(' ') == std::string::npos)
      continue;
    char *end = nullptr;
    long long d = std::strtoll(dim.c_str(), &end, 10);
    if (d < 0)
      return bad("negative dimension");
    a.shape.push_back(d);
  }
  size_t width;
  if (descr == "'<f4'" || descr == "'<f8'") {
    a.dtype = DType::F32;
    width = descr[3] == '4' ? 4 : 8;
  } else if (descr == "'<i4'" || descr == "'<i8'") {
    a.dtype = descr[3] == '4' ? DType::I32 : DType::I64;
    width = descr[3] == '4' ? 4 : 8;
  } else if (descr == "'|b1'") {
    a.dtype = DType::Bool;
    width = 1;
  } else {
    return bad("dtype " + descr + "; float32, float64, int32, int64 and bool are supported");
  }
  uint64_t n = 1;
  for (int64_t d : a.shape)
    if (__builtin_mul_overflow(n, uint64_t(d), &n))
      return bad("shape too large");
  size_t data = hstart + hlen;
  if (n > (bytes.size() - data) / width || bytes.size() - data != n * width)
    return bad(fmt::format("{} data bytes for shape {}", bytes.size() - data, shapeString(a.shape)));
  const char *p = bytes.data() + data;
  if (a.dtype == DType::F32)
    a.f32.resize(n);
  else
    a.ints.resize(n);
  for (uint64_t i = 0; i < n; ++i, p += width) {
    if (descr == "'<f4'")
      std::memcpy(&a.f32[i], p, 4);
    else if (descr == "'<f8'") {
      double v;
      std::memcpy(&v, p, 8);
      a.f32[i] = float(v);
    } else if (width == 1) {
      // numpy's bool is one byte, 0 or 1; anything else is not a bool.
      uint8_t v = uint8_t(*p);
      if (v > 1)
        return bad(fmt::format("element {} of the bool array is byte {}, not 0 or 1", i, v));
      a.ints[i] = v;
    } else if (width == 4) {
      int32_t v;
      std::memcpy(&v, p, 4);
      a.ints[i] = v;
    } else {
      std::memcpy(&a.ints[i], p, 8);
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

std::string encodeNpy(const HostArray &a) {
  const char *descr = a.dtype == DType::F32    ? "<f4"
                      : a.dtype == DType::I32  ? "<i4"
                      : a.dtype == DType::Bool ? "|b1"
                                               : "<i8";
  std::string shape;
  for (int64_t d : a.shape)
    shape += fmt::format("{}, ", d);
  if (a.shape.size() > 1)
    shape.resize(shape.size() - 1 - 1);
  else if (a.shape.size() == 1)
    shape.pop_back(); // "(n,)"
  std::string h = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr,
                              shape);
  // Pad so that the data start at a multiple of 64 bytes; the header ends in '\n'.
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(h.size() & 0xff);
  out += char(h.size() >> 8);
  out += h;
  if (a.dtype == DType::F32) {
    out.append(reinterpret_cast<const char *>(a.f32.data()), a.f32.size() * 4);
  } else if (a.dtype == DType::Bool) {
    for (int64_t v : a.ints)
      out += char(v != 0 ? 1 : 0);
  } else {
    for (int64_t v : a.ints) {
      if (a.dtype == DType::I32) {
        int32_t w = int32_t(v);
        out.append(reinterpret_cast<const char *>(&w), 4);
      } else {
        out.append(reinterpret_cast<const char *>(&v), 8);
      }
    }
  }
  return out;
}

Status writeNpy(const std::string &path, const HostArray &a) {
  return writeFileAtomic(path, encodeNpy(a));
}

} // namespace wsc::runtime
