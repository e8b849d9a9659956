// RUN: wsc-opt %s --wsc-route | FileCheck %s
// RUN: wsc-opt %s --wsc-route --wsc-verify-routes -o /dev/null

// Enough colors, but the slowest kernel takes 10 cycles per token, so a link
// should carry at most 10 words per token; two 8-word streams must share
// (1,0)->(2,0) on this one-row mesh. The links then bound the pipeline: the
// budget grows by a quarter until the wafer routes (10, 12.5, 15.6, 19.5),
// and the figures say so.
// CHECK: wafer.route_stats = {{{.*}}link_budget = 19 : i64{{.*}}max_link_load = 1.600000e+01 : f64

// With grow-budget=false (the pipeline's strict tries) the budget stays at
// 10 and the shared link is an error.
// RUN: not wsc-opt %s --wsc-route="grow-budget=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIXED
// FIXED: error: 'wskernel.kernel' op cannot route stream 'out0' of kernel 'p0' on wafer 0: 1 link stays over capacity (24 colors, 10 words per token) after 40 rounds; most congested region x 1..2, y 0..0

#arch = #wafer.arch<name = "mesh:4x1", width = 4, height = 1, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #arch} {
  func.func @f(%x: tensor<4xf32>) {
    %p0 = wskernel.kernel "p0" kind "k" grid [1, 1] sram 64 cycles 10.0 channels {} (%x) {wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<8, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %p1 = wskernel.kernel "p1" kind "k" grid [1, 1] sram 64 cycles 10.0 channels {} (%x) {wafer.origin = array<i64: 0, 1, 0>} : (tensor<4xf32>) -> !wskernel.stream<8, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c1 = wskernel.kernel "c1" kind "k" grid [1, 1] sram 64 cycles 10.0 channels {} (%p1) {wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<8, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
    }
    %c0 = wskernel.kernel "c0" kind "k" grid [1, 1] sram 64 cycles 10.0 channels {} (%p0) {wafer.origin = array<i64: 0, 3, 0>} : (!wskernel.stream<8, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
    }
    return
  }
}

