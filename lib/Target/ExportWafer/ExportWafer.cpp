//===- ExportWafer.cpp - placed wskernel module to a .wafer program -------===//
//
// One wskernel.kernel becomes one Region; its body ops become Instrs one to
// one (docs/export-wafer.md has the table). Weight tiles become SramInit words
// read from the weights' files, host inputs and outputs become HostTensor
// pieces, the wafer.routes tables become Route entries and wafer.links
// InterWaferLinks. Nothing is computed here: the program runs on the
// emulator (or a wafer) only.
//
//===----------------------------------------------------------------------===//
#include "wsc/Analysis/KvCache.h"
#include "wsc/Analysis/WeightData.h"
#include "wsc/Arch/Arch.h"

#include "wafer/WaferDialect.h"
#include "wsc/Arch/Defects.h"
#include "wsc/Target/ExportWafer.h"
#include "wsgraph/WsgraphDialect.h"
#include "wskernel/WskernelDialect.h"

#include "wafer.pb.h"
#include "wsc/format/Digest.h"
#include "wsc/format/SparseTile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <optional>

using namespace mlir;
namespace pb = wsc::format; // the runtime's format classes
namespace wf = wsc::wafer;
namespace wk = wsc::wskernel;
namespace wg = wsc::wsgraph;

namespace {

constexpr int64_t kU32Max = std::numeric_limits<uint32_t>::max();

/// The values of a tensor operand as 32-bit words, read on demand: fp32 as
/// is, fp16/bf16 widened to fp32, integers as int32 (they must fit).
class TensorWords {
public:
  ShapedType type;
  const char *bytes = nullptr; // a weight's bytes in its (mapped) file
  std::vector<uint32_t> words; // a constant's words
  unsigned elemBytes = 4;
  enum class Kind { F32, F16, BF16, Int, Bool } kind = Kind::F32;
  bool isSigned = true; // Int: how its bytes extend to 64 bits
  /// A weight that is a view of its file: its shape and file strides.
  SmallVector<int64_t> viewShape, viewStrides;

  /// Element `flat` (row-major); nullopt when an integer does not fit int32.
  std::optional<uint32_t> word(int64_t flat) const {
    if (!bytes)
      return words[flat];
    int64_t at = flat;
    if (!viewStrides.empty()) {
      at = 0;
      for (int64_t d = int64_t(viewShape.size()) - 1; d >= 0; --d) {
        at += flat % viewShape[d] * viewStrides[d];
        flat /= viewShape[d];
      }
    }
    const char *p = bytes + at * elemBytes;
    using namespace llvm::support;
    switch (kind) {
    case Kind::F32:
      return endian::read32le(p);
    case Kind::F16:
    case Kind::BF16: {
      uint16_t h = endian::read16le(p);
      if (kind == Kind::BF16)
        return uint32_t(h) << 16;
      llvm::APFloat f(llvm::APFloat::IEEEhalf(), llvm::APInt(16, h));
      bool lost;
      f.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &lost);
      return uint32_t(f.bitcastToAPInt().getZExtValue());
    }
    case Kind::Int: {
      uint64_t raw = 0;
      std::memcpy(&raw, p, elemBytes); // little-endian hosts only, as the format
      llvm::APInt v(elemBytes * 8, raw);
      int64_t x = isSigned ? v.getSExtValue() : int64_t(v.getZExtValue());
      if ((!isSigned && v.getActiveBits() > 63) || x < std::numeric_limits<int32_t>::min() ||
          x > std::numeric_limits<int32_t>::max())
        return std::nullopt;
      return uint32_t(int32_t(x));
    }
    case Kind::Bool:
      return uint32_t(*p != 0);
    }
    return std::nullopt;
  }
};

/// An error "cannot export: <message> (kernel 'K', 'op')" on an op; the
/// suffix is added when the streamed message is complete.
class ExportError {
public:
  ExportError(Operation *op, std::string suffix)
      : diag(op->emitError("cannot export: ")), suffix(std::move(suffix)) {}
  ExportError(const ExportError &) = delete;
  ~ExportError() {
    if (diag.getUnderlyingDiagnostic())
      diag << suffix;
  }
  template <typename T> ExportError &operator<<(T &&value) {
    diag << std::forward<T>(value);
    return *this;
  }
  operator LogicalResult() const { return failure(); }
  template <typename T> operator FailureOr<T>() const { return failure(); }

private:
  InFlightDiagnostic diag;
  std::string suffix;
};

class Exporter {
public:
  explicit Exporter(ModuleOp module) : module(module) {}
  LogicalResult run(pb::Program &prog);

private:
  LogicalResult exportArch(pb::Program &prog);
  LogicalResult exportKernel(wk::KernelOp kernel);
  LogicalResult emitBlock(Block &block, unsigned depth);
  LogicalResult emitInstr(Operation *op, unsigned depth);
  LogicalResult setAff(Operation *op, StringRef what, wk::AffAttr a, unsigned depth,
                       pb::Affine *out);
  LogicalResult setPred(Operation *op, ArrayAttr when, pb::Instr &in);
  FailureOr<uint32_t> color(Operation *op, StringRef port);
  LogicalResult exportInitTile(wk::InitTileOp init);
  /// PE (px, py)'s tile (row-major, `cols` wide) as held at `storage`.
  FailureOr<std::vector<uint32_t>> heldWords(Operation *op, StringRef storage,
                                             ArrayRef<uint32_t> tile, int64_t cols, int64_t px,
                                             int64_t py);
  LogicalResult exportLoadTile(wk::LoadTileOp load, unsigned depth, pb::Instr &in);
  /// Fills `tile` (rows x cols) with the tile of `t` whose first element is
  /// (r0, c0), zero outside it; returns the words up to the last nonzero one.
  /// `interleave` and `perm`: the columns as init_tile's col_interleave
  /// and col_perm see them, `rowPerm` the rows as its row_perm does (empty:
  /// in order).
  FailureOr<size_t> fillTile(Operation *op, const TensorWords &t, int64_t r0, int64_t c0,
                             int64_t rows, int64_t cols, std::vector<uint32_t> &tile,
                             int64_t colEnd = std::numeric_limits<int64_t>::max(),
                             ArrayRef<int64_t> interleave = {}, ArrayRef<int64_t> perm = {},
                             ArrayRef<int64_t> rowPerm = {});
  LogicalResult exportHostInput(wk::HostInputOp in);
  LogicalResult exportFilter(wk::FilterOp filter);
  LogicalResult exportHostOutput(wk::HostOutputOp out);
  void boundTokenIds(wk::KernelOp k);
  /// Inputs whose valid range an embedding's table gave (boundTokenIds).
  std::set<unsigned> tableRanged;
  LogicalResult exportRoutes(pb::Program &prog);
  LogicalResult exportGeneration(pb::Program &prog);
  FailureOr<TensorWords> tensorWords(Operation *user, Value v);
  std::optional<pb::DType> dtypeOf(Type elem);
  /// "cannot export: ... (kernel 'K', 'wskernel.op')" on `op`.
  ExportError fail(Operation *op) {
    std::string suffix = (" (kernel '" + kernel.getName() + "'").str();
    if (op != kernel.getOperation())
      suffix += ", '" + op->getName().getStringRef().str() + "'";
    return ExportError(op, suffix + ")");
  }

  ModuleOp module;
  wf::ArchAttr arch;
  std::vector<std::array<int32_t, 8>> links; // wafer.links' rows
  func::FuncOp func;
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> files;
  /// Per wafer, its regions in function order.
  std::map<int64_t, std::vector<pb::Region>> regions;
  std::vector<pb::HostTensor> inputs, outputs; // per func argument / result
  /// The kernel being exported and its placement.
  wk::KernelOp kernel;
  pb::Region *region = nullptr;
  int64_t waferIndex = 0, originX = 0, originY = 0, height = 0, width = 0;
  DictionaryAttr colors;
  /// Product of the loop counts around stream ops: the tokens of one run.
  int64_t tokens = 0, loopTrips = 1, maxTrips = 1;
  /// Weight streaming: one external blob per load_tile, and the PEs that
  /// share the external memory's bandwidth.
  std::vector<pb::ExternalBlob> blobs;
  /// The bytes a run reads from external memory: each blob once per pass of
  /// the loops around its layer loop (a generating program's tokens).
  double externalReads = 0;
  int64_t loadingPes = 0;
  wk::KernelOp lastLoadingKernel;
};

