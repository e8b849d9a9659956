// RUN: wsc-opt %s -split-input-file --wsc-set-arch="arch=mesh:4x4" --wsc-lower-to-kernels="utilization=0.45" -verify-diagnostics | FileCheck %s

// Embedding, layer norm and a dense layer on a 4x4 mesh. The sizes, SRAM bytes
// and cycles below are worked out by hand in the comments.

// CHECK-LABEL: func.func @tiny
func.func @tiny(%idx: tensor<1x4xi64>) -> tensor<1x4x12xf32> {
  %wte = wsgraph.constant dense<0.5> : tensor<16x8xf32>
  %g = wsgraph.constant dense<1.0> : tensor<8xf32>
  %b = wsgraph.constant dense<0.0> : tensor<8xf32>
  %w = wsgraph.constant dense<0.25> : tensor<8x12xf32>
  %bias = wsgraph.constant dense<0.1> : tensor<12xf32>
  %e = wsgraph.gather %wte, %idx : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
  %n = wsgraph.layer_norm %e, %g, %b : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  %y = wsgraph.linear %n, %w, %bias : (tensor<1x4x8xf32>, tensor<8x12xf32>, tensor<12xf32>) -> tensor<1x4x12xf32>
  return %y : tensor<1x4x12xf32>
}
// SRAM per PE = data + 16 bytes per instruction that PE runs (LOOP and END count;
// an instruction whose `when` leaves a PE out is not in its code).
// Budgets: the least cycles per token all three reach within 0.45 * 16 PEs.
// Embedding on one PE: idx 4 + table 16*8 + part 8 words = 140 words = 560 bytes;
// 6 instructions = 96 bytes: 656. cycles = lookup 8 + epilogue 8 + send its block 8 = 24.
// CHECK: %[[E:.*]] = wskernel.kernel "embed" kind "embed" grid [1, 1] sram 656 cycles 2.400000e+01 channels {}(%arg0, %{{.*}}) {wafer.stage = 0 : i64} : (tensor<1x4xi64>, tensor<16x8xf32>) -> !wskernel.stream<8, f32>
// CHECK: wskernel.host_input 0 at 0
// CHECK: wskernel.init_tile 1 at 16 rows 16 cols 8 row_origin [16, 0] col_origin [0, 8]
// CHECK: wskernel.send "out0" from <base = 528> n <base = 8> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
// Layer norm of C=8 on 1x3 PEs, cb = 3 (the last block 2), 4 tokens per step
// (all 4 here): x 4*3, stat 4, gamma 3, beta 3, a result per token of the
// step 4*3 = 34 words = 136 bytes; PE 2 runs 27 instructions = 432 bytes: 568.
// cycles = recv 3 + sum 3 + 2 all-reduces of 4 tokens' statistics ((4*4 words
// + 2 * 2 hops) / 4 tokens) 10 + 4 one-word ops + centre 3 + x.x 3 + rsqrt 8
// + scale, gamma, beta 9 = 43; the async engine sends the block (3) beside.
// Its result is three blocks, one per PE.
// CHECK: %[[N:.*]]:3 = wskernel.kernel "ln_f" kind "layer_norm" grid [1, 3] sram 568 cycles 4.300000e+01 channels {back = "row_chain_west", row = "row_chain"}(%[[E]], %{{.*}}, %{{.*}}) {{.*}} -> (!wskernel.stream<3, f32>, !wskernel.stream<3, f32>, !wskernel.stream<2, f32>)
// PE px keeps x[3px, 3px + 3) of the embedding's one block (the last PE 2
// words): the routers' filters give each PE only that window.
// CHECK-NEXT: wskernel.filter "in0" first <base = 6> count <base = 2> {when = [#wskernel.pes<x0 = 2, x1 = 2, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.filter "in0" first <base = 0, px = 3> count <base = 3> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
// One step of 4 tokens: token j's x at x + 12j bytes, its statistic at 48 + 4j.
// CHECK: wskernel.loop 1 {
// CHECK-NEXT: wskernel.loop 1 {
// CHECK-NEXT: wskernel.loop 4 {
// CHECK-NEXT: wskernel.recv "in0" to <base = 0, loop = [12]> n <base = 3> {when = [#wskernel.pes<x0 = 0, x1 = 1, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.recv "in0" to <base = 0, loop = [12]> n <base = 2> {when = [#wskernel.pes<x0 = 2, x1 = 2, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.reduce "sum" <base = 48, loop = [4]> = <base = 0, loop = [12]> n <base = 3>
// CHECK-NEXT: }
// The means of the 4 tokens: partial sums run east (PE 1 adds its own as
// they pass), the totals come back west (PE 1 keeps them as they pass).
// CHECK-NEXT: wskernel.send "row" from <base = 48> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.recv "row" to <base = 48> n <base = 4> {combine = "add", forward = "row", when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.recv "row" to <base = 48> n <base = 4> {combine = "add", when = [#wskernel.pes<x0 = 2, x1 = 2, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.send "back" from <base = 48> n <base = 4> {when = [#wskernel.pes<x0 = 2, x1 = 2, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.recv "back" to <base = 48> n <base = 4> {forward = "back", when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.recv "back" to <base = 48> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.loop 4 {
// CHECK-NEXT: wskernel.imm "mul" <base = 48, loop = [4]> = <base = 48, loop = [4]>, 1.250000e-01 n <base = 1>
// The last PE's padding word is zeroed after centring.
// CHECK-NEXT: wskernel.scalar "sub" <base = 0, loop = [12]> = <base = 0, loop = [12]>, scalar <base = 48, loop = [4]> n <base = 3>
// CHECK-NEXT: wskernel.imm "fill" <base = 8, loop = [12]> = <base = 0>, 0.000000e+00 n <base = 1> {when = [#wskernel.pes<x0 = 2, x1 = 2, y0 = 0, y1 = 0>]}
// Token j's result at 88 + 12j leaves on the async engine.
// CHECK: wskernel.send "out0" from <base = 88, loop = [12]> n <base = 3> {async, when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.send "out1" from <base = 88, loop = [12]> n <base = 3> {async, when = [#wskernel.pes<x0 = 1, x1 = 1, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.send "out2" from <base = 88, loop = [12]> n <base = 2> {async, when = [#wskernel.pes<x0 = 2, x1 = 2, y0 = 0, y1 = 0>]}
// Linear 8x12 on 1x3 PEs: kb = 8, nb = 4; the host reads its blocks where they are.
// It takes the three blocks of the layer norm (operands 0-2: x[0, 3), x[3, 6),
// x[6, 8)) straight into the multiply-adds of tile rows 0-2, 3-5 and 6-7
// (bytes 0, 48 and 96 of the tile), summed into the partial at 144.
// SRAM: weight 32, bias 4, part 4, logits 4 tokens x 4 = 56 words = 224 bytes;
// 9 instructions = 144 bytes: 368.
// cycles = max(recv 8, matvec 8*4) + bias 4 + keep 4 = 40.
// CHECK: %[[Y:.*]] = wskernel.kernel "lm_head" kind "linear" grid [1, 3] sram 368 cycles 4.000000e+01 channels {}(%[[N]]#0, %[[N]]#1, %[[N]]#2, %{{.*}}, %{{.*}}) {wafer.stage = 0 : i64, wskernel.chain_cycles = 2.000000e+00 : f64} : (!wskernel.stream<3, f32>, !wskernel.stream<3, f32>, !wskernel.stream<2, f32>, tensor<8x12xf32>, tensor<12xf32>) -> tensor<1x4x12xf32>
// CHECK-NEXT: wskernel.host_output 0 at 160 rows 4 cols 4 row_origin [4, 0] col_origin [0, 4]{{$}}
// CHECK-NEXT: wskernel.init_tile 3 at 0 rows 8 cols 4 row_origin [8, 0] col_origin [0, 4]
// CHECK-NEXT: wskernel.init_tile 4 at 128 rows 1 cols 4 col_origin [0, 4]
// CHECK: wskernel.loop 4 {
// CHECK-NEXT: wskernel.recv "in0" to <base = 144> n <base = 3> {cols = #wskernel.aff<base = 4>, combine = "vecmat", matrix = #wskernel.aff<base = 0>, when = [#wskernel.pes<x0 = 0, x1 = 2, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.recv "in1" to <base = 144> n <base = 3> {cols = #wskernel.aff<base = 4>, combine = "vecmat_add", matrix = #wskernel.aff<base = 48>, when = [#wskernel.pes<x0 = 0, x1 = 2, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.recv "in2" to <base = 144> n <base = 2> {cols = #wskernel.aff<base = 4>, combine = "vecmat_add", matrix = #wskernel.aff<base = 96>, when = [#wskernel.pes<x0 = 0, x1 = 2, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.vector "add" <base = 144> = <base = 144>, <base = 128> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 2, y0 = 0, y1 = 0>]}
// Token g = 4b + t lands at 160 + 16 g.
// CHECK-NEXT: wskernel.unary "copy" <base = 160, loop = [16, 64], py = -64> = <base = 144> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 2, y0 = 0, y1 = 0>]}
// CHECK-NOT: wskernel.kernel "output"
// CHECK: return %[[Y]]
// CHECK-NOT: wsgraph.gather
// CHECK-NOT: wsgraph.linear

