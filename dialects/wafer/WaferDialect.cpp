//===- WaferDialect.cpp - wafer dialect registration ----------------------===//
#include "wafer/WaferDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace wsc::wafer;

#include "wafer/WaferDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "wafer/WaferAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "wafer/WaferOps.cpp.inc"

void WaferDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "wafer/WaferAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "wafer/WaferOps.cpp.inc"
      >();
}

/// Is `a` a rank-2 i32 table with `cols` columns?
static bool isTable(DenseIntElementsAttr a, int64_t cols) {
  auto type = dyn_cast<RankedTensorType>(a.getType());
  return type && type.getRank() == 2 && type.getDimSize(1) == cols &&
         type.getElementType().isInteger(32);
}

LogicalResult DefectsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  DenseIntElementsAttr pes, DenseIntElementsAttr links) {
  if (!pes || !isTable(pes, 3))
    return emitError() << "defect 'pes' must be a tensor<Nx3xi32> of [wafer, x, y] rows";
  if (!links || !isTable(links, 4))
    return emitError() << "defect 'links' must be a tensor<Nx4xi32> of [wafer, x, y, dir] rows";
  for (int32_t v : pes.getValues<int32_t>())
    if (v < 0)
      return emitError() << "defect coordinates must be non-negative";
  int64_t i = 0;
  for (int32_t v : links.getValues<int32_t>()) {
    if (v < 0)
      return emitError() << "defect coordinates must be non-negative";
    if (i++ % 4 == 3 && v != East && v != South && v != Link)
      return emitError() << "a dead link's direction must be 2 (EAST), 3 (SOUTH) or 5 (LINK), got "
                         << v;
  }
  return success();
}

int64_t RoutesOp::getNumEntries() {
  return cast<RankedTensorType>(getTable().getType()).getDimSize(0);
}

ArrayRef<int32_t> RoutesOp::getFlatTable(SmallVectorImpl<int32_t> &storage) {
  DenseIntElementsAttr table = getTable();
  int64_t count = table.getNumElements();
  if (!table.isSplat() && table.getElementType().isInteger(32))
    return ArrayRef<int32_t>(reinterpret_cast<const int32_t *>(table.getRawData().data()),
                             count);
  storage.assign(table.getValues<int32_t>().begin(), table.getValues<int32_t>().end());
  return storage;
}

std::vector<std::array<int32_t, 5>> RoutesOp::getRows() {
  SmallVector<int32_t> storage;
  ArrayRef<int32_t> values = getFlatTable(storage);
  std::vector<std::array<int32_t, 5>> rows(values.size() / 5);
  for (size_t i = 0; i < rows.size(); ++i)
    for (int k = 0; k < 5; ++k)
      rows[i][k] = values[5 * i + k];
  return rows;
}

LogicalResult RoutesOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getTable().getType());
  if (!type || type.getRank() != 2 || type.getDimSize(1) != 5)
    return emitOpError("table must be a tensor<Nx5xi32> of [x, y, color, in, out_mask] rows");
  if (getWaferAttr().getInt() < 0)
    return emitOpError("wafer index must be non-negative");
  SmallVector<int32_t> storage;
  ArrayRef<int32_t> values = getFlatTable(storage);
  std::array<int32_t, 5> prev{};
  int64_t n = getNumEntries();
  for (int64_t i = 0; i < n; ++i) {
    std::array<int32_t, 5> row;
    for (int k = 0; k < 5; ++k)
      row[k] = values[5 * i + k];
    auto [x, y, color, in, mask] = row;
    auto diag = [&]() {
      return emitOpError("entry ") << i << " [" << x << ", " << y << ", " << color << ", " << in
                                   << ", " << mask << "]";
    };
    if (x < 0 || y < 0 || color < 0)
      return diag() << " has a negative coordinate or color";
    if (in < 0 || in > Link)
      return diag() << " has input port " << in << ", not one of 0..5";
    if (mask <= 0 || mask >= (1 << 6))
      return diag() << " has out_mask " << mask << ", not one of 1..63";
    if (i > 0) {
      auto key = std::make_tuple(y, x, color, in);
      auto prevKey = std::make_tuple(prev[1], prev[0], prev[2], prev[3]);
      if (key == prevKey)
        return diag() << " repeats the key (x, y, color, in) of the entry before it";
      if (key < prevKey)
        return diag() << " is out of order: rows are sorted by (y, x, color, in)";
    }
    prev = row;
  }
  return success();
}

std::vector<std::array<int32_t, 8>> LinksOp::getRows() {
  std::vector<std::array<int32_t, 8>> rows;
  auto values = llvm::to_vector(getTable().getValues<int32_t>());
  rows.resize(values.size() / 8);
  for (size_t i = 0; i < rows.size(); ++i)
    for (int k = 0; k < 8; ++k)
      rows[i][k] = values[8 * i + k];
  return rows;
}

