// RUN: wsc-opt %s -split-input-file --wsc-set-arch="arch=mesh:16x16" --wsc-lower-to-kernels | FileCheck %s

// A generic op too large for one PE's 48 KB is split into chunks of its result
// rows: each chunk holds only the rows of its operands it reads (the routers'
// filters cut them from a stream with a period of the whole tensor; the host
// writes a window of an input), passes the chunks before it on, then sends its
// own rows. The result, too large for one PE, is kept by a column of PEs.
// [64, 256] f32 is 64 KB.
// CHECK-LABEL: func.func @chunks
// CHECK: %[[E0:.*]] = wskernel.kernel "exp.c0" kind "generic"
// CHECK-NEXT: wskernel.host_input 0 at 0 {window = array<i64: 0, 2048>}
// CHECK: %[[E1:.*]] = wskernel.kernel "exp.c1" kind "generic"
// CHECK-NEXT: wskernel.host_input 0 at 0 {window = array<i64: 2048, 2048>}
// CHECK: %[[E:.*]] = wskernel.kernel "exp.c7" kind "generic"
// The add's chunk 1: rows 4..7 of exp's stream, the bias whole, chunk 0 passed on.
// CHECK: wskernel.kernel "add.c1" kind "generic" {{.*}}(%[[E]], %{{.*}}, %{{.*}}, %{{.*}}) {{.*}} : (!wskernel.stream<256, f32>, tensor<256xf32>, !wskernel.stream<256, f32>, tensor<1024xi32>) -> !wskernel.stream<256, f32>
// CHECK-NEXT: wskernel.filter "in0" first <base = 1024> count <base = 1024> {period = 16384 : i64}
// CHECK-NEXT: wskernel.loop 4 {
// CHECK-NEXT: wskernel.recv "in0" to <base = 0, loop = [1024]> n <base = 256>
// CHECK: wskernel.init_tile 1 at 4096 rows 1 cols 256
// CHECK: wskernel.vector "add"
// CHECK-NEXT: wskernel.loop 4 {
// CHECK-NEXT: wskernel.recv "in2" to <base = 0> n <base = 256> {combine = "discard", forward = "out0"}
// CHECK: wskernel.loop 4 {
// CHECK-NEXT: wskernel.send "out0" from <base = 5120, loop = [1024]> n <base = 256>
// The output: rows in order over a column of PEs, each keeping its window.
// CHECK: wskernel.kernel "output" kind "output" grid [2, 1]
// CHECK-NEXT: wskernel.host_output 0 at 0 rows 32 cols 256 row_origin [32, 0]
// CHECK-NEXT: wskernel.filter "in0" first <base = 0, py = 8192> count <base = 8192> {period = 16384 : i64, when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 0, y1 = 0>]}
// CHECK-NEXT: wskernel.filter "in0" first <base = 8192> count <base = 8192> {period = 16384 : i64, when = [#wskernel.pes<x0 = 0, x1 = 0, y0 = 1, y1 = 1>]}
func.func @chunks(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %b = wsgraph.constant dense<0.5> : tensor<256xf32>
  %e = wsgraph.exp %x : tensor<64x256xf32>
  %y = wsgraph.add %e, %b : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}

// -----

// A transpose's chunk reads a column of its operand: a strided window, which
// the routers' filter cuts with a period of the operand's last dimension.
// CHECK-LABEL: func.func @strided
// CHECK: wskernel.kernel "transpose.c0" kind "generic"
// CHECK-NEXT: wskernel.filter "in0" first <base = 0> count <base = {{[0-9]+}}> {period = 64 : i64}
// CHECK-NEXT: wskernel.loop 1024 {
// CHECK-NEXT: wskernel.recv "in0"
func.func @strided(%x: tensor<8x128x64xf32>) -> tensor<8x64x128xf32> {
  %e = wsgraph.exp %x : tensor<8x128x64xf32>
  %t = wsgraph.transpose %e {perm = array<i64: 0, 2, 1>} : (tensor<8x128x64xf32>) -> tensor<8x64x128xf32>
  %y = wsgraph.exp %t : tensor<8x64x128xf32>
  return %y : tensor<8x64x128xf32>
}
