//===- MmaGemv.cpp - The bandwidth path of skinny f32 contractions
//----------===//
//
// A contraction whose m is at most 16 (a decode step, a classifier head)
// is memory-bound on the roofline: each weight element is used m times. The
// `gemv` config of ridge-select-kernel-config builds it without tensor
// cores, one warp per output column: each lane reads 16 bytes of the weight
// row and of each activation row, fma, a shuffle reduction per row, and
// lane 0 applies the epilogue and stores.
//
//===----------------------------------------------------------------------===//

#include "AtomicMaximum.h"
#include "MmaKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ridge;

LogicalResult MmaKernelBuilder::buildGemv() {
  const MmaProduct &only = mma.products.front();
  product = &only;
  int64_t batchCount = 1;
  for (int64_t extent : mma.batch)
    batchCount *= extent;
  constexpr int64_t kPiece = 4;
  for (const MmaContraction::ResultAmax &amax : mma.resultAmaxes)
    createZeroingLaunch(b, loc, getAmaxBuffer(amax));
  Value one = index(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, index(llvm::divideCeil(mma.n, gemvWarps)), one, index(batchCount),
      index(gemvWarps * kWarpSize), one, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  tid = launch.getThreadIds().x;
  lane = rem(tid, kWarpSize);
  Value n = add(mul(blockIds.x, gemvWarps), div(tid, kWarpSize));
  setBatchIndices(blockIds.z);
  // Every lane of a warp past the last column still takes part in the
  // shuffles: it reads the last column and does not store.
  Value column = minimum(n, mma.n - 1);
  StagedOperand a, w;
  a.operand = &only.lhs;
  a.isLhs = true;
  a.source = only.lhs.value;
  w.operand = &only.rhs;
  w.isLhs = false;
  w.source = only.rhs.value;
  Type f32 = b.getF32Type();
  auto pieceType = VectorType::get({kPiece}, f32);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  SmallVector<Value> init(mma.m, zero);
  auto loop = scf::ForOp::create(b, loc, mul(lane, kPiece), index(only.k),
                                 index(kWarpSize * kPiece), init);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k = loop.getInductionVar();
    Value weights = vector::LoadOp::create(
        b, loc, pieceType, w.source, operandIndices(w, column, k),
        /*nontemporal=*/false, llvm::MaybeAlign(16));
    SmallVector<Value> sums;
    for (int64_t m = 0; m < mma.m; ++m) {
      // The row's piece: one 16-byte load, or (a gathered row, such as a
      // class token picked by a Gather) element by element.
      Value row;
      if (!only.lhs.gathered) {
        row = vector::LoadOp::create(
            b, loc, pieceType, a.source, operandIndices(a, index(m), k),
            /*nontemporal=*/false, llvm::MaybeAlign(16));
      } else {
        SmallVector<Value> elements;
        for (int64_t i = 0; i < kPiece; ++i) {
          SmallVector<Value> coords = getLoopCoordinates();
          decode(index(m), GemmDim::M, coords);
          decode(add(k, i), GemmDim::K, coords);
          elements.push_back(gatherElement(only.lhs, coords));
        }
        row = vector::FromElementsOp::create(b, loc, pieceType, elements);
      }
      Value sum = loop.getRegionIterArgs()[m];
      for (int64_t i = 0; i < kPiece; ++i) {
        Value x = vector::ExtractOp::create(b, loc, row, i);
        Value y = vector::ExtractOp::create(b, loc, weights, i);
        sum = math::FmaOp::create(b, loc, x, y, sum);
      }
      sums.push_back(sum);
    }
    scf::YieldOp::create(b, loc, sums);
  }
  Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), kWarpSize);
  SmallVector<Value> results;
  for (Value sum : loop.getResults()) {
    for (int64_t offset = kWarpSize / 2; offset > 0; offset /= 2) {
      Value offset32 =
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset);
      Value other = gpu::ShuffleOp::create(b, loc, sum, offset32, width,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      sum = arith::AddFOp::create(b, loc, sum, other);
    }
    results.push_back(sum);
  }
  Value store = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(0)),
      lessThan(n, mma.n));
  auto storeIf = scf::IfOp::create(b, loc, store, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(storeIf.thenBlock()->getTerminator());
    SmallVector<Value> buffers = getResultBuffers();
    // The column's max |x| per result amax: lane 0 stores the whole
    // column, so it folds it in alone.
    SmallVector<Value> amaxLocals;
    if (!mma.resultAmaxes.empty())
      amaxLocals.assign(
          mma.resultAmaxes.size(),
          arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0)));
    for (int64_t m = 0; m < mma.m; ++m) {
      SmallVector<Value> coords = epilogueCoordinates(index(m), n);
      for (auto [r, value] :
           llvm::enumerate(applyEpilogue(results[m], index(m), n))) {
        memref::StoreOp::create(b, loc, value, buffers[r], coords);
        foldStoredMagnitudes(amaxLocals, r, value);
      }
    }
    for (auto [amax, local] : llvm::zip(mma.resultAmaxes, amaxLocals))
      createAtomicMaxOfBits(b, loc, local, getAmaxBuffer(amax));
  }
  gpu::TerminatorOp::create(b, loc);
  return success();
}
