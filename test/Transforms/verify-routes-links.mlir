// RUN: wsc-opt %s --wsc-verify-routes -split-input-file -verify-diagnostics

// Hand-broken tables of streams that cross wafers. Rows of wafer.routes are
// [x, y, color, in, out_mask] (ports R=0 N=1 E=2 S=3 W=4 LINK=5, mask bit i =
// port i); rows of wafer.links are [src_wafer, src_x, src_y, color,
// dst_wafer, dst_x, dst_y, dst_color]. Kernels: p [1, 1] at (2, 3) of wafer
// 0, c [1, 2] at (2, 5) of wafer 1.

// The tables --wsc-route writes for route-links.mlir's @two: p (wafer 0) sends
// east along row 3 to the edge PE (7, 3), whose entry forwards to LINK; the link
// lands on PE (0, 3) of wafer 1, input LINK, and the tree there reaches c.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 8], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<6x5xi32>
  wafer.links dense<[[0, 7, 3, 0, 1, 0, 3, 0]]> : tensor<1x8xi32>
}

// -----

// An entry forwards to LINK, but no link leaves that PE.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    // expected-error @+1 {{stream 'out0' of kernel 'p' (color 0) leaves PE (7, 3) through LINK, but no link in 'wafer.links' leaves there on that color}}
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 8], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<6x5xi32>
}

// -----

// A link lands on color 1, but wafer 1 has no (color 1, LINK) entry there.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 8], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<6x5xi32>
  // expected-error @+1 {{link [0, 7, 3, 0, 1, 0, 3, 1] arrives at PE (0, 3) of wafer 1 on color 1, but that router has no entry for color 1 input LINK}}
  wafer.links dense<[[0, 7, 3, 0, 1, 0, 3, 1]]> : tensor<1x8xi32>
}

// -----

// The off-wafer link of PE (7, 3) is dead.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8, wafer.defects = #wafer.defects<
    pes = dense<> : tensor<0x3xi32>, links = dense<[[0, 7, 3, 5]]> : tensor<1x4xi32>>} {
  func.func @main(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 8], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<6x5xi32>
  // expected-error @+1 {{link [0, 7, 3, 0, 1, 0, 3, 0] uses the dead off-wafer link of PE (7, 3) of wafer 0}}
  wafer.links dense<[[0, 7, 3, 0, 1, 0, 3, 0]]> : tensor<1x8xi32>
}

// -----

// A link from a PE that is not on the edge.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 32]]> : tensor<5x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 8], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<6x5xi32>
  // expected-error @+1 {{link [0, 6, 3, 0, 1, 0, 3, 0] leaves PE (6, 3), which is not on the edge of the 8x8 grid}}
  wafer.links dense<[[0, 6, 3, 0, 1, 0, 3, 0]]> : tensor<1x8xi32>
}

// -----

// A link on a color beyond the arch's.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 8], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<6x5xi32>
  // expected-error @+1 {{link [0, 7, 3, 0, 1, 0, 3, 30] uses color 30, but arch 'mesh:8x8' has 24 colors}}
  wafer.links dense<[[0, 7, 3, 0, 1, 0, 3, 30]]> : tensor<1x8xi32>
}

// -----

// A second link that no stream uses (its landing entry exists).
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 8], [0, 4, 0, 5, 1], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<7x5xi32>
  // expected-error @+1 {{link [0, 7, 4, 0, 1, 0, 4, 0] is used by no stream}}
  wafer.links dense<[[0, 7, 3, 0, 1, 0, 3, 0], [0, 7, 4, 0, 1, 0, 4, 0]]> : tensor<2x8xi32>
}

// -----

// c reads the stream on color 1, but it arrives on wafer 1 on color 0.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    // expected-error @+1 {{kernel 'c' reads stream 'out0' of kernel 'p' as 'in0' on color 1, but the stream arrives at PE (2, 5) of wafer 1 on color 0}}
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 1 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 8], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<6x5xi32>
  wafer.links dense<[[0, 7, 3, 0, 1, 0, 3, 0]]> : tensor<1x8xi32>
}

// -----

