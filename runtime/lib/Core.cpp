// The PE core's interpreter: runs a region's SPMD code on one PE's SRAM,
// charging cycles per the timing model. It only touches its own PeState,
// so PEs can run in parallel.
#include "Core.h"

#include "wsc/format/SparseTile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>

namespace wsc::runtime::detail {
namespace {

using format::Op;

/// MATVEC's sums over a sparse-form tile: each row's entries in ascending
/// column, the dense loop's order without its zero products.
void matvecEntries(float *__restrict sums, const SparseView &t, const float *x, uint64_t rows) {
  const SramU16 *cols = t.cols;
  const SramF32 *v = t.values;
  uint64_t e = 0;
  for (uint64_t r = 0; r < rows; ++r) {
    float sum = 0;
    for (uint64_t end = e + t.counts[r]; e < end; ++e)
      sum += v[e] * x[cols[e]];
    sums[r] = sum;
  }
}

/// VECMAT's sums over a sparse-form tile: rows in ascending order, as vecmatRows.
void vecmatEntries(float *__restrict sums, const SparseView &t, const float *x, uint64_t rows) {
  const SramU16 *cols = t.cols;
  const SramF32 *v = t.values;
  uint64_t e = 0;
  for (uint64_t r = 0; r < rows; ++r) {
    float xr = x[r];
    for (uint64_t end = e + t.counts[r]; e < end; ++e)
      sums[cols[e]] += xr * v[e];
  }
}

/// Entries in rows [first, first + rows) of a sparse-form tile.
uint64_t rowEntries(const SparseView &t, uint64_t first, uint64_t rows) {
  uint64_t sum = 0;
  for (uint64_t r = first; r < first + rows; ++r)
    sum += t.counts[r];
  return sum;
}

float unary(Op op, float x) {
  switch (op) {
  case format::EXP:
    return std::exp(x);
  case format::ERF:
    return std::erf(x);
  case format::TANH:
    return std::tanh(x);
  case format::SQRT:
    return std::sqrt(x);
  case format::RSQRT:
    return 1.0f / std::sqrt(x);
  case format::NEG:
    return -x;
  case format::GELU: {
    // Double precision inside keeps the fp32 result correctly rounded in practice.
    double d = x;
    return float(0.5 * d * (1.0 + std::erf(d * 0.70710678118654752440)));
  }
  case format::GELU_TANH: { // in double too, as GELU
    double d = x;
    return float(0.5 * d * (1.0 + std::tanh(0.79788456080286535588 * (d + 0.044715 * d * d * d))));
  }
  case format::LOG:
    return std::log(x);
  case format::ABS:
    return std::fabs(x);
  case format::SIN:
    return std::sin(x);
  case format::COS:
    return std::cos(x);
  case format::SIGMOID:
    return 1.0f / (1.0f + std::exp(-x));
  case format::RECIPROCAL:
    return 1.0f / x;
  case format::RELU: // max(x, 0) as MAX: a NaN stays
    return std::isnan(x) || x > 0.0f ? x : 0.0f;
  case format::FLOOR:
    return std::floor(x);
  case format::CEIL:
    return std::ceil(x);
  default:
    return x;
  }
}

/// unary's int32 twin (NEG, ABS, RELU), wrapping: -INT32_MIN is INT32_MIN.
int32_t unaryI(Op op, int32_t x) {
  switch (op) {
  case format::NEG:
    return int32_t(0u - uint32_t(x));
  case format::ABS:
    return x < 0 ? int32_t(0u - uint32_t(x)) : x;
  case format::RELU:
    return std::max(x, 0);
  default:
    return x;
  }
}

/// f32 -> int32 toward zero, saturating; NaN -> 0 (TO_INT).
int32_t toInt(float x) {
  if (std::isnan(x))
    return 0;
  if (x >= 2147483648.0f)
    return INT32_MAX;
  if (x <= -2147483648.0f)
    return INT32_MIN;
  return int32_t(x);
}

/// A double, truncated toward zero, modulo 2^32 as a two's complement
/// int32 (a wrapping cast); NaN and infinities give 0 (I32 POW).
int32_t wrapToInt(double d) {
  if (!std::isfinite(d))
    return 0;
  double r = std::fmod(std::trunc(d), 4294967296.0); // exact, |r| < 2^32
  return int32_t(uint32_t(int64_t(r)));
}

float binary(Op op, float a, float b) {
  switch (op) {
  case format::ADD:
  case format::ADD_S:
  case format::ADD_I:
    return a + b;
  case format::SUB:
  case format::SUB_S:
    return a - b;
  case format::MUL:
  case format::MUL_S:
  case format::MUL_I:
    return a * b;
  case format::DIV:
  case format::DIV_S:
    return a / b;
  case format::MAX:
    return std::isnan(a) || a > b ? a : b;
  case format::MIN:
    return std::isnan(a) || a < b ? a : b;
  case format::POW:
    return std::pow(a, b); // the float overload: powf
  case format::MOD: { // the divisor's sign, as Python's float %
    float r = std::fmod(a, b);
    if (r != 0.0f)
      return (r < 0.0f) != (b < 0.0f) ? r + b : r;
    return std::copysign(0.0f, b);
  }
  default:
    return a;
  }
}

/// binary's int32 twin, wrapping; DIV truncates, MOD takes the divisor's
/// sign. The caller has refused a zero divisor.
int32_t binaryI(Op op, int32_t a, int32_t b) {
  uint32_t ua = uint32_t(a), ub = uint32_t(b);
  switch (op) {
  case format::ADD:
  case format::ADD_S:
  case format::ADD_I:
    return int32_t(ua + ub);
  case format::SUB:
  case format::SUB_S:
    return int32_t(ua - ub);
  case format::MUL:
  case format::MUL_S:
  case format::MUL_I:
    return int32_t(ua * ub);
  case format::DIV:
  case format::DIV_S:
    return b == -1 ? int32_t(0u - ua) : a / b; // INT32_MIN / -1 wraps
  case format::MOD: {
    int32_t r = b == -1 ? 0 : a % b;
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
  }
  case format::MAX:
    return std::max(a, b);
  case format::MIN:
    return std::min(a, b);
  case format::POW:
    return wrapToInt(std::pow(double(a), double(b)));
  default:
    return a;
  }
}

/// EQ..GE on two operands of one type.
template <class T> bool compare(Op op, T a, T b) {
  switch (op) {
  case format::EQ:
    return a == b;
  case format::LT:
    return a < b;
  case format::LE:
    return a <= b;
  case format::GT:
    return a > b;
  default: // GE
    return a >= b;
  }
}

/// The result word of a two-operand op on words a and b: a value of `type`
/// for arithmetic, int32 1 or 0 for a comparison or a logic op.
uint32_t binaryWord(Op op, format::ElemType type, uint32_t a, uint32_t b) {
  bool i32 = type == format::ELEM_I32;
  switch (op) {
  case format::EQ:
  case format::LT:
  case format::LE:
  case format::GT:
  case format::GE:
    return i32 ? compare(op, int32_t(a), int32_t(b)) : compare(op, asF(a), asF(b));
  case format::AND:
    return a && b;
  case format::OR:
    return a || b;
  case format::XOR:
    return !a != !b;
  case format::BIT_AND:
    return a & b;
  case format::BIT_OR:
    return a | b;
  case format::BIT_XOR:
    return a ^ b;
  default:
    return i32 ? uint32_t(binaryI(op, int32_t(a), int32_t(b))) : asW(binary(op, asF(a), asF(b)));
  }
}

/// The result word of a one-operand op on word x.
uint32_t unaryWord(Op op, format::ElemType type, uint32_t x) {
  switch (op) {
  case format::NOT:
    return x == 0;
  case format::BIT_NOT:
    return ~x;
  case format::TO_INT:
    return uint32_t(toInt(asF(x)));
  case format::TO_FLOAT:
    return asW(float(int32_t(x)));
  default:
    return type == format::ELEM_I32 ? uint32_t(unaryI(op, int32_t(x))) : asW(unary(op, asF(x)));
  }
}

/// The integer DIV and MOD, whose zero divisor faults.
bool dividesInt(const Instr &in) {
  return in.type == format::ELEM_I32 &&
         (in.op == format::DIV || in.op == format::DIV_S || in.op == format::MOD);
}

/// The immediate of ADD_I, MUL_I and FILL as a word of the instruction's
/// type: I32 rounds it to the nearest int32 (halves away from zero), saturating.
uint32_t immWord(const Instr &in) {
  if (in.type != format::ELEM_I32)
    return asW(in.imm);
  return uint32_t(toInt(std::round(in.imm)));
}

/// End of a byte range for messages; saturates instead of overflowing.
int64_t rangeEnd(int64_t begin, uint64_t words) {
  int64_t end;
  if (words > uint64_t(INT64_MAX) / 4 || __builtin_add_overflow(begin, int64_t(words * 4), &end))
    return INT64_MAX;
  return end;
}

/// out[i] = fn(x[i], y[i * step]) over fp32 words, step 0 or 1: with the op
/// known here the loop vectorizes (the compiler checks the overlap of out
/// with x and y at run time, and keeps element order when they overlap).
template <class Fn>
void eachF32(SramF32 *out, const SramF32 *x, const SramF32 *y, uint64_t step, uint64_t n, Fn fn) {
  if (step) {
    for (uint64_t i = 0; i < n; ++i)
      out[i] = fn(x[i], y[i]);
    return;
  }
  float s = y[0];
  for (uint64_t i = 0; i < n; ++i)
    out[i] = fn(x[i], s);
}

/// A 32-bit finalizer: every input bit moves about half the output bits.
uint32_t mixBits(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

/// RANDOM: out[i] uniform in (0, 1) from the bits of x[i] and of the key,
/// 23 bits and a half, so neither 0 nor 1 (a Gumbel noise's logs stay
/// finite). Reads the key first: out may overlap it.
void randomUniform(uint32_t *out, const uint32_t *x, uint32_t key, uint64_t n) {
  uint32_t k = mixBits(key);
  for (uint64_t i = 0; i < n; ++i) {
    float u = (float(mixBits(x[i] ^ k) >> 9) + 0.5f) * 0x1p-23f;
    std::memcpy(out + i, &u, 4);
  }
}

/// out[i] = fn(x[i]) over n fp32 words.
template <class Fn> void eachF32(SramF32 *out, const SramF32 *x, uint64_t n, Fn fn) {
  for (uint64_t i = 0; i < n; ++i)
    out[i] = fn(x[i]);
}

/// Whether word ranges [a, a + an) and [b, b + bn) share a word.
bool overlap(uint32_t a, uint64_t an, uint32_t b, uint64_t bn) {
  return an && bn && a < b + bn && b < a + an;
}

/// REDUCE_SUM (from 0), REDUCE_MAX (from -inf) or REDUCE_MIN (from +inf)
/// of n floats in index order, one loop per op.
float reduceF32(Op op, const SramF32 *x, uint64_t n) {
  const float inf = std::numeric_limits<float>::infinity();
  float acc = op == format::REDUCE_SUM ? 0.0f : op == format::REDUCE_MAX ? -inf : inf;
  if (op == format::REDUCE_SUM)
    for (uint64_t i = 0; i < n; ++i)
      acc += x[i];
  else if (op == format::REDUCE_MAX)
    for (uint64_t i = 0; i < n; ++i)
      acc = binary(format::MAX, acc, x[i]);
  else
    for (uint64_t i = 0; i < n; ++i)
      acc = binary(format::MIN, acc, x[i]);
  return acc;
}

/// reduceF32's int32 twin: sums wrap; MAX from INT32_MIN, MIN from INT32_MAX.
int32_t reduceI32(Op op, const uint32_t *x, uint64_t n) {
  Op elem = op == format::REDUCE_SUM   ? format::ADD
            : op == format::REDUCE_MAX ? format::MAX
                                       : format::MIN;
  int32_t acc = elem == format::ADD ? 0 : elem == format::MAX ? INT32_MIN : INT32_MAX;
  for (uint64_t i = 0; i < n; ++i)
    acc = binaryI(elem, acc, int32_t(x[i]));
  return acc;
}

} // namespace

bool isTranscendental(Op op) {
  switch (op) {
  case format::EXP:
  case format::ERF:
  case format::TANH:
  case format::SQRT:
  case format::RSQRT:
  case format::GELU:
  case format::GELU_TANH:
  case format::DIV:
  case format::DIV_S:
  case format::LOG:
  case format::SIN:
  case format::COS:
  case format::SIGMOID:
  case format::POW:
  case format::RECIPROCAL:
    return true;
  default:
    return false;
  }
}

/// The fp32 arithmetic ops of a model's hot loops (ADD, SUB, MUL, DIV, MAX,
/// MIN and their _S and _I forms) at vector speed; false for the others.
bool fastF32(Op op, SramF32 *out, const SramF32 *x, const SramF32 *y, uint64_t step, uint64_t n) {
  switch (op) {
  case format::ADD:
  case format::ADD_S:
  case format::ADD_I:
    eachF32(out, x, y, step, n, [](float a, float b) { return a + b; });
    return true;
  case format::SUB:
  case format::SUB_S:
    eachF32(out, x, y, step, n, [](float a, float b) { return a - b; });
    return true;
  case format::MUL:
  case format::MUL_S:
  case format::MUL_I:
    eachF32(out, x, y, step, n, [](float a, float b) { return a * b; });
    return true;
  case format::DIV:
  case format::DIV_S:
    eachF32(out, x, y, step, n, [](float a, float b) { return a / b; });
    return true;
  case format::MAX:
    eachF32(out, x, y, step, n, [](float a, float b) { return binary(format::MAX, a, b); });
    return true;
  case format::MIN:
    eachF32(out, x, y, step, n, [](float a, float b) { return binary(format::MIN, a, b); });
    return true;
  default:
    return false;
  }
}

/// The one-operand fp32 ops, the cheap ones in loops of their own (they
/// vectorize); the transcendental ones are bound by their libm calls.
void unaryF32(Op op, SramF32 *out, const SramF32 *x, uint64_t n) {
  switch (op) {
  case format::NEG:
    return eachF32(out, x, n, [](float v) { return -v; });
  case format::ABS:
    return eachF32(out, x, n, [](float v) { return unary(format::ABS, v); });
  case format::RELU:
    return eachF32(out, x, n, [](float v) { return unary(format::RELU, v); });
  case format::FLOOR:
    return eachF32(out, x, n, [](float v) { return std::floor(v); });
  case format::CEIL:
    return eachF32(out, x, n, [](float v) { return std::ceil(v); });
  default:
    return eachF32(out, x, n, [op](float v) { return unary(op, v); });
  }
}

/// VECMAT's rows of `w` (rows x cols) into `sums`: sums[c] += x[r] * w[r][c]
/// in ascending r for every c, the order of a row-at-a-time loop, so the
/// result is the same bit for bit. Four rows per pass load and store `sums`
/// once instead of four times (the row-at-a-time loop was bound by them).
WSC_MULTIVERSION void vecmatRows(float *__restrict sums, const float *w, const float *x,
                                 uint64_t rows, uint64_t cols) {
  uint64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float *w0 = w + r * cols, *w1 = w0 + cols, *w2 = w1 + cols, *w3 = w2 + cols;
    float x0 = x[r], x1 = x[r + 1], x2 = x[r + 2], x3 = x[r + 3];
    for (uint64_t c = 0; c < cols; ++c) {
      float s = sums[c];
      s += x0 * w0[c];
      s += x1 * w1[c];
      s += x2 * w2[c];
      s += x3 * w3[c];
      sums[c] = s;
    }
  }
  for (; r < rows; ++r) {
    const float *wr = w + r * cols;
    float xr = x[r];
    for (uint64_t c = 0; c < cols; ++c)
      sums[c] += xr * wr[c];
  }
}

Core::Step Core::fault(const Instr &in, std::string kind, std::string what) {
  s_.setFault(fmt::format(
      "{}: {}{}: instruction {} ({}): {}", kind, m_.where(reg_.wafer, reg_.x + px_, reg_.y + py_),
      usesColor(in.op) ? fmt::format(", color {}", in.color) : "", s_.pc, opName(in.op), what));
  return Step::Fault;
}

bool Core::countFault(const Instr &in, const char *what, int64_t v) {
  if (v < 0)
    fault(in, "bad count", fmt::format("{} = {} is negative", what, v));
  else
    fault(in, "SRAM overflow",
          fmt::format("{} = {} words cannot fit the kernel's {} SRAM bytes", what, v,
                      reg_.sramBytes));
  return false;
}

bool Core::spanFault(const Instr &in, int k, uint64_t words, int64_t addr) {
  if (addr % 4)
    fault(in, "misaligned address", fmt::format("addr[{}] = {} is not a multiple of 4", k, addr));
  else if (addr < 0 || words > reg_.sramBytes || uint64_t(addr) + words * 4 > reg_.sramBytes)
    fault(in, "SRAM overflow",
          fmt::format("addr[{}] spans bytes [{}, {}) outside the kernel's {} SRAM bytes", k, addr,
                      rangeEnd(addr, words), reg_.sramBytes));
  else // beyond the PE's words in the arena: the footprint analysis was wrong
    fault(in, "emulator error",
          fmt::format("addr[{}] spans bytes [{}, {}), past the {} bytes the emulator found this "
                      "PE's code can reach",
                      k, addr, rangeEnd(addr, words), uint64_t(s_.sramWords) * 4));
  return false;
}

void Core::multiply(const Instr &in, bool mv, uint64_t n, uint64_t m, uint32_t d, uint32_t a,
                    const float *x, uint64_t firstRow) {
  // dst may overlap W or x: the products go to `acc` first. Each sum in
  // index order; VECMAT runs along contiguous columns and vectorizes, a
  // block of rows (widened at once when stored as halves) per call.
  // Scratch kept across calls: a malloc per multiply showed in profiles.
  static thread_local std::vector<float> acc, buf;
  acc.assign(mv ? n : m, 0.0f);
  float *__restrict sums = acc.data();
  // Rows per elements() call: VECMAT widens halves some 8 K at a time.
  uint64_t block = mv                                ? 1
                   : fp32Words(in)                   ? std::max<uint64_t>(n, 1)
                                                     : std::max<uint64_t>(4, 8192 / (m + 1) & ~3);
  for (uint64_t r = 0; r < n; r += block) {
    uint64_t rows = std::min(block, n - r);
    const float *__restrict w = elements(in, a, (firstRow + r) * m, rows * m, buf);
    if (mv) {
      float sum = 0;
      for (uint64_t c = 0; c < m; ++c)
        sum += w[c] * x[c];
      sums[r] = sum;
    } else {
      vecmatRows(sums, w, x + r, rows, m);
    }
  }
  storeSums(in, d, sums, acc.size());
}

void Core::storeSums(const Instr &in, uint32_t d, const float *__restrict sums, size_t len) {
  // One loop per case, with the size in a register: these vectorize.
  SramF32 *out = words(d);
  if (in.count == 1)
    for (size_t i = 0; i < len; ++i)
      out[i] += sums[i];
  else
    std::memcpy(out, sums, len * 4);
}

void Core::multiplyEntries(const Instr &in, bool mv, uint64_t n, uint64_t m, uint32_t d,
                           const SparseView &t, const float *x) {
  static thread_local std::vector<float> acc; // dst may overlap the tile or x
  acc.assign(mv ? n : m, 0.0f);
  if (mv)
    matvecEntries(acc.data(), t, x, n);
  else
    vecmatEntries(acc.data(), t, x, n);
  storeSums(in, d, acc.data(), acc.size());
}

Core::Step Core::multiplySparse(const Instr &in, bool mv, uint64_t n, uint64_t m) {
  uint32_t d = 0, b = 0;
  SparseView t;
  if (!span(in, 0, mv ? n : m, d) || !sparseTile(in, n, m, t) || !span(in, 2, mv ? m : n, b))
    return Step::Fault;
  if (t.dense) {
    multiply(in, mv, n, m, d, t.first, words(b));
    charge(in, ceilDiv(n * m, m_.fmac));
  } else {
    multiplyEntries(in, mv, n, m, d, t, words(b));
    charge(in, format::sparseTileCycles(n, m, t.nnz, sparseValues(in), m_.fmac, t.gaps));
  }
  return Step::Next;
}

bool Core::sparseTile(const Instr &in, uint64_t n, uint64_t m, SparseView &t) {
  uint32_t a = 0;
  if (!span(in, 1, 1, a)) // word 0 says how long the tile is
    return false;
  uint32_t head = s_.sram[a];
  if (head == format::kDenseTile) {
    t.dense = true;
    t.first = a + 1;
    return span(in, 1, format::denseTileWords(n, m, sparseValues(in)), a);
  }
  if (m > format::kMaxSparseCols)
    return badTile(in, fmt::format("m = {} is more than the {} columns a sparse tile indexes", m,
                                   format::kMaxSparseCols));
  format::SparseValues v = sparseValues(in);
  t.gaps = head & format::kNibbleGaps ? format::SparseGaps::Nibbles : format::SparseGaps::Bytes;
  t.nnz = head & ~format::kNibbleGaps;
  if (!span(in, 1, format::sparseTileWords(n, m, t.nnz, v, t.gaps), a))
    return false;
  const uint32_t *w = s_.sram + a + 1;
  uint64_t per = format::countsPerWord(m), gapsPer = format::gapsPerWord(t.gaps);
  const uint32_t *gaps = w + (n + per - 1) / per;
  // Counts and gaps are widened once into counts and columns, so that the
  // loops read one form; a row's columns are its gaps' running sum.
  static thread_local std::vector<uint16_t> counts, cols;
  counts.resize(n), cols.resize(t.nnz);
  for (uint64_t r = 0; r < n; ++r)
    counts[r] = uint16_t(format::packedIndex(w, r, per));
  if (!checkCounts(in, n, m, t.nnz, counts))
    return false;
  for (uint64_t r = 0, e = 0; r < n; ++r) {
    uint64_t next = 0;
    for (uint64_t end = e + counts[r]; e < end; ++e) {
      uint64_t c = next + format::packedIndex(gaps, e, gapsPer);
      if (c >= m)
        return badTile(in, fmt::format("column {} of entry {} is not below m = {}", c, e, m));
      cols[e] = uint16_t(c);
      next = c + 1;
    }
  }
  t.counts = counts.data(), t.cols = cols.data();
  static thread_local std::vector<float> widened; // 16-bit values, read as fp32
  uint32_t values = uint32_t(gaps + (t.nnz + gapsPer - 1) / gapsPer - s_.sram);
  t.values = elements(in, values, 0, t.nnz, widened);
  t.perEntry = format::sparseTileWords(n, m, t.nnz, v, t.gaps) < format::denseTileWords(n, m, v);
  return true;
}

bool Core::sparseRows(const Instr &in, uint64_t n, uint64_t cols, SparseView &t,
                      uint64_t &firstRow) {
  int64_t rows = eval(in.k), at = eval(in.firstRow);
  uint64_t tileRows = rows ? uint64_t(rows) : n;
  if (rows < 0 || at < 0 || uint64_t(at) > tileRows || n > tileRows - uint64_t(at))
    return badTile(in, fmt::format("rows [{}, {}) are not inside its rows (k = {}, n = {})", at,
                                   at + int64_t(n), rows, n));
  if (!sparseTile(in, tileRows, cols, t))
    return false;
  firstRow = uint64_t(at);
  if (t.dense) // multiply() reads the dense form from firstRow
    return true;
  uint64_t skipped = rowEntries(t, 0, firstRow);
  t.counts += firstRow, t.cols += skipped, t.values += skipped;
  t.nnz = rowEntries(t, 0, n);
  return true;
}

bool Core::checkCounts(const Instr &in, uint64_t n, uint64_t m, uint64_t nnz,
                       const std::vector<uint16_t> &counts) {
  // A pass for the maximum (it vectorizes); the culprit is looked for only on a fault.
  uint64_t sum = 0;
  uint16_t most = 0;
  for (uint64_t r = 0; r < n; ++r) {
    sum += counts[r];
    most = std::max<uint16_t>(most, counts[r]);
  }
  if (most > m)
    for (uint64_t r = 0;; ++r)
      if (counts[r] > m)
        return badTile(in, fmt::format("row {} holds {} entries, more than m = {}", r,
                                       unsigned(counts[r]), m));
  if (sum != nnz)
    return badTile(in, fmt::format("row counts sum to {}, nnz is {}", sum, nnz));
  return true;
}

void Core::unaryOp(const Instr &in, uint64_t n, uint32_t d, uint32_t a) {
  bool floats = in.type == format::ELEM_F32 && in.op != format::NOT && in.op != format::TO_INT &&
                in.op != format::TO_FLOAT && in.op != format::BIT_NOT;
  if (floats)
    return unaryF32(in.op, words(d), words(a), n);
  for (uint64_t i = 0; i < n; ++i)
    s_.sram[d + i] = unaryWord(in.op, in.type, s_.sram[a + i]);
}

Core::Step Core::binaryOp(const Instr &in, uint64_t n, uint32_t d, uint32_t a, const uint32_t *b,
                          uint64_t bStep) {
  // Element i is read before it is written, so dst may equal a source.
  uint32_t *w = s_.sram;
  if (in.type == format::ELEM_F32 &&
      fastF32(in.op, words(d), words(a), reinterpret_cast<const SramF32 *>(b), bStep, n))
    return Step::Next;
  bool zeroFaults = dividesInt(in);
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t y = b[i * bStep];
    if (zeroFaults && y == 0)
      return fault(in, "division by zero",
                   fmt::format("element {}: int32 {} by 0", i, int32_t(w[a + i])));
    w[d + i] = binaryWord(in.op, in.type, w[a + i], y);
  }
  return Step::Next;
}

