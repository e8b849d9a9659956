// RUN: wsc-opt %s --wsc-place --wsc-route --wsc-verify-routes | FileCheck %s

// An arch with 2 colors. Every kernel's bottom PE takes its input stream
// and its col channel, so it needs both colors there. The conflict graph is
// a path (col_i - stream_i-1 - ...): the channels take one color and the
// streams the other, so each color is reused by 11 or 12 groups that share
// no link and no ramp.
// CHECK: wafer.route_stats = {colors_used = 2 : i64, {{.*}}max_colors_per_router = 2 : i64
// CHECK: "k0" {{.*}}wafer.colors = {col = [[A:[01]]] : i64, out0 = [[B:[01]]] : i64}
// CHECK: "k1" {{.*}}wafer.colors = {col = [[A]] : i64, in0 = [[B]] : i64, out0 = [[B]] : i64}
// CHECK: "k2" {{.*}}wafer.colors = {col = [[A]] : i64, in0 = [[B]] : i64, out0 = [[B]] : i64}
// CHECK: "k11" {{.*}}wafer.colors = {col = [[A]] : i64, in0 = [[B]] : i64}
// CHECK: wafer.routes 0

#two = #wafer.arch<name = "mesh:16x16 with 2 colors", width = 16, height = 16, sram_bytes = 49152,
    colors = 2, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #two} {
  func.func @chain(%x: tensor<4xf32>) {
    %k0 = wskernel.kernel "k0" kind "linear" grid [2, 1] sram 64 cycles 10.0 channels {col = "col_chain"} (%x) : (tensor<4xf32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %k1 = wskernel.kernel "k1" kind "linear" grid [2, 1] sram 64 cycles 10.0 channels {col = "col_chain"} (%k0) : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %k2 = wskernel.kernel "k2" kind "linear" grid [2, 1] sram 64 cycles 10.0 channels {col = "col_chain"} (%k1) : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %k3 = wskernel.kernel "k3" kind "linear" grid [2, 1] sram 64 cycles 10.0 channels {col = "col_chain"} (%k2) : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %k4 = wskernel.kernel "k4" kind "linear" grid [2, 1] sram 64 cycles 10.0 channels {col = "col_chain"} (%k3) : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %k5 = wskernel.kernel "k5" kind "linear" grid [2, 1] sram 64 cycles 10.0 channels {col = "col_chain"} (%k4) : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %k6 = wskernel.kernel "k6" kind "linear" grid [2, 1] sram 64 cycles 10.0 channels {col = "col_chain"} (%k5) : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %k7 = wskernel.kernel "k7" kind "linear" grid [2, 1] sram 64 cycles 10.0 channels {col = "col_chain"} (%k6) : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %k8 = wskernel.kernel "k8" kind "linear" grid [2, 1] sram 64 cycles 10.0 channels {col = "col_chain"} (%k7) : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %k9 = wskernel.kernel "k9" kind "linear" grid [2, 1] sram 64 cycles 10.0 channels {col = "col_chain"} (%k8) : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %k10 = wskernel.kernel "k10" kind "linear" grid [2, 1] sram 64 cycles 10.0 channels {col = "col_chain"} (%k9) : (!wskernel.stream<4, f32>) -> !wskernel.stream<4, f32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %k11 = wskernel.kernel "k11" kind "linear" grid [2, 1] sram 64 cycles 10.0 channels {col = "col_chain"} (%k10) : (!wskernel.stream<4, f32>) -> tensor<4xf32> {
      wskernel.send "col" from <base = 0> n <base = 1>
      wskernel.recv "in0" to <base = 0> n <base = 4>
    }
    return
  }
}
