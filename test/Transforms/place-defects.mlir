// RUN: wsc-opt %s --wsc-place="moves=0" -split-input-file | FileCheck %s
// RUN: wsc-opt %s --wsc-place --wsc-route --wsc-verify-routes -split-input-file | FileCheck %s --check-prefix=LEGAL

// Dead PE (2, 0) and the dead link between (1, 4) and (1, 5). The packing
// is one column band: "a" is lifted below the dead PE's row; "b" (3 rows)
// would follow right under it at row 3, but the dead link would be inside
// it, so it is lifted to row 5; "c" goes beside b's sending corner.
// CHECK-LABEL: func.func @around
// CHECK: "a" {{.*}}wafer.origin = array<i64: 0, 0, 1>
// CHECK: "b" {{.*}}wafer.origin = array<i64: 0, 0, 5>
// CHECK: "c" {{.*}}wafer.origin = array<i64: 0, 3, 7>
// LEGAL: cross_wafer_streams = 0
// LEGAL: func.func @around
// LEGAL: wafer.routes 0
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8, wafer.defects = #wafer.defects<
    pes = dense<[[0, 2, 0]]> : tensor<1x3xi32>, links = dense<[[0, 1, 4, 3]]> : tensor<1x4xi32>>} {
  func.func @around(%x: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "linear" grid [2, 3] sram 64 cycles 10.0 channels {col = "col_chain", row = "row_chain"} (%x) : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %b = wskernel.kernel "b" kind "linear" grid [3, 3] sram 64 cycles 10.0 channels {col = "col_chain", row = "row_chain"} (%a) : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "linear" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%b) : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

// Kernels go to the wafer named by wafer.stage; a kernel that already has an
// origin stays there and the others pack around it.
// CHECK-LABEL: func.func @stages
// CHECK: "pinned" {{.*}}wafer.origin = array<i64: 0, 0, 0>
// CHECK: "first" {{.*}}wafer.origin = array<i64: 0, 2, 0>
// CHECK: "second" {{.*}}wafer.origin = array<i64: 1, 0, 0>
// CHECK: "third" {{.*}}wafer.origin = array<i64: 1, 2, 0>
// The stream from wafer 0 to wafer 1 crosses one link; each wafer gets its
// own table.
// LEGAL: cross_wafer_streams = 1
// LEGAL: func.func @stages
// LEGAL: wafer.routes 0
// LEGAL: wafer.routes 1
// LEGAL: wafer.links dense<{{\[\[}}0, 7, {{[0-9]}}, {{[0-9]+}}, 1, 0, {{[0-9]}}, {{[0-9]+}}]]> : tensor<1x8xi32>
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @stages(%x: tensor<4xf32>) {
    %p = wskernel.kernel "pinned" kind "embedding" grid [2, 2] sram 64 cycles 10.0 channels {} (%x) {wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %a = wskernel.kernel "first" kind "linear" grid [2, 2] sram 64 cycles 10.0 channels {} (%p) : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "second" kind "linear" grid [2, 2] sram 64 cycles 10.0 channels {} (%a) {wafer.stage = 1 : i64} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "third" kind "linear" grid [2, 2] sram 64 cycles 10.0 channels {} (%b) {wafer.stage = 1 : i64} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}