uint32_t Core::reduce(const Instr &in, uint64_t n, uint32_t a) const {
  if (in.type == format::ELEM_I32)
    return uint32_t(reduceI32(in.op, s_.sram + a, n));
  return asW(reduceF32(in.op, reinterpret_cast<const SramF32 *>(s_.sram + a), n));
}

Core::Step Core::select(const Instr &in, uint64_t n) {
  uint32_t d = 0, c = 0, a = 0, b = 0;
  if (!span(in, 0, n, d) || !span(in, 1, n, c) || !span(in, 2, n, a) || !span(in, 3, n, b))
    return Step::Fault;
  const uint32_t *w = s_.sram;
  bool overlaps = overlap(d, n, c, n) || overlap(d, n, a, n) || overlap(d, n, b, n);
  uint32_t *out = resultWords(d, n, overlaps);
  for (uint64_t i = 0; i < n; ++i)
    out[i] = w[c + i] ? w[a + i] : w[b + i];
  if (overlaps)
    std::memcpy(s_.sram + d, out, n * 4);
  return Step::Next;
}

void Core::noteStore(const Instr &in) {
  uint64_t n;
  switch (in.op) {
  case format::SEND:
  case format::RECV_DROP:
  case format::NOP:
    return;
  case format::VECMAT:
  case format::RECV_VECMAT:
  case format::GATHER:
    n = uint64_t(eval(in.m));
    break;
  case format::REDUCE_SUM:
  case format::REDUCE_MAX:
  case format::REDUCE_MIN:
    n = 1;
    break;
  default:
    n = uint64_t(eval(in.n));
  }
  // The operand was checked when it ran: inside the SRAM, aligned.
  uint64_t first = uint64_t(eval(in.addr[0])) / 4;
  StoreWatch &w = *s_.watch;
  for (uint64_t word = std::max<uint64_t>(first, w.lo); word < std::min<uint64_t>(first + n, w.hi);
       ++word) {
    w.cycle[word - w.lo] = s_.clock;
    int64_t e = w.element[word - w.lo];
    if (w.onStore && e >= 0)
      (*w.onStore)(uint64_t(e), int32_t(s_.sram[word]), s_.clock);
    if (w.stopped && e >= 0 && e == w.stopElement)
      w.stopped->store(true);
  }
}

