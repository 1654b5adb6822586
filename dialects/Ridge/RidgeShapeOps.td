//===- RidgeShapeOps.td - ridge Shape ops -----------------*- tablegen -*-===//
//
// shape computation and data movement (concat, slice, gather, pad, ...).
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_SHAPE_OPS
#define RIDGE_SHAPE_OPS

#endif // RIDGE_SHAPE_OPS
