//===- OnnxFunctions.h - inline a model's local functions -------*- C++ -*-===//
#ifndef WSC_LIB_TARGET_ONNXFUNCTIONS_H
#define WSC_LIB_TARGET_ONNXFUNCTIONS_H

#include "onnx/onnx_pb.h"

#include <string>

namespace wsc {

/// Replaces every node that calls one of `model`'s local functions (also
/// inside subgraphs and other functions) by the function's body, then drops
/// the functions. False with `error` (naming the node) when a call cannot
/// be inlined: a function calls itself, a call passes more values than the
/// function takes, a function reads another version of the default opset,
/// or the inlined graph would pass 1 Mi nodes.
bool inlineLocalFunctions(onnx::ModelProto &model, std::string &error);

} // namespace wsc

#endif // WSC_LIB_TARGET_ONNXFUNCTIONS_H
