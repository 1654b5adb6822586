//===- RidgeReductionOps.td - ridge Reduction ops -----------------*- tablegen -*-===//
//
// reductions and normalizations (reduce, arg-reduce, layer norm, ...).
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_REDUCTION_OPS
#define RIDGE_REDUCTION_OPS

#endif // RIDGE_REDUCTION_OPS
