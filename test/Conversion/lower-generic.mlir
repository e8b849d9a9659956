// RUN: wsc-opt %s -split-input-file --wsc-set-arch="arch=mesh:4x4" --wsc-lower-to-kernels -verify-diagnostics | FileCheck %s

// Ops that no fused kind takes become generic kernels on one PE. A graph needs
// no token ids: any static inputs go to the PEs that read them.

// Broadcasting: the smaller operand is spread by an indexed copy whose table
// (a constant operand, tiled into SRAM) names each result word's source.
// CHECK-LABEL: func.func @add_broadcast
// CHECK: %[[T:.*]] = wsgraph.constant dense<[0, 1, 2, 0, 1, 2]> : tensor<6xi32>
// CHECK: %[[K:.*]] = wskernel.kernel "add" kind "generic" grid [1, 1] {{.*}}(%arg0, %arg1, %[[T]])
// CHECK-SAME: (tensor<2x3xf32>, tensor<3xf32>, tensor<6xi32>) -> !wskernel.stream<3, f32>
// CHECK-NEXT: wskernel.host_input 0 at 0
// CHECK-NEXT: wskernel.host_input 1 at 24
// CHECK-NEXT: wskernel.init_tile 2 at 84 rows 1 cols 6
// CHECK-NEXT: wskernel.index_copy <base = 60> = <base = 24>[<base = 84>] n <base = 6> of <base = 3>
// CHECK-NEXT: wskernel.vector "add" <base = 36> = <base = 0>, <base = 60> n <base = 6>
// The result leaves as rows of its last dimension.
// CHECK-NEXT: wskernel.loop 2 {
// CHECK-NEXT: wskernel.send "out0" from <base = 36, loop = [12]> n <base = 3>
// CHECK: wskernel.kernel "output" kind "output"
// CHECK-SAME: -> tensor<2x3xf32>
// CHECK: wskernel.host_output 0 at 0 rows 2 cols 3
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = wsgraph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// A generic consumer receives its operand's rows from the producer's stream;
// integers and booleans compute as i32 words; a cast to bool is "not (x == 0)".
// CHECK-LABEL: func.func @ints
// CHECK: wskernel.kernel "less" kind "generic"
// CHECK: wskernel.vector "lt" <base = 32> = <base = 0>, <base = 16> n <base = 4> {elem = "i32"}
// CHECK: wskernel.kernel "not" kind "generic"
// CHECK: wskernel.loop 1 {
// CHECK-NEXT: wskernel.recv "in0" to <base = 0, loop = [16]> n <base = 4>{{$}}
// CHECK: wskernel.unary "not" <base = 16> = <base = 0> n <base = 4>
// CHECK: wskernel.kernel "cast" kind "generic"
// CHECK: wskernel.imm "fill" <base = 32> = <base = 32>, 0.000000e+00 n <base = 4>{{$}}
// CHECK-NEXT: wskernel.vector "eq" <base = 16> = <base = 0>, <base = 32> n <base = 4>{{$}}
// CHECK-NEXT: wskernel.unary "not" <base = 16> = <base = 16> n <base = 4>
func.func @ints(%a: tensor<4xi64>, %b: tensor<4xi64>, %x: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>) {
  %l = wsgraph.less %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %n = wsgraph.not %l : tensor<4xi1>
  %c = wsgraph.cast %x : tensor<4xf32> -> tensor<4xi1>
  return %n, %c : tensor<4xi1>, tensor<4xi1>
}

// -----

