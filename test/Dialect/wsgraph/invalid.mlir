// RUN: wsc-opt %s -split-input-file -verify-diagnostics

// One case per verifier and type inference error of the wsgraph ops. A type
// inference error is reported twice: the message of inferReturnTypes, then
// "failed to infer returned types".

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'wsgraph.add' operand shapes [2, 3] and [4] do not broadcast}}
  // expected-error @+1 {{'wsgraph.add' op failed to infer returned types}}
  %0 = wsgraph.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @sub_element_type(%a: tensor<4xf32>, %b: tensor<4xi64>) {
  // expected-error @+2 {{'wsgraph.sub' expects operands of one element type, got 'f32' and 'i64'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.sub %a, %b : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

func.func @mul_result_shape(%a: tensor<2x1xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'wsgraph.mul' op inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x1xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.mul %a, %b : (tensor<2x1xf32>, tensor<4xf32>) -> tensor<2x1xf32>
  return
}

// -----

func.func @div_dynamic_vs_static(%a: tensor<?x8xf32>, %b: tensor<3x8xf32>) {
  // A dynamic dimension broadcast with a static one gives the static one.
  // expected-error @+2 {{'wsgraph.div' op inferred type(s) 'tensor<3x8xf32>' are incompatible with return type(s) of operation 'tensor<?x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.div %a, %b : (tensor<?x8xf32>, tensor<3x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @equal_result_i1(%a: tensor<4xi64>, %b: tensor<4xi64>) {
  // expected-error @+2 {{'wsgraph.equal' op inferred type(s) 'tensor<4xi1>' are incompatible with return type(s) of operation 'tensor<4xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.equal %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @pow_broadcast(%a: tensor<8xf32>, %b: tensor<3xi64>) {
  // pow accepts another exponent type, but still broadcasts.
  // expected-error @+2 {{'wsgraph.pow' operand shapes [8] and [3] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.pow %a, %b : (tensor<8xf32>, tensor<3xi64>) -> tensor<8xf32>
  return
}

// -----

func.func @where_branch_types(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+2 {{'wsgraph.where' expects branches of one element type, got 'f32' and 'f16'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.where %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @where_broadcast(%c: tensor<3xi1>, %a: tensor<4xf32>, %b: tensor<f32>) {
  // expected-error @+2 {{'wsgraph.where' operand shapes [3] and [4] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.where %c, %a, %b : (tensor<3xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return
}

// -----

func.func @where_broadcast_third(%c: tensor<2x1xi1>, %a: tensor<4xf32>, %b: tensor<3x1xf32>) {
  // The shape so far is that of the first two operands.
  // expected-error @+2 {{'wsgraph.where' operand shapes [2, 4] and [3, 1] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.where %c, %a, %b : (tensor<2x1xi1>, tensor<4xf32>, tensor<3x1xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @where_cond_type(%c: tensor<4xi8>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'wsgraph.where' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xi8>'}}
  %0 = wsgraph.where %c, %a, %a : (tensor<4xi8>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unary_integer(%x: tensor<4xi64>) {
  // expected-error @+1 {{'wsgraph.exp' op operand #0 must be ranked tensor of floating-point values, but got 'tensor<4xi64>'}}
  %0 = wsgraph.exp %x : tensor<4xi64>
  return
}

// -----

func.func @not_float(%x: tensor<4xf32>) {
  // expected-error @+1 {{'wsgraph.not' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = wsgraph.not %x : tensor<4xf32>
  return
}

// -----

func.func @neg_bool(%x: tensor<4xi1>) {
  // neg, abs and relu take integers, but not i1.
  // expected-error @+1 {{'wsgraph.neg' op operand #0 must be ranked tensor of float or integer (not i1) values, but got 'tensor<4xi1>'}}
  %0 = wsgraph.neg %x : tensor<4xi1>
  return
}

// -----

func.func @sigmoid_integer(%x: tensor<4xi32>) {
  // expected-error @+1 {{'wsgraph.sigmoid' op operand #0 must be ranked tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = wsgraph.sigmoid %x : tensor<4xi32>
  return
}

// -----

func.func @max_bool(%a: tensor<4xi1>, %b: tensor<4xi1>) {
  // expected-error @+2 {{'wsgraph.max' expects float or integer (not i1) operands, got 'i1'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.max %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

func.func @min_element_type(%a: tensor<4xf32>, %b: tensor<4xi64>) {
  // expected-error @+2 {{'wsgraph.min' expects operands of one element type, got 'f32' and 'i64'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.min %a, %b : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

func.func @mod_float_needs_fmod(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'wsgraph.mod' on floating-point operands needs fmod = true, got 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.mod %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @less_result_i1(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'wsgraph.less' op inferred type(s) 'tensor<4xi1>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.less %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @greater_bool(%a: tensor<4xi1>, %b: tensor<4xi1>) {
  // expected-error @+2 {{'wsgraph.greater' expects float or integer (not i1) operands, got 'i1'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.greater %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

func.func @greater_equal_broadcast(%a: tensor<3xi64>, %b: tensor<4xi64>) {
  // expected-error @+2 {{'wsgraph.greater_equal' operand shapes [3] and [4] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.greater_equal %a, %b : (tensor<3xi64>, tensor<4xi64>) -> tensor<4xi1>
  return
}

// -----

func.func @and_not_bool(%a: tensor<4xi64>, %b: tensor<4xi64>) {
  // expected-error @+2 {{'wsgraph.and' expects i1 operands, got 'i64'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.and %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  return
}

// -----

func.func @bitwise_and_float(%a: tensor<4xf32>) {
  // expected-error @+2 {{'wsgraph.bitwise_and' expects integer (not i1) operands, got 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.bitwise_and %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @bitwise_or_bool(%a: tensor<4xi1>) {
  // expected-error @+2 {{'wsgraph.bitwise_or' expects integer (not i1) operands, got 'i1'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.bitwise_or %a, %a : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

func.func @bitwise_not_unsigned(%a: tensor<4xui8>) {
  // expected-error @+1 {{'wsgraph.bitwise_not' op operand #0 must be ranked tensor of 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer values}}
  %0 = wsgraph.bitwise_not %a : tensor<4xui8>
  return
}

// -----

func.func @xor_element_type(%a: tensor<4xi1>, %b: tensor<4xi8>) {
  // expected-error @+2 {{'wsgraph.xor' expects operands of one element type, got 'i1' and 'i8'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.xor %a, %b : (tensor<4xi1>, tensor<4xi8>) -> tensor<4xi1>
  return
}

// -----

func.func @cast_shape(%x: tensor<4xi64>) {
  // expected-error @+1 {{'wsgraph.cast' op requires the same shape for all operands and results}}
  %0 = wsgraph.cast %x : tensor<4xi64> -> tensor<2xf32>
  return
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+2 {{'wsgraph.matmul' expects operands of rank 2 or more, got 'tensor<8xf32>' and 'tensor<8x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.matmul %a, %b : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_element_type(%a: tensor<2x8xf32>, %b: tensor<8x4xf16>) {
  // expected-error @+2 {{'wsgraph.matmul' expects one element type, got 'tensor<2x8xf32>' and 'tensor<8x4xf16>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.matmul %a, %b : (tensor<2x8xf32>, tensor<8x4xf16>) -> tensor<2x4xf32>
  return
}

// -----

func.func @matmul_k(%a: tensor<2x8xf32>, %b: tensor<7x4xf32>) {
  // expected-error @+2 {{'wsgraph.matmul' contraction dimensions differ: 'tensor<2x8xf32>' has K=8 but 'tensor<7x4xf32>' has K=7}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.matmul %a, %b : (tensor<2x8xf32>, tensor<7x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<3x2x8xf32>, %b: tensor<5x8x4xf32>) {
  // expected-error @+2 {{'wsgraph.matmul' batch dimensions of 'tensor<3x2x8xf32>' and 'tensor<5x8x4xf32>' do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.matmul %a, %b : (tensor<3x2x8xf32>, tensor<5x8x4xf32>) -> tensor<3x2x4xf32>
  return
}

// -----

func.func @matmul_batch_result(%a: tensor<3x2x8xf32>, %b: tensor<1x8x4xf32>) {
  // expected-error @+2 {{'wsgraph.matmul' op inferred type(s) 'tensor<3x2x4xf32>' are incompatible with return type(s) of operation 'tensor<1x2x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.matmul %a, %b : (tensor<3x2x8xf32>, tensor<1x8x4xf32>) -> tensor<1x2x4xf32>
  return
}

// -----

func.func @gemm_rank(%a: tensor<1x4x32xf32>, %b: tensor<32x96xf32>) {
  // expected-error @+2 {{'wsgraph.gemm' expects rank-2 operands, got 'tensor<1x4x32xf32>' and 'tensor<32x96xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.gemm %a, %b : (tensor<1x4x32xf32>, tensor<32x96xf32>) -> tensor<4x96xf32>
  return
}

// -----

func.func @gemm_k_trans_b(%a: tensor<4x32xf32>, %b: tensor<32x96xf32>) {
  // With trans_b, B is [N, K] = [32, 96]: K is 96.
  // expected-error @+2 {{'wsgraph.gemm' contraction dimensions differ: 32 vs 96}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.gemm %a, %b {trans_b = true} : (tensor<4x32xf32>, tensor<32x96xf32>) -> tensor<4x32xf32>
  return
}

// -----

func.func @gemm_k_trans_a(%a: tensor<4x32xf32>, %b: tensor<32x96xf32>) {
  // expected-error @+2 {{'wsgraph.gemm' contraction dimensions differ: 4 vs 32}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.gemm %a, %b {trans_a = true} : (tensor<4x32xf32>, tensor<32x96xf32>) -> tensor<32x96xf32>
  return
}

// -----

func.func @gemm_result(%a: tensor<32x4xf32>, %b: tensor<96x32xf32>) {
  // expected-error @+2 {{'wsgraph.gemm' op inferred type(s) 'tensor<4x96xf32>' are incompatible with return type(s) of operation 'tensor<32x32xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.gemm %a, %b {trans_a = true, trans_b = true} : (tensor<32x4xf32>, tensor<96x32xf32>) -> tensor<32x32xf32>
  return
}

// -----

func.func @gemm_c_rank(%a: tensor<4x32xf32>, %b: tensor<32x96xf32>, %c: tensor<4x1x96xf32>) {
  // expected-error @+2 {{'wsgraph.gemm' C of shape [4, 1, 96] does not broadcast to [4, 96]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.gemm %a, %b, %c : (tensor<4x32xf32>, tensor<32x96xf32>, tensor<4x1x96xf32>) -> tensor<4x96xf32>
  return
}

// -----

func.func @gemm_c_shape(%a: tensor<4x32xf32>, %b: tensor<32x96xf32>, %c: tensor<95xf32>) {
  // expected-error @+2 {{'wsgraph.gemm' C of shape [95] does not broadcast to [4, 96]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.gemm %a, %b, %c : (tensor<4x32xf32>, tensor<32x96xf32>, tensor<95xf32>) -> tensor<4x96xf32>
  return
}

// -----

func.func @gemm_c_element_type(%a: tensor<4x32xf32>, %b: tensor<32x96xf32>, %c: tensor<96xf16>) {
  // expected-error @+2 {{'wsgraph.gemm' expects operands of one element type, got 'f32' and 'f16'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.gemm %a, %b, %c : (tensor<4x32xf32>, tensor<32x96xf32>, tensor<96xf16>) -> tensor<4x96xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<8x32xf32>, %w: tensor<1x32x96xf32>) {
  // expected-error @+2 {{'wsgraph.linear' expects an input of rank >= 1 and a rank-2 weight, got 'tensor<8x32xf32>' and 'tensor<1x32x96xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.linear %x, %w : (tensor<8x32xf32>, tensor<1x32x96xf32>) -> tensor<8x96xf32>
  return
}

// -----

func.func @linear_input_rank(%x: tensor<f32>, %w: tensor<32x96xf32>) {
  // expected-error @+2 {{'wsgraph.linear' expects an input of rank >= 1 and a rank-2 weight, got 'tensor<f32>' and 'tensor<32x96xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.linear %x, %w : (tensor<f32>, tensor<32x96xf32>) -> tensor<96xf32>
  return
}

// -----

func.func @linear_k(%x: tensor<8x32xf32>, %w: tensor<96x32xf32>) {
  // expected-error @+2 {{'wsgraph.linear' input feature size 32 does not match weight rows 96}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.linear %x, %w : (tensor<8x32xf32>, tensor<96x32xf32>) -> tensor<8x32xf32>
  return
}

// -----

func.func @linear_bias_size(%x: tensor<8x32xf32>, %w: tensor<32x96xf32>, %b: tensor<32xf32>) {
  // expected-error @+2 {{'wsgraph.linear' expects a bias of shape [96], got 'tensor<32xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.linear %x, %w, %b : (tensor<8x32xf32>, tensor<32x96xf32>, tensor<32xf32>) -> tensor<8x96xf32>
  return
}

// -----

func.func @linear_bias_rank(%x: tensor<8x32xf32>, %w: tensor<32x96xf32>, %b: tensor<1x96xf32>) {
  // expected-error @+2 {{'wsgraph.linear' expects a bias of shape [96], got 'tensor<1x96xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.linear %x, %w, %b : (tensor<8x32xf32>, tensor<32x96xf32>, tensor<1x96xf32>) -> tensor<8x96xf32>
  return
}

// -----

func.func @linear_element_type(%x: tensor<8x32xf32>, %w: tensor<32x96xf16>) {
  // expected-error @+2 {{'wsgraph.linear' expects operands of one element type, got 'f32' and 'f16'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.linear %x, %w : (tensor<8x32xf32>, tensor<32x96xf16>) -> tensor<8x96xf32>
  return
}

// -----

func.func @linear_bias_element_type(%x: tensor<8x32xf16>, %w: tensor<32x96xf16>, %b: tensor<96xf32>) {
  // expected-error @+2 {{'wsgraph.linear' expects operands of one element type, got 'f16' and 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.linear %x, %w, %b : (tensor<8x32xf16>, tensor<32x96xf16>, tensor<96xf32>) -> tensor<8x96xf16>
  return
}

//===----------------------------------------------------------------------===//
// Normalization and attention
//===----------------------------------------------------------------------===//

// -----

func.func @softmax_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'wsgraph.softmax' op axis 2 is out of range for rank 2}}
  %0 = wsgraph.softmax %x {axis = 2 : i64} : tensor<2x8xf32>
  return
}

// -----

func.func @softmax_negative_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'wsgraph.softmax' op axis -3 is out of range for rank 2}}
  %0 = wsgraph.softmax %x {axis = -3 : i64} : tensor<2x8xf32>
  return
}

// -----

func.func @log_softmax_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'wsgraph.log_softmax' op axis -3 is out of range for rank 2}}
  %0 = wsgraph.log_softmax %x {axis = -3 : i64} : tensor<2x8xf32>
  return
}

// -----

func.func @softmax_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'wsgraph.softmax' op requires the same type for all operands and results}}
  %0 = "wsgraph.softmax"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<1x8x32xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'wsgraph.layer_norm' op axis 3 is out of range for rank 3}}
  %0 = wsgraph.layer_norm %x, %g {axis = 3 : i64} : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  return
}

