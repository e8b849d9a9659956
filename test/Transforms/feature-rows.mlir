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

// -----

// OPT's MLP on hidden.reshape(-1, C): the layer norm (axis 1 of the rows,
// the last of the tokens), both linears, the ReLU and the residual add run
// on the [B, T, C] tokens; the flattening moves to the end and cancels
// against the view back.
// CHECK-LABEL: func.func @flattened_tokens
// CHECK-SAME: (%[[H:.*]]: tensor<2x4x8xf32>)
// CHECK: %[[N:.*]] = wsgraph.layer_norm %[[H]], %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>
// CHECK-NEXT: %[[U:.*]] = wsgraph.linear %[[N]], {{.*}} -> tensor<2x4x16xf32>
// CHECK-NEXT: %[[A:.*]] = wsgraph.relu %[[U]] : tensor<2x4x16xf32>
// CHECK-NEXT: %[[D:.*]] = wsgraph.linear %[[A]], {{.*}} -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[S:.*]] = wsgraph.add %[[H]], %[[D]] : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[S]]
func.func @flattened_tokens(%h: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %g = wsgraph.weight "ln.weight" from "m.bin" at 0 : tensor<8xf32>
  %b = wsgraph.weight "ln.bias" from "m.bin" at 32 : tensor<8xf32>
  %w1 = wsgraph.weight "fc1.weight" from "m.bin" at 64 : tensor<8x16xf32>
  %w2 = wsgraph.weight "fc2.weight" from "m.bin" at 576 : tensor<16x8xf32>
  %rows = wsgraph.reshape %h : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %n = wsgraph.layer_norm %rows, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  %u = wsgraph.linear %n, %w1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a = wsgraph.relu %u : tensor<8x16xf32>
  %d = wsgraph.linear %a, %w2 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %s = wsgraph.add %rows, %d : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = wsgraph.reshape %s : (tensor<8x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// A reshape that does not keep the last dimension is no flattening of
// tokens: the linear stays on it; an add of reshapes of different shapes
// stays too.
// CHECK-LABEL: func.func @not_rows
// CHECK: wsgraph.linear %{{.*}} : (tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<16x4xf32>
// CHECK: wsgraph.add %{{.*}}, %{{.*}} : (tensor<16x4xf32>, tensor<16x4xf32>)
func.func @not_rows(%h: tensor<2x4x8xf32>, %z: tensor<4x4x4xf32>) -> tensor<16x4xf32> {
  %w = wsgraph.weight "w" from "m.bin" at 0 : tensor<4x4xf32>
  %r = wsgraph.reshape %h : (tensor<2x4x8xf32>) -> tensor<16x4xf32>
  %y = wsgraph.linear %r, %w : (tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<16x4xf32>
  %q = wsgraph.reshape %z : (tensor<4x4x4xf32>) -> tensor<16x4xf32>
  %s = wsgraph.add %y, %q : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  return %s : tensor<16x4xf32>
}
