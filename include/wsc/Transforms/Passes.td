//===- Passes.td - passes inside one level ------------------*- tablegen -*-===//
#ifndef WSC_TRANSFORMS_PASSES_TD
#define WSC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def WsgraphFuse : Pass<"wsgraph-fuse", "mlir::ModuleOp"> {
  let summary = "Fold, canonicalize and fuse wsgraph into layer_norm, rms_norm, gelu, attention "
                "and linear";
  let description = [{
    Folds every constant subgraph, then rewrites the decomposed forms that
    torch.onnx.export produces into fused ops:
    - ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul[/Add] into `layer_norm`;
    - x * 0.5 * (1 + erf(x / sqrt(2))) into `gelu`;
    - 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), with the
      cube as pow or products and the polynomial in any arrangement (HF's
      gelu_new, torch's approximate='tanh', FastGELU), into
      `gelu {approximate = "tanh"}` where x is a linear of a
      [batch, tokens, K] activation that nothing else uses (the linear
      kind finishes it; the generic kind does not compute that form yet);
    - x * rsqrt(mean(x^2, -1) + eps) (as 1 / sqrt, a reciprocal, pow -0.5
      or x / sqrt), times a static weight, into `rms_norm` on a
      [batch, tokens, C] activation ([batch, tokens] being the shape of the
      function's first static 2-D integer input, the token ids), the form
      the rms_norm kind takes;
    - softmax(q @ k^T * scale, causal mask) @ v into `attention`;
    - matmul by a 2-D weight, plus a bias, into `linear`;
    - gemm by a static weight (HF GPT-2's Conv1D, torch.addmm, nn.Linear)
      into `linear`: no transA; a stored weight transposed (transB) becomes
      a view of its file (`strides`), a literal one is transposed at compile
      time; a weight scaled (alpha) and a bias scaled (beta) only when they
      are literals (a weight in a file is never copied); C a static [N]
      bias or none;
    - transpose of a stored weight that only products use (nn.Linear's
      weight before a MatMul) into a view of its file;
    - reshape(linear(x)) from [B*T, N] to [B, T, N] into
      linear(reshape(x) to [B, T, K]), so that the Reshape -> Gemm ->
      Reshape of a flattened Conv1D becomes one linear on the activation.
    After this pass the exports of one model at opsets 13 to 17 give the
    same ops. With `remarks`, every computing op left unfused gets a remark
    that says why: it will run on a generic kernel (docs/rationale/generic.md).
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "false",
           "Remark on every computing op left unfused, and why">
  ];
  let dependentDialects = ["wsc::wsgraph::WsgraphDialect"];
}

def WsgraphFeatureRows : Pass<"wsgraph-feature-rows", "mlir::ModuleOp"> {
  let summary = "Give the linears on an MLP's feature rows [R, K] the token form [1, R, K]";
  let description = [{
    In a function without token ids whose first static 2-D float argument
    is [R, C] (a batch of feature rows: an MLP, a classifier head), the
    fused kernel kinds stream [1, R, C] activations (tokenGeometry). This
    pass rewrites each `linear` on [R, K] into a reshape to [1, R, K], the
    linear, and a reshape back, and moves every elementwise op of one
    operand across a reshape before it, so that the reshapes between two
    linears cancel. A linear larger than a PE then runs on the linear
    kernel kind rather than on one generic PE.

    Rows flattened from tokens ([B, T, C] reshaped to [B * T, C], as OPT
    runs its MLP) go back to the tokens in any function: a linear or a
    last-axis layer norm on such rows becomes the op on the tokens and the
    reshape after it, and an elementwise op (binary ones too) whose operands
    are all reshapes of one shape moves before them.
  }];
  let dependentDialects = ["wsc::wsgraph::WsgraphDialect"];
}

def WsgraphGenerate : Pass<"wsgraph-generate", "mlir::ModuleOp"> {
  let summary = "Make a language model's graph generate: each next token picked on the wafer";
  let description = [{
    Turns a graph that maps token ids [B, T] to logits [B, T, V] into one
    that generates: the function also returns `next_token` [B, T], the
    argmax of the logits at each position (greedy decoding), and is marked
    `wsgraph.generate`. The lowering then feeds each next token back to the
    embedding over the fabric: position t + 1 takes it where the host gave
    no token (a negative id), so prompts of any length up to T, different
    per sequence, run in one program, and the keys and values of every
    position stay resident in the attention kernels. An `attention_mask`
    input (a [B, T] integer input of that name) becomes ones: a generating
    program's sequences are not padded. `max-context`, when given, must be T.

    With `sampling`, `next_token` is a `wsgraph.sample` of the logits
    instead, whose [temperature, seed] are a new f32 input `sampling` (the
    host writes them: wsc-run --temperature and --seed); temperature 0
    picks the argmax. With `top-k` too, the input is [temperature, seed,
    top_k] (wsc-run --top-k): each pick is among the top_k largest logits
    only (0: all of them).

    ```
    wsc-opt m.mlir --wsgraph-generate="max-context=64"
    wsc-opt m.mlir --wsgraph-generate="sampling=true"
    wsc-opt m.mlir --wsgraph-generate="sampling=true top-k=true"
    ```
  }];
  let options = [
    Option<"maxContext", "max-context", "int64_t", "0",
           "The positions the program holds, which must be the token input's T (0: T)">,
    Option<"sampling", "sampling", "bool", "false",
           "Sample each next token (wsgraph.sample) from an input [temperature, seed]">,
    Option<"topK", "top-k", "bool", "false",
           "With sampling, the input also takes top_k: each pick is among the top_k largest logits">
  ];
  let dependentDialects = ["wsc::wsgraph::WsgraphDialect"];
}

def WsgraphSparsify : Pass<"wsgraph-sparsify", "mlir::ModuleOp"> {
  let summary = "Find the linear weights sparse enough to hold as nonzeros, pruning them first if asked";
  let description = [{
    For every f32 matrix that only `wsgraph.linear` ops take as their weight:
    with `sparsity` > 0, marks it pruned by magnitude (`wsgraph.prune`: that
    fraction of its elements, smallest magnitudes first, read as zero
    wherever its values are read); then counts its nonzeros and, when their
    fraction is below `max-density`, marks it `wsgraph.density`. The linear
    kinds hold such a weight's tiles as their nonzeros and positions
    (`storage = "sparse:N"` or `"sparse4:N"`), and spend cycles per entry. Weights that
    other ops read too (an embedding tied to the LM head) stay dense and
    unpruned, and the LM head's (a linear whose result the function
    returns) is not pruned, as SPDF and Sparse-IFT keep the embedding and
    the head dense. An elided weight has no values: with `sparsity` its density
    is taken as 1 - sparsity.

    ```
    wsc-opt m.mlir --wsgraph-fuse --wsgraph-sparsify="sparsity=0.75"
    ```
  }];
  let options = [
    Option<"sparsity", "sparsity", "double", "0.0",
           "Fraction of each matrix's elements to prune by magnitude (0: none)">,
    Option<"maxDensity", "max-density", "double", "0.6",
           "Matrices with fewer nonzeros than this fraction are held sparse">
  ];
  let dependentDialects = ["wsc::wsgraph::WsgraphDialect"];
}

def WscDefects : Pass<"wsc-defects", "mlir::ModuleOp"> {
  let summary = "Attach the defect map (dead PEs and links) to the module";
  let description = [{
    Reads a defect file (format in docs/defects.md) and/or draws a random map,
    and stores the union with any map already on the module as the
    `wafer.defects` module attribute: the one source of truth that
    `--wsc-place`, `--wsc-route` and `--wsc-verify-routes` read. Random maps
    kill each PE with probability `rate` and each link with probability
    `link-rate` (default: `rate`), on every wafer the kernels use; they are
    the same for a seed on every platform.

    ```
    wsc-opt m.mlir --wsc-defects="file=wafer0.defects"
    wsc-opt m.mlir --wsc-defects="rate=0.01 seed=7"
    ```
  }];
  let options = [
    Option<"file", "file", "std::string", "", "Defect map file">,
    Option<"rate", "rate", "double", "0.0", "Random map: probability that a PE is dead">,
    Option<"linkRate", "link-rate", "double", "-1.0",
           "Random map: probability that a link is dead (default: rate)">,
    Option<"seed", "seed", "uint64_t", "1", "Random map seed">
  ];
  let dependentDialects = ["wsc::wafer::WaferDialect"];
}

def WscPlace : Pass<"wsc-place", "mlir::ModuleOp"> {
  let summary = "Place every kernel rectangle on its wafer, around defects";
  let description = [{
    Gives each `wskernel.kernel` a `wafer.origin = array<i64: wafer, x, y>`:
    inside the grid, not overlapping, with no dead PE or dead link inside.
    Kernels go to wafer `wafer.stage` (0 without it); kernels that already
    have an origin stay where they are. Kernels wider or taller than half
    the wafer go first, against an edge. A band packer lays the others out
    in pipeline order in a serpentine of bands (a skyline inside each band
    lets short kernels stack), each kernel nearest to the kernels it talks
    to; it runs for row and column bands and several band heights, and the
    packing with the lowest stream-weighted distance wins. Then a fixed
    budget of random moves and swaps keeps every legal change that lowers
    that distance. When no packing holds every kernel, placement asks the
    lowering to rebuild a kernel in another shape (inside a free rectangle,
    or smaller), its SRAM and cycles recomputed, and packs again; a kernel
    that still does not fit is an error naming it and its wafer. Wafers are
    placed in parallel. Deterministic for a seed.
    docs/placement-and-routing.md has the details.
  }];
  let options = [
    Option<"seed", "seed", "int64_t", "1", "Seed of the improvement moves">,
    Option<"moves", "moves", "int64_t", "-1",
           "Improvement moves (-1: 200 per kernel, at most 400000; 0: none)">,
    Option<"reshapeSlower", "reshape-slower", "bool", "true",
           "When no packing holds a wafer's kernels, the lowering may reshape a kernel "
           "into one slower than the wafer's slowest (false: only shapes as fast)">,
    Option<"maxReshapes", "max-reshapes", "int64_t", "-1",
           "Reshapes placement may ask of the lowering on a wafer before it gives up "
           "(-1: 4 per kernel + 16)">
  ];
  let dependentDialects = ["wsc::wafer::WaferDialect"];
}

def WscRoute : Pass<"wsc-route", "mlir::ModuleOp"> {
  let summary = "Route every stream and channel through the routers and assign colors";
  let description = [{
    Every stream is a multicast tree from its producer's last PE to every PE
    of every consumer; every channel is a fixed set of neighbour hops. Trees
    are grown by A* over link costs (base + history + present congestion),
    then groups get colors by coloring their conflict graph; congestion
    (more groups on a link than colors, or more words per token than the
    link budget) and coloring failures are negotiated away PathFinder-style
    by ripping up and rerouting. Streams between wafers cross links from
    wafer i's east edge to wafer i + 1's west edge (one per row, chosen per
    stream near its tree and consumers, around dead edge PEs and links); each
    wafer routes and colors its part of the stream on its own, and the link
    translates the color. Writes `wafer.colors` on every kernel, one
    `wafer.routes` table per wafer, `wafer.links` when streams cross wafers,
    and `wafer.route_stats` on the module. An unroutable design is an error
    naming the stream and the congested region (or the wafers it cannot
    cross between).
  }];
  let options = [
    Option<"maxIterations", "max-iterations", "int64_t", "40",
           "Rip-up and reroute rounds before giving up">,
    Option<"extraRounds", "extra-rounds", "int64_t", "0",
           "Rounds past max-iterations while the links over the budget keep falling "
           "(by a quarter every four rounds)">,
    Option<"linkBudget", "link-budget", "int64_t", "0",
           "Words per token a link may carry (0: the slowest kernel's cycles per token; "
           "-1: unchecked)">,
    Option<"growBudget", "grow-budget", "bool", "true",
           "When the links cannot carry the streams within the budget, raise it by a "
           "quarter until they can (false: that is an error)">
  ];
  let dependentDialects = ["wsc::wafer::WaferDialect"];
}

def WscVerifyRoutes : Pass<"wsc-verify-routes", "mlir::ModuleOp"> {
  let summary = "Check the router tables hop by hop against the kernel graph";
  let description = [{
    Trusts nothing the router computed: from the kernel graph, `wafer.origin`
    and `wafer.colors` it derives which PEs every stream and channel must
    reach, on every wafer, then walks `wafer.routes` from each sending PE,
    through `wafer.links` wherever an entry forwards to LINK, and checks
    that each flow reaches exactly those PEs on the colors its readers use,
    with no missing hop or link, no loop or merging branches, no two origins
    on one link (or off-wafer link) and color, no dead PE or link, no color
    beyond the arch, and no entry or link left unused.
    Placement (rectangles inside the grid, disjoint, on live PEs) is checked
    too. Errors name the kernel, port, color and PE.
  }];
  let dependentDialects = ["wsc::wafer::WaferDialect"];
}

#endif // WSC_TRANSFORMS_PASSES_TD
