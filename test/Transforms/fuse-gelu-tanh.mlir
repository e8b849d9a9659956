// RUN: wsc-opt %s --wsgraph-fuse -split-input-file | FileCheck %s

// The tanh GELU, 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), in
// the forms torch exports, after a linear of a [batch, tokens, K] activation
// (the token ids %idx give [batch, tokens] = [2, 4]): the form the linear
// kind finishes as linear_gelu.

// HF's gelu_new (GPT-2, GPT-J, nanoGPT --gelu tanh), as torch.onnx exports
// it at opsets 14 and 17: (x * 0.5) * (tanh(((x + pow(x, 3) * k) * c)) + 1).
// CHECK-LABEL: func.func @gelu_new
// CHECK: %[[L:.*]] = wsgraph.linear
// CHECK-NEXT: %[[G:.*]] = wsgraph.gelu %[[L]] {approximate = "tanh"} : tensor<2x4x32xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_new(%idx: tensor<2x4xi64>, %a: tensor<2x4x8xf32>) -> tensor<2x4x32xf32> {
  %w = wsgraph.constant dense<0.25> : tensor<8x32xf32>
  %b = wsgraph.constant dense<0.1> : tensor<32xf32>
  %one = wsgraph.constant dense<1.000000e+00> : tensor<f32>
  %c = wsgraph.constant dense<0.797884583> : tensor<f32>
  %k = wsgraph.constant dense<4.471500e-02> : tensor<f32>
  %three = wsgraph.constant dense<3.000000e+00> : tensor<f32>
  %half = wsgraph.constant dense<5.000000e-01> : tensor<f32>
  %m = wsgraph.matmul %a, %w : (tensor<2x4x8xf32>, tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %x = wsgraph.add %m, %b : (tensor<2x4x32xf32>, tensor<32xf32>) -> tensor<2x4x32xf32>
  %0 = wsgraph.mul %x, %half : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %1 = wsgraph.pow %x, %three : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %2 = wsgraph.mul %1, %k : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %3 = wsgraph.add %x, %2 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %4 = wsgraph.mul %3, %c : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %5 = wsgraph.tanh %4 : tensor<2x4x32xf32>
  %6 = wsgraph.add %5, %one : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %7 = wsgraph.mul %0, %6 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  return %7 : tensor<2x4x32xf32>
}

// -----

