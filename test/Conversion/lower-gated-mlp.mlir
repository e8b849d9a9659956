// RUN: wsc-opt %s -split-input-file --wsc-set-arch="arch=mesh:8x8" --wsc-lower-to-kernels="utilization=0.6" | FileCheck %s
// RUN: wsc-opt %s -split-input-file --wsc-set-arch="arch=mesh:8x8" --wsc-lower-to-kernels="utilization=0.6" | wsc-opt -split-input-file --wsc-set-arch="arch=mesh:16x2" --wsc-place | FileCheck %s --check-prefix=PLACED

// The gated MLP, act(x Wg + bg) * (x Wu + bu), is one linear_glu kernel:
// each column holds a tile of both weights for the same output columns,
// both partial sums run down the columns in one message, and the finishing
// row gates them. Figures worked out by hand (mesh: 1 FMAC, 1-wide SIMD,
// 1-cycle hops, 8 cycles per transcendental).

// SwiGLU, K = 8 -> N = 16, written sigmoid(g) * g and up * that: on 3 x 8
// PEs, 2 tile rows (kb = 4) and a finishing row, nb = 2. A tile row stores
// its 4 words of x and multiplies them by both tiles, 4 + 2 * 4*2 = 20,
// while its async engine passes the previous token's two sums on (4 words
// + 1 hop). The finishing row receives both sums 4, sigmoid 2*8, g times it
// 2 and times the up sum 2, sends its block 2: 26. SRAM: x 4 + two tiles 16
// + the pair of sums for each token parity 8 + the sigmoid's 2 = 30 words =
// 120 bytes, plus 11 instructions: 296. One token alone (chain_cycles)
// waits for x along the 8 columns 7, the sums down a relay 2 and a block
// of 4 words out, then what the pipeline overlaps: its rows' 20 and their
// sums 5, then the finishing work 20 (sigmoid 16, two products 4), beyond
// the 26: 13 + 19 = 32. The down projection is a plain linear (its
// residual add absorbed); no generic kernel is left.
// CHECK-LABEL: func.func @swiglu
// CHECK: %[[GLU:.*]]:8 = wskernel.kernel "l0.mlp_glu" kind "linear_glu" grid [3, 8] sram 296 cycles 2.600000e+01 channels {col = "col_chain"}(%{{.*}}, %1, %2) {wafer.stage = 0 : i64, wskernel.chain_cycles = 3.200000e+01 : f64, wskernel.gate_activation = "silu"}
// CHECK-NEXT: wskernel.filter "in0" first <base = 0, py = 4> count <base = 4>
// CHECK-NEXT: wskernel.init_tile 1 at 16 rows 4 cols 2 row_origin [4, 0] col_origin [0, 2]
// CHECK-NEXT: wskernel.init_tile 2 at 48 rows 4 cols 2 row_origin [4, 0] col_origin [0, 2]
// Token t's gate sum at 80 + 16 (t mod 2), its up sum right after it.
// CHECK: wskernel.recv "in0" to <base = 0> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 0, y1 = 1>]}
// CHECK-NEXT: wskernel.matvec <base = 80, loop = [16]> = <base = 16> x <base = 0> rows <base = 4> cols <base = 2> {transposed = true, when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 0, y1 = 1>]}
// CHECK-NEXT: wskernel.matvec <base = 88, loop = [16]> = <base = 48> x <base = 0> rows <base = 4> cols <base = 2> {transposed = true, when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 0, y1 = 1>]}
// CHECK-NEXT: wskernel.send "col" from <base = 80, loop = [16]> n <base = 4> {async, when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.recv "col" to <base = 80, loop = [16]> n <base = 4> {async, combine = "add", forward = "col", when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 1, y1 = 1>]}
// CHECK-NEXT: wskernel.recv "col" to <base = 80> n <base = 4> {when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 2, y1 = 2>]}
// CHECK-NEXT: wskernel.unary "sigmoid" <base = 112> = <base = 80> n <base = 2> {when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 2, y1 = 2>]}
// CHECK-NEXT: wskernel.vector "mul" <base = 80> = <base = 80>, <base = 112> n <base = 2> {when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 2, y1 = 2>]}
// CHECK-NEXT: wskernel.vector "mul" <base = 80> = <base = 80>, <base = 88> n <base = 2> {when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 2, y1 = 2>]}
// CHECK-NEXT: wskernel.send "out0" from <base = 80> n <base = 2> {when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 2, y1 = 2>]}
// CHECK: wskernel.kernel "l0.mlp_proj" kind "linear" {{.*}}(%[[GLU]]#0, {{.*}}%[[GLU]]#7,
// CHECK-NOT: kind "generic"
// CHECK-NOT: wsgraph.sigmoid
// CHECK-NOT: wsgraph.mul

