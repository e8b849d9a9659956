//===- Wskernel.td - per-core kernels -----------------------*- tablegen -*-===//
//
// A kernel is a rectangle of h x w PEs that runs one SPMD body: the program
// every PE of the rectangle executes, parameterised by the PE's coordinate
// (px, py) inside it. Bodies work on SRAM byte addresses and on ports: the
// kernel's input and output streams and its internal channels.
//
//===----------------------------------------------------------------------===//
#ifndef WSKERNEL_TD
#define WSKERNEL_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Wskernel_Dialect : Dialect {
  let name = "wskernel";
  let cppNamespace = "::wsc::wskernel";
  let summary = "Per-core SPMD kernels on rectangles of PEs, joined by streams.";
  let description = [{
    A model at this level is a function of `wskernel.kernel` ops joined by
    `!wskernel.stream` values: one vector per token flows along each stream.
    Each kernel states its rectangle, its per-PE SRAM bytes and its estimated
    cycles per token, and holds the body that the runtime's emulator executes
    on every PE of the rectangle. Body ops map one to one onto the runtime's
    instructions (docs/runtime.md).
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

def Wskernel_StreamType : TypeDef<Wskernel_Dialect, "Stream"> {
  let mnemonic = "stream";
  let summary = "A stream of one fixed-size vector per token";
  let description = [{
    `!wskernel.stream<768, f32>` carries, for every token, 768 f32 words from
    the producing kernel to every consuming kernel.
  }];
  let parameters = (ins "int64_t":$size, "mlir::Type":$elementType);
  let assemblyFormat = "`<` $size `,` $elementType `>`";
  let genVerifyDecl = 1;
}

def Wskernel_AffAttr : AttrDef<Wskernel_Dialect, "Aff"> {
  let mnemonic = "aff";
  let summary = "An integer affine in the loop indices and the PE coordinate";
  let description = [{
    `base + sum(loop[k] * index_k) + px * x + py * y`, where index_0 is the
    innermost enclosing `wskernel.loop`. Used for SRAM byte addresses and
    element counts.

    ```mlir
    #wskernel.aff<base = 128, loop = [64], px = 256>
    ```
  }];
  let parameters = (ins "int64_t":$base,
                        OptionalArrayRefParameter<"int64_t">:$loop,
                        DefaultValuedParameter<"int64_t", "0">:$px,
                        DefaultValuedParameter<"int64_t", "0">:$py);
  let hasCustomAssemblyFormat = 1;
  let builders = [
    AttrBuilder<(ins "int64_t":$base), [{ return $_get($_ctxt, base, llvm::ArrayRef<int64_t>{}, 0, 0); }]>
  ];
}

def Wskernel_PeRangeAttr : AttrDef<Wskernel_Dialect, "PeRange"> {
  let mnemonic = "pes";
  let summary = "An inclusive rectangle of PE coordinates inside a kernel";
  let description = [{
    `#wskernel.pes<x0 = 0, x1 = 3, y0 = 2, y1 = 2>` selects row 2, columns
    0 to 3. A body op with `when = [...]` runs only on PEs inside one of them.
  }];
  let parameters = (ins "int64_t":$x0, "int64_t":$x1, "int64_t":$y0, "int64_t":$y1);
  let assemblyFormat = "`<` struct(params) `>`";
}

class Wskernel_Op<string mnemonic, list<Trait> traits = []>
    : Op<Wskernel_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

def Wskernel_KernelOp : Wskernel_Op<"kernel", [IsolatedFromAbove,
    SingleBlock, NoTerminator, DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "One rectangle of h x w PEs running an SPMD body";
  let description = [{
    Operands are the input streams, plus tensors that the body loads into
    SRAM (weights, with `wskernel.init_tile`, or host inputs, with
    `wskernel.host_input`). Results are output streams, or host tensors
    written by `wskernel.host_output`. `grid` is [h, w]. `channels` names
    the internal channels and their shape: `col_chain` joins each PE to the
    one south of it, `col_chain_north` each PE to the one north of it,
    `row_chain` the PEs of the last row west to east and `row_chain_west`
    east to west.
    Ports are `in<i>`, `out<i>` and the channel names. A stream result starts
    at the last PE (largest y, then x) of the box of PEs whose sends on
    `out<i>` select them; a reader receives it on the box of PEs whose
    receives on `in<j>` select them. A vector split into
    blocks is several results, one per sending PE, read as consecutive
    operands. After placement the
    op also carries `wafer.origin = [wafer, x, y]`; after routing,
    `wafer.colors` maps every port to its color.

    In weight streaming, one set of layer kernels runs every layer, so the
    layer's output runs back to its first kernels: a stream SSA values cannot
    express. `feedback = {fb0 = "l0.mlp_proj"}` says that port `fb0` of this
    kernel receives what the kernel named `l0.mlp_proj` sends on its port
    `fb`; the routers carry it like any stream. A feeder whose output leaves
    in blocks (several stream results) sends block `i` on `fbout<i>`, and a
    reader's port `fb<j>` takes the block that its operand `j` is in layer 0
    (that operand's result number).

    A host result too large for one kernel is written by several, each into
    its columns (`col_window` on `host_output`): `wskernel.writes_into = i`
    says that result 0 is operand i (the previous kernel's result) with this
    kernel's columns written in, so the last one holds the whole tensor.

    ```mlir
    %y = wskernel.kernel "l0_ln1" kind "layer_norm" grid [1, 2] sram 1024 cycles 80.0
        channels {row = "row_chain"} (%x, %g) : (!wskernel.stream<32, f32>, tensor<32xf32>)
        -> !wskernel.stream<32, f32> {
      wskernel.init_tile 1 at 512 rows 1 cols 16 col_origin [0, 16]
      wskernel.loop 8 {
        wskernel.recv "in0" to <base = 0> n <base = 32>
        wskernel.send "out0" from <base = 256> n <base = 32>
      }
    }
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$kind, DenseI64ArrayAttr:$grid,
                       I64Attr:$sram_bytes_per_pe, F64Attr:$cycles_per_token,
                       DictionaryAttr:$channels, OptionalAttr<DictionaryAttr>:$feedback,
                       Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $name `kind` $kind `grid` $grid `sram` $sram_bytes_per_pe `cycles` $cycles_per_token
    `channels` $channels `(` $inputs `)` attr-dict `:` functional-type($inputs, results) $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getHeight() { return getGrid()[0]; }
    int64_t getWidth() { return getGrid()[1]; }
    /// The largest SRAM byte the body touches on any PE, over all loop
    /// iterations; failure (with an error on `op`) when a count is negative.
    static mlir::FailureOr<int64_t> bodyExtent(KernelOp kernel);
  }];
}

def Wskernel_LoopOp : Wskernel_Op<"loop", [SingleBlock, NoTerminator]> {
  let summary = "Repeat the body `count` times";
  let description = [{
    The innermost enclosing loop's index is index 0 of every `#wskernel.aff`
    inside. Kernels loop over batch (outer) and tokens (inner).

    ```mlir
    wskernel.loop 2 { wskernel.loop 8 { ... } }
    ```
  }];
  let arguments = (ins I64Attr:$count);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$count attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// SRAM contents and host I/O
//===----------------------------------------------------------------------===//

def Wskernel_InitTileOp : Wskernel_Op<"init_tile", [HasParent<"KernelOp">]> {
  let summary = "Initial SRAM: a tile of a weight operand, chosen by PE coordinate";
  let description = [{
    Before the run, each PE's SRAM at byte `offset` holds a `rows` x `cols`
    row-major tile of operand `source` (a 1-D operand counts as one row).
    The tile's first row is `row_origin[0] * py + row_origin[1] * px` and its
    first column `col_origin[0] * py + col_origin[1] * px`; elements outside
    the operand are zero. With `col_window = [lo, hi]` the operand is seen as
    its columns [lo, hi) only: column 0 of the origins is `lo`, and columns
    from `hi` on are zero (a kernel that computes some of a weight's output
    columns). With `storage = "f16"` or `"bf16"` the tile is
    held as 16-bit floats, two per word (element i in word i / 2, the even
    one in the low half), and takes ceil(rows * cols / 2) words. With
    `storage = "sparse:N"` each PE's tile holds its nonzeros and their
    positions in the .wafer's STORE_SPARSE layout (each entry's gap from the
    one before in 8 bits, a filler entry bridging a longer run of zeros), or
    its elements when that is smaller; N bounds the entries of every PE's
    tile, and the tile takes the words of the smaller form for N.
    `"sparse4:N"` takes 4-bit gaps. `"sparse:N:f16"` and `"sparse:N:bf16"`
    (and the same after `sparse4`) hold the values as 16-bit floats, two per
    word (STORE_SPARSE_F16, STORE_SPARSE_BF16).

    With `col_interleave = [a, u]` the operand's columns are a groups of
    units of u columns, seen unit by unit across the groups: column
    (i * a + g) * u + o of the view is column g * (C / a) + i * u + o of the
    operand (C columns). A QKV projection's [q | k | v] columns with
    [3, ds] put each attention column's ds words of q, k and v side by side,
    which that column reads as one window.

    With `col_perm = [p_0, ..., p_(P-1)]`, a permutation of 0..P-1, each run
    of P columns is seen in that order: column r * P + i of the view is
    column r * P + p_i of the operand. A projection whose result rotary
    turns by pairs puts rotate_half's dimensions j and j + R/2 of each head
    side by side so.

    With `row_perm = [p_0, ..., p_(P-1)]` the same holds for rows: row
    r * P + i of the view is row r * P + p_i of the operand. A projection
    whose input arrives in another order (grouped-query attention's result,
    each column's query heads side by side) reads its weight rows so.

    ```mlir
    wskernel.init_tile 1 at 64 rows 16 cols 48 row_origin [16, 0] col_origin [0, 48]
    wskernel.init_tile 1 at 0 rows 4 cols 8 col_origin [0, 8] {col_interleave = array<i64: 3, 4>}
    ```
  }];
  let arguments = (ins I64Attr:$source, I64Attr:$offset, I64Attr:$rows, I64Attr:$cols,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$row_origin,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$col_origin,
                       DefaultValuedAttr<StrAttr, "\"f32\"">:$storage,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$col_window,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$col_interleave,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$col_perm,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$row_perm);
  let assemblyFormat = [{
    $source `at` $offset `rows` $rows `cols` $cols (`row_origin` $row_origin^)?
    (`col_origin` $col_origin^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Wskernel_LoadTileOp : Wskernel_Op<"load_tile", [HasParent<"LoopOp">]> {
  let summary = "Weight streaming: load a tile of this layer's weight from external memory";
  let description = [{
    When it runs, each PE's SRAM at byte `offset` receives its `rows` x
    `cols` tile of operand `source + stride * i`, where i is the index of the
    enclosing `wskernel.loop` (the layer): the weights of layer i, which live
    in external memory, not on the wafer. Tiles are chosen by coordinate as
    in `wskernel.init_tile`, and held at its `storage`. The .wafer export
    writes every layer's tiles to an external blob and the op becomes one
    EXT_LOAD per PE.

    ```mlir
    wskernel.loop 12 {
      wskernel.load_tile 2 stride 2 at 64 rows 16 cols 48 row_origin [16, 0] col_origin [0, 48]
    }
    ```
  }];
  let arguments = (ins I64Attr:$source, I64Attr:$stride, I64Attr:$offset, I64Attr:$rows,
                       I64Attr:$cols,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$row_origin,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$col_origin,
                       DefaultValuedAttr<StrAttr, "\"f32\"">:$storage);
  let assemblyFormat = [{
    $source `stride` $stride `at` $offset `rows` $rows `cols` $cols
    (`row_origin` $row_origin^)? (`col_origin` $col_origin^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Wskernel_FilterOp : Wskernel_Op<"filter", [HasParent<"KernelOp">]> {
  let summary = "The router gives a PE's core only a window of each message on a port";
  let description = [{
    Of every message that arrives on input port `port` (a block of a
    stream, one per token), the PEs in `when` (all PEs without it) get only
    words [first, first + count) for their core: their routers drop the rest
    before the ramp, as the hardware's per-color filters do. `first` and
    `count` may depend on the PE coordinate (not on loop indices); the
    body's receives on the port then see only the window.

    With `period = P`, the window repeats every P words of the port instead
    of every message: a period of the whole tensor gives a PE a range of
    its rows (a generic kernel's chunk).

    ```mlir
    wskernel.filter "in3" first <base = 4, py = 8> count <base = 8>
        {when = [#wskernel.pes<x0 = 0, x1 = 3, y0 = 0, y1 = 1>]}
    wskernel.filter "in0" first <base = 64> count <base = 64> {period = 256 : i64}
    ```
  }];
  let arguments = (ins StrAttr:$port, Wskernel_AffAttr:$first, Wskernel_AffAttr:$count,
                       OptionalAttr<ArrayAttr>:$when, OptionalAttr<I64Attr>:$period);
  let assemblyFormat = "$port `first` $first `count` $count attr-dict";
  let hasVerifier = 1;
}

def Wskernel_HostInputOp : Wskernel_Op<"host_input", [HasParent<"KernelOp">]> {
  let summary = "The host writes a whole input tensor into every PE's SRAM";
  let description = [{
    Before the run, operand `source` (a host tensor such as the token ids)
    is written to byte `offset` of every PE in `when` (all PEs without it),
    one 32-bit word per element. With `window = [first, count]` only its
    elements [first, first + count) are (a generic kernel's chunk); with
    `window = [first, count, period]`, those of every period of `period`
    elements, one after another (a strided chunk).

    ```mlir
    wskernel.host_input 0 at 0
    wskernel.host_input 1 at 64 {window = array<i64: 16, 8>}
    ```
  }];
  let arguments = (ins I64Attr:$source, I64Attr:$offset, OptionalAttr<ArrayAttr>:$when,
                       OptionalAttr<DenseI64ArrayAttr>:$window);
  let hasVerifier = 1;
  let assemblyFormat = "$source `at` $offset attr-dict";
}

def Wskernel_HostOutputOp : Wskernel_Op<"host_output", [HasParent<"KernelOp">]> {
  let summary = "After the run, the host reads a result tensor from tiles in SRAM";
  let description = [{
    Result `result`, viewed as a matrix [elements / last dim, last dim], is
    read back in tiles: each PE in `when` (all PEs without it) holds a
    `rows` x `cols` row-major tile at byte `offset`, whose first row is
    `row_origin[0] * py + row_origin[1] * px` and first column
    `col_origin[0] * py + col_origin[1] * px`. Tile elements outside the
    matrix are padding and are not read. With `col_window = [lo, hi]` the
    tiles cover columns [lo, hi) of the result only (column 0 of the origins
    is `lo`): the other columns are written by other kernels (see
    `wskernel.writes_into` on `wskernel.kernel`).

    ```mlir
    wskernel.host_output 0 at 128 rows 8 cols 16 col_origin [0, 16]
    ```
  }];
  let arguments = (ins I64Attr:$result, I64Attr:$offset, I64Attr:$rows, I64Attr:$cols,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$row_origin,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$col_origin,
                       OptionalAttr<ArrayAttr>:$when,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$col_window);
  let assemblyFormat = [{
    $result `at` $offset `rows` $rows `cols` $cols (`row_origin` $row_origin^)?
    (`col_origin` $col_origin^)? attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Instructions
//===----------------------------------------------------------------------===//

// Every instruction may carry `when` (PE ranges that run it) and `guard`
// (affine values that must all be >= 0 for it to run, e.g. px - i - 1 to run
// on PEs east of the current iteration i). `tail` follows them.
class Wskernel_InstrOp<string mnemonic, dag args, string format, dag tail = (ins)>
    : Wskernel_Op<mnemonic> {
  let arguments = !con(args, (ins OptionalAttr<ArrayAttr>:$when, OptionalAttr<ArrayAttr>:$guard),
                       tail);
  let assemblyFormat = format # " attr-dict";
}

def Wskernel_SendOp : Wskernel_InstrOp<"send",
    (ins StrAttr:$port, Wskernel_AffAttr:$src, Wskernel_AffAttr:$n),
    "$port `from` $src `n` $n", (ins UnitAttr:$async)> {
  let summary = "Send n words from SRAM on a port";
  let description = [{
    With `async`, the send runs on the PE's async engine (a microthread
    beside the core): the core goes on at once, and a later instruction
    that uses the words or the port waits for the send to end. At most two
    async operations are in flight.

    ```mlir
    wskernel.send "out0" from <base = 0> n <base = 32>
    wskernel.send "col" from <base = 0> n <base = 16> {async}
    ```
  }];
}

def Wskernel_RecvOp : Wskernel_InstrOp<"recv",
    (ins StrAttr:$port, Wskernel_AffAttr:$dst, Wskernel_AffAttr:$n,
         DefaultValuedAttr<StrAttr, "\"copy\"">:$combine, OptionalAttr<StrAttr>:$forward,
         OptionalAttr<Wskernel_AffAttr>:$matrix, OptionalAttr<Wskernel_AffAttr>:$cols,
         DefaultValuedAttr<StrAttr, "\"f32\"">:$storage, OptionalAttr<I64Attr>:$tile_rows,
         OptionalAttr<I64Attr>:$first_row),
    "$port `to` $dst `n` $n", (ins UnitAttr:$async)> {
  let summary = "Wait for n words on a port and store (copy), add or max them into SRAM, or discard them";
  let description = [{
    With `forward`, each word also leaves on that port as it is stored
    (after the add): a relay in one pass, n cycles of the core instead of a
    receive and a send (a DSD operation with fabric input and output on the
    hardware). A copy, an add or a discard forwards; a discard stores
    nothing (the words only pass through: dst is unused).

    With `combine = "vecmat"` (or `"vecmat_add"`, which adds to dst) the n
    words are the vector of a product with the n x `cols` row-major f32
    `matrix`: `dst[c] = sum_r x[r] * M[r][c]`. Each word meets its row as it
    arrives (a fabric operand of the multiply-adds on the hardware), so the
    PE takes its slice of a stream while it multiplies; nothing is stored
    but dst. With a sparse `storage` (`"sparse:N..."`, as
    `wskernel.init_tile` holds the tile) the matrix is the whole tile of
    `tile_rows` rows, and the n words meet its rows from `first_row` (0 if
    absent) on: the pieces of a slice that come in several messages each
    multiply into their own rows, at a cycle per entry.

    With `async` (a copy, an add or a discard), the receive runs on the PE's async
    engine as `wskernel.send` does: a relay of a column sum can pass one
    token's partial on while the core multiplies the next.

    ```mlir
    wskernel.recv "col" to <base = 0> n <base = 16> {combine = "add"}
    wskernel.recv "col" to <base = 0> n <base = 16> {combine = "add", forward = "col"}
    wskernel.recv "in0" to <base = 0> n <base = 4> {combine = "vecmat", matrix = #wskernel.aff<base = 64>, cols = #wskernel.aff<base = 8>}
    wskernel.recv "in0" to <base = 0> n <base = 2> {combine = "vecmat_add", matrix = #wskernel.aff<base = 64>, cols = #wskernel.aff<base = 8>, storage = "sparse:12", tile_rows = 4, first_row = 2}
    wskernel.recv "col" to <base = 0> n <base = 16> {async, combine = "add", forward = "col"}
    ```
  }];
  let extraClassDeclaration = [{
    /// Is it a product with a matrix (combine vecmat or vecmat_add)?
    bool isProduct() { return getCombine().starts_with("vecmat"); }
  private:
    /// A product's storage, tile_rows and first_row agree.
    ::mlir::LogicalResult verifyProductTile();
  public:
  }];
  let hasVerifier = 1;
}

def Wskernel_MatvecOp : Wskernel_InstrOp<"matvec",
    (ins Wskernel_AffAttr:$dst, Wskernel_AffAttr:$matrix, Wskernel_AffAttr:$vector,
         Wskernel_AffAttr:$rows, Wskernel_AffAttr:$cols,
         DefaultValuedAttr<BoolAttr, "false">:$transposed,
         DefaultValuedAttr<BoolAttr, "false">:$accumulate,
         DefaultValuedAttr<StrAttr, "\"f32\"">:$storage),
    "$dst `=` $matrix `x` $vector `rows` $rows `cols` $cols"> {
  let summary = "Matrix-vector product with a rows x cols row-major matrix";
  let description = [{
    `dst[r] = sum_c M[r][c] * v[c]`, or with `transposed`
    `dst[c] = sum_r v[r] * M[r][c]`; `accumulate` adds to dst. With
    `storage = "f16"` or `"bf16"` the matrix holds 16-bit floats, two per
    word (as `wskernel.init_tile` lays them out), widened to f32 as read;
    the arithmetic is f32.

    ```mlir
    wskernel.matvec <base = 0> = <base = 64> x <base = 32> rows <base = 8> cols <base = 16> {transposed = true}
    ```
  }];
  let hasVerifier = 1;
}

// `elem` says how an arithmetic instruction reads its words: f32, or i32 (integers and
// booleans, two's complement). Comparisons and logic write i32 1 or 0 whatever it is.
defvar Wskernel_ElemTypeArg = (ins DefaultValuedAttr<StrAttr, "\"f32\"">:$elem);

def Wskernel_VectorOp : Wskernel_InstrOp<"vector",
    (ins StrAttr:$kind, Wskernel_AffAttr:$dst, Wskernel_AffAttr:$lhs, Wskernel_AffAttr:$rhs,
         Wskernel_AffAttr:$n),
    "$kind $dst `=` $lhs `,` $rhs `n` $n", Wskernel_ElemTypeArg> {
  let summary = "Elementwise arithmetic, comparison or logic of two SRAM vectors";
  let description = [{
    Kinds: add, sub, mul, div, max, min, pow, mod (the divisor's sign);
    eq, lt, le, gt, ge (1 or 0); and, or, xor (of nonzero i32 words, 1 or 0);
    bit_and, bit_or, bit_xor (of the i32 words' bits). The logic and bit
    kinds take no `elem`.

    ```mlir
    wskernel.vector "add" <base = 0> = <base = 0>, <base = 64> n <base = 16>
    wskernel.vector "lt" <base = 0> = <base = 0>, <base = 64> n <base = 16> {elem = "i32"}
    ```
  }];
  let hasVerifier = 1;
}

def Wskernel_ScalarOp : Wskernel_InstrOp<"scalar",
    (ins StrAttr:$kind, Wskernel_AffAttr:$dst, Wskernel_AffAttr:$lhs, Wskernel_AffAttr:$scalar,
         Wskernel_AffAttr:$n),
    "$kind $dst `=` $lhs `,` `scalar` $scalar `n` $n", Wskernel_ElemTypeArg> {
  let summary = "Add, sub, mul or div of an SRAM vector by one SRAM word, or random numbers";
  let description = [{
    `add`, `sub`, `mul` and `div` combine each word of `lhs` with the word
    at `scalar`. `random` writes a uniform float in (0, 1) for each word of
    `lhs`, a hash of its bits and of the key word at `scalar` (the ISA's
    RANDOM): the same word and key always draw the same number. It is f32
    only.

    ```mlir
    wskernel.scalar "sub" <base = 0> = <base = 0>, scalar <base = 128> n <base = 32>
    wskernel.scalar "random" <base = 0> = <base = 256>, scalar <base = 128> n <base = 32>
    ```
  }];
  let hasVerifier = 1;
}

def Wskernel_ImmOp : Wskernel_InstrOp<"imm",
    (ins StrAttr:$kind, Wskernel_AffAttr:$dst, Wskernel_AffAttr:$src, F32Attr:$value,
         Wskernel_AffAttr:$n),
    "$kind $dst `=` $src `,` $value `n` $n", Wskernel_ElemTypeArg> {
  let summary = "Add or mul by an immediate, or fill with it";
  let description = [{
    `add` and `mul` combine `src` with `value`; `fill` writes `value` (src
    unused). With `elem = "i32"` the value is rounded to an integer.

    ```mlir
    wskernel.imm "mul" <base = 0> = <base = 0>, 2.500000e-01 n <base = 8>
    ```
  }];
  let hasVerifier = 1;
}

def Wskernel_UnaryOp : Wskernel_InstrOp<"unary",
    (ins StrAttr:$kind, Wskernel_AffAttr:$dst, Wskernel_AffAttr:$src, Wskernel_AffAttr:$n),
    "$kind $dst `=` $src `n` $n", Wskernel_ElemTypeArg> {
  let summary = "An elementwise function of an SRAM vector";
  let description = [{
    Kinds: exp, erf, tanh, sqrt, rsqrt, neg, gelu (exact), gelu_tanh (the
    tanh approximation), copy, log, abs, sin, cos, sigmoid, reciprocal, relu,
    floor, ceil; not (1 where the word is 0); bit_not (every bit flipped);
    to_int (f32 to i32, toward zero) and to_float (i32 to f32). neg, abs and
    relu also take `elem = "i32"`.

    ```mlir
    wskernel.unary "gelu" <base = 0> = <base = 0> n <base = 64>
    ```
  }];
  let hasVerifier = 1;
}

def Wskernel_ReduceOp : Wskernel_InstrOp<"reduce",
    (ins StrAttr:$kind, Wskernel_AffAttr:$dst, Wskernel_AffAttr:$src, Wskernel_AffAttr:$n),
    "$kind $dst `=` $src `n` $n", Wskernel_ElemTypeArg> {
  let summary = "Sum, max or min of an SRAM vector into one word";
  let description = "```mlir\nwskernel.reduce \"sum\" <base = 128> = <base = 0> n <base = 32>\n```";
  let hasVerifier = 1;
}

def Wskernel_SelectOp : Wskernel_InstrOp<"select",
    (ins Wskernel_AffAttr:$dst, Wskernel_AffAttr:$cond, Wskernel_AffAttr:$lhs,
         Wskernel_AffAttr:$rhs, Wskernel_AffAttr:$n),
    "$dst `=` $cond `?` $lhs `:` $rhs `n` $n"> {
  let summary = "Choose words of two SRAM vectors by a vector of conditions";
  let description = [{
    `dst[i] = cond[i] != 0 ? lhs[i] : rhs[i]`, cond being i32 words.

    ```mlir
    wskernel.select <base = 0> = <base = 64> ? <base = 128> : <base = 192> n <base = 16>
    ```
  }];
}

def Wskernel_IndexCopyOp : Wskernel_InstrOp<"index_copy",
    (ins Wskernel_AffAttr:$dst, Wskernel_AffAttr:$src, Wskernel_AffAttr:$table,
         Wskernel_AffAttr:$n, Wskernel_AffAttr:$m),
    "$dst `=` $src `[` $table `]` `n` $n `of` $m"> {
  let summary = "Copy words picked by an index table: the general data movement";
  let description = [{
    `dst[i] = src[table[i]]` for i < n, each index an i32 word: 0 to m - 1
    picks a word of the m-word source, -1 writes 0, anything else faults.
    Transposes, broadcasts, slices, concatenations, tiles, triangles and
    gathers are all this op with another table (written by the compiler, or
    computed in SRAM for a gather by data).

    ```mlir
    wskernel.index_copy <base = 0> = <base = 64>[<base = 128>] n <base = 12> of <base = 12>
    ```
  }];
}

def Wskernel_GatherOp : Wskernel_InstrOp<"gather",
    (ins Wskernel_AffAttr:$dst, Wskernel_AffAttr:$table, Wskernel_AffAttr:$index,
         Wskernel_AffAttr:$rows, Wskernel_AffAttr:$cols, Wskernel_AffAttr:$row_lo,
         DefaultValuedAttr<StrAttr, "\"f32\"">:$storage),
    "$dst `=` $table `[` $index `]` `rows` $rows `cols` $cols `from` $row_lo"> {
  let summary = "Copy the table row named by an int32 word, if this PE holds it";
  let description = [{
    With `i` the int32 word at `index`, `dst[0..cols)` becomes row
    `i - row_lo` of the `rows` x `cols` table when `row_lo <= i < row_lo +
    rows`, and zeros otherwise (an embedding lookup split over PEs). A
    table of `storage` f16 or bf16 is widened to f32 words.

    ```mlir
    wskernel.gather <base = 0> = <base = 64>[<base = 8, loop = [4]>] rows <base = 16> cols <base = 32> from <base = 0, py = 16>
    ```
  }];
  let hasVerifier = 1;
}

#endif // WSKERNEL_TD