// Softmax on a leading axis moves the axis last (an indexed copy), takes each
// run's max, exp and sum, and moves it back.
// CHECK-LABEL: func.func @softmax_axis0
// CHECK: wskernel.kernel "softmax" kind "generic"
// CHECK: wskernel.init_tile 1 at 48 rows 1 cols 6
// CHECK-NEXT: wskernel.index_copy <base = 24> = <base = 0>[<base = 48>] n <base = 6> of <base = 6>
// CHECK-NEXT: wskernel.loop 3 {
// CHECK-NEXT: wskernel.reduce "max" <base = 72> = <base = 24, loop = [8]> n <base = 2>
// CHECK-NEXT: wskernel.scalar "sub" <base = 24, loop = [8]> = <base = 24, loop = [8]>, scalar <base = 72> n <base = 2>
// CHECK-NEXT: wskernel.unary "exp" <base = 24, loop = [8]> = <base = 24, loop = [8]> n <base = 2>
// CHECK-NEXT: wskernel.reduce "sum" <base = 72> = <base = 24, loop = [8]> n <base = 2>
// CHECK-NEXT: wskernel.scalar "div" <base = 24, loop = [8]> = <base = 24, loop = [8]>, scalar <base = 72> n <base = 2>
// CHECK: wskernel.init_tile 2 at 100 rows 1 cols 6
// CHECK-NEXT: wskernel.index_copy <base = 76> = <base = 24>[<base = 100>] n <base = 6> of <base = 6>
func.func @softmax_axis0(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = wsgraph.softmax %x {axis = 0 : i64} : tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// -----

// A batched matmul is one transposed matvec per row of each batch; the
// right operand without batch dimensions is shared (stride 0).
// CHECK-LABEL: func.func @matmul_shared
// CHECK: wskernel.loop 2 {
// CHECK-NEXT: wskernel.loop 3 {
// CHECK-NEXT: wskernel.matvec <base = 176, loop = [20, 60]> = <base = 96, loop = [0, 0]> x <base = 0, loop = [16, 48]> rows <base = 4> cols <base = 5> {transposed = true}
func.func @matmul_shared(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %r = wsgraph.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %r : tensor<2x3x5xf32>
}

// -----

// Reductions put the kept dimensions first and reduce each run.
// CHECK-LABEL: func.func @reduce_mean_axis0
// CHECK: %[[T:.*]] = wsgraph.constant dense<[0, 3, 1, 4, 2, 5]> : tensor<6xi32>
// CHECK: wskernel.index_copy <base = 24> = <base = 0>[<base = 48>] n <base = 6> of <base = 6>
// CHECK: wskernel.loop 3 {
// CHECK-NEXT: wskernel.reduce "sum" <base = 72, loop = [4]> = <base = 24, loop = [8]> n <base = 2>
// CHECK: wskernel.imm "mul" <base = 72> = <base = 72>, 5.000000e-01 n <base = 3>
func.func @reduce_mean_axis0(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %m = wsgraph.reduce_mean %x {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %m : tensor<3xf32>
}

// -----

// A gather by data computes its table in SRAM: negative indices count from
// the end, then each index picks its row.
// CHECK-LABEL: func.func @gather_by_data
// CHECK: wsgraph.constant dense<[0, 0, 1, 1]> : tensor<4xi32>
// CHECK: wsgraph.constant dense<[0, 1, 0, 1]> : tensor<4xi32>
// CHECK: wskernel.kernel "gather" kind "generic"
// CHECK: wskernel.vector "lt" {{.*}} {elem = "i32"}
// CHECK-NEXT: wskernel.imm "mul" {{.*}}, 3.000000e+00 n <base = 4> {elem = "i32"}
// CHECK-NEXT: wskernel.vector "add" {{.*}} {elem = "i32"}
// CHECK-NEXT: wskernel.imm "mul" {{.*}}, 2.000000e+00 n <base = 4> {elem = "i32"}
// CHECK-NEXT: wskernel.init_tile
// CHECK-NEXT: wskernel.vector "add" {{.*}} {elem = "i32"}
// CHECK-NEXT: wskernel.index_copy {{.*}} n <base = 4> of <base = 6>
func.func @gather_by_data(%t: tensor<3x2xf32>, %i: tensor<2xi64>) -> tensor<2x2xf32> {
  %g = wsgraph.gather %t, %i : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %g : tensor<2x2xf32>
}

// -----

// A head split that no attention takes is a generic kernel per piece.
// CHECK-LABEL: func.func @split_alone
// CHECK: wsgraph.constant dense<[0, 4]> : tensor<2xi32>
// CHECK: wskernel.kernel "split.0" kind "generic" {{.*}} -> !wskernel.stream<1, f32>
// CHECK: wsgraph.constant dense<[1, 2, 3, 5, 6, 7]> : tensor<6xi32>
// CHECK: wskernel.kernel "split.1" kind "generic" {{.*}} -> !wskernel.stream<3, f32>
func.func @split_alone(%x: tensor<2x4xf32>) -> (tensor<2x1xf32>, tensor<2x3xf32>) {
  %a, %b = wsgraph.split %x {axis = 1 : i64, sizes = array<i64: 1, 3>} : (tensor<2x4xf32>) -> (tensor<2x1xf32>, tensor<2x3xf32>)
  return %a, %b : tensor<2x1xf32>, tensor<2x3xf32>
}

// -----

// Results that are a constant or an input are held by their output kernels.
// CHECK-LABEL: func.func @passthrough
// CHECK: wskernel.kernel "output_2" kind "output" {{.*}} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: wskernel.host_input 0 at 0
// CHECK-NEXT: wskernel.host_output 0 at 0 rows 1 cols 4
// CHECK: wskernel.kernel "output_3" kind "output" {{.*}} : (tensor<2x3xi64>) -> tensor<2x3xi64>
// CHECK-NEXT: wskernel.init_tile 0 at 0 rows 2 cols 3
// CHECK-NEXT: wskernel.host_output 0 at 0 rows 2 cols 3
func.func @passthrough(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x3xi64>) {
  %y = wsgraph.neg %x : tensor<4xf32>
  %c = wsgraph.constant dense<7> : tensor<2x3xi64>
  return %y, %x, %c : tensor<4xf32>, tensor<4xf32>, tensor<2x3xi64>
}

// -----

// fmod = true: the remainder takes the dividend's sign (a - trunc(a / b) * b).
// CHECK-LABEL: func.func @fmod
// CHECK: wskernel.vector "div"
// CHECK-NEXT: wskernel.unary "floor"
// CHECK-NEXT: wskernel.unary "ceil"
// CHECK: wskernel.select
// CHECK-NEXT: wskernel.vector "mul"
// CHECK-NEXT: wskernel.vector "sub"
func.func @fmod(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = wsgraph.mod %a, %b {fmod = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