Core::Step Core::indexCopy(const Instr &in, uint64_t n, uint64_t m) {
  uint32_t d = 0, a = 0, x = 0;
  if (!span(in, 0, n, d) || !span(in, 1, m, a) || !span(in, 2, n, x))
    return Step::Fault;
  const uint32_t *w = s_.sram;
  bool overlaps = overlap(d, n, a, m) || overlap(d, n, x, n);
  uint32_t *out = resultWords(d, n, overlaps);
  for (uint64_t i = 0; i < n; ++i) {
    int32_t j = int32_t(w[x + i]);
    if (j >= 0 && uint64_t(j) < m)
      out[i] = w[a + uint32_t(j)];
    else if (j == -1)
      out[i] = 0;
    else
      return fault(in, "index out of range",
                   fmt::format("index {} at i = {} is neither -1 nor in [0, m) with m = {}", j, i,
                               m));
  }
  if (overlaps)
    std::memcpy(s_.sram + d, out, n * 4);
  charge(in, n); // an indexed move: one word per cycle
  return Step::Next;
}

Core::Step Core::runAsync(const Instr &in, uint64_t n) {
  awaitSlot();
  uint32_t lo = 0; // RECV_DROP touches no SRAM
  if (in.op != format::RECV_DROP && !span(in, 0, n, lo))
    return Step::Fault;
  uint32_t hi = in.op == format::RECV_DROP ? lo : lo + uint32_t(n);
  // The op runs on the engine once both it and the core got there; the
  // core's clock does not move.
  uint64_t core = s_.clock;
  s_.clock = std::max(core, s_.async.free);
  Step st = Step::Next;
  if (in.op == format::SEND) {
    outbox_.add(in.color, s_.sram + lo, uint32_t(n), s_.clock);
    ++s_.messages;
    charge(in, n);
  } else {
    st = recv(in, n, lo);
  }
  if (st == Step::Next)
    inFlight(in, lo, hi);
  s_.clock = core;
  return st;
}