// -----

func.func @layer_norm_negative_axis(%x: tensor<1x8x32xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'wsgraph.layer_norm' op axis -4 is out of range for rank 3}}
  %0 = wsgraph.layer_norm %x, %g {axis = -4 : i64} : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  return
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<1x8x32xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'wsgraph.layer_norm' op expects scale of type 'tensor<8x32xf32>', got 'tensor<32xf32>'}}
  %0 = wsgraph.layer_norm %x, %g {axis = -2 : i64} : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  return
}

// -----

func.func @layer_norm_bias_shape(%x: tensor<1x8x32xf32>, %g: tensor<32xf32>, %b: tensor<1x32xf32>) {
  // expected-error @+1 {{'wsgraph.layer_norm' op expects bias of type 'tensor<32xf32>', got 'tensor<1x32xf32>'}}
  %0 = wsgraph.layer_norm %x, %g, %b : (tensor<1x8x32xf32>, tensor<32xf32>, tensor<1x32xf32>) -> tensor<1x8x32xf32>
  return
}

// -----

func.func @layer_norm_scale_element_type(%x: tensor<1x8x32xf32>, %g: tensor<32xf16>) {
  // expected-error @+1 {{'wsgraph.layer_norm' op expects scale of type 'tensor<32xf32>', got 'tensor<32xf16>'}}
  %0 = wsgraph.layer_norm %x, %g : (tensor<1x8x32xf32>, tensor<32xf16>) -> tensor<1x8x32xf32>
  return
}

