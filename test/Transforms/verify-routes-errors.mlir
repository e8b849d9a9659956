// RUN: wsc-opt %s --wsc-verify-routes -split-input-file -verify-diagnostics

// Hand-broken router tables. Rows are [x, y, color, in, out_mask]; ports
// R=0 N=1 E=2 S=3 W=4, and out_mask bit i = port i.

// The tables --wsc-route wrote for route-basic.mlir: every flow checks out.
// Kernels: a [1, 2] at (0, 0), b [2, 2] at (2, 0), c [1, 1] at (1, 1).
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 1 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 12], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 0, 1, 1], [1, 1, 1, 2, 1], [2, 1, 0, 1, 1],
      [2, 1, 1, 1, 1], [2, 1, 1, 2, 16], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1]]> : tensor<15x5xi32>
}

// -----

// A missing hop: b.out0 leaves (3, 1) westward, but (2, 1) has no entry for
// color 1 arriving from the east.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    // expected-error @+1 {{stream 'out0' of kernel 'b' (color 1) arrives at PE (2, 1) from EAST, but that router has no entry for it: a missing hop}}
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 1 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 12], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 0, 1, 1], [1, 1, 1, 2, 1], [2, 1, 0, 1, 1],
      [2, 1, 1, 1, 1], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1]]> : tensor<14x5xi32>
}

// -----

// A wrong color in the table: the last hop of b.out0 into c is on color 2.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    // expected-error @+1 {{stream 'out0' of kernel 'b' (color 1) arrives at PE (1, 1) from EAST, but that router has no entry for it: a missing hop}}
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 1 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 12], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 0, 1, 1], [1, 1, 2, 2, 1], [2, 1, 0, 1, 1],
      [2, 1, 1, 1, 1], [2, 1, 1, 2, 16], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1]]> : tensor<15x5xi32>
}

// -----

// A wrong color on a port: c reads b.out0 on color 2.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    // expected-error @+1 {{kernel 'c' reads stream 'out0' of kernel 'b' as 'in0' on color 2, but the stream is on color 1}}
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 2 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 12], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 0, 1, 1], [1, 1, 1, 2, 1], [2, 1, 0, 1, 1],
      [2, 1, 1, 1, 1], [2, 1, 1, 2, 16], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1]]> : tensor<15x5xi32>
}

// -----

// A loop: (2, 1) sends a.out0 back north to (2, 0), where it came from.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    // expected-error @+1 {{stream 'out0' of kernel 'a' (color 0) reaches PE (2, 0) twice: a routing loop or merging branches}}
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 1 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 12], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 0, 1, 1], [1, 1, 1, 2, 1], [2, 1, 0, 1, 3],
      [2, 1, 1, 1, 1], [2, 1, 1, 2, 16], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1]]> : tensor<15x5xi32>
}

// -----

// A collision on a link: a's row channel is forwarded on from (1, 0) to the
// east, over the link that a.out0 already holds on color 0.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    // expected-error @+1 {{channel 'row' of kernel 'a' from PE (0, 0) (color 0) and stream 'out0' of kernel 'a' both use the link EAST of PE (1, 0) on color 0: collision}}
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 1 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 12], [1, 0, 0, 4, 5], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 0, 1, 1], [1, 1, 1, 2, 1], [2, 1, 0, 1, 1],
      [2, 1, 1, 1, 1], [2, 1, 1, 2, 16], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1]]> : tensor<15x5xi32>
}

// -----

// A collision at a core: b.out0 moved to color 0 reaches c on the color that
// a.out0 already delivers there.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    // expected-error @+1 {{stream 'out0' of kernel 'b' (color 0) and stream 'out0' of kernel 'a' are both delivered to PE (1, 1) on color 0: collision}}
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 0 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 12], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 0, 1, 1], [1, 1, 0, 2, 1], [2, 1, 0, 1, 1],
      [2, 1, 0, 2, 16], [2, 1, 1, 1, 1], [3, 1, 0, 0, 16], [3, 1, 0, 1, 1], [3, 1, 1, 1, 1]]> : tensor<15x5xi32>
}

// -----

// A route into a dead PE. c moves to (1, 3), a.out0 reaches it down column 1,
// and (1, 2) is dead.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8, wafer.defects = #wafer.defects<pes = dense<[[0, 1, 2]]> : tensor<1x3xi32>, links = dense<> : tensor<0x4xi32>>} {
  func.func @main(%w: tensor<4xf32>) {
    // expected-error @+1 {{stream 'out0' of kernel 'a' (color 0) is forwarded from PE (1, 1) into the dead PE (1, 2)}}
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 1 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 3>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 12], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 0, 1, 8], [1, 1, 1, 2, 1], [2, 1, 0, 1, 1],
      [2, 1, 1, 1, 1], [2, 1, 1, 2, 16], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1],
      [1, 2, 0, 1, 8], [1, 3, 0, 1, 1]]> : tensor<17x5xi32>
}