Core::Step Core::recv(const Instr &in, uint64_t n, uint32_t dst, uint32_t w, uint64_t cols) {
  joinColors(in);
  RecvQueue *qp = s_.queue(in.color);
  if ((qp ? qp->available() : 0) < n) {
    s_.status = PeStatus::Blocked;
    s_.waitColor = in.color;
    s_.waitWords = n;
    if (qp)
      qp->need = n; // the origin's next messages wake this PE
    return Step::Blocked;
  }
  // A sparse tile is checked once its words are all there, not at each
  // wake-up: a pass over the tile per message would cost more than its work.
  SparseView tile;
  uint64_t firstRow = 0;
  if (in.op == format::RECV_VECMAT && isSparse(in.storage)) {
    if (!sparseRows(in, n, cols, tile, firstRow))
      return Step::Fault;
    w = tile.first;
  }
  bool entries = tile.counts != nullptr; // the sparse form
  if (!qp) { // n == 0 on a color nothing delivers
    if (in.op == format::RECV_VECMAT && entries)
      multiplyEntries(in, false, 0, cols, dst, tile, nullptr);
    else if (in.op == format::RECV_VECMAT)
      multiply(in, false, 0, cols, dst, w, nullptr, firstRow);
    charge(in, 0);
    return Step::Next;
  }
  RecvQueue &q = *qp;
  // The core pulls one word per cycle and cannot pull a word before it arrived.
  uint64_t end = s_.clock + n;
  // RECV_VECMAT: the vector gathers here; each word's row of multiply-adds
  // starts once it arrived and the row before is done (`done`).
  bool fused = in.op == format::RECV_VECMAT;
  static thread_local std::vector<float> vec;
  if (fused && vec.size() < n) // grown only: a resize would clear the words each time
    vec.resize(n);
  // RECV_DROP with forward: the words pass through, nothing stored.
  static thread_local std::vector<uint32_t> passing;
  bool passes = in.op == format::RECV_DROP && in.forward >= 0;
  if (passes && passing.size() < n)
    passing.resize(n);
  uint64_t done = s_.clock;
  eachRun(m_, q, q.read, q.pos, n, true,
          [&](const uint32_t *src, uint64_t i, uint64_t take, uint64_t arrives) {
            end = std::max(end, arrives + (n - i));
            uint32_t d = dst + uint32_t(i);
            // Dropped words are skipped a window at a time: most PEs of a kernel
            // keep only a slice of a multicast stream.
            if (in.op == format::RECV)
              std::copy(src, src + take, s_.sram + d);
            else if (passes)
              std::copy(src, src + take, passing.data() + i);
            else if (fused) {
              std::memcpy(vec.data() + i, src, take * 4);
              // Words of a message come a cycle apart, no faster than rows finish.
              uint64_t work = tile.perEntry ? rowEntries(tile, i, take) + take : take * cols;
              done = std::max(done, arrives) + ceilDiv(work, m_.fmac);
            } else if (in.op == format::RECV_ADD) {
              fastF32(format::ADD, words(d), words(d), reinterpret_cast<const SramF32 *>(src), 1,
                      take);
            } else if (in.op == format::RECV_MAX)
              for (uint64_t j = 0; j < take; ++j)
                setF(d + uint32_t(j), binary(format::MAX, f(d + uint32_t(j)), asF(src[j])));
          });
  q.took(n);
  q.leaveIfDrained();
  if (fused) {
    if (entries)
      multiplyEntries(in, false, n, cols, dst, tile, vec.data());
    else
      multiply(in, false, n, cols, dst, w, vec.data(), firstRow);
    uint64_t cost = ceilDiv(tile.perEntry ? tile.nnz + n : n * cols, m_.fmac);
    charge(in, cost, std::max(done, s_.clock + cost) - s_.clock - cost);
    return Step::Next;
  }
  if (in.forward >= 0) { // each word left as it was stored: no cycles of its own
    outbox_.add(uint32_t(in.forward), passes ? passing.data() : s_.sram + dst, uint32_t(n), end - n);
    ++s_.messages;
  }
  charge(in, n, end - s_.clock - n);
  return Step::Next;
}

