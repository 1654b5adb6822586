//===- RidgeRecurrentOps.td - ridge Recurrent ops -----------------*- tablegen -*-===//
//
// recurrent networks (RNN, LSTM, GRU).
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_RECURRENT_OPS
#define RIDGE_RECURRENT_OPS

def Ridge_RecurrentOp : Ridge_Op<"recurrent", [InferTypeOpAdaptor,
    AttrSizedOperandSegments,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface,
                              ["getFlops", "isContraction"]>]> {
  let summary = "ONNX RNN, LSTM or GRU layer over a whole sequence";
  let description = [{
    One op for the three ONNX recurrent layers; `cell` is "rnn", "lstm" or
    "gru" and keeps the layer recognizable for later passes. Shapes use the
    ONNX time-major layout (the importer transposes `layout` = 1 models):
    `x` [S, B, I], `w` [D, G * H, I], `r` [D, G * H, H], optional `b`
    [D, 2 * G * H] (input biases, then recurrence biases), `sequence_lens`
    [B] (integer), `initial_h` and (lstm) `initial_c` [D, B, H], and (lstm)
    peepholes `p` [D, 3 * H]. G is 1 (rnn), 4 (lstm, gates i o f c) or 3
    (gru, gates z r h); D is 2 for "bidirectional", else 1; H is
    `hidden_size`.

    `activations` holds the lower-case activation names of every direction
    (1, 3 or 2 per direction for rnn, lstm, gru: f, g, h), with one
    `activation_alpha` / `activation_beta` entry each (the importer resolves
    the ONNX defaults). `clip` bounds every gate pre-activation;
    `input_forget` couples the LSTM forget gate to 1 - input gate;
    `linear_before_reset` applies the GRU reset gate after the recurrence
    matmul.

    Results: `y` [S, D, B, H], `y_h` [D, B, H] and, for lstm, `y_c`
    [D, B, H]. Steps at or beyond a batch entry's sequence length keep its
    state and write zeros to `y`. f16 computes in f32.
    FLOPs: per step and direction 2 * B * G * H * (I + H) for the matmuls
    plus about 4 * B * G * H for the gate math.
  }];
  let arguments = (ins Ridge_FloatTensor:$x, Ridge_FloatTensor:$w,
                       Ridge_FloatTensor:$r, Optional<Ridge_FloatTensor>:$b,
                       Optional<Ridge_Tensor>:$sequence_lens,
                       Optional<Ridge_FloatTensor>:$initial_h,
                       Optional<Ridge_FloatTensor>:$initial_c,
                       Optional<Ridge_FloatTensor>:$p,
                       StrAttr:$cell, StrAttr:$direction, I64Attr:$hidden_size,
                       StrArrayAttr:$activations,
                       DenseF32ArrayAttr:$activation_alpha,
                       DenseF32ArrayAttr:$activation_beta,
                       OptionalAttr<F32Attr>:$clip,
                       DefaultValuedAttr<BoolAttr, "false">:$input_forget,
                       DefaultValuedAttr<BoolAttr, "false">:$linear_before_reset);
  let results = (outs Ridge_FloatTensor:$y, Ridge_FloatTensor:$y_h,
                      Optional<Ridge_FloatTensor>:$y_c);
  let assemblyFormat = [{
    $x `,` $w `,` $r (`bias` `(` $b^ `)`)?
    (`sequence_lens` `(` $sequence_lens^ `)`)?
    (`initial_h` `(` $initial_h^ `)`)? (`initial_c` `(` $initial_c^ `)`)?
    (`peepholes` `(` $p^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Gates per direction: 1 (rnn), 4 (lstm) or 3 (gru).
    int64_t getNumGates();
    /// 2 for a bidirectional layer, else 1.
    int64_t getNumDirections() {
      return getDirection() == "bidirectional" ? 2 : 1;
    }
  }];
}

#endif // RIDGE_RECURRENT_OPS
