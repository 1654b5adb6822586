//===- RidgeNNOps.td - ridge NN ops -----------------*- tablegen -*-===//
//
// spatial neural-network ops (convolution, pooling, resize, ...).
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_NN_OPS
#define RIDGE_NN_OPS

#endif // RIDGE_NN_OPS
