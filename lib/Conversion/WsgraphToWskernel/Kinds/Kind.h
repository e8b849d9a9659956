//===- Kind.h - one home per kernel kind -------------------------*- C++ -*-===//
//
// Each kernel kind lives in one file of Kinds/: its sizer and cycle
// estimate, its SPMD body, and how placement re-sizes a kernel of it. The
// lowering reaches a kind through kernelKind(name); adding a kind is a file
// and a line in Registry.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_CONVERSION_KINDS_KIND_H
#define WSC_LIB_CONVERSION_KINDS_KIND_H

#include "../KernelBody.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace wsc::lowering {

/// What a kind sees of the lowering while it plans one function's kernels.
struct PlanContext {
  int64_t batch, tokens; // the token geometry (1, 1 without token ids)
  bool haveTokens;
  wafer::ArchAttr arch;
  CostModel cost;
  std::string storage; // how weight matrices and tables are held
  std::vector<KernelPlan> &plans;            // so far, in program order
  llvm::DenseMap<Value, int> &produced;      // the plan that streams a value
  llvm::DenseSet<Operation *> &absorbed;     // ops some plan took in
  int layer = 0;                             // the transformer block being planned
  bool generate = false;                     // the program feeds its next tokens back
  /// Makes some kernel stream `v`; false after an error (reported).
  std::function<bool(Value)> streamOf;

  /// Is `v` a [batch, tokens, C] activation, the form the fused kinds take?
  bool isActivation(Value v) const {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return haveTokens && t && t.getRank() == 3 && t.getDimSize(0) == batch &&
           t.getDimSize(1) == tokens;
  }
  static int64_t width(Value v) { return cast<RankedTensorType>(v.getType()).getDimSize(2); }
};

/// The one user of `v`, if it has exactly one.
inline Operation *singleUser(Value v) { return v.hasOneUse() ? *v.getUsers().begin() : nullptr; }

enum class Planned { Yes, NotThisKind, Failed };

class KernelKind {
public:
  virtual ~KernelKind() = default;
  /// Plans `op` (and what it absorbs) as this kind: Yes, or NotThisKind
  /// when the op is not of the kind's form (the generic kind takes it), or
  /// Failed after an error on an operand.
  virtual Planned plan(Operation *op, PlanContext &ctx, KernelPlan &plan) const {
    return Planned::NotThisKind;
  }
  /// Writes the body of kernel `k` planned as `p`; returns its data bytes
  /// per PE (-1 after an error on the op) and its cycles per token.
  virtual std::pair<int64_t, double> writeBody(Body &k, const KernelPlan &p, int64_t batch,
                                               int64_t tokens, const CostModel &cost) const = 0;
  /// Gives `p`, read back from a built kernel of this kind (`ins` its
  /// logical inputs), its sizer and what the body needs that the operands
  /// do not carry, so that placement can reshape it; failure when the kind
  /// has no other shape.
  virtual LogicalResult resize(wk::KernelOp kernel, ArrayRef<LogicalInput> ins, KernelPlan &p,
                               int64_t batch, int64_t tokens, wafer::ArchAttr arch) const {
    return failure();
  }
  /// Keeps on the kernel what resize() reads back (an epsilon, a scale).
  virtual void annotate(wk::KernelOp kernel, const KernelPlan &p) const {}
  /// What one token alone waits for beyond its cycles per token: the
  /// chains inside the kernel that a pipeline overlaps with other tokens'
  /// work (partial sums down the columns, partial softmaxes down the rows,
  /// a row's sums and their totals back); `n` the result's width, `tokens`
  /// the positions of a sequence.
  virtual double chainCycles(const KernelPlan &p, int64_t n, int64_t tokens,
                             const CostModel &cost) const {
    return 0;
  }
};

/// The fused kinds, in the order the lowering tries them on an op.
ArrayRef<const KernelKind *> fusedKinds();
/// The kind a plan or kernel names (linear_gelu is the linear kind); null if none.
const KernelKind *kernelKind(StringRef name);
const KernelKind &embedKind();
const KernelKind &layerNormKind();
const KernelKind &rmsNormKind();
const KernelKind &linearKind();
const KernelKind &gatedLinearKind();
const KernelKind &attentionKind();
const KernelKind &addKind();
const KernelKind &argmaxKind();
const KernelKind &outputKind();
const KernelKind &genericKind();

// Sizing the kinds share (KernelSizing.cpp).
int64_t maxRows(const KernelPlan &p, wafer::ArchAttr arch);
int64_t maxCols(const KernelPlan &p, wafer::ArchAttr arch);
/// Grows a grid from `pes` PEs until `words(h, w)` fits a PE's SRAM or the
/// grid cannot grow; the caller reports what still does not fit.
std::pair<int64_t, int64_t> fitGrid(int64_t pes, int64_t rows, int64_t cols, int64_t maxH,
                                    int64_t maxW, int64_t sramWords,
                                    function_ref<int64_t(int64_t, int64_t)> words);
/// A sizer that tiles a rows x cols matrix over the grid, grown until
/// `words(h, w)` per PE fit SRAM.
Sizer tiledSizer(int64_t rows, int64_t cols, wafer::ArchAttr arch,
                 std::function<int64_t(int64_t, int64_t)> words);
/// The sizer of the linear kinds (linearSizer, and the gated linear's):
/// within the budget, the fastest of the shapes with each count of tile
/// rows, a finishing row and a hand-on row (the square-ish tiles of the
/// K x N weight one of them), `tileWords(h, w)` the words a PE of tiles on
/// h rows x w columns needs. `host`: the result is kept for the host.
/// `density`: the least fraction of nonzeros any of its weights holds
/// (sparse tiles multiply only those).
Sizer linearFamilySizer(int64_t k, int64_t n, bool host, int64_t batch, int64_t tokens,
                        wafer::ArchAttr arch, std::function<int64_t(int64_t, int64_t)> tileWords,
                        std::function<double(const KernelPlan &)> cycles,
                        double density = 1.0);
/// The words per token of logical input i, 0 when it is no stream.
inline int64_t streamWordsOf(ArrayRef<LogicalInput> ins, size_t i) {
  return i < ins.size() ? ins[i].words() : 0;
}
/// The shape of plan input i when it is a matrix, else empty.
inline ArrayRef<int64_t> matrixShape(const KernelPlan &p, size_t i) {
  auto t = i < p.inputs.size() ? dyn_cast<RankedTensorType>(p.inputs[i].getType()) : nullptr;
  return t && t.getRank() == 2 ? t.getShape() : ArrayRef<int64_t>();
}

} // namespace wsc::lowering

#endif // WSC_LIB_CONVERSION_KINDS_KIND_H