// On wafer 1 the stream is also delivered to x, which does not read it.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    // expected-error @+1 {{stream 'out0' of kernel 'p' (color 0) is delivered to PE (1, 3) of wafer 1 (kernel 'x'), which is not one of its destinations}}
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %x = wskernel.kernel "x" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {}, wafer.origin = array<i64: 1, 1, 3>} : (tensor<4xf32>) -> tensor<4xf32> {
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 5], [2, 3, 0, 4, 8], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<6x5xi32>
  wafer.links dense<[[0, 7, 3, 0, 1, 0, 3, 0]]> : tensor<1x8xi32>
}

// -----

// The tree on wafer 1 stops short of c's second PE.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    // expected-error @+1 {{stream 'out0' of kernel 'p' (color 0) never reaches PE (3, 5) of wafer 1 of kernel 'c'}}
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 8], [2, 4, 0, 1, 8], [2, 5, 0, 1, 1]]> : tensor<5x5xi32>
  wafer.links dense<[[0, 7, 3, 0, 1, 0, 3, 0]]> : tensor<1x8xi32>
}

// -----

// A missing hop on wafer 1: (1, 3) forwards east, (2, 3) has no entry.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    // expected-error @+1 {{stream 'out0' of kernel 'p' (color 0) arrives at PE (2, 3) of wafer 1 from WEST, but that router has no entry for it: a missing hop}}
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<5x5xi32>
  wafer.links dense<[[0, 7, 3, 0, 1, 0, 3, 0]]> : tensor<1x8xi32>
}

// -----

// A link to a wafer beyond the arch's four.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 8], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<6x5xi32>
  // expected-error @+1 {{link [0, 7, 3, 0, 5, 0, 3, 0] arrives at wafer 5, but arch 'mesh:8x8' has 4 wafers}}
  wafer.links dense<[[0, 7, 3, 0, 5, 0, 3, 0]]> : tensor<1x8xi32>
}

// -----

// The link lands on a dead PE.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8, wafer.defects = #wafer.defects<
    pes = dense<[[1, 0, 3]]> : tensor<1x3xi32>, links = dense<> : tensor<0x4xi32>>} {
  func.func @main(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 8], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<6x5xi32>
  // expected-error @+1 {{link [0, 7, 3, 0, 1, 0, 3, 0] arrives at the dead PE (0, 3) of wafer 1}}
  wafer.links dense<[[0, 7, 3, 0, 1, 0, 3, 0]]> : tensor<1x8xi32>
}

// -----

// c, on wafer 1, has no color for the stream it reads.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    // expected-error @+1 {{kernel 'c' reads stream 'out0' of kernel 'p' as 'in0' on no color}}
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 8], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<6x5xi32>
  wafer.links dense<[[0, 7, 3, 0, 1, 0, 3, 0]]> : tensor<1x8xi32>
}

// -----

// A router table for a wafer beyond the arch's four.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 8], [2, 4, 0, 1, 8], [2, 5, 0, 1, 5], [3, 5, 0, 4, 1]]> : tensor<6x5xi32>
  // expected-error @+1 {{router table for wafer 7, but arch 'mesh:8x8' has 4 wafers}}
  wafer.routes 7 dense<> : tensor<0x5xi32>
  wafer.links dense<[[0, 7, 3, 0, 1, 0, 3, 0]]> : tensor<1x8xi32>
}

// -----

// Two streams leave by the link of PE (7, 3) on the same color: p1 from the
// west, p2 from the north. The link carries one stream per color.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %p1 = wskernel.kernel "p1" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 6, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    // expected-error @+1 {{stream 'out0' of kernel 'p2' (color 0) and stream 'out0' of kernel 'p1' both use the link LINK of PE (7, 3) on color 0: collision}}
    %p2 = wskernel.kernel "p2" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.colors = {out0 = 0 : i64}, wafer.origin = array<i64: 0, 7, 2>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c1 = wskernel.kernel "c1" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%p1) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 0, 3>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %c2 = wskernel.kernel "c2" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%p2) {wafer.colors = {in0 = 0 : i64}, wafer.origin = array<i64: 1, 0, 4>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
  wafer.routes 0 dense<[[7, 2, 0, 0, 8], [6, 3, 0, 0, 4], [7, 3, 0, 1, 32], [7, 3, 0, 4, 32]]> : tensor<4x5xi32>
  wafer.routes 1 dense<[[0, 3, 0, 5, 1]]> : tensor<1x5xi32>
  wafer.links dense<[[0, 7, 3, 0, 1, 0, 3, 0]]> : tensor<1x8xi32>
}
