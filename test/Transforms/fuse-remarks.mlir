// RUN: wsc-opt %s --wsgraph-fuse="remarks=true" -verify-diagnostics -split-input-file | FileCheck %s

// What fusion leaves, with why: GELU written with tanh, a Where mask, and a
// product of two computed tensors. A constant, a reshape and the linear made of
// the product by a weight get no remark.
// CHECK-LABEL: func.func @leftovers
// CHECK: wsgraph.linear
func.func @leftovers(%x: tensor<2x4xf32>, %m: tensor<2x4xi1>) -> tensor<2x2xf32> {
  %w = wsgraph.constant dense<0.5> : tensor<4x4xf32>
  %y = wsgraph.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  // expected-remark @+1 {{left unfused (a generic kernel): part of no GELU form that the fusion knows (the exact erf form)}}
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
