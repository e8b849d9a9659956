// RUN: wsc-opt %s --wsgraph-fuse="remarks=true" -verify-diagnostics -split-input-file | FileCheck %s

// What fusion leaves, with why: GELU written with tanh, a Where mask, and a
// product of two computed tensors. A constant, a reshape and the linear made of
// the product by a weight get no remark.
// CHECK-LABEL: func.func @leftovers
// CHECK: wsgraph.linear
func.func @leftovers(%x: tensor<2x4xf32>, %m: tensor<2x4xi1>) -> tensor<2x2xf32> {
  %w = wsgraph.constant dense<0.5> : tensor<4x4xf32>
  %y = wsgraph.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  // expected-remark @+1 {{left unfused (a generic kernel): part of no form the fusion knows: the erf GELU, or on a [batch, tokens, C] activation the tanh GELU of a linear and the RMS norm}}
  %t = wsgraph.tanh %y : tensor<2x4xf32>
  %min = wsgraph.constant dense<-3.0e+38> : tensor<f32>
  // expected-remark @+1 {{left unfused (a generic kernel): a mask that no attention pattern absorbed}}
  %s = wsgraph.where %m, %t, %min : (tensor<2x4xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  // expected-remark @+1 {{left unfused (a generic kernel): no fusion pattern covers it}}
  %xt = wsgraph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  // expected-remark @+1 {{left unfused (a generic kernel): a product of two computed tensors, not by a weight (no linear); no attention pattern took it}}
  %p = wsgraph.matmul %s, %xt : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
  return %p : tensor<2x2xf32>
}

// -----

// Gemms left unfused say what keeps them from a linear.
// CHECK-LABEL: func.func @gemms
func.func @gemms(%x: tensor<4x8xf32>, %xt: tensor<8x4xf32>, %c: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %w = wsgraph.weight "w" from "m.bin" at 0 : tensor<8x16xf32>
  %b = wsgraph.weight "b" from "m.bin" at 1024 : tensor<16xf32>
  // expected-remark @+1 {{left unfused (a generic kernel): its A operand is transposed (transA), which no linear takes}}
  %0 = wsgraph.gemm %xt, %w, %b {trans_a = true} : (tensor<8x4xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // expected-remark @+1 {{left unfused (a generic kernel): alpha != 1 scales a weight held in a file, which wsc does not copy}}
  %2 = wsgraph.gemm %x, %w, %b {alpha = 2.0 : f32} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // expected-remark @+1 {{left unfused (a generic kernel): beta != 1 scales a bias held in a file, which wsc does not copy}}
  %3 = wsgraph.gemm %x, %w, %b {beta = 2.0 : f32} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // expected-remark @+1 {{left unfused (a generic kernel): its C operand is not a static [N] bias}}
  %4 = wsgraph.gemm %x, %w, %c : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %0, %2, %3, %4 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}
