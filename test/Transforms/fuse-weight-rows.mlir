// RUN: wsc-opt %s --wsgraph-fuse -split-input-file -verify-diagnostics | FileCheck %s

// A gather of consecutive leading rows of a weight by constant indices is a
// smaller weight further into the file (rows * row bytes), so the weight is
// never copied into the IR.

// Position embeddings [16, 32] f32 (128 bytes a row) at byte 1024, rows 3..6:
// 1024 + 3 * 128 = 1408.
// CHECK-LABEL: func.func @position_rows
// CHECK-NEXT: %[[W:.*]] = wsgraph.weight "wpe[3:7]" from "m.bin" at 1408 : tensor<4x32xf32>
// CHECK-NEXT: %[[R:.*]] = wsgraph.reshape %[[W]] : (tensor<4x32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT: return %[[R]]
func.func @position_rows() -> tensor<1x4x32xf32> {
  %wpe = wsgraph.weight "wpe" from "m.bin" at 1024 : tensor<16x32xf32>
  %i = wsgraph.constant dense<[[3, 4, 5, 6]]> : tensor<1x4xi64>
  %0 = wsgraph.gather %wpe, %i {axis = 0 : i64} : (tensor<16x32xf32>, tensor<1x4xi64>) -> tensor<1x4x32xf32>
  return %0 : tensor<1x4x32xf32>
}

// -----

