//===- MmaFp8Staging.cpp - fp8 operands of the tensor-core GEMM
//-------------===//
//
// The e4m3 pieces of ridge-lower-mma-contractions (docs/precision.md): an
// fp8 kernel's activations are quantized on the way to shared memory, by
// computing their quantizing op's element with the per-tensor scale, and
// the scale's amax comes from launches of the kernel's own before the GEMM:
//
//   - buildScaleReductions: per activation, a one-thread launch zeroes its
//     amax, then blocks of 16 elements a thread fold max |x| into it (a
//     warp shuffle reduction, one `atom.global.max.u32` of the bits a warp);
//     the same folding serves a kernel that computes the amax of its own
//     result as it stores it (MmaContraction::resultAmaxes);
//   - getVectorLoadedInputs: the quantizing op's inputs that a K-major tile
//     reads with 16-byte loads, 4 elements at a time;
//   - getE4M3RoundingSource and packE4M3Chunk: the clamped f32 of each
//     element, rounded in pairs by `cvt.rn.satfinite.e4m3x2.f32`.
//
//===----------------------------------------------------------------------===//

#include "AtomicMaximum.h"
#include "MmaKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::ridge;

/// The f32 that `element` rounds to e4m3 when it is
/// `arith.truncf(clamp(x, -448, 448))` (an fp8 operand's quantizing op,
/// Fp8Contraction.cpp), else null: clamped first, the rounding is what
/// `cvt.rn.satfinite.e4m3x2.f32` computes (without the clamp, arith.truncf
/// gives NaN where cvt saturates).
Value MmaKernelBuilder::getE4M3RoundingSource(Value element) {
  auto trunc = element.getDefiningOp<arith::TruncFOp>();
  if (!trunc || !isa<Float8E4M3FNType>(trunc.getType()) ||
      !trunc.getIn().getType().isF32() || trunc.getRoundingmodeAttr())
    return {};
  auto isBound = [](Value v, double bound) {
    FloatAttr attr;
    return matchPattern(v, m_Constant(&attr)) &&
           attr.getValueAsDouble() == bound;
  };
  Value clamped = trunc.getIn();
  auto min = clamped.getDefiningOp<arith::MinimumFOp>();
  auto max = min ? min.getLhs().getDefiningOp<arith::MaximumFOp>() : nullptr;
  if (!min || !max || !isBound(min.getRhs(), 448.0) ||
      !isBound(max.getRhs(), -448.0))
    return {};
  return clamped;
}

SmallVector<OpOperand *>
MmaKernelBuilder::getVectorLoadedInputs(const StagedOperand &staged) {
  const MmaOperand &operand = *staged.operand;
  linalg::GenericOp producer = operand.producer;
  // K-major, one k loop: the tile's inner coordinate is k itself, read at
  // the operand's last dimension.
  if (!producer || !operand.kContiguous || product->kLoops.size() != 1 ||
      staged.innerExtent % kVectorLoadElements != 0 ||
      staged.chunkElements() % kVectorLoadElements != 0)
    return {};
  AffineMap operandMap = operand.map;
  unsigned kLoop = mma.getNumParallelLoops();
  auto lastDim = dyn_cast<AffineDimExpr>(
      operandMap.getResult(operandMap.getNumResults() - 1));
  if (!lastDim || lastDim.getPosition() != kLoop ||
      llvm::count_if(operandMap.getResults(), [&](AffineExpr expr) {
        return expr.isFunctionOfDim(kLoop);
      }) != 1)
    return {};
  unsigned kDim = operandMap.getNumResults() - 1; // the producer's loop
  SmallVector<OpOperand *> inputs;
  for (OpOperand *input : producer.getDpsInputOperands()) {
    if (producer.getMatchingBlockArgument(input).use_empty())
      continue;
    auto type = dyn_cast<MemRefType>(input->get().getType());
    AffineMap map = producer.getMatchingIndexingMap(input);
    if (!type || type.getRank() == 0 || map.getNumResults() == 0 ||
        !type.getLayout().isIdentity() || !type.getElementType().isF32() ||
        type.getShape().back() % kVectorLoadElements != 0)
      continue;
    auto last = dyn_cast<AffineDimExpr>(map.getResult(map.getNumResults() - 1));
    if (!last || last.getPosition() != kDim ||
        llvm::count_if(map.getResults(), [&](AffineExpr expr) {
          return expr.isFunctionOfDim(kDim);
        }) != 1)
      continue;
    inputs.push_back(input);
  }
  return inputs;
}

void MmaKernelBuilder::buildScaleReductions() {
  // Each thread folds kElementsPerThread elements, a block's threads
  // apart (coalesced), so a block covers threads * kElementsPerThread.
  constexpr int64_t kElementsPerThread = 16;
  Value one = index(1);
  for (MmaContraction::ScaleReduction scale : mma.scaleReductions) {
    Value input = scale.reduction.getDpsInputOperand(0)->get();
    Value amax = scale.reduction.getDpsInitOperand(0)->get();
    auto inputType = cast<MemRefType>(input.getType());
    int64_t count = inputType.getNumElements();
    createZeroingLaunch(b, loc, amax);
    int64_t perBlock = threads * kElementsPerThread;
    auto launch =
        gpu::LaunchOp::create(b, loc, index(llvm::divideCeil(count, perBlock)),
                              one, one, index(threads), one, one);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value thread = launch.getThreadIds().x;
    Value first = add(mul(launch.getBlockIds().x, perBlock), thread);
    Value local = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    for (int64_t i = 0; i < kElementsPerThread; ++i) {
      Value flat = add(first, i * threads);
      Value inBounds = lessThan(flat, count);
      // Clamped, so that the load stays inside the operand; what lies
      // past it counts as 0.
      Value at = minimum(flat, count - 1);
      SmallVector<Value> indices(inputType.getRank());
      for (int64_t d = inputType.getRank() - 1; d >= 0; --d) {
        indices[d] = rem(at, inputType.getDimSize(d));
        at = div(at, inputType.getDimSize(d));
      }
      Value magnitude = math::AbsFOp::create(
          b, loc, memref::LoadOp::create(b, loc, input, indices));
      Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
      local = arith::MaximumFOp::create(
          b, loc, local,
          arith::SelectOp::create(b, loc, inBounds, magnitude, zero));
    }
    createWarpMaxIntoBuffer(b, loc, local, rem(thread, kWarpSize), amax);
    gpu::TerminatorOp::create(b, loc);
  }
}

Value MmaKernelBuilder::packE4M3Chunk(ArrayRef<Value> elements,
                                      VectorType chunkType) {
  // Rounded in pairs, one `cvt.rn.satfinite.e4m3x2.f32` each (its first
  // source in the upper byte, the later element).
  SmallVector<Value> pairs;
  for (size_t i = 0; i < elements.size(); i += 2)
    pairs.push_back(NVVM::ConvertF32x2ToF8x2Op::create(
        b, loc, b.getI16Type(), elements[i + 1], elements[i],
        NVVM::FPRoundingMode::RN, NVVM::SaturationMode::SATFINITE,
        /*relu=*/false, chunkType.getElementType()));
  Value packed = vector::FromElementsOp::create(
      b, loc, VectorType::get({chunkType.getNumElements() / 2}, b.getI16Type()),
      pairs);
  return vector::BitCastOp::create(b, loc, chunkType, packed);
}
