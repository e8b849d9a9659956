// RUN: wsc-opt %s | wsc-opt | FileCheck %s
// RUN: wsc-opt %s --mlir-print-op-generic | wsc-opt | FileCheck %s
// RUN: wsc-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round trip of every wsgraph op through the custom and the generic form.

// CHECK-LABEL: func.func @constant
// CHECK-NEXT: %[[I:.*]] = wsgraph.constant dense<[1, 8, 32]> : tensor<3xi64>
// CHECK-NEXT: %[[F:.*]] = wsgraph.constant dense<{{\[}}[1.000000e+00, 2.500000e+00]]> : tensor<1x2xf32>
// CHECK-NEXT: %[[B:.*]] = wsgraph.constant dense<true> : tensor<2x2xi1>
// CHECK-NEXT: %[[S:.*]] = wsgraph.constant dense<0xFF800000> : tensor<f32>
// CHECK-NEXT: return %[[I]], %[[F]], %[[B]], %[[S]]
func.func @constant() -> (tensor<3xi64>, tensor<1x2xf32>, tensor<2x2xi1>, tensor<f32>) {
  %0 = wsgraph.constant dense<[1, 8, 32]> : tensor<3xi64>
  %1 = wsgraph.constant dense<[[1.0, 2.5]]> : tensor<1x2xf32>
  %2 = wsgraph.constant dense<true> : tensor<2x2xi1>
  %3 = wsgraph.constant dense<0xFF800000> : tensor<f32>
  return %0, %1, %2, %3 : tensor<3xi64>, tensor<1x2xf32>, tensor<2x2xi1>, tensor<f32>
}

// CHECK-LABEL: func.func @weight
// CHECK-NEXT: %[[W:.*]] = wsgraph.weight "h.0.attn.c_attn.weight" from "model.onnx.data" at 4096 : tensor<32x96xf32>
// CHECK-NEXT: %[[Z:.*]] = wsgraph.weight "ln_f.bias" from "dir/w.bin" at 0 : tensor<32xf16>
// CHECK-NEXT: %[[E:.*]] = wsgraph.weight "wte.weight" elided : tensor<50257x768xf32>
// CHECK-NEXT: %[[A:.*]] = wsgraph.weight "with.attr" elided {note = "x"} : tensor<2xi64>
// CHECK-NEXT: %[[O:.*]] = wsgraph.weight "elided.offset" elided {offset = 64 : i64} : tensor<2xi64>
// CHECK-NEXT: %[[T:.*]] = wsgraph.weight "fc.weight" from "m.onnx" at 64 {strides = array<i64: 1, 32>} : tensor<32x96xf32>
// CHECK-NEXT: return %[[W]], %[[Z]], %[[E]], %[[A]], %[[O]], %[[T]]
// GENERIC-LABEL: "func.func"() <{{.*}}sym_name = "weight"
// GENERIC: "wsgraph.weight"() <{file = "model.onnx.data", name = "h.0.attn.c_attn.weight", offset = 4096 : i64}>
// GENERIC: "wsgraph.weight"() <{file = "dir/w.bin", name = "ln_f.bias", offset = 0 : i64}>
// GENERIC: "wsgraph.weight"() <{name = "wte.weight", offset = 0 : i64}>
// GENERIC: "wsgraph.weight"() <{name = "with.attr", offset = 0 : i64}> {note = "x"}
// GENERIC: "wsgraph.weight"() <{name = "elided.offset", offset = 64 : i64}>
// GENERIC: "wsgraph.weight"() <{file = "m.onnx", name = "fc.weight", offset = 64 : i64, strides = array<i64: 1, 32>}>
func.func @weight() -> (tensor<32x96xf32>, tensor<32xf16>, tensor<50257x768xf32>, tensor<2xi64>, tensor<2xi64>, tensor<32x96xf32>) {
  %0 = wsgraph.weight "h.0.attn.c_attn.weight" from "model.onnx.data" at 4096 : tensor<32x96xf32>
  %1 = wsgraph.weight "ln_f.bias" from "dir/w.bin" at 0 : tensor<32xf16>
  %2 = wsgraph.weight "wte.weight" elided : tensor<50257x768xf32>
  %3 = wsgraph.weight "with.attr" elided {note = "x"} : tensor<2xi64>
  // An elided weight keeps a nonzero offset through the custom form.
  %4 = "wsgraph.weight"() <{name = "elided.offset", offset = 64 : i64}> : () -> tensor<2xi64>
  // A view: the file holds the [96, 32] transpose.
  %5 = wsgraph.weight "fc.weight" from "m.onnx" at 64 {strides = array<i64: 1, 32>} : tensor<32x96xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<32x96xf32>, tensor<32xf16>, tensor<50257x768xf32>, tensor<2xi64>, tensor<2xi64>, tensor<32x96xf32>
}

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:.*]]: tensor<2x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[I:.*]]: tensor<2x1xi64>, %[[J:.*]]: tensor<3xi64>, %[[E:.*]]: tensor<i64>)
// CHECK-NEXT: wsgraph.add %[[A]], %[[B]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: wsgraph.sub %[[B]], %[[A]] : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: wsgraph.mul %[[A]], %[[A]] : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: wsgraph.div %[[I]], %[[J]] : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
// CHECK-NEXT: wsgraph.pow %[[A]], %[[B]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: wsgraph.pow %[[B]], %[[E]] : (tensor<8xf32>, tensor<i64>) -> tensor<8xf32>
// CHECK-NEXT: wsgraph.equal %[[I]], %[[J]] : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi1>
// CHECK-NEXT: wsgraph.add %[[A]], %[[B]] {tag} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
func.func @binary(%a: tensor<2x8xf32>, %b: tensor<8xf32>, %i: tensor<2x1xi64>, %j: tensor<3xi64>, %e: tensor<i64>) {
  %0 = wsgraph.add %a, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %1 = wsgraph.sub %b, %a : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = wsgraph.mul %a, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = wsgraph.div %i, %j : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %4 = wsgraph.pow %a, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %5 = wsgraph.pow %b, %e : (tensor<8xf32>, tensor<i64>) -> tensor<8xf32>
  %6 = wsgraph.equal %i, %j : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi1>
  %7 = wsgraph.add %a, %b {tag} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// Dynamic dimensions broadcast against static ones.
// CHECK-LABEL: func.func @binary_dynamic
// CHECK-NEXT: wsgraph.add %{{.*}}, %{{.*}} : (tensor<?x8xf32>, tensor<1x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: wsgraph.mul %{{.*}}, %{{.*}} : (tensor<?x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
func.func @binary_dynamic(%a: tensor<?x8xf32>, %b: tensor<1x8xf32>, %c: tensor<4x1xf32>) {
  %0 = wsgraph.add %a, %b : (tensor<?x8xf32>, tensor<1x8xf32>) -> tensor<?x8xf32>
  %1 = wsgraph.mul %a, %c : (tensor<?x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return
}

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[H:.*]]: tensor<4xf16>)
// CHECK-NEXT: wsgraph.sqrt %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.erf %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.tanh %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.exp %[[H]] : tensor<4xf16>
// CHECK-NEXT: wsgraph.neg %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.gelu %[[X]] : tensor<2x8xf32>
// The default form, exact, is not printed; the tanh one is.
// CHECK-NEXT: wsgraph.gelu %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.gelu %[[X]] {approximate = "tanh"} : tensor<2x8xf32>
func.func @unary(%x: tensor<2x8xf32>, %h: tensor<4xf16>) {
  %0 = wsgraph.sqrt %x : tensor<2x8xf32>
  %1 = wsgraph.erf %x : tensor<2x8xf32>
  %2 = wsgraph.tanh %x : tensor<2x8xf32>
  %3 = wsgraph.exp %h : tensor<4xf16>
  %4 = wsgraph.neg %x : tensor<2x8xf32>
  %5 = wsgraph.gelu %x : tensor<2x8xf32>
  %6 = wsgraph.gelu %x {approximate = "none"} : tensor<2x8xf32>
  %7 = wsgraph.gelu %x {approximate = "tanh"} : tensor<2x8xf32>
  return
}