// -----

func.func @layer_norm_result(%x: tensor<1x8x32xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'wsgraph.layer_norm' op failed to verify that all of {input, result} have same type}}
  %0 = wsgraph.layer_norm %x, %g : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  return
}

// -----

func.func @gelu_form(%x: tensor<4xf32>) {
  // expected-error @+1 {{'wsgraph.gelu' op approximate "sigmoid" is not one of "none", "tanh"}}
  %0 = wsgraph.gelu %x {approximate = "sigmoid"} : tensor<4xf32>
  return
}

// -----

func.func @rms_norm_axis(%x: tensor<1x8x32xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'wsgraph.rms_norm' op axis 3 is out of range for rank 3}}
  %0 = wsgraph.rms_norm %x, %g {axis = 3 : i64} : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  return
}

// -----

func.func @rms_norm_scale_shape(%x: tensor<1x8x32xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'wsgraph.rms_norm' op expects scale of type 'tensor<8x32xf32>', got 'tensor<32xf32>'}}
  %0 = wsgraph.rms_norm %x, %g {axis = -2 : i64} : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  return
}

// -----

func.func @rms_norm_scale_element_type(%x: tensor<1x8x32xf32>, %g: tensor<32xf16>) {
  // expected-error @+1 {{'wsgraph.rms_norm' op expects scale of type 'tensor<32xf32>', got 'tensor<32xf16>'}}
  %0 = wsgraph.rms_norm %x, %g : (tensor<1x8x32xf32>, tensor<32xf16>) -> tensor<1x8x32xf32>
  return
}

