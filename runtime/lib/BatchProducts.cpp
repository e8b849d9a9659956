// The region engine's products (docs/runtime.md, The region engine): a
// RECV_VECMAT's vectors for all a batch's trips multiplied by its tile at
// once, each column's products added in ascending row as VECMAT adds them.
#include "Batch.h"

#include <cstring>

namespace wsc::runtime::detail {
namespace {

typedef float V8 __attribute__((vector_size(32)));

/// Columns [c, c + 16) of four vectors' products (x and sums a vector's
/// `stride` and `cols` words apart), summed in registers in ascending row.
/// GCC's vector types keep each lane's adds in that order on every clone.
__attribute__((always_inline)) inline void vecmatBlock16(float *__restrict sums, const float *w,
                                                         const float *x, uint64_t rows,
                                                         uint64_t stride, uint64_t cols,
                                                         uint64_t c) {
  V8 a0 = {}, b0 = {}, a1 = {}, b1 = {}, a2 = {}, b2 = {}, a3 = {}, b3 = {};
  const float *x1 = x + stride, *x2 = x1 + stride, *x3 = x2 + stride;
  for (uint64_t r = 0; r < rows; ++r) {
    V8 lo, hi;
    std::memcpy(&lo, w + r * cols + c, sizeof lo);
    std::memcpy(&hi, w + r * cols + c + 8, sizeof hi);
    // Scalars: each times a vector is broadcast to it (V8{} + x[r] would
    // add, an instruction more a row; a sum starting at +0 ends the same).
    float v0 = x[r], v1 = x1[r], v2 = x2[r], v3 = x3[r];
    a0 += v0 * lo, b0 += v0 * hi;
    a1 += v1 * lo, b1 += v1 * hi;
    a2 += v2 * lo, b2 += v2 * hi;
    a3 += v3 * lo, b3 += v3 * hi;
  }
  float *s0 = sums + c, *s1 = s0 + cols, *s2 = s1 + cols, *s3 = s2 + cols;
  std::memcpy(s0, &a0, 32), std::memcpy(s0 + 8, &b0, 32);
  std::memcpy(s1, &a1, 32), std::memcpy(s1 + 8, &b1, 32);
  std::memcpy(s2, &a2, 32), std::memcpy(s2 + 8, &b2, 32);
  std::memcpy(s3, &a3, 32), std::memcpy(s3 + 8, &b3, 32);
}

/// Columns [c, c + 8) of kN vectors' products (as vecmatBlock16's), each
/// vector's sums a V8 with a column a lane: W's rows of those columns in
/// `padded`, 8 floats each. All 8 lanes are stored, past the last column
/// too (see vecmatTrips).
template <uint64_t kN>
__attribute__((always_inline)) inline void
vecmatNarrow(float *__restrict sums, const float *padded, const float *x, uint64_t rows,
             uint64_t stride, uint64_t cols, uint64_t c) {
  V8 a[kN] = {};
  for (uint64_t r = 0; r < rows; ++r) {
    V8 wr;
    std::memcpy(&wr, padded + 8 * r, sizeof wr);
    for (uint64_t v = 0; v < kN; ++v)
      a[v] += x[v * stride + r] * wr;
  }
  for (uint64_t v = 0; v < kN; ++v)
    std::memcpy(sums + v * cols + c, &a[v], sizeof a[v]);
}

/// VECMAT of `trips` vectors (`stride` words apart in x) by one W into `sums`
/// (`cols` words apart, each written, and 8 more words of room): vecmatRows'
/// sums bit for bit (each column's products added in ascending row), four
/// vectors at a time over blocks of 16 columns held in registers, each row
/// of W loaded once for four; the columns past the blocks (all of a narrow
/// W's) eight at a time for eight vectors, then four. `padded`: room for 8
/// * rows floats.
WSC_MULTIVERSION void vecmatTrips(float *__restrict sums, const float *w, const float *x,
                                  uint64_t trips, uint64_t rows, uint64_t stride, uint64_t cols,
                                  float *__restrict padded) {
  uint64_t wide = cols / 16 * 16, quads = trips / 4 * 4;
  // Eight columns a store: past a vector's last column it writes the next
  // vector's first ones, which the columns before (in falling order), the
  // blocks and the trips past the quads write after it.
  for (uint64_t g = (cols - wide + 7) / 8; g-- > 0;) {
    uint64_t c = wide + 8 * g;
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t l = 0; l < 8; ++l)
        padded[8 * r + l] = c + l < cols ? w[r * cols + c + l] : 0.0f;
    uint64_t t = 0;
    for (; t + 8 <= quads; t += 8)
      vecmatNarrow<8>(sums + t * cols, padded, x + t * stride, rows, stride, cols, c);
    if (t < quads)
      vecmatNarrow<4>(sums + t * cols, padded, x + t * stride, rows, stride, cols, c);
  }
  for (uint64_t t = 0; t < quads; t += 4)
    for (uint64_t c = 0; c < wide; c += 16)
      vecmatBlock16(sums + t * cols, w, x + t * stride, rows, stride, cols, c);
  for (uint64_t t = quads; t < trips; ++t) {
    std::fill_n(sums + t * cols, cols, 0.0f);
    vecmatRows(sums + t * cols, w, x + t * stride, rows, cols);
  }
}

} // namespace

void Core::batchProducts(Batch &b, size_t j, std::vector<float> &products) {
  static thread_local std::vector<float> xs, padded;
  const Batch::Op &op = b.ops[j];
  uint64_t n = op.n, m = op.m;
  // Sized, not cleared: the products write every sum (and past the last).
  products.resize(b.trips * m + 8);
  if (!n) {
    std::fill(products.begin(), products.end(), 0.0f);
    return;
  }
  uint64_t stride = 0;
  const float *x = reinterpret_cast<const SramF32 *>(b.wordsInPlace(j, n, stride));
  if (!x) {
    xs.resize(b.trips * n);
    for (uint64_t t = 0; t < b.trips; ++t)
      for (const Batch::Run &r : b.runsOf(t, j))
        std::memcpy(xs.data() + t * n + r.i, r.src, r.take * 4);
    x = xs.data(), stride = n;
  }
  auto tile = [&](uint64_t t) {
    return reinterpret_cast<const SramF32 *>(b.where(t, j, 1, s_.sram));
  };
  if (op.operand[1].inner == 0 && op.operand[1].outer == 0) { // one W for every trip
    padded.resize(8 * n);
    vecmatTrips(products.data(), tile(0), x, b.trips, n, stride, m, padded.data());
    return;
  }
  std::fill(products.begin(), products.end(), 0.0f);
  for (uint64_t t = 0; t < b.trips; ++t)
    vecmatRows(products.data() + t * m, tile(t), x + t * stride, n, m);
}

} // namespace wsc::runtime::detail
