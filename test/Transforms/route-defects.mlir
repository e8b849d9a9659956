// RUN: wsc-opt %s --wsc-route --wsc-verify-routes -split-input-file | FileCheck %s
// RUN: %python %wsc_src/bench/gen_kernel_graph.py --kernels 24 --width 16 --height 16 --fill 0.35 --seed 2 -o %t.mlir
// RUN: wsc-opt %t.mlir --wsc-set-arch="arch=mesh:16x16" --wsc-defects="rate=0.01 seed=1" --wsc-place --wsc-route --wsc-verify-routes | FileCheck %s --check-prefix=RANDOM
// RUN: wsc-opt %t.mlir --wsc-set-arch="arch=mesh:16x16" --wsc-defects="rate=0.01 seed=2" --wsc-place --wsc-route --wsc-verify-routes | FileCheck %s --check-prefix=RANDOM
// RUN: wsc-opt %t.mlir --wsc-set-arch="arch=mesh:16x16" --wsc-defects="rate=0.01 seed=3" --wsc-place --wsc-route --wsc-verify-routes | FileCheck %s --check-prefix=RANDOM

// p at (0, 1) sends to c at (4, 1). Row 1 is cut by the dead PE (2, 1) and
// row 0 by the dead link (2, 0)-(3, 0): the stream goes round through row 2,
// six hops instead of four, and no entry sits on (2, 1).
// CHECK: total_length = 6
// CHECK: wafer.routes 0 dense<[
// Row 1: p's ramp east; (1, 1) turns south; c at (4, 1) takes it from the
// south.
// CHECK-SAME: [0, 1, 0, 0, 4], [1, 1, 0, 4, 8], [4, 1, 0, 3, 1],
// Row 2: east under the dead PE, then north at column 4.
// CHECK-SAME: [1, 2, 0, 1, 4], [2, 2, 0, 4, 4], [3, 2, 0, 4, 4], [4, 2, 0, 4, 2]]> : tensor<7x5xi32>
#mesh = #wafer.arch<name = "mesh:8x4", width = 8, height = 4, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh, wafer.defects = #wafer.defects<
    pes = dense<[[0, 2, 1]]> : tensor<1x3xi32>, links = dense<[[0, 2, 0, 2]]> : tensor<1x4xi32>>} {
  func.func @detour(%x: tensor<4xf32>) {
    %p = wskernel.kernel "p" kind "k" grid [1, 1] sram 64 cycles 10.0 channels {} (%x) {wafer.origin = array<i64: 0, 0, 1>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "k" grid [1, 1] sram 64 cycles 10.0 channels {} (%p) {wafer.origin = array<i64: 0, 4, 1>} : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}

// RANDOM: wafer.defects = #wafer.defects<
// RANDOM: wafer.routes 0
