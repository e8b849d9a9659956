// RUN: wsc-opt %s --wsgraph-fuse -split-input-file -verify-diagnostics | FileCheck %s

// Layer norm as torch.onnx.export decomposes it:
//   (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * gamma + beta

// CHECK-LABEL: func.func @gamma_beta
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x32xf32>)
// CHECK-DAG: %[[G:.*]] = wsgraph.weight "ln.weight"
// CHECK-DAG: %[[B:.*]] = wsgraph.weight "ln.bias"
// CHECK: %[[Y:.*]] = wsgraph.layer_norm %[[X]], %[[G]], %[[B]] : (tensor<1x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gamma_beta(%x: tensor<1x8x32xf32>) -> tensor<1x8x32xf32> {
  %g = wsgraph.weight "ln.weight" from "m.bin" at 0 : tensor<32xf32>
  %b = wsgraph.weight "ln.bias" from "m.bin" at 128 : tensor<32xf32>
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-05> : tensor<f32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %c = wsgraph.sub %x, %mean : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %sq = wsgraph.pow %c, %two : (tensor<1x8x32xf32>, tensor<f32>) -> tensor<1x8x32xf32>
  %var = wsgraph.reduce_mean %sq {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %ve = wsgraph.add %var, %eps : (tensor<1x8x1xf32>, tensor<f32>) -> tensor<1x8x1xf32>
  %sd = wsgraph.sqrt %ve : tensor<1x8x1xf32>
  %n = wsgraph.div %c, %sd : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %s = wsgraph.mul %n, %g : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  %y = wsgraph.add %s, %b : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  return %y : tensor<1x8x32xf32>
}

// -----