Core::Step Core::exec(const Instr &in) {
  Op op = in.op;
  uint64_t n = 0, m = 0;
  bool usesM = op == format::MATVEC || op == format::VECMAT || op == format::RECV_VECMAT ||
               op == format::GATHER || op == format::INDEX_COPY;
  if (!count(in, in.n, "n", n) || (usesM && !count(in, in.m, "m", m)))
    return Step::Fault;
  // Only sends and receives load as async (Validate).
  if (in.async)
    return runAsync(in, n);
  uint32_t d = 0, a = 0, b = 0;
  switch (op) {
  case format::NOP:
    return Step::Next;
  case format::SEND: {
    if (!span(in, 0, n, a))
      return Step::Fault;
    joinColors(in);
    outbox_.add(in.color, s_.sram + a, uint32_t(n), s_.clock);
    ++s_.messages;
    charge(in, n);
    return Step::Next;
  }
  case format::RECV:
  case format::RECV_ADD:
  case format::RECV_MAX:
    if (!span(in, 0, n, d))
      return Step::Fault;
    return recv(in, n, d);
  case format::RECV_DROP:
    return recv(in, n, 0);
  case format::MATVEC:
  case format::VECMAT: {
    bool mv = op == format::MATVEC;
    if (isSparse(in.storage))
      return multiplySparse(in, mv, n, m);
    // rows = n, cols = m; dst has rows (MATVEC) or cols (VECMAT) words.
    if (!span(in, 0, mv ? n : m, d) || !span(in, 1, storedWords(in, n * m), a) ||
        !span(in, 2, mv ? m : n, b))
      return Step::Fault;
    multiply(in, mv, n, m, d, a, words(b));
    charge(in, ceilDiv(n * m, m_.fmac));
    return Step::Next;
  }
  case format::RECV_VECMAT:
    // A sparse tile's span is known only from its word 0, read when it runs (recv).
    if (!span(in, 0, m, d) ||
        (!isSparse(in.storage) && !span(in, 1, storedWords(in, n * m), a)))
      return Step::Fault;
    return recv(in, n, d, a, m);
  case format::ADD:
  case format::SUB:
  case format::MUL:
  case format::DIV:
  case format::MAX:
  case format::MIN:
  case format::POW:
  case format::MOD:
  case format::EQ:
  case format::LT:
  case format::LE:
  case format::GT:
  case format::GE:
  case format::AND:
  case format::OR:
  case format::XOR:
  case format::BIT_AND:
  case format::BIT_OR:
  case format::BIT_XOR:
    if (!span(in, 0, n, d) || !span(in, 1, n, a) || !span(in, 2, n, b) ||
        binaryOp(in, n, d, a, s_.sram + b, 1) != Step::Next)
      return Step::Fault;
    break;
  case format::ADD_S:
  case format::SUB_S:
  case format::MUL_S:
  case format::DIV_S: {
    if (!span(in, 0, n, d) || !span(in, 1, n, a) || !span(in, 2, 1, b))
      return Step::Fault;
    uint32_t s = s_.sram[b]; // read once: dst may overlap the scalar
    if (binaryOp(in, n, d, a, &s, 0) != Step::Next)
      return Step::Fault;
    break;
  }
  case format::RANDOM:
    if (!span(in, 0, n, d) || !span(in, 1, n, a) || !span(in, 2, 1, b))
      return Step::Fault;
    randomUniform(s_.sram + d, s_.sram + a, s_.sram[b], n);
    break;
  case format::ADD_I:
  case format::MUL_I: {
    uint32_t imm = immWord(in);
    if (!span(in, 0, n, d) || !span(in, 1, n, a) || binaryOp(in, n, d, a, &imm, 0) != Step::Next)
      return Step::Fault;
    break;
  }
  case format::FILL:
    if (!span(in, 0, n, d))
      return Step::Fault;
    std::fill_n(s_.sram + d, n, immWord(in));
    break;
  case format::COPY:
    if (!span(in, 0, n, d) || !span(in, 1, n, a))
      return Step::Fault;
    std::memmove(s_.sram + d, s_.sram + a, n * 4);
    break;
  case format::EXP:
  case format::ERF:
  case format::TANH:
  case format::SQRT:
  case format::RSQRT:
  case format::NEG:
  case format::GELU:
  case format::GELU_TANH:
  case format::NOT:
  case format::BIT_NOT:
  case format::LOG:
  case format::ABS:
  case format::SIN:
  case format::COS:
  case format::SIGMOID:
  case format::RECIPROCAL:
  case format::RELU:
  case format::TO_INT:
  case format::TO_FLOAT:
  case format::FLOOR:
  case format::CEIL:
    if (!span(in, 0, n, d) || !span(in, 1, n, a))
      return Step::Fault;
    unaryOp(in, n, d, a);
    break;
  case format::REDUCE_SUM:
  case format::REDUCE_MAX:
  case format::REDUCE_MIN:
    if (!span(in, 0, 1, d) || !span(in, 1, n, a))
      return Step::Fault;
    s_.sram[d] = reduce(in, n, a);
    break;
  case format::SELECT:
    if (select(in, n) != Step::Next)
      return Step::Fault;
    break;
  case format::INDEX_COPY:
    return indexCopy(in, n, m);
  case format::GATHER: {
    if (!span(in, 0, m, d) || !span(in, 1, storedWords(in, n * m), a) || !span(in, 2, 1, b))
      return Step::Fault;
    int64_t idx = int32_t(s_.sram[b]);
    // Wrapping subtraction: a garbage row_lo selects no row rather than overflowing.
    int64_t row = int64_t(uint64_t(idx) - uint64_t(eval(in.k)));
    if (row >= 0 && uint64_t(row) < n && in.storage == format::STORE_F32)
      std::memmove(s_.sram + d, s_.sram + a + row * m, m * 4);
    else if (row >= 0 && uint64_t(row) < n) {
      std::vector<float> buf; // dst may overlap the table
      elements(in, a, uint64_t(row) * m, m, buf);
      std::memcpy(s_.sram + d, buf.data(), m * 4);
    } else
      std::fill_n(s_.sram + d, m, 0u);
    charge(in, vectorCost(m));
    return Step::Next;
  }
  case format::EXT_LOAD: {
    if (!span(in, 0, n, d))
      return Step::Fault;
    const std::string &blob = *m_.blobs[in.blob];
    int64_t src = eval(in.addr[1]);
    if (src < 0 || src % 4 || n * 4 > blob.size() || uint64_t(src) > blob.size() - n * 4)
      return fault(in, "external memory overflow",
                   fmt::format("bytes [{}, {}) of blob {} which has {} bytes", src,
                               rangeEnd(src, n), m_.program->external(int(in.blob)).id(),
                               blob.size()));
    std::memcpy(s_.sram + d, blob.data() + src, n * 4);
    // Checked before it becomes an integer: at a tiny bandwidth the cycles
    // overflow any integer type (a cast would be undefined).
    double cycles = std::ceil(double(n) * 4 / m_.extBytesPerCycle);
    if (!(cycles <= double(maxCycles_)))
      return fault(in, "cycle limit",
                   fmt::format("{} words at ext_mem_bytes_per_cycle {} take {:.6g} cycles, more "
                               "than the limit of {}",
                               n, m_.extBytesPerCycle, cycles, maxCycles_));
    charge(in, uint64_t(cycles));
    return Step::Next;
  }
  default:
    return fault(in, "bad instruction", "not executable");
  }
  // Elementwise, reduction and copy ops end here.
  uint64_t cost = isTranscendental(op) ? n * m_.transcendentalCycles : vectorCost(n);
  charge(in, cost);
  return Step::Next;
}