// CHECK-LABEL: func.func @binary_more
// CHECK-SAME: (%[[A:.*]]: tensor<2x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[I:.*]]: tensor<2x1xi64>, %[[J:.*]]: tensor<3xi64>, %[[S:.*]]: tensor<f32>)
// CHECK-NEXT: wsgraph.max %[[A]], %[[B]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: wsgraph.min %[[I]], %[[J]] : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
// CHECK-NEXT: wsgraph.mod %[[I]], %[[J]] : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
// CHECK-NEXT: wsgraph.mod %[[I]], %[[J]] {fmod = true} : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
// CHECK-NEXT: wsgraph.mod %[[B]], %[[S]] {fmod = true} : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
func.func @binary_more(%a: tensor<2x8xf32>, %b: tensor<8xf32>, %i: tensor<2x1xi64>, %j: tensor<3xi64>, %s: tensor<f32>) {
  %0 = wsgraph.max %a, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %1 = wsgraph.min %i, %j : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %2 = wsgraph.mod %i, %j {fmod = false} : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %3 = wsgraph.mod %i, %j {fmod = true} : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %4 = wsgraph.mod %b, %s {fmod = true} : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return
}

// Comparisons give i1; logical ops take and give i1.
// CHECK-LABEL: func.func @compare_logical
// CHECK-SAME: (%[[A:.*]]: tensor<2x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[I:.*]]: tensor<2x1xi32>, %[[J:.*]]: tensor<3xi32>, %[[P:.*]]: tensor<2x1xi1>, %[[Q:.*]]: tensor<3xi1>)
// CHECK-NEXT: wsgraph.less %[[A]], %[[B]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xi1>
// CHECK-NEXT: wsgraph.less_equal %[[I]], %[[J]] : (tensor<2x1xi32>, tensor<3xi32>) -> tensor<2x3xi1>
// CHECK-NEXT: wsgraph.greater %[[B]], %[[A]] : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xi1>
// CHECK-NEXT: wsgraph.greater_equal %[[J]], %[[I]] : (tensor<3xi32>, tensor<2x1xi32>) -> tensor<2x3xi1>
// CHECK-NEXT: wsgraph.and %[[P]], %[[Q]] : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: wsgraph.or %[[P]], %[[P]] : (tensor<2x1xi1>, tensor<2x1xi1>) -> tensor<2x1xi1>
// CHECK-NEXT: wsgraph.xor %[[Q]], %[[P]] : (tensor<3xi1>, tensor<2x1xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: wsgraph.not %[[Q]] : tensor<3xi1>
func.func @compare_logical(%a: tensor<2x8xf32>, %b: tensor<8xf32>, %i: tensor<2x1xi32>, %j: tensor<3xi32>, %p: tensor<2x1xi1>, %q: tensor<3xi1>) {
  %0 = wsgraph.less %a, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xi1>
  %1 = wsgraph.less_equal %i, %j : (tensor<2x1xi32>, tensor<3xi32>) -> tensor<2x3xi1>
  %2 = wsgraph.greater %b, %a : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xi1>
  %3 = wsgraph.greater_equal %j, %i : (tensor<3xi32>, tensor<2x1xi32>) -> tensor<2x3xi1>
  %4 = wsgraph.and %p, %q : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %5 = wsgraph.or %p, %p : (tensor<2x1xi1>, tensor<2x1xi1>) -> tensor<2x1xi1>
  %6 = wsgraph.xor %q, %p : (tensor<3xi1>, tensor<2x1xi1>) -> tensor<2x3xi1>
  %7 = wsgraph.not %q : tensor<3xi1>
  return
}