// Operands in the other order, an integer exponent, another epsilon, and the
// axis written as a positive number.
// CHECK-LABEL: func.func @swapped_operands
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x16xf32>)
// CHECK-DAG: %[[G:.*]] = wsgraph.constant dense<2.000000e+00> : tensor<16xf32>
// CHECK-DAG: %[[B:.*]] = wsgraph.constant dense<5.000000e-01> : tensor<16xf32>
// CHECK: %[[Y:.*]] = wsgraph.layer_norm %[[X]], %[[G]], %[[B]] {epsilon = 9.99999997E-7 : f32} : (tensor<2x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @swapped_operands(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %g = wsgraph.constant dense<2.0> : tensor<16xf32>
  %b = wsgraph.constant dense<0.5> : tensor<16xf32>
  %two = wsgraph.constant dense<2> : tensor<i64>
  %eps = wsgraph.constant dense<1.0e-06> : tensor<1xf32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: 2>} : (tensor<2x4x16xf32>) -> tensor<2x4x1xf32>
  %c = wsgraph.sub %x, %mean : (tensor<2x4x16xf32>, tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
  %sq = wsgraph.pow %c, %two : (tensor<2x4x16xf32>, tensor<i64>) -> tensor<2x4x16xf32>
  %var = wsgraph.reduce_mean %sq {axes = array<i64: 2>} : (tensor<2x4x16xf32>) -> tensor<2x4x1xf32>
  %ve = wsgraph.add %eps, %var : (tensor<1xf32>, tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %sd = wsgraph.sqrt %ve : tensor<2x4x1xf32>
  %n = wsgraph.div %c, %sd : (tensor<2x4x16xf32>, tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
  %s = wsgraph.mul %g, %n : (tensor<16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %y = wsgraph.add %b, %s : (tensor<16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}

// -----

// Without gamma and beta the scale is a constant of ones.
// CHECK-LABEL: func.func @no_gamma_no_beta
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x32xf32>)
// CHECK: %[[ONES:.*]] = wsgraph.constant dense<1.000000e+00> : tensor<32xf32>
// CHECK-NEXT: %[[Y:.*]] = wsgraph.layer_norm %[[X]], %[[ONES]] : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
// CHECK-NEXT: return %[[Y]]
func.func @no_gamma_no_beta(%x: tensor<1x8x32xf32>) -> tensor<1x8x32xf32> {
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-05> : tensor<f32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %c = wsgraph.sub %x, %mean : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %sq = wsgraph.pow %c, %two : (tensor<1x8x32xf32>, tensor<f32>) -> tensor<1x8x32xf32>
  %var = wsgraph.reduce_mean %sq {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %ve = wsgraph.add %var, %eps : (tensor<1x8x1xf32>, tensor<f32>) -> tensor<1x8x1xf32>
  %sd = wsgraph.sqrt %ve : tensor<1x8x1xf32>
  %n = wsgraph.div %c, %sd : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  return %n : tensor<1x8x32xf32>
}

// -----

// CHECK-LABEL: func.func @gamma_no_beta
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x32xf32>)
// CHECK: %[[G:.*]] = wsgraph.weight "ln.weight"
// CHECK: %[[Y:.*]] = wsgraph.layer_norm %[[X]], %[[G]] : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gamma_no_beta(%x: tensor<1x8x32xf32>) -> tensor<1x8x32xf32> {
  %g = wsgraph.weight "ln.weight" from "m.bin" at 0 : tensor<32xf32>
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-05> : tensor<f32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %c = wsgraph.sub %x, %mean : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %sq = wsgraph.pow %c, %two : (tensor<1x8x32xf32>, tensor<f32>) -> tensor<1x8x32xf32>
  %var = wsgraph.reduce_mean %sq {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %ve = wsgraph.add %var, %eps : (tensor<1x8x1xf32>, tensor<f32>) -> tensor<1x8x1xf32>
  %sd = wsgraph.sqrt %ve : tensor<1x8x1xf32>
  %n = wsgraph.div %c, %sd : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %s = wsgraph.mul %n, %g : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  return %s : tensor<1x8x32xf32>
}

// -----

// A beta without gamma keeps the ones scale.
// CHECK-LABEL: func.func @beta_no_gamma
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x32xf32>)
// CHECK-DAG: %[[B:.*]] = wsgraph.weight "ln.bias"
// CHECK-DAG: %[[ONES:.*]] = wsgraph.constant dense<1.000000e+00> : tensor<32xf32>
// CHECK: %[[Y:.*]] = wsgraph.layer_norm %[[X]], %[[ONES]], %[[B]] : (tensor<1x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
// CHECK-NEXT: return %[[Y]]
func.func @beta_no_gamma(%x: tensor<1x8x32xf32>) -> tensor<1x8x32xf32> {
  %b = wsgraph.weight "ln.bias" from "m.bin" at 128 : tensor<32xf32>
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-05> : tensor<f32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %c = wsgraph.sub %x, %mean : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %sq = wsgraph.pow %c, %two : (tensor<1x8x32xf32>, tensor<f32>) -> tensor<1x8x32xf32>
  %var = wsgraph.reduce_mean %sq {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %ve = wsgraph.add %var, %eps : (tensor<1x8x1xf32>, tensor<f32>) -> tensor<1x8x1xf32>
  %sd = wsgraph.sqrt %ve : tensor<1x8x1xf32>
  %n = wsgraph.div %c, %sd : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %y = wsgraph.add %n, %b : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  return %y : tensor<1x8x32xf32>
}

// -----

// Normalizing over the two trailing dimensions gives axis -2.
// CHECK-LABEL: func.func @two_trailing_axes
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>)
// CHECK-DAG: %[[G:.*]] = wsgraph.weight "g" from "m.bin" at 0 : tensor<8x32xf32>
// CHECK: %[[Y:.*]] = wsgraph.layer_norm %[[X]], %[[G]] {axis = -2 : i64} : (tensor<2x8x32xf32>, tensor<8x32xf32>) -> tensor<2x8x32xf32>
// CHECK-NEXT: return %[[Y]]
func.func @two_trailing_axes(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %g = wsgraph.weight "g" from "m.bin" at 0 : tensor<8x32xf32>
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-05> : tensor<f32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: 2, 1>} : (tensor<2x8x32xf32>) -> tensor<2x1x1xf32>
  %c = wsgraph.sub %x, %mean : (tensor<2x8x32xf32>, tensor<2x1x1xf32>) -> tensor<2x8x32xf32>
  %sq = wsgraph.pow %c, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = wsgraph.reduce_mean %sq {axes = array<i64: 2, 1>} : (tensor<2x8x32xf32>) -> tensor<2x1x1xf32>
  %ve = wsgraph.add %var, %eps : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
  %sd = wsgraph.sqrt %ve : tensor<2x1x1xf32>
  %n = wsgraph.div %c, %sd : (tensor<2x8x32xf32>, tensor<2x1x1xf32>) -> tensor<2x8x32xf32>
  %s = wsgraph.mul %n, %g : (tensor<2x8x32xf32>, tensor<8x32xf32>) -> tensor<2x8x32xf32>
  return %s : tensor<2x8x32xf32>
}

// -----

// Axes that are not the trailing ones: not a layer norm.
// CHECK-LABEL: func.func @non_trailing_axes
// CHECK-NOT: wsgraph.layer_norm
// CHECK: wsgraph.div
// CHECK-NOT: wsgraph.layer_norm
// CHECK: return
func.func @non_trailing_axes(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-05> : tensor<f32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: 1>} : (tensor<2x8x32xf32>) -> tensor<2x1x32xf32>
  %c = wsgraph.sub %x, %mean : (tensor<2x8x32xf32>, tensor<2x1x32xf32>) -> tensor<2x8x32xf32>
  %sq = wsgraph.pow %c, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = wsgraph.reduce_mean %sq {axes = array<i64: 1>} : (tensor<2x8x32xf32>) -> tensor<2x1x32xf32>
  %ve = wsgraph.add %var, %eps : (tensor<2x1x32xf32>, tensor<f32>) -> tensor<2x1x32xf32>
  %sd = wsgraph.sqrt %ve : tensor<2x1x32xf32>
  %n = wsgraph.div %c, %sd : (tensor<2x8x32xf32>, tensor<2x1x32xf32>) -> tensor<2x8x32xf32>
  return %n : tensor<2x8x32xf32>
}

