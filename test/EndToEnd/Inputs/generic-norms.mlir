func.func @main(%x: tensor<4x8xf32> {wsgraph.name = "x"}) -> (tensor<4x8xf32> {wsgraph.name = "g"}, tensor<4x8xf32> {wsgraph.name = "r"}) {
  %s = wsgraph.constant dense<[0.5, 1.0, 1.5, 2.0, -1.0, 0.25, 3.0, 1.0]> : tensor<8xf32>
  %g = wsgraph.gelu %x {approximate = "tanh"} : tensor<4x8xf32>
  %r = wsgraph.rms_norm %x, %s {epsilon = 1.0e-6 : f32} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %g, %r : tensor<4x8xf32>, tensor<4x8xf32>
}
