//===- RotaryTables.cpp - rotary tables as functions of the position -----===//
#include "RotaryTables.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace wsc;
using namespace wsc::lowering;
namespace wg = wsc::wsgraph;

namespace {


/// The angle of (c, s) at t = 1, 2, 4, ... unwrapped into f: each estimate
/// predicts the next angle within pi.
double unwrappedFrequency(ArrayRef<double> angle) {
  double f = angle.size() > 1 ? angle[1] : 0.0;
  for (size_t t = 2; t < angle.size(); t *= 2) {
    double turns = std::round((f * double(t) - angle[t]) / (2 * M_PI));
    f = (angle[t] + 2 * M_PI * turns) / double(t);
  }
  return f;
}

/// The largest gap between a table column and m * cos(t * f) (sin) over
/// the positions, t * f rounded to fp32 as torch rounds it.
double tableError(ArrayRef<float> c, ArrayRef<float> s, int64_t r, int64_t i, int64_t tokens,
                  float m, float f) {
  double error = 0;
  for (int64_t t = 0; t < tokens; ++t) {
    double a = double(float(t) * f);
    error = std::max({error, std::abs(m * std::cos(a) - double(c[t * r + i])),
                      std::abs(m * std::sin(a) - double(s[t * r + i]))});
  }
  return error;
}

/// Column i's frequency: the fp32 value about the unwrapped estimate (a few
/// ulps either way) whose angles give the tables, if any does, within
/// `rounding` (relative) of the tables' element type.
std::optional<float> columnFrequency(ArrayRef<float> c, ArrayRef<float> s, int64_t r, int64_t i,
                                     int64_t tokens, float m, double rounding) {
  SmallVector<double> angle;
  for (int64_t t = 0; t < tokens; ++t)
    angle.push_back(std::atan2(double(s[t * r + i]) / m, double(c[t * r + i]) / m));
  float f = float(unwrappedFrequency(angle));
  double tolerance = rounding * std::max(1.0f, std::abs(m));
  if (tableError(c, s, r, i, tokens, m, f) <= tolerance / 4)
    return f; // the estimate itself, as a rule
  float best = f, cand = f;
  double bestError = std::numeric_limits<double>::infinity();
  for (int step = 0; step < 8; ++step)
    cand = std::nextafter(cand, -std::numeric_limits<float>::infinity());
  for (int step = 0; step <= 16; ++step, cand = std::nextafter(cand, INFINITY))
    if (double error = tableError(c, s, r, i, tokens, m, cand); error < bestError)
      bestError = error, best = cand;
  if (!(bestError <= tolerance))
    return std::nullopt;
  return best;
}

} // namespace

std::optional<RotaryTables> wsc::lowering::rotaryTables(wg::RotaryOp op, int64_t tokens) {
  DenseElementsAttr cos = wg::getConstantElements(op.getCos());
  DenseElementsAttr sin = wg::getConstantElements(op.getSin());
  int64_t r = op.getRotaryDims();
  auto rows = [&](Value table) {
    ArrayRef<int64_t> shape = cast<ShapedType>(table.getType()).getShape();
    return llvm::all_of(shape.drop_back(2), [](int64_t d) { return d == 1; }) &&
           shape.size() >= 2 && shape[shape.size() - 2] == tokens;
  };
  if (!cos || !sin || !rows(op.getCos()) || !rows(op.getSin()) ||
      !isa<FloatType>(cos.getElementType()))
    return std::nullopt;
  // The tables' elements as fp32, whatever float type they are held in.
  auto widened = [](DenseElementsAttr table) {
    SmallVector<float> out;
    for (APFloat v : table.getValues<APFloat>()) {
      bool lost;
      v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(v.convertToFloat());
    }
    return out;
  };
  SmallVector<float> c = widened(cos), s = widened(sin);
  // Tables held at 16 bits are the angles' values rounded so: the kernel's
  // fp32 angles are within that of them (a few ulps of fp32 otherwise).
  unsigned mantissa =
      APFloat::semanticsPrecision(cast<FloatType>(cos.getElementType()).getFloatSemantics());
  double rounding = mantissa >= 24 ? 4e-7 : std::ldexp(2.0, -int(mantissa));
  RotaryTables out;
  for (int64_t i = 0; i < r; ++i) {
    float m = c[i];
    if (m == 0 || s[i] != 0)
      return std::nullopt;
    // rotate_half's tables repeat their first half (cat(freqs, freqs)).
    if (i >= r / 2 && out.amp[i - r / 2] == m &&
        tableError(c, s, r, i, tokens, m, out.freq[i - r / 2]) == 0) {
      out.freq.push_back(out.freq[i - r / 2]);
      out.amp.push_back(m);
      continue;
    }
    std::optional<float> f = columnFrequency(c, s, r, i, tokens, m, rounding);
    if (!f)
      return std::nullopt;
    out.freq.push_back(*f);
    out.amp.push_back(m);
  }
  return out;
}

Value wsc::lowering::rotaryTableConstant(Operation *at, const RotaryTables &t) {
  OpBuilder b(at);
  SmallVector<float> words(t.freq);
  words.append(t.amp.begin(), t.amp.end());
  auto type = RankedTensorType::get({2, int64_t(t.freq.size())}, b.getF32Type());
  return wg::ConstantOp::create(b, at->getLoc(), DenseElementsAttr::get(type, ArrayRef(words)));
}


PairTurn PairTurn::allocate(Body &k, Sram &sram, unsigned input, int64_t nb) {
  PairTurn t;
  t.pairs = nb / 2;
  t.table = sram.words(2 * t.pairs);
  t.position = sram.words(1);
  t.cosines = sram.words(t.pairs), t.sines = sram.words(t.pairs);
  t.products = sram.words(2);
  k.initTile(k.operand(input), t.table, 2, t.pairs, {0, 0}, {0, t.pairs});
  return t;
}

void PairTurn::apply(Body &k, int64_t block, ArrayAttr when, ArrayAttr firstToken) const {
  auto at = [&](int64_t addr) { return k.aff(addr); };
  k.imm("fill", at(position), at(position), -1.0f, at(1), when, firstToken);
  k.imm("add", at(position), at(position), 1.0f, at(1), when);
  // Angles t * f as torch rounds them, their sines and cosines, times m.
  k.scalar("mul", at(cosines), at(table), at(position), at(pairs), when);
  k.unary("sin", at(sines), at(cosines), at(pairs), when);
  k.unary("cos", at(cosines), at(cosines), at(pairs), when);
  k.vector("mul", at(cosines), at(cosines), at(table + 4 * pairs), at(pairs), when);
  k.vector("mul", at(sines), at(sines), at(table + 4 * pairs), at(pairs), when);
  // Pair j: a s and b s kept, then a cos - b s and b cos + a s in place.
  k.loop(pairs, [&] {
    wk::AffAttr a = k.aff(block, {8}), b = k.aff(block + 4, {8});
    wk::AffAttr c = k.aff(cosines, {4}), s = k.aff(sines, {4});
    wk::AffAttr as = at(products), bs = at(products + 4), one = at(1);
    k.vector("mul", as, a, s, one, when);
    k.vector("mul", bs, b, s, one, when);
    k.vector("mul", a, a, c, one, when);
    k.vector("sub", a, a, bs, one, when);
    k.vector("mul", b, b, c, one, when);
    k.vector("add", b, b, as, one, when);
  });
}