std::optional<pb::DType> Exporter::dtypeOf(Type elem) {
  if (elem.isF32())
    return pb::F32;
  if (elem.isF64())
    return pb::F64;
  if (elem.isF16())
    return pb::F16;
  if (elem.isBF16())
    return pb::BF16;
  if (elem.isInteger(1))
    return pb::BOOL;
  auto it = dyn_cast<IntegerType>(elem);
  if (!it)
    return std::nullopt;
  bool u = it.isUnsigned();
  switch (it.getWidth()) {
  case 8:
    return u ? pb::U8 : pb::I8;
  case 16:
    return u ? pb::U16 : pb::I16;
  case 32:
    return u ? pb::U32 : pb::I32;
  case 64:
    return u ? pb::U64 : pb::I64;
  }
  return std::nullopt;
}

LogicalResult Exporter::exportArch(pb::Program &prog) {
  wf::ArchAttr a = arch;
  auto u32 = [&](StringRef what, int64_t v) -> std::optional<uint32_t> {
    if (v < 0 || v > kU32Max) {
      module.emitError("cannot export: arch '")
          << a.getName() << "': " << what << " " << v << " does not fit the .wafer format";
      return std::nullopt;
    }
    return uint32_t(v);
  };
  pb::Arch *out = prog.mutable_arch();
  out->set_name(a.getName().str());
  auto width = u32("width", a.getWidth()), height = u32("height", a.getHeight());
  auto sram = u32("sram_bytes", a.getSramBytes()), colors = u32("colors", a.getColors());
  auto hop = u32("hop_cycles", a.getHopCycles()), simd = u32("simd_fp32", a.getSimdFp32());
  auto fmac = u32("fmac_fp32", a.getFmacFp32()),
       tc = u32("transcendental_cycles", a.getTranscendentalCycles());
  auto lat = u32("link_latency_cycles", a.getLinkLatencyCycles());
  if (!width || !height || !sram || !colors || !hop || !simd || !fmac || !tc || !lat)
    return failure();
  out->set_width(*width);
  out->set_height(*height);
  out->set_sram_bytes_per_pe(*sram);
  out->set_colors(*colors);
  out->set_clock_hz(double(a.getClockHz()));
  out->set_hop_cycles(*hop);
  out->set_simd_fp32(*simd);
  out->set_fmac_per_cycle_fp32(*fmac);
  out->set_transcendental_cycles(*tc);
  out->set_ext_mem_bytes_per_cycle(double(a.getExtMemBytesPerCycle()));
  out->set_link_bytes_per_cycle(double(a.getLinkBytesPerCycle()));
  out->set_link_latency_cycles(*lat);
  return success();
}

LogicalResult Exporter::setAff(Operation *op, StringRef what, wk::AffAttr a, unsigned depth,
                               pb::Affine *out) {
  ArrayRef<int64_t> strides = a.getLoop();
  while (!strides.empty() && strides.back() == 0)
    strides = strides.drop_back();
  if (strides.size() > depth)
    return fail(op) << what << " " << a << " has " << strides.size()
                    << " loop strides but the op is inside " << depth << " wskernel.loop";
  out->set_base(a.getBase());
  for (int64_t s : strides)
    out->add_stride(s);
  out->set_px(a.getPx());
  out->set_py(a.getPy());
  return success();
}

LogicalResult Exporter::setPred(Operation *op, ArrayAttr when, pb::Instr &in) {
  if (!when)
    return success();
  for (Attribute attr : when) {
    auto r = dyn_cast<wk::PeRangeAttr>(attr);
    if (!r)
      return fail(op) << "'when' holds " << attr << ", not a #wskernel.pes";
    if (r.getX0() < 0 || r.getY0() < 0 || r.getX0() > r.getX1() || r.getY0() > r.getY1() ||
        r.getX1() > kU32Max || r.getY1() > kU32Max)
      return fail(op) << "'when' range " << r << " is empty or negative";
    pb::PeRange *p = in.add_pred();
    p->set_x0(uint32_t(r.getX0()));
    p->set_x1(uint32_t(r.getX1()));
    p->set_y0(uint32_t(r.getY0()));
    p->set_y1(uint32_t(r.getY1()));
  }
  return success();
}

FailureOr<uint32_t> Exporter::color(Operation *op, StringRef port) {
  if (!colors)
    return fail(op) << "the kernel has no '" << wf::kColorsAttrName
                    << "' attribute; run --wsc-route first";
  auto c = colors.getAs<IntegerAttr>(port);
  if (!c)
    return fail(op) << "port '" << port << "' has no color in '" << wf::kColorsAttrName << "'";
  if (c.getInt() < 0 || c.getInt() >= arch.getColors())
    return fail(op) << "port '" << port << "' has color " << c.getInt() << ", but arch '"
                    << arch.getName() << "' has " << arch.getColors() << " colors";
  return uint32_t(c.getInt());
}

/// Is `port` one of the kernel's streams (in<i>, out<i>, and the feedback
/// ports fb, fb<i> and fbout<i>), as opposed to a channel?
static bool isStreamPort(StringRef port) {
  unsigned i;
  if (port == "fb")
    return true;
  return (port.consume_front("in") || port.consume_front("out") || port.consume_front("fbout") ||
          port.consume_front("fb")) &&
         !port.getAsInteger(10, i);
}

/// The columns [lo, hi) a `col_window` attribute selects (all when empty).
static std::pair<int64_t, int64_t> columnWindow(ArrayRef<int64_t> window) {
  if (window.empty())
    return {0, std::numeric_limits<int64_t>::max()};
  return {window[0], window[1]};
}

static pb::Storage storageOf(StringRef storage) {
  if (wk::sparseEntries(storage)) {
    StringRef values = wk::elementStorage(storage);
    return values == "f16"    ? pb::STORE_SPARSE_F16
           : values == "bf16" ? pb::STORE_SPARSE_BF16
                              : pb::STORE_SPARSE;
  }
  return storage == "f16" ? pb::STORE_F16 : storage == "bf16" ? pb::STORE_BF16 : pb::STORE_F32;
}

/// Is local PE (px, py) in `when` (every PE when it is null)?
static bool selectedBy(ArrayAttr when, int64_t px, int64_t py) {
  if (!when)
    return true;
  for (Attribute a : when)
    if (auto r = dyn_cast<wk::PeRangeAttr>(a))
      if (px >= r.getX0() && px <= r.getX1() && py >= r.getY0() && py <= r.getY1())
        return true;
  return false;
}

