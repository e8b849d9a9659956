//===- wafer_load.cpp - libFuzzer harness: the .wafer loader and emulator -===//
//
// Bytes as a .wafer file: parsed (digests checked), validated and, when the
// machine is small, run with zero inputs under a tight cycle limit. Any
// outcome but a crash, a sanitizer report, a leak or a hang is fine: errors
// are Status values. The bytes are also loaded from a file with their SRAM
// images left in it (loadProgramLeavingImages), which must accept what a
// whole parse accepts and give the same program less the images' words;
// the run reads the images from that file.
//
//===----------------------------------------------------------------------===//
#include "wsc/runtime/Emulator.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <unistd.h>

using namespace wsc::runtime;

namespace {

DType hostType(wsc::format::DType t) {
  switch (t) {
  case wsc::format::I64: return DType::I64;
  case wsc::format::I32: return DType::I32;
  case wsc::format::BOOL: return DType::Bool;
  case wsc::format::F64: return DType::F64;
  case wsc::format::F16: return DType::F16;
  case wsc::format::BF16: return DType::BF16;
  case wsc::format::I8: return DType::I8;
  case wsc::format::I16: return DType::I16;
  case wsc::format::U8: return DType::U8;
  case wsc::format::U16: return DType::U16;
  case wsc::format::U32: return DType::U32;
  case wsc::format::U64: return DType::U64;
  default: return DType::F32;
  }
}

/// Whether the program's machine is small enough to run here: its SRAM is
/// allocated for every PE of a kernel, and a grid is kept per wafer.
bool smallMachine(const wsc::format::Program &p) {
  const uint64_t grid = uint64_t(p.arch().width()) * p.arch().height();
  if (grid > (1u << 16) || p.wafers_size() > 16)
    return false;
  uint64_t bytes = 0;
  for (const auto &w : p.wafers())
    for (const auto &r : w.regions()) {
      uint64_t per = r.sram_bytes_per_pe() ? r.sram_bytes_per_pe() : p.arch().sram_bytes_per_pe();
      bytes += uint64_t(r.w()) * r.h() * per;
      if (bytes > (uint64_t(64) << 20))
        return false;
    }
  for (const auto &t : p.inputs()) {
    uint64_t n = 1;
    for (int64_t d : t.shape())
      if (d < 0 || __builtin_mul_overflow(n, uint64_t(d), &n) || n > (1u << 20))
        return false;
  }
  return true;
}

/// The bytes in a file of this process's, rewritten for each input.
const std::string &fileOf(const uint8_t *data, size_t size) {
  static const std::string path = [] {
    const char *dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/fuzz-wafer-load-" +
           std::to_string(::getpid()) + ".wafer";
  }();
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, size, f) != size)
    __builtin_trap();
  std::fclose(f);
  return path;
}

/// `p` without its images' words, as loadProgramLeavingImages leaves it.
std::string withoutImages(wsc::format::Program p) {
  for (auto &w : *p.mutable_wafers())
    for (auto &r : *w.mutable_regions())
      for (auto &i : *r.mutable_init())
        i.clear_data();
  return p.SerializeAsString();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Expected<wsc::format::Program> program =
      parseProgram(std::string(reinterpret_cast<const char *>(data), size), "fuzz.wafer");
  const std::string &path = fileOf(data, size);
  Expected<LoadedProgram> left = loadProgramLeavingImages(path);
  // A whole parse's program, the same less the images' words.
  if (program && (!left || withoutImages(*program) != withoutImages(left->program)))
    __builtin_trap();
  if (!program || !smallMachine(*program))
    return 0;
  Expected<std::unique_ptr<Emulator>> emulator = Emulator::create(left.take());
  if (!emulator)
    return 0;
  Emulator &emu = **emulator;
  for (const auto &t : emu.program().inputs()) {
    std::vector<int64_t> shape(t.shape().begin(), t.shape().end());
    uint64_t n = 1;
    for (int64_t d : shape)
      n *= uint64_t(d);
    DType type = hostType(t.dtype());
    HostArray a;
    if (isFloatType(type))
      a = HostArray::floats(type, shape, std::vector<float>(n, 0.5f));
    else
      a = HostArray::integers(type, shape,
                              std::vector<int64_t>(n, t.has_valid() ? t.valid().lo() : 0));
    (void)emu.setInput(t.name(), a);
  }
  RunOptions options;
  options.threads = 1;
  options.maxCycles = 200000;
  if (emu.run(options))
    for (const auto &t : emu.program().outputs())
      (void)emu.output(t.name());
  return 0;
}