// Bitwise ops on integers, signed and unsigned, with broadcasting.
// CHECK-LABEL: func.func @bitwise
// CHECK-SAME: (%[[I:.*]]: tensor<2x1xi32>, %[[J:.*]]: tensor<3xi32>, %[[U:.*]]: tensor<3xui8>)
// CHECK-NEXT: wsgraph.bitwise_and %[[I]], %[[J]] : (tensor<2x1xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: wsgraph.bitwise_or %[[U]], %[[U]] : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
// CHECK-NEXT: wsgraph.bitwise_xor %[[J]], %[[I]] : (tensor<3xi32>, tensor<2x1xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: wsgraph.bitwise_not %[[J]] : tensor<3xi32>
func.func @bitwise(%i: tensor<2x1xi32>, %j: tensor<3xi32>, %u: tensor<3xui8>) {
  %0 = wsgraph.bitwise_and %i, %j : (tensor<2x1xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %1 = wsgraph.bitwise_or %u, %u : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %2 = wsgraph.bitwise_xor %j, %i : (tensor<3xi32>, tensor<2x1xi32>) -> tensor<2x3xi32>
  %3 = wsgraph.bitwise_not %j : tensor<3xi32>
  return
}

// Float-only unary ops, and neg, abs and relu on integers too.
// CHECK-LABEL: func.func @unary_more
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[I:.*]]: tensor<4xi64>, %[[B:.*]]: tensor<4xi8>)
// CHECK-NEXT: wsgraph.sigmoid %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.relu %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.abs %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.log %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.sin %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.cos %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.reciprocal %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.floor %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.ceil %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: wsgraph.neg %[[I]] : tensor<4xi64>
// CHECK-NEXT: wsgraph.abs %[[I]] : tensor<4xi64>
// CHECK-NEXT: wsgraph.relu %[[B]] : tensor<4xi8>
func.func @unary_more(%x: tensor<2x8xf32>, %i: tensor<4xi64>, %b: tensor<4xi8>) {
  %0 = wsgraph.sigmoid %x : tensor<2x8xf32>
  %1 = wsgraph.relu %x : tensor<2x8xf32>
  %2 = wsgraph.abs %x : tensor<2x8xf32>
  %3 = wsgraph.log %x : tensor<2x8xf32>
  %4 = wsgraph.sin %x : tensor<2x8xf32>
  %5 = wsgraph.cos %x : tensor<2x8xf32>
  %6 = wsgraph.reciprocal %x : tensor<2x8xf32>
  %7 = wsgraph.floor %x : tensor<2x8xf32>
  %8 = wsgraph.ceil %x : tensor<2x8xf32>
  %9 = wsgraph.neg %i : tensor<4xi64>
  %10 = wsgraph.abs %i : tensor<4xi64>
  %11 = wsgraph.relu %b : tensor<4xi8>
  return
}

// CHECK-LABEL: func.func @cast
// CHECK-NEXT: wsgraph.cast %{{.*}} : tensor<4xi64> -> tensor<4xf32>
// CHECK-NEXT: wsgraph.cast %{{.*}} : tensor<4xi64> -> tensor<4xi1>
func.func @cast(%x: tensor<4xi64>) {
  %0 = wsgraph.cast %x : tensor<4xi64> -> tensor<4xf32>
  %1 = wsgraph.cast %x : tensor<4xi64> -> tensor<4xi1>
  return
}

