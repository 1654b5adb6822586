//===- ConstantWeights.h - Weights rearranged at compile time ---*- C++ -*-===//
//
// Graph passes that choose a layout for a product store its constant weight
// in that layout, as a new resource, instead of transposing it at run time:
// ridge-assign-channels-last's [M, window..., C] and [C x kh x kw, M]
// convolution weights, ridge-transpose-weight-products' transposed MatMul
// weights.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_DIALECT_RIDGE_TRANSFORMS_CONSTANTWEIGHTS_H
#define RIDGELINE_LIB_DIALECT_RIDGE_TRANSFORMS_CONSTANTWEIGHTS_H

#include "mlir/IR/Builders.h"

namespace mlir::ridge {

/// `shape` transposed by `perm` (result dim i is input dim perm[i]).
SmallVector<int64_t> getPermutedShape(ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> perm);

/// The weights of a constant `weight` permuted by `perm`, their last
/// dimension padded with zeros to `lastDimSize` when that is larger, as a
/// new resource (`<name><layoutSuffix>`, `<name>.hwc<lastDimSize>` padded)
/// of the permuted shape or, given, of `viewShape` (the same elements in
/// the same order); null when its f32 elements are not at hand.
Value permuteConstantWeight(OpBuilder &b, Location loc, Value weight,
                            ArrayRef<int64_t> perm, int64_t lastDimSize,
                            StringRef layoutSuffix = ".hwc",
                            ArrayRef<int64_t> viewShape = {});

} // namespace mlir::ridge

#endif // RIDGELINE_LIB_DIALECT_RIDGE_TRANSFORMS_CONSTANTWEIGHTS_H
