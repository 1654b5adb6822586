//===- AtomicMaximum.cpp - Maxima of magnitudes folded in by atomics ------===//

#include "AtomicMaximum.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

void mlir::ridge::createAtomicMaxOfBits(OpBuilder &b, Location loc,
                                        Value nonNegative, Value buffer) {
  Value address = arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer));
  Value pointer = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*global=*/1),
      address);
  LLVM::AtomicRMWOp::create(
      b, loc, LLVM::AtomicBinOp::umax, pointer,
      arith::BitcastOp::create(b, loc, b.getI32Type(), nonNegative),
      LLVM::AtomicOrdering::monotonic);
}

void mlir::ridge::createWarpMaxIntoBuffer(OpBuilder &b, Location loc,
                                          Value local, Value lane,
                                          Value buffer) {
  Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), kWarpSize);
  for (int offset = kWarpSize / 2; offset >= 1; offset /= 2) {
    Value other = gpu::ShuffleOp::create(b, loc, local,
                                         arith::ConstantIntOp::create(
                                             b, loc, b.getI32Type(), offset),
                                         width, gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    local = arith::MaximumFOp::create(b, loc, local, other);
  }
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                            arith::ConstantIndexOp::create(b, loc, 0));
  auto ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifFirst.thenBlock());
  createAtomicMaxOfBits(b, loc, local, buffer);
}

void mlir::ridge::createZeroingLaunch(OpBuilder &b, Location loc,
                                      Value buffer) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto zeroing = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&zeroing.getBody().front());
  memref::StoreOp::create(
      b, loc, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0)), buffer,
      ValueRange());
  gpu::TerminatorOp::create(b, loc);
}

SmallVector<Value> mlir::ridge::createGuardedStores(
    OpBuilder &b, Location loc, Value condition, ArrayRef<Value> maxima,
    function_ref<void(SmallVectorImpl<Value> &)> stores) {
  SmallVector<Type> types(maxima.size(), b.getF32Type());
  auto guard = scf::IfOp::create(b, loc, types, condition,
                                 /*withElseRegion=*/!types.empty());
  OpBuilder::InsertionGuard insertionGuard(b);
  SmallVector<Value> updated(maxima);
  if (types.empty()) {
    b.setInsertionPoint(guard.thenBlock()->getTerminator());
    stores(updated);
    return updated;
  }
  b.setInsertionPointToStart(guard.elseBlock());
  scf::YieldOp::create(b, loc, maxima);
  b.setInsertionPointToStart(guard.thenBlock());
  stores(updated);
  scf::YieldOp::create(b, loc, updated);
  return SmallVector<Value>(guard.getResults());
}
