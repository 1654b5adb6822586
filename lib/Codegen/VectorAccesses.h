//===- VectorAccesses.h - 16-byte accesses of 4 consecutive elements ------===//
//
// A loop whose iteration handles one element of a 32-bit buffer can handle
// 4 consecutive ones instead, reading and writing them with one 16-byte
// vector access where the buffer is aligned for it: the row loops of
// ridge-map-row-loops-to-warps (a lane's 4 elements per step of 128) and
// the innermost dimension of pointwise kernels
// (ridge-vectorize-pointwise-loops). The rest of the body is repeated for
// each of the 4 elements; PTX has no vector arithmetic to gain from more.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_CODEGEN_VECTORACCESSES_H
#define RIDGELINE_LIB_CODEGEN_VECTORACCESSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ridge {

/// Elements of a 16-byte access of 32-bit data.
inline constexpr int64_t kVectorWidth = 4;

/// The top-level `scf.parallel` loops of `func` that no mapping pass has
/// mapped yet (a row kernel's loop, mapped to warps, keeps its mapping).
SmallVector<scf::ParallelOp> getUnmappedRootLoops(func::FuncOp func);

/// Folds the views of one element inside `region` (a tiled body's
/// one-element subviews) into their loads and stores, so that their
/// indices are the enclosing loop's.
LogicalResult foldElementViews(Region &region);

/// Whether `memref` (of 32-bit or 16-bit elements) starts on a boundary of
/// 4 elements (16 or 8 bytes) and every row it holds does too: a device
/// buffer (256-byte aligned), an alloca aligned to 16, or a view of one
/// whose offsets and strides keep multiples of 4 elements.
bool isVectorAligned(Value memref);

/// The loads and stores of `body` that become 4-wide vector accesses along
/// `iv` (one of its arguments): their last index is `iv`, their buffer is
/// vector-aligned, their other indices do not depend on `iv` (defined above
/// the body, or other arguments of it), and the body does not both read and
/// write the buffer. Without `nestedIndices` only the body's own accesses
/// qualify (not those in a conditional of it, which may not be made).
/// With `nestedIndices`, an index computed in the body (in a nested loop:
/// a convolution's window position) qualifies too when it does not depend on
/// `iv`; the vector access is then made where the scalar one is
/// (unrollAndJamWithVectorAccesses).
void findVectorAccesses(Block *body, Value iv,
                        SmallVectorImpl<Operation *> &accesses,
                        bool nestedIndices = false);

/// Whether the 4 elements of `body` can run jammed
/// (unrollAndJamWithVectorAccesses): its only regions are scf.for loops
/// without results whose bounds do not depend on `iv`, and every buffer it
/// writes is an alloca it defines (each element gets its own) or written
/// by one of `accesses`, so that the elements share no written memory.
bool canJamElements(Block *body, Value iv, ArrayRef<Operation *> accesses);

/// Rewrites `body` so that one iteration handles elements iv .. iv + 3, iv
/// its argument `ivIndex` (the caller makes the loop step by 4): vector
/// loads and stores for `accesses` (from findVectorAccesses), a load that
/// does not depend on iv of a buffer the body does not write issued once,
/// the rest of the body repeated for each of the four elements. The body's
/// terminator must have no operands.
void unrollWithVectorAccesses(RewriterBase &rewriter, Block *body,
                              unsigned ivIndex, ArrayRef<Operation *> accesses);

/// unrollWithVectorAccesses for a body with nested loops (a SIMT
/// contraction's reduction over k, a pooling's window): each op is repeated
/// for the 4 elements where it stands, and a nested loop runs once with its
/// body repeated the same way, so that the 4 elements' loads of one
/// iteration become one vector load there. Each element computes what it
/// computed alone, in the same order (canJamElements must hold).
void unrollAndJamWithVectorAccesses(RewriterBase &rewriter, Block *body,
                                    unsigned ivIndex,
                                    ArrayRef<Operation *> accesses);

} // namespace mlir::ridge

#endif // RIDGELINE_LIB_CODEGEN_VECTORACCESSES_H
