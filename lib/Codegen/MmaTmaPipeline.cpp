//===- MmaTmaPipeline.cpp - sm_90a's TMA-fed tensor-core GEMM -------------===//
//
// The `mma_tma` kernels of ridge-lower-mma-contractions (KernelConfig.h):
// the structure of CUTLASS 3's warp-specialized Hopper GEMMs. On the host,
// each operand's tensor map is encoded before the launch (the runtime's
// ridgeTensorMapEncodeTiled) and passed by value; in the kernel,
//
//   - the stages (k tiles of 128-byte rows: 64 bf16/f16, or 32 of tf32's
//     f32; the 128-byte swizzle, which TMA writes and the wgmma descriptors
//     read) and a full and an empty mbarrier per stage live in dynamic
//     shared memory;
//   - a producer warp (one lane) waits for a stage's release, announces its
//     bytes on its full barrier and issues the tensor copies;
//   - the consumer warpgroups wait on the full barrier, issue the stage's
//     wgmmas, keep one group in flight and release the stage before it;
//   - the epilogue (or split-K's partial sums) is the other pipelines'.
//
// No thread copies an operand, and there is no block-wide barrier after the
// barriers' initialization.
//
//===----------------------------------------------------------------------===//

#include "MmaKernelBuilder.h"
#include "TmaCopies.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::ridge;

/// Whether `a` and `b` are the same tensor map: one operand, viewed alike.
static bool isSameTensorMap(const StagedOperand &a, const StagedOperand &b) {
  return a.hostTensorMap && a.operand->value == b.operand->value &&
         a.isLhs == b.isLhs && a.outerLen == b.outerLen &&
         a.innerLen == b.innerLen &&
         a.operand->kContiguous == b.operand->kContiguous &&
         a.tmaLayout.batchLoops == b.tmaLayout.batchLoops &&
         a.tmaLayout.outer == b.tmaLayout.outer &&
         a.tmaLayout.inner == b.tmaLayout.inner &&
         a.tmaLayout.outerK == b.tmaLayout.outerK;
}

LogicalResult MmaKernelBuilder::prepareTmaOperands(func::FuncOp encodeFn) {
  // Each product's operands with a tensor map each; an operand several
  // products read alike (a QKV projection's input) is mapped once.
  tmaOperands.clear();
  for (const MmaProduct &current : mma.products) {
    TmaOperands operands{stageOperand(current, /*isLhs=*/true),
                         stageOperand(current, /*isLhs=*/false)};
    for (StagedOperand *staged : {&operands.lhs, &operands.rhs}) {
      std::string reason;
      std::optional<MmaTmaLayout> layout = getMmaTmaLayout(
          mma, current, *staged->operand, staged->isLhs, reason);
      if (!layout)
        return current.contraction->emitError()
               << "'mma_tma' needs TMA to copy operand "
               << (staged->isLhs ? "A" : "B") << ", but " << reason;
      staged->tmaLayout = *layout;
      for (TmaOperands &done : tmaOperands)
        for (StagedOperand *mapped : {&done.lhs, &done.rhs})
          if (!staged->hostTensorMap && isSameTensorMap(*mapped, *staged))
            staged->hostTensorMap = mapped->hostTensorMap;
      if (!staged->hostTensorMap)
        staged->hostTensorMap = encodeTensorMap(*staged, encodeFn);
    }
    tmaOperands.push_back(std::move(operands));
  }
  selectTmaProduct(0);
  return success();
}

void MmaKernelBuilder::selectTmaProduct(size_t index) {
  product = &mma.products[index];
  lhs = tmaOperands[index].lhs;
  rhs = tmaOperands[index].rhs;
}

