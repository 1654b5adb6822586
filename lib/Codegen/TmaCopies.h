//===- TmaCopies.h - sm_90a's tensor copies and mbarriers -------*- C++ -*-===//
//
// The pieces of a TMA-fed pipeline that the tensor-core GEMM
// (MmaTmaPipeline.cpp) and the tensor-core attention
// (LowerFlashAttention.cpp) share: a tensor map encoded by the runtime on
// the host (ridgeTensorMapEncodeTiled) and passed to the kernel by value,
// the tile copies that land in shared memory and complete their bytes on an
// mbarrier, and the waits on a barrier's phase.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_CODEGEN_TMACOPIES_H
#define RIDGELINE_LIB_CODEGEN_TMACOPIES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::ridge::tma {

/// CUtensorMapSwizzle: the span of the swizzle TMA writes (and wgmma's
/// descriptors read), in bytes.
enum class Swizzle : int64_t { Bytes64 = 2, Bytes128 = 3 };

/// How a tensor map reads a tensor: dimensions innermost first (the first
/// contiguous), the byte strides of the others, the box of one copy (its
/// first dimension at most the swizzle span).
struct TensorMapLayout {
  /// The CUtensorMapDataType of the copied elements (getDataType).
  int64_t dataType = 0;
  int64_t elementBytes = 0;
  SmallVector<int64_t, 5> dims, strides, boxes;
  Swizzle swizzle = Swizzle::Bytes128;

  /// The bytes one copy of a whole box lands (the zeros TMA fills in past
  /// the tensor's edges count too).
  int64_t getBoxBytes() const {
    int64_t bytes = elementBytes;
    for (int64_t box : boxes)
      bytes *= box;
    return bytes;
  }
};

/// The CUtensorMapDataType of `type` as TMA copies it: 6 float16, 7
/// float32 (tf32's f32, copied as stored), 9 bfloat16; 0 for the others.
int64_t getDataType(Type type);

/// The runtime's tensor-map encoder (MgpuApi.cpp), declared in `module`
/// once: the host code of TMA kernels calls it.
func::FuncOp declareTensorMapEncoder(ModuleOp module);

/// Host code before the launch: the tensor map of `layout` over `memref`
/// from `byteOffset` bytes in (a multiple of 16), encoded by the runtime
/// into a stack slot, as the 128-byte value the launch passes.
Value encodeTensorMap(OpBuilder &b, Location loc, func::FuncOp encoder,
                      Value memref, int64_t byteOffset,
                      const TensorMapLayout &layout);

/// In the kernel: the host's map value as the pointer the copies take.
Value getKernelTensorMap(OpBuilder &b, Location loc, Value hostMap);

/// The shared-memory address (`!llvm.ptr<3>`) `byteOffset` bytes into
/// `memref`.
Value getSharedPointer(OpBuilder &b, Location loc, Value memref,
                       Value byteOffset);

/// Waits until the phase of parity `parity` (0 or 1, an index) of
/// `barrier` has completed.
void waitParity(OpBuilder &b, Location loc, Value barrier, Value parity);

/// A barrier of a TMA kernel's `threads` consumer threads (named barrier
/// 1): the producer warp, done with its copies, takes no part (barrier 0
/// would wait for it).
void createConsumerBarrier(OpBuilder &b, Location loc, int64_t threads);

/// A kernel's dynamic shared memory from its first 1024-byte boundary (the
/// swizzle atom, on which TMA's writes and wgmma's reads agree;
/// ridge-extern-dynamic-shared-memory aligns the array so, and this keeps
/// the kernel right without it), cut into buffers one after the other.
class DynamicSharedMemory {
public:
  DynamicSharedMemory(OpBuilder &b, Location loc);
  /// The next buffer, of `type`'s static shape in workgroup memory.
  Value carve(MemRefType type);

private:
  OpBuilder &b;
  Location loc;
  Value base, offset;
};

/// The mbarriers of a TMA pipeline of `stages` stages, at `memref` (i64s):
/// a full barrier per stage (the producer's arrival and its copies' bytes)
/// then an empty one (an arrival of each consumer thread). The producer
/// and the consumers count the tiles they walk in steps from 0; step s
/// uses stage s % stages in phase s / stages.
struct StageBarriers {
  Value memref;
  int64_t stages = 0;

  Value getFull(OpBuilder &b, Location loc, Value stage) const;
  Value getEmpty(OpBuilder &b, Location loc, Value stage) const;
  /// Initializes them (one thread; `consumers` arrivals empty a stage). The
  /// caller fences the initializations (`fence.mbarrier_init`) before the
  /// block barrier that publishes them.
  void initialize(OpBuilder &b, Location loc, int64_t consumers) const;
  /// The producer's step `step`: waits until the consumers have released
  /// its stage (from the second round on: the previous phase of its empty
  /// barrier), announces `bytes` on its full barrier and returns that
  /// barrier, on which the step's copies complete.
  Value acquire(OpBuilder &b, Location loc, Value step, int64_t bytes) const;
  /// The consumers' step `step`: waits until its stage is full.
  void waitFull(OpBuilder &b, Location loc, Value step) const;
  /// A consumer thread is done reading stage `stage`.
  void release(OpBuilder &b, Location loc, Value stage) const;
};

/// One tensor copy of the box at `coords` (index values, innermost first)
/// of `tensorMap` into shared memory at `shared` (`!llvm.ptr<3>`),
/// completing its bytes on `barrier`.
void copyBox(OpBuilder &b, Location loc, Value shared, Value tensorMap,
             ValueRange coords, Value barrier);

} // namespace mlir::ridge::tma

#endif // RIDGELINE_LIB_CODEGEN_TMACOPIES_H