// torch's gelu(approximate='tanh') at opsets 14 and 17: the cube as
// x * (x * x), the half last: (x * (tanh(c * (x + k * x^3)) + 1)) * 0.5.
// CHECK-LABEL: func.func @torch_approximate_tanh
// CHECK: %[[L:.*]] = wsgraph.linear
// CHECK-NEXT: %[[G:.*]] = wsgraph.gelu %[[L]] {approximate = "tanh"} : tensor<2x4x32xf32>
// CHECK-NEXT: return %[[G]]
func.func @torch_approximate_tanh(%idx: tensor<2x4xi64>, %a: tensor<2x4x8xf32>) -> tensor<2x4x32xf32> {
  %w = wsgraph.constant dense<0.25> : tensor<8x32xf32>
  %k = wsgraph.constant dense<4.471500e-02> : tensor<f32>
  %c = wsgraph.constant dense<0.797884583> : tensor<f32>
  %one = wsgraph.constant dense<1.000000e+00> : tensor<f32>
  %half = wsgraph.constant dense<5.000000e-01> : tensor<f32>
  %x = wsgraph.matmul %a, %w : (tensor<2x4x8xf32>, tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %0 = wsgraph.mul %x, %x : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %1 = wsgraph.mul %x, %0 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %2 = wsgraph.mul %1, %k : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %3 = wsgraph.add %x, %2 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %4 = wsgraph.mul %3, %c : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %5 = wsgraph.tanh %4 : tensor<2x4x32xf32>
  %6 = wsgraph.add %5, %one : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %7 = wsgraph.mul %x, %6 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %8 = wsgraph.mul %7, %half : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  return %8 : tensor<2x4x32xf32>
}

// -----

// FastGELU's arrangement of the polynomial, x * c * (1 + k * x * x), and
// the constants on the left.
// CHECK-LABEL: func.func @fast_gelu
// CHECK: %[[L:.*]] = wsgraph.linear
// CHECK-NEXT: %[[G:.*]] = wsgraph.gelu %[[L]] {approximate = "tanh"} : tensor<2x4x32xf32>
// CHECK-NEXT: return %[[G]]
func.func @fast_gelu(%idx: tensor<2x4xi64>, %a: tensor<2x4x8xf32>) -> tensor<2x4x32xf32> {
  %w = wsgraph.constant dense<0.25> : tensor<8x32xf32>
  %k = wsgraph.constant dense<4.471500e-02> : tensor<f32>
  %c = wsgraph.constant dense<0.797884583> : tensor<f32>
  %one = wsgraph.constant dense<1.000000e+00> : tensor<f32>
  %half = wsgraph.constant dense<5.000000e-01> : tensor<f32>
  %x = wsgraph.matmul %a, %w : (tensor<2x4x8xf32>, tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %0 = wsgraph.mul %half, %x : (tensor<f32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %1 = wsgraph.mul %c, %x : (tensor<f32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %2 = wsgraph.mul %k, %x : (tensor<f32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %3 = wsgraph.mul %2, %x : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %4 = wsgraph.add %one, %3 : (tensor<f32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %5 = wsgraph.mul %1, %4 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %6 = wsgraph.tanh %5 : tensor<2x4x32xf32>
  %7 = wsgraph.add %one, %6 : (tensor<f32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %8 = wsgraph.mul %0, %7 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  return %8 : tensor<2x4x32xf32>
}

// -----

// Not the tanh GELU: kappa 0.05 instead of 0.044715; sqrt(2/pi) as 0.8; a
// half that is 0.6; an x^2 term in the polynomial. None fuses.
// CHECK-LABEL: func.func @wrong_constants
// CHECK-NOT: wsgraph.gelu
// CHECK: return
func.func @wrong_constants(%idx: tensor<2x4xi64>, %a: tensor<2x4x8xf32>) -> (tensor<2x4x32xf32>, tensor<2x4x32xf32>, tensor<2x4x32xf32>, tensor<2x4x32xf32>) {
  %w = wsgraph.constant dense<0.25> : tensor<8x32xf32>
  %one = wsgraph.constant dense<1.000000e+00> : tensor<f32>
  %c = wsgraph.constant dense<0.797884583> : tensor<f32>
  %c8 = wsgraph.constant dense<0.8> : tensor<f32>
  %k = wsgraph.constant dense<4.471500e-02> : tensor<f32>
  %k5 = wsgraph.constant dense<0.05> : tensor<f32>
  %three = wsgraph.constant dense<3.000000e+00> : tensor<f32>
  %two = wsgraph.constant dense<2.000000e+00> : tensor<f32>
  %half = wsgraph.constant dense<5.000000e-01> : tensor<f32>
  %six = wsgraph.constant dense<6.000000e-01> : tensor<f32>
  %x0 = wsgraph.matmul %a, %w : (tensor<2x4x8xf32>, tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %x1 = wsgraph.matmul %a, %w : (tensor<2x4x8xf32>, tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %x2 = wsgraph.matmul %a, %w : (tensor<2x4x8xf32>, tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %x3 = wsgraph.matmul %a, %w : (tensor<2x4x8xf32>, tensor<8x32xf32>) -> tensor<2x4x32xf32>

  %a0 = wsgraph.mul %x0, %half : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %a1 = wsgraph.pow %x0, %three : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %a2 = wsgraph.mul %a1, %k5 : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %a3 = wsgraph.add %x0, %a2 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %a4 = wsgraph.mul %a3, %c : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %a5 = wsgraph.tanh %a4 : tensor<2x4x32xf32>
  %a6 = wsgraph.add %a5, %one : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %y0 = wsgraph.mul %a0, %a6 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>

  %b0 = wsgraph.mul %x1, %half : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %b1 = wsgraph.pow %x1, %three : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %b2 = wsgraph.mul %b1, %k : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %b3 = wsgraph.add %x1, %b2 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %b4 = wsgraph.mul %b3, %c8 : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %b5 = wsgraph.tanh %b4 : tensor<2x4x32xf32>
  %b6 = wsgraph.add %b5, %one : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %y1 = wsgraph.mul %b0, %b6 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>

  %c0 = wsgraph.mul %x2, %six : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %c1 = wsgraph.pow %x2, %three : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %c2 = wsgraph.mul %c1, %k : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %c3 = wsgraph.add %x2, %c2 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %c4 = wsgraph.mul %c3, %c : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %c5 = wsgraph.tanh %c4 : tensor<2x4x32xf32>
  %c6 = wsgraph.add %c5, %one : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %y2 = wsgraph.mul %c0, %c6 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>

  %d0 = wsgraph.mul %x3, %half : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %d1 = wsgraph.pow %x3, %three : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %d2 = wsgraph.mul %d1, %k : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %dsq = wsgraph.pow %x3, %two : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %d3 = wsgraph.add %x3, %d2 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %d3b = wsgraph.add %d3, %dsq : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %d4 = wsgraph.mul %d3b, %c : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %d5 = wsgraph.tanh %d4 : tensor<2x4x32xf32>
  %d6 = wsgraph.add %d5, %one : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %y3 = wsgraph.mul %d0, %d6 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  return %y0, %y1, %y2, %y3 : tensor<2x4x32xf32>, tensor<2x4x32xf32>, tensor<2x4x32xf32>, tensor<2x4x32xf32>
}

// -----

// The form of a value that no linear kernel finishes fuses too (a generic
// kernel computes it): an input of the function, a linear whose result is
// also returned, and a linear of a function without token ids.
// CHECK-LABEL: func.func @not_after_a_linear
// CHECK: wsgraph.gelu %{{.*}} {approximate = "tanh"}
// CHECK-NEXT: return
func.func @not_after_a_linear(%idx: tensor<2x4xi64>, %x: tensor<2x4x32xf32>) -> tensor<2x4x32xf32> {
  %one = wsgraph.constant dense<1.000000e+00> : tensor<f32>
  %c = wsgraph.constant dense<0.797884583> : tensor<f32>
  %k = wsgraph.constant dense<4.471500e-02> : tensor<f32>
  %three = wsgraph.constant dense<3.000000e+00> : tensor<f32>
  %half = wsgraph.constant dense<5.000000e-01> : tensor<f32>
  %0 = wsgraph.mul %x, %half : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %1 = wsgraph.pow %x, %three : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %2 = wsgraph.mul %1, %k : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %3 = wsgraph.add %x, %2 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %4 = wsgraph.mul %3, %c : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %5 = wsgraph.tanh %4 : tensor<2x4x32xf32>
  %6 = wsgraph.add %5, %one : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %7 = wsgraph.mul %0, %6 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  return %7 : tensor<2x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @linear_result_used_twice
// CHECK: %[[X:.*]] = wsgraph.linear
// CHECK: wsgraph.gelu %[[X]] {approximate = "tanh"}
func.func @linear_result_used_twice(%idx: tensor<2x4xi64>, %a: tensor<2x4x8xf32>) -> (tensor<2x4x32xf32>, tensor<2x4x32xf32>) {
  %w = wsgraph.constant dense<0.25> : tensor<8x32xf32>
  %one = wsgraph.constant dense<1.000000e+00> : tensor<f32>
  %c = wsgraph.constant dense<0.797884583> : tensor<f32>
  %k = wsgraph.constant dense<4.471500e-02> : tensor<f32>
  %three = wsgraph.constant dense<3.000000e+00> : tensor<f32>
  %half = wsgraph.constant dense<5.000000e-01> : tensor<f32>
  %x = wsgraph.matmul %a, %w : (tensor<2x4x8xf32>, tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %0 = wsgraph.mul %x, %half : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %1 = wsgraph.pow %x, %three : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %2 = wsgraph.mul %1, %k : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %3 = wsgraph.add %x, %2 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %4 = wsgraph.mul %3, %c : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %5 = wsgraph.tanh %4 : tensor<2x4x32xf32>
  %6 = wsgraph.add %5, %one : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %7 = wsgraph.mul %0, %6 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  return %7, %x : tensor<2x4x32xf32>, tensor<2x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @no_token_ids
// CHECK: wsgraph.linear
// CHECK: wsgraph.gelu %{{.*}} {approximate = "tanh"}
func.func @no_token_ids(%a: tensor<2x4x8xf32>) -> tensor<2x4x32xf32> {
  %w = wsgraph.constant dense<0.25> : tensor<8x32xf32>
  %one = wsgraph.constant dense<1.000000e+00> : tensor<f32>
  %c = wsgraph.constant dense<0.797884583> : tensor<f32>
  %k = wsgraph.constant dense<4.471500e-02> : tensor<f32>
  %three = wsgraph.constant dense<3.000000e+00> : tensor<f32>
  %half = wsgraph.constant dense<5.000000e-01> : tensor<f32>
  %x = wsgraph.matmul %a, %w : (tensor<2x4x8xf32>, tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %0 = wsgraph.mul %x, %half : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %1 = wsgraph.pow %x, %three : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %2 = wsgraph.mul %1, %k : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %3 = wsgraph.add %x, %2 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %4 = wsgraph.mul %3, %c : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %5 = wsgraph.tanh %4 : tensor<2x4x32xf32>
  %6 = wsgraph.add %5, %one : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %7 = wsgraph.mul %0, %6 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  return %7 : tensor<2x4x32xf32>
}