LogicalResult Exporter::emitInstr(Operation *op, unsigned depth) {
  pb::Instr in;
  SmallVector<std::pair<StringRef, wk::AffAttr>, 4> addrs;
  std::optional<wk::AffAttr> n, m, k;
  ArrayAttr when;
  auto binaryOp = [](StringRef kind) {
    return llvm::StringSwitch<pb::Op>(kind)
        .Case("add", pb::ADD)
        .Case("sub", pb::SUB)
        .Case("mul", pb::MUL)
        .Case("div", pb::DIV)
        .Case("min", pb::MIN)
        .Case("pow", pb::POW)
        .Case("mod", pb::MOD)
        .Case("eq", pb::EQ)
        .Case("lt", pb::LT)
        .Case("le", pb::LE)
        .Case("gt", pb::GT)
        .Case("ge", pb::GE)
        .Case("and", pb::AND)
        .Case("or", pb::OR)
        .Case("xor", pb::XOR)
        .Case("bit_and", pb::BIT_AND)
        .Case("bit_or", pb::BIT_OR)
        .Case("bit_xor", pb::BIT_XOR)
        .Default(pb::MAX);
  };
  // The element type of an arithmetic op (absent: f32).
  if (auto elem = op->getAttrOfType<StringAttr>("elem"); elem && elem.getValue() == "i32")
    in.set_type(pb::ELEM_I32);
  auto streamOp = [&](StringRef port) -> LogicalResult {
    FailureOr<uint32_t> c = color(op, port);
    if (failed(c))
      return failure();
    in.set_color(*c);
    if (isStreamPort(port))
      tokens = std::max(tokens, loopTrips);
    return success();
  };
  if (auto send = dyn_cast<wk::SendOp>(op)) {
    in.set_op(pb::SEND);
    addrs = {{"src", send.getSrc()}};
    n = send.getN();
    when = send.getWhenAttr();
    in.set_async(send.getAsync());
    if (failed(streamOp(send.getPort())))
      return failure();
  } else if (auto recv = dyn_cast<wk::RecvOp>(op)) {
    in.set_op(llvm::StringSwitch<pb::Op>(recv.getCombine())
                  .Case("add", pb::RECV_ADD)
                  .Case("max", pb::RECV_MAX)
                  .Case("discard", pb::RECV_DROP)
                  .StartsWith("vecmat", pb::RECV_VECMAT)
                  .Default(pb::RECV));
    if (recv.isProduct()) {
      addrs = {{"dst", recv.getDst()}, {"matrix", *recv.getMatrix()}};
      m = *recv.getCols();
      in.set_count(recv.getCombine() == "vecmat_add" ? 1 : 0);
      in.set_storage(storageOf(recv.getStorage()));
      if (std::optional<uint64_t> rows = recv.getTileRows()) { // a sparse tile
        in.mutable_k()->set_base(int64_t(*rows));
        in.mutable_first_row()->set_base(int64_t(recv.getFirstRow().value_or(0)));
      }
    } else if (in.op() != pb::RECV_DROP) {
      addrs = {{"dst", recv.getDst()}};
    }
    n = recv.getN();
    when = recv.getWhenAttr();
    in.set_async(recv.getAsync());
    if (failed(streamOp(recv.getPort())))
      return failure();
    if (auto to = recv.getForward()) {
      FailureOr<uint32_t> c = color(op, *to);
      if (failed(c))
        return failure();
      in.set_forward(*c);
      if (isStreamPort(*to))
        tokens = std::max(tokens, loopTrips);
    }
  } else if (auto mv = dyn_cast<wk::MatvecOp>(op)) {
    in.set_op(mv.getTransposed() ? pb::VECMAT : pb::MATVEC);
    addrs = {{"dst", mv.getDst()}, {"matrix", mv.getMatrix()}, {"vector", mv.getVector()}};
    n = mv.getRows();
    m = mv.getCols();
    in.set_count(mv.getAccumulate() ? 1 : 0);
    in.set_storage(storageOf(mv.getStorage()));
    when = mv.getWhenAttr();
  } else if (auto v = dyn_cast<wk::VectorOp>(op)) {
    in.set_op(binaryOp(v.getKind()));
    addrs = {{"dst", v.getDst()}, {"lhs", v.getLhs()}, {"rhs", v.getRhs()}};
    n = v.getN();
    when = v.getWhenAttr();
  } else if (auto s = dyn_cast<wk::ScalarOp>(op)) {
    in.set_op(llvm::StringSwitch<pb::Op>(s.getKind())
                  .Case("add", pb::ADD_S)
                  .Case("sub", pb::SUB_S)
                  .Case("mul", pb::MUL_S)
                  .Case("random", pb::RANDOM)
                  .Default(pb::DIV_S));
    addrs = {{"dst", s.getDst()}, {"lhs", s.getLhs()}, {"scalar", s.getScalar()}};
    n = s.getN();
    when = s.getWhenAttr();
  } else if (auto i = dyn_cast<wk::ImmOp>(op)) {
    in.set_op(llvm::StringSwitch<pb::Op>(i.getKind())
                  .Case("add", pb::ADD_I)
                  .Case("mul", pb::MUL_I)
                  .Default(pb::FILL));
    addrs = {{"dst", i.getDst()}};
    if (in.op() != pb::FILL)
      addrs.push_back({"src", i.getSrc()});
    in.set_imm(i.getValue().convertToFloat());
    n = i.getN();
    when = i.getWhenAttr();
  } else if (auto u = dyn_cast<wk::UnaryOp>(op)) {
    in.set_op(llvm::StringSwitch<pb::Op>(u.getKind())
                  .Case("exp", pb::EXP)
                  .Case("erf", pb::ERF)
                  .Case("tanh", pb::TANH)
                  .Case("sqrt", pb::SQRT)
                  .Case("rsqrt", pb::RSQRT)
                  .Case("neg", pb::NEG)
                  .Case("gelu", pb::GELU)
                  .Case("gelu_tanh", pb::GELU_TANH)
                  .Case("log", pb::LOG)
                  .Case("abs", pb::ABS)
                  .Case("sin", pb::SIN)
                  .Case("cos", pb::COS)
                  .Case("sigmoid", pb::SIGMOID)
                  .Case("reciprocal", pb::RECIPROCAL)
                  .Case("relu", pb::RELU)
                  .Case("floor", pb::FLOOR)
                  .Case("ceil", pb::CEIL)
                  .Case("not", pb::NOT)
                  .Case("bit_not", pb::BIT_NOT)
                  .Case("to_int", pb::TO_INT)
                  .Case("to_float", pb::TO_FLOAT)
                  .Default(pb::COPY));
    addrs = {{"dst", u.getDst()}, {"src", u.getSrc()}};
    n = u.getN();
    when = u.getWhenAttr();
  } else if (auto r = dyn_cast<wk::ReduceOp>(op)) {
    in.set_op(r.getKind() == "max"   ? pb::REDUCE_MAX
              : r.getKind() == "min" ? pb::REDUCE_MIN
                                     : pb::REDUCE_SUM);
    addrs = {{"dst", r.getDst()}, {"src", r.getSrc()}};
    n = r.getN();
    when = r.getWhenAttr();
  } else if (auto load = dyn_cast<wk::LoadTileOp>(op)) {
    if (failed(exportLoadTile(load, depth, in)))
      return failure();
    *region->add_code() = std::move(in);
    return success();
  } else if (auto g = dyn_cast<wk::GatherOp>(op)) {
    in.set_op(pb::GATHER);
    addrs = {{"dst", g.getDst()}, {"table", g.getTable()}, {"index", g.getIndex()}};
    n = g.getRows();
    m = g.getCols();
    k = g.getRowLo();
    in.set_storage(storageOf(g.getStorage()));
    when = g.getWhenAttr();
  } else if (auto sel = dyn_cast<wk::SelectOp>(op)) {
    in.set_op(pb::SELECT);
    addrs = {{"dst", sel.getDst()}, {"cond", sel.getCond()}, {"lhs", sel.getLhs()},
             {"rhs", sel.getRhs()}};
    n = sel.getN();
    when = sel.getWhenAttr();
  } else if (auto ic = dyn_cast<wk::IndexCopyOp>(op)) {
    in.set_op(pb::INDEX_COPY);
    addrs = {{"dst", ic.getDst()}, {"src", ic.getSrc()}, {"table", ic.getTable()}};
    n = ic.getN();
    m = ic.getM();
    when = ic.getWhenAttr();
  } else {
    return fail(op) << "the .wafer format has no instruction for this op";
  }
  for (auto [what, a] : addrs)
    if (failed(setAff(op, what, a, depth, in.add_addr())))
      return failure();
  if (n && failed(setAff(op, "n", *n, depth, in.mutable_n())))
    return failure();
  if (m && failed(setAff(op, "m", *m, depth, in.mutable_m())))
    return failure();
  if (k && failed(setAff(op, "row_lo", *k, depth, in.mutable_k())))
    return failure();
  if (failed(setPred(op, when, in)))
    return failure();
  if (auto guards = op->getAttrOfType<ArrayAttr>("guard"))
    for (Attribute g : guards) {
      auto a = dyn_cast<wk::AffAttr>(g);
      if (!a)
        return fail(op) << "'guard' holds " << g << ", not a #wskernel.aff";
      if (failed(setAff(op, "guard", a, depth, in.add_guard())))
        return failure();
    }
  *region->add_code() = std::move(in);
  return success();
}

