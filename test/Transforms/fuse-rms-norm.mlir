// RUN: wsc-opt %s --wsgraph-fuse -split-input-file | FileCheck %s

// RMS norm, x * rsqrt(mean(x^2, -1, keepdim) + eps) * weight, in the forms
// torch exports, of a [batch, tokens, C] activation (the token ids %idx give
// [batch, tokens] = [2, 4]): the form the rms_norm kernel kind takes.

// Llama's RMSNorm as torch.onnx exports it at opsets 14 and 17 (its float32
// casts fold away on an f32 model): pow, reduce_mean, add eps, sqrt, 1 / .,
// times x, times the weight.
// CHECK-LABEL: func.func @llama
// CHECK-SAME: (%{{.*}}: tensor<2x4xi64>, %[[X:.*]]: tensor<2x4x8xf32>)
// CHECK: %[[W:.*]] = wsgraph.weight "norm.weight"
// CHECK-NEXT: %[[N:.*]] = wsgraph.rms_norm %[[X]], %[[W]] {epsilon = 9.99999997E-7 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[N]]
func.func @llama(%idx: tensor<2x4xi64>, %x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %two = wsgraph.constant dense<2.000000e+00> : tensor<f32>
  %eps = wsgraph.constant dense<9.99999997E-7> : tensor<f32>
  %one = wsgraph.constant dense<1.000000e+00> : tensor<f32>
  %w = wsgraph.weight "norm.weight" from "m.bin" at 0 : tensor<8xf32>
  %0 = wsgraph.pow %x, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %1 = wsgraph.reduce_mean %0 {axes = array<i64: -1>} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %2 = wsgraph.add %1, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %3 = wsgraph.sqrt %2 : tensor<2x4x1xf32>
  %4 = wsgraph.div %one, %3 : (tensor<f32>, tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %5 = wsgraph.mul %x, %4 : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %6 = wsgraph.mul %w, %5 : (tensor<8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %6 : tensor<2x4x8xf32>
}

// -----

// The square as x * x, the mean over axis 2, the inverse root as a
// reciprocal, eps on the left (1e-5, the default: not printed), no weight.
// CHECK-LABEL: func.func @reciprocal
// CHECK-SAME: (%{{.*}}: tensor<2x4xi64>, %[[X:.*]]: tensor<2x4x8xf32>)
// CHECK: %[[ONES:.*]] = wsgraph.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-NEXT: %[[N:.*]] = wsgraph.rms_norm %[[X]], %[[ONES]] : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[N]]
func.func @reciprocal(%idx: tensor<2x4xi64>, %x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %eps = wsgraph.constant dense<1.0e-05> : tensor<f32>
  %0 = wsgraph.mul %x, %x : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %1 = wsgraph.reduce_mean %0 {axes = array<i64: 2>} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %2 = wsgraph.add %eps, %1 : (tensor<f32>, tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %3 = wsgraph.sqrt %2 : tensor<2x4x1xf32>
  %4 = wsgraph.reciprocal %3 : tensor<2x4x1xf32>
  %5 = wsgraph.mul %4, %x : (tensor<2x4x1xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %5 : tensor<2x4x8xf32>
}

// -----

// x / sqrt(.), and pow(., -0.5), with the weight a literal on the right.
// CHECK-LABEL: func.func @div_and_pow
// CHECK-SAME: (%{{.*}}: tensor<2x4xi64>, %[[X:.*]]: tensor<2x4x8xf32>)
// CHECK-DAG: %[[G:.*]] = wsgraph.constant dense<2.000000e+00> : tensor<8xf32>
// CHECK-DAG: %[[A:.*]] = wsgraph.rms_norm %[[X]], %[[G]] {epsilon = 9.99999997E-7 : f32}
// CHECK-DAG: %[[B:.*]] = wsgraph.rms_norm %[[X]], %{{.*}} {epsilon = 9.99999997E-7 : f32}
// CHECK: return %[[A]], %[[B]]
func.func @div_and_pow(%idx: tensor<2x4xi64>, %x: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %two = wsgraph.constant dense<2.000000e+00> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-06> : tensor<f32>
  %mhalf = wsgraph.constant dense<-5.000000e-01> : tensor<f32>
  %g = wsgraph.constant dense<2.0> : tensor<8xf32>
  %0 = wsgraph.pow %x, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %1 = wsgraph.reduce_mean %0 {axes = array<i64: -1>} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %2 = wsgraph.add %1, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %3 = wsgraph.sqrt %2 : tensor<2x4x1xf32>
  %4 = wsgraph.div %x, %3 : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %5 = wsgraph.mul %4, %g : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %p0 = wsgraph.pow %x, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %p1 = wsgraph.reduce_mean %p0 {axes = array<i64: -1>} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %p2 = wsgraph.add %p1, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %p3 = wsgraph.pow %p2, %mhalf : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %p4 = wsgraph.mul %x, %p3 : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  return %5, %p4 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// A weight computed at run time stays a product after the norm.
// CHECK-LABEL: func.func @computed_weight
// CHECK: %[[N:.*]] = wsgraph.rms_norm
// CHECK-NEXT: %[[M:.*]] = wsgraph.mul %[[N]], %{{.*}}
// CHECK-NEXT: return %[[M]]
func.func @computed_weight(%idx: tensor<2x4xi64>, %x: tensor<2x4x8xf32>, %g: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %two = wsgraph.constant dense<2.000000e+00> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-06> : tensor<f32>
  %one = wsgraph.constant dense<1.000000e+00> : tensor<f32>
  %0 = wsgraph.pow %x, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %1 = wsgraph.reduce_mean %0 {axes = array<i64: -1>} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %2 = wsgraph.add %1, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %3 = wsgraph.sqrt %2 : tensor<2x4x1xf32>
  %4 = wsgraph.div %one, %3 : (tensor<f32>, tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %5 = wsgraph.mul %x, %4 : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %6 = wsgraph.mul %5, %g : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return %6 : tensor<2x4x8xf32>
}

// -----

// Not an RMS norm of the activation: the mean over the tokens (axis 1); the
// square of another value; a cube; 2 / sqrt(.) instead of 1 / sqrt(.).
// CHECK-LABEL: func.func @not_rms
// CHECK-NOT: wsgraph.rms_norm
// CHECK: return
func.func @not_rms(%idx: tensor<2x4xi64>, %x: tensor<2x4x8xf32>, %z: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %two = wsgraph.constant dense<2.000000e+00> : tensor<f32>
  %three = wsgraph.constant dense<3.000000e+00> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-06> : tensor<f32>
  %one = wsgraph.constant dense<1.000000e+00> : tensor<f32>
  %sq = wsgraph.pow %x, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>

  %a1 = wsgraph.reduce_mean %sq {axes = array<i64: 1>} : (tensor<2x4x8xf32>) -> tensor<2x1x8xf32>
  %a2 = wsgraph.add %a1, %eps : (tensor<2x1x8xf32>, tensor<f32>) -> tensor<2x1x8xf32>
  %a3 = wsgraph.sqrt %a2 : tensor<2x1x8xf32>
  %a4 = wsgraph.div %one, %a3 : (tensor<f32>, tensor<2x1x8xf32>) -> tensor<2x1x8xf32>
  %y0 = wsgraph.mul %x, %a4 : (tensor<2x4x8xf32>, tensor<2x1x8xf32>) -> tensor<2x4x8xf32>

  %b0 = wsgraph.pow %z, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %b1 = wsgraph.reduce_mean %b0 {axes = array<i64: -1>} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %b2 = wsgraph.add %b1, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %b3 = wsgraph.sqrt %b2 : tensor<2x4x1xf32>
  %b4 = wsgraph.div %one, %b3 : (tensor<f32>, tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %y1 = wsgraph.mul %x, %b4 : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>

  %c0 = wsgraph.pow %x, %three : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %c1 = wsgraph.reduce_mean %c0 {axes = array<i64: -1>} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %c2 = wsgraph.add %c1, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %c3 = wsgraph.sqrt %c2 : tensor<2x4x1xf32>
  %c4 = wsgraph.div %one, %c3 : (tensor<f32>, tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %y2 = wsgraph.mul %x, %c4 : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>

  %d1 = wsgraph.reduce_mean %sq {axes = array<i64: -1>} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %d2 = wsgraph.add %d1, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %d3 = wsgraph.sqrt %d2 : tensor<2x4x1xf32>
  %d4 = wsgraph.div %two, %d3 : (tensor<f32>, tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %y3 = wsgraph.mul %x, %d4 : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  return %y0, %y1, %y2, %y3 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// A function without token ids takes its geometry from its float input
// ([B, T, C] embeddings): the form there is an rms_norm too.
// CHECK-LABEL: func.func @float_rows
// CHECK: wsgraph.rms_norm
// CHECK: return
func.func @float_rows(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %two = wsgraph.constant dense<2.000000e+00> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-06> : tensor<f32>
  %one = wsgraph.constant dense<1.000000e+00> : tensor<f32>
  %0 = wsgraph.pow %x, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %1 = wsgraph.reduce_mean %0 {axes = array<i64: -1>} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %2 = wsgraph.add %1, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %3 = wsgraph.sqrt %2 : tensor<2x4x1xf32>
  %4 = wsgraph.div %one, %3 : (tensor<f32>, tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %5 = wsgraph.mul %x, %4 : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  return %5 : tensor<2x4x8xf32>
}

// -----

// The form on values the rms_norm kind does not take, a [batch, tokens]
// whose tokens differ from the ids': the generic kind has no body for
// rms_norm, so it keeps its primitive ops.
// CHECK-LABEL: func.func @other_tokens
// CHECK-NOT: wsgraph.rms_norm
// CHECK: return
func.func @other_tokens(%idx: tensor<2x3xi64>, %x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %two = wsgraph.constant dense<2.000000e+00> : tensor<f32>
  %eps = wsgraph.constant dense<1.0e-06> : tensor<f32>
  %one = wsgraph.constant dense<1.000000e+00> : tensor<f32>
  %0 = wsgraph.pow %x, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %1 = wsgraph.reduce_mean %0 {axes = array<i64: -1>} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %2 = wsgraph.add %1, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %3 = wsgraph.sqrt %2 : tensor<2x4x1xf32>
  %4 = wsgraph.div %one, %3 : (tensor<f32>, tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %5 = wsgraph.mul %x, %4 : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  return %5 : tensor<2x4x8xf32>
}
