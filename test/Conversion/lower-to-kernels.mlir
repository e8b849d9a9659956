// RUN: wsc-opt %s -split-input-file --wsc-set-arch="arch=mesh:4x4" --wsc-lower-to-kernels="utilization=0.6" -verify-diagnostics | FileCheck %s

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
// SRAM per PE = data + 16 bytes per instruction of the body (LOOP and END count).
// Embedding on one PE: idx 4 + table 16*8 + part 8 + gather 8 words = 148 words = 592 bytes;
// 6 instructions = 96 bytes: 688. cycles = lookup 8 + epilogue 8 + send 8 = 24.
// CHECK: %[[E:.*]] = wskernel.kernel "embed" kind "embed" grid [1, 1] sram 688 cycles 2.400000e+01 channels {}(%arg0, %{{.*}}) {wafer.stage = 0 : i64} : (tensor<1x4xi64>
// CHECK: wskernel.host_input 0 at 0
// CHECK: wskernel.init_tile 1 at 16 rows 16 cols 8 row_origin [16, 0] col_origin [0, 8]
// Layer norm of C=8 on 1x4 PEs, cb = 2: x 8 (centred in place; the variance is x . x),
// mean 1, var 1, gamma 2, beta 2, part 2, gather 2 = 18 words = 72 bytes;
// 22 instructions = 352 bytes: 424.
// cycles (the last PE) = recv 8 + 4 vector(8) + rsqrt 8 + 3 vector(2) + gather
// (receive 6, copy 2, send 8) = 70.
// CHECK: %[[N:.*]] = wskernel.kernel "ln_f" kind "layer_norm" grid [1, 4] sram 424 cycles 7.000000e+01 channels {row = "row_chain"}(%[[E]]
// The last row streams its blocks east one at a time: in step i, PEs east of i
// (px - i - 1 >= 0) pass block i on, PE i (px - i >= 0 and i - px >= 0) sends its own,
// and the last PE sends each block out as it arrives, then its own.
// CHECK: wskernel.loop 3 {
// CHECK-NEXT: wskernel.recv "row" to <base = 64> n <base = 2> {guard = [#wskernel.aff<base = -1, loop = [-1], px = 1>], when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.send "row" from <base = 64> n <base = 2> {guard = [#wskernel.aff<base = -1, loop = [-1], px = 1>], when = [#wskernel.pes<x0 = 0, x1 = 2, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.send "out0" from <base = 64> n <base = 2> {when = [#wskernel.pes<x0 = 3, x1 = 3, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.send "row" from <base = 56> n <base = 2> {guard = [#wskernel.aff<base = 0, loop = [-1], px = 1>, #wskernel.aff<base = 0, loop = [1], px = -1>], when = [#wskernel.pes<x0 = 0, x1 = 2, y0 = 0, y1 = 0>]}
// CHECK-NEXT: }
// CHECK-NEXT: wskernel.send "out0" from <base = 56> n <base = 2> {when = [#wskernel.pes<x0 = 3, x1 = 3, y0 = 0, y1 = 0>]}
// Linear 8x12 gets 8 of the 9.6-PE budget: h = round(sqrt(8 * 8/12)) = 2, w = 4; kb = 4, nb = 3.
// Its result goes to the host, each row keeping the blocks of 2 of the 4 tokens
// (g in [2py, 2py + 2)): the last row keeps or sends north ("up") each token's
// finished block, row 0 keeps what arrives.
// SRAM: x slice 4, weight 12, bias 3, part 3, logits 2 x 3, relay 3 = 31 words
// = 124 bytes; 18 instructions = 288 bytes: 412.
// cycles (a last-row PE) = recv 8 + matvec 4*3 + relay (recv 3 + send 3 + hop 1) + bias 3
// + relay north (3 + 3 + 1) = 37.
// CHECK: %[[Y:.*]] = wskernel.kernel "lm_head" kind "linear" grid [2, 4] sram 412 cycles 3.700000e+01 channels {col = "col_chain", row = "row_chain", up = "col_chain_north"}(%[[N]], %{{.*}}, %{{.*}}) {wafer.stage = 0 : i64} : (!wskernel.stream<8, f32>, tensor<8x12xf32>, tensor<12xf32>) -> tensor<1x4x12xf32>
// CHECK-NEXT: wskernel.host_output 0 at 88 rows 2 cols 3 row_origin [2, 0] col_origin [0, 3]{{$}}
// CHECK-NEXT: wskernel.init_tile 1 at 16 rows 4 cols 3 row_origin [4, 0] col_origin [0, 3]
// CHECK: wskernel.loop 1 {
// CHECK-NEXT: wskernel.loop 4 {
// Row py keeps x[4py, 4py + 4) of the input and discards the rest.
// CHECK-NEXT: wskernel.recv "in0" to <base = 0> n <base = 0, py = 4> {combine = "discard", when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.recv "in0" to <base = 0> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.recv "in0" to <base = 0> n <base = 4, py = -4> {combine = "discard", when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.recv "in0" to <base = 0> n <base = 4> {combine = "discard", when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.recv "in0" to <base = 0> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.matvec <base = 76> = <base = 16> x <base = 0> rows <base = 4> cols <base = 3> {transposed = true}
// CHECK-NEXT: wskernel.recv "col" to <base = 76> n <base = 3> {combine = "add", when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.send "col" from <base = 76> n <base = 3> {when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.vector "add" <base = 76> = <base = 76>, <base = 64> n <base = 3> {when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
// Token g = 4b + t lands at 88 + 12 (g - 2py) on row py when 0 <= g - 2py <= 1.
// CHECK-NEXT: wskernel.unary "copy" <base = 88, loop = [12, 48], py = -24> = <base = 76> n <base = 3> {guard = [#wskernel.aff<base = 0, loop = [1, 4], py = -2>, #wskernel.aff<base = 1, loop = [-1, -4], py = 2>], when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.send "up" from <base = 76> n <base = 3> {guard = [#wskernel.aff<base = -1, loop = [-1, -4], py = 2>], when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.recv "up" to <base = 88, loop = [12, 48], py = -24> n <base = 3> {guard = [#wskernel.aff<base = 0, loop = [1, 4], py = -2>, #wskernel.aff<base = 1, loop = [-1, -4], py = 2>], when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 0, y1 = 0>]}
// CHECK-NOT: wskernel.kernel "output"
// CHECK: return %[[Y]]
// CHECK-NOT: wsgraph.gather
// CHECK-NOT: wsgraph.linear