LogicalResult Exporter::emitBlock(Block &block, unsigned depth) {
  for (Operation &op : block) {
    if (isa<wk::InitTileOp, wk::HostInputOp, wk::HostOutputOp, wk::FilterOp>(op)) {
      if (depth)
        return fail(&op) << "it must be at the top of the kernel body, not inside a wskernel.loop";
      continue;
    }
    if (auto loop = dyn_cast<wk::LoopOp>(op)) {
      int64_t count = static_cast<int64_t>(loop.getCount());
      if (count < 0 || count > kU32Max)
        return fail(loop) << "loop count " << count << " does not fit the .wafer format";
      pb::Instr *begin = region->add_code();
      begin->set_op(pb::LOOP);
      begin->set_count(uint32_t(count));
      int64_t saved = loopTrips;
      loopTrips = saved > std::numeric_limits<int64_t>::max() / std::max<int64_t>(count, 1)
                      ? std::numeric_limits<int64_t>::max()
                      : saved * count;
      maxTrips = std::max(maxTrips, loopTrips);
      if (failed(emitBlock(loop.getBody().front(), depth + 1)))
        return failure();
      loopTrips = saved;
      region->add_code()->set_op(pb::END);
      continue;
    }
    if (failed(emitInstr(&op, depth)))
      return failure();
  }
  return success();
}

FailureOr<TensorWords> Exporter::tensorWords(Operation *user, Value v) {
  TensorWords t;
  t.type = dyn_cast<ShapedType>(v.getType());
  Operation *def = v.getDefiningOp();
  if (!t.type || !t.type.hasStaticShape() || !def)
    return fail(user)
           << "the operand is not a statically shaped wsgraph.weight or wsgraph.constant";
  Type elem = t.type.getElementType();
  if (elem.isF32() || (elem.isF64() && isa<wg::ConstantOp>(def))) // (a literal f64: as f32 words)
    t.kind = TensorWords::Kind::F32;
  else if (elem.isF16())
    t.kind = TensorWords::Kind::F16, t.elemBytes = 2;
  else if (elem.isBF16())
    t.kind = TensorWords::Kind::BF16, t.elemBytes = 2;
  else if (elem.isInteger(1))
    t.kind = TensorWords::Kind::Bool, t.elemBytes = 1;
  else if (auto it = dyn_cast<IntegerType>(elem); it && it.getWidth() <= 64)
    t.kind = TensorWords::Kind::Int, t.elemBytes = it.getWidth() / 8,
    t.isSigned = !it.isUnsigned();
  else
    return fail(user) << "element type " << elem << " has no 32-bit word form";

  // A masked or pruned weight is read as its values with zeros.
  if (wsc::readsAltered(def)) {
    FailureOr<std::vector<uint32_t>> bits = wsc::readF32Weight(v, user);
    if (failed(bits))
      return failure();
    t.words = std::move(*bits);
    return t;
  }
  if (auto weight = dyn_cast<wg::WeightOp>(def)) {
    if (weight.isElided())
      return fail(user) << "weight '" << weight.getName() << "' is elided";
    StringRef path = *weight.getFile();
    auto &buffer = files[path];
    if (!buffer) {
      auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
      if (!file)
        return fail(user) << "weight '" << weight.getName() << "': cannot read '" << path
                          << "': " << file.getError().message();
      buffer = std::move(*file);
    }
    uint64_t offset = weight.getOffset(), size = uint64_t(weight.getByteSize());
    if (offset > buffer->getBufferSize() || size > buffer->getBufferSize() - offset)
      return fail(user) << "weight '" << weight.getName() << "': bytes [" << offset << ", "
                        << offset + size << ") are beyond the end of '" << path << "' ("
                        << buffer->getBufferSize() << " bytes)";
    t.bytes = buffer->getBufferStart() + offset;
    if (weight.getStrides()) {
      t.viewShape.assign(t.type.getShape().begin(), t.type.getShape().end());
      t.viewStrides = weight.getElementStrides();
    }
    return t;
  }
  if (auto constant = dyn_cast<wg::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense)
      return fail(user) << "constant " << constant.getValue() << " is not a dense literal";
    t.words.reserve(t.type.getNumElements());
    if (isa<FloatType>(elem)) {
      for (llvm::APFloat f : dense.getValues<llvm::APFloat>()) {
        bool lost;
        f.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &lost);
        t.words.push_back(uint32_t(f.bitcastToAPInt().getZExtValue()));
      }
    } else {
      for (const llvm::APInt &i : dense.getValues<llvm::APInt>()) {
        bool zext = elem.isInteger(1) || elem.isUnsignedInteger();
        if (zext && i.getActiveBits() > 63)
          return fail(user) << "constant element " << i.getZExtValue() << " does not fit 32 bits";
        int64_t v = zext ? int64_t(i.getZExtValue()) : i.getSExtValue();
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
          return fail(user) << "constant element " << v << " does not fit 32 bits";
        t.words.push_back(uint32_t(int32_t(v)));
      }
    }
    if (int64_t(t.words.size()) != t.type.getNumElements())
      return fail(user) << "constant holds " << t.words.size() << " elements, its type "
                        << t.type.getNumElements();
    return t;
  }
  return fail(user) << "the operand is produced by '" << def->getName()
                    << "', not by a wsgraph.weight or wsgraph.constant";
}

/// "[a, b, c]".
/// The cost model's bound on one run, for the runtime's default cycle
/// limit: every position through every kernel in turn at the kernel's
/// cycles per token and its chains (a generating program's positions wait
/// on each other), a crossing of the wafer and a link per kernel, and the
/// streaming of every external blob once at the memory's bandwidth.
/// Loose on purpose: the pipeline overlaps what it adds up. 0 = none.
static uint64_t estimatedRunCycles(func::FuncOp func, int64_t positions, wf::ArchAttr arch,
                                   double externalBytes) {
  double perPosition = 0, crossings = 0;
  for (auto k : func.getOps<wk::KernelOp>()) {
    perPosition += k.getCyclesPerToken().convertToDouble();
    if (auto chain = k->getAttrOfType<FloatAttr>(wk::kChainCyclesAttr))
      perPosition += chain.getValueAsDouble();
    crossings += double(arch.getWidth() + arch.getHeight()) * double(arch.getHopCycles()) +
                 double(arch.getLinkLatencyCycles());
  }
  double streaming =
      arch.getExtMemBytesPerCycle() > 0 ? externalBytes / double(arch.getExtMemBytesPerCycle()) : 0;
  double cycles =
      std::ceil(perPosition * double(std::max<int64_t>(positions, 1)) + crossings + streaming);
  return cycles >= 1 && cycles < 0x1p63 ? uint64_t(cycles) : 0;
}

static std::string shapeList(ArrayRef<int64_t> values) {
  std::string text = "[";
  for (auto [i, v] : llvm::enumerate(values))
    text += (i ? ", " : "") + std::to_string(v);
  return text + "]";
}

