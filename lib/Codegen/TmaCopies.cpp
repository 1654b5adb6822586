//===- TmaCopies.cpp - sm_90a's tensor copies and mbarriers ---------------===//

#include "TmaCopies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::ridge;

int64_t tma::getDataType(Type type) {
  if (type.isF16())
    return 6;
  if (type.isF32() || type.isTF32())
    return 7;
  if (type.isBF16())
    return 9;
  return 0;
}

func::FuncOp tma::declareTensorMapEncoder(ModuleOp module) {
  constexpr StringLiteral kName = "ridgeTensorMapEncodeTiled";
  if (auto existing = module.lookupSymbol<func::FuncOp>(kName))
    return existing;
  MLIRContext *context = module.getContext();
  Type pointer = LLVM::LLVMPointerType::get(context);
  Type i32 = IntegerType::get(context, 32), i64 = IntegerType::get(context, 64);
  // (map, base, data type, rank, 5 dims, 4 strides, 5 boxes, swizzle).
  SmallVector<Type> inputs = {pointer, pointer, i32, i32};
  inputs.append(5, i64);
  inputs.append(4, i64);
  inputs.append(5, i32);
  inputs.push_back(i32);
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto encoder = func::FuncOp::create(builder, module.getLoc(), kName,
                                      FunctionType::get(context, inputs, {}));
  encoder.setPrivate();
  return encoder;
}

Value tma::encodeTensorMap(OpBuilder &b, Location loc, func::FuncOp encoder,
                           Value memref, int64_t byteOffset,
                           const TensorMapLayout &layout) {
  MLIRContext *context = b.getContext();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto pointer = LLVM::LLVMPointerType::get(context);
  auto mapType = LLVM::LLVMArrayType::get(i64, 16);
  auto i32Constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, value);
  };
  auto i64Constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, value);
  };
  Value slot = LLVM::AllocaOp::create(b, loc, pointer, mapType, i64Constant(1),
                                      /*alignment=*/64);
  Value base = arith::IndexCastUIOp::create(
      b, loc, i64,
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref));
  if (byteOffset != 0)
    base = arith::AddIOp::create(b, loc, base, i64Constant(byteOffset));
  SmallVector<Value> args = {
      slot, LLVM::IntToPtrOp::create(b, loc, pointer, base),
      i32Constant(layout.dataType),
      i32Constant(static_cast<int64_t>(layout.dims.size()))};
  for (size_t i = 0; i < 5; ++i)
    args.push_back(i64Constant(i < layout.dims.size() ? layout.dims[i] : 1));
  for (size_t i = 0; i < 4; ++i)
    args.push_back(
        i64Constant(i < layout.strides.size() ? layout.strides[i] : 0));
  for (size_t i = 0; i < 5; ++i)
    args.push_back(i32Constant(i < layout.boxes.size() ? layout.boxes[i] : 1));
  args.push_back(i32Constant(static_cast<int64_t>(layout.swizzle)));
  func::CallOp::create(b, loc, encoder, args);
  return LLVM::LoadOp::create(b, loc, mapType, slot, /*alignment=*/64);
}

Value tma::getKernelTensorMap(OpBuilder &b, Location loc, Value hostMap) {
  return UnrealizedConversionCastOp::create(
             b, loc, LLVM::LLVMPointerType::get(b.getContext()), hostMap)
      .getResult(0);
}

Value tma::getSharedPointer(OpBuilder &b, Location loc, Value memref,
                            Value byteOffset) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value address = arith::IndexCastUIOp::create(
      b, loc, b.getI64Type(), arith::AddIOp::create(b, loc, base, byteOffset));
  return LLVM::IntToPtrOp::create(
      b, loc,
      LLVM::LLVMPointerType::get(
          b.getContext(), static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared)),
      address);
}

void tma::createConsumerBarrier(OpBuilder &b, Location loc, int64_t threads) {
  auto i32 = [&](int64_t value) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value)
        .getResult();
  };
  NVVM::BarrierOp::create(b, loc, TypeRange{}, i32(1), i32(threads),
                          NVVM::BarrierReductionAttr(), Value());
}

void tma::waitParity(OpBuilder &b, Location loc, Value barrier, Value parity) {
  // try_wait's suspend-time hint, in nanoseconds: as upstream's nvgpu.
  constexpr int64_t kSuspendHint = 10000000;
  Type i32 = b.getI32Type();
  NVVM::MBarrierTryWaitParityOp::create(
      b, loc, barrier, arith::IndexCastUIOp::create(b, loc, i32, parity),
      arith::ConstantIntOp::create(b, loc, i32, kSuspendHint));
}

