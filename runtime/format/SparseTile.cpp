#include "wsc/format/SparseTile.h"

#include <cassert>

namespace wsc::format {

uint64_t countStored(const uint32_t *words, uint64_t count) {
  uint64_t n = 0;
  for (uint64_t i = 0; i < count; ++i)
    n += words[i] != 0;
  return n;
}

std::vector<uint32_t> encodeSparseTile(const uint32_t *words, uint64_t rows, uint64_t cols) {
  assert(cols <= kMaxSparseCols && "sparse tiles index columns in 16 bits");
  uint64_t nnz = countStored(words, rows * cols);
  std::vector<uint32_t> out;
  if (sparseTileWords(rows, cols, nnz) >= denseTileWords(rows, cols)) {
    out.reserve(denseTileWords(rows, cols));
    out.push_back(kDenseTile);
    out.insert(out.end(), words, words + rows * cols);
    return out;
  }
  out.assign(sparseTileWords(rows, cols, nnz), 0);
  out[0] = uint32_t(nnz);
  uint64_t per = indicesPerWord(cols), bits = 32 / per;
  auto putIndex = [&](uint64_t base, uint64_t i, uint32_t v) {
    out[base + i / per] |= v << (bits * (i % per));
  };
  uint64_t counts = 1, columns = counts + (rows + per - 1) / per;
  uint64_t values = columns + (nnz + per - 1) / per;
  uint64_t e = 0;
  for (uint64_t r = 0; r < rows; ++r) {
    uint32_t inRow = 0;
    for (uint64_t c = 0; c < cols; ++c) {
      uint32_t w = words[r * cols + c];
      if (!w)
        continue;
      putIndex(columns, e, uint32_t(c));
      out[values + e] = w;
      ++e, ++inRow;
    }
    putIndex(counts, r, inRow);
  }
  return out;
}

} // namespace wsc::format