// -----

// Axes 0 and 2 of a rank-3 tensor end at the last dimension but skip one.
// CHECK-LABEL: func.func @gap_in_axes
// CHECK-NOT: wsgraph.layer_norm
// CHECK: return
func.func @gap_in_axes(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-05> : tensor<f32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: 0, 2>} : (tensor<2x8x32xf32>) -> tensor<1x8x1xf32>
  %c = wsgraph.sub %x, %mean : (tensor<2x8x32xf32>, tensor<1x8x1xf32>) -> tensor<2x8x32xf32>
  %sq = wsgraph.pow %c, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = wsgraph.reduce_mean %sq {axes = array<i64: 0, 2>} : (tensor<2x8x32xf32>) -> tensor<1x8x1xf32>
  %ve = wsgraph.add %var, %eps : (tensor<1x8x1xf32>, tensor<f32>) -> tensor<1x8x1xf32>
  %sd = wsgraph.sqrt %ve : tensor<1x8x1xf32>
  %n = wsgraph.div %c, %sd : (tensor<2x8x32xf32>, tensor<1x8x1xf32>) -> tensor<2x8x32xf32>
  return %n : tensor<2x8x32xf32>
}

// -----

// An epsilon that is not one value (here one per row) is not a layer norm
// epsilon.
// CHECK-LABEL: func.func @eps_not_splat
// CHECK-NOT: wsgraph.layer_norm
// CHECK: wsgraph.div
// CHECK-NOT: wsgraph.layer_norm
// CHECK: return
func.func @eps_not_splat(%x: tensor<1x4x32xf32>) -> tensor<1x4x32xf32> {
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %eps = wsgraph.constant dense<[[1.0e-05], [1.0], [2.0], [3.0]]> : tensor<4x1xf32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: -1>} : (tensor<1x4x32xf32>) -> tensor<1x4x1xf32>
  %c = wsgraph.sub %x, %mean : (tensor<1x4x32xf32>, tensor<1x4x1xf32>) -> tensor<1x4x32xf32>
  %sq = wsgraph.pow %c, %two : (tensor<1x4x32xf32>, tensor<f32>) -> tensor<1x4x32xf32>
  %var = wsgraph.reduce_mean %sq {axes = array<i64: -1>} : (tensor<1x4x32xf32>) -> tensor<1x4x1xf32>
  %ve = wsgraph.add %var, %eps : (tensor<1x4x1xf32>, tensor<4x1xf32>) -> tensor<1x4x1xf32>
  %sd = wsgraph.sqrt %ve : tensor<1x4x1xf32>
  %n = wsgraph.div %c, %sd : (tensor<1x4x32xf32>, tensor<1x4x1xf32>) -> tensor<1x4x32xf32>
  return %n : tensor<1x4x32xf32>
}

