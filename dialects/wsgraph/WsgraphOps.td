//===- WsgraphOps.td - wsgraph operations ------------------*- tablegen -*-===//
#ifndef WSGRAPH_OPS_TD
#define WSGRAPH_OPS_TD

include "Wsgraph.td"

//===----------------------------------------------------------------------===//
// Sources of values: constants and weights.
//===----------------------------------------------------------------------===//

def Wsgraph_ConstantOp : Wsgraph_Op<"constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "A small literal tensor";
  let description = [{
    A tensor whose value is written in the IR. The importer uses it for shape
    computations, scalars and masks; large tensors become `wsgraph.weight`.

    ```mlir
    %c = wsgraph.constant dense<[1, 8, 32]> : tensor<3xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
  }

def Wsgraph_WeightOp : Wsgraph_Op<"weight", [Pure]> {
  let summary = "A named weight tensor stored outside the IR";
  let description = [{
    A weight (an ONNX initializer) whose bytes live in `file`, starting at
    byte `offset`, little-endian, densely packed in the result's element type.
    Without `file` the weight is elided: only its shape is known, which is
    enough to compile but not to run.

    With `strides`, the weight is a view of the file's bytes: element
    (i0, i1, ...) is file element `sum_d i_d * strides[d]` from `offset`, so
    a transposed weight (a Gemm's transB, a Transpose of an initializer) or
    rows of one are read where they lie, never copied. Without it the
    elements are row-major and contiguous.

    ```mlir
    %w = wsgraph.weight "h.0.attn.c_attn.weight" from "model.onnx.data" at 0 : tensor<32x96xf32>
    %e = wsgraph.weight "wte.weight" elided : tensor<50257x768xf32>
    %t = wsgraph.weight "fc.weight" from "model.onnx" at 64 {strides = array<i64: 1, 768>} : tensor<768x3072xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<StrAttr>:$file,
                       DefaultValuedAttr<I64Attr, "0">:$offset,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs AnyRankedTensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isElided() { return !getFile(); }
    /// Bytes of its file this weight spans, from `offset`.
    int64_t getByteSize();
    /// The file element strides of its dimensions: `strides`, or row-major.
    llvm::SmallVector<int64_t> getElementStrides();
    /// The file element (from `offset`) of its row-major element `flat`.
    int64_t fileElement(int64_t flat);
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise ops.
//===----------------------------------------------------------------------===//

/// Element types that arithmetic takes: floats and integers other than i1.
def Wsgraph_Numeric : AnyTypeOf<[AnyFloat, I8, I16, I32, I64, UI8, UI16, UI32, UI64],
                                "float or integer (not i1)">;

class Wsgraph_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Wsgraph_Op<mnemonic, !listconcat(traits, [Pure,
        InferTypeOpAdaptor])> {
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let description = "Elementwise, with numpy-style broadcasting of the two "
    "operands. Both operands have the same element type.\n\n```mlir\n"
    "%r = wsgraph." # mnemonic # " %a, %b : (tensor<2x8xf32>, tensor<8xf32>) "
    "-> tensor<2x8xf32>\n```";
}

/// A comparison: numpy broadcasting, operands of one float or integer type,
/// an i1 result.
class Wsgraph_CompareOp<string mnemonic, string relation, list<Trait> traits = []>
    : Wsgraph_BinaryOp<mnemonic, traits> {
  let summary = "Elementwise " # relation # ", giving i1";
  let description = "`lhs " # relation # " rhs` elementwise, with numpy-style "
    "broadcasting of the two operands, which have one float or integer "
    "element type (not i1). The result is i1; a comparison with NaN is "
    "false.\n\n```mlir\n"
    "%r = wsgraph." # mnemonic # " %a, %b : (tensor<2x8xf32>, tensor<8xf32>) "
    "-> tensor<2x8xi1>\n```";
}

/// A logical op on booleans: i1 operands (numpy broadcasting), i1 result.
class Wsgraph_LogicalOp<string mnemonic, string what>
    : Wsgraph_BinaryOp<mnemonic, [Commutative]> {
  let summary = "Elementwise logical " # what # " of booleans";
  let description = "Elementwise on two i1 tensors, with numpy-style "
    "broadcasting; the result is i1 (ONNX " # what # ").\n\n```mlir\n"
    "%r = wsgraph." # mnemonic # " %a, %b : (tensor<2x8xi1>, tensor<8xi1>) "
    "-> tensor<2x8xi1>\n```";
}

def Wsgraph_AddOp : Wsgraph_BinaryOp<"add", [Commutative]> {
  let summary = "Elementwise sum";
}
def Wsgraph_SubOp : Wsgraph_BinaryOp<"sub"> {
  let summary = "Elementwise difference";
}
def Wsgraph_MulOp : Wsgraph_BinaryOp<"mul", [Commutative]> {
  let summary = "Elementwise product";
}
def Wsgraph_DivOp : Wsgraph_BinaryOp<"div"> {
  let summary = "Elementwise quotient (truncating for integers)";
}
def Wsgraph_PowOp : Wsgraph_BinaryOp<"pow"> {
  let summary = "Elementwise power";
}
def Wsgraph_MaxOp : Wsgraph_BinaryOp<"max", [Commutative]> {
  let summary = "Elementwise maximum";
  let description = [{
    The larger of the two operands, elementwise, with numpy-style
    broadcasting. The operands have one float or integer element type (not
    i1); a NaN operand gives NaN. ONNX Max of n inputs imports as a chain of
    n - 1 of these; ONNX Clip imports as `min(max(x, lo), hi)` (no clip op).

    ```mlir
    %r = wsgraph.max %a, %b : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    ```
  }];
}
def Wsgraph_MinOp : Wsgraph_BinaryOp<"min", [Commutative]> {
  let summary = "Elementwise minimum";
  let description = [{
    The smaller of the two operands, elementwise, with numpy-style
    broadcasting. The operands have one float or integer element type (not
    i1); a NaN operand gives NaN. ONNX Min of n inputs imports as a chain of
    n - 1 of these; ONNX Clip imports as `min(max(x, lo), hi)` (no clip op).

    ```mlir
    %r = wsgraph.min %a, %b : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    ```
  }];
}
def Wsgraph_ModOp : Wsgraph_BinaryOp<"mod"> {
  let summary = "Elementwise remainder (ONNX Mod)";
  let description = [{
    The remainder of `lhs / rhs`, elementwise, with numpy-style broadcasting
    of two operands of one float or integer element type (not i1). With
    `fmod = false` (integers only) the remainder has the sign of the divisor,
    as Python's `%`; with `fmod = true` it has the sign of the dividend, as
    C's `fmod`. Floating-point operands need `fmod = true`, as in ONNX.

    ```mlir
    %r = wsgraph.mod %a, %b : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>
    %f = wsgraph.mod %x, %y {fmod = true} : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$fmod);
}
def Wsgraph_EqualOp : Wsgraph_BinaryOp<"equal", [Commutative]> {
  let summary = "Elementwise equality, giving i1";
}
def Wsgraph_LessOp : Wsgraph_CompareOp<"less", "<">;
def Wsgraph_LessEqualOp : Wsgraph_CompareOp<"less_equal", "<=">;
def Wsgraph_GreaterOp : Wsgraph_CompareOp<"greater", ">">;
def Wsgraph_GreaterEqualOp : Wsgraph_CompareOp<"greater_equal", ">=">;
/// A bitwise op: numpy broadcasting, operands of one integer type (not i1).
class Wsgraph_BitwiseOp<string mnemonic, string what>
    : Wsgraph_BinaryOp<mnemonic, [Commutative]> {
  let summary = "Elementwise bitwise " # what # " of integers";
  let description = "Bitwise " # what # " of two integer tensors (not i1) of one "
    "type, in two's complement, with numpy-style broadcasting (ONNX Bitwise"
    # what # ").\n\n```mlir\n"
    "%r = wsgraph." # mnemonic # " %a, %b : (tensor<2x8xi32>, tensor<8xi32>) "
    "-> tensor<2x8xi32>\n```";
}
def Wsgraph_BitwiseAndOp : Wsgraph_BitwiseOp<"bitwise_and", "And">;
def Wsgraph_BitwiseOrOp : Wsgraph_BitwiseOp<"bitwise_or", "Or">;
def Wsgraph_BitwiseXorOp : Wsgraph_BitwiseOp<"bitwise_xor", "Xor">;
def Wsgraph_AndOp : Wsgraph_LogicalOp<"and", "and">;
def Wsgraph_OrOp : Wsgraph_LogicalOp<"or", "or">;
def Wsgraph_XorOp : Wsgraph_LogicalOp<"xor", "exclusive or">;

/// One operand, one result of the same type. `element` says which element
/// types the op takes.
class Wsgraph_UnaryOp<string mnemonic, list<Trait> traits = [],
                      Type element = AnyFloat, string what = "a floating-point",
                      string example = "tensor<2x8xf32>">
    : Wsgraph_Op<mnemonic, !listconcat(traits,
        [Pure, SameOperandsAndResultType, Elementwise])> {
  let arguments = (ins RankedTensorOf<[element]>:$input);
  let results = (outs RankedTensorOf<[element]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
  let description = "Elementwise on " # what # " tensor.\n\n```mlir\n"
    "%r = wsgraph." # mnemonic # " %x : " # example # "\n```";
}

/// A unary op that takes integer tensors too (not i1).
class Wsgraph_NumericUnaryOp<string mnemonic>
    : Wsgraph_UnaryOp<mnemonic, [], Wsgraph_Numeric, "a float or integer (not i1)",
                      "tensor<2x8xi64>">;

def Wsgraph_SqrtOp : Wsgraph_UnaryOp<"sqrt"> { let summary = "Square root"; }
def Wsgraph_ErfOp : Wsgraph_UnaryOp<"erf"> { let summary = "Gauss error function"; }
def Wsgraph_TanhOp : Wsgraph_UnaryOp<"tanh"> { let summary = "Hyperbolic tangent"; }
def Wsgraph_ExpOp : Wsgraph_UnaryOp<"exp"> { let summary = "Exponential"; }
def Wsgraph_LogOp : Wsgraph_UnaryOp<"log"> { let summary = "Natural logarithm"; }
def Wsgraph_SigmoidOp : Wsgraph_UnaryOp<"sigmoid"> {
  let summary = "Logistic sigmoid: 1 / (1 + exp(-x))";
}
def Wsgraph_SinOp : Wsgraph_UnaryOp<"sin"> { let summary = "Sine"; }
def Wsgraph_CosOp : Wsgraph_UnaryOp<"cos"> { let summary = "Cosine"; }
def Wsgraph_ReciprocalOp : Wsgraph_UnaryOp<"reciprocal"> { let summary = "Reciprocal: 1 / x"; }
def Wsgraph_FloorOp : Wsgraph_UnaryOp<"floor"> { let summary = "Round toward negative infinity"; }
def Wsgraph_CeilOp : Wsgraph_UnaryOp<"ceil"> { let summary = "Round toward positive infinity"; }
def Wsgraph_NegOp : Wsgraph_NumericUnaryOp<"neg"> { let summary = "Negation"; }
def Wsgraph_AbsOp : Wsgraph_NumericUnaryOp<"abs"> { let summary = "Absolute value"; }
def Wsgraph_ReluOp : Wsgraph_NumericUnaryOp<"relu"> { let summary = "Rectified linear unit: max(x, 0)"; }
def Wsgraph_NotOp : Wsgraph_UnaryOp<"not", [], I1, "a boolean (i1)", "tensor<2x8xi1>"> {
  let summary = "Logical negation of booleans";
}
def Wsgraph_BitwiseNotOp : Wsgraph_UnaryOp<"bitwise_not", [], AnyTypeOf<[I8, I16, I32, I64]>,
                                            "a signless integer (not i1)", "tensor<2x8xi32>"> {
  let summary = "Every bit flipped (-x - 1); ONNX BitwiseNot of signed integers";
}
def Wsgraph_GeluOp : Wsgraph_UnaryOp<"gelu"> {
  let summary = "GELU, exact (erf) or in the tanh approximation";
  let description = [{
    Elementwise on a floating-point tensor. `approximate = "none"` (the
    default) is the exact GELU, `x * 0.5 * (1 + erf(x / sqrt(2)))`;
    `approximate = "tanh"` is the form GPT-2 was trained with (HF's
    gelu_new, torch's `approximate='tanh'`),
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`. Produced
    by `--wsgraph-fuse` from either form.

    ```mlir
    %r = wsgraph.gelu %x : tensor<2x8xf32>
    %t = wsgraph.gelu %x {approximate = "tanh"} : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The tanh approximation rather than the exact (erf) GELU?
    bool isTanh() { return getApproximate() == "tanh"; }
  }];
}

def Wsgraph_CastOp : Wsgraph_Op<"cast", [Pure, SameOperandsAndResultShape]> {
  let summary = "Element type conversion";
  let description = [{
    Converts each element to the result's element type (ONNX Cast). Floats
    convert to integers by truncation; any nonzero becomes true for i1.

    ```mlir
    %r = wsgraph.cast %x : tensor<4xi64> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Wsgraph_WhereOp : Wsgraph_Op<"where", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "Select by a boolean condition, with broadcasting";
  let description = [{
    `result = cond ? on_true : on_false`, elementwise, with the three operands
    broadcast to one shape.

    ```mlir
    %r = wsgraph.where %m, %ninf, %x
        : (tensor<1x1x8x8xi1>, tensor<f32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I1]>:$cond, AnyRankedTensor:$on_true,
                       AnyRankedTensor:$on_false);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$cond `,` $on_true `,` $on_false attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra.
//===----------------------------------------------------------------------===//

def Wsgraph_MatmulOp : Wsgraph_Op<"matmul", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "Batched matrix product with broadcast batch dimensions";
  let description = [{
    numpy `matmul` on operands of rank 2 or more: the last two dimensions
    multiply ([M, K] x [K, N] -> [M, N]); the leading ones broadcast.

    ```mlir
    %r = wsgraph.matmul %a, %b : (tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x8x8xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$lhs, RankedTensorOf<[AnyFloat]>:$rhs);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Wsgraph_GemmOp : Wsgraph_Op<"gemm", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "General 2-D matrix multiply: alpha * op(A) op(B) + beta * C";
  let description = [{
    ONNX Gemm. `op(X)` transposes X when the matching `trans_*` flag is set.
    The optional `c` broadcasts to [M, N].

    ```mlir
    %r = wsgraph.gemm %a, %b, %c {trans_b = true}
        : (tensor<4x32xf32>, tensor<96x32xf32>, tensor<96xf32>) -> tensor<4x96xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$a, RankedTensorOf<[AnyFloat]>:$b,
                       Optional<RankedTensorOf<[AnyFloat]>>:$c,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)";
}

def Wsgraph_LinearOp : Wsgraph_Op<"linear", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "x @ weight + bias (fused)";
  let description = [{
    A dense layer: `x` is [..., K], `weight` is [K, N], the optional `bias`
    is [N]; the result is [..., N]. Produced by `--wsgraph-fuse` from a matmul
    by a 2-D weight and the add of a bias.

    ```mlir
    %y = wsgraph.linear %x, %w, %b : (tensor<1x8x32xf32>, tensor<32x96xf32>, tensor<96xf32>) -> tensor<1x8x96xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input, RankedTensorOf<[AnyFloat]>:$weight,
                       Optional<RankedTensorOf<[AnyFloat]>>:$bias);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Normalization and attention.
//===----------------------------------------------------------------------===//

def Wsgraph_SoftmaxOp : Wsgraph_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "Softmax along one axis";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along `axis` (negative counts from
    the end), as in ONNX opset 13 and later. The importer turns the softmax
    of older opsets, over the input flattened to 2-D at `axis`, into a
    reshape, a softmax along the last axis and a reshape back.

    ```mlir
    %p = wsgraph.softmax %s {axis = -1 : i64} : tensor<1x2x8x8xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Wsgraph_LogSoftmaxOp : Wsgraph_Op<"log_softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "Logarithm of the softmax along one axis";
  let description = [{
    `x - max - log(sum(exp(x - max)))` along `axis` (negative counts from
    the end): ONNX LogSoftmax, with the same handling of opsets before 13 as
    `wsgraph.softmax`.

    ```mlir
    %p = wsgraph.log_softmax %s {axis = -1 : i64} : tensor<4x10xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Wsgraph_LayerNormOp : Wsgraph_Op<"layer_norm", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Layer normalization over the trailing dimensions";
  let description = [{
    Normalizes `input` over the dimensions from `axis` to the last one:
    `(x - mean) / sqrt(var + epsilon) * scale + bias`, with the biased
    variance. `scale` and the optional `bias` have the shape of those
    trailing dimensions. `axis` may be any dimension, the first one too.
    ONNX LayerNormalization's optional Mean and InvStdDev outputs are not
    results of this op: the importer computes them, when a node uses them,
    with `reduce_mean`, `sub`, `mul`, `add`, `sqrt` and `reciprocal`.

    ```mlir
    %y = wsgraph.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32}
        : (tensor<1x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input, RankedTensorOf<[AnyFloat]>:$scale,
                       Optional<RankedTensorOf<[AnyFloat]>>:$bias,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Wsgraph_RmsNormOp : Wsgraph_Op<"rms_norm", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "RMS normalization over the trailing dimensions";
  let description = [{
    Scales `input` by the reciprocal root mean square of the dimensions from
    `axis` to the last one: `x / sqrt(mean(x^2) + epsilon) * scale`, without
    centring (Llama's RMSNorm; ONNX RMSNormalization). `scale` has the shape
    of those trailing dimensions. Produced by `--wsgraph-fuse` from
    `x * rsqrt(mean(x^2, -1, keepdim) + eps) * weight` as torch exports it.

    ```mlir
    %y = wsgraph.rms_norm %x, %g {axis = -1 : i64, epsilon = 1.0e-06 : f32}
        : (tensor<1x8x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input, RankedTensorOf<[AnyFloat]>:$scale,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input `,` $scale attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Wsgraph_RotaryOp : Wsgraph_Op<"rotary", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Rotary position embedding over the last dimension";
  let description = [{
    Rotates pairs of the first R dimensions of `input` [..., T, D] by
    angles that depend on the position along dimension -2: `cos` and `sin`
    broadcast to [..., T, R] (R even, R <= D), and the result is
    `x[..., :R] * cos + rotate(x[..., :R]) * sin`, with `x[..., R:]` passing
    through. `rotate` is HF's rotate_half, `cat(-x2, x1)` of the two halves,
    or with `interleaved` the pairs (2i, 2i+1): `(-x[2i+1], x[2i])`.
    Produced by `--wsgraph-fuse` from the forms torch exports for Llama,
    GPT-NeoX (full and partial) and GPT-J (interleaved, partial).

    ```mlir
    %y = wsgraph.rotary %x, %cos, %sin
        : (tensor<1x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<1x4x8x16xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input, RankedTensorOf<[AnyFloat]>:$cos,
                       RankedTensorOf<[AnyFloat]>:$sin,
                       DefaultValuedAttr<BoolAttr, "false">:$interleaved);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input `,` $cos `,` $sin attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// R, the rotated dimensions (the tables' last dimension).
    int64_t getRotaryDims() { return getCos().getType().getShape().back(); }
    /// The same computation in elementwise and data-movement ops, for a
    /// kernel that does not take rotary whole. Returns its result.
    mlir::Value decompose(mlir::OpBuilder &builder);
  }];
}

def Wsgraph_AttentionOp : Wsgraph_Op<"attention", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "Scaled dot-product attention, optionally causal";
  let description = [{
    `softmax(q @ k^T * scale + mask) @ v` per batch and head. `q` is
    [B, H, T, D], `k` is [B, H, S, D], `v` is [B, H, S, E]; the result is
    [B, H, T, E]. With `causal`, query i sees keys 0..i + (S - T) only. The
    optional `mask` is [B, S], added to every head's and query's scores of
    its sequence: a padding mask (0 to attend, a large negative number not
    to). Produced by `--wsgraph-fuse`.

    With `future_fill` (causal only), future keys are not left out: their
    score is `future_fill + mask`, as torch computes a causal fill of
    finfo.min beside a padding mask. It differs from leaving them out only
    on a query whose visible keys are all padded (left padding's first
    rows), where the weights spread over the keys at the highest level,
    future ones too.

    ```mlir
    %o = wsgraph.attention %q, %k, %v {causal = true, scale = 0.25 : f32}
        : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
    %p = wsgraph.attention %q, %k, %v, %m {causal = true, scale = 0.25 : f32}
        : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x8xf32>) -> tensor<2x2x8x16xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$query, RankedTensorOf<[AnyFloat]>:$key,
                       RankedTensorOf<[AnyFloat]>:$value,
                       Optional<RankedTensorOf<[AnyFloat]>>:$mask,
                       DefaultValuedAttr<BoolAttr, "true">:$causal,
                       F32Attr:$scale, OptionalAttr<F32Attr>:$future_fill);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The same computation in matmuls, a softmax and the masks' ops, for
    /// a lowering that no attention kernel takes. Returns its result.
    mlir::Value decompose(mlir::OpBuilder &builder);
  }];
}

//===----------------------------------------------------------------------===//
// Reductions.
//===----------------------------------------------------------------------===//

class Wsgraph_ReduceOp<string mnemonic, string what>
    : Wsgraph_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = "Reduce by " # what # " over the given axes";
  let description = "Reduces `input` over `axes` (negative counts from the "
    "end; empty means all). With `keepdims` the reduced dimensions stay as 1."
    "\n\n```mlir\n%m = wsgraph." # mnemonic # " %x {axes = array<i64: -1>, "
    "keepdims = true} : (tensor<1x8x32xf32>) -> tensor<1x8x1xf32>\n```";
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Wsgraph_ReduceMeanOp : Wsgraph_ReduceOp<"reduce_mean", "the mean">;
def Wsgraph_ReduceSumOp : Wsgraph_ReduceOp<"reduce_sum", "the sum">;
def Wsgraph_ReduceMaxOp : Wsgraph_ReduceOp<"reduce_max", "the maximum">;
def Wsgraph_ReduceMinOp : Wsgraph_ReduceOp<"reduce_min", "the minimum">;

def Wsgraph_ArgMaxOp : Wsgraph_Op<"argmax", [Pure]> {
  let summary = "Index of the largest element along an axis";
  let description = [{
    The index (i64) of the largest element of `input` along `axis` (ONNX
    ArgMax): the first one among equals, or the last with
    `select_last_index`. With `keepdims` the axis stays as 1. A generating
    program (`wsc-compile --generate`) picks each next token this way.

    ```mlir
    %t = wsgraph.argmax %logits {axis = -1 : i64} : (tensor<1x8x64xf32>) -> tensor<1x8xi64>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdims,
                       DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Wsgraph_SampleOp : Wsgraph_Op<"sample", [Pure]> {
  let summary = "A seeded sample of each position's next token";
  let description = [{
    For each position g = b·T + t of `logits` [B, T, V], the index i with
    the largest `logits[b, t, i] - temperature · log(-log(u(i)))`, the first
    among equals: the Gumbel-max trick, a sample from softmax(logits /
    temperature); temperature 0 is the argmax. `params` is [temperature,
    seed], or [temperature, seed, top_k]: then only the logits at least
    the top_k-th largest of the position's (ties kept) can be picked, and
    top_k 0 (or less) keeps them all. The uniform numbers are the ISA's RANDOM (runtime/wafer.proto):
    position g's key is RANDOM of the word float(g) under the key seed, and
    u(i) is RANDOM of the word float(i) under position g's key, so a seed
    draws the same tokens on every run. A generating program compiled with
    `wsc-compile --generate --sampling` picks its tokens this way.

    ```mlir
    %t = wsgraph.sample %logits, %params : (tensor<1x8x64xf32>, tensor<2xf32>) -> tensor<1x8xi64>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$logits, RankedTensorOf<[F32]>:$params);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$logits `,` $params attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement and shapes.
//===----------------------------------------------------------------------===//

def Wsgraph_TransposeOp : Wsgraph_Op<"transpose", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "Permute dimensions";
  let description = [{
    Result dimension i is input dimension `perm[i]`.

    ```mlir
    %t = wsgraph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x16xf32>) -> tensor<1x2x16x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Wsgraph_ReshapeOp : Wsgraph_Op<"reshape", [Pure]> {
  let summary = "Reinterpret the elements in a new static shape";
  let description = [{
    Row-major reshape to the result type, which has the same element type
    and element count.

    ```mlir
    %r = wsgraph.reshape %x : (tensor<1x8x32xf32>) -> tensor<1x8x2x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Wsgraph_ExpandOp : Wsgraph_Op<"expand", [Pure]> {
  let summary = "Broadcast to a larger static shape";
  let description = [{
    numpy broadcast of `input` to the result type.

    ```mlir
    %r = wsgraph.expand %x : (tensor<1x8xi64>) -> tensor<2x8xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Wsgraph_UnsqueezeOp : Wsgraph_Op<"unsqueeze", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "Insert unit dimensions";
  let description = [{
    Inserts a dimension of size 1 at each of `axes`, counted in the result's
    rank.

    ```mlir
    %r = wsgraph.unsqueeze %x {axes = array<i64: 0>} : (tensor<8xi64>) -> tensor<1x8xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Wsgraph_SqueezeOp : Wsgraph_Op<"squeeze", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "Remove unit dimensions";
  let description = [{
    Removes the dimensions `axes`, each of size 1.

    ```mlir
    %r = wsgraph.squeeze %x {axes = array<i64: 0>} : (tensor<1x8xi64>) -> tensor<8xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Wsgraph_GatherOp : Wsgraph_Op<"gather", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "Take slices along an axis by index (embedding lookup)";
  let description = [{
    ONNX Gather: the result is `data.shape[:axis] + indices.shape +
    data.shape[axis+1:]`. Negative indices count from the end.

    ```mlir
    %e = wsgraph.gather %wte, %idx {axis = 0 : i64} : (tensor<64x32xf32>, tensor<1x8xi64>) -> tensor<1x8x32xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, RankedTensorOf<[I32, I64]>:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Wsgraph_GatherElementsOp : Wsgraph_Op<"gather_elements", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "Take elements along an axis by a tensor of indices";
  let description = [{
    ONNX GatherElements: `data` and `indices` have the same rank and the
    result has the shape of `indices`. Along `axis` the result takes
    `data[..., indices[i], ...]`; along every other dimension it takes the
    same position, so `indices` is no larger than `data` there. Negative
    indices count from the end.

    ```mlir
    %r = wsgraph.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, RankedTensorOf<[I32, I64]>:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Wsgraph_ConcatOp : Wsgraph_Op<"concat", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "Join tensors along an axis";
  let description = [{
    ```mlir
    %r = wsgraph.concat %a, %b {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Wsgraph_SliceOp : Wsgraph_Op<"slice", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "Strided slice with one offset, size and stride per dimension";
  let description = [{
    Result element `i` (a multi-index) is input element
    `offsets + i * strides`. Strides are nonzero and may be negative. The
    importer turns ONNX Slice's starts/ends/axes/steps into this
    normalized form, so every selected index is in bounds.

    ```mlir
    %r = wsgraph.slice %m {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 1, 8, 8>,
        strides = array<i64: 1, 1, 1, 1>} : (tensor<1x1x16x16xf32>) -> tensor<1x1x8x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Wsgraph_SplitOp : Wsgraph_Op<"split", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "Split into consecutive pieces along an axis";
  let description = [{
    Piece i has `sizes[i]` elements along `axis`; the sizes add up to that
    dimension.

    ```mlir
    %q, %k, %v = wsgraph.split %qkv {axis = 2 : i64, sizes = array<i64: 32, 32, 32>}
        : (tensor<1x8x96xf32>) -> (tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<1x8x32xf32>)
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis, DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Wsgraph_TileOp : Wsgraph_Op<"tile", [Pure, InferTypeOpAdaptor]> {
  let summary = "Repeat a tensor along each dimension";
  let description = [{
    ONNX Tile with its repeats known: dimension i of the result is
    `repeats[i]` copies of dimension i of the input, one after the other.
    There is one non-negative repeat count per dimension.

    ```mlir
    %r = wsgraph.tile %x {repeats = array<i64: 1, 3>} : (tensor<2x4xf32>) -> tensor<2x12xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$repeats);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Wsgraph_TriluOp : Wsgraph_Op<"trilu", [Pure, SameOperandsAndResultType]> {
  let summary = "Keep the lower or upper triangle of the last two dimensions";
  let description = [{
    ONNX Trilu: keeps elements with `j - i <= k` (lower) or `j - i >= k`
    (upper) and zeroes the rest.

    ```mlir
    %t = wsgraph.trilu %ones {upper = false, k = 0 : i64} : tensor<8x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DefaultValuedAttr<BoolAttr, "true">:$upper,
                       DefaultValuedAttr<I64Attr, "0">:$k);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Wsgraph_RangeOp : Wsgraph_Op<"range", [Pure]> {
  let summary = "Arithmetic sequence start, start+delta, ... below limit";
  let description = [{
    ONNX Range on three scalar (rank-0) tensors. Folds to a constant when
    all three are constants.

    ```mlir
    %r = wsgraph.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<8xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$start, AnyRankedTensor:$limit, AnyRankedTensor:$delta);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$start `,` $limit `,` $delta attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Wsgraph_ShapeOp : Wsgraph_Op<"shape", [Pure]> {
  let summary = "The shape of a tensor as a 1-D i64 tensor";
  let description = [{
    Dimensions `start` up to `end` (exclusive, negative counts from the end)
    of the input's shape. Folds away once those dimensions are static.

    ```mlir
    %s = wsgraph.shape %x : (tensor<1x8x32xf32>) -> tensor<3xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DefaultValuedAttr<I64Attr, "0">:$start,
                       OptionalAttr<I64Attr>:$end);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

#endif // WSGRAPH_OPS_TD
