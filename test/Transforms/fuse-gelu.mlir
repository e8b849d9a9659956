// RUN: wsc-opt %s --wsgraph-fuse -split-input-file -verify-diagnostics | FileCheck %s

// Exact GELU, x * 0.5 * (1 + erf(x / sqrt(2))), in the forms torch exports.

// The association torch exports: (x * (erf(x / sqrt(2)) + 1)) * 0.5.
// CHECK-LABEL: func.func @torch_association
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x128xf32>)
// CHECK-NEXT: %[[G:.*]] = wsgraph.gelu %[[X]] : tensor<1x8x128xf32>
// CHECK-NEXT: return %[[G]]
func.func @torch_association(%x: tensor<1x8x128xf32>) -> tensor<1x8x128xf32> {
  %sqrt2 = wsgraph.constant dense<1.41421354> : tensor<f32>
  %one = wsgraph.constant dense<1.0> : tensor<f32>
  %half = wsgraph.constant dense<0.5> : tensor<f32>
  %d = wsgraph.div %x, %sqrt2 : (tensor<1x8x128xf32>, tensor<f32>) -> tensor<1x8x128xf32>
  %e = wsgraph.erf %d : tensor<1x8x128xf32>
  %a = wsgraph.add %e, %one : (tensor<1x8x128xf32>, tensor<f32>) -> tensor<1x8x128xf32>
  %m = wsgraph.mul %x, %a : (tensor<1x8x128xf32>, tensor<1x8x128xf32>) -> tensor<1x8x128xf32>
  %y = wsgraph.mul %m, %half : (tensor<1x8x128xf32>, tensor<f32>) -> tensor<1x8x128xf32>
  return %y : tensor<1x8x128xf32>
}

// -----

