// RUN: wsc-opt %s --wsc-route --wsc-write-report="file=%t.json" -o /dev/null
// RUN: %python -c "import json; e = json.load(open('%t.json'))['estimate']; print(e['bound'], e['cycles_per_token'], e['ideal_cycles_per_token'], e['balance'])" | FileCheck %s

// route-budget.mlir's wafer, with c0 a linear holding a 4x4 weight: two
// 8-word streams must share the link (1,0)->(2,0), 16 words per token
// against kernels of 10 cycles, so the links bound the pipeline at 16
// cycles per token. The ideal is c0's 16 multiply-accumulates over the 4 PEs
// (1 per cycle): 4 cycles. The balance is against the bound: 4 / 16 = 0.25
// (not 4 / 10, the slowest kernel).
// CHECK: links 16 4 0.25

#arch = #wafer.arch<name = "mesh:4x1", width = 4, height = 1, sram_bytes = 49152,
    colors = 24, clock_hz = 1100000000, hop_cycles = 1, simd_fp32 = 1, fmac_fp32 = 1,
    fmac_fp16 = 8, transcendental_cycles = 8, max_wafers = 64, link_bytes_per_cycle = 136,
    link_latency_cycles = 2000, ext_mem_bytes = 1000000000000, ext_mem_bytes_per_cycle = 136>
module attributes {wafer.arch = #arch} {
  func.func @f(%x: tensor<4xf32>, %w: tensor<4x4xf32>) {
    %p0 = wskernel.kernel "p0" kind "k" grid [1, 1] sram 64 cycles 10.0 channels {} (%x) {wafer.origin = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> !wskernel.stream<8, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %p1 = wskernel.kernel "p1" kind "k" grid [1, 1] sram 64 cycles 10.0 channels {} (%x) {wafer.origin = array<i64: 0, 1, 0>} : (tensor<4xf32>) -> !wskernel.stream<8, f32> {
      wskernel.send "out0" from <base = 0> n <base = 4>
    }
    %c1 = wskernel.kernel "c1" kind "k" grid [1, 1] sram 64 cycles 10.0 channels {} (%p1) {wafer.origin = array<i64: 0, 2, 0>} : (!wskernel.stream<8, f32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
    }
    %c0 = wskernel.kernel "c0" kind "linear" grid [1, 1] sram 64 cycles 10.0 channels {} (%p0, %w) {wafer.origin = array<i64: 0, 3, 0>} : (!wskernel.stream<8, f32>, tensor<4x4xf32>) -> tensor<4xf32> {
      wskernel.recv "in0" to <base = 0> n <base = 8>
    }
    return
  }
}
