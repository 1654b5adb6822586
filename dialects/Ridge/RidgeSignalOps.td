//===- RidgeSignalOps.td - ridge Signal ops -----------------*- tablegen -*-===//
//
// signal processing and linear algebra (DFT, STFT, mel filters, determinants).
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_SIGNAL_OPS
#define RIDGE_SIGNAL_OPS

#endif // RIDGE_SIGNAL_OPS