void Core::run() {
  const std::vector<Instr> &code = reg_.code;
  s_.status = PeStatus::Ready;
  while (s_.pc < code.size()) {
    // Counting END too makes every loop iteration count towards the limit.
    if (s_.clock > maxCycles_ || s_.instructions > maxInstructions_) {
      fault(code[s_.pc], "cycle limit",
            s_.clock > maxCycles_
                ? fmt::format("the PE passed the limit of {} cycles{}", maxCycles_,
                              cycleLimitReason(m_, maxCyclesOption_))
                : fmt::format("the PE passed the limit of {} instructions (LOOP and END included)",
                              maxInstructions_));
      return;
    }
    // Straight to the next instruction this PE's predicates select.
    uint32_t view = s_.view[s_.pc];
    s_.pc = view & ~kIdleLoop;
    if (s_.pc == code.size())
      break;
    const Instr &in = code[s_.pc];
    if (in.op == format::END) {
      ++s_.instructions;
      LoopFrame &f = s_.loops[s_.depth - 1];
      if (++f.iter < f.count) {
        s_.pc = in.jump + 1;
        if (batching_) // the trips left, which words may have come for since
          batchNest();
      } else {
        --s_.depth;
        ++s_.pc;
      }
      continue;
    }
    if (!guarded(in)) {
      s_.pc = in.op == format::LOOP ? in.jump + 1 : s_.pc + 1;
      continue;
    }
    ++s_.instructions;
    if (in.op == format::LOOP) {
      // A body that no instruction of this PE's runs costs only its ENDs,
      // counted at once; if they pass the limit, the PE faults here as it
      // would at one of them (not after 2^32 ENDs, one by one).
      bool idle = view & kIdleLoop;
      if (idle && s_.instructions - 1 + in.count > maxInstructions_) {
        fault(in, "cycle limit",
              fmt::format("the PE passed the limit of {} instructions (LOOP and END included)",
                          maxInstructions_));
        return;
      }
      if (in.count == 0 || idle) {
        s_.instructions += idle ? in.count : 0;
        s_.pc = in.jump + 1;
      } else {
        s_.loops[s_.depth++] = LoopFrame{0, in.count};
        ++s_.pc;
        if (batching_)
          batchNest();
      }
      continue;
    }
    Step st = exec(in);
    if (st != Step::Next) {
      if (st == Step::Blocked)
        --s_.instructions; // counted again when it completes
      return;
    }
    ++s_.pc;
    // The run stops after a watched token (RunOptions::stopAfterToken).
    if (s_.watch && s_.watch->stopped && s_.watch->stopped->load(std::memory_order_relaxed))
      return;
    // A PE that has sent a visit's worth yields (staying Ready), so producers
    // cannot run far ahead of their consumers and fill the host's memory with
    // queued words. Where a PE pauses never changes what it computes.
    if (in.op == format::SEND &&
        (outbox_.msgs.size() >= limit_.sends || outbox_.words.size() >= limit_.words))
      return;
  }
  // The PE ends when its async engine does.
  s_.clock = std::max(s_.clock, s_.async.free);
  s_.async.clear();
  s_.status = PeStatus::Done;
}

