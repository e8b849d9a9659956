// RUN: wsc-opt %s --wsc-place="moves=0 reshape-slower=false" | FileCheck %s
// RUN: wsc-opt %s --wsc-place="reshape-slower=false" | wsc-opt --wsc-route --wsc-verify-routes | FileCheck %s --check-prefix=LEGAL

// place-maxrects.mlir's tiling four times as large on a mesh one row taller
// (32 x 33), and a 1x1 kernel s that k5 feeds. Bands and lowest spots leave
// k7 no room; the free-rectangle packing holds them all. s is small (under
// a thousandth of the wafer): it is not packed by size (it would go to
// whatever hole is left last) but placed as soon as k5, its producer, is:
// in the hole nearest k5's sending PE (23, 31), right under it.
// CHECK-LABEL: func.func @tight
// CHECK: "k5" kind "linear" grid [20, 8] {{.*}}wafer.origin = array<i64: 0, 16, 12>
// CHECK: "s" kind "linear" grid [1, 1] {{.*}}wafer.origin = array<i64: 0, 23, 32>
// LEGAL: wafer.routes 0

#m = #wafer.arch<name = "mesh:32x33", width = 32, height = 33, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #m} {
  func.func @tight(%ids: tensor<4xf32>) {
    %k0 = wskernel.kernel "k0" kind "linear" grid [16, 12] sram 64 cycles 40.0
        channels {} (%ids) : (tensor<4xf32>) -> !wskernel.stream<8, f32> {
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k1 = wskernel.kernel "k1" kind "linear" grid [8, 24] sram 64 cycles 40.0
        channels {} (%k0) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k2 = wskernel.kernel "k2" kind "linear" grid [4, 24] sram 64 cycles 40.0
        channels {} (%k1) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k3 = wskernel.kernel "k3" kind "linear" grid [16, 4] sram 64 cycles 40.0
        channels {} (%k2) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k4 = wskernel.kernel "k4" kind "linear" grid [4, 16] sram 64 cycles 40.0
        channels {} (%k3) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k5 = wskernel.kernel "k5" kind "linear" grid [20, 8] sram 64 cycles 40.0
        channels {} (%k4) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %s = wskernel.kernel "s" kind "linear" grid [1, 1] sram 64 cycles 40.0
        channels {} (%k5) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k6 = wskernel.kernel "k6" kind "linear" grid [16, 8] sram 64 cycles 40.0
        channels {} (%s) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    %k7 = wskernel.kernel "k7" kind "linear" grid [16, 8] sram 64 cycles 40.0
        channels {} (%k6) : (!wskernel.stream<8, f32>) -> !wskernel.stream<8, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
      wskernel.send "out0" from <base = 0> n <base = 8>
    }
    return
  }
}
