//===- MmaContraction.h - Contractions with a kernel of its own -*- C++ -*-===//
//
// The shape of a kernel that the tensor-core GEMM core (and the GEMV
// bandwidth path) implements: elementwise producers of its operands (a head
// split), one or two products (a zero fill and a contraction whose operands
// are rounded to, or stored in, a 16-bit float type, or rounded to tf32;
// f32 for the GEMV path), and at most one elementwise epilogue (of one
// result, or of several that the kernel returns side by side). The same
// matcher runs on tensors (ridge-select-kernel-config decides the kernel's
// config) and on buffers (ridge-lower-mma-contractions builds the kernel), so
// the policy never picks a path for a kernel the mechanism cannot build.
//
// The contraction's loops are (batch..., m..., n..., k...): the parallel
// loops before the first one only A reads, then those only A reads, then
// those A does not read, then the reductions. Several m, n or k loops are
// one GEMM dimension each, flattened row-major: a convolution (n, g, oc, oh,
// ow, ic, kh, kw) is the GEMM m = oc, n = oh * ow, k = ic * kh * kw over its
// weight and the gathered (im2col) input, an implicit GEMM.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_CODEGEN_MMACONTRACTION_H
#define RIDGELINE_CODEGEN_MMACONTRACTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ridge {

/// How one operand of an MMA contraction is read.
struct MmaOperand {
  /// The operand (a tensor or a buffer) the contraction reads through `map`,
  /// or null when the contraction's body computes the element (a fused
  /// producer: a padded or strided window of an input, read with
  /// tensor.extract / memref.load at the loop indices).
  Value value;
  /// Its map over the contraction's loops (when `value` is set).
  AffineMap map;
  /// The body value that is rounded to `mmaType` (when `value` is null).
  Value bodyValue;
  /// The element type read: the stored type, f32 or `mmaType`.
  Type elementType;
  /// The float type the tensor-core instruction multiplies (bf16, f16, tf32
  /// or f8E4M3FN): the operand's own type, or the type the contraction body
  /// rounds an f32 operand to (`extf(truncf(x))`; always so for tf32, which no
  /// tensor is stored as).
  FloatType mmaType;
  /// Whether the operand is staged with k along its shared-memory rows (A:
  /// m x k; B: "column-major", n x k); otherwise m (A) or n (B) is.
  bool kContiguous = true;
  /// Whether the operand is read element by element (a body-computed or
  /// strided operand, several k loops, or extents that are not whole 16-byte
  /// chunks), not with 16-byte loads. Gathered operands are staged through
  /// registers.
  bool gathered = false;
  /// (A, gathered) Whether each 16-byte chunk of k is consecutive elements
  /// of one buffer: the innermost k loop, whose extent is whole chunks,
  /// indexes the last dimension of the one buffer the element is read from
  /// and nothing else (a channels-last convolution's window: k = (kh, kw,
  /// c), a chunk 8 channels of one window position). The chunk is then one
  /// 16-byte load (two for f32), the window's padding tested once a chunk.
  bool chunkedGather = false;
  /// (chunkedGather, computed by the body) The one load of the body's
  /// computation of the element.
  Operation *chunkLoad = nullptr;
  /// (chunkedGather) Whether a chunk is its stored bytes or zeros: stored
  /// in the staged type, and the body only selects it or zero by a
  /// condition of the indices (a window's padding), through exact
  /// conversions. cp.async copies it (zero-filling the padding), so the k
  /// loop can take more than 2 stages.
  bool zeroFilledChunks = false;
  /// Whether k spans several loops that are the operand's trailing,
  /// contiguous dimensions (a convolution's weight: ic, kh, kw): it is
  /// staged with 16-byte loads through a view that collapses them into one.
  bool collapsedK = false;
  /// (B only) Whether the operand is read through (batch..., k loops...,
  /// n loops...) with its last dimension contiguous and the last n loop a
  /// whole number of 16-byte chunks, even when its k spans several loops
  /// (an attention's output projection reads its weight as [heads, d, n]):
  /// the column GEMV loads 16 bytes of a row at any flat k.
  bool rowsAfterK = false;
  /// The kernel's own op that computes `value` elementwise from the loop
  /// indices (a head split or transpose fused into the kernel): the operand
  /// is gathered by computing each element from its body, and `value` is
  /// never stored. Null otherwise.
  linalg::GenericOp producer;
  /// (tf32) Whether every element of `value` is a tf32 value already: a
  /// compile-time constant the precision policy stored rounded
  /// (isCompileTimeTf32Weight). Its tiles can be multiplied as they are
  /// staged, with no rounding (sm_90a's wgmma reads B from shared memory).
  bool tf32Exact = false;