// Placed on a wafer of 2 rows, the kernel keeps its 8 columns (its result
// blocks) on 2 rows: no finishing row, so each row holds tiles (kb = 4) and
// the last adds its own sums to those from above. Cycles: x 4 + both
// products 16 + the sums passed on 4 + 1 + gating 16 + 2 + 2 + the block 2
// = 47; SRAM: x 4 + tiles 16 + one pair of sums 4 + 2 = 26 words = 104
// bytes, plus 12 instructions: 296.
// PLACED-LABEL: func.func @swiglu
// PLACED: wskernel.kernel "l0.mlp_glu" kind "linear_glu" grid [2, 8] sram 296 cycles 4.700000e+01 {{.*}}wskernel.gate_activation = "silu"
// PLACED: wskernel.recv "col" to <base = 80> n <base = 4> {combine = "add", when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 1, y1 = 1>]}
// PLACED-NEXT: wskernel.unary "sigmoid" <base = 96> = <base = 80> n <base = 2> {when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 1, y1 = 1>]}
func.func @swiglu(%idx: tensor<1x4xi64>) -> tensor<1x4x8xf32> {
  %wte = wsgraph.constant dense<0.5> : tensor<16x8xf32>
  %wg = wsgraph.constant dense<0.25> : tensor<8x16xf32>
  %wu = wsgraph.constant dense<0.125> : tensor<8x16xf32>
  %wd = wsgraph.constant dense<0.0625> : tensor<16x8xf32>
  %e = wsgraph.gather %wte, %idx : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
  %g = wsgraph.linear %e, %wg : (tensor<1x4x8xf32>, tensor<8x16xf32>) -> tensor<1x4x16xf32>
  %u = wsgraph.linear %e, %wu : (tensor<1x4x8xf32>, tensor<8x16xf32>) -> tensor<1x4x16xf32>
  %s = wsgraph.sigmoid %g : tensor<1x4x16xf32>
  %a = wsgraph.mul %s, %g : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %m = wsgraph.mul %u, %a : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %d = wsgraph.linear %m, %wd : (tensor<1x4x16xf32>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  %y = wsgraph.add %e, %d : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

// GeGLU (the tanh GELU) with biases, K = 8 -> N = 32, the up projection
// first in the program: its operands still come gate first (weight, bias),
// then up. On 3 x 8 PEs (kb = 4, nb = 4): a tile row 4 + 2 * 4*4 = 36; the
// finishing row takes the sums 8, both biases 4 + 4, GELU 4*8, times the up
// sum 4 and sends 4: 56. SRAM: x 4 + tiles 32 + biases 8 + two pairs of sums
// 16 = 60 words = 240 bytes, plus 12 instructions: 432.
// CHECK-LABEL: func.func @geglu
// CHECK: wskernel.kernel "l0.mlp_glu" kind "linear_glu" grid [3, 8] sram 432 cycles 5.600000e+01 channels {col = "col_chain"}(%{{.*}}, %3, %4, %1, %2) {wafer.stage = 0 : i64, wskernel.chain_cycles = 4.800000e+01 : f64, wskernel.gate_activation = "gelu_tanh"}
// CHECK: wskernel.init_tile 1 at 16 rows 4 cols 4 row_origin [4, 0] col_origin [0, 4]
// CHECK-NEXT: wskernel.init_tile 2 at 144 rows 1 cols 4 col_origin [0, 4]
// CHECK-NEXT: wskernel.init_tile 3 at 80 rows 4 cols 4 row_origin [4, 0] col_origin [0, 4]
// CHECK-NEXT: wskernel.init_tile 4 at 160 rows 1 cols 4 col_origin [0, 4]
// CHECK: wskernel.recv "col" to <base = 176> n <base = 8> {when = [#wskernel.pes<x0 = 0, x1 = 7, y0 = 2, y1 = 2>]}
// CHECK-NEXT: wskernel.vector "add" <base = 176> = <base = 176>, <base = 144> n <base = 4>
// CHECK-NEXT: wskernel.vector "add" <base = 192> = <base = 192>, <base = 160> n <base = 4>
// CHECK-NEXT: wskernel.unary "gelu_tanh" <base = 176> = <base = 176> n <base = 4>
// CHECK-NEXT: wskernel.vector "mul" <base = 176> = <base = 176>, <base = 192> n <base = 4>
// CHECK: wskernel.kernel "lm_head" kind "linear"
// CHECK-NOT: kind "generic"

// Placed, it takes 2 rows and keeps the tanh form: tiles 4 + 32, the sums
// 8 + 1, gating 4 + 4 + 32 + 4, the block 4 = 93.
// PLACED-LABEL: func.func @geglu
// PLACED: wskernel.kernel "l0.mlp_glu" kind "linear_glu" grid [2, 8] sram 416 cycles 9.300000e+01 {{.*}}wskernel.gate_activation = "gelu_tanh"
// PLACED: wskernel.unary "gelu_tanh"
func.func @geglu(%idx: tensor<1x4xi64>) -> tensor<1x4x8xf32> {
  %wte = wsgraph.constant dense<0.5> : tensor<16x8xf32>
  %wu = wsgraph.constant dense<0.125> : tensor<8x32xf32>
  %bu = wsgraph.constant dense<0.2> : tensor<32xf32>
  %wg = wsgraph.constant dense<0.25> : tensor<8x32xf32>
  %bg = wsgraph.constant dense<0.1> : tensor<32xf32>
  %wd = wsgraph.constant dense<0.0625> : tensor<32x8xf32>
  %e = wsgraph.gather %wte, %idx : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
  %u = wsgraph.linear %e, %wu, %bu : (tensor<1x4x8xf32>, tensor<8x32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %g = wsgraph.linear %e, %wg, %bg : (tensor<1x4x8xf32>, tensor<8x32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %a = wsgraph.gelu %g {approximate = "tanh"} : tensor<1x4x32xf32>
  %m = wsgraph.mul %a, %u : (tensor<1x4x32xf32>, tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
  %y = wsgraph.linear %m, %wd : (tensor<1x4x32xf32>, tensor<32x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

// sigmoid(g) * u is no SiLU gate (SiLU is g * sigmoid(g)): the projections
// are linears, and the sigmoid and the product generic kernels.
// CHECK-LABEL: func.func @sigmoid_gate
// CHECK-NOT: linear_glu
// CHECK: kind "linear"
// CHECK: kind "linear"
// CHECK: wskernel.kernel "sigmoid" kind "generic"
// CHECK: wskernel.kernel "mul" kind "generic"
// CHECK-NOT: linear_glu
func.func @sigmoid_gate(%idx: tensor<1x4xi64>) -> tensor<1x4x8xf32> {
  %wte = wsgraph.constant dense<0.5> : tensor<16x8xf32>
  %wg = wsgraph.constant dense<0.25> : tensor<8x16xf32>
  %wu = wsgraph.constant dense<0.125> : tensor<8x16xf32>
  %wd = wsgraph.constant dense<0.0625> : tensor<16x8xf32>
  %e = wsgraph.gather %wte, %idx : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
  %g = wsgraph.linear %e, %wg : (tensor<1x4x8xf32>, tensor<8x16xf32>) -> tensor<1x4x16xf32>
  %u = wsgraph.linear %e, %wu : (tensor<1x4x8xf32>, tensor<8x16xf32>) -> tensor<1x4x16xf32>
  %s = wsgraph.sigmoid %g : tensor<1x4x16xf32>
  %m = wsgraph.mul %s, %u : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %y = wsgraph.linear %m, %wd : (tensor<1x4x16xf32>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}
