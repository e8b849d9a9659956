// RUN: wsc-opt %s --wsc-place="moves=0" | FileCheck %s --check-prefix=PACK
// RUN: wsc-opt %s --wsc-place | FileCheck %s
// RUN: wsc-opt %s --wsc-place | wsc-opt --wsc-place | FileCheck %s
// RUN: wsc-opt %s --wsc-place="seed=7" | wsc-opt --wsc-route --wsc-verify-routes | FileCheck %s --check-prefix=LEGAL

// The packer alone (no improvement moves). It packs row bands and column
// bands (the same packer on the transposed wafer) with several minimum band
// heights, and keeps the packing with the lowest stream-weighted distance:
// here one column band, top to bottom in pipeline order. "ln" sits right of
// embed's sending corner (1 hop), fc1 and fc2 stack under it; out follows
// fc2's sending corner. Every stream is 1 hop except embed -> fc2 (4).
// PACK-LABEL: func.func @chain
// PACK: "embed" {{.*}}wafer.origin = array<i64: 0, 0, 0>
// PACK: "ln" {{.*}}wafer.origin = array<i64: 0, 3, 1>
// PACK: "fc1" {{.*}}wafer.origin = array<i64: 0, 0, 2>
// PACK: "fc2" {{.*}}wafer.origin = array<i64: 0, 0, 5>
// PACK: "out" {{.*}}wafer.origin = array<i64: 0, 4, 7>

// The improvement moves find nothing better here. Placing again keeps every
// origin (placed kernels are fixed).
// CHECK-LABEL: func.func @chain
// CHECK: "embed" {{.*}}wafer.origin = array<i64: 0, 0, 0>
// CHECK: "ln" {{.*}}wafer.origin = array<i64: 0, 3, 1>
// CHECK: "fc1" {{.*}}wafer.origin = array<i64: 0, 0, 2>
// CHECK: "fc2" {{.*}}wafer.origin = array<i64: 0, 0, 5>
// CHECK: "out" {{.*}}wafer.origin = array<i64: 0, 4, 7>

// LEGAL: wafer.route_stats
// LEGAL: wafer.routes 0

#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @chain(%ids: tensor<4xf32>) {
    %e = wskernel.kernel "embed" kind "embedding" grid [2, 3] sram 64 cycles 40.0
        channels {col = "col_chain", row = "row_chain"} (%ids) : (tensor<4xf32>) -> !wskernel.stream<8, f32> {
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %l = wskernel.kernel "ln" kind "layer_norm" grid [1, 1] sram 64 cycles 40.0
        channels {} (%e) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %f = wskernel.kernel "fc1" kind "linear" grid [3, 4] sram 64 cycles 40.0
        channels {col = "col_chain", row = "row_chain"} (%l) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %g = wskernel.kernel "fc2" kind "linear" grid [3, 4] sram 64 cycles 40.0
        channels {col = "col_chain", row = "row_chain"} (%f, %e) : (!wskernel.stream<8, f32>, !wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.recv "in1" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %o = wskernel.kernel "out" kind "output" grid [1, 1] sram 64 cycles 40.0
        channels {} (%g) : (!wskernel.stream<8, f32>) -> tensor<8xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
    }
    return
  }
}