FailureOr<size_t> Exporter::fillTile(Operation *op, const TensorWords &t, int64_t r0,
                                     int64_t c0, int64_t tileRows, int64_t tileCols,
                                     std::vector<uint32_t> &tile, int64_t colEnd,
                                     ArrayRef<int64_t> interleave, ArrayRef<int64_t> perm,
                                     ArrayRef<int64_t> rowPerm) {
  // The operand as a matrix: a 1-D operand is one row; higher ranks fold
  // their leading dimensions into rows. Columns from colEnd on read as zero.
  ArrayRef<int64_t> shape = t.type.getShape();
  int64_t stride = shape.empty() ? 1 : shape.back();
  int64_t rows = stride ? t.type.getNumElements() / stride : 0;
  int64_t cols = std::min(stride, colEnd);
  int64_t groups = interleave.empty() ? 1 : interleave[0];
  int64_t unit = interleave.empty() ? 1 : interleave[1];
  if (!stride || stride % (groups * unit))
    return fail(op) << "col_interleave " << shapeList(interleave) << " does not divide the "
                    << stride << " columns";
  if (stride % std::max<int64_t>(1, int64_t(perm.size())))
    return fail(op) << "col_perm of " << perm.size() << " columns does not divide the " << stride
                    << " columns";
  if (rows % std::max<int64_t>(1, int64_t(rowPerm.size())))
    return fail(op) << "row_perm of " << rowPerm.size() << " rows does not divide the " << rows
                    << " rows";
  tile.assign(size_t(tileRows * tileCols), 0);
  size_t used = 0;
  for (int64_t r = 0; r < tileRows; ++r)
    for (int64_t c = 0; c < tileCols; ++c) {
      int64_t row = r0 + r, col = c0 + c;
      if (row < 0 || row >= rows || col < 0 || col >= cols)
        continue;
      col = wk::permutedIndex(wk::interleavedColumn(col, interleave, stride), perm);
      row = wk::permutedIndex(row, rowPerm);
      std::optional<uint32_t> v = t.word(row * stride + col);
      if (!v)
        return fail(op) << "element (" << row << ", " << col
                        << ") of the operand does not fit 32 bits";
      size_t i = size_t(r * tileCols + c);
      tile[i] = *v;
      if (*v)
        used = i + 1;
    }
  return used;
}

/// fp32 words held at `storage`: f32 as they are, f16 and bf16 rounded to
/// nearest even and packed two per word, the even element low.
/// fp32 bit patterns rounded to `storage`'s 16 bits (f16 or bf16), to nearest even.
static std::vector<uint16_t> toHalves(ArrayRef<uint32_t> words, StringRef storage) {
  const llvm::fltSemantics &to =
      storage == "f16" ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat();
  std::vector<uint16_t> halves(words.size());
  for (size_t i = 0; i < words.size(); ++i) {
    llvm::APFloat f(llvm::APFloat::IEEEsingle(), llvm::APInt(32, words[i]));
    bool lost;
    f.convert(to, llvm::APFloat::rmNearestTiesToEven, &lost);
    halves[i] = uint16_t(f.bitcastToAPInt().getZExtValue());
  }
  return halves;
}

static std::vector<uint32_t> packWords(ArrayRef<uint32_t> words, StringRef storage) {
  if (storage == "f32")
    return words.vec();
  std::vector<uint16_t> halves = toHalves(words, storage);
  std::vector<uint32_t> packed((halves.size() + 1) / 2, 0);
  for (size_t i = 0; i < halves.size(); ++i)
    packed[i / 2] |= uint32_t(halves[i]) << (16 * (i % 2));
  return packed;
}

static void appendWords(std::string &data, ArrayRef<uint32_t> words) {
  size_t at = data.size();
  data.resize(at + 4 * words.size());
  for (size_t i = 0; i < words.size(); ++i)
    llvm::support::endian::write32le(&data[at + 4 * i], words[i]);
}

LogicalResult Exporter::exportInitTile(wk::InitTileOp init) {
  int64_t source = static_cast<int64_t>(init.getSource());
  FailureOr<TensorWords> t = tensorWords(init, kernel.getInputs()[source]);
  if (failed(t))
    return failure();
  int64_t offset = static_cast<int64_t>(init.getOffset());
  if (offset < 0 || offset > kU32Max)
    return fail(init) << "offset " << offset << " does not fit the .wafer format";
  ArrayRef<int64_t> ro = init.getRowOrigin(), co = init.getColOrigin();
  // Columns [lo, hi) of the operand, when the kernel computes only those.
  auto [lo, hi] = columnWindow(init.getColWindow());
  std::vector<uint32_t> tile;
  for (int64_t py = 0; py < height; ++py)
    for (int64_t px = 0; px < width; ++px) {
      FailureOr<size_t> used = fillTile(init, *t, ro[0] * py + ro[1] * px,
                                        lo + co[0] * py + co[1] * px, init.getRows(),
                                        init.getCols(), tile, hi, init.getColInterleave(),
                                        init.getColPerm(), init.getRowPerm());
      if (failed(used))
        return failure();
      // SRAM starts zeroed: trailing zero words (padding) and all-zero tiles
      // need no init (a sparse tile of zeros holds no entries).
      if (!*used)
        continue;
      FailureOr<std::vector<uint32_t>> held = heldWords(init, init.getStorage(), tile, init.getCols(), px, py);
      if (failed(held))
        return failure();
      pb::SramInit *s = region->add_init();
      s->set_px(uint32_t(px));
      s->set_py(uint32_t(py));
      s->set_offset(uint32_t(offset));
      appendWords(*s->mutable_data(), *held);
    }
  return success();
}

/// PE (px, py)'s tile as init_tile holds it: packed at its storage, or in
/// the sparse layout, which must fit the words the kernel gave it.
FailureOr<std::vector<uint32_t>> Exporter::heldWords(Operation *op, StringRef storage,
                                                     ArrayRef<uint32_t> tile, int64_t cols,
                                                     int64_t px, int64_t py) {
  std::optional<int64_t> entries = wk::sparseEntries(storage);
  if (!entries) {
    size_t used = tile.size();
    while (used && !tile[used - 1])
      --used;
    return packWords(tile.take_front(used), storage);
  }
  uint64_t rows = tile.size() / uint64_t(cols);
  if (uint64_t(cols) > pb::kMaxSparseCols)
    return fail(op) << "a sparse tile has at most " << pb::kMaxSparseCols << " columns, not "
                    << cols;
  StringRef values = wk::elementStorage(storage);
  bool wide = values == "f32";
  std::vector<uint16_t> halves = wide ? std::vector<uint16_t>() : toHalves(tile, values);
  pb::SparseGaps gaps = wk::nibbleGaps(storage) ? pb::SparseGaps::Nibbles : pb::SparseGaps::Bytes;
  std::vector<uint32_t> held = wide
                                   ? pb::encodeSparseTile(tile.data(), rows, uint64_t(cols), gaps)
                                   : pb::encodeSparseTile(halves.data(), rows, uint64_t(cols), gaps);
  if (held.size() > uint64_t(wk::tileWords(storage, int64_t(rows), cols)))
    return fail(op) << "the tile of PE (" << px << ", " << py << ") holds "
                      << (wide ? pb::countEntries(tile.data(), rows, uint64_t(cols), gaps)
                                : pb::countEntries(halves.data(), rows, uint64_t(cols), gaps))
                      << " entries, more than the " << *entries << " its storage is sized for";
  return held;
}

