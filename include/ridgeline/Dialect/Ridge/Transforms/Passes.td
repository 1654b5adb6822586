//===- Passes.td - Graph-level ridge dialect passes --------*- tablegen -*-===//
//
// Passes are grouped by the IR level they run on; within a group the defs
// are in alphabetical order.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_DIALECT_RIDGE_TRANSFORMS_PASSES
#define RIDGELINE_DIALECT_RIDGE_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Module attributes: target and model ABI (graph level)
//===----------------------------------------------------------------------===//

def AttachModelAbiPass : Pass<"ridge-attach-model-abi", "::mlir::ModuleOp"> {
  let summary = "Record the model's C interface while ONNX names are known";
  let description = [{
    Describes the inputs and outputs of the graph function `@main` for the
    runtime and stores the description as the module's `ridge.model_abi`
    attribute: a dictionary with the `target` and two arrays, `inputs` and
    `outputs`, of `{name, dtype, shape}` dictionaries. `name` is the ONNX
    name verbatim (from `ridge.onnx_name`, else `input<K>`/`output<K>`),
    `dtype` the `ridge_dtype` value of `include/ridgeline/Runtime/ModelAbi.h`
    (signedness comes from the graph's `ui`/`si` types, which the lowering
    erases) and `shape` the static dims. Fails on a tensor that is not
    statically shaped or whose element type has no `ridge_dtype`.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Target the model is compiled for: cpu or sm_XX">,
  ];
}

def AttachTargetPass : Pass<"ridge-attach-target", "::mlir::ModuleOp"> {
  let summary = "Store the compilation's target as the module's ridge.target";
  let description = [{
    Resolves the target once, from a chip (`cpu`, `sm_80`, `sm_90a`, ...),
    a GPU (a built-in name or a spec file; by default the GPU the chip
    stands for: the A100 for sm_8x, the H100 for sm_90a) and the number
    format of contractions, and stores it as one `ridge.target` dictionary:
    chip, GPU name, SM count, shared memory and registers per SM, L2 size,
    bandwidth and peak rates. Passes that decide by target (fusion groups,
    kernel configurations, the roofline annotation) read that attribute.

    With no option given, a module that already has a `ridge.target` keeps
    it and one without gets the default target. A chip that differs from
    the GPU's own architecture is legal (sm_80 code runs on an H100) and
    gets a warning.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "Code-generation target: cpu, sm_80, sm_86, sm_89, sm_90, sm_90a, "
           "sm_100, sm_100a (default sm_90a)">,
    Option<"gpu", "gpu", "std::string", /*default=*/"\"\"",
           "Built-in GPU (default: the chip's)">,
    Option<"gpuSpec", "gpu-spec", "std::string", /*default=*/"\"\"",
           "JSON file describing the GPU (overrides `gpu`)">,
    Option<"precision", "precision", "std::string", /*default=*/"\"\"",
           "Number format of contractions: fp32, tf32, fp16, bf16 (default), "
           "fp8">,
  ];
}

//===----------------------------------------------------------------------===//
// Number formats (graph level)
//===----------------------------------------------------------------------===//

def SelectPrecisionPass : Pass<"ridge-select-precision",
                               "::mlir::func::FuncOp"> {
  let summary = "Decide the number format of each contraction";
  let description = [{
    Asks the precision policy (PrecisionPolicy.h, docs/precision.md) for
    every `ridge.matmul`, `ridge.gemm` and `ridge.conv` of the function and
    records a reduced format as the op's `ridge.precision` attribute
    (`"bf16"`, `"fp16"`, ...; absent means the operands are multiplied in
    their own type). The policy rounds f32 operands to the `numerics` of
    the module's `ridge.target` only where the contraction is compute-bound
    on the GPU's fp32 roofline and M, N, K are at least 16; the
    graph-to-linalg lowering rounds them inside the contraction's body.

    ```mlir
    %0 = ridge.matmul %a, %b {ridge.precision = "bf16"}
        : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    ```
  }];
  let options = [
    Option<"gpu", "gpu", "std::string", /*default=*/"\"\"",
           "Override of ridge.target's GPU (lit tests)">,
    Option<"gpuSpec", "gpu-spec", "std::string", /*default=*/"\"\"",
           "Override of ridge.target's GPU by a JSON spec file">,
    Option<"precision", "precision", "std::string", /*default=*/"\"\"",
           "Override of ridge.target's precision and numerics">,
  ];
  let statistics = [
    Statistic<"numRounded", "num-rounded",
              "Contractions rounded to the requested format">,
    Statistic<"numFp32Requested", "num-fp32-requested",
              "Contractions kept in fp32 because fp32 was requested">,
    Statistic<"numNotF32", "num-not-f32",
              "Contractions whose operands keep their own non-f32 type">,
    Statistic<"numUnknownShape", "num-unknown-shape",
              "Contractions kept in fp32 for a dynamic shape">,
    Statistic<"numTooSmall", "num-too-small",
              "Contractions kept in fp32 for M, N or K below 16">,
    Statistic<"numMemoryBound", "num-memory-bound",
              "Contractions kept in fp32, memory-bound on the fp32 roofline">,
    Statistic<"numNarrowedWeights", "num-narrowed-weights",
              "Memory-bound contractions rounded: their f32 weights, stored "
              "in the narrow format, move fewer bytes">,
    Statistic<"numFusedWithRounded", "num-fused-with-rounded",
              "Memory-bound contractions rounded with a rounded contraction "
              "of their fusion group">,
    Statistic<"numNoAttentionFormat", "num-no-attention-format",
              "Attentions kept in fp32: their kernels do not multiply in the "
              "requested format">,
    Statistic<"numFp8Fallback", "num-fp8-fallback",
              "Convolutions and attentions asked for fp8 rounded to bf16: "
              "per-tensor scales are built for MatMul and Gemm only">,
  ];
  let dependentDialects = ["::mlir::ridge::RidgeDialect"];
}

def NarrowKernelBoundariesPass
    : Pass<"ridge-narrow-kernel-boundaries", "::mlir::func::FuncOp"> {
  let summary = "Store kernel results that only rounded contractions read "
                "in their multiply format";
  let description = [{
    Mechanism of getKernelBoundaryType (PrecisionPolicy.h): a
    `ridge.fusion_group` result that only rounded contractions of other
    kernels multiply (a LayerNorm's output before a bf16 projection, a
    GELU epilogue's before the next MatMul) is rounded by its producer, a
    `ridge.cast` to bf16/f16 before the group's `ridge.yield`, and widened
    by each reader, a `ridge.cast` back to f32 inside the reader's group,
    which the lowering folds into the contraction's own rounding: the
    reader's operand is then stored as it is multiplied (16-byte copies,
    no conversion), and the products are those of the f32 tensor rounded
    in the reader. Readers include an attention's Q, K and V (through the
    head split's layout changes), and a reshape between kernels is
    retyped to the narrow type, its readers widening what it views; an
    attention's own output is rounded by its kernel's last store. A
    result that some readers need in f32 (a residual add, a graph output)
    while other kernels only round it to multiply it gets a narrow copy
    (getKernelBoundaryCopyType): its group yields the rounded value as an
    extra result, after its own, and those readers widen the copy. Both
    casts carry `ridge.boundary_cast`. Runs after
    ridge-select-precision has given the kernels their formats, before
    the groups are outlined.
  }];
  let statistics = [
    Statistic<"numNarrowedResults", "num-narrowed-results",
              "Kernel results stored in their readers' multiply format">,
    Statistic<"numCopiedResults", "num-copied-results",
              "Kernel results stored f32 with a narrow copy beside them">,
  ];
  let dependentDialects = ["::mlir::ridge::RidgeDialect"];
}

def MatchAttentionPass : Pass<"ridge-match-attention", "::mlir::func::FuncOp"> {
  let summary = "Rewrite exported attention chains into ridge.attention";
  let description = [{
    Finds MatMul -> scale -> mask/bias -> Softmax -> MatMul chains as
    exporters write attention (GPT-2's Where with a finfo.min fill, BERT's
    additive padding mask, ViT without a mask, LLaMA's causal mask with
    repeated key/value heads, T5's position bias without a scale, a softmax
    wrapped in casts, the scale split over Q and K) and rewrites each into
    one `ridge.attention`: a constant causal triangle becomes `is_causal`,
    K/V heads repeated per query head become the op's groups, heads folded
    into the batch (3-D) become [1, N, S, D]. Runs before the roofline
    analysis and the fusion plan, which then see one attention op. A chain
    that ends in a softmax feeding a MatMul but does not match is left as it
    is; with `remarks`, a remark at its MatMul says why.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at each softmax-MatMul chain left alone">,
  ];
  let statistics = [
    Statistic<"numMatched", "num-matched", "Attention chains rewritten">,
    Statistic<"numLeftAlone", "num-left-alone",
              "Softmax-MatMul chains left as exported">,
  ];
  let dependentDialects = ["::mlir::ridge::RidgeDialect"];
}

def MatchRotaryEmbeddingPass : Pass<"ridge-match-rotary-embedding",
                                    "::mlir::func::FuncOp"> {
  let summary = "Rewrite exported rotary embeddings into "
                "ridge.rotary_embedding";
  let description = [{
    Finds `x * cos + rotate_half(x) * sin` with rotate_half(x) =
    `concat(-x[.., D/2:], x[.., :D/2])` along the last axis (Hugging Face's
    `apply_rotary_pos_emb`, as LLaMA exports it) and rewrites it into one
    `ridge.rotary_embedding` (ONNX RotaryEmbedding-23, non-interleaved,
    rotary_embedding_dim = D) whose [B, S, D/2] caches are the tables' first
    halves, made at compile time as resources. The tables must be f32
    constants, the same for every head, whose second half repeats the
    first (cat(freqs, freqs)); otherwise the chain is left alone, and with
    `remarks` a remark at its Add says why. The result is bit for bit the
    chain's. Runs before the attention matching.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at each rotary chain left alone">,
  ];
  let statistics = [
    Statistic<"numMatched", "num-matched", "Rotary chains rewritten">,
    Statistic<"numLeftAlone", "num-left-alone",
              "Rotary-like chains left as exported">,
  ];
  let dependentDialects = ["::mlir::ridge::RidgeDialect"];
}

def MatchGeluPass : Pass<"ridge-match-gelu", "::mlir::func::FuncOp"> {
  let summary = "Rewrite exported GELU formulas into ridge.gelu";
  let description = [{
    Finds GELU as exporters write it, one op a term: the tanh form
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))` (GPT-2's
    NewGELU; x^3 as multiplies or Pow) and the erf form
    `x * 0.5 * (1 + erf(x / sqrt(2)))` (torch.nn.GELU), in any association
    and order of the products, and rewrites each into one `ridge.gelu`
    (approximate "tanh" or "none"). The constants must be scalars equal to
    the formula's within f32 rounding and no intermediate result may be
    read elsewhere; otherwise the chain is left alone, and with `remarks` a
    remark at its last multiply says why.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at each GELU-like chain left alone">,
  ];
  let statistics = [
    Statistic<"numMatched", "num-matched", "GELU chains rewritten">,
    Statistic<"numLeftAlone", "num-left-alone",
              "GELU-like chains left as exported">,
  ];
  let dependentDialects = ["::mlir::ridge::RidgeDialect"];
}

def FoldChannelScalesPass : Pass<"ridge-fold-channel-scales",
                                 "::mlir::func::FuncOp"> {
  let summary = "Fold a convolution input's channel scale (squeeze-and-"
                "excitation) into its weights";
  let description = [{
    Rewrites `conv(mul(x, s), w)`, s a [1, C, 1, ...] channel scale of the
    convolution's input (a squeeze-and-excitation block's sigmoid gate, a
    batch of one), into `conv(x, mul(w, s))`: the scale is applied in a pass
    over the weights instead of a pass over the activation (convolution is
    linear in each input channel, and zero padding stays zero). The control
    function folds when the weights are fewer than the activation's
    elements; a grouped convolution, a scaled activation with other uses, or
    per-image scales are left alone (with `remarks`, a remark at the Mul
    says why).
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at each channel scale of a convolution left "
           "alone">,
  ];
  let statistics = [
    Statistic<"numFolded", "num-folded",
              "Channel scales folded into convolution weights">,
  ];
  let dependentDialects = ["::mlir::ridge::RidgeDialect"];
}

def TransposeWeightProductsPass : Pass<"ridge-transpose-weight-products",
                                       "::mlir::func::FuncOp"> {
  let summary = "Compute a MatMul by a constant weight transposed where its "
                "result is read transposed";
  let description = [{
    Rewrites `transpose(matmul(X, W) [+ b], perm)`, `perm` swapping the last
    two dimensions, W a 2-D f32 constant and b a bias along the product's
    columns, into `matmul(W^T, transpose(X, perm)) [+ b as a column]`: the
    transposed weight is made at compile time (a new resource,
    `<weight>.t`), the transpose moves to the activation (under its
    exported node's name), and the result is produced in the layout its
    readers read. MLP-Mixer's token-mixing MLP is the case: its second
    product, transposed back before the residual add, otherwise stores
    each output element with a 4-byte store of its own and stages a weight
    of 196 columns element by element. Exact: each output is the same sum
    of the same products. A product or biased product read elsewhere too
    is left alone (with `remarks`, a remark at the transpose says why).
    Runs after the composite matching (an attention's K^T is the
    attention's), before ridge-select-precision.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at each transposed product left as exported">,
  ];
  let statistics = [
    Statistic<"numTransposed", "num-transposed",
              "Products computed transposed">,
    Statistic<"numLeftAlone", "num-left-alone",
              "Transposed products left as exported">,
  ];
  let dependentDialects = ["::mlir::ridge::RidgeDialect"];
}

def AssignChannelsLastPass : Pass<"ridge-assign-channels-last",
                                  "::mlir::func::FuncOp"> {
  let summary = "Compute tensor-core convolutions channels-last";
  let description = [{
    Rewrites each convolution the layout policy (LayoutPolicy.h) picks into
    ConvOp's `channels_last` form: the input transposed to [N, spatial...,
    C], the weights permuted to [M, window..., C] at compile time (a new
    resource, `<weight>.hwc`), the result transposed back. Where the policy
    pads the input channels to a whole 16-byte piece (an RGB stem's 3 to
    8), a `ridge.pad` adds the zero channels before the transpose (whose
    kernel then writes the padded input channels-last; a channels-last
    input is padded after the transpose instead, which cancels) and the
    weights are padded with zeros (`<weight>.hwc8`). A patchify
    convolution the policy does not pad (kernel = stride, no padding: a
    ViT's patch embedding) becomes a `ridge.matmul` of its patches (a
    transpose of the input between reshapes) by its weights permuted to
    [C x kh x kw, M] at compile time (`<weight>.kn`), its result transposed
    back. Then it moves
    those transposes forward through the elementwise ops that follow
    (ReLU, a residual add whose other operand is channels-last too, or
    read channels-last elsewhere) and cancels the pairs that meet, so that
    a chain of convolutions keeps its activations channels-last between
    kernels and transposes only where it meets an op that reads channels
    second. A convolution the policy keeps off tensor cores is then
    rewritten too when its input has become channels-last. Runs after
    ridge-select-precision (the policy reads
    `ridge.precision`, and the chip of the module's `ridge.target`) and
    before the fusion plan. With `remarks`, a remark
    at each convolution left channels-second says why.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at each convolution left channels-second">,
  ];
  let statistics = [
    Statistic<"numChannelsLast", "num-channels-last",
              "Convolutions rewritten channels-last">,
    Statistic<"numCancelled", "num-cancelled-transposes",
              "Transpose pairs cancelled">,
    Statistic<"numSunk", "num-sunk-transposes",
              "Transposes moved past an elementwise op, a pooling or a pad">,
    Statistic<"numPadded", "num-padded-convolutions",
              "Convolutions whose input channels were padded with zeros">,
    Statistic<"numPatchMatmuls", "num-patch-matmuls",
              "Patchify convolutions rewritten as GEMMs over their patches">,
  ];
  let dependentDialects = ["::mlir::ridge::RidgeDialect"];
}

//===----------------------------------------------------------------------===//
// Fusion groups (graph level)
//===----------------------------------------------------------------------===//

def FormFusionGroupsPass : Pass<"ridge-form-fusion-groups",
                                "::mlir::func::FuncOp"> {
  let summary = "Group graph ops into kernels as the fusion plan decides";
  let description = [{
    Plans fusion groups over the function's graph ops (FusionPlan.h): the
    planner offers each producer->consumer edge whose merge the code generator
    can emit as one kernel, and a control function decides. `policy` picks
    it: `roofline` (default) keeps the merges that save more traffic than
    they recompute and still fit the module's `ridge.target` GPU;
    `all-legal` takes every legal merge (tests of the planner's legality
    apart from the roofline); `never` leaves every op a kernel of its own
    (`--fusion=false`). Each group that moves data becomes a
    `ridge.fusion_group`; views left on their own stay outside. With
    `remarks`, every edge left between two kernels gets a remark saying why;
    with `record-unfused`, the consumer op records it as
    `ridge.unfused`, a list of (operand, reason) dictionaries, for the
    roofline report.
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"roofline\"",
           "Control function: roofline, all-legal or never">,
    Option<"maxKernelOperands", "max-kernel-operands", "int64_t",
           /*default=*/"24",
           "Most distinct tensors one kernel reads or writes (roofline)">,
    Option<"maxKernelOps", "max-kernel-ops", "int64_t", /*default=*/"64",
           "Most graph ops in one kernel (roofline)">,
    Option<"gpu", "gpu", "std::string", /*default=*/"\"\"",
           "Override of ridge.target's GPU (lit tests)">,
    Option<"gpuSpec", "gpu-spec", "std::string", /*default=*/"\"\"",
           "Override of ridge.target's GPU by a JSON spec file">,
    Option<"precision", "precision", "std::string", /*default=*/"\"\"",
           "Override of ridge.target's precision">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at each unfused edge with the reason">,
    Option<"recordUnfused", "record-unfused", "bool", /*default=*/"false",
           "Record each unfused edge's reason on its consumer op">,
  ];
  let statistics = [
    Statistic<"numKernels", "num-kernels", "Fusion groups formed (kernels)">,
    Statistic<"numUnfusedEdges", "num-unfused-edges",
              "Producer-consumer edges left between two kernels">,
  ];
  let dependentDialects = ["::mlir::ridge::RidgeDialect"];
}

def OutlineFusionGroupsPass : Pass<"ridge-outline-fusion-groups",
                                   "::mlir::ModuleOp"> {
  let summary = "Turn each fusion group into a kernel function";
  let description = [{
    Every `ridge.fusion_group` becomes a private `func.func` named after the
    group, marked `ridge.kernel = "<kind>"`, and a `func.call` in its place.
    The kernel's arguments are the values the group reads from outside;
    constants it reads are cloned into it, so that a kernel is self-contained
    and its lowering can fuse everything in its body without crossing into a
    neighbour.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

#endif // RIDGELINE_DIALECT_RIDGE_TRANSFORMS_PASSES
