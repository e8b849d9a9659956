// RUN: wsc-opt %s --wsgraph-fuse -split-input-file -verify-diagnostics | FileCheck %s

// softmax(mask(q @ kT * scale)) @ v into wsgraph.attention. q, k, v are
// [B, H, T, D] = [1, 2, 4, 8] unless said otherwise. -verify-diagnostics
// makes any diagnostic of the pass (a failed match must report none) fail
// the test.

// The usual export: kT = transpose(k), a Mul scale, and the causal mask as
// where(future, -inf, scores). The transpose the fusion puts on kT cancels
// the one of the input.
// CHECK-LABEL: func.func @mul_scale_future_mask
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[O:.*]] = wsgraph.attention %[[Q]], %[[K]], %[[V]] {scale = 0.353553385 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @mul_scale_future_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %scale = wsgraph.constant dense<0.353553385> : tensor<f32>
  %ninf = wsgraph.constant dense<0xFF800000> : tensor<f32>
  %mask = wsgraph.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %ss = wsgraph.mul %s, %scale : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %m = wsgraph.where %mask, %ninf, %ss : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %m {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A Div scale (1 / 4), the constant first in the Mul-free form, and the mask
// as where(visible, scores, -inf) with a rank-2 mask.
// CHECK-LABEL: func.func @div_scale_visible_mask
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[O:.*]] = wsgraph.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @div_scale_visible_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %four = wsgraph.constant dense<4.0> : tensor<f32>
  %ninf = wsgraph.constant dense<0xFF800000> : tensor<f32>
  %mask = wsgraph.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %ss = wsgraph.div %s, %four : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %m = wsgraph.where %mask, %ss, %ninf : (tensor<4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %m {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The mask as the importer builds it before folding: trilu of ones compared
// with zero. The pass folds it to a constant, then fuses.
// CHECK-LABEL: func.func @folded_mask
// CHECK-NEXT: %[[O:.*]] = wsgraph.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.250000e-01 : f32}
// CHECK-NEXT: return %[[O]]
func.func @folded_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %ones = wsgraph.constant dense<1.0> : tensor<4x4xf32>
  %zero = wsgraph.constant dense<0.0> : tensor<f32>
  %tri = wsgraph.trilu %ones {upper = false} : tensor<4x4xf32>
  %future = wsgraph.equal %tri, %zero : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xi1>
  %scale = wsgraph.constant dense<0.125> : tensor<f32>
  %ninf = wsgraph.constant dense<0xFF800000> : tensor<f32>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %ss = wsgraph.mul %scale, %s : (tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %m = wsgraph.where %future, %ninf, %ss : (tensor<4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %m : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Fewer queries than keys (a KV cache): query i sees keys 0 .. i + S - T.
// CHECK-LABEL: func.func @kv_cache_mask
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x2x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[O:.*]] = wsgraph.attention %[[Q]], %[[K]], %[[V]] {scale = 5.000000e-01 : f32} : (tensor<1x2x2x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x2x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @kv_cache_mask(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x2x8xf32> {
  %scale = wsgraph.constant dense<0.5> : tensor<f32>
  %ninf = wsgraph.constant dense<0xFF800000> : tensor<f32>
  %mask = wsgraph.constant dense<[[[[false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x2x4xi1>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x2x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x2x4xf32>
  %ss = wsgraph.mul %s, %scale : (tensor<1x2x2x4xf32>, tensor<f32>) -> tensor<1x2x2x4xf32>
  %m = wsgraph.where %mask, %ninf, %ss : (tensor<1x1x2x4xi1>, tensor<f32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %p = wsgraph.softmax %m : tensor<1x2x2x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x2x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}

// -----

// The same shapes with the mask of T == S (key j hidden when j > i) is not
// the causal mask of a KV cache: no fusion.
// CHECK-LABEL: func.func @kv_cache_wrong_mask
// CHECK-NOT: wsgraph.attention
// CHECK: wsgraph.softmax
// CHECK-NOT: wsgraph.attention
// CHECK: return
func.func @kv_cache_wrong_mask(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x2x8xf32> {
  %scale = wsgraph.constant dense<0.5> : tensor<f32>
  %ninf = wsgraph.constant dense<0xFF800000> : tensor<f32>
  %mask = wsgraph.constant dense<[[[[false, true, true, true], [false, false, true, true]]]]> : tensor<1x1x2x4xi1>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x2x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x2x4xf32>
  %ss = wsgraph.mul %s, %scale : (tensor<1x2x2x4xf32>, tensor<f32>) -> tensor<1x2x2x4xf32>
  %m = wsgraph.where %mask, %ninf, %ss : (tensor<1x1x2x4xi1>, tensor<f32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %p = wsgraph.softmax %m : tensor<1x2x2x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x2x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}

// -----

// A mask that is not causal (the diagonal is hidden too, and the visible
// mask is used with the -inf on the wrong side): no fusion.
// CHECK-LABEL: func.func @non_causal_masks
// CHECK-NOT: wsgraph.attention
// CHECK: wsgraph.where
// CHECK: wsgraph.where
// CHECK-NOT: wsgraph.attention
// CHECK: return
func.func @non_causal_masks(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) {
  %ninf = wsgraph.constant dense<0xFF800000> : tensor<f32>
  %strict = wsgraph.constant dense<[[true, true, true, true], [false, true, true, true], [false, false, true, true], [false, false, false, true]]> : tensor<4x4xi1>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %m = wsgraph.where %strict, %ninf, %s : (tensor<4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %m : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>

  %visible = wsgraph.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %s2 = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %m2 = wsgraph.where %visible, %ninf, %s2 : (tensor<4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p2 = wsgraph.softmax %m2 : tensor<1x2x4x4xf32>
  %o2 = wsgraph.matmul %p2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %o2 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}

// -----

// A causal mask that replaces scores by 0 instead of -inf: no fusion.
// CHECK-LABEL: func.func @mask_value_not_ninf
// CHECK-NOT: wsgraph.attention
// CHECK: return
func.func @mask_value_not_ninf(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %zero = wsgraph.constant dense<0.0> : tensor<f32>
  %mask = wsgraph.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %m = wsgraph.where %mask, %zero, %s : (tensor<4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %m : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// No mask at all: causal = false. No scale either: scale = 1.
// CHECK-LABEL: func.func @no_mask
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x16xf32>)
// CHECK-NEXT: %[[O:.*]] = wsgraph.attention %[[Q]], %[[K]], %[[V]] {causal = false, scale = 1.000000e+00 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @no_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32> {
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %s : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}

// -----

// No mask, Mul scale.
// CHECK-LABEL: func.func @no_mask_scaled
// CHECK-NEXT: %[[O:.*]] = wsgraph.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = false, scale = 1.250000e-01 : f32}
// CHECK-NEXT: return %[[O]]
func.func @no_mask_scaled(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %scale = wsgraph.constant dense<0.125> : tensor<f32>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %ss = wsgraph.mul %s, %scale : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %ss : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// GPT-2's layout: q, k, v come from [B, T, H, D] and kT is one transpose
// [0, 2, 3, 1] of it. The fused k is transpose(kT, [0, 1, 3, 2]), which
// composes to a single transpose [0, 2, 1, 3], the same as q and v.
// CHECK-LABEL: func.func @composite_transpose
// CHECK-SAME: (%[[XQ:.*]]: tensor<1x4x2x8xf32>, %[[XK:.*]]: tensor<1x4x2x8xf32>, %[[XV:.*]]: tensor<1x4x2x8xf32>)
// CHECK-DAG: %[[Q:.*]] = wsgraph.transpose %[[XQ]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-DAG: %[[K:.*]] = wsgraph.transpose %[[XK]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-DAG: %[[V:.*]] = wsgraph.transpose %[[XV]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NOT: wsgraph.transpose
// CHECK: %[[O:.*]] = wsgraph.attention %[[Q]], %[[K]], %[[V]] {causal = false, scale = 1.000000e+00 : f32}
// CHECK-NEXT: return %[[O]]
func.func @composite_transpose(%xq: tensor<1x4x2x8xf32>, %xk: tensor<1x4x2x8xf32>, %xv: tensor<1x4x2x8xf32>) -> tensor<1x2x4x8xf32> {
  %q = wsgraph.transpose %xq {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x4x8xf32>
  %kT = wsgraph.transpose %xk {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x8x4xf32>
  %v = wsgraph.transpose %xv {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x4x8xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %s : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A kT that is no transpose gets one.
// CHECK-LABEL: func.func @kT_argument
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[KT:.*]]: tensor<1x2x8x4xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[K:.*]] = wsgraph.transpose %[[KT]] {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x4xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[O:.*]] = wsgraph.attention %[[Q]], %[[K]], %[[V]] {causal = false, scale = 1.000000e+00 : f32}
// CHECK-NEXT: return %[[O]]
func.func @kT_argument(%q: tensor<1x2x4x8xf32>, %kT: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %s : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A softmax over another axis than the keys: no fusion.
// CHECK-LABEL: func.func @softmax_wrong_axis
// CHECK-NOT: wsgraph.attention
// CHECK: wsgraph.softmax %{{.*}} {axis = 2 : i64}
// CHECK-NOT: wsgraph.attention
// CHECK: return
func.func @softmax_wrong_axis(%q: tensor<1x2x4x8xf32>, %kT: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %s {axis = 2 : i64} : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A scale that is not one value: no fusion.
// CHECK-LABEL: func.func @scale_not_splat
// CHECK-NOT: wsgraph.attention
// CHECK: wsgraph.softmax
// CHECK-NOT: wsgraph.attention
// CHECK: return
func.func @scale_not_splat(%q: tensor<1x2x4x8xf32>, %kT: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %scale = wsgraph.constant dense<[0.5, 1.0, 2.0, 4.0]> : tensor<4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %ss = wsgraph.mul %s, %scale : (tensor<1x2x4x4xf32>, tensor<4xf32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %ss : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Scores times another tensor is no scale: no fusion.
// CHECK-LABEL: func.func @scale_not_constant
// CHECK-NOT: wsgraph.attention
// CHECK: return
func.func @scale_not_constant(%q: tensor<1x2x4x8xf32>, %kT: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %t: tensor<f32>) -> tensor<1x2x4x8xf32> {
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %ss = wsgraph.mul %s, %t : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %ss : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// v broadcast over the heads is a valid matmul but not a valid attention:
// no fusion, and no transpose left behind.
// CHECK-LABEL: func.func @v_broadcast
// CHECK-NOT: wsgraph.transpose
// CHECK-NOT: wsgraph.attention
// CHECK: wsgraph.softmax
// CHECK-NOT: wsgraph.transpose
// CHECK-NOT: wsgraph.attention
// CHECK: return
func.func @v_broadcast(%q: tensor<1x2x4x8xf32>, %kT: tensor<1x2x8x4xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %s : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The probabilities are used elsewhere too: no fusion.
// CHECK-LABEL: func.func @probabilities_used_twice
// CHECK-NOT: wsgraph.attention
// CHECK: return
func.func @probabilities_used_twice(%q: tensor<1x2x4x8xf32>, %kT: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %s : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// HF GPT-2's causal mask: where(visible, scores, finfo.min). A finite fill
// that large zeroes the masked keys' weights exactly, as -inf does.
// CHECK-LABEL: func.func @finfo_min_mask
// CHECK-NEXT: %[[O:.*]] = wsgraph.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 2.500000e-01 : f32}
// CHECK-NEXT: return %[[O]]
func.func @finfo_min_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %four = wsgraph.constant dense<4.0> : tensor<f32>
  %min = wsgraph.constant dense<-3.40282347E+38> : tensor<f32>
  %mask = wsgraph.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %ss = wsgraph.div %s, %four : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %m = wsgraph.where %mask, %ss, %min : (tensor<4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = wsgraph.softmax %m {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A key padding mask [B, 1, 1, S] added to the scores after a -inf causal
// mask becomes attention's [B, S] mask operand.
// CHECK-LABEL: func.func @padding_mask
// CHECK-SAME: %[[PAD:[a-z0-9]+]]: tensor<2x1x1x4xf32>
// CHECK: %[[M:.*]] = wsgraph.reshape %[[PAD]] : (tensor<2x1x1x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[O:.*]] = wsgraph.attention %{{.*}}, %{{.*}}, %{{.*}}, %[[M]] {scale = 2.500000e-01 : f32} : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x4xf32>) -> tensor<2x2x4x8xf32>
func.func @padding_mask(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %pad: tensor<2x1x1x4xf32>) -> tensor<2x2x4x8xf32> {
  %four = wsgraph.constant dense<4.0> : tensor<f32>
  %ninf = wsgraph.constant dense<0xFF800000> : tensor<f32>
  %mask = wsgraph.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %ss = wsgraph.div %s, %four : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = wsgraph.where %mask, %ss, %ninf : (tensor<4x4xi1>, tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %a = wsgraph.add %m, %pad : (tensor<2x2x4x4xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x4xf32>
  %p = wsgraph.softmax %a {axis = 3 : i64} : tensor<2x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// finfo.min for the future beside a padding mask known only at run time:
// attention keeps it as the future keys' fill (a query whose visible keys
// are all padded weighs the future keys, as in torch).
// CHECK-LABEL: func.func @finite_fill_and_padding
// CHECK: wsgraph.attention %arg0, %arg1, %arg2, %{{.*}} {future_fill = -3.40282347E+38 : f32, scale = 2.500000e-01 : f32}
// CHECK-NOT: wsgraph.softmax
func.func @finite_fill_and_padding(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %pad: tensor<2x1x1x4xf32>) -> tensor<2x2x4x8xf32> {
  %four = wsgraph.constant dense<4.0> : tensor<f32>
  %min = wsgraph.constant dense<-3.40282347E+38> : tensor<f32>
  %mask = wsgraph.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %kT = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = wsgraph.matmul %q, %kT : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %ss = wsgraph.div %s, %four : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = wsgraph.where %mask, %ss, %min : (tensor<4x4xi1>, tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %a = wsgraph.add %m, %pad : (tensor<2x2x4x4xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x4xf32>
  %p = wsgraph.softmax %a {axis = 3 : i64} : tensor<2x2x4x4xf32>
  %o = wsgraph.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}
