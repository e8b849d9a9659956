// RUN: wsc-opt %s --wsgraph-fuse -split-input-file -verify-diagnostics | FileCheck %s

// Gemm into wsgraph.linear: HF GPT-2's Conv1D is torch.addmm(bias, x.view(-1, in), W)
// then a view back, Reshape -> Gemm -> Reshape. The linear takes the 3-D
// activation and both reshapes go.

// CHECK-LABEL: func.func @conv1d
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>)
// CHECK-DAG: %[[W:.*]] = wsgraph.weight "c_attn.weight"
// CHECK-DAG: %[[B:.*]] = wsgraph.weight "c_attn.bias"
// CHECK-NOT: wsgraph.reshape
// CHECK: %[[Y:.*]] = wsgraph.linear %[[X]], %[[W]], %[[B]] : (tensor<2x8x32xf32>, tensor<32x96xf32>, tensor<96xf32>) -> tensor<2x8x96xf32>
// CHECK-NEXT: return %[[Y]]
func.func @conv1d(%x: tensor<2x8x32xf32>) -> tensor<2x8x96xf32> {
  %w = wsgraph.weight "c_attn.weight" from "m.bin" at 0 : tensor<32x96xf32>
  %b = wsgraph.weight "c_attn.bias" from "m.bin" at 12288 : tensor<96xf32>
  %0 = wsgraph.reshape %x : (tensor<2x8x32xf32>) -> tensor<16x32xf32>
  %1 = wsgraph.gemm %0, %w, %b {alpha = 1.0 : f32, beta = 1.0 : f32} : (tensor<16x32xf32>, tensor<32x96xf32>, tensor<96xf32>) -> tensor<16x96xf32>
  %2 = wsgraph.reshape %1 : (tensor<16x96xf32>) -> tensor<2x8x96xf32>
  return %2 : tensor<2x8x96xf32>
}

// -----

// After attention, the heads [B, T, H, D] flatten straight to [B*T, C]: one
// reshape to [B, T, C] stays, before the linear.
// CHECK-LABEL: func.func @heads_merged
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x4x8xf32>)
// CHECK: %[[M:.*]] = wsgraph.reshape %[[X]] : (tensor<2x8x4x8xf32>) -> tensor<2x8x32xf32>
// CHECK-NEXT: %[[Y:.*]] = wsgraph.linear %[[M]], %{{.*}}, %{{.*}} : (tensor<2x8x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
// CHECK-NEXT: return %[[Y]]
func.func @heads_merged(%x: tensor<2x8x4x8xf32>) -> tensor<2x8x32xf32> {
  %w = wsgraph.weight "c_proj.weight" from "m.bin" at 0 : tensor<32x32xf32>
  %b = wsgraph.constant dense<0.5> : tensor<32xf32>
  %0 = wsgraph.reshape %x : (tensor<2x8x4x8xf32>) -> tensor<16x32xf32>
  %1 = wsgraph.gemm %0, %w, %b : (tensor<16x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %2 = wsgraph.reshape %1 : (tensor<16x32xf32>) -> tensor<2x8x32xf32>
  return %2 : tensor<2x8x32xf32>
}

// -----

// Without C, a bias added after the reshape joins the linear; a gemm on a
// 2-D input with nothing around it is a 2-D linear.
// CHECK-LABEL: func.func @no_c
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[X2:.*]]: tensor<4x32xf32>)
// CHECK-DAG: %[[W:.*]] = wsgraph.weight "w"
// CHECK-DAG: %[[B:.*]] = wsgraph.weight "b"
// CHECK-DAG: %[[Y:.*]] = wsgraph.linear %[[X]], %[[W]], %[[B]] : (tensor<2x8x32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
// CHECK-DAG: %[[Y2:.*]] = wsgraph.linear %[[X2]], %[[W]] : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
// CHECK: return %[[Y]], %[[Y2]]
func.func @no_c(%x: tensor<2x8x32xf32>, %x2: tensor<4x32xf32>) -> (tensor<2x8x16xf32>, tensor<4x16xf32>) {
  %w = wsgraph.weight "w" from "m.bin" at 0 : tensor<32x16xf32>
  %b = wsgraph.weight "b" from "m.bin" at 2048 : tensor<16xf32>
  %0 = wsgraph.reshape %x : (tensor<2x8x32xf32>) -> tensor<16x32xf32>
  %1 = wsgraph.gemm %0, %w : (tensor<16x32xf32>, tensor<32x16xf32>) -> tensor<16x16xf32>
  %2 = wsgraph.reshape %1 : (tensor<16x16xf32>) -> tensor<2x8x16xf32>
  %3 = wsgraph.add %2, %b : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %4 = wsgraph.gemm %x2, %w : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
  return %3, %4 : tensor<2x8x16xf32>, tensor<4x16xf32>
}

// -----

