// init_tile's col_interleave, col_perm and row_perm. col_interleave: a [q | k | v] operand of 3 x 4 columns seen
// with [3, 2] is q0 q1 k0 k1 v0 v1 q2 q3 k2 k3 v2 v3, so each PE's 6 columns
// hold its two words of q, of k and of v side by side.
// RUN: wsc-translate --export-wafer %s -o - | %protoc --decode=wsc.format.Program --proto_path=%wsc_src/runtime %wafer_proto | FileCheck %s
// RUN: not wsc-translate --export-wafer %S/Inputs/interleave-uneven.mlir -o %t.wafer 2>&1 | FileCheck %s --check-prefix=UNEVEN
// RUN: test ! -e %t.wafer
// RUN: sed 's/col_interleave = array<i64: 3, 2>/col_perm = array<i64: 0, 2, 1, 3>/' %S/Inputs/interleave-uneven.mlir > %t.perm.mlir
// RUN: not wsc-translate --export-wafer %t.perm.mlir -o %t.wafer 2>&1 | FileCheck %s --check-prefix=PERM
// RUN: test ! -e %t.wafer
// RUN: sed 's/col_interleave = array<i64: 3, 2>/row_perm = array<i64: 1, 0>/' %S/Inputs/interleave-uneven.mlir > %t.rows.mlir
// RUN: not wsc-translate --export-wafer %t.rows.mlir -o %t.wafer 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: test ! -e %t.wafer

// PE 0: 1 2 5 6 9 10; PE 1: 3 4 7 8 11 12.
// CHECK-LABEL: init {
// CHECK-NEXT:    data: "\001\000\000\000\002\000\000\000\005\000\000\000\006\000\000\000\t\000\000\000\n\000\000\000"
// CHECK-NEXT:  }
// CHECK-NEXT:  init {
// CHECK-NEXT:    px: 1
// CHECK-NEXT:    data: "\003\000\000\000\004\000\000\000\007\000\000\000\010\000\000\000\013\000\000\000\014\000\000\000"
// CHECK-NEXT:  }

// col_perm [0, 3, 1, 4, 2, 5]: each run of 6 columns (a head) with its two
// halves side by side, a pair at a time: 1 4 2 5 3 6 | 7 10 8 11 9 12.
// CHECK-LABEL: name: "rotary_q"
// CHECK:       init {
// CHECK-NEXT:    data: "\001\000\000\000\004\000\000\000\002\000\000\000\005\000\000\000\003\000\000\000\006\000\000\000"
// CHECK-NEXT:  }
// CHECK-NEXT:  init {
// CHECK-NEXT:    px: 1
// CHECK-NEXT:    data: "\007\000\000\000\n\000\000\000\010\000\000\000\013\000\000\000\t\000\000\000\014\000\000\000"
// CHECK-NEXT:  }
// CHECK-NOT:   init {

// row_perm [0, 2, 1, 3]: rows 0 and 2 on the first PE row, 1 and 3 on the second.
// CHECK-LABEL: name: "o_proj"
// CHECK:       init {
// CHECK-NEXT:    data: "\001\000\000\000\002\000\000\000\005\000\000\000\006\000\000\000"
// CHECK-NEXT:  }
// CHECK-NEXT:  init {
// CHECK-NEXT:    py: 1
// CHECK-NEXT:    data: "\003\000\000\000\004\000\000\000\007\000\000\000\010\000\000\000"
// CHECK-NEXT:  }
// CHECK-NOT:   init {

// UNEVEN: error: cannot export: col_interleave [3, 2] does not divide the 10 columns (kernel 'qkv', 'wskernel.init_tile')
// PERM: error: cannot export: col_perm of 4 columns does not divide the 10 columns (kernel 'qkv', 'wskernel.init_tile')
// ROWS: error: cannot export: row_perm of 2 rows does not divide the 1 rows (kernel 'qkv', 'wskernel.init_tile')

module attributes {wafer.arch = #wafer.arch<name = "mesh:4x4", width = 4, height = 4,
    sram_bytes = 4096, colors = 8, clock_hz = 1000000000, hop_cycles = 1, simd_fp32 = 4,
    fmac_fp32 = 4, fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 2,
    link_bytes_per_cycle = 4, link_latency_cycles = 10, ext_mem_bytes = 0,
    ext_mem_bytes_per_cycle = 16>} {
  func.func @main() {
    %b = wsgraph.constant dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]> : tensor<12xi32>
    wskernel.kernel "qkv" kind "test" grid [1, 2] sram 64 cycles 0.0 channels {}
        (%b) {wafer.origin = array<i64: 0, 0, 0>} : (tensor<12xi32>) -> () {
      wskernel.init_tile 0 at 0 rows 1 cols 6 col_origin [0, 6] {col_interleave = array<i64: 3, 2>}
    }
    wskernel.kernel "rotary_q" kind "test" grid [1, 2] sram 64 cycles 0.0 channels {}
        (%b) {wafer.origin = array<i64: 0, 0, 1>} : (tensor<12xi32>) -> () {
      wskernel.init_tile 0 at 0 rows 1 cols 6 col_origin [0, 6] {col_perm = array<i64: 0, 3, 1, 4, 2, 5>}
    }
    %m = wsgraph.constant dense<[[1, 2], [3, 4], [5, 6], [7, 8]]> : tensor<4x2xi32>
    wskernel.kernel "o_proj" kind "test" grid [2, 1] sram 64 cycles 0.0 channels {}
        (%m) {wafer.origin = array<i64: 0, 0, 2>} : (tensor<4x2xi32>) -> () {
      wskernel.init_tile 0 at 0 rows 2 cols 2 row_origin [2, 0] {row_perm = array<i64: 0, 2, 1, 3>}
    }
    return
  }
}