// -----

// A route over a dead link: (1, 0)-(1, 1) is dead.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8, wafer.defects = #wafer.defects<pes = dense<> : tensor<0x3xi32>, links = dense<[[0, 1, 0, 3]]> : tensor<1x4xi32>>} {
  func.func @main(%w: tensor<4xf32>) {
    // expected-error @+1 {{stream 'out0' of kernel 'a' (color 0) is forwarded over the dead link SOUTH of PE (1, 0)}}
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 1 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 12], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 0, 1, 1], [1, 1, 1, 2, 1], [2, 1, 0, 1, 1],
      [2, 1, 1, 1, 1], [2, 1, 1, 2, 16], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1]]> : tensor<15x5xi32>
}

// -----

// A color beyond the arch's 24.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    // expected-error @+1 {{kernel 'a' port 'out0' has color 24, but arch 'mesh:8x8' has 24 colors}}
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 24 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 1 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 12], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 0, 1, 1], [1, 1, 1, 2, 1], [2, 1, 0, 1, 1],
      [2, 1, 1, 1, 1], [2, 1, 1, 2, 16], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1]]> : tensor<15x5xi32>
}

// -----

// A stream delivered where it does not belong: a.out0 also to a's own (1, 0).
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    // expected-error @+1 {{stream 'out0' of kernel 'a' (color 0) is delivered to PE (1, 0) (kernel 'a'), which is not one of its destinations}}
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 1 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 13], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 0, 1, 1], [1, 1, 1, 2, 1], [2, 1, 0, 1, 1],
      [2, 1, 1, 1, 1], [2, 1, 1, 2, 16], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1]]> : tensor<15x5xi32>
}

// -----

// A destination never reached: a.out0 no longer turns south to c.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    // expected-error @+1 {{stream 'out0' of kernel 'a' (color 0) never reaches PE (1, 1) of kernel 'c'}}
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 1 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 4], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 1, 2, 1], [2, 1, 0, 1, 1], [2, 1, 1, 1, 1],
      [2, 1, 1, 2, 16], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1]]> : tensor<14x5xi32>
}

// -----

// An entry that no flow reaches.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 1 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  // expected-error @+1 {{router entry at PE (5, 5) color 3 input RAMP (out_mask 4) is reached by no stream or channel}}
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 12], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 0, 1, 1], [1, 1, 1, 2, 1], [2, 1, 0, 1, 1],
      [2, 1, 1, 1, 1], [2, 1, 1, 2, 16], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1],
      [5, 5, 3, 0, 4]]> : tensor<16x5xi32>
}

// -----

// A port with no color.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    // expected-error @+1 {{kernel 'c' reads stream 'out0' of kernel 'a' as 'in1' on no color, but the stream is on color 0}}
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 12], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [3, 0, 1, 0, 8], [1, 1, 0, 1, 1], [1, 1, 1, 2, 1], [2, 1, 0, 1, 1],
      [2, 1, 1, 1, 1], [2, 1, 1, 2, 16], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1]]> : tensor<15x5xi32>
}

// -----

// A missing channel entry: b's col channel is never sent from (3, 0).
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {out0 = 0 : i64, row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    // expected-error @+1 {{channel 'col' of kernel 'b' from PE (3, 0) (color 1) has no router entry at its sending PE (3, 0) for input RAMP}}
    %b = wskernel.kernel "b" kind "mid" grid [2, 2] sram 64 cycles 10.0 channels {col = "col_chain"} (%a) {wafer.colors = {col = 1 : i64, in0 = 0 : i64, out0 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b, %a) {wafer.colors = {in0 = 1 : i64, in1 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 12], [1, 0, 0, 4, 1], [2, 0, 0, 4, 13], [2, 0, 1, 0, 8],
      [3, 0, 0, 4, 9], [1, 1, 0, 1, 1], [1, 1, 1, 2, 1], [2, 1, 0, 1, 1], [2, 1, 1, 1, 1],
      [2, 1, 1, 2, 16], [3, 1, 0, 1, 1], [3, 1, 1, 0, 16], [3, 1, 1, 1, 1]]> : tensor<14x5xi32>
}

// -----

// A feedback stream (weight streaming) with a missing hop: c.fb turns west at
// (5, 0) but (4, 0) has no entry for color 1 from the east.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "first" grid [1, 1] sram 64 cycles 10.0 channels {} (%a) {feedback = {fb0 = "c"}, wafer.colors = {fb0 = 1 : i64, in0 = 0 : i64, out0 = 0 : i64}, wafer.origin = array<i64: 0, 3, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "fb0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    // expected-error @+1 {{stream 'fb' of kernel 'c' (color 1) arrives at PE (4, 0) from EAST, but that router has no entry for it: a missing hop}}
    %c = wskernel.kernel "c" kind "last" grid [1, 1] sram 64 cycles 10.0 channels {} (%b) {wafer.colors = {fb = 1 : i64, in0 = 0 : i64}, wafer.origin = array<i64: 0, 5, 2>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "fb" from <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 4, 4], [2, 0, 0, 4, 4], [3, 0, 0, 0, 4], [3, 0, 0, 4, 1], [3, 0, 1, 2, 1], [4, 0, 0, 4, 4], [5, 0, 0, 4, 8], [5, 0, 1, 3, 16], [5, 1, 0, 1, 8], [5, 1, 1, 3, 2], [5, 2, 0, 1, 1], [5, 2, 1, 0, 2]]> : tensor<13x5xi32>
}

