#include "wsc/format/SparseTile.h"

#include <cassert>

namespace wsc::format {

namespace {

template <typename Element> uint64_t countNonzero(const Element *elements, uint64_t count) {
  uint64_t n = 0;
  for (uint64_t i = 0; i < count; ++i)
    n += elements[i] != 0;
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
std::vector<uint32_t> encode(const Element *elements, uint64_t rows, uint64_t cols) {
  assert(cols <= kMaxSparseCols && "sparse tiles index columns in 16 bits");
  SparseValues v = sizeof(Element) == 4 ? SparseValues::Words : SparseValues::Halves;
  uint64_t nnz = countNonzero(elements, rows * cols);
  std::vector<uint32_t> out;
  if (sparseTileWords(rows, cols, nnz, v) >= denseTileWords(rows, cols, v)) {
    out.assign(denseTileWords(rows, cols, v), 0);
    out[0] = kDenseTile;
    for (uint64_t i = 0; i < rows * cols; ++i)
      putValue(out, 1, i, elements[i]);
    return out;
  }
  out.assign(sparseTileWords(rows, cols, nnz, v), 0);
  out[0] = uint32_t(nnz);
  uint64_t per = indicesPerWord(cols), bits = 32 / per;
  auto putIndex = [&](uint64_t base, uint64_t i, uint32_t index) {
    out[base + i / per] |= index << (bits * (i % per));
  };
  uint64_t counts = 1, columns = counts + (rows + per - 1) / per;
  uint64_t values = columns + (nnz + per - 1) / per;
  uint64_t e = 0;
  for (uint64_t r = 0; r < rows; ++r) {
    uint32_t inRow = 0;
    for (uint64_t c = 0; c < cols; ++c) {
      Element w = elements[r * cols + c];
      if (!w)
        continue;
      putIndex(columns, e, uint32_t(c));
      putValue(out, values, e, w);
      ++e, ++inRow;
    }
    putIndex(counts, r, inRow);
  }
  return out;
}

} // namespace

uint64_t countStored(const uint32_t *words, uint64_t count) { return countNonzero(words, count); }
uint64_t countStored(const uint16_t *halves, uint64_t count) { return countNonzero(halves, count); }

std::vector<uint32_t> encodeSparseTile(const uint32_t *words, uint64_t rows, uint64_t cols) {
  return encode(words, rows, cols);
}
std::vector<uint32_t> encodeSparseTile(const uint16_t *halves, uint64_t rows, uint64_t cols) {
  return encode(halves, rows, cols);
}

} // namespace wsc::format
