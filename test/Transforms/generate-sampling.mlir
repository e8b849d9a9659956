// RUN: wsc-opt %s --wsgraph-generate="sampling=true" -split-input-file -verify-diagnostics | FileCheck %s

// With sampling, next_token is a seeded sample of the logits, whose
// [temperature, seed] are a new input the host writes.
// CHECK-LABEL: func.func @lm
// CHECK-SAME: (%[[IDS:.*]]: tensor<2x4xi64> {wsgraph.name = "input_ids"}, %[[P:.*]]: tensor<2xf32> {wsgraph.name = "sampling"}) -> (tensor<2x4x16xf32> {wsgraph.name = "logits"}, tensor<2x4xi64> {wsgraph.name = "next_token"})
// CHECK: %[[NEXT:.*]] = wsgraph.sample %[[L:.*]], %[[P]] : (tensor<2x4x16xf32>, tensor<2xf32>) -> tensor<2x4xi64>
// CHECK-NEXT: return %[[L]], %[[NEXT]]
func.func @lm(%ids: tensor<2x4xi64> {wsgraph.name = "input_ids"}) -> (tensor<2x4x16xf32> {wsgraph.name = "logits"}) {
  %e = wsgraph.constant dense<0.5> : tensor<16x8xf32>
  %w = wsgraph.constant dense<0.25> : tensor<8x16xf32>
  %x = wsgraph.gather %e, %ids : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %l = wsgraph.linear %x, %w : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  return %l : tensor<2x4x16xf32>
}

// -----

// The noise is f32: f16 logits are refused.
// expected-error @+1 {{sampling needs f32 logits, not 'tensor<1x4x16xf16>'}}
func.func @half(%ids: tensor<1x4xi64>, %l: tensor<1x4x16xf16>) -> tensor<1x4x16xf16> {
  return %l : tensor<1x4x16xf16>
}
