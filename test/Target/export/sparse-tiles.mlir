// A sparse weight tile (storage "sparse:N"): y = W x on two PEs, each
// holding a 2 x 4 tile of W's nonzeros in the .wafer's STORE_SPARSE layout;
// the emulator's result is the dense product, in the cycles of its entries.
// RUN: rm -rf %t && mkdir -p %t
// RUN: wsc-translate --export-wafer %s -o %t/mv.wafer
// RUN: wsc-run %t/mv.wafer --output y=%t/y.npy | FileCheck %s --check-prefix=SUMMARY
// RUN: %python -c "import numpy; print(numpy.load('%t/y.npy').tolist())" | FileCheck %s --check-prefix=OUT
// RUN: %protoc --decode=wsc.format.Program --proto_path=%wsc_src/runtime %wafer_proto < %t/mv.wafer | FileCheck %s

// The rows of PE (0,0): [0 0 3 0] and [0 0 0 0]; of PE (0,1): [1 0 0 2] and
// [0 0 0 0]: a word of nnz, a word of four 8-bit row counts, a word of
// 8-bit gaps (columns 0 and 3: 0, then 2 past column 0), the values.
// CHECK: storage: STORE_SPARSE
// CHECK: init {
// CHECK-NEXT: offset: 64
// CHECK-NEXT: data: "\001\000\000\000\001\000\000\000\002\000\000\000\000\000@@"
// CHECK: init {
// CHECK-NEXT: py: 1
// CHECK-NEXT: offset: 64
// CHECK-NEXT: data: "\002\000\000\000\002\000\000\000\000\002\000\000\000\000\200?\000\000\000@"

// y = [3 * 20, 0, 1 * 10 + 2 * 40, 0]; one MATVEC of ceil((entries + rows) / 4)
// cycles: 1 on PE (0,0), 1 on PE (0,1).
// OUT: [60.0, 0.0, 90.0, 0.0]
// SUMMARY: wsc-run: 1 cycles

module attributes {wafer.arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4,
    sram_bytes = 4096, colors = 8, clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4,
    fmac_fp32 = 4, fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 2,
    link_bytes_per_cycle = 4, link_latency_cycles = 10, ext_mem_bytes = 0,
    ext_mem_bytes_per_cycle = 16>} {
  func.func @main() -> (tensor<4xf32> {wsgraph.name = "y"}) {
    %w = wsgraph.constant dense<[[0.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0],
                                 [1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
    %x = wsgraph.constant dense<[10.0, 100.0, 20.0, 40.0]> : tensor<4xf32>
    %y = wskernel.kernel "mv" kind "matvec" grid [2, 1] sram 128 cycles 1.0 channels {}
        (%w, %x) {wafer.origin = array<i64: 0, 1, 1>}
        : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32> {
      wskernel.init_tile 0 at 64 rows 2 cols 4 row_origin [2, 0] {storage = "sparse:2"}
      wskernel.init_tile 1 at 0 rows 1 cols 4
      wskernel.host_output 0 at 32 rows 1 cols 2 col_origin [2, 0]
      wskernel.matvec <base = 32> = <base = 64> x <base = 0> rows <base = 2> cols <base = 4> {storage = "sparse:2"}
    }
    return %y : tensor<4xf32>
  }
}