// -----

func.func @unsupported(%idx: tensor<1x4xi64>) -> tensor<1x4x8xf32> {
  %wte = wsgraph.constant dense<0.5> : tensor<16x8xf32>
  %e = wsgraph.gather %wte, %idx : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
  // expected-error @+1 {{'wsgraph.tanh' is not supported by wsc-lower-to-kernels (no kernel implements it)}}
  %t = wsgraph.tanh %e : tensor<1x4x8xf32>
  return %t : tensor<1x4x8xf32>
}

// -----

func.func @too_big(%idx: tensor<1x4xi64>) -> tensor<1x4x200000xf32> {
  %wte = wsgraph.constant dense<0.5> : tensor<16x8xf32>
  %w = wsgraph.weight "w" elided : tensor<8x200000xf32>
  %e = wsgraph.gather %wte, %idx : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
  // expected-error @+1 {{kernel 'lm_head' needs at least 16 PEs to hold its weights, more than one wafer offers (9); use mode=weight-streaming}}
  %y = wsgraph.linear %e, %w : (tensor<1x4x8xf32>, tensor<8x200000xf32>) -> tensor<1x4x200000xf32>
  return %y : tensor<1x4x200000xf32>
}

// -----

// expected-error @+1 {{expects a [batch, tokens] integer input of static shape}}
func.func @no_tokens(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
