// RUN: wsc-opt %s --wsc-route -split-input-file -verify-diagnostics

// Two input streams and a channel meet at the last row of "sum": 3 colors
// into one ramp, on an arch with 2.
#arch = #wafer.arch<name = "two colors", width = 8, height = 8, sram_bytes = 49152,
    colors = 2, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #arch} {
  func.func @f(%x: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) {wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) {wafer.origin = array<i64: 0, 0, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    // expected-error @+1 {{kernel 'sum' needs 3 colors delivered to its PE (2, 2) (streams and channels), but arch 'two colors' has 2}}
    %sum = wskernel.kernel "sum" kind "k" grid [2, 1] sram 64 cycles 100.0 channels {col = "col_chain"} (%a, %b) {wafer.origin = array<i64: 0, 2, 1>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

// One row, 2 colors: three nested streams all need the link (2,0)->(3,0),
// and there is no way around.
#arch = #wafer.arch<name = "mesh:6x1", width = 6, height = 1, sram_bytes = 49152,
    colors = 2, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #arch} {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{cannot route stream 'out0' of kernel 'p0' on wafer 0: 1 link stays over capacity (2 colors, 100 words per token) after 40 rounds; most congested region x 2..3, y 0..0}}
    %p0 = wskernel.kernel "p0" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) {wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %p1 = wskernel.kernel "p1" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) {wafer.origin = array<i64: 0, 1, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %p2 = wskernel.kernel "p2" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) {wafer.origin = array<i64: 0, 2, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c2 = wskernel.kernel "c2" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%p2) {wafer.origin = array<i64: 0, 3, 0>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %c1 = wskernel.kernel "c1" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%p1) {wafer.origin = array<i64: 0, 4, 0>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %c0 = wskernel.kernel "c0" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%p0) {wafer.origin = array<i64: 0, 5, 0>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

// Routing needs placement first.
#arch = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #arch} {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{kernel 'a' has no 'wafer.origin'; run --wsc-place first}}
    %a = wskernel.kernel "a" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    return
  }
}

// -----

// The dead link (1,0)-(2,0) cuts a one-row wafer in two.
#arch = #wafer.arch<name = "mesh:4x1", width = 4, height = 1, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #arch, wafer.defects = #wafer.defects<
    pes = dense<> : tensor<0x3xi32>, links = dense<[[0, 1, 0, 2]]> : tensor<1x4xi32>>} {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{cannot route stream 'out0' of kernel 'p': dead PEs or links cut its producer off from a consumer}}
    %p = wskernel.kernel "p" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) {wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%p) {wafer.origin = array<i64: 0, 3, 0>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}
