#include "wsc/format/SparseTile.h"

#include <cassert>

namespace wsc::format {

namespace {

/// Calls `entry(column, gap, filler)` for each entry of a row, in order.
template <typename Element, typename Fn>
void eachEntry(const Element *row, uint64_t cols, SparseGaps g, Fn entry) {
  uint64_t next = 0; // the column a gap of 0 lands on
  for (uint64_t c = 0; c < cols; ++c) {
    if (!row[c])
      continue;
    for (uint64_t f = fillersBefore(next, c, g); f; --f, next += maxGap(g) + 1)
      entry(next + maxGap(g), maxGap(g), true);
    entry(c, c - next, false);
    next = c + 1;
  }
}

template <typename Element>
uint64_t countEntriesOf(const Element *elements, uint64_t rows, uint64_t cols, SparseGaps g) {
  uint64_t n = 0;
  for (uint64_t r = 0; r < rows; ++r)
    eachEntry(elements + r * cols, cols, g, [&](uint64_t, uint64_t, bool) { ++n; });
  return n;
}

/// Element i's bits at its slot of a run of values starting at word `base`.
template <typename Element>
void putValue(std::vector<uint32_t> &out, uint64_t base, uint64_t i, Element v) {
  if constexpr (sizeof(Element) == 4)
    out[base + i] = v;
  else
    out[base + i / 2] |= uint32_t(v) << (16 * (i % 2));
}

template <typename Element>
std::vector<uint32_t> encode(const Element *elements, uint64_t rows, uint64_t cols, SparseGaps g) {
  assert(cols <= kMaxSparseCols && "sparse tiles index columns in 16 bits");
  SparseValues v = sizeof(Element) == 4 ? SparseValues::Words : SparseValues::Halves;
  uint64_t nnz = countEntriesOf(elements, rows, cols, g);
  std::vector<uint32_t> out;
  if (sparseTileWords(rows, cols, nnz, v, g) >= denseTileWords(rows, cols, v)) {
    out.assign(denseTileWords(rows, cols, v), 0);
    out[0] = kDenseTile;
    for (uint64_t i = 0; i < rows * cols; ++i)
      putValue(out, 1, i, elements[i]);
    return out;
  }
  out.assign(sparseTileWords(rows, cols, nnz, v, g), 0);
  out[0] = uint32_t(nnz) | (g == SparseGaps::Nibbles ? kNibbleGaps : 0);
  auto putIndex = [&](uint64_t base, uint64_t i, uint32_t index, uint64_t per) {
    out[base + i / per] |= index << ((32 / per) * (i % per));
  };
  uint64_t per = countsPerWord(cols);
  uint64_t counts = 1, gaps = counts + (rows + per - 1) / per;
  uint64_t values = gaps + (nnz + gapsPerWord(g) - 1) / gapsPerWord(g);
  uint64_t e = 0;
  for (uint64_t r = 0; r < rows; ++r) {
    uint32_t inRow = 0;
    const Element *row = elements + r * cols;
    eachEntry(row, cols, g, [&](uint64_t c, uint64_t gap, bool filler) {
      putIndex(gaps, e, uint32_t(gap), gapsPerWord(g));
      putValue(out, values, e, filler ? Element(0) : row[c]);
      ++e, ++inRow;
    });
    putIndex(counts, r, inRow, per);
  }
  return out;
}

} // namespace

uint64_t countEntries(const uint32_t *words, uint64_t rows, uint64_t cols, SparseGaps g) {
  return countEntriesOf(words, rows, cols, g);
}
uint64_t countEntries(const uint16_t *halves, uint64_t rows, uint64_t cols, SparseGaps g) {
  return countEntriesOf(halves, rows, cols, g);
}

std::vector<uint32_t> encodeSparseTile(const uint32_t *words, uint64_t rows, uint64_t cols,
                                       SparseGaps g) {
  return encode(words, rows, cols, g);
}
std::vector<uint32_t> encodeSparseTile(const uint16_t *halves, uint64_t rows, uint64_t cols,
                                       SparseGaps g) {
  return encode(halves, rows, cols, g);
}

} // namespace wsc::format
