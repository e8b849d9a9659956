// RUN: wsc-opt %s --wsgraph-fuse -split-input-file -verify-diagnostics | FileCheck %s

// The masks Llama, HF GPT-2 and GPT-NeoX add to attention scores, q, k, v
// [B, H, T, D] = [2, 2, 4, 8]: an additive causal mask of finfo.min
// (full(min).triu(1)), a padding mask computed from attention_mask after it
// was expanded over the queries, and both summed before the scores.

// Llama's form: scores / sqrt(d) + (padding + causal). The padding chain
// (cast, 1 - m, where(m, min, m)) is computed on [B, 1, 1, S] once the
// expand sinks below it, and becomes attention's [B, S] mask. The causal
// mask is finite and the padding is known only when the model runs, so
// attention keeps the fill for future keys (`future_fill`): a query that
// sees only padded keys weighs them as torch does.
// CHECK-LABEL: func.func @llama_additive_runtime_padding
// CHECK: %[[F:.*]] = wsgraph.cast %{{.*}} : tensor<2x1x1x4xi64> -> tensor<2x1x1x4xf32>
// CHECK: %[[INV:.*]] = wsgraph.sub %{{.*}}, %[[F]]
// CHECK: %[[PAD:.*]] = wsgraph.where %{{.*}}, %{{.*}}, %[[INV]]
// CHECK: %[[M:.*]] = wsgraph.reshape %[[PAD]] : (tensor<2x1x1x4xf32>) -> tensor<2x4xf32>
// CHECK: wsgraph.attention %arg0, %arg1, %arg2, %[[M]] {future_fill = -3.40282347E+38 : f32, scale = 0.353553385 : f32}
// CHECK-NOT: wsgraph.softmax
func.func @llama_additive_runtime_padding(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %am: tensor<2x4xi64>) -> tensor<2x2x4x8xf32> {
  %sqrt = wsgraph.constant dense<2.82842708> : tensor<f32>
  %min = wsgraph.constant dense<-3.40282347E+38> : tensor<f32>
  %one = wsgraph.constant dense<1.0> : tensor<f32>
  %causal = wsgraph.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %u = wsgraph.unsqueeze %am {axes = array<i64: 1, 2>} : (tensor<2x4xi64>) -> tensor<2x1x1x4xi64>
  %e = wsgraph.expand %u : (tensor<2x1x1x4xi64>) -> tensor<2x1x4x4xi64>
  %f = wsgraph.cast %e : tensor<2x1x4x4xi64> -> tensor<2x1x4x4xf32>
  %inv = wsgraph.sub %one, %f : (tensor<f32>, tensor<2x1x4x4xf32>) -> tensor<2x1x4x4xf32>
  %b = wsgraph.cast %inv : tensor<2x1x4x4xf32> -> tensor<2x1x4x4xi1>
  %pad = wsgraph.where %b, %min, %inv : (tensor<2x1x4x4xi1>, tensor<f32>, tensor<2x1x4x4xf32>) -> tensor<2x1x4x4xf32>
  %mask = wsgraph.add %pad, %causal : (tensor<2x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<2x1x4x4xf32>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %ss = wsgraph.div %s, %sqrt : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = wsgraph.add %ss, %mask : (tensor<2x2x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = wsgraph.softmax %m {axis = -1 : i64} : tensor<2x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// The same with the causal mask alone (no attention_mask): causal attention.
// CHECK-LABEL: func.func @llama_additive_causal
// CHECK-NEXT: %[[O:.*]] = wsgraph.attention %arg0, %arg1, %arg2 {scale = 0.353553385 : f32}
// CHECK-NEXT: return %[[O]]
func.func @llama_additive_causal(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %sqrt = wsgraph.constant dense<2.82842708> : tensor<f32>
  %causal = wsgraph.constant dense<[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %ss = wsgraph.div %s, %sqrt : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = wsgraph.add %causal, %ss : (tensor<4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = wsgraph.softmax %m {axis = -1 : i64} : tensor<2x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// An additive causal mask of -inf beside a padding mask [B, 1, 1, S] known
// only at run time: exact for every query (one that sees padding only gets
// its visible keys' mean, as torch does), so attention takes the padding.
// CHECK-LABEL: func.func @infinite_causal_runtime_padding
// CHECK: %[[P:.*]] = wsgraph.reshape %arg3 : (tensor<2x1x1x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[O:.*]] = wsgraph.attention %arg0, %arg1, %arg2, %[[P]] {scale = 1.000000e+00 : f32}
// CHECK-NEXT: return %[[O]]
func.func @infinite_causal_runtime_padding(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %pad: tensor<2x1x1x4xf32>) -> tensor<2x2x4x8xf32> {
  %causal = wsgraph.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %m1 = wsgraph.add %s, %pad : (tensor<2x2x4x4xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x4xf32>
  %m = wsgraph.add %m1, %causal : (tensor<2x2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = wsgraph.softmax %m {axis = -1 : i64} : tensor<2x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// HF GPT-2's where(causal, scores, finfo.min) beside a constant padding mask
// that leaves every sequence's first key visible: every query sees an
// unpadded key, so attention is exact and takes it.
// CHECK-LABEL: func.func @where_min_constant_padding
// CHECK: wsgraph.attention %arg0, %arg1, %arg2, %{{.*}} {scale = 1.000000e+00 : f32}
// CHECK-NOT: wsgraph.softmax
func.func @where_min_constant_padding(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %min = wsgraph.constant dense<-3.40282347E+38> : tensor<f32>
  %visible = wsgraph.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %pad = wsgraph.constant dense<[[[[0.0, 0.0, 0.0, 0.0]]], [[[0.0, 0.0, -3.40282347E+38, -3.40282347E+38]]]]> : tensor<2x1x1x4xf32>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %w = wsgraph.where %visible, %s, %min : (tensor<4x4xi1>, tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = wsgraph.add %w, %pad : (tensor<2x2x4x4xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x4xf32>
  %p = wsgraph.softmax %m {axis = -1 : i64} : tensor<2x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// The same with the first sequence's first key padded (left padding): a
// query sees padded keys only, where torch weighs the future keys too, so
// attention keeps the fill for them.
// CHECK-LABEL: func.func @where_min_left_padding
// CHECK: wsgraph.attention %arg0, %arg1, %arg2, %{{.*}} {future_fill = -3.40282347E+38 : f32, scale = 1.000000e+00 : f32}
// CHECK-NOT: wsgraph.softmax
func.func @where_min_left_padding(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %min = wsgraph.constant dense<-3.40282347E+38> : tensor<f32>
  %visible = wsgraph.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %pad = wsgraph.constant dense<[[[[-3.40282347E+38, 0.0, 0.0, 0.0]]], [[[0.0, 0.0, 0.0, 0.0]]]]> : tensor<2x1x1x4xf32>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %w = wsgraph.where %visible, %s, %min : (tensor<4x4xi1>, tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = wsgraph.add %w, %pad : (tensor<2x2x4x4xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x4xf32>
  %p = wsgraph.softmax %m {axis = -1 : i64} : tensor<2x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// GPT-J's order: where(causal, scores, finfo.min) first, then the division
// by sqrt(d), then the padding mask: the future keys reach the softmax at
// finfo.min / 2, which attention keeps as their fill.
// CHECK-LABEL: func.func @where_then_scale
// CHECK: wsgraph.attention %arg0, %arg1, %arg2, %{{.*}} {future_fill = -1.70141173E+38 : f32, scale = 5.000000e-01 : f32}
// CHECK-NOT: wsgraph.softmax
func.func @where_then_scale(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %min = wsgraph.constant dense<-3.40282347E+38> : tensor<f32>
  %two = wsgraph.constant dense<2.0> : tensor<f32>
  %visible = wsgraph.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %pad = wsgraph.constant dense<[[[[-3.40282347E+38, 0.0, 0.0, 0.0]]], [[[0.0, 0.0, 0.0, 0.0]]]]> : tensor<2x1x1x4xf32>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %w = wsgraph.where %visible, %s, %min : (tensor<4x4xi1>, tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %d = wsgraph.div %w, %two : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = wsgraph.add %d, %pad : (tensor<2x2x4x4xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x4xf32>
  %p = wsgraph.softmax %m {axis = -1 : i64} : tensor<2x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A padding mask added before the scale is scaled with the scores, which
// attention's mask is not: no attention.
// CHECK-LABEL: func.func @padding_inside_scale
// CHECK-NOT: wsgraph.attention
// CHECK: wsgraph.softmax
func.func @padding_inside_scale(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %pad: tensor<2x1x1x4xf32>) -> tensor<2x2x4x8xf32> {
  %half = wsgraph.constant dense<0.5> : tensor<f32>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %m = wsgraph.add %s, %pad : (tensor<2x2x4x4xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x4xf32>
  %h = wsgraph.mul %m, %half : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %p = wsgraph.softmax %h {axis = -1 : i64} : tensor<2x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// GPT-NeoX's scores: heads merged into the batch for a 3-D product (baddbmm),
// scaled, and reshaped back; the product over [B, H] is formed directly.
// CHECK-LABEL: func.func @neox_merged_heads
// CHECK-NEXT: %[[O:.*]] = wsgraph.attention %arg0, %arg1, %arg2 {scale = 0.353553385 : f32}
// CHECK-NEXT: return %[[O]]
func.func @neox_merged_heads(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %scale = wsgraph.constant dense<0.353553385> : tensor<f32>
  %ninf = wsgraph.constant dense<0xFF800000> : tensor<f32>
  %future = wsgraph.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %q3 = wsgraph.reshape %q : (tensor<2x2x4x8xf32>) -> tensor<4x4x8xf32>
  %k3 = wsgraph.reshape %k : (tensor<2x2x4x8xf32>) -> tensor<4x4x8xf32>
  %kT = wsgraph.transpose %k3 {perm = array<i64: 0, 2, 1>} : (tensor<4x4x8xf32>) -> tensor<4x8x4xf32>
  %s = wsgraph.matmul %q3, %kT : (tensor<4x4x8xf32>, tensor<4x8x4xf32>) -> tensor<4x4x4xf32>
  %ss = wsgraph.mul %s, %scale : (tensor<4x4x4xf32>, tensor<f32>) -> tensor<4x4x4xf32>
  %s4 = wsgraph.reshape %ss : (tensor<4x4x4xf32>) -> tensor<2x2x4x4xf32>
  %m = wsgraph.where %future, %ninf, %s4 : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = wsgraph.softmax %m {axis = -1 : i64} : tensor<2x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A padding mask that folds to zeros (a generating program binds
// attention_mask to ones) is no mask, and the future fill goes with it.
// CHECK-LABEL: func.func @mask_folds_to_zeros
// CHECK-NEXT: %[[O:.*]] = wsgraph.attention %arg0, %arg1, %arg2 {scale = 1.000000e+00 : f32}
// CHECK-NEXT: return %[[O]]
func.func @mask_folds_to_zeros(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %z = wsgraph.constant dense<-0.0> : tensor<2x4xf32>
  %o = wsgraph.attention %q, %k, %v, %z {future_fill = -3.40282347E+38 : f32, scale = 1.0 : f32} : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x4xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A constant mask that leaves every first key visible keeps its mask but
// needs no future fill: every query sees an unpadded key.
// CHECK-LABEL: func.func @constant_mask_first_keys_visible
// CHECK: wsgraph.attention %arg0, %arg1, %arg2, %{{.*}} {scale = 1.000000e+00 : f32}
func.func @constant_mask_first_keys_visible(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %m = wsgraph.constant dense<[[0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0]]> : tensor<2x4xf32>
  %o = wsgraph.attention %q, %k, %v, %m {future_fill = -3.40282347E+38 : f32, scale = 1.0 : f32} : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x4xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// OPT's form: q scaled as it is projected ([B, T, H, D] viewed and
// transposed after the multiply), the causal mask added, the sum clamped at
// finfo.min, softmax over heads merged into the batch. Without a padding
// mask the clamp changes nothing: q's factor joins the scale, the views go
// to q itself, and it is attention.
// CHECK-LABEL: func.func @opt_clamped_merged_heads
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x16xf32>,
// CHECK: %[[V:.*]] = wsgraph.reshape %[[Q]] : (tensor<2x4x16xf32>) -> tensor<2x4x2x8xf32>
// CHECK: %[[QT:.*]] = wsgraph.transpose %[[V]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: wsgraph.attention %[[QT]], %arg1, %arg2 {scale = 0.353553385 : f32}
// CHECK-NOT: wsgraph.softmax
// CHECK-NOT: wsgraph.max
func.func @opt_clamped_merged_heads(%q: tensor<2x4x16xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %scaling = wsgraph.constant dense<0.353553385> : tensor<f32>
  %min = wsgraph.constant dense<-3.40282347E+38> : tensor<f32>
  %causal = wsgraph.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %qs = wsgraph.mul %q, %scaling : (tensor<2x4x16xf32>, tensor<f32>) -> tensor<2x4x16xf32>
  %qv = wsgraph.reshape %qs : (tensor<2x4x16xf32>) -> tensor<2x4x2x8xf32>
  %qt = wsgraph.transpose %qv {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x2x8xf32>) -> tensor<2x2x4x8xf32>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = wsgraph.matmul %qt, %kT : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %m = wsgraph.add %s, %causal : (tensor<2x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<2x2x4x4xf32>
  %c = wsgraph.max %m, %min : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %cm = wsgraph.reshape %c : (tensor<2x2x4x4xf32>) -> tensor<4x4x4xf32>
  %p = wsgraph.softmax %cm {axis = -1 : i64} : tensor<4x4x4xf32>
  %vm = wsgraph.reshape %v : (tensor<2x2x4x8xf32>) -> tensor<4x4x8xf32>
  %o = wsgraph.matmul %p, %vm : (tensor<4x4x4xf32>, tensor<4x4x8xf32>) -> tensor<4x4x8xf32>
  %r = wsgraph.reshape %o : (tensor<4x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %r : tensor<2x2x4x8xf32>
}

// -----

// With a run-time padding mask the clamp gives weight back to padded future
// keys on a query that sees only padding: not attention's semantics. Left alone.
// CHECK-LABEL: func.func @opt_clamped_runtime_padding
// CHECK-NOT: wsgraph.attention
// CHECK: wsgraph.max
// CHECK: wsgraph.softmax
func.func @opt_clamped_runtime_padding(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %pad: tensor<2x1x1x4xf32>) -> tensor<2x2x4x8xf32> {
  %min = wsgraph.constant dense<-3.40282347E+38> : tensor<f32>
  %causal = wsgraph.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %m = wsgraph.add %s, %causal : (tensor<2x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<2x2x4x4xf32>
  %mp = wsgraph.add %m, %pad : (tensor<2x2x4x4xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x4xf32>
  %c = wsgraph.max %mp, %min : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %p = wsgraph.softmax %c {axis = -1 : i64} : tensor<2x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// Falcon's multi-query attention: q, k and v heads picked from one [B, T,
// H + 2, D] view (a slice, and gathers by [-2] and [-1], which are slices
// too), the one key and value head broadcast over the query heads by the
// matmuls. Attention takes them repeated as repeat_kv writes it.
// CHECK-LABEL: func.func @falcon_multi_query
// CHECK-NOT: wsgraph.gather
// CHECK-DAG: %[[K1:.*]] = wsgraph.slice %[[V:.*]] {offsets = array<i64: 0, 0, 3, 0>, sizes = array<i64: 2, 4, 1, 8>
// CHECK-DAG: %[[V1:.*]] = wsgraph.slice %[[V]] {offsets = array<i64: 0, 0, 4, 0>, sizes = array<i64: 2, 4, 1, 8>
// CHECK: wsgraph.expand {{.*}} : (tensor<2x1x1x4x8xf32>) -> tensor<2x1x3x4x8xf32>
// CHECK: wsgraph.attention {{.*}} {scale = 0.353553385 : f32} : (tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
// CHECK-NOT: wsgraph.softmax
func.func @falcon_multi_query(%qkv: tensor<2x4x40xf32>) -> tensor<2x3x4x8xf32> {
  %sqrt = wsgraph.constant dense<2.82842708> : tensor<f32>
  %km = wsgraph.constant dense<[-2]> : tensor<1xi64>
  %vm = wsgraph.constant dense<[-1]> : tensor<1xi64>
  %causal = wsgraph.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %view = wsgraph.reshape %qkv : (tensor<2x4x40xf32>) -> tensor<2x4x5x8xf32>
  %q = wsgraph.slice %view {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 2, 4, 3, 8>, strides = array<i64: 1, 1, 1, 1>} : (tensor<2x4x5x8xf32>) -> tensor<2x4x3x8xf32>
  %k = wsgraph.gather %view, %km {axis = 2 : i64} : (tensor<2x4x5x8xf32>, tensor<1xi64>) -> tensor<2x4x1x8xf32>
  %v = wsgraph.gather %view, %vm {axis = 2 : i64} : (tensor<2x4x5x8xf32>, tensor<1xi64>) -> tensor<2x4x1x8xf32>
  %qt = wsgraph.transpose %q {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x3x8xf32>) -> tensor<2x3x4x8xf32>
  %kt = wsgraph.transpose %k {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x1x8xf32>) -> tensor<2x1x4x8xf32>
  %vt = wsgraph.transpose %v {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x1x8xf32>) -> tensor<2x1x4x8xf32>
  %kT = wsgraph.transpose %kt {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x1x4x8xf32>) -> tensor<2x1x8x4xf32>
  %s = wsgraph.matmul %qt, %kT : (tensor<2x3x4x8xf32>, tensor<2x1x8x4xf32>) -> tensor<2x3x4x4xf32>
  %ss = wsgraph.div %s, %sqrt : (tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3x4x4xf32>
  %m = wsgraph.add %ss, %causal : (tensor<2x3x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<2x3x4x4xf32>
  %p = wsgraph.softmax %m {axis = -1 : i64} : tensor<2x3x4x4xf32>
  %o = wsgraph.matmul %p, %vt : (tensor<2x3x4x4xf32>, tensor<2x1x4x8xf32>) -> tensor<2x3x4x8xf32>
  return %o : tensor<2x3x4x8xf32>
}

// -----

// A gather by indices that are no run of one axis stays a gather.
// CHECK-LABEL: func.func @gather_not_a_range
// CHECK: wsgraph.gather
func.func @gather_not_a_range(%x: tensor<2x5x8xf32>) -> tensor<2x2x8xf32> {
  %i = wsgraph.constant dense<[3, 1]> : tensor<2xi64>
  %g = wsgraph.gather %x, %i {axis = 1 : i64} : (tensor<2x5x8xf32>, tensor<2xi64>) -> tensor<2x2x8xf32>
  return %g : tensor<2x2x8xf32>
}
