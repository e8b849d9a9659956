// RUN: wsc-opt %s --wsc-route | FileCheck %s
// RUN: wsc-opt %s --wsc-route --wsc-verify-routes -o /dev/null

// Three 8-word streams reach every PE of the 3x3 kernel c (x 2..4, y 2..4);
// each producer is nearest to its corner (2, 4), whose two links into c (N
// and E) would carry all three (24 words per token, over the budget of 16,
// c's cycles). Spreading through a ring of PEs around c lets a stream go
// round and enter c by another PE, so the wafer routes within 16.
// CHECK: wafer.route_stats = {{{.*}}link_budget = 16 : i64{{.*}}max_link_load = 1.600000e+01 : f64

#arch = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #arch} {
  func.func @f(%x: tensor<8xf32>) {
    %p0 = wskernel.kernel "p0" kind "k" grid [1, 1] sram 64 cycles 8.0 channels {} (%x) {wafer.origin = array<i64: 0, 0, 4>} : (tensor<8xf32>) -> !wskernel.stream<8, f32> {
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %p1 = wskernel.kernel "p1" kind "k" grid [1, 1] sram 64 cycles 8.0 channels {} (%x) {wafer.origin = array<i64: 0, 1, 5>} : (tensor<8xf32>) -> !wskernel.stream<8, f32> {
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %p2 = wskernel.kernel "p2" kind "k" grid [1, 1] sram 64 cycles 8.0 channels {} (%x) {wafer.origin = array<i64: 0, 2, 6>} : (tensor<8xf32>) -> !wskernel.stream<8, f32> {
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %c = wskernel.kernel "c" kind "k" grid [3, 3] sram 64 cycles 16.0 channels {} (%p0, %p1, %p2) {wafer.origin = array<i64: 0, 2, 2>} : (!wskernel.stream<8, f32>, !wskernel.stream<8, f32>, !wskernel.stream<8, f32>) -> tensor<8xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.recv "in1" to <base = 0> n <base = 8>
      wskernel.recv "in2" to <base = 0> n <base = 8>
    }
    return
  }
}
