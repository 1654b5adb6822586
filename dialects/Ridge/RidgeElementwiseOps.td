//===- RidgeElementwiseOps.td - ridge Elementwise ops -----------------*- tablegen -*-===//
//
// elementwise math, comparison and logic ops beyond the arithmetic core.
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_ELEMENTWISE_OPS
#define RIDGE_ELEMENTWISE_OPS

#endif // RIDGE_ELEMENTWISE_OPS
