// The STORE_SPARSE layout of a weight tile: written by the compiler's
// export, read by the emulator. Part of the format library (wsc_wafer_proto)
// so that both sides share one definition.
//
// A tile of `rows` x `cols` fp32 elements, in words, with k indices per
// word: 4 of 8 bits when cols <= 255, else 2 of 16 bits (cols <= 65535):
//   word 0                 nnz, the entries stored; kDenseTile instead: the
//                          rows x cols fp32 elements follow, row-major (a
//                          tile too dense to gain from the sparse form)
//   ceil(rows / k) words   each row's count of entries, row r in word
//                          1 + r / k, at bits (r % k) * 32 / k (low first)
//   ceil(nnz / k) words    the entries' columns, row by row, ascending in a
//                          row, packed as the counts
//   nnz words              the entries' fp32 values, in the same order
#ifndef WSC_FORMAT_SPARSETILE_H
#define WSC_FORMAT_SPARSETILE_H

#include <cstdint>
#include <vector>

namespace wsc::format {

/// Word 0 of a tile stored dense inside the sparse layout.
constexpr uint32_t kDenseTile = 0xFFFFFFFFu;
/// The most columns a sparse tile may have (16-bit column indices).
constexpr uint64_t kMaxSparseCols = 65535;
/// The most columns of a tile whose counts and columns take 8 bits.
constexpr uint64_t kMaxNarrowCols = 255;

/// Counts and columns per word in a tile of `cols` columns.
inline uint64_t indicesPerWord(uint64_t cols) { return cols <= kMaxNarrowCols ? 4 : 2; }
/// Index i of the packed run at `words` (counts or columns).
inline uint32_t packedIndex(const uint32_t *words, uint64_t i, uint64_t cols) {
  uint64_t per = indicesPerWord(cols), bits = 32 / per;
  return (words[i / per] >> (bits * (i % per))) & ((1u << bits) - 1);
}
/// Words of a rows x cols tile holding `nnz` entries in the sparse form.
inline uint64_t sparseTileWords(uint64_t rows, uint64_t cols, uint64_t nnz) {
  uint64_t per = indicesPerWord(cols);
  return 1 + (rows + per - 1) / per + (nnz + per - 1) / per + nnz;
}
/// Words of a rows x cols tile stored dense inside the sparse layout.
inline uint64_t denseTileWords(uint64_t rows, uint64_t cols) { return 1 + rows * cols; }
/// Words the layout takes for a tile with `nnz` nonzeros: the smaller form.
inline uint64_t storedTileWords(uint64_t rows, uint64_t cols, uint64_t nnz) {
  uint64_t sparse = sparseTileWords(rows, cols, nnz), dense = denseTileWords(rows, cols);
  return sparse < dense ? sparse : dense;
}

/// Cycles of a MATVEC or VECMAT over a tile in this layout at `fmac`
/// multiply-adds per cycle: one per entry and one per row (fetching its
/// x) in the sparse form, one per element in the dense one. RECV_VECMAT
/// charges each received run of rows the same way.
inline uint64_t sparseTileCycles(uint64_t rows, uint64_t cols, uint64_t nnz, uint64_t fmac) {
  bool sparse = sparseTileWords(rows, cols, nnz) < denseTileWords(rows, cols);
  uint64_t work = sparse ? nnz + rows : rows * cols;
  return (work + fmac - 1) / fmac;
}

/// Encodes a row-major tile of fp32 bit patterns (`words`, rows x cols):
/// the sparse form when it is smaller, else the dense one. An element is
/// stored when its bits are not +0.0 (a -0.0 stays). cols <= kMaxSparseCols.
std::vector<uint32_t> encodeSparseTile(const uint32_t *words, uint64_t rows, uint64_t cols);

/// The nonzeros of a row-major tile of fp32 bit patterns (not +0.0).
uint64_t countStored(const uint32_t *words, uint64_t count);

} // namespace wsc::format

#endif
