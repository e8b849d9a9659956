// RUN: wsc-opt %s --wsc-route --mlir-print-elementsattrs-with-hex-if-larger=-1 | FileCheck %s
// RUN: wsc-opt %s --wsc-route --wsc-verify-routes -o /dev/null

// A result split into blocks: "a" sends block 0 from PE (0, 0) and block 1
// from PE (1, 0). "b" (2x2 at (2, 0)) receives block 0 on its row 0 and
// block 1 on its PE (1, 1) only: each stream starts at the PE that sends it
// and reaches exactly the PEs that receive it. "b"s row_chain_west channel
// runs from (3, 1) to (2, 1).

// Block 1 and the channel share links with nothing, so one color carries
// all three.
// CHECK: "a" {{.*}}wafer.colors = {out0 = 0 : i64, out1 = 0 : i64}
// CHECK: "b" {{.*}}wafer.colors = {back = 0 : i64, in0 = 0 : i64, in1 = 0 : i64}
// Rows are [x, y, color, in, out_mask]; ports R=0 N=1 E=2 S=3 W=4, mask bit = port.
// Block 0: RAMP of (0, 0) east, delivered at (2, 0) and (3, 0) only.
// CHECK: wafer.routes 0 dense<{{\[}}[0, 0, 0, 0, 4], [1, 0, 0, 0, 8], [1, 0, 0, 4, 4],
// Block 1: RAMP of (1, 0) south, then east along row 1, delivered at (3, 1).
// CHECK-SAME: [2, 0, 0, 4, 5], [3, 0, 0, 4, 1], [1, 1, 0, 1, 4],
// The channel: (3, 1) RAMP west, delivered at (2, 1), where block 1 passes
// east on the same color from another input.
// CHECK-SAME: [2, 1, 0, 2, 1], [2, 1, 0, 4, 4], [3, 1, 0, 0, 16], [3, 1, 0, 4, 1]]> : tensor<10x5xi32>

#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a:2 = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> (!wskernel.stream<2, f32>, !wskernel.stream<2, f32>) {
      wskernel.send "out0" from <base = 0> n <base = 2> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
      wskernel.send "out1" from <base = 0> n <base = 2> {when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 0, y1 = 0>]}
    }
    %b = wskernel.kernel "b" kind "sink" grid [2, 2] sram 64 cycles 10.0 channels {back = "row_chain_west"} (%a#0, %a#1) {wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<2, f32>, !wskernel.stream<2, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 2> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.recv "in1" to <base = 0> n <base = 2> {when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 1, y1 = 1>]}
      wskernel.send "back" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 1, y1 = 1>]}
      wskernel.recv "back" to <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 1, y1 = 1>]}
    }
    return
  }
}