// CHECK-LABEL: func.func @where
// CHECK-SAME: (%[[M:.*]]: tensor<1x1x8x8xi1>, %[[N:.*]]: tensor<f32>, %[[X:.*]]: tensor<1x2x8x8xf32>)
// CHECK-NEXT: wsgraph.where %[[M]], %[[N]], %[[X]] : (tensor<1x1x8x8xi1>, tensor<f32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
func.func @where(%m: tensor<1x1x8x8xi1>, %n: tensor<f32>, %x: tensor<1x2x8x8xf32>) {
  %0 = wsgraph.where %m, %n, %x : (tensor<1x1x8x8xi1>, tensor<f32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return
}

// CHECK-LABEL: func.func @matmul
// CHECK-NEXT: wsgraph.matmul %{{.*}}, %{{.*}} : (tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x8x8xf32>
// CHECK-NEXT: wsgraph.matmul %{{.*}}, %{{.*}} : (tensor<3x1x8x16xf32>, tensor<16x4xf32>) -> tensor<3x1x8x4xf32>
func.func @matmul(%a: tensor<1x2x8x16xf32>, %b: tensor<1x2x16x8xf32>, %c: tensor<3x1x8x16xf32>, %d: tensor<16x4xf32>) {
  %0 = wsgraph.matmul %a, %b : (tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x8x8xf32>
  %1 = wsgraph.matmul %c, %d : (tensor<3x1x8x16xf32>, tensor<16x4xf32>) -> tensor<3x1x8x4xf32>
  return
}

// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%[[A:.*]]: tensor<4x32xf32>, %[[B:.*]]: tensor<96x32xf32>, %[[C:.*]]: tensor<96xf32>, %[[AT:.*]]: tensor<32x4xf32>, %[[B2:.*]]: tensor<32x96xf32>)
// CHECK-NEXT: wsgraph.gemm %[[A]], %[[B]], %[[C]] {trans_b = true} : (tensor<4x32xf32>, tensor<96x32xf32>, tensor<96xf32>) -> tensor<4x96xf32>
// CHECK-NEXT: wsgraph.gemm %[[A]], %[[B2]] : (tensor<4x32xf32>, tensor<32x96xf32>) -> tensor<4x96xf32>
// CHECK-NEXT: wsgraph.gemm %[[AT]], %[[B]] {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_a = true, trans_b = true} : (tensor<32x4xf32>, tensor<96x32xf32>) -> tensor<4x96xf32>
func.func @gemm(%a: tensor<4x32xf32>, %b: tensor<96x32xf32>, %c: tensor<96xf32>, %at: tensor<32x4xf32>, %b2: tensor<32x96xf32>) {
  %0 = wsgraph.gemm %a, %b, %c {trans_b = true} : (tensor<4x32xf32>, tensor<96x32xf32>, tensor<96xf32>) -> tensor<4x96xf32>
  %1 = wsgraph.gemm %a, %b2 : (tensor<4x32xf32>, tensor<32x96xf32>) -> tensor<4x96xf32>
  %2 = wsgraph.gemm %at, %b {trans_a = true, trans_b = true, alpha = 0.5 : f32, beta = 2.0 : f32} : (tensor<32x4xf32>, tensor<96x32xf32>) -> tensor<4x96xf32>
  return
}

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x32xf32>, %[[W:.*]]: tensor<32x96xf32>, %[[B:.*]]: tensor<96xf32>)
// CHECK-NEXT: wsgraph.linear %[[X]], %[[W]], %[[B]] : (tensor<1x8x32xf32>, tensor<32x96xf32>, tensor<96xf32>) -> tensor<1x8x96xf32>
// CHECK-NEXT: wsgraph.linear %[[X]], %[[W]] : (tensor<1x8x32xf32>, tensor<32x96xf32>) -> tensor<1x8x96xf32>
func.func @linear(%x: tensor<1x8x32xf32>, %w: tensor<32x96xf32>, %b: tensor<96xf32>) {
  %0 = wsgraph.linear %x, %w, %b : (tensor<1x8x32xf32>, tensor<32x96xf32>, tensor<96xf32>) -> tensor<1x8x96xf32>
  %1 = wsgraph.linear %x, %w : (tensor<1x8x32xf32>, tensor<32x96xf32>) -> tensor<1x8x96xf32>
  return
}

// CHECK-LABEL: func.func @softmax
// CHECK-NEXT: wsgraph.softmax %{{.*}} : tensor<1x2x8x8xf32>
// CHECK-NEXT: wsgraph.softmax %{{.*}} {axis = 1 : i64} : tensor<1x2x8x8xf32>
func.func @softmax(%s: tensor<1x2x8x8xf32>) {
  %0 = wsgraph.softmax %s {axis = -1 : i64} : tensor<1x2x8x8xf32>
  %1 = wsgraph.softmax %s {axis = 1 : i64} : tensor<1x2x8x8xf32>
  return
}

// CHECK-LABEL: func.func @log_softmax
// CHECK-NEXT: wsgraph.log_softmax %{{.*}} : tensor<4x10xf32>
// CHECK-NEXT: wsgraph.log_softmax %{{.*}} {axis = 0 : i64} : tensor<4x10xf32>
func.func @log_softmax(%s: tensor<4x10xf32>) {
  %0 = wsgraph.log_softmax %s {axis = -1 : i64} : tensor<4x10xf32>
  %1 = wsgraph.log_softmax %s {axis = 0 : i64} : tensor<4x10xf32>
  return
}

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x32xf32>, %[[G:.*]]: tensor<32xf32>, %[[B:.*]]: tensor<32xf32>, %[[G2:.*]]: tensor<8x32xf32>)
// CHECK-NEXT: wsgraph.layer_norm %[[X]], %[[G]], %[[B]] : (tensor<1x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
// CHECK-NEXT: wsgraph.layer_norm %[[X]], %[[G]] : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
// CHECK-NEXT: wsgraph.layer_norm %[[X]], %[[G2]] {axis = -2 : i64, epsilon = 1.000000e-03 : f32} : (tensor<1x8x32xf32>, tensor<8x32xf32>) -> tensor<1x8x32xf32>
func.func @layer_norm(%x: tensor<1x8x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>, %g2: tensor<8x32xf32>) {
  %0 = wsgraph.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<1x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  %1 = wsgraph.layer_norm %x, %g : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  %2 = wsgraph.layer_norm %x, %g2 {axis = -2 : i64, epsilon = 1.0e-03 : f32} : (tensor<1x8x32xf32>, tensor<8x32xf32>) -> tensor<1x8x32xf32>
  return
}

// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x32xf32>, %[[G:.*]]: tensor<32xf32>, %[[G2:.*]]: tensor<8x32xf32>)
// CHECK-NEXT: wsgraph.rms_norm %[[X]], %[[G]] {epsilon = 9.99999997E-7 : f32} : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
// CHECK-NEXT: wsgraph.rms_norm %[[X]], %[[G]] : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
// CHECK-NEXT: wsgraph.rms_norm %[[X]], %[[G2]] {axis = -2 : i64} : (tensor<1x8x32xf32>, tensor<8x32xf32>) -> tensor<1x8x32xf32>
// GENERIC-LABEL: "func.func"() <{{.*}}sym_name = "rms_norm"
// GENERIC: "wsgraph.rms_norm"(%{{.*}}, %{{.*}}) <{axis = -1 : i64, epsilon = 9.99999997E-7 : f32}>
// GENERIC: "wsgraph.rms_norm"(%{{.*}}, %{{.*}}) <{axis = -1 : i64, epsilon = 9.99999974E-6 : f32}>
func.func @rms_norm(%x: tensor<1x8x32xf32>, %g: tensor<32xf32>, %g2: tensor<8x32xf32>) {
  %0 = wsgraph.rms_norm %x, %g {axis = -1 : i64, epsilon = 1.0e-06 : f32} : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  %1 = wsgraph.rms_norm %x, %g : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
  %2 = wsgraph.rms_norm %x, %g2 {axis = -2 : i64} : (tensor<1x8x32xf32>, tensor<8x32xf32>) -> tensor<1x8x32xf32>
  return
}

// CHECK-LABEL: func.func @sample
// CHECK-NEXT: wsgraph.sample %{{.*}}, %{{.*}} : (tensor<2x8x64xf32>, tensor<2xf32>) -> tensor<2x8xi64>
func.func @sample(%x: tensor<2x8x64xf32>, %p: tensor<2xf32>) {
  %0 = wsgraph.sample %x, %p : (tensor<2x8x64xf32>, tensor<2xf32>) -> tensor<2x8xi64>
  return
}

// [temperature, seed, top_k]: a sample among the top_k largest logits.
// CHECK-LABEL: func.func @sample_top_k
// CHECK-NEXT: wsgraph.sample %{{.*}}, %{{.*}} : (tensor<2x8x64xf32>, tensor<3xf32>) -> tensor<2x8xi64>
func.func @sample_top_k(%x: tensor<2x8x64xf32>, %p: tensor<3xf32>) {
  %0 = wsgraph.sample %x, %p : (tensor<2x8x64xf32>, tensor<3xf32>) -> tensor<2x8xi64>
  return
}

// CHECK-LABEL: func.func @argmax
// CHECK-NEXT: wsgraph.argmax %{{.*}} : (tensor<1x8x64xf32>) -> tensor<1x8xi64>
// CHECK-NEXT: wsgraph.argmax %{{.*}} {axis = 1 : i64, keepdims = true, select_last_index = true} : (tensor<1x8x64xf32>) -> tensor<1x1x64xi64>
func.func @argmax(%x: tensor<1x8x64xf32>) {
  %0 = wsgraph.argmax %x : (tensor<1x8x64xf32>) -> tensor<1x8xi64>
  %1 = wsgraph.argmax %x {axis = 1 : i64, keepdims = true, select_last_index = true} : (tensor<1x8x64xf32>) -> tensor<1x1x64xi64>
  return
}

