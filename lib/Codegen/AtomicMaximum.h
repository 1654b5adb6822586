//===- AtomicMaximum.h - Maxima folded in by atomics -----------*- C++ -*-===//
//
// An fp8 activation's amax (docs/precision.md) is folded into a 0-d f32
// buffer by the threads that computed pieces of it, with one atomic each:
// the bits of a non-negative float order as u32 do (NaN above infinity), so
// `atom.global.max.u32` of the bits is the maximum, NaN propagating as in
// arith.maximumf, whatever order the atomics land in.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_CODEGEN_ATOMICMAXIMUM_H
#define RIDGELINE_LIB_CODEGEN_ATOMICMAXIMUM_H

#include "mlir/IR/Builders.h"

namespace mlir::ridge {

/// One `atom.global.max.u32` of the bits of `nonNegative` (an f32 that is
/// not negative: a magnitude, or a maximum with 0) into the 0-d f32 buffer
/// `buffer` in global memory.
void createAtomicMaxOfBits(OpBuilder &b, Location loc, Value nonNegative,
                           Value buffer);

/// Folds `local`, a thread's maximum magnitude (not negative), into
/// `buffer`: a shuffle butterfly over the warp (every lane must take part),
/// then one atomic (createAtomicMaxOfBits) by the lane whose `lane` is 0.
void createWarpMaxIntoBuffer(OpBuilder &b, Location loc, Value local,
                             Value lane, Value buffer);

/// A one-thread launch that sets the 0-d f32 `buffer` to zero, before the
/// launches that fold maxima into it.
void createZeroingLaunch(OpBuilder &b, Location loc, Value buffer);

/// An `scf.if` on `condition` around stores that fold the magnitudes they
/// store into running maxima: `stores` is built in the then-block and
/// updates `maxima` (one per amax), which the if yields (unchanged from the
/// else-block). Without maxima the if has no results. Returns the maxima
/// after the if.
SmallVector<Value>
createGuardedStores(OpBuilder &b, Location loc, Value condition,
                    ArrayRef<Value> maxima,
                    function_ref<void(SmallVectorImpl<Value> &)> stores);

} // namespace mlir::ridge

#endif // RIDGELINE_LIB_CODEGEN_ATOMICMAXIMUM_H
