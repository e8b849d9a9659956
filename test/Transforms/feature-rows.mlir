// RUN: wsc-opt %s --wsgraph-feature-rows -split-input-file | FileCheck %s

// An MLP on a batch of feature rows [R, C] (no token ids): each linear
// takes the [1, R, K] form the linear kernel streams, the activation
// between them moves inside the reshapes, which cancel; one reshape back
// to [R, N] stays at the end.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[X3:.*]] = wsgraph.reshape %[[X]] : (tensor<4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[H:.*]] = wsgraph.linear %[[X3]], %{{.*}}, %{{.*}} : (tensor<1x4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<1x4x16xf32>
// CHECK-NEXT: %[[A:.*]] = wsgraph.relu %[[H]] : tensor<1x4x16xf32>
// CHECK-NEXT: %[[Y:.*]] = wsgraph.linear %[[A]], %{{.*}} : (tensor<1x4x16xf32>, tensor<16x2xf32>) -> tensor<1x4x2xf32>
// CHECK-NEXT: %[[R:.*]] = wsgraph.reshape %[[Y]] : (tensor<1x4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: return %[[R]]
func.func @mlp(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %w1 = wsgraph.weight "l1.weight" from "m.bin" at 0 {strides = array<i64: 1, 8>} : tensor<8x16xf32>
  %b1 = wsgraph.weight "l1.bias" from "m.bin" at 512 : tensor<16xf32>
  %w2 = wsgraph.weight "l2.weight" from "m.bin" at 576 : tensor<16x2xf32>
  %0 = wsgraph.linear %x, %w1, %b1 : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %1 = wsgraph.relu %0 : tensor<4x16xf32>
  %2 = wsgraph.linear %1, %w2 : (tensor<4x16xf32>, tensor<16x2xf32>) -> tensor<4x2xf32>
  return %2 : tensor<4x2xf32>
}

// -----

// With token ids the geometry is theirs: a 2-D linear stays as it is, and
// so do rows that are not the first 2-D float argument's.
// CHECK-LABEL: func.func @tokens
// CHECK-NOT: wsgraph.reshape
// CHECK: wsgraph.linear %{{.*}} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-LABEL: func.func @other_rows
// CHECK-NOT: wsgraph.reshape
// CHECK: wsgraph.linear %{{.*}} : (tensor<3x8xf32>, tensor<8x16xf32>) -> tensor<3x16xf32>
func.func @tokens(%ids: tensor<1x4xi64>, %x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = wsgraph.weight "w" from "m.bin" at 0 : tensor<8x16xf32>
  %0 = wsgraph.linear %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
func.func @other_rows(%x: tensor<4x8xf32>, %z: tensor<3x8xf32>) -> tensor<3x16xf32> {
  %w = wsgraph.weight "w" from "m.bin" at 0 : tensor<8x16xf32>
  %0 = wsgraph.linear %z, %w : (tensor<3x8xf32>, tensor<8x16xf32>) -> tensor<3x16xf32>
  return %0 : tensor<3x16xf32>
}