// A literal weight is transposed (transB) and scaled (alpha) at compile time,
// a literal bias scaled by beta; beta = 0 drops C, whatever it is.
// CHECK-LABEL: func.func @literal_forms
// CHECK-SAME: (%[[X:.*]]: tensor<3x2xf32>)
// CHECK-DAG: %[[WT:.*]] = wsgraph.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-DAG: %[[WS:.*]] = wsgraph.constant dense<{{\[\[}}2.000000e+00, 4.000000e+00, 6.000000e+00], [8.000000e+00, 1.000000e+01, 1.200000e+01]]> : tensor<2x3xf32>
// CHECK-DAG: %[[W:.*]] = wsgraph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-DAG: %[[B:.*]] = wsgraph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[BS:.*]] = wsgraph.constant dense<[5.000000e-01, 1.000000e+00, 1.500000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[Y0:.*]] = wsgraph.linear %[[X]], %[[WT]], %[[B]] : (tensor<3x2xf32>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
// CHECK-DAG: %[[Y1:.*]] = wsgraph.linear %[[X]], %[[WS]], %[[BS]] : (tensor<3x2xf32>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
// CHECK-DAG: %[[Y2:.*]] = wsgraph.linear %[[X]], %[[W]] : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
// CHECK: return %[[Y0]], %[[Y1]], %[[Y2]]
// CHECK-NOT: wsgraph.gemm
func.func @literal_forms(%x: tensor<3x2xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>) {
  %wt = wsgraph.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %w = wsgraph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = wsgraph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %any = wsgraph.weight "c" from "m.bin" at 0 : tensor<3x3xf32>
  %0 = wsgraph.gemm %x, %wt, %b {trans_b = true} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  %1 = wsgraph.gemm %x, %w, %b {alpha = 2.0 : f32, beta = 0.5 : f32} : (tensor<3x2xf32>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  %2 = wsgraph.gemm %x, %w, %any {beta = 0.0 : f32} : (tensor<3x2xf32>, tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0, %1, %2 : tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>
}

// -----

// Gemms that stay: a transposed A; a scaled weight and a scaled bias held
// in a file (wsc does not copy weights); a C that is no static [N] vector
// ([1, N], [M, N], computed); a B computed at run time.
// CHECK-LABEL: func.func @stay_gemm
// CHECK-COUNT-7: wsgraph.gemm
// CHECK-NOT: wsgraph.linear
// CHECK: return
func.func @stay_gemm(%x: tensor<4x8xf32>, %xt: tensor<8x4xf32>, %c: tensor<16xf32>, %y: tensor<8x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %w = wsgraph.weight "w" from "m.bin" at 0 : tensor<8x16xf32>
  %b = wsgraph.weight "b" from "m.bin" at 1024 : tensor<16xf32>
  %b1n = wsgraph.weight "b1n" from "m.bin" at 1088 : tensor<1x16xf32>
  %bmn = wsgraph.weight "bmn" from "m.bin" at 1152 : tensor<4x16xf32>
  %0 = wsgraph.gemm %xt, %w, %b {trans_a = true} : (tensor<8x4xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = wsgraph.gemm %x, %w, %b {alpha = 2.0 : f32} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %3 = wsgraph.gemm %x, %w, %b {beta = 2.0 : f32} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %4 = wsgraph.gemm %x, %w, %b1n : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  %5 = wsgraph.gemm %x, %w, %bmn : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %6 = wsgraph.gemm %x, %w, %c : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %7 = wsgraph.gemm %x, %y, %b : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %0, %2, %3, %4, %5, %6, %7 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A stored weight transposed (transB: nn.Linear on 2-D input) is a view of
// its file, its strides swapped, not a copy; so is a Transpose of a stored
// weight that products take (nn.Linear's weight before a MatMul), and a
// transpose of a view is the plain weight again. Its mask and pruning go
// with it. A Transpose of a weight that anything else uses stays.
// CHECK-LABEL: func.func @stored_transposed
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[X3:.*]]: tensor<2x3x8xf32>)
// CHECK-DAG: %[[V:.*]] = wsgraph.weight "wt" from "m.bin" at 512 {strides = array<i64: 1, 8>, wsgraph.prune = 5.000000e-01 : f64} : tensor<8x16xf32>
// CHECK-DAG: %[[B:.*]] = wsgraph.weight "b" from "m.bin" at 1024 : tensor<16xf32>
// CHECK-DAG: %[[Y0:.*]] = wsgraph.linear %[[X]], %[[V]], %[[B]] : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-DAG: %[[V2:.*]] = wsgraph.weight "wt" from "m.bin" at 512 {strides = array<i64: 1, 8>, wsgraph.prune = 5.000000e-01 : f64} : tensor<8x16xf32>
// CHECK-DAG: %[[Y1:.*]] = wsgraph.linear %[[X3]], %[[V2]] : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
// CHECK-DAG: %[[W:.*]] = wsgraph.weight "w" from "m.bin" at 0 : tensor<8x16xf32>
// CHECK-DAG: %[[Y2:.*]] = wsgraph.linear %[[X]], %[[W]] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-DAG: %[[T:.*]] = wsgraph.transpose %{{.*}} {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
// CHECK: return %[[Y0]], %[[Y1]], %[[Y2]], %[[T]]
func.func @stored_transposed(%x: tensor<4x8xf32>, %x3: tensor<2x3x8xf32>)
    -> (tensor<4x16xf32>, tensor<2x3x16xf32>, tensor<4x16xf32>, tensor<8x16xf32>) {
  %w = wsgraph.weight "w" from "m.bin" at 0 : tensor<8x16xf32>
  %wt = wsgraph.weight "wt" from "m.bin" at 512 {wsgraph.prune = 0.5 : f64} : tensor<16x8xf32>
  %b = wsgraph.weight "b" from "m.bin" at 1024 : tensor<16xf32>
  %0 = wsgraph.gemm %x, %wt, %b {trans_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %t = wsgraph.transpose %wt {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %1 = wsgraph.matmul %x3, %t : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
  %tt = wsgraph.transpose %w {perm = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %2 = wsgraph.gemm %x, %tt {trans_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %kept = wsgraph.transpose %wt {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  return %0, %1, %2, %kept : tensor<4x16xf32>, tensor<2x3x16xf32>, tensor<4x16xf32>, tensor<8x16xf32>
}

// -----

// A squeeze of a stored weight (an LSTM's [1, 4H, K] gates) before a
// transpose is the same bytes in another shape, then a view.
// CHECK-LABEL: func.func @squeezed_gates
// CHECK: %[[V:.*]] = wsgraph.weight "gates" from "m.bin" at 64 {strides = array<i64: 1, 8>} : tensor<8x16xf32>
// CHECK-NEXT: %[[Y:.*]] = wsgraph.linear %{{.*}}, %[[V]] : (tensor<1x8xf32>, tensor<8x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @squeezed_gates(%x: tensor<1x8xf32>) -> tensor<1x16xf32> {
  %w = wsgraph.weight "gates" from "m.bin" at 64 : tensor<1x16x8xf32>
  %0 = wsgraph.squeeze %w {axes = array<i64: 0>} : (tensor<1x16x8xf32>) -> tensor<16x8xf32>
  %1 = wsgraph.transpose %0 {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %2 = wsgraph.matmul %x, %1 : (tensor<1x8xf32>, tensor<8x16xf32>) -> tensor<1x16xf32>
  return %2 : tensor<1x16xf32>
}

// -----

// Reshapes that stay around a linear: one that splits the output columns
// (heads), one after a linear whose 2-D result is used twice, and one that
// flattens a 3-D linear's result (logits.view(-1, V)).
// CHECK-LABEL: func.func @stay_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<16x32xf32>, %[[X3:.*]]: tensor<2x8x32xf32>)
// CHECK-DAG: %[[L0:.*]] = wsgraph.linear %[[X]], %{{.*}} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
// CHECK-DAG: %[[R0:.*]] = wsgraph.reshape %[[L0]] : (tensor<16x32xf32>) -> tensor<2x8x4x8xf32>
// CHECK-DAG: %[[L1:.*]] = wsgraph.linear %[[X]], %{{.*}} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
// CHECK-DAG: %[[R1:.*]] = wsgraph.reshape %[[L1]] : (tensor<16x32xf32>) -> tensor<2x8x32xf32>
// CHECK-DAG: %[[L2:.*]] = wsgraph.linear %[[X3]], %{{.*}} : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
// CHECK-DAG: %[[R2:.*]] = wsgraph.reshape %[[L2]] : (tensor<2x8x32xf32>) -> tensor<16x32xf32>
// CHECK: return %[[R0]], %[[R1]], %[[L1]], %[[R2]]
func.func @stay_reshape(%x: tensor<16x32xf32>, %x3: tensor<2x8x32xf32>) -> (tensor<2x8x4x8xf32>, tensor<2x8x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>) {
  %w = wsgraph.weight "w" from "m.bin" at 0 : tensor<32x32xf32>
  %0 = wsgraph.gemm %x, %w : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %1 = wsgraph.reshape %0 : (tensor<16x32xf32>) -> tensor<2x8x4x8xf32>
  %2 = wsgraph.gemm %x, %w : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %3 = wsgraph.reshape %2 : (tensor<16x32xf32>) -> tensor<2x8x32xf32>
  %4 = wsgraph.matmul %x3, %w : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %5 = wsgraph.reshape %4 : (tensor<2x8x32xf32>) -> tensor<16x32xf32>
  return %1, %3, %2, %5 : tensor<2x8x4x8xf32>, tensor<2x8x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>
}