/// The blob holds every layer's tiles, layer-major, then row-major over the
/// PEs, each tile padded to rows x cols words: EXT_LOAD's source address is
/// an affine of the layer (index 0) and the PE coordinate.
LogicalResult Exporter::exportLoadTile(wk::LoadTileOp load, unsigned depth, pb::Instr &in) {
  if (depth < 1)
    return fail(load) << "it must be inside the layer loop";
  auto layerLoop = cast<wk::LoopOp>(load->getParentOp());
  int64_t layers = int64_t(layerLoop.getCount()), source = int64_t(load.getSource());
  int64_t stride = int64_t(load.getStride());
  int64_t rows = int64_t(load.getRows()), cols = int64_t(load.getCols());
  int64_t tileWords = wk::tileWords(load.getStorage(), rows, cols);
  int64_t tileBytes = 4 * tileWords, layerBytes = tileBytes * width * height;
  int64_t offset = int64_t(load.getOffset());
  if (offset < 0 || offset > kU32Max || rows * cols > kU32Max)
    return fail(load) << "the tile or its offset does not fit the .wafer format";
  if (layerBytes * layers > (int64_t(1) << 31))
    return fail(load) << "the blob of " << layers << " layers x " << layerBytes
                      << " bytes does not fit the .wafer format (2 GiB)";
  ArrayRef<int64_t> ro = load.getRowOrigin(), co = load.getColOrigin();
  pb::ExternalBlob blob;
  blob.set_id(uint32_t(blobs.size()));
  std::string &data = *blob.mutable_data();
  data.reserve(size_t(layerBytes * layers));
  std::vector<uint32_t> tile;
  for (int64_t l = 0; l < layers; ++l) {
    FailureOr<TensorWords> t = tensorWords(load, kernel.getInputs()[source + l * stride]);
    if (failed(t))
      return failure();
    for (int64_t py = 0; py < height; ++py)
      for (int64_t px = 0; px < width; ++px) {
        if (failed(fillTile(load, *t, ro[0] * py + ro[1] * px, co[0] * py + co[1] * px, rows,
                            cols, tile)))
          return failure();
        FailureOr<std::vector<uint32_t>> held = heldWords(load, load.getStorage(), tile, cols, px, py);
        if (failed(held))
          return failure();
        held->resize(size_t(tileWords), 0); // every slot of the blob the same size
        appendWords(data, *held);
      }
  }
  double passes = 1;
  for (auto outer = layerLoop->getParentOfType<wk::LoopOp>(); outer;
       outer = outer->getParentOfType<wk::LoopOp>())
    passes *= double(outer.getCount());
  externalReads += double(data.size()) * passes;
  in.set_op(pb::EXT_LOAD);
  in.set_blob(blob.id());
  in.add_addr()->set_base(offset);
  pb::Affine *from = in.add_addr();
  from->set_base(0);
  from->add_stride(layerBytes);
  from->set_px(tileBytes);
  from->set_py(tileBytes * width);
  in.mutable_n()->set_base(tileWords);
  blobs.push_back(std::move(blob));
  if (lastLoadingKernel != kernel)
    loadingPes += width * height, lastLoadingKernel = kernel;
  return success();
}

LogicalResult Exporter::exportHostInput(wk::HostInputOp in) {
  int64_t source = static_cast<int64_t>(in.getSource());
  auto arg = dyn_cast<BlockArgument>(kernel.getInputs()[source]);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return fail(in) << "host_input operand " << source << " is not an argument of the function";
  pb::HostTensor &t = inputs[arg.getArgNumber()];
  auto type = cast<ShapedType>(arg.getType());
  int64_t offset = static_cast<int64_t>(in.getOffset());
  if (type.getNumElements() > kU32Max || offset < 0 || offset > kU32Max)
    return fail(in) << "the input or its offset does not fit the .wafer format";
  for (int64_t py = 0; py < height; ++py)
    for (int64_t px = 0; px < width; ++px) {
      if (!selectedBy(in.getWhenAttr(), px, py))
        continue;
      pb::Piece *p = t.add_pieces();
      p->set_wafer(uint32_t(waferIndex));
      p->set_x(uint32_t(originX + px));
      p->set_y(uint32_t(originY + py));
      p->set_offset(uint32_t(offset));
      std::optional<ArrayRef<int64_t>> window = in.getWindow();
      p->set_tensor_offset(window ? uint64_t((*window)[0]) : 0);
      p->set_count(uint32_t(window ? (*window)[1] : type.getNumElements()));
      if (window && window->size() == 3) { // count elements of every period
        p->set_rows(uint32_t(type.getNumElements() / (*window)[2]));
        p->set_row_stride(uint64_t((*window)[2]));
      }
    }
  return success();
}

LogicalResult Exporter::exportFilter(wk::FilterOp filter) {
  auto c = color(filter, filter.getPort());
  if (failed(c))
    return failure();
  // The period is the block the port carries each token: its operand's
  // stream size (a feedback port fb<i> stands in for in<i>).
  unsigned operand = 0;
  wk::StreamType stream;
  if (!filter.getPort().drop_front(2).getAsInteger(10, operand) &&
      operand < kernel.getInputs().size())
    stream = dyn_cast<wk::StreamType>(kernel.getInputs()[operand].getType());
  if (!stream)
    return fail(filter) << "port '" << filter.getPort() << "' does not read a stream";
  for (int64_t py = 0; py < height; ++py)
    for (int64_t px = 0; px < width; ++px) {
      if (!selectedBy(filter.getWhenAttr(), px, py))
        continue;
      auto at = [&](wk::AffAttr a) { return a.getBase() + a.getPx() * px + a.getPy() * py; };
      int64_t first = at(filter.getFirst()), count = at(filter.getCount());
      if (first < 0 || count <= 0 || first + count > kU32Max)
        return fail(filter) << "the window of PE (" << px << ", " << py << ") is empty or too large";
      pb::Filter *f = region->add_filters();
      f->set_px(uint32_t(px));
      f->set_py(uint32_t(py));
      f->set_color(*c);
      f->set_first(uint32_t(first));
      f->set_count(uint32_t(count));
      int64_t period = filter.getPeriod().value_or(stream.getSize());
      if (period > kU32Max)
        return fail(filter) << "period " << period << " does not fit the .wafer format";
      f->set_period(uint32_t(period));
    }
  return success();
}

LogicalResult Exporter::exportHostOutput(wk::HostOutputOp out) {
  int64_t index = static_cast<int64_t>(out.getResult());
  Value result = kernel.getResult(index);
  auto type = dyn_cast<ShapedType>(result.getType());
  if (!type || !type.hasStaticShape())
    return fail(out) << "host_output result " << index << " is not a tensor with a static shape";
  int64_t offset = static_cast<int64_t>(out.getOffset());
  int64_t tileRows = static_cast<int64_t>(out.getRows());
  int64_t tileCols = static_cast<int64_t>(out.getCols());
  ArrayRef<int64_t> ro = out.getRowOrigin(), co = out.getColOrigin();
  if (ro.size() != 2 || co.size() != 2 || tileRows <= 0 || tileCols <= 0)
    return fail(out) << "host_output needs positive rows and cols and [py, px] origins";
  if (offset < 0 || offset + 4 * tileRows * tileCols > kU32Max)
    return fail(out) << "host_output offset " << offset << " does not fit the .wafer format";
  // The result as a matrix: columns are its last dimension.
  ArrayRef<int64_t> shape = type.getShape();
  int64_t cols = shape.empty() ? 1 : shape.back();
  int64_t rows = cols ? type.getNumElements() / cols : 0;

  // Columns [lo, hi) of the result, when other kernels write the rest; a
  // kernel that writes into the next one's result reaches the host through
  // it (wskernel.writes_into).
  auto [lo, end] = columnWindow(out.getColWindow());
  int64_t hi = std::min(cols, end);
  Value host = result;
  for (bool followed = true; followed;) {
    followed = false;
    for (OpOperand &use : host.getUses())
      if (auto next = dyn_cast<wk::KernelOp>(use.getOwner())) {
        auto into = next->getAttrOfType<IntegerAttr>(wk::kWritesIntoAttr);
        if (into && into.getInt() == int64_t(use.getOperandNumber())) {
          host = next.getResult(0);
          followed = true;
          break;
        }
      }
  }
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  bool returned = false;
  for (OpOperand &operand : ret->getOpOperands()) {
    if (operand.get() != host)
      continue;
    returned = true;
    pb::HostTensor &t = outputs[operand.getOperandNumber()];
    for (int64_t py = 0; py < height; ++py)
      for (int64_t px = 0; px < width; ++px) {
        if (!selectedBy(out.getWhenAttr(), px, py))
          continue;
        // The part of this PE's tile inside the matrix; the rest is padding.
        int64_t r0 = ro[0] * py + ro[1] * px, c0 = lo + co[0] * py + co[1] * px;
        int64_t rs = std::max<int64_t>(r0, 0), re = std::min(r0 + tileRows, rows);
        int64_t cs = std::max<int64_t>(c0, lo), ce = std::min(c0 + tileCols, hi);
        if (rs >= re || cs >= ce)
          continue;
        int64_t count = ce - cs, n = re - rs;
        int64_t at = offset + 4 * ((rs - r0) * tileCols + (cs - c0));
        auto piece = [&](int64_t sram, int64_t first, int64_t words, int64_t pieceRows) {
          pb::Piece *p = t.add_pieces();
          p->set_wafer(uint32_t(waferIndex));
          p->set_x(uint32_t(originX + px));
          p->set_y(uint32_t(originY + py));
          p->set_offset(uint32_t(sram));
          p->set_tensor_offset(uint64_t(first));
          p->set_count(uint32_t(words));
          if (pieceRows > 1) {
            p->set_rows(uint32_t(pieceRows));
            p->set_row_stride(uint64_t(cols));
          }
        };
        if (count == cols && count == tileCols && n * count <= kU32Max)
          piece(at, rs * cols + cs, n * count, 1); // whole rows: one run of words
        else if (count == tileCols && n <= kU32Max)
          piece(at, rs * cols + cs, count, n); // SRAM rows are `count` words apart
        else
          for (int64_t r = 0; r < n; ++r) // clipped columns: one piece per row
            piece(at + 4 * r * tileCols, (rs + r) * cols + cs, count, 1);
      }
  }
  if (!returned)
    return fail(out) << "host_output result " << index << " is not returned by the function";
  return success();
}

