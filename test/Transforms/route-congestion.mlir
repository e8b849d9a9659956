// RUN: wsc-opt %s --wsc-route --mlir-print-elementsattrs-with-hex-if-larger=-1 -split-input-file | FileCheck %s
// RUN: wsc-opt %s --wsc-route --wsc-verify-routes -split-input-file | FileCheck %s --check-prefix=LEGAL
// Without a round of negotiation the first case does not route;
// extra-rounds goes on while few links are over and their count keeps
// reaching new lows: both route in the rounds they take at the default.
// RUN: not wsc-opt %s --wsc-route="max-iterations=0" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: 'wskernel.kernel' op cannot route stream 'out0' of kernel 'p1' on wafer 0: 1 link stays over capacity (1 colors, 100 words per token) after 0 rounds
// RUN: wsc-opt %s --wsc-route="max-iterations=0 extra-rounds=3" --wsc-verify-routes -split-input-file | FileCheck %s --check-prefix=EXTRA
// EXTRA: iterations = 2
// EXTRA: iterations = 2

// One color, so streams may cross at a PE but never share a link. Streams
// route in order: p1 ((0,0) -> (1,1)) first goes south through (0,1), onto
// the link (0,1)->(1,1) that p2 ((0,1) -> (3,1)) cannot avoid without a long
// detour. The overused link gets history cost, both are ripped up, and in
// the second round p1 goes east first, through (1,0). Every stream is still
// as short as it can be (6 hops in all).
// CHECK: iterations = 2 : i64
// CHECK-SAME: total_length = 6 : i64
// CHECK: wafer.routes 0 dense<[
// CHECK-SAME: [0, 0, 0, 0, 4], [1, 0, 0, 4, 8], [4, 0, 0, 0, 8],
// CHECK-SAME: [0, 1, 0, 0, 4], [1, 1, 0, 1, 1], [1, 1, 0, 4, 4], [2, 1, 0, 4, 4], [3, 1, 0, 4, 1], [4, 1, 0, 1, 1]]>
// LEGAL: iterations = 2
#arch = #wafer.arch<name = "mesh:5x2", width = 5, height = 2, sram_bytes = 49152,
    colors = 1, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #arch} {
  func.func @ripup(%x: tensor<4xf32>) {
    %p0 = wskernel.kernel "p0" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) {wafer.origin = array<i64: 0, 4, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %p1 = wskernel.kernel "p1" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) {wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %p2 = wskernel.kernel "p2" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) {wafer.origin = array<i64: 0, 0, 1>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c0 = wskernel.kernel "c0" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%p0) {wafer.origin = array<i64: 0, 4, 1>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %c1 = wskernel.kernel "c1" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%p1) {wafer.origin = array<i64: 0, 1, 1>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %c2 = wskernel.kernel "c2" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%p2) {wafer.origin = array<i64: 0, 3, 1>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

// Four streams on a 4x3 mesh with one color: the shortest routes (10 hops)
// cannot all be link-disjoint, so after a round of negotiation one
// stream detours by two hops (12 in all).
// CHECK: iterations = 2 : i64
// CHECK-SAME: total_length = 12 : i64
// LEGAL: iterations = 2
#arch = #wafer.arch<name = "mesh:4x3", width = 4, height = 3, sram_bytes = 49152,
    colors = 1, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #arch} {
  func.func @detour(%x: tensor<4xf32>) {
    %p0 = wskernel.kernel "p0" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) {wafer.origin = array<i64: 0, 2, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %p1 = wskernel.kernel "p1" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) {wafer.origin = array<i64: 0, 3, 1>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %p2 = wskernel.kernel "p2" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) {wafer.origin = array<i64: 0, 0, 2>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %p3 = wskernel.kernel "p3" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%x) {wafer.origin = array<i64: 0, 3, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c0 = wskernel.kernel "c0" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%p0) {wafer.origin = array<i64: 0, 2, 2>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %c1 = wskernel.kernel "c1" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%p1) {wafer.origin = array<i64: 0, 0, 1>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %c2 = wskernel.kernel "c2" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%p2) {wafer.origin = array<i64: 0, 1, 0>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %c3 = wskernel.kernel "c3" kind "k" grid [1, 1] sram 64 cycles 100.0 channels {} (%p3) {wafer.origin = array<i64: 0, 2, 1>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}
