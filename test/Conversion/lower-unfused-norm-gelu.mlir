// RUN: wsc-opt %s -split-input-file --wsc-set-arch="arch=mesh:4x4" --wsc-lower-to-kernels | FileCheck %s

// A tanh GELU and an RMS norm that no fused kind takes (no [batch, tokens, C]
// activation here) run on generic kernels: the tanh form's own instruction,
// and the RMS norm's square, mean, rsqrt and scale per run of the last axis.

// CHECK-LABEL: func.func @gelu_tanh_alone
// CHECK: wskernel.kernel "gelu" kind "generic"
// CHECK: wskernel.unary "gelu_tanh" <base = 128> = <base = 0> n <base = 32>
func.func @gelu_tanh_alone(%idx: tensor<1x4xi64>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %g = wsgraph.gelu %x {approximate = "tanh"} : tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norm_of_no_activation
// CHECK: wskernel.kernel "rms_norm" kind "generic"
// CHECK: wskernel.loop 4 {
// CHECK-NEXT: wskernel.unary "copy" <base = [[OUT:[0-9]+]], loop = [32]> = <base = 0, loop = [32]> n <base = 8>
// CHECK-NEXT: wskernel.vector "mul" <base = [[SQ:[0-9]+]]> = <base = [[OUT]], loop = [32]>, <base = [[OUT]], loop = [32]> n <base = 8>
// CHECK-NEXT: wskernel.reduce "sum" <base = [[S:[0-9]+]]> = <base = [[SQ]]> n <base = 8>
// CHECK-NEXT: wskernel.imm "mul" <base = [[S]]> = <base = [[S]]>, 1.250000e-01 n <base = 1>
// CHECK-NEXT: wskernel.imm "add" <base = [[S]]> = <base = [[S]]>, 9.99999974E-6 n <base = 1>
// CHECK-NEXT: wskernel.unary "rsqrt"
// CHECK-NEXT: wskernel.scalar "mul"
// CHECK-NEXT: wskernel.vector "mul"
// CHECK-NEXT: }
func.func @rms_norm_of_no_activation(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = wsgraph.constant dense<1.0> : tensor<8xf32>
  %n = wsgraph.rms_norm %x, %s : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}
