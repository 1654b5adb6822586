//===- SplitArrival.h - A split's last block finishes it --------*- C++ -*-===//
//
// A reduction split over blocks of one launch (split-K, a split GEMV,
// flash-decoding's key splits) is finished by the last of a region's blocks
// to arrive, not by a second launch: each block stores its partial results,
// then arrives at the region's counter, as CUTLASS's semaphore
// (cutlass/barrier.h) and the threadfence reduction of CUDA's samples do;
// the block that arrives last combines the partial results, in a fixed
// order, and sets the counter back to zero. The counters are zero before
// every launch and after it: they are allocated kept zero
// (kKeptZeroAttr), which a session zeroes once.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_CODEGEN_SPLITARRIVAL_H
#define RIDGELINE_LIB_CODEGEN_SPLITARRIVAL_H

#include "mlir/IR/Builders.h"

namespace mlir::ridge {

/// Host code before the launch: `count` i32 arrival counters, zeroed by a
/// memset after their allocation and marked kKeptZeroAttr.
Value createArrivalCounters(OpBuilder &b, Location loc, int64_t count);

/// The shared memory that holds thread 0's verdict for its block: one i32.
MemRefType getArrivalVerdictType(MLIRContext *context);

/// In the kernel, after every thread of the block (those `barrier` waits
/// for) stored its partial results: whether the block is the last of the
/// `arrivals` blocks to arrive at `counters[counter]` (true in all of the
/// block's threads or in none); if so the counter is zero again and the
/// other blocks' stores are visible to the block. `tid` is the thread's
/// index among those `barrier` waits for; `verdict` a
/// getArrivalVerdictType buffer.
Value createLastArrival(OpBuilder &b, Location loc, Value tid, Value counters,
                        Value counter, int64_t arrivals, Value verdict,
                        function_ref<void()> barrier);

} // namespace mlir::ridge

#endif // RIDGELINE_LIB_CODEGEN_SPLITARRIVAL_H
