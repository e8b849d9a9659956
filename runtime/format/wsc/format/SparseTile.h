// The STORE_SPARSE layout of a weight tile: written by the compiler's
// export, read by the emulator. Part of the format library (wsc_wafer_proto)
// so that both sides share one definition.
//
// A tile of `rows` x `cols` elements, in words, with k indices per word: 4
// of 8 bits when cols <= 255, else 2 of 16 bits (cols <= 65535). Values are
// fp32 words (STORE_SPARSE) or 16-bit halves two to a word, the even one in
// the low bits (STORE_SPARSE_F16, STORE_SPARSE_BF16):
//   word 0                 nnz, the entries stored; kDenseTile instead: the
//                          rows x cols values follow, row-major (a tile too
//                          dense to gain from the sparse form)
//   ceil(rows / k) words   each row's count of entries, row r in word
//                          1 + r / k, at bits (r % k) * 32 / k (low first)
//   ceil(nnz / k) words    the entries' columns, row by row, ascending in a
//                          row, packed as the counts
//   nnz values             the entries' values, in the same order
#ifndef WSC_FORMAT_SPARSETILE_H
#define WSC_FORMAT_SPARSETILE_H

#include <cstdint>
#include <vector>

namespace wsc::format {

/// How wide a sparse tile's values are: fp32 words, or 16-bit halves.
enum class SparseValues { Words, Halves };

/// Words that n values take.
inline uint64_t valueWords(uint64_t n, SparseValues v) {
  return v == SparseValues::Words ? n : (n + 1) / 2;
}

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
inline uint64_t sparseTileWords(uint64_t rows, uint64_t cols, uint64_t nnz, SparseValues v) {
  uint64_t per = indicesPerWord(cols);
  return 1 + (rows + per - 1) / per + (nnz + per - 1) / per + valueWords(nnz, v);
}
/// Words of a rows x cols tile stored dense inside the sparse layout.
inline uint64_t denseTileWords(uint64_t rows, uint64_t cols, SparseValues v) {
  return 1 + valueWords(rows * cols, v);
}
/// Words the layout takes for a tile with `nnz` nonzeros: the smaller form.
inline uint64_t storedTileWords(uint64_t rows, uint64_t cols, uint64_t nnz, SparseValues v) {
  uint64_t sparse = sparseTileWords(rows, cols, nnz, v), dense = denseTileWords(rows, cols, v);
  return sparse < dense ? sparse : dense;
}

/// Cycles of a MATVEC or VECMAT over a tile in this layout at `fmac`
/// multiply-adds per cycle: one per entry and one per row (fetching its
/// x) in the sparse form, one per element in the dense one. RECV_VECMAT
/// charges each received run of rows the same way.
inline uint64_t sparseTileCycles(uint64_t rows, uint64_t cols, uint64_t nnz, SparseValues v,
                                 uint64_t fmac) {
  bool sparse = sparseTileWords(rows, cols, nnz, v) < denseTileWords(rows, cols, v);
  uint64_t work = sparse ? nnz + rows : rows * cols;
  return (work + fmac - 1) / fmac;
}

/// Encodes a row-major tile of fp32 bit patterns (`words`, rows x cols):
/// the sparse form when it is smaller, else the dense one. An element is
/// stored when its bits are not +0.0 (a -0.0 stays). cols <= kMaxSparseCols.
std::vector<uint32_t> encodeSparseTile(const uint32_t *words, uint64_t rows, uint64_t cols);
/// The same for a tile of 16-bit values (f16 or bf16 bit patterns), stored
/// when not 0x0000.
std::vector<uint32_t> encodeSparseTile(const uint16_t *halves, uint64_t rows, uint64_t cols);

/// The nonzeros of a row-major tile of bit patterns (not +0.0).
uint64_t countStored(const uint32_t *words, uint64_t count);
uint64_t countStored(const uint16_t *halves, uint64_t count);

} // namespace wsc::format

#endif
