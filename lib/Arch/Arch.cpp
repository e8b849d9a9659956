//===- Arch.cpp - machine presets and arch files --------------------------===//
//
// Preset figures and their sources are documented in docs/arch.md; keep the
// two in step.
//
//===----------------------------------------------------------------------===//
#include "wsc/Arch/Arch.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace wsc::wafer;

namespace {
using ArchFields = ArchParams;

ArchFields preset(StringRef name, int64_t width, int64_t height, int64_t fmacFp16) {
  ArchFields f;
  f.name = name.str();
  f.width = width;
  f.height = height;
  f.fmacFp16 = fmacFp16;
  return f;
}
} // namespace

ArchAttr wsc::wafer::parseArch(MLIRContext *ctx, StringRef spec, std::string &error) {
  ctx->getOrLoadDialect<WaferDialect>();
  if (spec == "wse2")
    return preset("wse2", 757, 996, 4).build(ctx, error);
  if (spec == "wse3")
    return preset("wse3", 762, 1172, 8).build(ctx, error);
  if (spec.consume_front("mesh:")) {
    auto [w, h] = spec.split('x');
    int64_t width, height;
    if (w.getAsInteger(10, width) || h.getAsInteger(10, height) || width <= 0 || height <= 0) {
      error = "arch 'mesh:" + spec.str() + "' is not of the form mesh:WxH";
      return {};
    }
    ArchFields f = preset(("mesh:" + spec).str(), width, height, 8);
    f.maxWafers = 64;
    f.extMemBytes = 1'000'000'000'000;
    return f.build(ctx, error);
  }
  // Only a regular file of bounded size: /dev/zero would be read for ever.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(spec, status)) {
    if (status.type() != llvm::sys::fs::file_type::regular_file) {
      error = "arch file '" + spec.str() + "' is not a regular file";
      return {};
    }
    if (status.getSize() > uint64_t(kMaxArchFileBytes)) {
      error = "arch file '" + spec.str() + "' is larger than " +
              std::to_string(kMaxArchFileBytes) + " bytes";
      return {};
    }
  }
  auto buffer = llvm::MemoryBuffer::getFile(spec);
  if (!buffer) {
    error = "arch '" + spec.str() + "' is neither a preset (wse2, wse3, mesh:WxH) nor a readable file";
    return {};
  }
  auto json = llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    error = "arch file '" + spec.str() + "': " + llvm::toString(json.takeError());
    return {};
  }
  auto *obj = json->getAsObject();
  if (!obj) {
    error = "arch file '" + spec.str() + "' must hold a JSON object";
    return {};
  }
  // Unset fields keep the wse3 per-PE figures.
  ArchFields f = preset("custom", 0, 0, 8);
  for (auto &[key, value] : *obj) {
    auto setInt = [&](int64_t &field) {
      if (auto v = value.getAsInteger())
        return field = *v, true;
      return false;
    };
    bool ok;
    if (key == "name") {
      ok = value.getAsString().has_value();
      if (ok)
        f.name = value.getAsString()->str();
    } else if (key == "width") ok = setInt(f.width);
    else if (key == "height") ok = setInt(f.height);
    else if (key == "sram_bytes") ok = setInt(f.sramBytes);
    else if (key == "colors") ok = setInt(f.colors);
    else if (key == "clock_hz") ok = setInt(f.clockHz);
    else if (key == "hop_cycles") ok = setInt(f.hopCycles);
    else if (key == "simd_fp32") ok = setInt(f.simdFp32);
    else if (key == "fmac_fp32") ok = setInt(f.fmacFp32);
    else if (key == "fmac_fp16") ok = setInt(f.fmacFp16);
    else if (key == "transcendental_cycles") ok = setInt(f.transcendentalCycles);
    else if (key == "max_wafers") ok = setInt(f.maxWafers);
    else if (key == "link_bytes_per_cycle") ok = setInt(f.linkBytesPerCycle);
    else if (key == "link_latency_cycles") ok = setInt(f.linkLatencyCycles);
    else if (key == "ext_mem_bytes") ok = setInt(f.extMemBytes);
    else if (key == "ext_mem_bytes_per_cycle") ok = setInt(f.extMemBytesPerCycle);
    else {
      error = "arch file '" + spec.str() + "': unknown key '" + key.str() + "'";
      return {};
    }
    if (!ok) {
      error = "arch file '" + spec.str() + "': key '" + key.str() + "' has the wrong type";
      return {};
    }
  }
  ArchAttr attr = f.build(ctx, error);
  if (!attr)
    error = "arch file '" + spec.str() + "': " + error;
  return attr;
}

FailureOr<ArchAttr> wsc::wafer::getArch(ModuleOp module) {
  if (auto arch = module->getAttrOfType<ArchAttr>(kArchAttrName))
    return arch;
  return module.emitError("the module has no '") << kArchAttrName
                                                  << "' attribute; run with arch=...";
}
