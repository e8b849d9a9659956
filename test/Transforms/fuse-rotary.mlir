// RUN: wsc-opt %s --wsgraph-fuse -split-input-file -verify-diagnostics | FileCheck %s

// Rotary embeddings as torch exports HF's apply_rotary_pos_emb:
// x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x[..., R/2:], x[..., :R/2]).
// x is [B, H, T, D] = [1, 2, 4, 8].

// Llama: every dimension rotated, the tables [1, 1, T, D].
// CHECK-LABEL: func.func @full
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x8xf32>, %[[C:.*]]: tensor<1x1x4x8xf32>, %[[S:.*]]: tensor<1x1x4x8xf32>)
// CHECK-NEXT: %[[R:.*]] = wsgraph.rotary %[[X]], %[[C]], %[[S]] : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @full(%x: tensor<1x2x4x8xf32>, %cos: tensor<1x1x4x8xf32>, %sin: tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %a = wsgraph.mul %x, %cos : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %x1 = wsgraph.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 2, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %x2 = wsgraph.slice %x {offsets = array<i64: 0, 0, 0, 4>, sizes = array<i64: 1, 2, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %n = wsgraph.neg %x2 : tensor<1x2x4x4xf32>
  %rot = wsgraph.concat %n, %x1 {axis = -1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %b = wsgraph.mul %sin, %rot : (tensor<1x1x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %r = wsgraph.add %b, %a : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

// GPT-NeoX: the first R = 2 dimensions rotated (rotary_pct 0.25), the rest
// passed through by a concat; the tables [T, R].
// CHECK-LABEL: func.func @partial
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x8xf32>, %[[C:.*]]: tensor<4x2xf32>, %[[S:.*]]: tensor<4x2xf32>)
// CHECK-NEXT: %[[R:.*]] = wsgraph.rotary %[[X]], %[[C]], %[[S]] : (tensor<1x2x4x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @partial(%x: tensor<1x2x4x8xf32>, %cos: tensor<4x2xf32>, %sin: tensor<4x2xf32>) -> tensor<1x2x4x8xf32> {
  %xr = wsgraph.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 2, 4, 2>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x2xf32>
  %xp = wsgraph.slice %x {offsets = array<i64: 0, 0, 0, 2>, sizes = array<i64: 1, 2, 4, 6>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x6xf32>
  %a = wsgraph.mul %xr, %cos : (tensor<1x2x4x2xf32>, tensor<4x2xf32>) -> tensor<1x2x4x2xf32>
  %x1 = wsgraph.slice %xr {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 2, 4, 1>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x2xf32>) -> tensor<1x2x4x1xf32>
  %x2 = wsgraph.slice %xr {offsets = array<i64: 0, 0, 0, 1>, sizes = array<i64: 1, 2, 4, 1>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x2xf32>) -> tensor<1x2x4x1xf32>
  %n = wsgraph.neg %x2 : tensor<1x2x4x1xf32>
  %rot = wsgraph.concat %n, %x1 {axis = 3 : i64} : (tensor<1x2x4x1xf32>, tensor<1x2x4x1xf32>) -> tensor<1x2x4x2xf32>
  %b = wsgraph.mul %rot, %sin : (tensor<1x2x4x2xf32>, tensor<4x2xf32>) -> tensor<1x2x4x2xf32>
  %y = wsgraph.add %a, %b : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  %r = wsgraph.concat %y, %xp {axis = -1 : i64} : (tensor<1x2x4x2xf32>, tensor<1x2x4x6xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

// Not rotate_half: the halves are not swapped (cat(-x1, x2)). Left alone.
// CHECK-LABEL: func.func @not_rotate_half
// CHECK-NOT: wsgraph.rotary
// CHECK: wsgraph.concat
func.func @not_rotate_half(%x: tensor<1x2x4x8xf32>, %cos: tensor<1x1x4x8xf32>, %sin: tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %a = wsgraph.mul %x, %cos : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %x1 = wsgraph.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 2, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %x2 = wsgraph.slice %x {offsets = array<i64: 0, 0, 0, 4>, sizes = array<i64: 1, 2, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %n = wsgraph.neg %x1 : tensor<1x2x4x4xf32>
  %rot = wsgraph.concat %n, %x2 {axis = -1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %b = wsgraph.mul %sin, %rot : (tensor<1x1x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %r = wsgraph.add %b, %a : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

// GPT-J: rotate_every_two(x) = stack(-x[..., 1::2], x[..., ::2], -1)
// flattened, on [B, T, H, R] before the heads' transpose, tables [1, T, 1, R].
// The rotary is interleaved, and the transpose moves before it (the tables
// transposed alike) so that attention reads turned [B, H, T, R] heads.
// CHECK-LABEL: func.func @every_two_before_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x2x8xf32>, %[[C:.*]]: tensor<1x4x1x8xf32>, %[[S:.*]]: tensor<1x4x1x8xf32>)
// CHECK-DAG: %[[XT:.*]] = wsgraph.transpose %[[X]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-DAG: %[[CT:.*]] = wsgraph.transpose %[[C]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x1x8xf32>) -> tensor<1x1x4x8xf32>
// CHECK-DAG: %[[ST:.*]] = wsgraph.transpose %[[S]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x1x8xf32>) -> tensor<1x1x4x8xf32>
// CHECK: %[[R:.*]] = wsgraph.rotary %[[XT]], %[[CT]], %[[ST]] {interleaved = true} : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @every_two_before_transpose(%x: tensor<1x4x2x8xf32>, %cos: tensor<1x4x1x8xf32>, %sin: tensor<1x4x1x8xf32>) -> tensor<1x2x4x8xf32> {
  %a = wsgraph.mul %x, %cos : (tensor<1x4x2x8xf32>, tensor<1x4x1x8xf32>) -> tensor<1x4x2x8xf32>
  %even = wsgraph.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 4, 2, 4>, strides = array<i64: 1, 1, 1, 2>} : (tensor<1x4x2x8xf32>) -> tensor<1x4x2x4xf32>
  %odd = wsgraph.slice %x {offsets = array<i64: 0, 0, 0, 1>, sizes = array<i64: 1, 4, 2, 4>, strides = array<i64: 1, 1, 1, 2>} : (tensor<1x4x2x8xf32>) -> tensor<1x4x2x4xf32>
  %n = wsgraph.neg %odd : tensor<1x4x2x4xf32>
  %n1 = wsgraph.unsqueeze %n {axes = array<i64: -1>} : (tensor<1x4x2x4xf32>) -> tensor<1x4x2x4x1xf32>
  %e1 = wsgraph.unsqueeze %even {axes = array<i64: 4>} : (tensor<1x4x2x4xf32>) -> tensor<1x4x2x4x1xf32>
  %st = wsgraph.concat %n1, %e1 {axis = -1 : i64} : (tensor<1x4x2x4x1xf32>, tensor<1x4x2x4x1xf32>) -> tensor<1x4x2x4x2xf32>
  %rot = wsgraph.reshape %st : (tensor<1x4x2x4x2xf32>) -> tensor<1x4x2x8xf32>
  %b = wsgraph.mul %rot, %sin : (tensor<1x4x2x8xf32>, tensor<1x4x1x8xf32>) -> tensor<1x4x2x8xf32>
  %y = wsgraph.add %a, %b : (tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32>
  %t = wsgraph.transpose %y {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x4x8xf32>
  return %t : tensor<1x2x4x8xf32>
}

// -----

// The negation after the new axis, and tables of lower rank ([T, 1, R]):
// reshaped to the input's rank before they are transposed.
// CHECK-LABEL: func.func @every_two_negated_late
// CHECK: wsgraph.reshape %{{.*}} : (tensor<4x1x8xf32>) -> tensor<1x4x1x8xf32>
// CHECK: wsgraph.rotary {{.*}} {interleaved = true} : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NOT: wsgraph.neg
func.func @every_two_negated_late(%x: tensor<1x4x2x8xf32>, %cos: tensor<4x1x8xf32>, %sin: tensor<4x1x8xf32>) -> tensor<1x2x4x8xf32> {
  %a = wsgraph.mul %x, %cos : (tensor<1x4x2x8xf32>, tensor<4x1x8xf32>) -> tensor<1x4x2x8xf32>
  %even = wsgraph.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 4, 2, 4>, strides = array<i64: 1, 1, 1, 2>} : (tensor<1x4x2x8xf32>) -> tensor<1x4x2x4xf32>
  %odd = wsgraph.slice %x {offsets = array<i64: 0, 0, 0, 1>, sizes = array<i64: 1, 4, 2, 4>, strides = array<i64: 1, 1, 1, 2>} : (tensor<1x4x2x8xf32>) -> tensor<1x4x2x4xf32>
  %o1 = wsgraph.unsqueeze %odd {axes = array<i64: -1>} : (tensor<1x4x2x4xf32>) -> tensor<1x4x2x4x1xf32>
  %n1 = wsgraph.neg %o1 : tensor<1x4x2x4x1xf32>
  %e1 = wsgraph.unsqueeze %even {axes = array<i64: -1>} : (tensor<1x4x2x4xf32>) -> tensor<1x4x2x4x1xf32>
  %st = wsgraph.concat %n1, %e1 {axis = 4 : i64} : (tensor<1x4x2x4x1xf32>, tensor<1x4x2x4x1xf32>) -> tensor<1x4x2x4x2xf32>
  %rot = wsgraph.reshape %st : (tensor<1x4x2x4x2xf32>) -> tensor<1x4x2x8xf32>
  %b = wsgraph.mul %sin, %rot : (tensor<4x1x8xf32>, tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32>
  %y = wsgraph.add %b, %a : (tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32>
  %t = wsgraph.transpose %y {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x4x8xf32>
  return %t : tensor<1x2x4x8xf32>
}

// -----

// Not rotate_every_two: the odd elements not negated, (x[2i+1], x[2i]). Left alone.
// CHECK-LABEL: func.func @not_every_two
// CHECK-NOT: wsgraph.rotary
// CHECK: wsgraph.concat
func.func @not_every_two(%x: tensor<1x4x2x8xf32>, %cos: tensor<1x4x1x8xf32>, %sin: tensor<1x4x1x8xf32>) -> tensor<1x4x2x8xf32> {
  %a = wsgraph.mul %x, %cos : (tensor<1x4x2x8xf32>, tensor<1x4x1x8xf32>) -> tensor<1x4x2x8xf32>
  %even = wsgraph.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 4, 2, 4>, strides = array<i64: 1, 1, 1, 2>} : (tensor<1x4x2x8xf32>) -> tensor<1x4x2x4xf32>
  %odd = wsgraph.slice %x {offsets = array<i64: 0, 0, 0, 1>, sizes = array<i64: 1, 4, 2, 4>, strides = array<i64: 1, 1, 1, 2>} : (tensor<1x4x2x8xf32>) -> tensor<1x4x2x4xf32>
  %o1 = wsgraph.unsqueeze %odd {axes = array<i64: -1>} : (tensor<1x4x2x4xf32>) -> tensor<1x4x2x4x1xf32>
  %e1 = wsgraph.unsqueeze %even {axes = array<i64: -1>} : (tensor<1x4x2x4xf32>) -> tensor<1x4x2x4x1xf32>
  %st = wsgraph.concat %o1, %e1 {axis = -1 : i64} : (tensor<1x4x2x4x1xf32>, tensor<1x4x2x4x1xf32>) -> tensor<1x4x2x4x2xf32>
  %rot = wsgraph.reshape %st : (tensor<1x4x2x4x2xf32>) -> tensor<1x4x2x8xf32>
  %b = wsgraph.mul %rot, %sin : (tensor<1x4x2x8xf32>, tensor<1x4x1x8xf32>) -> tensor<1x4x2x8xf32>
  %y = wsgraph.add %a, %b : (tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32>
  return %y : tensor<1x4x2x8xf32>
}