LogicalResult Exporter::exportKernel(wk::KernelOp k) {
  kernel = k;
  auto origin = k->getAttrOfType<DenseI64ArrayAttr>(wf::kOriginAttrName);
  if (!origin || origin.size() != 3)
    return fail(k) << "the kernel is not placed (no '" << wf::kOriginAttrName
                   << "' = array<i64: wafer, x, y>); run --wsc-place first";
  waferIndex = origin[0];
  originX = origin[1];
  originY = origin[2];
  height = k.getHeight();
  width = k.getWidth();
  wf::ArchAttr a = arch;
  if (waferIndex < 0 || waferIndex >= a.getMaxWafers() || originX < 0 || originY < 0 ||
      originX + width > a.getWidth() || originY + height > a.getHeight())
    return fail(k) << width << "x" << height << " PEs at (" << originX << ", " << originY
                   << ") of wafer " << waferIndex << " do not fit arch '" << a.getName() << "' ("
                   << a.getWidth() << "x" << a.getHeight() << " PEs, " << a.getMaxWafers()
                   << " wafers)";
  int64_t sram = static_cast<int64_t>(k.getSramBytesPerPe());
  if (sram < 0 || sram % 4 || sram > a.getSramBytes())
    return fail(k) << "sram " << sram << " must be a multiple of 4 and at most the arch's "
                   << a.getSramBytes() << " bytes";
  colors = k->getAttrOfType<DictionaryAttr>(wf::kColorsAttrName);

  std::vector<pb::Region> &list = regions[waferIndex];
  list.emplace_back();
  region = &list.back();
  region->set_name(k.getName().str());
  region->set_kind(k.getKind().str());
  region->set_x(uint32_t(originX));
  region->set_y(uint32_t(originY));
  region->set_w(uint32_t(width));
  region->set_h(uint32_t(height));
  region->set_sram_bytes_per_pe(uint32_t(sram));
  if (failed(emitBlock(k.getBody().front(), 0)))
    return failure();
  for (Operation &op : k.getBody().front()) {
    LogicalResult r = success();
    if (auto init = dyn_cast<wk::InitTileOp>(op))
      r = exportInitTile(init);
    else if (auto in = dyn_cast<wk::HostInputOp>(op))
      r = exportHostInput(in);
    else if (auto out = dyn_cast<wk::HostOutputOp>(op))
      r = exportHostOutput(out);
    else if (auto filter = dyn_cast<wk::FilterOp>(op))
      r = exportFilter(filter);
    if (failed(r))
      return failure();
  }
  boundTokenIds(k);
  return success();
}

/// The token ids of an embedding must name rows of its table: the host
/// input that an "embed" kernel's GATHER indexes gets the valid range
/// [row_lo, row_lo + the table's rows) (the pieces of a table split over
/// several kernels widen it to the whole table). Only "embed" kernels are
/// bounded here: a generic gather by data moves words with INDEX_COPY,
/// which faults on an index outside its source (though -1 reads as 0).
void Exporter::boundTokenIds(wk::KernelOp k) {
  if (k.getKind() != "embed")
    return;
  Block &body = k.getBody().front();
  k.walk([&](wk::GatherOp g) {
    wk::AffAttr rowLo = g.getRowLo();
    if (!rowLo.getLoop().empty() || rowLo.getPx() < 0 || rowLo.getPy() < 0)
      return;
    int64_t index = g.getIndex().getBase();
    for (auto in : body.getOps<wk::HostInputOp>()) {
      int64_t source = static_cast<int64_t>(in.getSource());
      if (source < 0 || source >= int64_t(k.getInputs().size()))
        continue;
      auto arg = dyn_cast<BlockArgument>(k.getInputs()[source]);
      if (!arg || arg.getOwner() != &func.getBody().front())
        continue;
      int64_t at = static_cast<int64_t>(in.getOffset());
      int64_t words = cast<ShapedType>(arg.getType()).getNumElements();
      if (index < at || index >= at + 4 * words)
        continue;
      pb::HostTensor &t = inputs[arg.getArgNumber()];
      if (t.dtype() == pb::F32 || t.dtype() == pb::F64 || t.dtype() == pb::F16 ||
          t.dtype() == pb::BF16 || t.dtype() == pb::BOOL)
        continue;
      for (auto init : body.getOps<wk::InitTileOp>()) {
        int64_t table = static_cast<int64_t>(init.getSource());
        if (static_cast<int64_t>(init.getOffset()) != g.getTable().getBase() || table < 0 ||
            table >= int64_t(k.getInputs().size()))
          continue;
        auto type = dyn_cast<ShapedType>(k.getInputs()[table].getType());
        if (!type || !type.hasStaticShape() || type.getRank() != 2)
          continue;
        int64_t lo = rowLo.getBase(), hi = lo + type.getDimSize(0);
        pb::ValueRange *valid = t.mutable_valid();
        if (tableRanged.insert(arg.getArgNumber()).second) {
          // The first piece of a table: within the importer's bound, if any.
          if (valid->lo() < valid->hi())
            lo = std::max(lo, valid->lo()), hi = std::min(hi, valid->hi());
        } else if (valid->lo() < valid->hi()) { // another piece of the table
          lo = std::min(lo, valid->lo()), hi = std::max(hi, valid->hi());
        }
        valid->set_lo(lo);
        valid->set_hi(hi);
        break;
      }
    }
  });
}

/// A generating program names its token input (the first [B, T] integer
/// input), its next_token output and its sampling input, if any, for the
/// runtime.
LogicalResult Exporter::exportGeneration(pb::Program &prog) {
  if (!func->hasAttr("wsgraph.generate"))
    return success();
  pb::Generation *g = prog.mutable_generation();
  for (BlockArgument arg : func.getArguments())
    if (auto t = dyn_cast<RankedTensorType>(arg.getType());
        t && t.getRank() == 2 && isa<IntegerType>(t.getElementType())) {
      g->set_token_input(prog.inputs(int(arg.getArgNumber())).name());
      g->set_context(uint32_t(t.getDimSize(1)));
      break;
    }
  for (const pb::HostTensor &out : prog.outputs())
    if (out.name() == "next_token")
      g->set_next_token_output(out.name());
  for (const pb::HostTensor &in : prog.inputs())
    if (in.name() == "sampling")
      g->set_sampling_input(in.name());
  g->set_kv_cache_bytes(uint64_t(wsc::kvCacheBytes(func)));
  if (g->token_input().empty() || g->next_token_output().empty())
    return func.emitError("a generating program needs a [batch, tokens] integer input and a "
                          "'next_token' result");
  return success();
}