// -----

// A block of a stream delivered to a PE of its reader that never receives it:
// block 1 of "a" is read only by PE (1, 1) of "b", at (3, 1), but the table
// also delivers it at (3, 0).
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    // expected-error @+1 {{stream 'out1' of kernel 'a' (color 1) is delivered to PE (3, 0) (kernel 'b'), which is not one of its destinations}}
    %a:2 = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64, out1 = 1 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> (!wskernel.stream<2, f32>, !wskernel.stream<2, f32>) {
      wskernel.send "out0" from <base = 0> n <base = 2> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
      wskernel.send "out1" from <base = 0> n <base = 2> {when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 0, y1 = 0>]}
    }
    %b = wskernel.kernel "b" kind "sink" grid [2, 2] sram 64 cycles 10.0 channels {back = "row_chain_west"} (%a#0, %a#1) {wafer.colors = {back = 0 : i64, in0 = 0 : i64, in1 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<2, f32>, !wskernel.stream<2, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 2> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.recv "in1" to <base = 0> n <base = 2> {when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 1, y1 = 1>]}
      wskernel.send "back" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 1, y1 = 1>]}
      wskernel.recv "back" to <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 1, y1 = 1>]}
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 4, 4], [1, 0, 1, 0, 4], [2, 0, 0, 4, 5], [2, 0, 1, 4, 4],
      [3, 0, 0, 4, 1], [3, 0, 1, 4, 9], [2, 1, 0, 2, 1], [3, 1, 0, 0, 16], [3, 1, 1, 1, 1]]> : tensor<10x5xi32>
}

// -----

// The row_chain_west channel of "b" misses its hop: (3, 1) sends west on
// color 0, but (2, 1) does not deliver it.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a:2 = wskernel.kernel "a" kind "src" grid [1, 2] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64, out1 = 1 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> (!wskernel.stream<2, f32>, !wskernel.stream<2, f32>) {
      wskernel.send "out0" from <base = 0> n <base = 2> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
      wskernel.send "out1" from <base = 0> n <base = 2> {when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 0, y1 = 0>]}
    }
    // expected-error @+1 {{channel 'back' of kernel 'b' from PE (3, 1)}}
    %b = wskernel.kernel "b" kind "sink" grid [2, 2] sram 64 cycles 10.0 channels {back = "row_chain_west"} (%a#0, %a#1) {wafer.colors = {back = 0 : i64, in0 = 0 : i64, in1 = 1 : i64}, wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<2, f32>, !wskernel.stream<2, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 2> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
      wskernel.recv "in1" to <base = 0> n <base = 2> {when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 1, y1 = 1>]}
      wskernel.send "back" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 1, y1 = 1>]}
      wskernel.recv "back" to <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 1, y1 = 1>]}
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 4, 4], [1, 0, 1, 0, 4], [2, 0, 0, 4, 5], [2, 0, 1, 4, 4],
      [3, 0, 0, 4, 1], [3, 0, 1, 4, 8], [3, 1, 0, 0, 16], [3, 1, 1, 1, 1]]> : tensor<9x5xi32>
}

// -----

// A collision with a channel's second hop, (1, 0) -> (2, 0): b's stream goes
// north into (1, 0) and on east over the link that hop holds on color 0.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "src" grid [1, 3] sram 64 cycles 10.0 channels {row = "row_chain"} (%w) {wafer.colors = {row = 0 : i64}, wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "row" from <base = 0> n <base = 1> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
    }
    // expected-error @+1 {{stream 'out0' of kernel 'b' (color 0) and channel 'row' of kernel 'a' from PE (1, 0) both use the link EAST of PE (1, 0) on color 0: collision}}
    %b = wskernel.kernel "b" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 1, 1>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 1>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[0, 0, 0, 0, 4], [1, 0, 0, 0, 4], [1, 0, 0, 3, 4], [1, 0, 0, 4, 1],
      [2, 0, 0, 4, 1], [1, 1, 0, 0, 2], [2, 1, 0, 1, 1]]> : tensor<7x5xi32>
}