// The other association: (x * 0.5) * (1 + erf(x / sqrt(2))).
// CHECK-LABEL: func.func @half_first
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[G:.*]] = wsgraph.gelu %[[X]] : tensor<4x16xf32>
// CHECK-NEXT: return %[[G]]
func.func @half_first(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %sqrt2 = wsgraph.constant dense<1.41421354> : tensor<f32>
  %one = wsgraph.constant dense<1.0> : tensor<f32>
  %half = wsgraph.constant dense<0.5> : tensor<f32>
  %h = wsgraph.mul %x, %half : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %d = wsgraph.div %x, %sqrt2 : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %e = wsgraph.erf %d : tensor<4x16xf32>
  %a = wsgraph.add %one, %e : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = wsgraph.mul %h, %a : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Multiplying by 1/sqrt(2) instead of dividing by sqrt(2), constants on the
// left, and the nested product on the right.
// CHECK-LABEL: func.func @mul_by_inverse_sqrt2
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[G:.*]] = wsgraph.gelu %[[X]] : tensor<4x16xf32>
// CHECK-NEXT: return %[[G]]
func.func @mul_by_inverse_sqrt2(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %rsqrt2 = wsgraph.constant dense<0.707106769> : tensor<f32>
  %one = wsgraph.constant dense<1.0> : tensor<1xf32>
  %half = wsgraph.constant dense<0.5> : tensor<f32>
  %d = wsgraph.mul %rsqrt2, %x : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %e = wsgraph.erf %d : tensor<4x16xf32>
  %a = wsgraph.add %e, %one : (tensor<4x16xf32>, tensor<1xf32>) -> tensor<4x16xf32>
  %m = wsgraph.mul %a, %x : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = wsgraph.mul %half, %m : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// The half times the erf term first, then x: x * (0.5 * (1 + erf(...))).
// CHECK-LABEL: func.func @x_last
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[G:.*]] = wsgraph.gelu %[[X]] : tensor<4x16xf32>
// CHECK-NEXT: return %[[G]]
func.func @x_last(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %sqrt2 = wsgraph.constant dense<1.41421354> : tensor<f32>
  %one = wsgraph.constant dense<1.0> : tensor<f32>
  %half = wsgraph.constant dense<0.5> : tensor<f32>
  %d = wsgraph.div %x, %sqrt2 : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %e = wsgraph.erf %d : tensor<4x16xf32>
  %a = wsgraph.add %e, %one : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %h = wsgraph.mul %half, %a : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = wsgraph.mul %x, %h : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Wrong constants: 0.6 instead of 0.5, a divisor of 2 instead of sqrt(2), an
// erf term plus 2. None of them is a GELU.
// CHECK-LABEL: func.func @wrong_constants
// CHECK-NOT: wsgraph.gelu
// CHECK: return
func.func @wrong_constants(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %sqrt2 = wsgraph.constant dense<1.41421354> : tensor<f32>
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %one = wsgraph.constant dense<1.0> : tensor<f32>
  %half = wsgraph.constant dense<0.5> : tensor<f32>
  %notHalf = wsgraph.constant dense<0.6> : tensor<f32>
  %d = wsgraph.div %x, %sqrt2 : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %e = wsgraph.erf %d : tensor<4x16xf32>
  %a = wsgraph.add %e, %one : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %m = wsgraph.mul %x, %a : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y0 = wsgraph.mul %m, %notHalf : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>

  %d1 = wsgraph.div %x, %two : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %e1 = wsgraph.erf %d1 : tensor<4x16xf32>
  %a1 = wsgraph.add %e1, %one : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %m1 = wsgraph.mul %x, %a1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y1 = wsgraph.mul %m1, %half : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>

  %d2 = wsgraph.div %x, %sqrt2 : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %e2 = wsgraph.erf %d2 : tensor<4x16xf32>
  %a2 = wsgraph.add %e2, %two : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %m2 = wsgraph.mul %x, %a2 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y2 = wsgraph.mul %m2, %half : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  return %y0, %y1, %y2 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A "1" that is not one value: only its first element is 1.
// CHECK-LABEL: func.func @one_not_splat
// CHECK-NOT: wsgraph.gelu
// CHECK: wsgraph.erf
// CHECK-NOT: wsgraph.gelu
// CHECK: return
func.func @one_not_splat(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %sqrt2 = wsgraph.constant dense<1.41421354> : tensor<f32>
  %one = wsgraph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %half = wsgraph.constant dense<0.5> : tensor<f32>
  %d = wsgraph.div %x, %sqrt2 : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %e = wsgraph.erf %d : tensor<4x4xf32>
  %a = wsgraph.add %e, %one : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %m = wsgraph.mul %x, %a : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = wsgraph.mul %m, %half : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// The erf of another value than the one multiplied.
// CHECK-LABEL: func.func @different_inputs
// CHECK-NOT: wsgraph.gelu
// CHECK: return
func.func @different_inputs(%x: tensor<4x16xf32>, %z: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %sqrt2 = wsgraph.constant dense<1.41421354> : tensor<f32>
  %one = wsgraph.constant dense<1.0> : tensor<f32>
  %half = wsgraph.constant dense<0.5> : tensor<f32>
  %d = wsgraph.div %z, %sqrt2 : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %e = wsgraph.erf %d : tensor<4x16xf32>
  %a = wsgraph.add %e, %one : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %m = wsgraph.mul %x, %a : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = wsgraph.mul %m, %half : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// The inner product is used elsewhere too: fusing would compute it twice.
// CHECK-LABEL: func.func @inner_product_used_twice
// CHECK-NOT: wsgraph.gelu
// CHECK: return
func.func @inner_product_used_twice(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %sqrt2 = wsgraph.constant dense<1.41421354> : tensor<f32>
  %one = wsgraph.constant dense<1.0> : tensor<f32>
  %half = wsgraph.constant dense<0.5> : tensor<f32>
  %d = wsgraph.div %x, %sqrt2 : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %e = wsgraph.erf %d : tensor<4x16xf32>
  %a = wsgraph.add %e, %one : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %m = wsgraph.mul %x, %a : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = wsgraph.mul %m, %half : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  return %y, %m : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// x broadcast by the product (here x is [16], the erf term [4, 16]): the
// result is not gelu(x).
// CHECK-LABEL: func.func @broadcast_x
// CHECK-NOT: wsgraph.gelu
// CHECK: return
func.func @broadcast_x(%x: tensor<16xf32>, %z: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %sqrt2 = wsgraph.constant dense<1.41421354> : tensor<f32>
  %one = wsgraph.constant dense<1.0> : tensor<4x16xf32>
  %half = wsgraph.constant dense<0.5> : tensor<f32>
  %d = wsgraph.div %x, %sqrt2 : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %e = wsgraph.erf %d : tensor<16xf32>
  %a = wsgraph.add %e, %one : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = wsgraph.mul %x, %a : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = wsgraph.mul %m, %half : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