void MmaKernelBuilder::buildTmaBlock(Value split, Value tile,
                                     SplitKBuffers splitBuffers) {
  // A's stages, B's stages (the products' tiles are of one size: every
  // product goes through them), then the mbarriers.
  tma::DynamicSharedMemory shared(b, loc);
  Value lhsStages = shared.carve(getStageBufferType(lhs));
  Value rhsStages = shared.carve(getStageBufferType(rhs));
  for (TmaOperands &operands : tmaOperands) {
    operands.lhs.smem = lhsStages;
    operands.rhs.smem = rhsStages;
    for (StagedOperand *staged : {&operands.lhs, &operands.rhs})
      staged->tensorMap =
          tma::getKernelTensorMap(b, loc, staged->hostTensorMap);
  }
  selectTmaProduct(0);
  barriers = {shared.carve(MemRefType::get({2 * stages}, b.getI64Type())),
              stages};
  // The epilogue's own staging rows, where the stages cannot hold them.
  Value stagingRows;
  if (int64_t stagingBytes = getDedicatedStagingBytes())
    stagingRows = shared.carve(getStagingBufferType(stagingBytes));
  if (splitK > 1)
    splitBuffers.arrival = shared.carve(MemRefType::get({1}, b.getI32Type()));
  // One thread initializes the barriers: a stage is empty after one
  // arrival of each consumer thread.
  auto initIf = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(0)),
      /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(initIf.thenBlock()->getTerminator());
    barriers.initialize(b, loc, threads);
    NVVM::FenceMbarrierInitOp::create(b, loc);
  }
  gpu::BarrierOp::create(b, loc);
  // The roles: no block-wide barrier after this point.
  Value producer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tid,
                                         index(threads));
  auto roles = scf::IfOp::create(b, loc, producer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(roles.thenBlock()->getTerminator());
    auto laneIf = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(0)),
        /*withElseRegion=*/false);
    b.setInsertionPoint(laneIf.thenBlock()->getTerminator());
    buildTmaProducer(split);
    b.setInsertionPoint(roles.elseBlock()->getTerminator());
    SmallVector<SmallVector<Value>> results = buildTmaConsumer(split);
    // The stages are free for the epilogue once every consumer warp's
    // wgmmas have read their last stage: a named barrier of the consumer
    // threads (the producer warp is done).
    finishResults(results, split, tile, splitBuffers, stagingRows,
                  {lhs.smem, rhs.smem}, [&] { createAccumulatorBarrier(); });
  }
}

Value MmaKernelBuilder::encodeTensorMap(const StagedOperand &staged,
                                        func::FuncOp encode) {
  const MmaOperand &operand = *staged.operand;
  const MmaTmaLayout &layout = staged.tmaLayout;
  auto type = cast<MemRefType>(operand.value.getType());
  tma::TensorMapLayout map;
  map.elementBytes = staged.elementBytes();
  // tf32's staged f32 is copied as stored.
  map.dataType = tma::getDataType(operand.mmaType);
  // Dimensions innermost first: the contiguous one, the rows, then the
  // batch loops the operand reads, innermost first.
  map.dims = {layout.inner, layout.outer};
  // Boxes of one swizzle span of the contiguous dimension (all of a K-major
  // tile's k; one slab of an MN-major tile) by the tile's rows.
  map.boxes = {getSwizzleBytes() / map.elementBytes,
               operand.kContiguous ? staged.outerLen : tileK};
  // Then the outer k loops (an attention's heads), a box of one each.
  for (int64_t extent : llvm::reverse(layout.outerK)) {
    map.dims.push_back(extent);
    map.boxes.push_back(1);
  }
  ArrayRef<int64_t> shape = type.getShape();
  unsigned numBatchDims = layout.batchLoops.size();
  for (unsigned i = 0; i < numBatchDims; ++i) {
    map.dims.push_back(shape[numBatchDims - 1 - i]);
    map.boxes.push_back(1);
  }
  int64_t stride = layout.inner * map.elementBytes;
  for (size_t i = 1; i < map.dims.size(); ++i) {
    map.strides.push_back(stride);
    stride *= map.dims[i];
  }
  map.swizzle = tma::Swizzle::Bytes128;
  return tma::encodeTensorMap(b, loc, encode, operand.value, /*byteOffset=*/0,
                              map);
}

