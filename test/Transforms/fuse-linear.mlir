// RUN: wsc-opt %s --wsgraph-fuse -split-input-file -verify-diagnostics | FileCheck %s

// matmul by a 2-D weight, plus a bias, into wsgraph.linear.

// CHECK-LABEL: func.func @matmul_by_weight
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x32xf32>)
// CHECK-NEXT: %[[W:.*]] = wsgraph.weight "c_fc.weight" from "m.bin" at 0 : tensor<32x128xf32>
// CHECK-NEXT: %[[Y:.*]] = wsgraph.linear %[[X]], %[[W]] : (tensor<1x8x32xf32>, tensor<32x128xf32>) -> tensor<1x8x128xf32>
// CHECK-NEXT: return %[[Y]]
func.func @matmul_by_weight(%x: tensor<1x8x32xf32>) -> tensor<1x8x128xf32> {
  %w = wsgraph.weight "c_fc.weight" from "m.bin" at 0 : tensor<32x128xf32>
  %0 = wsgraph.matmul %x, %w : (tensor<1x8x32xf32>, tensor<32x128xf32>) -> tensor<1x8x128xf32>
  return %0 : tensor<1x8x128xf32>
}

// -----

// CHECK-LABEL: func.func @bias_after
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x32xf32>)
// CHECK-DAG: %[[W:.*]] = wsgraph.weight "c_fc.weight"
// CHECK-DAG: %[[B:.*]] = wsgraph.weight "c_fc.bias"
// CHECK: %[[Y:.*]] = wsgraph.linear %[[X]], %[[W]], %[[B]] : (tensor<1x8x32xf32>, tensor<32x128xf32>, tensor<128xf32>) -> tensor<1x8x128xf32>
// CHECK-NEXT: return %[[Y]]
func.func @bias_after(%x: tensor<1x8x32xf32>) -> tensor<1x8x128xf32> {
  %w = wsgraph.weight "c_fc.weight" from "m.bin" at 0 : tensor<32x128xf32>
  %b = wsgraph.weight "c_fc.bias" from "m.bin" at 16384 : tensor<128xf32>
  %0 = wsgraph.matmul %x, %w : (tensor<1x8x32xf32>, tensor<32x128xf32>) -> tensor<1x8x128xf32>
  %1 = wsgraph.add %0, %b : (tensor<1x8x128xf32>, tensor<128xf32>) -> tensor<1x8x128xf32>
  return %1 : tensor<1x8x128xf32>
}

// -----

// The bias first (torch exports Add(bias, MatMul) for Conv1D), and a
// constant weight and bias.
// CHECK-LABEL: func.func @bias_before
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32>)
// CHECK-DAG: %[[W:.*]] = wsgraph.constant dense<1.000000e+00> : tensor<4x2xf32>
// CHECK-DAG: %[[B:.*]] = wsgraph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: %[[Y:.*]] = wsgraph.linear %[[X]], %[[W]], %[[B]] : (tensor<8x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<8x2xf32>
// CHECK-NEXT: return %[[Y]]
func.func @bias_before(%x: tensor<8x4xf32>) -> tensor<8x2xf32> {
  %w = wsgraph.constant dense<1.0> : tensor<4x2xf32>
  %b = wsgraph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = wsgraph.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %1 = wsgraph.add %b, %0 : (tensor<2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  return %1 : tensor<8x2xf32>
}

// -----

// A right operand known only at run time (attention's q @ kT, say) stays a
// matmul, and so does a 3-D weight.
// CHECK-LABEL: func.func @not_a_weight
// CHECK-NOT: wsgraph.linear
// CHECK: wsgraph.matmul
// CHECK: wsgraph.matmul
// CHECK-NOT: wsgraph.linear
// CHECK: return
func.func @not_a_weight(%x: tensor<2x8x32xf32>, %y: tensor<32x16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %w = wsgraph.weight "w3" from "m.bin" at 0 : tensor<2x32x16xf32>
  %0 = wsgraph.matmul %x, %y : (tensor<2x8x32xf32>, tensor<32x16xf32>) -> tensor<2x8x16xf32>
  %1 = wsgraph.matmul %x, %w : (tensor<2x8x32xf32>, tensor<2x32x16xf32>) -> tensor<2x8x16xf32>
  return %0, %1 : tensor<2x8x16xf32>, tensor<2x8x16xf32>
}

// -----

// Biases that are not a static [N] vector stay an add: one known only at run
// time, one of shape [1, N], one that broadcasts over the rows.
// CHECK-LABEL: func.func @not_a_bias
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32>, %[[D:.*]]: tensor<2xf32>)
// CHECK-DAG: %[[W:.*]] = wsgraph.weight "w"
// CHECK-DAG: %[[B2:.*]] = wsgraph.weight "b2"
// CHECK-DAG: %[[BC:.*]] = wsgraph.weight "bc"
// CHECK-DAG: %[[L0:.*]] = wsgraph.linear %[[X]], %[[W]] : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
// CHECK-DAG: %[[A0:.*]] = wsgraph.add %[[L0]], %[[D]]
// CHECK-DAG: %[[L1:.*]] = wsgraph.linear %[[X]], %[[W]] : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
// CHECK-DAG: %[[A1:.*]] = wsgraph.add %[[L1]], %[[B2]]
// CHECK-DAG: %[[L2:.*]] = wsgraph.linear %[[X]], %[[W]] : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
// CHECK-DAG: %[[A2:.*]] = wsgraph.add %[[L2]], %[[BC]]
// CHECK: return %[[A0]], %[[A1]], %[[A2]]
func.func @not_a_bias(%x: tensor<8x4xf32>, %d: tensor<2xf32>) -> (tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>) {
  %w = wsgraph.weight "w" from "m.bin" at 0 : tensor<4x2xf32>
  %b2 = wsgraph.weight "b2" from "m.bin" at 32 : tensor<1x2xf32>
  %bc = wsgraph.weight "bc" from "m.bin" at 40 : tensor<8x1xf32>
  %0 = wsgraph.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %1 = wsgraph.add %0, %d : (tensor<8x2xf32>, tensor<2xf32>) -> tensor<8x2xf32>
  %2 = wsgraph.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %3 = wsgraph.add %2, %b2 : (tensor<8x2xf32>, tensor<1x2xf32>) -> tensor<8x2xf32>
  %4 = wsgraph.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %5 = wsgraph.add %4, %bc : (tensor<8x2xf32>, tensor<8x1xf32>) -> tensor<8x2xf32>
  return %1, %3, %5 : tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>
}

// -----

// A product used elsewhere too keeps its own linear; the bias stays an add.
// CHECK-LABEL: func.func @product_used_twice
// CHECK: %[[L:.*]] = wsgraph.linear %{{.*}}, %{{.*}} : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
// CHECK-NEXT: %[[A:.*]] = wsgraph.add %[[L]], %{{.*}}
// CHECK-NEXT: return %[[A]], %[[L]]
func.func @product_used_twice(%x: tensor<8x4xf32>) -> (tensor<8x2xf32>, tensor<8x2xf32>) {
  %w = wsgraph.weight "w" from "m.bin" at 0 : tensor<4x2xf32>
  %b = wsgraph.weight "b" from "m.bin" at 32 : tensor<2xf32>
  %0 = wsgraph.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %1 = wsgraph.add %0, %b : (tensor<8x2xf32>, tensor<2xf32>) -> tensor<8x2xf32>
  return %1, %0 : tensor<8x2xf32>, tensor<8x2xf32>
}
