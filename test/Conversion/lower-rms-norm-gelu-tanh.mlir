// RUN: wsc-opt %s -split-input-file --wsc-set-arch="arch=mesh:4x4" --wsc-lower-to-kernels="utilization=0.45" | FileCheck %s --check-prefix=RMS
// RUN: wsc-opt %s -split-input-file --wsc-set-arch="arch=mesh:8x8" --wsc-lower-to-kernels="utilization=0.6" | FileCheck %s --check-prefix=GELU
// RUN: wsc-opt %s -split-input-file --wsc-set-arch="arch=mesh:8x8" --wsc-lower-to-kernels="utilization=0.6" | wsc-opt -split-input-file --wsc-set-arch="arch=mesh:8x2" --wsc-place | FileCheck %s --check-prefix=PLACED

// The rms_norm kind and the linear kind's tanh GELU, with figures worked out
// by hand (mesh: 1 FMAC, 1-wide SIMD, 1-cycle hops, 8 cycles per
// transcendental).

// RMS norm of C = 8 on 1x2 PEs, cb = 4, 4 tokens per step (all 4 here):
// x 4*4, the sums of squares 4, the weight 4, a result per token of the
// step 4*4 = 40 words = 160 bytes; PE 1 runs 18 instructions = 288 bytes:
// 448. Cycles = recv 4 + x.x 4 + one all-reduce of the 4 tokens' sums ((4*4
// words + 2 * 1 hop) / 4 tokens) 4.5 + mean and eps 2 + rsqrt 8 + scale and
// weight 8 = 30.5 (the layer norm's second all-reduce, centring and bias are
// not there); the async engine sends the block (4) beside. Its epsilon stays
// on the kernel for a resize; its result is two blocks, one per PE.
// RMS-LABEL: func.func @rms
// RMS: %[[N:.*]]:2 = wskernel.kernel "rms_f" kind "rms_norm" grid [1, 2] sram 448 cycles 3.050000e+01 channels {back = "row_chain_west", row = "row_chain"}(%{{.*}}, %{{.*}}) {wafer.stage = 0 : i64, wskernel.chain_cycles = 4.000000e+00 : f64, wskernel.epsilon = 9.99999997E-7 : f32} : (!wskernel.stream<8, f32>, tensor<8xf32>) -> (!wskernel.stream<4, f32>, !wskernel.stream<4, f32>)
// RMS-NEXT: wskernel.filter "in0" first <base = 0, px = 4> count <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
// RMS-NEXT: wskernel.init_tile 1 at 80 rows 1 cols 4 col_origin [0, 4]
// Token j's x at 16j bytes, its sum of squares at 64 + 4j.
// RMS: wskernel.loop 4 {
// RMS-NEXT: wskernel.recv "in0" to <base = 0, loop = [16]> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
// RMS-NEXT: wskernel.matvec <base = 64, loop = [4]> = <base = 0, loop = [16]> x <base = 0, loop = [16]> rows <base = 1> cols <base = 4>
// RMS-NEXT: }
// One all-reduce: the sums run east, the totals come back west.
// RMS-NEXT: wskernel.send "row" from <base = 64> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
// RMS-NEXT: wskernel.recv "row" to <base = 64> n <base = 4> {combine = "add", when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 0, y1 = 0>]}
// RMS-NEXT: wskernel.send "back" from <base = 64> n <base = 4> {when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 0, y1 = 0>]}
// RMS-NEXT: wskernel.recv "back" to <base = 64> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
// RMS-NEXT: wskernel.loop 4 {
// RMS-NEXT: wskernel.imm "mul" <base = 64, loop = [4]> = <base = 64, loop = [4]>, 1.250000e-01 n <base = 1>
// RMS-NEXT: wskernel.imm "add" <base = 64, loop = [4]> = <base = 64, loop = [4]>, 9.99999997E-7 n <base = 1>
// RMS-NEXT: wskernel.unary "rsqrt" <base = 64, loop = [4]> = <base = 64, loop = [4]> n <base = 1>
// RMS-NEXT: wskernel.scalar "mul" <base = 96, loop = [16]> = <base = 0, loop = [16]>, scalar <base = 64, loop = [4]> n <base = 4>
// RMS-NEXT: wskernel.vector "mul" <base = 96, loop = [16]> = <base = 96, loop = [16]>, <base = 80> n <base = 4>
// Token j's result at 96 + 16j leaves on the async engine.
// RMS-NEXT: wskernel.send "out0" from <base = 96, loop = [16]> n <base = 4> {async, when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
// RMS-NEXT: wskernel.send "out1" from <base = 96, loop = [16]> n <base = 4> {async, when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 0, y1 = 0>]}
// RMS-NEXT: }
// RMS: wskernel.kernel "lm_head" kind "linear" {{.*}}(%[[N]]#0, %[[N]]#1,
// RMS-NOT: wsgraph.rms_norm
func.func @rms(%idx: tensor<1x4xi64>) -> tensor<1x4x12xf32> {
  %wte = wsgraph.constant dense<0.5> : tensor<16x8xf32>
  %g = wsgraph.constant dense<1.5> : tensor<8xf32>
  %w = wsgraph.constant dense<0.25> : tensor<8x12xf32>
  %bias = wsgraph.constant dense<0.1> : tensor<12xf32>
  %e = wsgraph.gather %wte, %idx : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
  %n = wsgraph.rms_norm %e, %g {epsilon = 1.0e-06 : f32} : (tensor<1x4x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  %y = wsgraph.linear %n, %w, %bias : (tensor<1x4x8xf32>, tensor<8x12xf32>, tensor<12xf32>) -> tensor<1x4x12xf32>
  return %y : tensor<1x4x12xf32>
}

// -----

// A linear K = 8 -> N = 32 with the tanh GELU is a linear_gelu whose
// finishing row runs GELU_TANH; the form stays on the kernel
// (wskernel.gelu) so that a resize writes it again. On mesh:8x8: 2 tile
// rows (kb = 4) and a finishing row, 8 columns (nb = 4). Cycles: a tile row
// takes its 4 words of x into its 4*4 multiply-adds, 16, while its async
// engine passes the sum on (4 + 1); the finishing row receives the sum 4 +
// bias 4 + GELU 4*8 + sends its block 4 = 44.
// GELU-LABEL: func.func @mlp
// GELU: wskernel.kernel "l0.mlp_fc" kind "linear_gelu" grid [3, 8] sram 272 cycles 4.400000e+01 {{.*}}wskernel.gelu = "tanh"
// GELU: wskernel.vector "add" <base = 80> = <base = 80>, <base = 64> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 2, y1 = 2>]}
// GELU-NEXT: wskernel.unary "gelu_tanh" <base = 80> = <base = 80> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 2, y1 = 2>]}
// GELU-NOT: wskernel.unary "gelu"
// GELU: wskernel.kernel "lm_head" kind "linear"
// GELU-NOT: wskernel.gelu =
// GELU-NOT: gelu_tanh

// Placed on a wafer of 2 rows, the kernel takes one row of 8 PEs (its
// result blocks stay): the rebuilt body still runs the tanh form. Cycles:
// max(receive 8, 8*4 multiply-adds) 32 + bias 4 + GELU 32 + send 4 = 72.
// PLACED-LABEL: func.func @mlp
// PLACED: wskernel.kernel "l0.mlp_fc" kind "linear_gelu" grid [1, 8] sram 288 cycles 7.200000e+01 {{.*}}wskernel.gelu = "tanh"
// PLACED: wskernel.unary "gelu_tanh" <base = 144> = <base = 144> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 0, y1 = 0>]}
func.func @mlp(%idx: tensor<1x4xi64>) -> tensor<1x4x8xf32> {
  %wte = wsgraph.constant dense<0.5> : tensor<16x8xf32>
  %w1 = wsgraph.constant dense<0.25> : tensor<8x32xf32>
  %b1 = wsgraph.constant dense<0.1> : tensor<32xf32>
  %w2 = wsgraph.constant dense<0.125> : tensor<32x8xf32>
  %e = wsgraph.gather %wte, %idx : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
  %h = wsgraph.linear %e, %w1, %b1 : (tensor<1x4x8xf32>, tensor<8x32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %g = wsgraph.gelu %h {approximate = "tanh"} : tensor<1x4x32xf32>
  %y = wsgraph.linear %g, %w2 : (tensor<1x4x32xf32>, tensor<32x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}