  /// The type a tile of the operand is staged as in shared memory: the
  /// multiply type, or f32 for tf32 (the fragment loads round the staged
  /// f32 to tf32, as `cvt.rna.tf32.f32` does, so that cp.async can copy the
  /// stored bytes).
  Type getStagedType() const {
    return mmaType.isTF32() ? Float32Type::get(mmaType.getContext())
                            : Type(mmaType);
  }
  /// Bytes of a staged element, and how many of them a 16-byte chunk (the
  /// unit of staging and of the shared-memory swizzle) holds.
  int64_t getStagedBytes() const {
    return getStagedType().getIntOrFloatBitWidth() / 8;
  }
  int64_t getChunkElements() const { return 16 / getStagedBytes(); }
  /// Bytes of a stored element: 4 for an f32 operand the body rounds.
  int64_t getStoredBytes() const {
    return elementType.getIntOrFloatBitWidth() / 8;
  }
  /// Whether its stored elements are staged as they are (copied as bytes,
  /// by cp.async or TMA): read whole, stored as staged.
  bool isStagedAsStored() const {
    return !gathered && elementType == getStagedType();
  }
  /// Whether cp.async can stage it: staged as stored, or chunks of stored
  /// bytes or zeros.
  bool isCopiedAsBytes() const {
    return isStagedAsStored() || zeroFilledChunks;
  }
};

/// One product of a tensor-core kernel: a zero fill (possibly shared with
/// the other product) and the contraction accumulating into it.
struct MmaProduct {
  linalg::LinalgOp fill;
  linalg::LinalgOp contraction;
  MmaOperand lhs, rhs;
  /// The extents of the contraction's reduction loops, and their product.
  SmallVector<int64_t> kLoops;
  int64_t k = 0;

  unsigned getNumLoops() const {
    return linalg::LinalgOp(contraction).getNumLoops();
  }
};

/// A kernel the tensor-core path implements.
struct MmaContraction {
  /// One product, or two over the same output tile that the epilogue
  /// combines (a residual block's convolution and its downsampling 1x1
  /// convolution: each output element runs both dot products).
  SmallVector<MmaProduct, 1> products;
  /// The elementwise op reading the products' results (bias, activation,
  /// residual add, cast, a permuted layout), or null when the one product's
  /// result is the kernel's. It may have several results, each a result of
  /// the kernel (a residual sum and its square), all in the same space.
  linalg::GenericOp epilogue;
  /// On buffers, one per result (the epilogue's results, in order, or the
  /// one product's): the copy of the result buffer (possibly through a
  /// collapse_shape or expand_shape view of it) into the kernel's result
  /// argument, when bufferization computed the result in a buffer of the
  /// kernel's own (a convolution's result reshaped back to NCHW); the kernel
  /// then stores straight into the argument. Null otherwise.
  SmallVector<memref::CopyOp, 1> resultCopies;
  /// On buffers: copies of a zero-filled buffer that serve as a product's
  /// zero accumulator (one fill that two products share, bufferized).
  SmallVector<memref::CopyOp> zeroCopies;
  /// The ops that compute operands elementwise (MmaOperand::producer).
  SmallVector<linalg::GenericOp> producers;
  /// An fp8 kernel's scale reductions (docs/precision.md): `max |x|` of a
  /// whole operand into a zero-filled 0-d value (`fill`), which its
  /// quantizing producer and the epilogue read. The kernel computes them in
  /// launches of their own before the GEMM's.
  struct ScaleReduction {
    linalg::GenericOp reduction;
    linalg::LinalgOp fill;
  };
  SmallVector<ScaleReduction> scaleReductions;
  /// `max |x|` of one of the kernel's results (an fp8 consumer's scale,
  /// moved into this kernel by ridge-move-scale-reductions-to-producers):
  /// the kernel zeroes the 0-d value (`fill`) in a launch before the GEMM's
  /// and folds in the magnitude of each element it stores of result
  /// `result` (an index into the epilogue's results, or 0 for the product's
  /// without one).
  struct ResultAmax {
    linalg::GenericOp reduction;
    linalg::LinalgOp fill;
    unsigned result = 0;
  };
  SmallVector<ResultAmax> resultAmaxes;
  /// Parallel loop extents: the batch loops (possibly none), the loops of m
  /// and n (one or more each), in loop order, shared by every product.
  SmallVector<int64_t> batch, mLoops, nLoops;
  /// The GEMM extents: the products of mLoops and nLoops.
  int64_t m = 0, n = 0;

