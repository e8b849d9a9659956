//===- WskernelDialect.h - per-core kernels ---------------------*- C++ -*-===//
#ifndef WSKERNEL_WSKERNELDIALECT_H
#define WSKERNEL_WSKERNELDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

#include "wskernel/WskernelDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "wskernel/WskernelTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "wskernel/WskernelAttrs.h.inc"

#define GET_OP_CLASSES
#include "wskernel/WskernelOps.h.inc"

namespace wsc::wskernel {
/// How placement asks for a kernel in another shape. The lowering that made
/// the kernel knows its kind's sizing, so it registers this on the dialect
/// (wsc::registerKernelSizing); placement depends on the dialect alone.
class KernelSizingInterface : public mlir::DialectInterface::Base<KernelSizingInterface> {
public:
  explicit KernelSizingInterface(mlir::Dialect *dialect) : Base(dialect) {}
  /// Rebuilds `kernel` on about `pes` PEs within `maxH` x `maxW`, its body,
  /// SRAM and cycles written again; failure leaves it as it was (no shape
  /// fits SRAM, or it would take more than `maxCycles` when > 0, or the
  /// kind has no other shape).
  virtual mlir::LogicalResult resize(KernelOp kernel, int64_t pes, int64_t maxH, int64_t maxW,
                                     double maxCycles) const = 0;
};

/// Asks the registered sizing for another shape of `kernel`; failure when
/// none is registered.
inline mlir::LogicalResult resizeKernel(KernelOp kernel, int64_t pes, int64_t maxH,
                                        int64_t maxW, double maxCycles = 0) {
  auto *sizing = kernel->getDialect()->getRegisteredInterface<KernelSizingInterface>();
  if (!sizing)
    return mlir::failure();
  return sizing->resize(kernel, pes, maxH, maxW, maxCycles);
}

/// Words that `elements` values take at `storage` ("f32", or "f16" and
/// "bf16", packed two per word).
inline int64_t storageWords(llvm::StringRef storage, int64_t elements) {
  return storage == "f32" ? elements : (elements + 1) / 2;
}
/// Column `col` of an operand seen through init_tile's `col_interleave`
/// ([a, u]) over its `stride` columns: the operand's column.
inline int64_t interleavedColumn(int64_t col, llvm::ArrayRef<int64_t> interleave,
                                 int64_t stride) {
  if (interleave.empty() || interleave[0] <= 1)
    return col;
  int64_t groups = interleave[0], unit = interleave[1], q = col / unit; // unit q of the view
  return (q % groups) * (stride / groups) + (q / groups) * unit + col % unit;
}
/// Column (or row) `i` of an operand seen through init_tile's `col_perm`
/// (or `row_perm`; empty: in order).
inline int64_t permutedIndex(int64_t i, llvm::ArrayRef<int64_t> perm) {
  if (perm.empty())
    return i;
  int64_t p = int64_t(perm.size());
  return i - i % p + perm[size_t(i % p)];
}
/// "sparse:N", "sparse:N:f16", "sparse:N:bf16": a weight tile in the
/// .wafer's sparse layout (runtime/format/wsc/format/SparseTile.h) holding at
/// most N entries, its values fp32 or 16-bit, each entry's gap in 8 bits;
/// "sparse4:N..." the same with 4-bit gaps. Its N, or nothing for another
/// storage.
std::optional<int64_t> sparseEntries(llvm::StringRef storage);
/// Whether a sparse storage's gaps take 4 bits ("sparse4:N...").
bool nibbleGaps(llvm::StringRef storage);
/// The storage of a tile's values: f32, f16 or bf16 (a sparse tile's, or
/// `storage` itself).
llvm::StringRef elementStorage(llvm::StringRef storage);
/// The storage of a tile of at most `entries` entries whose values take
/// `values` (f32, f16 or bf16), its gaps 4 bits with `nibbles`.
std::string sparseStorage(int64_t entries, llvm::StringRef values, bool nibbles = false);
/// Words a rows x cols tile takes at `storage` (the sparse layout: what its
/// N entries or its dense fallback take, the smaller).
int64_t tileWords(llvm::StringRef storage, int64_t rows, int64_t cols);
/// Weight streaming: on a kernel, the layers its body loops over; on the
/// function, the layers of the model.
inline constexpr llvm::StringLiteral kStreamedLayersAttr = "wskernel.streamed_layers";
/// On the function: its block kernels hold every layer's tiles in SRAM
/// (mode=folded) instead of loading them each layer.
inline constexpr llvm::StringLiteral kResidentLayersAttr = "wskernel.resident_layers";
/// On a kernel: the cycles one token alone waits for beyond its cycles per
/// token, in chains a pipeline overlaps with other tokens' work (decode).
inline constexpr llvm::StringLiteral kChainCyclesAttr = "wskernel.chain_cycles";
/// On a kernel: result 0 is this operand's host tensor with the kernel's
/// columns (host_output's col_window) written into it.
inline constexpr llvm::StringLiteral kWritesIntoAttr = "wskernel.writes_into";
/// Weight streaming's feedback streams (see KernelOp's `feedback`): the
/// kernels whose feedback names `kernel`, and the kernel named `name` in the
/// same block (null when there is none).
llvm::SmallVector<KernelOp> feedbackReaders(KernelOp kernel);
KernelOp feedbackSource(KernelOp kernel, llvm::StringRef name);
/// The port on which `feeder` sends its result `result` back: "fb" when it
/// has one stream result (or none: a token), else "fbout<result>".
std::string feedbackPort(KernelOp feeder, unsigned result);
/// One stream a kernel feeds back: its port, its words per token, and the
/// readers' ports that take it.
struct FeedbackStream {
  std::string port;
  int64_t size = 0;
  llvm::SmallVector<std::pair<KernelOp, std::string>, 4> reads;
};
/// The streams `feeder` feeds back, by its readers' `feedback` entries: a
/// reader's port fb<j> takes the block its operand j is in layer 0.
llvm::SmallVector<FeedbackStream, 1> feedbackStreams(KernelOp feeder);

/// An inclusive box of PE coordinates inside a kernel.
struct PeBox {
  int64_t x0, x1, y0, y1;
  bool contains(int64_t x, int64_t y) const { return x >= x0 && x <= x1 && y >= y0 && y <= y1; }
};
/// The PEs whose body sends (`sends`) or receives on `port`: the distinct
/// `when` ranges of those ops (the whole kernel for an op without one),
/// none when no op uses the port. A stream starts at the last PE (x1, y1)
/// of the box around its senders and reaches, at each reader, exactly the
/// PEs that receive it.
llvm::SmallVector<PeBox, 1> portPes(KernelOp kernel, llvm::StringRef port, bool sends);
/// One hop of a channel: from PE (px, py) of the kernel to (px+dx, py+dy).
struct ChannelHop {
  int64_t px, py, dx, dy;
};
/// The hops of channel `name`: from each PE that sends on it to its
/// neighbour in the channel's direction inside the kernel, in (py, px)
/// order. Routes follow the body: no hop where no PE sends.
llvm::SmallVector<ChannelHop> channelHops(KernelOp kernel, llvm::StringRef name);
/// The box around `boxes` (not empty).
PeBox boundingBox(llvm::ArrayRef<PeBox> boxes);
} // namespace wsc::wskernel

#endif // WSKERNEL_WSKERNELDIALECT_H
