// RUN: wsc-opt %s --wsc-place="moves=0 reshape-slower=false" | FileCheck %s
// RUN: wsc-opt %s --wsc-place="reshape-slower=false" | wsc-opt --wsc-route --wsc-verify-routes | FileCheck %s --check-prefix=LEGAL

// Eight kernels that tile a mesh:8x8 exactly (64 PEs) and that none of the
// band packings nor the lowest-spot (dense) packings holds: they leave a
// hole no kernel fits, and these kernels have no other shape. Where no
// kernel may be reshaped slower (the pipeline's strict tries), the
// free-rectangle packings do (four orders, three fits, rows and columns;
// the one with the shortest streams is kept): k1 (2x6) at the top left, k6
// (4x2) beside it, k2 (1x6) and k4 (1x4) under k1, k5 (5x2) under the end of
// k2, k0 (4x3) and k3 (4x1) at the bottom left, k7 (4x2) at the bottom
// right. The packing routes and verifies.
// CHECK-LABEL: func.func @tight
// CHECK: "k0" {{.*}}wafer.origin = array<i64: 0, 0, 4>
// CHECK: "k1" {{.*}}wafer.origin = array<i64: 0, 0, 0>
// CHECK: "k2" {{.*}}wafer.origin = array<i64: 0, 0, 2>
// CHECK: "k3" {{.*}}wafer.origin = array<i64: 0, 3, 4>
// CHECK: "k4" {{.*}}wafer.origin = array<i64: 0, 0, 3>
// CHECK: "k5" {{.*}}wafer.origin = array<i64: 0, 4, 3>
// CHECK: "k6" {{.*}}wafer.origin = array<i64: 0, 6, 0>
// CHECK: "k7" {{.*}}wafer.origin = array<i64: 0, 6, 4>
// LEGAL: wafer.routes 0

#m = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #m} {
  func.func @tight(%ids: tensor<4xf32>) {
    %k0 = wskernel.kernel "k0" kind "linear" grid [4, 3] sram 64 cycles 40.0
        channels {} (%ids) : (tensor<4xf32>) -> !wskernel.stream<8, f32> {
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k1 = wskernel.kernel "k1" kind "linear" grid [2, 6] sram 64 cycles 40.0
        channels {} (%k0) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k2 = wskernel.kernel "k2" kind "linear" grid [1, 6] sram 64 cycles 40.0
        channels {} (%k1) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k3 = wskernel.kernel "k3" kind "linear" grid [4, 1] sram 64 cycles 40.0
        channels {} (%k2) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k4 = wskernel.kernel "k4" kind "linear" grid [1, 4] sram 64 cycles 40.0
        channels {} (%k3) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k5 = wskernel.kernel "k5" kind "linear" grid [5, 2] sram 64 cycles 40.0
        channels {} (%k4) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k6 = wskernel.kernel "k6" kind "linear" grid [4, 2] sram 64 cycles 40.0
        channels {} (%k5) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k7 = wskernel.kernel "k7" kind "linear" grid [4, 2] sram 64 cycles 40.0
        channels {} (%k6) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    return
  }
}
