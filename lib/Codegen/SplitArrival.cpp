//===- SplitArrival.cpp - The last of a region's blocks finishes it -------===//
//
// The arrival protocol of SplitArrival.h.
//
//===----------------------------------------------------------------------===//

#include "SplitArrival.h"

#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::ridge;

Value mlir::ridge::createArrivalCounters(OpBuilder &b, Location loc,
                                         int64_t count) {
  Type i32 = b.getI32Type();
  auto counters =
      memref::AllocOp::create(b, loc, MemRefType::get({count}, i32));
  counters->setAttr(kKeptZeroAttr, b.getUnitAttr());
  gpu::MemsetOp::create(b, loc, /*asyncToken=*/Type(), ValueRange(), counters,
                        arith::ConstantIntOp::create(b, loc, i32, 0));
  return counters;
}

MemRefType mlir::ridge::getArrivalVerdictType(MLIRContext *context) {
  // The bytes the configs count in a split kernel's shared memory.
  return MemRefType::get(
      {kSplitKArrivalBytes / 4}, IntegerType::get(context, 32),
      MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(context,
                                 gpu::GPUDialect::getWorkgroupAddressSpace()));
}

Value mlir::ridge::createLastArrival(OpBuilder &b, Location loc, Value tid,
                                     Value counters, Value counter,
                                     int64_t arrivals, Value verdict,
                                     function_ref<void()> barrier) {
  // The block's barrier orders every thread's partial results before
  // thread 0's release, a fence at the GPU's scope (`fence.acq_rel.gpu`)
  // and the arrival, which the barrier's cumulativity makes a release of
  // the whole block's stores; in the last block, thread 0's fence after the
  // arrival acquires the other blocks' results, and the barrier after it
  // orders them before every thread's reads. The fences are explicit
  // because NVPTX emits an atomicrmw as a relaxed `atom`, whatever its
  // ordering (LLVM 22).
  auto fence = [&](LLVM::AtomicOrdering ordering) {
    LLVM::FenceOp::create(b, loc, ordering, "device");
  };
  Type i32 = b.getI32Type();
  auto i32Constant = [&](int64_t value) {
    return arith::ConstantIntOp::create(b, loc, i32, value).getResult();
  };
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  barrier();
  auto first = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, zero),
      /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(first.thenBlock()->getTerminator());
    fence(LLVM::AtomicOrdering::release);
    Value arrived = memref::AtomicRMWOp::create(
        b, loc, arith::AtomicRMWKind::addi, i32Constant(1), counters,
        ValueRange{counter});
    Value isLast = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         arrived, i32Constant(arrivals - 1));
    // Every block has arrived: nothing else touches the counter in this
    // launch, and the next launch finds it zero.
    auto reset = scf::IfOp::create(b, loc, isLast, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard resetGuard(b);
      b.setInsertionPoint(reset.thenBlock()->getTerminator());
      memref::StoreOp::create(b, loc, i32Constant(0), counters,
                              ValueRange{counter});
      fence(LLVM::AtomicOrdering::acquire);
    }
    memref::StoreOp::create(b, loc, arith::ExtUIOp::create(b, loc, i32, isLast),
                            verdict, ValueRange{zero});
  }
  barrier();
  Value read = memref::LoadOp::create(b, loc, verdict, ValueRange{zero});
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, read,
                               i32Constant(0));
}
