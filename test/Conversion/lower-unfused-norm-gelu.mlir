// RUN: wsc-opt %s -split-input-file --wsc-set-arch="arch=mesh:4x4" --wsc-lower-to-kernels -verify-diagnostics

// Only fused kinds compute the tanh GELU and the RMS norm so far: the generic
// kind's body picks a unary op's instruction by the op's name (it would run
// the exact GELU) and has no RMS norm. --wsgraph-fuse makes these ops only
// where the linear and rms_norm kinds take them; written by hand elsewhere,
// the lowering refuses them rather than compute something else.

func.func @gelu_tanh_alone(%idx: tensor<1x4xi64>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'wsgraph.gelu' is not supported by wsc-lower-to-kernels (no kernel implements it)}}
  %g = wsgraph.gelu %x {approximate = "tanh"} : tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}

// -----

func.func @rms_norm_of_no_activation(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = wsgraph.constant dense<1.0> : tensor<8xf32>
  // expected-error @+1 {{'wsgraph.rms_norm' is not supported by wsc-lower-to-kernels (no kernel implements it)}}
  %n = wsgraph.rms_norm %x, %s : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}
