//===- RidgeRecurrentOps.td - ridge Recurrent ops -----------------*- tablegen -*-===//
//
// recurrent networks (RNN, LSTM, GRU).
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_RECURRENT_OPS
#define RIDGE_RECURRENT_OPS

#endif // RIDGE_RECURRENT_OPS