LogicalResult Exporter::exportRoutes(pb::Program &prog) {
  for (auto table : module.getOps<wf::RoutesOp>()) {
    if (table.getWafer() >= prog.wafers_size())
      continue; // a wafer no kernel uses; validated below
    pb::Wafer *w = prog.mutable_wafers(int(table.getWafer()));
    SmallVector<int32_t> storage;
    ArrayRef<int32_t> flat = table.getFlatTable(storage);
    for (size_t i = 0; i + 4 < flat.size(); i += 5) {
      pb::Route *r = w->add_routes();
      r->set_x(uint32_t(flat[i]));
      r->set_y(uint32_t(flat[i + 1]));
      r->set_color(uint32_t(flat[i + 2]));
      r->set_in(pb::Port(flat[i + 3]));
      r->set_out_mask(uint32_t(flat[i + 4]));
    }
  }
  // Where every LINK port leads (wafer.links), row for row.
  for (const auto &row : links) {
    pb::InterWaferLink *l = prog.add_links();
    l->set_src_wafer(uint32_t(row[0]));
    l->set_src_x(uint32_t(row[1]));
    l->set_src_y(uint32_t(row[2]));
    l->set_color(uint32_t(row[3]));
    l->set_dst_wafer(uint32_t(row[4]));
    l->set_dst_x(uint32_t(row[5]));
    l->set_dst_y(uint32_t(row[6]));
    l->set_dst_color(uint32_t(row[7]));
  }
  return success();
}

LogicalResult Exporter::run(pb::Program &prog) {
  FailureOr<wf::ArchAttr> moduleArch = wf::getArch(module);
  if (failed(moduleArch))
    return failure();
  arch = *moduleArch;
  for (auto op : module.getOps<wf::LinksOp>())
    links = op.getRows();
  prog.set_format_version(2);
  if (failed(exportArch(prog)))
    return failure();

  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isDeclaration())
      continue;
    if (func)
      return f.emitError("cannot export: the module holds more than one function ('")
             << func.getSymName() << "' and '" << f.getSymName() << "')";
    func = f;
  }
  if (!func)
    return module.emitError("cannot export: the module holds no function");

  // Host tensors: every tensor argument is an input, every result an output.
  auto hostTensor = [&](Type type, StringAttr name, StringRef fallback, unsigned i,
                        pb::HostTensor &t) -> LogicalResult {
    auto shaped = dyn_cast<RankedTensorType>(type);
    std::optional<pb::DType> dtype =
        shaped ? dtypeOf(shaped.getElementType()) : std::optional<pb::DType>();
    if (!shaped || !shaped.hasStaticShape() || !dtype)
      return func.emitError("cannot export: ")
             << fallback << " " << i << " has type " << type
             << "; host tensors are statically shaped tensors of floats, integers or i1";
    t.set_name(name ? name.str() : (fallback + Twine(i)).str());
    t.set_dtype(*dtype);
    for (int64_t d : shaped.getShape())
      t.add_shape(d);
    return success();
  };
  inputs.resize(func.getNumArguments());
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (failed(hostTensor(func.getArgument(i).getType(),
                          func.getArgAttrOfType<StringAttr>(i, "wsgraph.name"), "arg", i,
                          inputs[i])))
      return failure();
    // The importer's bound on indices (Gather's [-n, n)); token ids narrow it
    // to their table's rows below.
    if (auto valid = func.getArgAttrOfType<DenseI64ArrayAttr>(i, "wsgraph.valid")) {
      pb::HostTensor &t = inputs[i];
      if (valid.size() != 2 || valid[0] >= valid[1] || t.dtype() == pb::F32 ||
          t.dtype() == pb::F64 || t.dtype() == pb::F16 || t.dtype() == pb::BF16 ||
          t.dtype() == pb::BOOL)
        return func.emitError("cannot export: arg ")
               << i << " has a wsgraph.valid that is no range [lo, hi) of an integer input";
      t.mutable_valid()->set_lo(valid[0]);
      t.mutable_valid()->set_hi(valid[1]);
    }
  }
  outputs.resize(func.getNumResults());
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (failed(hostTensor(func.getResultTypes()[i],
                          func.getResultAttrOfType<StringAttr>(i, "wsgraph.name"), "result", i,
                          outputs[i])))
      return failure();

  for (Operation &op : func.getBody().front()) {
    if (auto k = dyn_cast<wk::KernelOp>(op)) {
      if (failed(exportKernel(k)))
        return failure();
      continue;
    }
    if (!isa<wg::WeightOp, wg::ConstantOp, func::ReturnOp>(op))
      return op.emitError("cannot export: '")
             << op.getName() << "' is not a wskernel.kernel; lower the model first "
             << "(--wsc-pipeline)";
  }
  for (unsigned i = 0; i < outputs.size(); ++i)
    if (outputs[i].pieces_size() == 0 &&
        cast<ShapedType>(func.getResultTypes()[i]).getNumElements() > 0)
      return func.emitError("cannot export: result ")
             << i << " ('" << outputs[i].name() << "') is not written by any wskernel.host_output";

  int64_t numWafers = regions.empty() ? 1 : regions.rbegin()->first + 1;
  for (auto table : module.getOps<wf::RoutesOp>())
    numWafers = std::max<int64_t>(numWafers, table.getWafer() + 1);
  for (const auto &link : links)
    numWafers = std::max<int64_t>({numWafers, link[0] + 1, link[4] + 1});
  for (int64_t w = 0; w < numWafers; ++w) {
    pb::Wafer *wafer = prog.add_wafers();
    wafer->set_index(uint32_t(w));
    for (pb::Region &r : regions[w])
      *wafer->add_regions() = std::move(r);
  }
  std::vector<std::array<int32_t, 3>> deadPes = wf::readDefects(wf::getDefects(module)).pes;
  llvm::sort(deadPes);
  deadPes.erase(std::unique(deadPes.begin(), deadPes.end()), deadPes.end());
  for (const auto &pe : deadPes) {
    if (pe[0] >= numWafers)
      continue;
    pb::Pe *d = prog.mutable_wafers(pe[0])->add_dead_pes();
    d->set_x(uint32_t(pe[1]));
    d->set_y(uint32_t(pe[2]));
  }
  if (failed(exportRoutes(prog)))
    return failure();
  for (pb::HostTensor &t : inputs)
    *prog.add_inputs() = std::move(t);
  for (pb::HostTensor &t : outputs)
    *prog.add_outputs() = std::move(t);
  // The lowering records batch x tokens on the function. Otherwise: one
  // vector per token flows along every stream, so the loop trips around the
  // stream ops are the tokens; a module without streams counts the trips of
  // its deepest loop nest.
  int64_t perRun = tokens ? tokens : maxTrips;
  if (auto recorded = func->getAttrOfType<IntegerAttr>("wskernel.tokens"))
    perRun = recorded.getInt();
  prog.set_tokens(uint32_t(std::clamp<int64_t>(perRun, 1, kU32Max)));
  if (failed(exportGeneration(prog)))
    return failure();
  prog.set_estimated_cycles(estimatedRunCycles(func, perRun, arch, externalReads));
  // Every loading PE shares the external memory's bandwidth.
  for (pb::ExternalBlob &blob : blobs)
    *prog.add_external() = std::move(blob);
  if (loadingPes)
    prog.mutable_arch()->set_ext_mem_bytes_per_cycle(double(arch.getExtMemBytesPerCycle()) /
                                                     double(loadingPes));
  // Last: the runtime checks every section against them when it loads the file.
  *prog.mutable_digests() = pb::computeDigests(prog);
  return success();
}

} // namespace

LogicalResult wsc::exportWafer(ModuleOp module, std::string &bytes) {
  pb::Program prog;
  if (failed(Exporter(module).run(prog)))
    return failure();
  bytes.clear();
  bool ok;
  {
    // The coded stream flushes into `bytes` when it goes out of scope.
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    ok = prog.SerializeToCodedStream(&coded);
  }
  if (!ok)
    return module.emitError("cannot export: the program does not serialize (over 2 GB?)");
  return success();
}

LogicalResult wsc::exportWafer(ModuleOp module, llvm::raw_ostream &os) {
  std::string bytes;
  if (failed(exportWafer(module, bytes)))
    return failure();
  os << bytes;
  return success();
}

void wsc::registerExportWafer() {
  static TranslateFromMLIRRegistration registration(
      "export-wafer", "Export a placed and routed module as a .wafer program",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("cannot export: expected a builtin.module");
        return exportWafer(module, os);
      },
      [](DialectRegistry &registry) {
        registry
            .insert<func::FuncDialect, wg::WsgraphDialect, wk::WskernelDialect, wf::WaferDialect>();
      });
}