// -----

func.func @rms_norm_epsilon(%x: tensor<1x8x32xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'wsgraph.rms_norm' op epsilon -1.000000e-05 is negative}}
  %0 = wsgraph.rms_norm %x, %g {epsilon = -1.0e-05 : f32} : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  return
}

// -----

func.func @rms_norm_result(%x: tensor<1x8x32xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'wsgraph.rms_norm' op failed to verify that all of {input, result} have same type}}
  %0 = wsgraph.rms_norm %x, %g : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  return
}

// -----

func.func @attention_mask_shape(%q: tensor<1x2x8x16xf32>, %m: tensor<1x4xf32>) {
  // expected-error @+1 {{'wsgraph.attention' op mask must be [B, S] [1, 8] of the queries' element type, not 'tensor<1x4xf32>'}}
  %0 = wsgraph.attention %q, %q, %q, %m {scale = 1.0 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4xf32>) -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_future_fill_not_causal(%q: tensor<1x2x8x16xf32>, %m: tensor<1x8xf32>) {
  // expected-error @+1 {{'wsgraph.attention' op future_fill needs causal}}
  %0 = wsgraph.attention %q, %q, %q, %m {causal = false, future_fill = -1.0e+30 : f32, scale = 1.0 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x8xf32>) -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_future_fill_infinite(%q: tensor<1x2x8x16xf32>, %m: tensor<1x8xf32>) {
  // expected-error @+1 {{'wsgraph.attention' op future_fill must be finite (an infinite fill is causal's default)}}
  %0 = wsgraph.attention %q, %q, %q, %m {future_fill = 0xFF800000 : f32, scale = 1.0 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x8xf32>) -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_rank(%q: tensor<2x8x16xf32>) {
  // expected-error @+2 {{'wsgraph.attention' expects rank-4 [B, H, T, D] operands}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.attention %q, %q, %q {scale = 1.0 : f32} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+2 {{'wsgraph.attention' operand shapes [1, 2, 8, 16], [1, 2, 8, 8] and [1, 2, 8, 16] are not [B,H,T,D], [B,H,S,D], [B,H,S,E]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_keys(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x9x16xf32>) {
  // expected-error @+2 {{'wsgraph.attention' operand shapes [1, 2, 8, 16], [1, 2, 8, 16] and [1, 2, 9, 16] are not [B,H,T,D], [B,H,S,D], [B,H,S,E]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x9x16xf32>) -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<1x2x8x16xf32>, %k: tensor<1x4x8x16xf32>) {
  // expected-error @+2 {{'wsgraph.attention' operand shapes [1, 2, 8, 16], [1, 4, 8, 16] and [1, 4, 8, 16] are not [B,H,T,D], [B,H,S,D], [B,H,S,E]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.attention %q, %k, %k {scale = 1.0 : f32} : (tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_result(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x4xf32>) {
  // expected-error @+2 {{'wsgraph.attention' op inferred type(s) 'tensor<1x2x8x4xf32>' are incompatible with return type(s) of operation 'tensor<1x2x12x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x4xf32>) -> tensor<1x2x12x4xf32>
  return
}

// -----

func.func @attention_element_type(%q: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf16>) {
  // expected-error @+2 {{'wsgraph.attention' expects operands of one element type, got 'f32' and 'f16'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.attention %q, %q, %v {scale = 1.0 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf16>) -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'wsgraph.attention' op requires attribute 'scale'}}
  %0 = wsgraph.attention %q, %q, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// Reductions (verify() reports bad axes before type inference runs)
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_axis_range(%x: tensor<1x8x32xf32>) {
  // expected-error @+1 {{'wsgraph.reduce_mean' axis 3 is out of range for rank 3}}
  %0 = wsgraph.reduce_mean %x {axes = array<i64: 3>} : (tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  return
}

// -----

func.func @reduce_negative_axis_range(%x: tensor<1x8x32xf32>) {
  // expected-error @+1 {{'wsgraph.reduce_max' axis -4 is out of range for rank 3}}
  %0 = wsgraph.reduce_max %x {axes = array<i64: -4>} : (tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  return
}

// -----

func.func @reduce_axis_repeated(%x: tensor<1x8x32xf32>) {
  // -1 and 2 are the same axis.
  // expected-error @+1 {{'wsgraph.reduce_sum' axis -1 is repeated}}
  %0 = wsgraph.reduce_sum %x {axes = array<i64: 2, -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  return
}

// -----

func.func @reduce_min_axis_range(%x: tensor<1x8x32xf32>) {
  // expected-error @+1 {{'wsgraph.reduce_min' axis 3 is out of range for rank 3}}
  %0 = wsgraph.reduce_min %x {axes = array<i64: 3>} : (tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  return
}

// -----

func.func @reduce_keepdims(%x: tensor<1x8x32xf32>) {
  // expected-error @+2 {{'wsgraph.reduce_sum' op inferred type(s) 'tensor<1x8xf32>' are incompatible with return type(s) of operation 'tensor<1x8x1xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.reduce_sum %x {axes = array<i64: 2>, keepdims = false} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  return
}

//===----------------------------------------------------------------------===//
// Data movement and shapes
//===----------------------------------------------------------------------===//

// -----

func.func @transpose_repeated(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'wsgraph.transpose' perm [0, 0, 2] is not a permutation of 3 dimensions}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.transpose %x {perm = array<i64: 0, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<2x2x4xf32>
  return
}

// -----

func.func @transpose_length(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'wsgraph.transpose' perm [1, 0] is not a permutation of 3 dimensions}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @transpose_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'wsgraph.transpose' perm [0, 2] is not a permutation of 2 dimensions}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.transpose %x {perm = array<i64: 0, 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @transpose_result(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'wsgraph.transpose' op inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'wsgraph.reshape' op cannot reshape 6 elements 'tensor<2x3xf32>' into 7 elements 'tensor<7xf32>'}}
  %0 = wsgraph.reshape %x : (tensor<2x3xf32>) -> tensor<7xf32>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'wsgraph.reshape' op element type changes from 'f32' to 'f16'}}
  %0 = wsgraph.reshape %x : (tensor<2x3xf32>) -> tensor<6xf16>
  return
}

// -----

func.func @expand_shape(%x: tensor<2x8xi64>) {
  // expected-error @+1 {{'wsgraph.expand' op cannot broadcast 'tensor<2x8xi64>' to 'tensor<3x8xi64>'}}
  %0 = wsgraph.expand %x : (tensor<2x8xi64>) -> tensor<3x8xi64>
  return
}

// -----

func.func @expand_lower_rank(%x: tensor<2x8xi64>) {
  // expected-error @+1 {{'wsgraph.expand' op cannot broadcast 'tensor<2x8xi64>' to 'tensor<8xi64>'}}
  %0 = wsgraph.expand %x : (tensor<2x8xi64>) -> tensor<8xi64>
  return
}

// -----

func.func @expand_element_type(%x: tensor<1x8xi64>) {
  // expected-error @+1 {{'wsgraph.expand' op element type changes from 'i64' to 'i32'}}
  %0 = wsgraph.expand %x : (tensor<1x8xi64>) -> tensor<2x8xi32>
  return
}

// -----

func.func @unsqueeze_axis_range(%x: tensor<8xi64>) {
  // Axes count in the result's rank, 2 here.
  // expected-error @+2 {{'wsgraph.unsqueeze' axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.unsqueeze %x {axes = array<i64: 2>} : (tensor<8xi64>) -> tensor<8x1xi64>
  return
}

// -----

func.func @unsqueeze_axis_repeated(%x: tensor<8xi64>) {
  // expected-error @+2 {{'wsgraph.unsqueeze' axis -3 is repeated}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.unsqueeze %x {axes = array<i64: 0, -3>} : (tensor<8xi64>) -> tensor<1x1x8xi64>
  return
}

// -----

func.func @squeeze_not_one(%x: tensor<1x8xi64>) {
  // expected-error @+2 {{'wsgraph.squeeze' dimension 1 has size 8, not 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.squeeze %x {axes = array<i64: -1>} : (tensor<1x8xi64>) -> tensor<1xi64>
  return
}

// -----

func.func @squeeze_axis_range(%x: tensor<1x8xi64>) {
  // expected-error @+2 {{'wsgraph.squeeze' axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.squeeze %x {axes = array<i64: 2>} : (tensor<1x8xi64>) -> tensor<1x8xi64>
  return
}

// -----

func.func @gather_axis(%d: tensor<64x32xf32>, %i: tensor<8xi64>) {
  // expected-error @+2 {{'wsgraph.gather' axis -3 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.gather %d, %i {axis = -3 : i64} : (tensor<64x32xf32>, tensor<8xi64>) -> tensor<8x32xf32>
  return
}

// -----

func.func @gather_indices_type(%d: tensor<64x32xf32>, %i: tensor<8xf32>) {
  // expected-error @+1 {{'wsgraph.gather' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf32>'}}
  %0 = wsgraph.gather %d, %i : (tensor<64x32xf32>, tensor<8xf32>) -> tensor<8x32xf32>
  return
}

// -----

func.func @gather_elements_rank(%d: tensor<3x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+2 {{'wsgraph.gather_elements' expects data and indices of one rank, got 'tensor<3x4xf32>' and 'tensor<3xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.gather_elements %d, %i : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<3xf32>
  return
}

// -----

func.func @gather_elements_axis(%d: tensor<3x4xf32>, %i: tensor<3x2xi64>) {
  // expected-error @+2 {{'wsgraph.gather_elements' axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.gather_elements %d, %i {axis = 2 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  return
}

// -----

func.func @gather_elements_larger(%d: tensor<3x4xf32>, %i: tensor<3x5xi64>) {
  // Along the other dimensions the indices take the same positions in data.
  // expected-error @+2 {{'wsgraph.gather_elements' indices dimension 1 (5) is larger than the data's (4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.gather_elements %d, %i {axis = 0 : i64} : (tensor<3x4xf32>, tensor<3x5xi64>) -> tensor<3x5xf32>
  return
}

// -----

func.func @gather_elements_indices_type(%d: tensor<3x4xf32>, %i: tensor<3x2xf32>) {
  // expected-error @+1 {{'wsgraph.gather_elements' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<3x2xf32>'}}
  %0 = wsgraph.gather_elements %d, %i : (tensor<3x4xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @tile_count(%x: tensor<2x4xf32>) {
  // expected-error @+2 {{'wsgraph.tile' expects 2 repeat counts, one per dimension, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.tile %x {repeats = array<i64: 3>} : (tensor<2x4xf32>) -> tensor<2x12xf32>
  return
}

// -----

func.func @tile_negative(%x: tensor<2x4xf32>) {
  // expected-error @+2 {{'wsgraph.tile' repeat counts must be non-negative, got [1, -2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.tile %x {repeats = array<i64: 1, -2>} : (tensor<2x4xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @tile_result(%x: tensor<2x4xf32>) {
  // expected-error @+2 {{'wsgraph.tile' op inferred type(s) 'tensor<4x4xf32>' are incompatible with return type(s) of operation 'tensor<2x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.tile %x {repeats = array<i64: 2, 1>} : (tensor<2x4xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @gather_result(%d: tensor<64x32xf32>, %i: tensor<8xi64>) {
  // expected-error @+2 {{'wsgraph.gather' op inferred type(s) 'tensor<64x8xf32>' are incompatible with return type(s) of operation 'tensor<8x32xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.gather %d, %i {axis = 1 : i64} : (tensor<64x32xf32>, tensor<8xi64>) -> tensor<8x32xf32>
  return
}

// -----

func.func @concat_no_inputs() {
  // expected-error @+2 {{'wsgraph.concat' needs at least one input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.concat {axis = 0 : i64} : () -> tensor<0xi64>
  return
}

// -----

func.func @concat_rank(%a: tensor<2xi64>, %b: tensor<1x1xi64>) {
  // expected-error @+2 {{'wsgraph.concat' inputs 'tensor<2xi64>' and 'tensor<1x1xi64>' differ in rank or element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.concat %a, %b {axis = 0 : i64} : (tensor<2xi64>, tensor<1x1xi64>) -> tensor<3xi64>
  return
}

// -----

func.func @concat_element_type(%a: tensor<2xi64>, %b: tensor<1xi32>) {
  // expected-error @+2 {{'wsgraph.concat' inputs 'tensor<2xi64>' and 'tensor<1xi32>' differ in rank or element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.concat %a, %b {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi32>) -> tensor<3xi64>
  return
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+2 {{'wsgraph.concat' inputs 'tensor<2x3xf32>' and 'tensor<2x4xf32>' differ in dimension 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'wsgraph.concat' axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_result(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) {
  // expected-error @+2 {{'wsgraph.concat' op inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.concat %a, %b {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @slice_counts(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'wsgraph.slice' op expects 2 offsets, sizes and strides, got 1, 2 and 2}}
  %0 = wsgraph.slice %x {offsets = array<i64: 0>, sizes = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @slice_zero_stride(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'wsgraph.slice' op stride of dimension 1 is zero}}
  %0 = wsgraph.slice %x {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 2>, strides = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @slice_past_end(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'wsgraph.slice' op dimension 1 selects indices 1 to 5, outside [0, 4)}}
  %0 = wsgraph.slice %x {offsets = array<i64: 0, 1>, sizes = array<i64: 2, 3>, strides = array<i64: 1, 2>} : (tensor<4x4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @slice_offset_out_of_bounds(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'wsgraph.slice' op dimension 0 selects indices 4 to 4, outside [0, 4)}}
  %0 = wsgraph.slice %x {offsets = array<i64: 4, 0>, sizes = array<i64: 1, 2>, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<1x2xf32>
  return
}

// -----

func.func @slice_negative_offset(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'wsgraph.slice' op dimension 1 selects indices -1 to 0, outside [0, 4)}}
  %0 = wsgraph.slice %x {offsets = array<i64: 0, -1>, sizes = array<i64: 1, 2>, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<1x2xf32>
  return
}

// -----

func.func @slice_before_start(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'wsgraph.slice' op dimension 0 selects indices 1 to -1, outside [0, 4)}}
  %0 = wsgraph.slice %x {offsets = array<i64: 1, 0>, sizes = array<i64: 3, 2>, strides = array<i64: -1, 1>} : (tensor<4x4xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @slice_negative_size(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'wsgraph.slice' op size of dimension 1 is negative}}
  %0 = wsgraph.slice %x {offsets = array<i64: 0, 0>, sizes = array<i64: 2, -2>, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<2x?xf32>
  return
}

// -----

func.func @slice_result(%x: tensor<4x4xf32>) {
  // expected-error @+2 {{'wsgraph.slice' op inferred type(s) 'tensor<2x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = wsgraph.slice %x {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @split_sizes_sum(%x: tensor<1x8x96xf32>) {
  // expected-error @+1 {{'wsgraph.split' op split sizes add up to 64, but dimension 2 has size 96}}
  %0:2 = wsgraph.split %x {axis = 2 : i64, sizes = array<i64: 32, 32>} : (tensor<1x8x96xf32>) -> (tensor<1x8x32xf32>, tensor<1x8x32xf32>)
  return
}

// -----

func.func @split_negative_size(%x: tensor<1x8x96xf32>) {
  // expected-error @+1 {{'wsgraph.split' op split sizes must be non-negative}}
  %0:2 = wsgraph.split %x {axis = 2 : i64, sizes = array<i64: 100, -4>} : (tensor<1x8x96xf32>) -> (tensor<1x8x100xf32>, tensor<1x8x?xf32>)
  return
}

// -----

func.func @split_axis(%x: tensor<1x8x96xf32>) {
  // expected-error @+1 {{'wsgraph.split' op axis 3 is out of range for rank 3}}
  %0:2 = wsgraph.split %x {axis = 3 : i64, sizes = array<i64: 48, 48>} : (tensor<1x8x96xf32>) -> (tensor<1x8x48xf32>, tensor<1x8x48xf32>)
  return
}

// -----

func.func @split_results(%x: tensor<1x8x96xf32>) {
  // expected-error @+2 {{'wsgraph.split' op inferred type(s) 'tensor<1x8x32xf32>', 'tensor<1x8x32xf32>', 'tensor<1x8x32xf32>' are incompatible with return type(s) of operation 'tensor<1x8x32xf32>', 'tensor<1x8x64xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = wsgraph.split %x {axis = 2 : i64, sizes = array<i64: 32, 32, 32>} : (tensor<1x8x96xf32>) -> (tensor<1x8x32xf32>, tensor<1x8x64xf32>)
  return
}

// -----

func.func @trilu_rank(%x: tensor<8xf32>) {
  // expected-error @+1 {{'wsgraph.trilu' op expects rank 2 or more, got 'tensor<8xf32>'}}
  %0 = wsgraph.trilu %x : tensor<8xf32>
  return
}

// -----

func.func @range_element_type(%s: tensor<i64>, %f: tensor<f32>) {
  // expected-error @+1 {{'wsgraph.range' op expects scalar operands of the result element type 'i64', got 'tensor<f32>'}}
  %0 = wsgraph.range %s, %f, %s : (tensor<i64>, tensor<f32>, tensor<i64>) -> tensor<4xi64>
  return
}

// -----

func.func @range_not_scalar(%s: tensor<i64>, %v: tensor<2xi64>) {
  // expected-error @+1 {{'wsgraph.range' op expects scalar operands of the result element type 'i64', got 'tensor<2xi64>'}}
  %0 = wsgraph.range %s, %s, %v : (tensor<i64>, tensor<i64>, tensor<2xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @range_dynamic_operand(%s: tensor<i64>, %v: tensor<?xi64>) {
  // expected-error @+1 {{'wsgraph.range' op expects scalar operands of the result element type 'i64', got 'tensor<?xi64>'}}
  %0 = wsgraph.range %v, %s, %s : (tensor<?xi64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  return
}

// -----

func.func @range_result_rank(%s: tensor<i64>) {
  // expected-error @+1 {{'wsgraph.range' op result must be 1-D, got 'tensor<2x2xi64>'}}
  %0 = wsgraph.range %s, %s, %s : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2x2xi64>
  return
}

// -----

func.func @shape_result(%x: tensor<1x8x32xf32>) {
  // expected-error @+1 {{'wsgraph.shape' op result must be tensor<3xi64>, got 'tensor<2xi64>'}}
  %0 = wsgraph.shape %x : (tensor<1x8x32xf32>) -> tensor<2xi64>
  return
}

// -----

func.func @shape_result_clamped(%x: tensor<1x8x32xf32>) {
  // start -2 is 1 and end 5 is clamped to 3: two dimensions.
  // expected-error @+1 {{'wsgraph.shape' op result must be tensor<2xi64>, got 'tensor<3xi64>'}}
  %0 = wsgraph.shape %x {start = -2 : i64, end = 5 : i64} : (tensor<1x8x32xf32>) -> tensor<3xi64>
  return
}

// -----

func.func @shape_result_rank(%x: tensor<1x8x32xf32>) {
  // expected-error @+1 {{'wsgraph.shape' op result must be tensor<3xi64>, got 'tensor<1x3xi64>'}}
  %0 = wsgraph.shape %x : (tensor<1x8x32xf32>) -> tensor<1x3xi64>
  return
}

// -----

func.func @shape_result_element_type(%x: tensor<1x8x32xf32>) {
  // expected-error @+1 {{'wsgraph.shape' op result #0 must be ranked tensor of 64-bit signless integer values, but got 'tensor<3xi32>'}}
  %0 = wsgraph.shape %x : (tensor<1x8x32xf32>) -> tensor<3xi32>
  return
}

//===----------------------------------------------------------------------===//
// Constants and weights
//===----------------------------------------------------------------------===//

// -----

func.func @weight_dynamic_shape() {
  // expected-error @+1 {{'wsgraph.weight' op weight must have a static shape, got 'tensor<?x32xf32>'}}
  %0 = wsgraph.weight "w" from "w.bin" at 0 : tensor<?x32xf32>
  return
}

// -----

func.func @weight_strides_rank() {
  // expected-error @+1 {{'wsgraph.weight' op has 1 strides for a rank-2 weight}}
  %0 = wsgraph.weight "w" from "w.bin" at 0 {strides = array<i64: 1>} : tensor<4x32xf32>
  return
}

// -----

func.func @weight_negative_stride() {
  // expected-error @+1 {{'wsgraph.weight' op strides must be non-negative}}
  %0 = wsgraph.weight "w" from "w.bin" at 0 {strides = array<i64: -1, 4>} : tensor<4x32xf32>
  return
}

// -----

func.func @weight_negative_offset() {
  // expected-error @+1 {{'wsgraph.weight' op offset must be non-negative, got -4}}
  %0 = wsgraph.weight "w" from "w.bin" at -4 : tensor<4x32xf32>
  return
}

// -----

func.func @weight_empty_file_name() {
  // expected-error @+1 {{'wsgraph.weight' op file name must not be empty}}
  %0 = wsgraph.weight "w" from "" at 0 : tensor<4x32xf32>
  return
}

// -----

func.func @weight_syntax() {
  // expected-error @+1 {{expected 'elided'}}
  %0 = wsgraph.weight "w" : tensor<4x32xf32>
  return
}

// -----

func.func @weight_syntax_at() {
  // expected-error @+1 {{expected 'at'}}
  %0 = wsgraph.weight "w" from "w.bin" : tensor<4x32xf32>
  return
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{'wsgraph.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "wsgraph.constant"() <{value = dense<[1, 2]> : tensor<2xi64>}> : () -> tensor<2xi32>
  return
}

// -----

func.func @rotary_odd(%x: tensor<1x2x8x16xf32>, %c: tensor<8x3xf32>) {
  // expected-error @+1 {{'wsgraph.rotary' op rotates 3 of 16 dimensions; it must be even, positive and at most D}}
  %0 = wsgraph.rotary %x, %c, %c : (tensor<1x2x8x16xf32>, tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @rotary_positions(%x: tensor<1x2x8x16xf32>, %c: tensor<4x16xf32>) {
  // expected-error @+1 {{'wsgraph.rotary' op table 'tensor<4x16xf32>' does not broadcast to [1, 2, 8, 16]}}
  %0 = wsgraph.rotary %x, %c, %c : (tensor<1x2x8x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @rotary_types(%x: tensor<1x2x8x16xf32>, %c: tensor<8x16xf16>) {
  // expected-error @+1 {{'wsgraph.rotary' op tables must have the input's element type, not 'tensor<8x16xf16>'}}
  %0 = wsgraph.rotary %x, %c, %c : (tensor<1x2x8x16xf32>, tensor<8x16xf16>, tensor<8x16xf16>) -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @argmax_axis(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{'wsgraph.argmax' op axis 3 is out of range for rank 3}}
  %0 = wsgraph.argmax %x {axis = 3 : i64} : (tensor<1x8x64xf32>) -> tensor<1x8xi64>
  return
}

// -----

func.func @sample_rank(%x: tensor<8x64xf32>, %p: tensor<2xf32>) {
  // expected-error @+1 {{'wsgraph.sample' op logits must be [B, T, V], not 'tensor<8x64xf32>'}}
  %0 = wsgraph.sample %x, %p : (tensor<8x64xf32>, tensor<2xf32>) -> tensor<8xi64>
  return
}

// -----

func.func @sample_params(%x: tensor<1x8x64xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'wsgraph.sample' op params must be [temperature, seed] or [temperature, seed, top_k], a tensor<2xf32> or tensor<3xf32>, not 'tensor<4xf32>'}}
  %0 = wsgraph.sample %x, %p : (tensor<1x8x64xf32>, tensor<4xf32>) -> tensor<1x8xi64>
  return
}

// -----

func.func @sample_shape(%x: tensor<1x8x64xf32>, %p: tensor<2xf32>) {
  // expected-error @+1 {{'wsgraph.sample' op result must be [1, 8], not [1, 8, 1]}}
  %0 = wsgraph.sample %x, %p : (tensor<1x8x64xf32>, tensor<2xf32>) -> tensor<1x8x1xi64>
  return
}

// -----

func.func @argmax_shape(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{'wsgraph.argmax' op result must be [1, 8], not [1, 8, 1]}}
  %0 = wsgraph.argmax %x : (tensor<1x8x64xf32>) -> tensor<1x8x1xi64>
  return
}

