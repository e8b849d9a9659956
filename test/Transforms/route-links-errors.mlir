// RUN: wsc-opt %s --wsc-route -split-input-file -verify-diagnostics

// Streams between wafers flow forward, or from the last wafer to wafer 0
// alone (the ring's link): wafer 1 is not the last here.
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @backward(%w: tensor<4xf32>) {
    // expected-error @+1 {{stream 'out0' of kernel 'p' on wafer 1 is read by kernel 'c' on wafer 0: streams between wafers flow forward (wafer i's east edge feeds wafer i + 1's west edge), or from the last wafer to wafer 0 alone}}
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 1, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%p) {wafer.origin = array<i64: 0, 2, 3>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %q = wskernel.kernel "q" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 2, 2, 3>} : (tensor<4xf32>) -> tensor<4xf32> {
    }
    return
  }
}

// -----

// One row and one color: the second stream finds its only link full.
#line = #wafer.arch<name = "one color", width = 8, height = 1, sram_bytes = 49152,
    colors = 1, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #line} {
  func.func @full(%w: tensor<4xf32>) {
    %p1 = wskernel.kernel "p1" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 0, 2, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    // expected-error @+1 {{cannot route stream 'out0' of kernel 'p2' from wafer 0 to wafer 1: no link from wafer 0 to wafer 1 is left (of 1 row, 0 dead or cut off at an edge PE or the link, 1 full: a link carries one stream per color, 1)}}
    %p2 = wskernel.kernel "p2" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 0, 4, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c1 = wskernel.kernel "c1" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%p1) {wafer.origin = array<i64: 1, 5, 0>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %c2 = wskernel.kernel "c2" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%p2) {wafer.origin = array<i64: 1, 3, 0>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

// Every link between wafers 1 and 2 is dead or lands on a dead PE.
#mesh8x2 = #wafer.arch<name = "mesh:8x2", width = 8, height = 2, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8x2, wafer.defects = #wafer.defects<
    pes = dense<[[2, 0, 1]]> : tensor<1x3xi32>, links = dense<[[1, 7, 0, 5]]> : tensor<1x4xi32>>} {
  func.func @dead(%w: tensor<4xf32>) {
    // expected-error @+1 {{cannot route stream 'out0' of kernel 'p' from wafer 0 to wafer 2: no link from wafer 1 to wafer 2 is left (of 2 rows, 2 dead or cut off at an edge PE or the link, 0 full: a link carries one stream per color, 24)}}
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 0, 2, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%p) {wafer.origin = array<i64: 2, 3, 0>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

// A wall of dead PEs cuts the producer off from the east edge.
#mesh8x2 = #wafer.arch<name = "mesh:8x2", width = 8, height = 2, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8x2, wafer.defects = #wafer.defects<
    pes = dense<[[0, 6, 0], [0, 6, 1]]> : tensor<2x3xi32>, links = dense<> : tensor<0x4xi32>>} {
  func.func @wall(%w: tensor<4xf32>) {
    // expected-error @+1 {{cannot route stream 'out0' of kernel 'p' on wafer 0: dead PEs or links cut its producer off from its exit PE (7, 0) to wafer 1}}
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 0, 2, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%p) {wafer.origin = array<i64: 1, 3, 0>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}
