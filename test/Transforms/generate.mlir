// RUN: wsc-opt %s --wsgraph-generate -split-input-file -verify-diagnostics | FileCheck %s

// The logits' argmax becomes a second result, next_token; an attention_mask
// input like the token ids becomes ones and leaves the signature.
// CHECK-LABEL: func.func @lm
// CHECK-SAME: (%[[IDS:.*]]: tensor<2x4xi64> {wsgraph.name = "input_ids"}) -> (tensor<2x4x16xf32> {wsgraph.name = "logits"}, tensor<2x4xi64> {wsgraph.name = "next_token"})
// CHECK-SAME: attributes {wsgraph.generate}
// CHECK: %[[ONES:.*]] = wsgraph.constant dense<1> : tensor<2x4xi64>
// CHECK: wsgraph.cast %[[ONES]]
// CHECK: %[[NEXT:.*]] = wsgraph.argmax %[[L:.*]] : (tensor<2x4x16xf32>) -> tensor<2x4xi64>
// CHECK-NEXT: return %[[L]], %[[NEXT]]
func.func @lm(%ids: tensor<2x4xi64> {wsgraph.name = "input_ids"}, %mask: tensor<2x4xi64> {wsgraph.name = "attention_mask"}) -> (tensor<2x4x16xf32> {wsgraph.name = "logits"}) {
  %e = wsgraph.constant dense<0.5> : tensor<16x8xf32>
  %w = wsgraph.constant dense<0.25> : tensor<8x16xf32>
  %x = wsgraph.gather %e, %ids : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %m = wsgraph.cast %mask : tensor<2x4xi64> -> tensor<2x4xf32>
  %u = wsgraph.unsqueeze %m {axes = array<i64: 2>} : (tensor<2x4xf32>) -> tensor<2x4x1xf32>
  %y = wsgraph.mul %x, %u : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %l = wsgraph.linear %y, %w : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  return %l : tensor<2x4x16xf32>
}

// -----

// No logits result to pick from.
// expected-error @+1 {{a generating program needs one [1, 4, vocab] float result, the logits}}
func.func @no_logits(%ids: tensor<1x4xi64>) -> tensor<1x4xi64> {
  return %ids : tensor<1x4xi64>
}

// -----

// No token ids.
// expected-error @+1 {{a generating program needs token ids, a [batch, tokens] integer input}}
func.func @no_ids(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  return %x : tensor<1x4x8xf32>
}