void runPe(const Model &m, uint64_t pe, PeState &s, const RunOptions &options,
           const VisitLimit &limit, Outbox &outbox) {
  // Runs on worker threads, where an escaping exception would terminate the process.
  try {
    Core(m, pe, s, options, limit, outbox).run();
  } catch (const std::exception &e) {
    s.setFault(fmt::format("host error: {}: {}", m.wherePe(pe), e.what()));
  }
}

} // namespace wsc::runtime::detail

namespace wsc::runtime::detail {

std::vector<std::vector<uint32_t>> resolvePredicates(const Model &m, PeStates &pes) {
  std::vector<std::vector<uint32_t>> views;
  for (const Region &r : m.regions) {
    const std::vector<Instr> &code = r.code;
    std::map<std::vector<uint32_t>, size_t> seen; // PEs that select alike share a view
    std::vector<uint32_t> view(code.size() + 1), selected(code.size() + 1);
    // One view per cell of the predicates' edges, not per PE (GPT-2-small: 0.46 -> 0.12 s).
    forEachPredicateCell(r, [&](const Cell &c) {
      // selected[pc]: instructions before pc (ENDs aside) that the predicates select.
      for (size_t pc = 0; pc < code.size(); ++pc)
        selected[pc + 1] = selected[pc] + (code[pc].op != format::END && c.selects(code[pc]));
      view[code.size()] = uint32_t(code.size());
      for (size_t pc = code.size(); pc-- > 0;) {
        const Instr &in = code[pc];
        bool sel = selected[pc + 1] > selected[pc];
        if (in.op == format::END)
          view[pc] = uint32_t(pc);
        else if (sel && in.op == format::LOOP)
          view[pc] = uint32_t(pc) | (selected[in.jump] == selected[pc + 1] ? kIdleLoop : 0);
        else if (sel)
          view[pc] = uint32_t(pc);
        else
          view[pc] = view[in.op == format::LOOP ? in.jump + 1 : pc + 1];
      }
      auto [it, fresh] = seen.emplace(view, views.size());
      if (fresh)
        views.push_back(view);
      for (uint64_t y = c.y0; y < c.y1; ++y)
        for (uint64_t x = c.x0; x < c.x1; ++x)
          pes[r.firstPe + y * r.w + x].view = views[it->second].data();
    });
  }
  return views;
}
} // namespace wsc::runtime::detail
