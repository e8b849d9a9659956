// The STORE_SPARSE layout of a weight tile: written by the compiler's
// export, read by the emulator. Part of the format library (wsc_wafer_proto)
// so that both sides share one definition.
//
// A tile of `rows` x `cols` fp32 elements, in words:
//   word 0                 nnz, the entries stored; kDenseTile instead: the
//                          rows x cols fp32 elements follow, row-major (a
//                          tile too dense to gain from the sparse form)
//   ceil(rows / 2) words   each row's count of entries, 16 bits each, row r
//                          in word 1 + r / 2 (the even row in the low half)
//   ceil(nnz / 2) words    the entries' columns, 16 bits each, row by row,
//                          ascending in a row, packed as the counts
//   nnz words              the entries' fp32 values, in the same order
// so cols must be at most 65535.
#ifndef WSC_FORMAT_SPARSETILE_H
#define WSC_FORMAT_SPARSETILE_H

#include <cstdint>
#include <vector>

namespace wsc::wafer {

/// Word 0 of a tile stored dense inside the sparse layout.
constexpr uint32_t kDenseTile = 0xFFFFFFFFu;
/// The most columns a sparse tile may have (16-bit column indices).
constexpr uint64_t kMaxSparseCols = 65535;

/// Words of a tile of `rows` rows holding `nnz` entries in the sparse form.
inline uint64_t sparseTileWords(uint64_t rows, uint64_t nnz) {
  return 1 + (rows + 1) / 2 + (nnz + 1) / 2 + nnz;
}
/// Words of a rows x cols tile stored dense inside the sparse layout.
inline uint64_t denseTileWords(uint64_t rows, uint64_t cols) { return 1 + rows * cols; }
/// Words the layout takes for a tile with `nnz` nonzeros: the smaller form.
inline uint64_t storedTileWords(uint64_t rows, uint64_t cols, uint64_t nnz) {
  uint64_t sparse = sparseTileWords(rows, nnz), dense = denseTileWords(rows, cols);
  return sparse < dense ? sparse : dense;
}

/// Cycles of a MATVEC or VECMAT over a tile in this layout at `fmac`
/// multiply-adds per cycle: one per entry and one per row (fetching its
/// x) in the sparse form, one per element in the dense one. RECV_VECMAT
/// charges each received run of rows the same way.
inline uint64_t sparseTileCycles(uint64_t rows, uint64_t cols, uint64_t nnz, uint64_t fmac) {
  bool sparse = sparseTileWords(rows, nnz) < denseTileWords(rows, cols);
  uint64_t work = sparse ? nnz + rows : rows * cols;
  return (work + fmac - 1) / fmac;
}

/// Encodes a row-major tile of fp32 bit patterns (`words`, rows x cols):
/// the sparse form when it is smaller, else the dense one. An element is
/// stored when its bits are not +0.0 (a -0.0 stays). cols <= kMaxSparseCols.
std::vector<uint32_t> encodeSparseTile(const uint32_t *words, uint64_t rows, uint64_t cols);

/// The nonzeros of a row-major tile of fp32 bit patterns (not +0.0).
uint64_t countStored(const uint32_t *words, uint64_t count);

} // namespace wsc::wafer

#endif
