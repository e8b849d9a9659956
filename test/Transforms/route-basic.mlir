// RUN: wsc-opt %s --wsc-route | FileCheck %s
// RUN: wsc-opt %s --wsc-route --wsc-verify-routes | FileCheck %s
// RUN: wsc-opt %s --wsc-route | wsc-opt --wsc-route | FileCheck %s

// Hand-placed on mesh:8x8 (column x, row y):
//   a [1, 2] at (0, 0): PEs (0,0) (1,0); channel row: (0,0) -> (1,0)
//   b [2, 2] at (2, 0): PEs (2..3, 0..1); channel col: (x,0) -> (x,1)
//   c [1, 1] at (1, 1)
// a.out0 leaves a's last PE (1, 0) for every PE of b and c; b.out0 leaves
// (3, 1) for c, westward through (2, 1).

// CHECK: wafer.route_stats = {colors_used = 2 : i64, cross_wafer_streams = 0 : i64, entries = 15 : i64, groups = 4 : i64, iterations = 1 : i64, link_budget = 10 : i64, link_crossings = 0 : i64, max_colors_per_link = 0 : i64, max_colors_per_router = 2 : i64, max_length = 3 : i64, max_link_load = 8.000000e+00 : f64, mean_link_load = 4.000000e+00 : f64, total_length = 10 : i64, wafer_links = 0 : i64}
// The channels take their colors first (their hops are fixed).
// CHECK: "a" {{.*}}wafer.colors = {out0 = 1 : i64, row = 0 : i64}
// CHECK: "b" {{.*}}wafer.colors = {col = 0 : i64, in0 = 1 : i64, out0 = 0 : i64}
// CHECK: "c" {{.*}}wafer.colors = {in0 = 0 : i64, in1 = 1 : i64}
// Rows are [x, y, color, in, out_mask]; ports R=0 N=1 E=2 S=3 W=4, mask bit = port.
// CHECK: wafer.routes 0 dense<[
// a's row channel: (0,0) RAMP -> E; (1,0) W -> RAMP.
// CHECK-SAME: [0, 0, 0, 0, 4], [1, 0, 0, 4, 1],
// a.out0 (color 1): from the ramp of (1,0) east into b.
// CHECK-SAME: [1, 0, 1, 0, 4],
// b's col channel leaves (2,0) and (3,0) south; a.out0 into b at (2,0):
// delivered, and on east and south.
// CHECK-SAME: [2, 0, 0, 0, 8], [2, 0, 1, 4, 13], [3, 0, 0, 0, 8], [3, 0, 1, 4, 9],
// c at (1,1) takes both streams from the east.
// CHECK-SAME: [1, 1, 0, 2, 1], [1, 1, 1, 2, 1],
// b.out0 (color 0) shares its color with both channels: they use no common
// link or ramp. (2,1) delivers a.out0 and passes it west to c.
// CHECK-SAME: [2, 1, 0, 1, 1], [2, 1, 0, 2, 16], [2, 1, 1, 1, 17],
// CHECK-SAME: [3, 1, 0, 0, 16], [3, 1, 0, 1, 1], [3, 1, 1, 1, 1]]> : tensor<15x5xi32>

#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
}
