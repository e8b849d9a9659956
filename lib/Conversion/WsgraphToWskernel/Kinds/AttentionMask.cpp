//===- AttentionMask.cpp - a padding mask in the attention kernel --------===//
#include "AttentionMask.h"

#include "wsgraph/WsgraphDialect.h"

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

Value wsc::lowering::peelMaskSteps(Value mask, SmallVectorImpl<MaskStep> &steps) {
  int64_t numel = cast<ShapedType>(mask.getType()).getNumElements();
  SmallVector<MaskStep> reversed;
  Value at = mask;
  auto sameSize = [&](Value v) { return cast<ShapedType>(v.getType()).getNumElements() == numel; };
  auto isF32 = [](Value v) { return cast<ShapedType>(v.getType()).getElementType().isF32(); };
  while (Operation *def = at.getDefiningOp()) {
    if (isa<wg::ReshapeOp, wg::UnsqueezeOp, wg::SqueezeOp, wg::ExpandOp>(def) &&
        sameSize(def->getOperand(0))) {
      at = def->getOperand(0);
      continue;
    }
    if (auto castOp = dyn_cast<wg::CastOp>(def)) {
      Type from = cast<ShapedType>(castOp.getInput().getType()).getElementType();
      if (!isF32(at) || !(from.isF32() || from.isSignlessInteger()))
        break;
      if (!from.isF32())
        reversed.push_back({"to_float", 0.0f});
      at = castOp.getInput();
      continue;
    }
    // where(bool(y), c, y) or where(bool(y), y, c): c on the nonzero
    // words, or on the zero ones (Llama's masked_fill of 1 - mask).
    if (auto where = dyn_cast<wg::WhereOp>(def)) {
      auto cond = where.getCond().getDefiningOp<wg::CastOp>();
      std::optional<double> onTrue = wg::splatValue(where.getOnTrue()),
                            onFalse = wg::splatValue(where.getOnFalse());
      Value y = cond ? cond.getInput() : Value();
      if (!y || !isF32(at) || !isF32(y) || !sameSize(y) || !sameSize(where.getCond()) ||
          !(onTrue ? where.getOnFalse() == y : onFalse && where.getOnTrue() == y))
        break;
      reversed.push_back(onTrue ? MaskStep{"fill_nonzero", float(*onTrue)}
                                : MaskStep{"fill_zero", float(*onFalse)});
      at = y;
      continue;
    }
    if (!isa<wg::AddOp, wg::SubOp, wg::MulOp>(def) || !isF32(at))
      break;
    Value lhs = def->getOperand(0), rhs = def->getOperand(1);
    std::optional<double> cl = wg::splatValue(lhs), cr = wg::splatValue(rhs);
    Value x = cr ? lhs : rhs;
    std::optional<double> c = cr ? cr : cl;
    if (!c || (cl && cr) || !sameSize(x) || !isF32(x))
      break;
    float v = float(*c);
    if (isa<wg::AddOp>(def))
      reversed.push_back({"add", v});
    else if (isa<wg::MulOp>(def))
      reversed.push_back({"mul", v});
    else
      reversed.push_back(cr ? MaskStep{"add", -v} : MaskStep{"rsub", v}); // x - c, c - x
    at = x;
  }
  steps.assign(reversed.rbegin(), reversed.rend());
  return at;
}


void wsc::lowering::applyMaskSteps(Body &k, ArrayRef<MaskStep> steps,
                                    int64_t row, int64_t scratch, int64_t tb) {
  wk::AffAttr x = k.aff(row), n = k.aff(tb);
  for (const auto &[step, value] : steps) {
    if (step == "to_float") {
      k.unary("to_float", x, x, n);
    } else if (step == "fill_nonzero" || step == "fill_zero") {
      // zero, then x == 0, then the fill: select(x == 0, ...).
      wk::AffAttr zero = k.aff(scratch), isZero = k.aff(scratch + 4 * tb),
                  fill = k.aff(scratch + 8 * tb);
      k.imm("fill", zero, zero, 0.0f, n);
      k.imm("fill", fill, fill, value, n);
      k.vector("eq", isZero, x, zero, n);
      bool keepZeros = step == "fill_nonzero";
      wk::SelectOp::create(k.builder(), k.builder().getUnknownLoc(), x, isZero,
                           keepZeros ? x : fill, keepZeros ? fill : x, n, nullptr, nullptr);
    } else {
      if (step == "rsub")
        k.imm("mul", x, x, -1.0f, n);
      k.imm(step == "mul" ? "mul" : "add", x, x, value, n);
    }
  }
}

void wsc::lowering::copyMaskRow(Body &k, int64_t all, int64_t dst, int64_t tb, int64_t tokens) {
  // Row py's keys are tokens [py*tb, py*tb + tb) of sequence b (loop index
  // 0); the last row's may be fewer.
  int64_t h = k.kernel().getHeight(), w = k.kernel().getWidth();
  int64_t last = tokens - (h - 1) * tb;
  wk::AffAttr from = k.aff(all, {4 * tokens}, 0, 4 * tb);
  if (h > 1)
    k.unary("copy", k.aff(dst), from, k.aff(tb), k.pes(0, w - 1, 0, h - 2));
  if (last > 0)
    k.unary("copy", k.aff(dst), from, k.aff(last), k.pes(0, w - 1, h - 1, h - 1));
}

void wsc::lowering::receiveMaskRow(Body &k, unsigned input, int64_t dst, int64_t tb,
                                   int64_t tokens) {
  // Row py's keys are tokens [py*tb, py*tb + tb); the last row's may be fewer.
  int64_t h = k.kernel().getHeight(), w = k.kernel().getWidth();
  int64_t last = tokens - (h - 1) * tb;
  OpBuilder &b = k.builder();
  auto filter = [&](StringRef port, wk::AffAttr first, int64_t count, ArrayAttr when) {
    OpBuilder::InsertionGuard guard(b); // filters are the kernel's, outside its loops
    b.setInsertionPointToStart(k.top());
    wk::FilterOp::create(b, b.getUnknownLoc(), port, first, k.aff(count), when, nullptr);
  };
  for (const InBlock &block : k.input(input).blocks) {
    assert(block.offset == 0 && block.size == tokens && "a mask row is one block");
    if (h > 1)
      filter(block.port, k.aff(0, {}, 0, tb), tb, k.pes(0, w - 1, 0, h - 2));
    if (h > 1)
      k.recv(block.port, k.aff(dst), k.aff(tb), "copy", k.pes(0, w - 1, 0, h - 2));
    if (last <= 0)
      continue; // the last row holds no keys
    filter(block.port, k.aff((h - 1) * tb), last, k.pes(0, w - 1, h - 1, h - 1));
    k.recv(block.port, k.aff(dst), k.aff(last), "copy", k.pes(0, w - 1, h - 1, h - 1));
  }
}

