// RUN: wsc-opt %s --wsc-route -split-input-file | FileCheck %s
// RUN: wsc-opt %s --wsc-route --wsc-verify-routes -split-input-file | FileCheck %s
// RUN: wsc-opt %s --wsc-route -split-input-file | wsc-opt --wsc-route -split-input-file | FileCheck %s

// Streams between wafers (docs/placement-and-routing.md, "Between wafers"):
// wafer i's east edge feeds wafer i + 1's west edge, one link per row. Rows
// of wafer.routes are [x, y, color, in, out_mask] (ports R=0 N=1 E=2 S=3 W=4
// LINK=5, mask bit i = port i); rows of wafer.links are [src_wafer, src_x,
// src_y, color, dst_wafer, dst_x, dst_y, dst_color]. Kernels are pinned.

// A 2-wafer chain on mesh:8x8. p (wafer 0) sends from (2, 3) east along row 3
// to the edge PE (7, 3), which forwards to LINK (mask 32); the link lands on
// PE (0, 3) of wafer 1 (input LINK = 5), and the tree there goes south and
// east into c [1, 2] at (2, 5). Rows 3 and 5 tie (9 hops); the lower wins.
// CHECK: cross_wafer_streams = 1 : i64, {{.*}}link_crossings = 1 : i64, max_colors_per_link = 1 : i64, {{.*}}wafer_links = 1 : i64}
// CHECK-LABEL: func.func @two
// CHECK: "p" {{.*}}wafer.colors = {out0 = 0 : i64}
// CHECK: "c" {{.*}}wafer.colors = {in0 = 0 : i64}
// CHECK: wafer.routes 0 dense<{{\[\[}}2, 3, 0, 0, 4], [3, 3, 0, 4, 4], [4, 3, 0, 4, 4], [5, 3, 0, 4, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<6x5xi32>
// CHECK: wafer.routes 1 dense<{{\[\[}}0, 3, 0, 5, 8], [0, 4, 0, 1, 8], [0, 5, 0, 1, 4], [1, 5, 0, 4, 4], [2, 5, 0, 4, 5], [3, 5, 0, 4, 1]]> : tensor<6x5xi32>
// CHECK: wafer.links dense<{{\[\[}}0, 7, 3, 0, 1, 0, 3, 0]]> : tensor<1x8xi32>
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @two(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 0, 2, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p) {wafer.origin = array<i64: 1, 2, 5>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

// A 3-wafer chain a -> b -> c: each stream crosses one link. b's stream
// enters wafer 2 at row 6, right beside c.
// CHECK: cross_wafer_streams = 2 : i64, {{.*}}link_crossings = 2 : i64,
// CHECK-LABEL: func.func @three
// CHECK: wafer.routes 0 dense<{{\[\[}}5, 1, 0, 0, 4], [6, 1, 0, 4, 4], [7, 1, 0, 4, 32]]>
// CHECK: wafer.routes 1 dense<{{\[\[}}0, 1, 0, 5, 8], {{.*}}, [6, 6, 0, 0, 4], [6, 6, 0, 4, 1], [7, 6, 0, 4, 32]]> : tensor<14x5xi32>
// CHECK: wafer.routes 2 dense<{{\[\[}}0, 6, 0, 5, 4], [1, 6, 0, 4, 1]]>
// CHECK: wafer.links dense<{{\[\[}}0, 7, 1, 0, 1, 0, 1, 0], [1, 7, 6, 0, 2, 0, 6, 0]]> : tensor<2x8xi32>
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @three(%w: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 0, 5, 1>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %b = wskernel.kernel "b" kind "mid" grid [1, 1] sram 64 cycles 10.0 channels {} (%a) {wafer.origin = array<i64: 1, 6, 6>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%b) {wafer.origin = array<i64: 2, 1, 6>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

// One stream read on its own wafer (q0), on wafer 1 (q1) and on wafer 3 (q3):
// on wafer 1 the entry PE's tree delivers to q1 and goes on to the next
// exit (mask 5 at (1, 2): RAMP and EAST); wafer 2 has no kernel and only
// passes it through; wafer 3 takes it south to q3 at (0, 7).
// CHECK: cross_wafer_streams = 1 : i64, {{.*}}link_crossings = 3 : i64,
// CHECK-LABEL: func.func @fanout
// CHECK: wafer.routes 0 dense<{{\[\[}}3, 2, 0, 0, 12], [4, 2, 0, 4, 4], [5, 2, 0, 4, 4], [6, 2, 0, 4, 4], [7, 2, 0, 4, 32], [3, 3, 0, 1, 8], [3, 4, 0, 1, 1]]>
// CHECK: wafer.routes 1 dense<{{\[\[}}0, 2, 0, 5, 4], [1, 2, 0, 4, 5], {{.*}}, [7, 2, 0, 4, 32]]> : tensor<8x5xi32>
// CHECK: wafer.routes 2 dense<{{\[\[}}0, 2, 0, 5, 4], {{.*}}, [7, 2, 0, 4, 32]]> : tensor<8x5xi32>
// CHECK: wafer.routes 3 dense<{{\[\[}}0, 2, 0, 5, 8], [0, 3, 0, 1, 8], [0, 4, 0, 1, 8], [0, 5, 0, 1, 8], [0, 6, 0, 1, 8], [0, 7, 0, 1, 1]]>
// CHECK: wafer.links dense<{{\[\[}}0, 7, 2, 0, 1, 0, 2, 0], [1, 7, 2, 0, 2, 0, 2, 0], [2, 7, 2, 0, 3, 0, 2, 0]]> : tensor<3x8xi32>
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @fanout(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 0, 3, 2>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %q0 = wskernel.kernel "q0" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%p) {wafer.origin = array<i64: 0, 3, 4>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %q1 = wskernel.kernel "q1" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%p) {wafer.origin = array<i64: 1, 1, 2>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    %q3 = wskernel.kernel "q3" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%p) {wafer.origin = array<i64: 3, 0, 7>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

// Row 3 (straight from p at (5, 3) to c at (2, 3)) is out: its edge PE
// (7, 3) is dead. So are row 4 (the off-wafer link of (7, 4), dir 5 = LINK)
// and row 2 (the link of (0, 2) on wafer 1). Rows 1 and 5 tie; row 1 wins.
// CHECK-LABEL: func.func @defects
// CHECK: wafer.routes 0 dense<{{\[\[}}7, 1, 0, 3, 32], [6, 2, 0, 3, 4], [7, 2, 0, 4, 2], [5, 3, 0, 0, 4], [6, 3, 0, 4, 2]]>
// CHECK: wafer.routes 1 dense<{{\[\[}}0, 1, 0, 5, 8], [0, 2, 0, 1, 8], [0, 3, 0, 1, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 1]]>
// CHECK: wafer.links dense<{{\[\[}}0, 7, 1, 0, 1, 0, 1, 0]]>
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8, wafer.defects = #wafer.defects<
    pes = dense<[[0, 7, 3]]> : tensor<1x3xi32>, links = dense<[[0, 7, 4, 5], [1, 0, 2, 5]]> : tensor<2x4xi32>>} {
  func.func @defects(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 0, 5, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%p) {wafer.origin = array<i64: 1, 2, 3>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

// Two streams from row 3 to c on row 3: the second pays 2 for sharing
// row 3's link, so it takes row 2 (as cheap). On wafer 0 both run east along
// row 3 (p2's turns north at the edge), on colors 0 and 1, and keep them
// on wafer 1, where both are delivered to c.
// CHECK: link_crossings = 2 : i64, max_colors_per_link = 1 : i64, {{.*}}wafer_links = 2 : i64}
// CHECK-LABEL: func.func @spread
// CHECK: "c" {{.*}}wafer.colors = {in0 = 0 : i64, in1 = 1 : i64}
// CHECK: wafer.links dense<{{\[\[}}0, 7, 2, 1, 1, 0, 2, 1], [0, 7, 3, 0, 1, 0, 3, 0]]> : tensor<2x8xi32>
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @spread(%w: tensor<4xf32>) {
    %p1 = wskernel.kernel "p1" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 0, 4, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %p2 = wskernel.kernel "p2" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 0, 5, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 2] sram 64 cycles 10.0 channels {} (%p1, %p2) {wafer.origin = array<i64: 1, 2, 3>} : (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "in1" to <base = 0> n <base = 4>
    }
    return
  }
}

// -----

// One row: both streams take its link, on two colors at each end.
// CHECK: link_crossings = 2 : i64, max_colors_per_link = 2 : i64, {{.*}}wafer_links = 1 : i64}
// CHECK-LABEL: func.func @shared
// CHECK: "p1" {{.*}}wafer.colors = {out0 = 0 : i64}
// CHECK: "p2" {{.*}}wafer.colors = {out0 = 1 : i64}
// CHECK: wafer.routes 0 dense<{{.*}}[7, 0, 0, 4, 32], [7, 0, 1, 4, 32]]> : tensor<10x5xi32>
// CHECK: wafer.routes 1 dense<{{\[\[}}0, 0, 0, 5, 4], [0, 0, 1, 5, 4], {{.*}}]> : tensor<10x5xi32>
// CHECK: wafer.links dense<{{\[\[}}0, 7, 0, 0, 1, 0, 0, 0], [0, 7, 0, 1, 1, 0, 0, 1]]> : tensor<2x8xi32>
#line = #wafer.arch<name = "mesh:8x1", width = 8, height = 1, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #line} {
  func.func @shared(%w: tensor<4xf32>) {
    %p1 = wskernel.kernel "p1" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 0, 2, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
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

// Back from the last wafer to wafer 0 (a generating program's fed-back
// token): the ring's link joins the last wafer's east edge to wafer 0's west
// edge. p on wafer 1 sends east along row 3 to (7, 3) and its LINK; the link
// lands on PE (0, 3) of wafer 0, whose tree goes east into c at (2, 3).
// CHECK-LABEL: func.func @ring
// CHECK: wafer.routes 0 dense<{{\[\[}}0, 3, 0, 5, 4], [1, 3, 0, 4, 4], [2, 3, 0, 4, 1]]> : tensor<3x5xi32>
// CHECK: wafer.routes 1 dense<{{\[\[}}5, 3, 0, 0, 4], [6, 3, 0, 4, 4], [7, 3, 0, 4, 32]]> : tensor<3x5xi32>
// CHECK: wafer.links dense<{{\[\[}}1, 7, 3, 0, 0, 0, 3, 0]]> : tensor<1x8xi32>
module attributes {wafer.arch = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 4, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>} {
  func.func @ring(%w: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 1, 5, 3>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
    }
    %c = wskernel.kernel "c" kind "sink" grid [1, 1] sram 64 cycles 10.0 channels {} (%p) {wafer.origin = array<i64: 0, 2, 3>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}