// CHECK-LABEL: func.func @rotary
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x8x16xf32>, %[[C:.*]]: tensor<1x1x8x16xf32>, %[[P:.*]]: tensor<8x4xf32>)
// CHECK-NEXT: wsgraph.rotary %[[X]], %[[C]], %[[C]] : (tensor<1x2x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<1x2x8x16xf32>
// CHECK-NEXT: wsgraph.rotary %[[X]], %[[P]], %[[P]] {interleaved = true} : (tensor<1x2x8x16xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<1x2x8x16xf32>
// GENERIC-LABEL: "func.func"() <{{.*}}sym_name = "rotary"
// GENERIC: "wsgraph.rotary"(%{{.*}}, %{{.*}}, %{{.*}}) <{interleaved = false}>
func.func @rotary(%x: tensor<1x2x8x16xf32>, %c: tensor<1x1x8x16xf32>, %p: tensor<8x4xf32>) {
  %0 = wsgraph.rotary %x, %c, %c : (tensor<1x2x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<1x2x8x16xf32>
  %1 = wsgraph.rotary %x, %p, %p {interleaved = true} : (tensor<1x2x8x16xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<1x2x8x16xf32>
  return
}

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x8x16xf32>, %[[K:.*]]: tensor<1x2x12x16xf32>, %[[V:.*]]: tensor<1x2x12x4xf32>, %[[M:.*]]: tensor<1x12xf32>)
// CHECK-NEXT: wsgraph.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x4xf32>) -> tensor<1x2x8x4xf32>
// CHECK-NEXT: wsgraph.attention %[[Q]], %[[K]], %[[V]] {causal = false, scale = 1.000000e+00 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x4xf32>) -> tensor<1x2x8x4xf32>
// CHECK-NEXT: wsgraph.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 2.500000e-01 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x4xf32>, tensor<1x12xf32>) -> tensor<1x2x8x4xf32>
// CHECK-NEXT: wsgraph.attention %[[Q]], %[[K]], %[[V]], %[[M]] {future_fill = -3.40282347E+38 : f32, scale = 2.500000e-01 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x4xf32>, tensor<1x12xf32>) -> tensor<1x2x8x4xf32>
func.func @attention(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x4xf32>, %m: tensor<1x12xf32>) {
  %0 = wsgraph.attention %q, %k, %v {causal = true, scale = 0.25 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x4xf32>) -> tensor<1x2x8x4xf32>
  %1 = wsgraph.attention %q, %k, %v {causal = false, scale = 1.0 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x4xf32>) -> tensor<1x2x8x4xf32>
  %2 = wsgraph.attention %q, %k, %v, %m {scale = 0.25 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x4xf32>, tensor<1x12xf32>) -> tensor<1x2x8x4xf32>
  %3 = wsgraph.attention %q, %k, %v, %m {future_fill = -3.40282347E+38 : f32, scale = 0.25 : f32} : (tensor<1x2x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x4xf32>, tensor<1x12xf32>) -> tensor<1x2x8x4xf32>
  return
}

// CHECK-LABEL: func.func @reduce
// CHECK-NEXT: wsgraph.reduce_mean %{{.*}} {axes = array<i64: -1>} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
// CHECK-NEXT: wsgraph.reduce_sum %{{.*}} {axes = array<i64: 0, 2>, keepdims = false} : (tensor<1x8x32xf32>) -> tensor<8xf32>
// CHECK-NEXT: wsgraph.reduce_max %{{.*}} {axes = array<i64>} : (tensor<1x8x32xf32>) -> tensor<1x1x1xf32>
// CHECK-NEXT: wsgraph.reduce_sum %{{.*}} {axes = array<i64>, keepdims = false} : (tensor<1x8x32xf32>) -> tensor<f32>
// CHECK-NEXT: wsgraph.reduce_min %{{.*}} {axes = array<i64: 1>, keepdims = false} : (tensor<1x8x32xf32>) -> tensor<1x32xf32>
func.func @reduce(%x: tensor<1x8x32xf32>) {
  %0 = wsgraph.reduce_mean %x {axes = array<i64: -1>, keepdims = true} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>
  %1 = wsgraph.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<1x8x32xf32>) -> tensor<8xf32>
  %2 = wsgraph.reduce_max %x {axes = array<i64>} : (tensor<1x8x32xf32>) -> tensor<1x1x1xf32>
  %3 = wsgraph.reduce_sum %x {axes = array<i64>, keepdims = false} : (tensor<1x8x32xf32>) -> tensor<f32>
  %4 = wsgraph.reduce_min %x {axes = array<i64: 1>, keepdims = false} : (tensor<1x8x32xf32>) -> tensor<1x32xf32>
  return
}

// CHECK-LABEL: func.func @transpose
// CHECK-NEXT: wsgraph.transpose %{{.*}} {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x16xf32>) -> tensor<1x2x16x8xf32>
// CHECK-NEXT: wsgraph.transpose %{{.*}} {perm = array<i64: 2, 0, 3, 1>} : (tensor<1x2x8x16xf32>) -> tensor<8x1x16x2xf32>
func.func @transpose(%k: tensor<1x2x8x16xf32>) {
  %0 = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x16xf32>) -> tensor<1x2x16x8xf32>
  %1 = wsgraph.transpose %k {perm = array<i64: 2, 0, 3, 1>} : (tensor<1x2x8x16xf32>) -> tensor<8x1x16x2xf32>
  return
}