LogicalResult LinksOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getTable().getType());
  if (!type || type.getRank() != 2 || type.getDimSize(1) != 8)
    return emitOpError("table must be a tensor<Nx8xi32> of [src_wafer, src_x, src_y, color, "
                       "dst_wafer, dst_x, dst_y, dst_color] rows");
  if (auto module = dyn_cast_or_null<ModuleOp>((*this)->getParentOp()))
    for (LinksOp other : module.getOps<LinksOp>()) {
      if (other == *this)
        break;
      return emitOpError("a module holds at most one 'wafer.links'");
    }
  std::vector<std::array<int32_t, 8>> rows = getRows();
  std::vector<std::array<int32_t, 4>> dests;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto &r = rows[i];
    auto diag = [&]() {
      InFlightDiagnostic d = emitOpError("link ") << i << " [";
      for (int k = 0; k < 8; ++k)
        d << (k ? ", " : "") << r[k];
      return std::move(d << "]");
    };
    if (llvm::any_of(r, [](int32_t v) { return v < 0; }))
      return diag() << " has a negative wafer, coordinate or color";
    if (i > 0) {
      auto key = [](const std::array<int32_t, 8> &a) {
        return std::make_tuple(a[0], a[1], a[2], a[3]);
      };
      if (key(r) == key(rows[i - 1]))
        return diag() << " repeats the source (src_wafer, src_x, src_y, color) of the link "
                         "before it: a link carries one stream per color";
      if (r < rows[i - 1])
        return diag() << " is out of order: rows are sorted";
    }
    dests.push_back({r[4], r[5], r[6], r[7]});
  }
  llvm::sort(dests);
  for (size_t i = 1; i < dests.size(); ++i)
    if (dests[i] == dests[i - 1])
      return emitOpError("two links arrive at PE (")
             << dests[i][1] << ", " << dests[i][2] << ") of wafer " << dests[i][0] << " on color "
             << dests[i][3];
  return success();
}

LogicalResult WaferDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  if (name == kArchAttrName || name == kDefectsAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitError("'") << name << "' belongs on the module";
    if (name == kArchAttrName && !isa<ArchAttr>(value))
      return op->emitError("'") << name << "' must be a #wafer.arch";
    if (name == kDefectsAttrName && !isa<DefectsAttr>(value))
      return op->emitError("'") << name << "' must be a #wafer.defects";
    return success();
  }
  if (name == kOriginAttrName) {
    auto a = dyn_cast<DenseI64ArrayAttr>(value);
    if (!a || a.size() != 3 || llvm::any_of(a.asArrayRef(), [](int64_t v) { return v < 0; }))
      return op->emitError("'") << name
                                << "' must be array<i64: wafer, x, y> with non-negative values";
    return success();
  }
  if (name == kColorsAttrName) {
    auto d = dyn_cast<DictionaryAttr>(value);
    if (!d)
      return op->emitError("'") << name << "' must be a dictionary {port = color : i64}";
    for (NamedAttribute e : d) {
      auto c = dyn_cast<IntegerAttr>(e.getValue());
      if (!c || c.getInt() < 0)
        return op->emitError("'") << name << "' entry '" << e.getName().getValue()
                                  << "' must be a non-negative integer color";
    }
    return success();
  }
  if (name == kStageAttrName) {
    auto c = dyn_cast<IntegerAttr>(value);
    if (!c || c.getInt() < 0)
      return op->emitError("'") << name << "' must be a non-negative integer wafer index";
    return success();
  }
  return success();
}

LogicalResult ArchAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef name,
                               int64_t width, int64_t height, int64_t sramBytes, int64_t colors,
                               int64_t clockHz, int64_t hopCycles, int64_t simdFp32,
                               int64_t fmacFp32, int64_t fmacFp16, int64_t transcendentalCycles,
                               int64_t maxWafers, int64_t linkBytesPerCycle,
                               int64_t linkLatencyCycles, int64_t extMemBytes,
                               int64_t extMemBytesPerCycle) {
  if (width <= 0 || height <= 0)
    return emitError() << "arch '" << name << "' needs a positive grid, got " << width << "x"
                       << height;
  if (width > kMaxGridSide || height > kMaxGridSide || width * height > kMaxPesPerWafer)
    return emitError() << "arch '" << name << "' has a " << width << "x" << height
                       << " grid; at most " << kMaxGridSide << " PEs a side and "
                       << kMaxPesPerWafer << " PEs a wafer are supported";
  if (maxWafers > kMaxWafers)
    return emitError() << "arch '" << name << "' has max_wafers " << maxWafers << "; at most "
                       << kMaxWafers << " are supported";
  if (sramBytes <= 0 || sramBytes % 4)
    return emitError() << "arch '" << name << "' needs SRAM a positive multiple of 4 bytes, got "
                       << sramBytes;
  if (colors <= 0 || colors > 64)
    return emitError() << "arch '" << name << "' needs 1 to 64 colors, got " << colors;
  if (clockHz <= 0 || hopCycles <= 0 || simdFp32 <= 0 || fmacFp32 <= 0 || fmacFp16 <= 0 ||
      transcendentalCycles <= 0 || maxWafers <= 0 || linkBytesPerCycle <= 0 ||
      linkLatencyCycles < 0 || extMemBytes < 0 || extMemBytesPerCycle <= 0)
    return emitError() << "arch '" << name << "' has a non-positive timing or cluster figure";
  return success();
}

ArchAttr ArchParams::build(MLIRContext *ctx, std::string &error) const {
  std::string diagText;
  ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &d) {
    diagText = d.str();
    return success();
  });
  auto emit = [&]() { return mlir::emitError(UnknownLoc::get(ctx)); };
  auto attr = ArchAttr::getChecked(emit, ctx, name, width, height, sramBytes, colors, clockHz,
                                   hopCycles, simdFp32, fmacFp32, fmacFp16, transcendentalCycles,
                                   maxWafers, linkBytesPerCycle, linkLatencyCycles, extMemBytes,
                                   extMemBytesPerCycle);
  if (!attr)
    error = diagText;
  return attr;
}