// -----

// A range of data (not folded at import) has no kernel: the error names it,
// not the ops downstream of it.
func.func @unsupported(%idx: tensor<1x4xi64>, %s: tensor<i64>) -> tensor<4xi64> {
  // expected-error @+1 {{'wsgraph.range' is not supported by wsc-lower-to-kernels (no kernel implements it)}}
  %r = wsgraph.range %s, %s, %s : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %t = wsgraph.add %r, %r : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %t : tensor<4xi64>
}

// -----

func.func @too_big(%idx: tensor<1x4xi64>) -> tensor<1x4x200000xf32> {
  %wte = wsgraph.constant dense<0.5> : tensor<16x200000xf32>
  // expected-error @+1 {{kernel 'embed' needs at least 16 PEs to hold its weights, more than one wafer offers (7); use mode=weight-streaming}}
  %e = wsgraph.gather %wte, %idx : (tensor<16x200000xf32>, tensor<1x4xi64>) -> tensor<1x4x200000xf32>
  return %e : tensor<1x4x200000xf32>
}

// -----

// A result that is an input is held by its output kernel, which the host
// writes and reads.
// CHECK-LABEL: func.func @no_kernel
// CHECK: wskernel.kernel "output" kind "output" grid [1, 1] {{.*}}(%arg0) {{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: wskernel.host_input 0 at 0
// CHECK-NEXT: wskernel.host_output 0 at 0 rows 4 cols 8
func.func @no_kernel(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