// CHECK-LABEL: func.func @shapes
// CHECK-NEXT: wsgraph.reshape %{{.*}} : (tensor<1x8x32xf32>) -> tensor<1x8x2x16xf32>
// CHECK-NEXT: wsgraph.reshape %{{.*}} : (tensor<1x8x32xf32>) -> tensor<256xf32>
// CHECK-NEXT: wsgraph.expand %{{.*}} : (tensor<1x8xi64>) -> tensor<2x8xi64>
// CHECK-NEXT: wsgraph.expand %{{.*}} : (tensor<1x8xi64>) -> tensor<3x2x8xi64>
// CHECK-NEXT: wsgraph.unsqueeze %{{.*}} {axes = array<i64: 0>} : (tensor<8xi64>) -> tensor<1x8xi64>
// CHECK-NEXT: wsgraph.unsqueeze %{{.*}} {axes = array<i64: 0, -1>} : (tensor<8xi64>) -> tensor<1x8x1xi64>
// CHECK-NEXT: wsgraph.squeeze %{{.*}} {axes = array<i64: 0>} : (tensor<1x8xi64>) -> tensor<8xi64>
// CHECK-NEXT: wsgraph.squeeze %{{.*}} {axes = array<i64: 0, 2>} : (tensor<1x8x1xf32>) -> tensor<8xf32>
func.func @shapes(%x: tensor<1x8x32xf32>, %i: tensor<1x8xi64>, %j: tensor<8xi64>, %m: tensor<1x8x1xf32>) {
  %0 = wsgraph.reshape %x : (tensor<1x8x32xf32>) -> tensor<1x8x2x16xf32>
  %1 = wsgraph.reshape %x : (tensor<1x8x32xf32>) -> tensor<256xf32>
  %2 = wsgraph.expand %i : (tensor<1x8xi64>) -> tensor<2x8xi64>
  %3 = wsgraph.expand %i : (tensor<1x8xi64>) -> tensor<3x2x8xi64>
  %4 = wsgraph.unsqueeze %j {axes = array<i64: 0>} : (tensor<8xi64>) -> tensor<1x8xi64>
  %5 = wsgraph.unsqueeze %j {axes = array<i64: 0, -1>} : (tensor<8xi64>) -> tensor<1x8x1xi64>
  %6 = wsgraph.squeeze %i {axes = array<i64: 0>} : (tensor<1x8xi64>) -> tensor<8xi64>
  %7 = wsgraph.squeeze %m {axes = array<i64: 0, 2>} : (tensor<1x8x1xf32>) -> tensor<8xf32>
  return
}

// CHECK-LABEL: func.func @gather
// CHECK-NEXT: wsgraph.gather %{{.*}}, %{{.*}} : (tensor<64x32xf32>, tensor<1x8xi64>) -> tensor<1x8x32xf32>
// CHECK-NEXT: wsgraph.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<64x32xf32>, tensor<3xi32>) -> tensor<64x3xf32>
// CHECK-NEXT: wsgraph.gather %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<64x32xf32>, tensor<i32>) -> tensor<64xf32>
func.func @gather(%wte: tensor<64x32xf32>, %idx: tensor<1x8xi64>, %cols: tensor<3xi32>, %one: tensor<i32>) {
  %0 = wsgraph.gather %wte, %idx {axis = 0 : i64} : (tensor<64x32xf32>, tensor<1x8xi64>) -> tensor<1x8x32xf32>
  %1 = wsgraph.gather %wte, %cols {axis = 1 : i64} : (tensor<64x32xf32>, tensor<3xi32>) -> tensor<64x3xf32>
  %2 = wsgraph.gather %wte, %one {axis = -1 : i64} : (tensor<64x32xf32>, tensor<i32>) -> tensor<64xf32>
  return
}

// CHECK-LABEL: func.func @gather_elements
// CHECK-NEXT: wsgraph.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
// CHECK-NEXT: wsgraph.gather_elements %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<5x4xi32>) -> tensor<5x4xf32>
// CHECK-NEXT: wsgraph.gather_elements %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<3x4xf32>, tensor<1x1xi64>) -> tensor<1x1xf32>
func.func @gather_elements(%x: tensor<3x4xf32>, %i: tensor<3x2xi64>, %j: tensor<5x4xi32>, %k: tensor<1x1xi64>) {
  %0 = wsgraph.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  %1 = wsgraph.gather_elements %x, %j : (tensor<3x4xf32>, tensor<5x4xi32>) -> tensor<5x4xf32>
  %2 = wsgraph.gather_elements %x, %k {axis = -1 : i64} : (tensor<3x4xf32>, tensor<1x1xi64>) -> tensor<1x1xf32>
  return
}

// CHECK-LABEL: func.func @tile
// CHECK-NEXT: wsgraph.tile %{{.*}} {repeats = array<i64: 1, 3>} : (tensor<2x4xf32>) -> tensor<2x12xf32>
// CHECK-NEXT: wsgraph.tile %{{.*}} {repeats = array<i64: 0, 2>} : (tensor<2x4xf32>) -> tensor<0x8xf32>
// CHECK-NEXT: wsgraph.tile %{{.*}} {repeats = array<i64: 2, 2>} : (tensor<?x4xi64>) -> tensor<?x8xi64>
func.func @tile(%x: tensor<2x4xf32>, %d: tensor<?x4xi64>) {
  %0 = wsgraph.tile %x {repeats = array<i64: 1, 3>} : (tensor<2x4xf32>) -> tensor<2x12xf32>
  %1 = wsgraph.tile %x {repeats = array<i64: 0, 2>} : (tensor<2x4xf32>) -> tensor<0x8xf32>
  %2 = wsgraph.tile %d {repeats = array<i64: 2, 2>} : (tensor<?x4xi64>) -> tensor<?x8xi64>
  return
}