void MmaKernelBuilder::copyTileTma(const StagedOperand &staged, Value kTile,
                                   Value stage, Value barrier) {
  const MmaOperand &operand = *staged.operand;
  // The batch coordinates, innermost first.
  SmallVector<Value> batchCoords;
  for (unsigned loop : llvm::reverse(staged.tmaLayout.batchLoops))
    batchCoords.push_back(batchIndices[loop]);
  Value kBase = mul(kTile, tileK);
  Value rowBase = staged.isLhs ? mBase : nBase;
  int64_t elementBytes = staged.elementBytes();
  Value stageBytes = mul(stage, staged.stageElements() * elementBytes);
  // `outerK`: the outer k loops' coordinates, innermost first.
  auto copy = [&](Value byteOffset, Value inner, Value outer,
                  ArrayRef<Value> outerK = {}) {
    SmallVector<Value> coords = {inner, outer};
    llvm::append_range(coords, outerK);
    llvm::append_range(coords, batchCoords);
    tma::copyBox(b, loc, tma::getSharedPointer(b, loc, staged.smem, byteOffset),
                 staged.tensorMap, coords, barrier);
  };
  if (!staged.tmaLayout.outerK.empty()) {
    // The tile's k within the innermost k loop, and the outer k loops'
    // coordinates that the flat k decodes to.
    int64_t inner = staged.tmaLayout.inner;
    SmallVector<Value> outerK;
    Value outer = div(kBase, inner);
    for (int64_t extent : llvm::reverse(staged.tmaLayout.outerK)) {
      outerK.push_back(rem(outer, extent));
      outer = div(outer, extent);
    }
    copy(stageBytes, rem(kBase, inner), rowBase, outerK);
    return;
  }
  if (operand.kContiguous) {
    // Rows of 64 k elements (128 bytes), the 128-byte swizzle (chunk c of
    // row r at c ^ (r % 8)): the layout wgmma's K-major descriptors read, as
    // the tensor copy writes it.
    copy(stageBytes, kBase, rowBase);
    return;
  }
  // MN-major: slabs of 64 m|n elements by the tile's 64 k rows, slab after
  // slab.
  int64_t slabElements = getSwizzleBytes() / elementBytes;
  int64_t slabBytes = staged.outerLen * getSwizzleBytes();
  for (int64_t slab = 0; slab < staged.innerLen / slabElements; ++slab)
    copy(add(stageBytes, slab * slabBytes), add(rowBase, slab * slabElements),
         kBase);
}

void MmaKernelBuilder::buildTmaProducer(Value split) {
  // The products' k tiles one after the other through the same stages:
  // step `offset + kTile` of the barriers' sequence.
  Value offset = index(0);
  for (size_t i = 0; i < tmaOperands.size(); ++i) {
    selectTmaProduct(i);
    setKRange(llvm::divideCeil(product->k, tileK), split);
    int64_t stageBytes = lhs.stageElements() * lhs.elementBytes() +
                         rhs.stageElements() * rhs.elementBytes();
    auto loop = scf::ForOp::create(b, loc, index(0), kCount, index(1));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value kTile = loop.getInductionVar();
      Value step = add(offset, kTile);
      Value full = barriers.acquire(b, loc, step, stageBytes);
      Value stage = rem(step, stages);
      copyTileTma(lhs, add(kFirst, kTile), stage, full);
      copyTileTma(rhs, add(kFirst, kTile), stage, full);
    }
    offset = add(offset, kCount);
  }
}

SmallVector<SmallVector<Value>>
MmaKernelBuilder::buildTmaConsumer(Value split) {
  int64_t count = fragsM * fragsN * 4;
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  SmallVector<SmallVector<Value>> results;
  Value offset = index(0);
  for (size_t i = 0; i < tmaOperands.size(); ++i) {
    selectTmaProduct(i);
    setKRange(llvm::divideCeil(product->k, tileK), split);
    Value init = packAccumulators(SmallVector<Value>(count, zero));
    auto loop = scf::ForOp::create(b, loc, index(0), kCount, index(1),
                                   ValueRange{init});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value step = add(offset, loop.getInductionVar());
      Value stage = rem(step, stages);
      barriers.waitFull(b, loc, step);
      // One group in flight (none for tf32's A from registers): the
      // previous step's wgmmas are done, and its stage goes back to the
      // producer (a previous product's last step, which its final wait
      // completed, included). Every consumer thread arrives: a branch
      // around one lane's arrival would make the warp diverge right before
      // the next wgmma.fence, whose .aligned form needs it converged.
      Value packed = waitForWgmmaGroups(
          issueWgmmaStage(stage, loop.getRegionIterArgs()[0]), /*inFlight=*/1);
      auto releaseIf = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, step,
                                index(0)),
          /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard ifGuard(b);
        b.setInsertionPoint(releaseIf.thenBlock()->getTerminator());
        barriers.release(b, loc, rem(add(step, stages - 1), stages));
      }
      scf::YieldOp::create(b, loc, packed);
    }
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    results.push_back(unpackAccumulators(loop.getResult(0), count));
    offset = add(offset, kCount);
  }
  return results;
}