  unsigned getNumParallelLoops() const {
    return batch.size() + mLoops.size() + nLoops.size();
  }
  /// The k of all products together (what the kernel's k loops run over).
  /// Iterations of the batch loops: the product of their extents.
  int64_t getBatchCount() const {
    int64_t count = 1;
    for (int64_t extent : batch)
      count *= extent;
    return count;
  }
  int64_t getTotalK() const {
    int64_t total = 0;
    for (const MmaProduct &product : products)
      total += product.k;
    return total;
  }
};

/// How an operand is read by TMA (sm_90a's tensor copies): as a row-major
/// tensor of its batch dimensions, then one flat dimension of the GEMM rows
/// it stages along (m|n, or k) and one of its contiguous ones (k, or m|n).
struct MmaTmaLayout {
  /// The batch loops the operand reads, outermost first (a broadcast
  /// operand reads fewer than the kernel has, or none).
  SmallVector<unsigned> batchLoops;
  /// The flat extents of its staged rows (outer) and of its contiguous
  /// dimension (inner), in elements.
  int64_t outer = 0, inner = 0;
  /// (A read through (batch..., k0, ..., rows, kr): an attention's heads'
  /// outputs [H, L, d] with k = (h, d)) The extents of the k loops before
  /// its rows, outermost first: a dimension of the map each, between the
  /// rows and the batch loops; `inner` is then the innermost k loop's
  /// extent, which a k tile divides (a tile lies in one head).
  SmallVector<int64_t> outerK;
};

/// The TMA layout of `operand` of `product`, or nullopt with `reason` when
/// TMA cannot copy it: the operand must be stored as multiplied (bf16/f16),
/// read as a whole (not gathered or computed), through a map that lists its
/// batch loops, then all its row loops, then all its contiguous loops (in
/// loop order; several k loops of a contiguous view are one flat k), or (A)
/// its batch loops, its outer k loops, its row loop and its innermost k
/// loop, whole TMA k tiles (MmaTmaLayout::outerK), from a static row-major
/// tensor or buffer, with at most 5 dimensions in all and contiguous rows of
/// whole 16-byte units.
std::optional<MmaTmaLayout> getMmaTmaLayout(const MmaContraction &mma,
                                            const MmaProduct &product,
                                            const MmaOperand &operand,
                                            bool isLhs, std::string &reason);

/// Why sm_90a's wgmma cannot multiply the operands of `mma`, or nullopt
/// when it can. It reads bf16, f16 and e4m3 in any layout it is staged in.
/// tf32 it reads only K-major, and B from shared memory as it is stored:
/// wgmma drops the 13 low mantissa bits of an f32 where the contraction's
/// body rounds them (`cvt.rna.tf32.f32`), so B must hold tf32 values
/// already. A tf32 kernel therefore takes wgmma when every product's A is
/// staged K-major (its fragments are loaded into registers and rounded
/// there: wgmma's register-A form) and its B is a K-major compile-time
/// tf32 constant read with 16-byte loads (isCompileTimeTf32Weight).
std::optional<std::string> whyNotWgmmaOperands(const MmaContraction &mma);

/// The ops of `body` that `value` is computed from, itself included (empty
/// when the slice cannot be computed).
llvm::SetVector<Operation *> getBodySlice(Value value, Block *body);

/// A chunked gather's element computation (MmaOperand::chunkLoad), split at
/// its load: the ops the load's indices and the rest need that do not read
/// the loaded value (the window's indices, the padding condition), and the
/// load with what follows it (the padding select, a rounding), each in body
/// order.
struct ChunkComputation {
  llvm::SetVector<Operation *> independent, dependents;
};
ChunkComputation splitChunkComputation(const MmaOperand &operand);

/// Whether `op` sets its only output to zero: a linalg.fill, or a generic
/// with no inputs that yields a zero constant.
bool isZeroFill(linalg::LinalgOp op);

/// Whether `generic` is an fp8 operand's scale reduction: `max |x|` over all
/// of its one input into a 0-d f32 (Fp8Contraction.cpp).
bool isScaleReduction(linalg::GenericOp generic);

/// Matches `kernel` (on tensors or buffers). On failure, `reason` says why
/// (for LLVM_DEBUG and remarks).
/// With `allowF32`, operands multiplied in f32 match too (mmaType f32): the
/// bandwidth path of skinny contractions.
FailureOr<MmaContraction> matchMmaContraction(func::FuncOp kernel,
                                              std::string &reason,
                                              bool allowF32 = false);

} // namespace mlir::ridge

#endif // RIDGELINE_CODEGEN_MMACONTRACTION_H