// Indices from a range that the pass folds first; rows 0..3 keep the offset.
// CHECK-LABEL: func.func @range_rows
// CHECK-NEXT: %[[W:.*]] = wsgraph.weight "wpe[0:4]" from "m.bin" at 64 : tensor<4x32xf32>
// CHECK-NEXT: return %[[W]]
func.func @range_rows() -> tensor<4x32xf32> {
  %wpe = wsgraph.weight "wpe" from "m.bin" at 64 : tensor<16x32xf32>
  %s = wsgraph.constant dense<0> : tensor<i64>
  %l = wsgraph.constant dense<4> : tensor<i64>
  %d = wsgraph.constant dense<1> : tensor<i64>
  %i = wsgraph.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %0 = wsgraph.gather %wpe, %i : (tensor<16x32xf32>, tensor<4xi64>) -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// -----

// f16 rows of 3 x 8 elements are 48 bytes: rows 2..3 start 96 bytes in. The
// indices are i32 and the weight has three dimensions.
// CHECK-LABEL: func.func @f16_rows
// CHECK-NEXT: %[[W:.*]] = wsgraph.weight "t[2:4]" from "m.bin" at 96 : tensor<2x3x8xf16>
// CHECK-NEXT: return %[[W]]
func.func @f16_rows() -> tensor<2x3x8xf16> {
  %t = wsgraph.weight "t" from "m.bin" at 0 : tensor<10x3x8xf16>
  %i = wsgraph.constant dense<[2, 3]> : tensor<2xi32>
  %0 = wsgraph.gather %t, %i : (tensor<10x3x8xf16>, tensor<2xi32>) -> tensor<2x3x8xf16>
  return %0 : tensor<2x3x8xf16>
}

// -----

// A single row by a scalar index: the last row of 16.
// CHECK-LABEL: func.func @scalar_index
// CHECK-NEXT: %[[W:.*]] = wsgraph.weight "wpe[15:16]" from "m.bin" at 1920 : tensor<1x32xf32>
// CHECK-NEXT: %[[R:.*]] = wsgraph.reshape %[[W]] : (tensor<1x32xf32>) -> tensor<32xf32>
// CHECK-NEXT: return %[[R]]
func.func @scalar_index() -> tensor<32xf32> {
  %wpe = wsgraph.weight "wpe" from "m.bin" at 0 : tensor<16x32xf32>
  %i = wsgraph.constant dense<15> : tensor<i64>
  %0 = wsgraph.gather %wpe, %i : (tensor<16x32xf32>, tensor<i64>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// An elided weight stays elided (no offset to move).
// CHECK-LABEL: func.func @elided_rows
// CHECK-NEXT: %[[W:.*]] = wsgraph.weight "wpe[1:3]" elided : tensor<2x32xf32>
// CHECK-NEXT: return %[[W]]
func.func @elided_rows() -> tensor<2x32xf32> {
  %wpe = wsgraph.weight "wpe" elided : tensor<16x32xf32>
  %i = wsgraph.constant dense<[1, 2]> : tensor<2xi64>
  %0 = wsgraph.gather %wpe, %i : (tensor<16x32xf32>, tensor<2xi64>) -> tensor<2x32xf32>
  return %0 : tensor<2x32xf32>
}

// -----

// Rows that are not consecutive ascending, negative or past the end, a
// gather along another axis, and indices known only at run time: the
// gathers stay.
// CHECK-LABEL: func.func @not_leading_rows
// CHECK-COUNT-6: wsgraph.gather
// CHECK-NOT: wsgraph.weight "wpe[
// CHECK: return
func.func @not_leading_rows(%dyn: tensor<2xi64>) -> (tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>, tensor<16x2xf32>, tensor<2x32xf32>) {
  %wpe = wsgraph.weight "wpe" from "m.bin" at 0 : tensor<16x32xf32>
  %gap = wsgraph.constant dense<[0, 2]> : tensor<2xi64>
  %down = wsgraph.constant dense<[3, 2]> : tensor<2xi64>
  %neg = wsgraph.constant dense<[-2, -1]> : tensor<2xi64>
  %past = wsgraph.constant dense<[15, 16]> : tensor<2xi64>
  %cols = wsgraph.constant dense<[0, 1]> : tensor<2xi64>
  %0 = wsgraph.gather %wpe, %gap : (tensor<16x32xf32>, tensor<2xi64>) -> tensor<2x32xf32>
  %1 = wsgraph.gather %wpe, %down : (tensor<16x32xf32>, tensor<2xi64>) -> tensor<2x32xf32>
  %2 = wsgraph.gather %wpe, %neg : (tensor<16x32xf32>, tensor<2xi64>) -> tensor<2x32xf32>
  %3 = wsgraph.gather %wpe, %past : (tensor<16x32xf32>, tensor<2xi64>) -> tensor<2x32xf32>
  %4 = wsgraph.gather %wpe, %cols {axis = 1 : i64} : (tensor<16x32xf32>, tensor<2xi64>) -> tensor<16x2xf32>
  %5 = wsgraph.gather %wpe, %dyn : (tensor<16x32xf32>, tensor<2xi64>) -> tensor<2x32xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>, tensor<16x2xf32>, tensor<2x32xf32>
}

// -----

// The same range of positions for every sequence of a batch (OPT's learned
// positions, offset 2, once the mask folded): the rows once, broadcast.
// CHECK-LABEL: func.func @position_rows_per_sequence
// CHECK-NEXT: %[[W:.*]] = wsgraph.weight "wpe[2:6]" from "m.bin" at 1280 : tensor<4x32xf32>
// CHECK-NEXT: %[[R:.*]] = wsgraph.reshape %[[W]] : (tensor<4x32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT: %[[E:.*]] = wsgraph.expand %[[R]] : (tensor<1x4x32xf32>) -> tensor<2x4x32xf32>
// CHECK-NEXT: return %[[E]]
func.func @position_rows_per_sequence() -> tensor<2x4x32xf32> {
  %wpe = wsgraph.weight "wpe" from "m.bin" at 1024 : tensor<16x32xf32>
  %i = wsgraph.constant dense<[[2, 3, 4, 5], [2, 3, 4, 5]]> : tensor<2x4xi64>
  %0 = wsgraph.gather %wpe, %i {axis = 0 : i64} : (tensor<16x32xf32>, tensor<2x4xi64>) -> tensor<2x4x32xf32>
  return %0 : tensor<2x4x32xf32>
}

// -----

// Sequences with different positions (a padded batch's): left alone.
// CHECK-LABEL: func.func @position_rows_differ
// CHECK: wsgraph.gather
func.func @position_rows_differ() -> tensor<2x4x32xf32> {
  %wpe = wsgraph.weight "wpe" from "m.bin" at 1024 : tensor<16x32xf32>
  %i = wsgraph.constant dense<[[2, 3, 4, 5], [2, 2, 3, 4]]> : tensor<2x4xi64>
  %0 = wsgraph.gather %wpe, %i {axis = 0 : i64} : (tensor<16x32xf32>, tensor<2x4xi64>) -> tensor<2x4x32xf32>
  return %0 : tensor<2x4x32xf32>
}
