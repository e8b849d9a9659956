//===- AttentionMask.h - a padding mask in the attention kernel -*- C++ -*-===//
//
// The attention kind's padding mask [B, S]: streamed, or a host's
// attention_mask every PE holds whole, made into the additive mask by
// steps on the words that came (the ops HF's exports make it with).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_CONVERSION_KINDS_ATTENTIONMASK_H
#define WSC_CONVERSION_KINDS_ATTENTIONMASK_H

#include "../KernelBody.h"

namespace wsc::lowering {

/// A step on the mask words: to_float, add c, mul c, rsub c (c - x),
/// fill_nonzero c or fill_zero c.
using MaskStep = std::pair<std::string, float>;

/// The mask as steps from a value with fewer ops before it: reshapes,
/// a cast to f32 and arithmetic with scalars, as HF makes an additive mask
/// from attention_mask ((1 - float(m)) * finfo.min). The steps run on the
/// mask words in the kernel, so none of those ops needs a kernel.
mlir::Value peelMaskSteps(mlir::Value mask, llvm::SmallVectorImpl<MaskStep> &steps);

/// Receives the padding mask's words for the row's keys into dst.
void receiveMaskRow(Body &k, unsigned input, int64_t dst, int64_t tb, int64_t tokens);
/// Copies sequence b's words for the row's keys from the held mask.
void copyMaskRow(Body &k, int64_t all, int64_t dst, int64_t tb, int64_t tokens);
/// Makes the mask from the words that came, in place (`scratch`: 3 * tb
/// words when a step selects).
void applyMaskSteps(Body &k, llvm::ArrayRef<MaskStep> steps, int64_t row, int64_t scratch,
                    int64_t tb);

} // namespace wsc::lowering

#endif // WSC_CONVERSION_KINDS_ATTENTIONMASK_H