// -----

// An epsilon whose shape broadcasts the result beyond x's shape.
// CHECK-LABEL: func.func @eps_wrong_shape
// CHECK-NOT: wsgraph.layer_norm
// CHECK: wsgraph.div
// CHECK-NOT: wsgraph.layer_norm
// CHECK: return
func.func @eps_wrong_shape(%x: tensor<1x8x32xf32>) -> tensor<3x8x32xf32> {
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-05> : tensor<3x1x1xf32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %c = wsgraph.sub %x, %mean : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %sq = wsgraph.pow %c, %two : (tensor<1x8x32xf32>, tensor<f32>) -> tensor<1x8x32xf32>
  %var = wsgraph.reduce_mean %sq {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %ve = wsgraph.add %var, %eps : (tensor<1x8x1xf32>, tensor<3x1x1xf32>) -> tensor<3x8x1xf32>
  %sd = wsgraph.sqrt %ve : tensor<3x8x1xf32>
  %n = wsgraph.div %c, %sd : (tensor<1x8x32xf32>, tensor<3x8x1xf32>) -> tensor<3x8x32xf32>
  return %n : tensor<3x8x32xf32>
}

// -----

// A cube instead of a square, and a variance over other axes than the mean:
// neither is a layer norm.
// CHECK-LABEL: func.func @not_variance
// CHECK-NOT: wsgraph.layer_norm
// CHECK: return
func.func @not_variance(%x: tensor<1x8x32xf32>) -> (tensor<1x8x32xf32>, tensor<1x8x32xf32>) {
  %three = wsgraph.constant dense<3.0> : tensor<f32>
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-05> : tensor<f32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %c = wsgraph.sub %x, %mean : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %cube = wsgraph.pow %c, %three : (tensor<1x8x32xf32>, tensor<f32>) -> tensor<1x8x32xf32>
  %var = wsgraph.reduce_mean %cube {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %ve = wsgraph.add %var, %eps : (tensor<1x8x1xf32>, tensor<f32>) -> tensor<1x8x1xf32>
  %sd = wsgraph.sqrt %ve : tensor<1x8x1xf32>
  %n = wsgraph.div %c, %sd : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %sq = wsgraph.pow %c, %two : (tensor<1x8x32xf32>, tensor<f32>) -> tensor<1x8x32xf32>
  %var2 = wsgraph.reduce_mean %sq {axes = array<i64: -2, -1>} : (tensor<1x8x32xf32>) -> tensor<1x1x1xf32>
  %ve2 = wsgraph.add %var2, %eps : (tensor<1x1x1xf32>, tensor<f32>) -> tensor<1x1x1xf32>
  %sd2 = wsgraph.sqrt %ve2 : tensor<1x1x1xf32>
  %n2 = wsgraph.div %c, %sd2 : (tensor<1x8x32xf32>, tensor<1x1x1xf32>) -> tensor<1x8x32xf32>
  return %n, %n2 : tensor<1x8x32xf32>, tensor<1x8x32xf32>
}

// -----

// A gamma that is not known before the model runs stays a multiplication.
// CHECK-LABEL: func.func @dynamic_gamma
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x32xf32>, %[[G:.*]]: tensor<32xf32>)
// CHECK: %[[ONES:.*]] = wsgraph.constant dense<1.000000e+00> : tensor<32xf32>
// CHECK: %[[N:.*]] = wsgraph.layer_norm %[[X]], %[[ONES]] :
// CHECK-NEXT: %[[S:.*]] = wsgraph.mul %[[N]], %[[G]]
// CHECK-NEXT: return %[[S]]
func.func @dynamic_gamma(%x: tensor<1x8x32xf32>, %g: tensor<32xf32>) -> tensor<1x8x32xf32> {
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-05> : tensor<f32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %c = wsgraph.sub %x, %mean : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %sq = wsgraph.pow %c, %two : (tensor<1x8x32xf32>, tensor<f32>) -> tensor<1x8x32xf32>
  %var = wsgraph.reduce_mean %sq {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %ve = wsgraph.add %var, %eps : (tensor<1x8x1xf32>, tensor<f32>) -> tensor<1x8x1xf32>
  %sd = wsgraph.sqrt %ve : tensor<1x8x1xf32>
  %n = wsgraph.div %c, %sd : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %s = wsgraph.mul %n, %g : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  return %s : tensor<1x8x32xf32>
}

// -----

// (norm + beta) * gamma is not norm * gamma + beta: gamma must stay outside.
// CHECK-LABEL: func.func @beta_then_gamma
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x32xf32>)
// CHECK-DAG: %[[G:.*]] = wsgraph.weight "ln.weight"
// CHECK-DAG: %[[B:.*]] = wsgraph.weight "ln.bias"
// CHECK-DAG: %[[ONES:.*]] = wsgraph.constant dense<1.000000e+00> : tensor<32xf32>
// CHECK: %[[N:.*]] = wsgraph.layer_norm %[[X]], %[[ONES]], %[[B]] :
// CHECK-NEXT: %[[S:.*]] = wsgraph.mul %[[N]], %[[G]]
// CHECK-NEXT: return %[[S]]
func.func @beta_then_gamma(%x: tensor<1x8x32xf32>) -> tensor<1x8x32xf32> {
  %g = wsgraph.weight "ln.weight" from "m.bin" at 0 : tensor<32xf32>
  %b = wsgraph.weight "ln.bias" from "m.bin" at 128 : tensor<32xf32>
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-05> : tensor<f32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %c = wsgraph.sub %x, %mean : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %sq = wsgraph.pow %c, %two : (tensor<1x8x32xf32>, tensor<f32>) -> tensor<1x8x32xf32>
  %var = wsgraph.reduce_mean %sq {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %ve = wsgraph.add %var, %eps : (tensor<1x8x1xf32>, tensor<f32>) -> tensor<1x8x1xf32>
  %sd = wsgraph.sqrt %ve : tensor<1x8x1xf32>
  %n = wsgraph.div %c, %sd : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %y = wsgraph.add %n, %b : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  %s = wsgraph.mul %y, %g : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  return %s : tensor<1x8x32xf32>
}

// -----

// When the normalized value is used elsewhere too, gamma is not folded in.
// CHECK-LABEL: func.func @normalized_used_twice
// CHECK: %[[N:.*]] = wsgraph.layer_norm %{{.*}}, %{{.*}} :
// CHECK-NEXT: %[[S:.*]] = wsgraph.mul %[[N]], %{{.*}}
// CHECK-NEXT: return %[[S]], %[[N]]
func.func @normalized_used_twice(%x: tensor<1x8x32xf32>) -> (tensor<1x8x32xf32>, tensor<1x8x32xf32>) {
  %g = wsgraph.weight "ln.weight" from "m.bin" at 0 : tensor<32xf32>
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-05> : tensor<f32>
  %mean = wsgraph.reduce_mean %x {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %c = wsgraph.sub %x, %mean : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %sq = wsgraph.pow %c, %two : (tensor<1x8x32xf32>, tensor<f32>) -> tensor<1x8x32xf32>
  %var = wsgraph.reduce_mean %sq {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %ve = wsgraph.add %var, %eps : (tensor<1x8x1xf32>, tensor<f32>) -> tensor<1x8x1xf32>
  %sd = wsgraph.sqrt %ve : tensor<1x8x1xf32>
  %n = wsgraph.div %c, %sd : (tensor<1x8x32xf32>, tensor<1x8x1xf32>) -> tensor<1x8x32xf32>
  %s = wsgraph.mul %n, %g : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  return %s, %n : tensor<1x8x32xf32>, tensor<1x8x32xf32>
}