void tma::copyBox(OpBuilder &b, Location loc, Value shared, Value tensorMap,
                  ValueRange coords, Value barrier) {
  MLIRContext *context = b.getContext();
  SmallVector<Value> i32Coords;
  for (Value coord : coords)
    i32Coords.push_back(
        arith::IndexCastUIOp::create(b, loc, b.getI32Type(), coord));
  // A CTA's own shared memory is its part of the (trivial) cluster's.
  auto cluster = LLVM::LLVMPointerType::get(
      context, static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
  Value destination = LLVM::AddrSpaceCastOp::create(b, loc, cluster, shared);
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, loc, destination, tensorMap, i32Coords, barrier,
      /*im2colOffsets=*/ValueRange(), /*multicastMask=*/Value(),
      /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
      /*isCTAOnly=*/false, /*group=*/nullptr, /*predicate=*/Value());
}

/// The swizzle atom: 8 rows of 128 bytes.
static constexpr int64_t kSwizzleAtomBytes = 1024;
/// Bytes of an mbarrier.
static constexpr int64_t kMbarrierBytes = 8;

static Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

tma::DynamicSharedMemory::DynamicSharedMemory(OpBuilder &b, Location loc)
    : b(b), loc(loc) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  base = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(), workgroup));
  Value atom = indexConstant(b, loc, kSwizzleAtomBytes);
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, base);
  offset = arith::RemUIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, atom,
                            arith::RemUIOp::create(b, loc, address, atom)),
      atom);
}

Value tma::DynamicSharedMemory::carve(MemRefType type) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  auto bufferType = MemRefType::get(type.getShape(), type.getElementType(),
                                    MemRefLayoutAttrInterface(), workgroup);
  Value buffer =
      memref::ViewOp::create(b, loc, bufferType, base, offset, ValueRange());
  int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
  offset = arith::AddIOp::create(b, loc, offset, indexConstant(b, loc, bytes));
  return buffer;
}

Value tma::StageBarriers::getFull(OpBuilder &b, Location loc,
                                  Value stage) const {
  return getSharedPointer(
      b, loc, memref,
      arith::MulIOp::create(b, loc, stage,
                            indexConstant(b, loc, kMbarrierBytes)));
}

Value tma::StageBarriers::getEmpty(OpBuilder &b, Location loc,
                                   Value stage) const {
  return getFull(
      b, loc,
      arith::AddIOp::create(b, loc, stage, indexConstant(b, loc, stages)));
}

void tma::StageBarriers::initialize(OpBuilder &b, Location loc,
                                    int64_t consumers) const {
  Type i32 = b.getI32Type();
  for (int64_t i = 0; i < stages; ++i) {
    Value stage = indexConstant(b, loc, i);
    NVVM::MBarrierInitOp::create(b, loc, getFull(b, loc, stage),
                                 arith::ConstantIntOp::create(b, loc, i32, 1),
                                 Value());
    NVVM::MBarrierInitOp::create(
        b, loc, getEmpty(b, loc, stage),
        arith::ConstantIntOp::create(b, loc, i32, consumers), Value());
  }
}

Value tma::StageBarriers::acquire(OpBuilder &b, Location loc, Value step,
                                  int64_t bytes) const {
  Value count = indexConstant(b, loc, stages);
  Value two = indexConstant(b, loc, 2);
  Value stage = arith::RemUIOp::create(b, loc, step, count);
  auto reuse = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, step, count),
      /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(reuse.thenBlock()->getTerminator());
    // The previous phase: (round - 1) mod 2 = (round + 1) mod 2.
    Value round = arith::DivUIOp::create(b, loc, step, count);
    waitParity(
        b, loc, getEmpty(b, loc, stage),
        arith::RemUIOp::create(
            b, loc,
            arith::AddIOp::create(b, loc, round, indexConstant(b, loc, 1)),
            two));
  }
  // The phase completes with this arrival and the copies' bytes (whole
  // boxes: the zeros past the tensor's edges count too).
  Value full = getFull(b, loc, stage);
  NVVM::MBarrierArriveExpectTxOp::create(
      b, loc, Type(), full,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), bytes),
      NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/Value());
  return full;
}

void tma::StageBarriers::waitFull(OpBuilder &b, Location loc,
                                  Value step) const {
  Value count = indexConstant(b, loc, stages);
  waitParity(b, loc,
             getFull(b, loc, arith::RemUIOp::create(b, loc, step, count)),
             arith::RemUIOp::create(b, loc,
                                    arith::DivUIOp::create(b, loc, step, count),
                                    indexConstant(b, loc, 2)));
}

void tma::StageBarriers::release(OpBuilder &b, Location loc,
                                 Value stage) const {
  NVVM::MBarrierArriveOp::create(b, loc, b.getI64Type(),
                                 getEmpty(b, loc, stage), /*count=*/Value());
}
