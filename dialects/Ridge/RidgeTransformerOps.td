//===- RidgeTransformerOps.td - ridge Transformer ops -----------------*- tablegen -*-===//
//
// transformer building blocks (attention, RMS normalization, rotary embeddings, gated activations).
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_TRANSFORMER_OPS
#define RIDGE_TRANSFORMER_OPS

#endif // RIDGE_TRANSFORMER_OPS
