// RUN: wsc-opt %s --wsc-route --wsc-verify-routes | FileCheck %s

// Weight streaming's feedback stream: "c" sends on port "fb" to port "fb0" of "b",
// which sits before it (no SSA value can say so). It gets a color and a route
// like any stream: west from (5, 2) along row 2, up column 3 into (3, 0).
#mesh8 = #wafer.arch<name = "mesh:8x8", width = 8, height = 8, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #mesh8} {
  func.func @main(%w: tensor<4xf32>) {
    %a = wskernel.kernel "a" kind "src" grid [1, 1] sram 64 cycles 10.0 channels {} (%w) {wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %b = wskernel.kernel "b" kind "first" grid [1, 1] sram 64 cycles 10.0 channels {} (%a) {feedback = {fb0 = "c"}, wafer.origin = array<i64: 0, 3, 0>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.recv "fb0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c = wskernel.kernel "c" kind "last" grid [1, 1] sram 64 cycles 10.0 channels {} (%b) {wafer.origin = array<i64: 0, 5, 2>} : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "fb" from <base = 0> n <base = 4>
    }
    return
  }
}
// CHECK: wskernel.kernel "b" {{.*}}{feedback = {fb0 = "c"}, wafer.colors = {fb0 = [[FB:[0-9]+]] : i64, in0 = 0 : i64, out0 = 0 : i64}
// CHECK: wskernel.kernel "c" {{.*}}{wafer.colors = {fb = [[FB]] : i64, in0 = 0 : i64}
// CHECK: wafer.routes 0 dense<{{.*}}[3, 0, [[FB]], 3, 1]{{.*}}[3, 1, [[FB]], 3, 2]{{.*}}[3, 2, [[FB]], 2, 2]{{.*}}[4, 2, [[FB]], 2, 16]{{.*}}[5, 2, [[FB]], 0, 16]]>