// CHECK-LABEL: func.func @concat
// CHECK-NEXT: wsgraph.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
// CHECK-NEXT: wsgraph.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x7xf32>
// CHECK-NEXT: wsgraph.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
func.func @concat(%a: tensor<2xi64>, %b: tensor<1xi64>, %c: tensor<2x3xf32>, %d: tensor<2x1xf32>, %e: tensor<?x3xf32>) {
  %0 = wsgraph.concat %a, %b {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
  %1 = wsgraph.concat %c, %d, %c {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x7xf32>
  %2 = wsgraph.concat %e, %c {axis = 0 : i64} : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  return
}

// CHECK-LABEL: func.func @slice
// CHECK-NEXT: wsgraph.slice %{{.*}} {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 1, 8, 8>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x1x16x16xf32>) -> tensor<1x1x8x8xf32>
// CHECK-NEXT: wsgraph.slice %{{.*}} {offsets = array<i64: 0, 0, 15, 1>, sizes = array<i64: 1, 1, 4, 5>, strides = array<i64: 1, 1, -2, 3>} : (tensor<1x1x16x16xf32>) -> tensor<1x1x4x5xf32>
// CHECK-NEXT: wsgraph.slice %{{.*}} {offsets = array<i64: 3>, sizes = array<i64: 0>, strides = array<i64: 1>} : (tensor<4xi64>) -> tensor<0xi64>
func.func @slice(%m: tensor<1x1x16x16xf32>, %v: tensor<4xi64>) {
  %0 = wsgraph.slice %m {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 1, 8, 8>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x1x16x16xf32>) -> tensor<1x1x8x8xf32>
  %1 = wsgraph.slice %m {offsets = array<i64: 0, 0, 15, 1>, sizes = array<i64: 1, 1, 4, 5>, strides = array<i64: 1, 1, -2, 3>} : (tensor<1x1x16x16xf32>) -> tensor<1x1x4x5xf32>
  %2 = wsgraph.slice %v {offsets = array<i64: 3>, sizes = array<i64: 0>, strides = array<i64: 1>} : (tensor<4xi64>) -> tensor<0xi64>
  return
}

// CHECK-LABEL: func.func @split
// CHECK-NEXT: %{{.*}}:3 = wsgraph.split %{{.*}} {axis = 2 : i64, sizes = array<i64: 32, 32, 32>} : (tensor<1x8x96xf32>) -> (tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<1x8x32xf32>)
// CHECK-NEXT: %{{.*}}:2 = wsgraph.split %{{.*}} {axis = -2 : i64, sizes = array<i64: 3, 5>} : (tensor<1x8x96xf32>) -> (tensor<1x3x96xf32>, tensor<1x5x96xf32>)
func.func @split(%qkv: tensor<1x8x96xf32>) {
  %q, %k, %v = wsgraph.split %qkv {axis = 2 : i64, sizes = array<i64: 32, 32, 32>} : (tensor<1x8x96xf32>) -> (tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<1x8x32xf32>)
  %a:2 = wsgraph.split %qkv {axis = -2 : i64, sizes = array<i64: 3, 5>} : (tensor<1x8x96xf32>) -> (tensor<1x3x96xf32>, tensor<1x5x96xf32>)
  return
}

// CHECK-LABEL: func.func @trilu
// CHECK-NEXT: wsgraph.trilu %{{.*}} {upper = false} : tensor<8x8xf32>
// CHECK-NEXT: wsgraph.trilu %{{.*}} {k = 1 : i64} : tensor<8x8xf32>
// CHECK-NEXT: wsgraph.trilu %{{.*}} : tensor<2x8x8xi64>
func.func @trilu(%ones: tensor<8x8xf32>, %i: tensor<2x8x8xi64>) {
  %0 = wsgraph.trilu %ones {upper = false, k = 0 : i64} : tensor<8x8xf32>
  %1 = wsgraph.trilu %ones {k = 1 : i64} : tensor<8x8xf32>
  %2 = wsgraph.trilu %i : tensor<2x8x8xi64>
  return
}

// CHECK-LABEL: func.func @range
// CHECK-NEXT: wsgraph.range %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<8xi64>
// CHECK-NEXT: wsgraph.range %{{.*}}, %{{.*}}, %{{.*}} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
func.func @range(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>, %fs: tensor<f32>) {
  %0 = wsgraph.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<8xi64>
  %1 = wsgraph.range %fs, %fs, %fs : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return
}

// CHECK-LABEL: func.func @shape
// CHECK-NEXT: wsgraph.shape %{{.*}} : (tensor<1x?x32xf32>) -> tensor<3xi64>
// CHECK-NEXT: wsgraph.shape %{{.*}} {end = -1 : i64, start = 1 : i64} : (tensor<1x?x32xf32>) -> tensor<1xi64>
// CHECK-NEXT: wsgraph.shape %{{.*}} {start = 5 : i64} : (tensor<1x?x32xf32>) -> tensor<0xi64>
func.func @shape(%x: tensor<1x?x32xf32>) {
  %0 = wsgraph.shape %x : (tensor<1x?x32xf32>) -> tensor<3xi64>
  %1 = wsgraph.shape %x {start = 1 : i64, end = -1 : i64} : (tensor<1x?x32xf32>) -> tensor<1xi64>
  %2 = wsgraph.shape %x {start = 5 : i64} : (tensor<1x?x32xf32>) -> tensor<0xi64>
  return
}
