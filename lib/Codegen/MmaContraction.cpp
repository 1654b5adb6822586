//===- MmaContraction.cpp - Contractions the tensor-core path takes -------===//

#include "ridgeline/Codegen/MmaContraction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::ridge;

/// Whether `op` sets its only output to zero: a linalg.fill, or a generic
/// with no inputs that yields a zero constant.
static bool isZeroFill(linalg::LinalgOp op) {
  if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation()))
    return matchPattern(fill.value(), m_AnyZeroFloat());
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || generic.getNumDpsInputs() != 0 ||
      generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 0)
    return false;
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  return yield.getNumOperands() == 1 &&
         matchPattern(yield.getOperand(0), m_AnyZeroFloat());
}

static bool isMmaType(Type type) { return type.isBF16() || type.isF16(); }

/// The 16-bit type the body multiplies block argument `arg` in, when `arg`
/// reaches the multiply as `extf(arg : bf16|f16)` or as
/// `extf(truncf(arg : f32) : bf16|f16)`; `use` is set to that extf.
static FloatType getMultipliedType(BlockArgument arg, Value &use) {
  if (!arg.hasOneUse())
    return {};
  Operation *user = *arg.getUsers().begin();
  Type argType = arg.getType();
  if (isMmaType(argType)) {
    auto ext = dyn_cast<arith::ExtFOp>(user);
    if (!ext || !ext.getType().isF32())
      return {};
    use = ext;
    return cast<FloatType>(argType);
  }
  if (!argType.isF32())
    return {};
  auto trunc = dyn_cast<arith::TruncFOp>(user);
  if (!trunc || !isMmaType(trunc.getType()) || !trunc->hasOneUse() ||
      trunc.getRoundingmodeAttr())
    return {};
  auto ext = dyn_cast<arith::ExtFOp>(*trunc->getUsers().begin());
  if (!ext || !ext.getType().isF32())
    return {};
  use = ext;
  return cast<FloatType>(trunc.getType());
}

/// Checks that the body is `out + a' * b'` with a' and b' the rounded
/// operands, and fills in their multiply types.
static LogicalResult matchBody(linalg::GenericOp op, MmaContraction &result,
                               std::string &reason) {
  Block *body = op.getBody();
  Value lhsUse, rhsUse;
  result.lhs.mmaType = getMultipliedType(body->getArgument(0), lhsUse);
  result.rhs.mmaType = getMultipliedType(body->getArgument(1), rhsUse);
  if (!result.lhs.mmaType || !result.rhs.mmaType) {
    reason = "operands are not multiplied in bf16 or f16";
    return failure();
  }
  if (result.lhs.mmaType != result.rhs.mmaType) {
    reason = "operands are multiplied in different types";
    return failure();
  }
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add) {
    reason = "body does not accumulate with addf";
    return failure();
  }
  Value acc = body->getArgument(2);
  Value product = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if ((add.getLhs() != acc && add.getRhs() != acc) || !mul ||
      !((mul.getLhs() == lhsUse && mul.getRhs() == rhsUse) ||
        (mul.getLhs() == rhsUse && mul.getRhs() == lhsUse)) ||
      body->getOperations().size() >
          static_cast<size_t>(
              3 + (body->getArgument(0).getType().isF32() ? 2 : 1) +
              (body->getArgument(1).getType().isF32() ? 2 : 1))) {
    reason = "body is not acc + a * b";
    return failure();
  }
  return success();
}

/// Checks the map of one operand over (batch..., m, n, k): batch results
/// are batch dims or the constant 0 (broadcast), the last two are {row, k}
/// in either order, where `row` is m (lhs) or n (rhs).
static LogicalResult matchOperandMap(MmaOperand &operand, unsigned numBatch,
                                     unsigned rowDim) {
  AffineMap map = operand.map;
  unsigned numResults = map.getNumResults();
  unsigned kDim = numBatch + 2;
  if (numResults < 2 || map.getNumSymbols() != 0)
    return failure();
  for (AffineExpr expr : map.getResults().drop_back(2)) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      if (dim.getPosition() >= numBatch)
        return failure();
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0)
      return failure();
  }
  AffineExpr outer = map.getResult(numResults - 2);
  AffineExpr inner = map.getResult(numResults - 1);
  if (outer.isFunctionOfDim(rowDim) && isa<AffineDimExpr>(outer) &&
      inner.isFunctionOfDim(kDim) && isa<AffineDimExpr>(inner)) {
    operand.kContiguous = true;
    return success();
  }
  if (outer.isFunctionOfDim(kDim) && isa<AffineDimExpr>(outer) &&
      inner.isFunctionOfDim(rowDim) && isa<AffineDimExpr>(inner)) {
    operand.kContiguous = false;
    return success();
  }
  return failure();
}

/// Whether the innermost dimension of `value` is contiguous (a tensor, or a
/// buffer with unit innermost stride): 16-byte vector loads need it.
static bool hasContiguousRows(Value value) {
  auto memref = dyn_cast<MemRefType>(value.getType());
  return !memref || memref.isLastDimUnitStride();
}

static LogicalResult matchContraction(linalg::GenericOp op,
                                      MmaContraction &result,
                                      std::string &reason) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1) {
    reason = "not a two-operand contraction";
    return failure();
  }
  unsigned numLoops = op.getNumLoops();
  if (numLoops < 3 || op.getIteratorTypesArray()[numLoops - 1] !=
                          utils::IteratorType::reduction) {
    reason = "the reduction is not the innermost loop";
    return failure();
  }
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (outMap != AffineMap::getMultiDimIdentityMap(numLoops, op.getContext())
                    .getMajorSubMap(numLoops - 1)) {
    reason = "the result is not indexed by the parallel loops";
    return failure();
  }
  if (!getElementTypeOrSelf(init->get().getType()).isF32()) {
    reason = "the accumulator is not f32";
    return failure();
  }
  unsigned numBatch = numLoops - 3;
  result.lhs.value = op.getDpsInputOperand(0)->get();
  result.rhs.value = op.getDpsInputOperand(1)->get();
  result.lhs.map = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  result.rhs.map = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  if (failed(matchOperandMap(result.lhs, numBatch, numBatch)) ||
      failed(matchOperandMap(result.rhs, numBatch, numBatch + 1))) {
    reason = "operand maps are not (batch..., m|n, k) in some order";
    return failure();
  }
  if (!hasContiguousRows(result.lhs.value) ||
      !hasContiguousRows(result.rhs.value)) {
    reason = "an operand's rows are strided";
    return failure();
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic)) {
    reason = "dynamic loop extents";
    return failure();
  }
  result.batch.assign(ranges.begin(), ranges.begin() + numBatch);
  result.m = ranges[numBatch];
  result.n = ranges[numBatch + 1];
  result.k = ranges[numBatch + 2];
  // Operands are staged in chunks of 8 elements (16 bytes of bf16) along
  // their contiguous dimension, and accumulators stored in pairs along n.
  int64_t lhsInner = result.lhs.kContiguous ? result.k : result.m;
  int64_t rhsInner = result.rhs.kContiguous ? result.k : result.n;
  if (lhsInner % 8 != 0 || rhsInner % 8 != 0 || result.n % 8 != 0) {
    reason = "contiguous extents are not multiples of 8";
    return failure();
  }
  return matchBody(op, result, reason);
}

/// Whether `epilogue` is an elementwise op over the contraction's result
/// space that reads `result` once, element for element, and writes one
/// result in the same space.
static LogicalResult matchEpilogue(linalg::GenericOp epilogue, Value result,
                                   unsigned rank, std::string &reason) {
  if (epilogue.getNumReductionLoops() != 0 || epilogue.getNumLoops() != rank ||
      epilogue.getNumDpsInits() != 1) {
    reason = "epilogue is not elementwise over the result";
    return failure();
  }
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(rank, epilogue.getContext());
  unsigned reads = 0;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    AffineMap map = epilogue.getMatchingIndexingMap(input);
    if (input->get() == result) {
      if (map != identity) {
        reason = "epilogue reads the contraction through a non-identity map";
        return failure();
      }
      ++reads;
    } else if (!map.isProjectedPermutation(/*allowZeroInResults=*/true)) {
      reason = "epilogue operand map is not a projected permutation";
      return failure();
    }
  }
  if (reads != 1 || epilogue.getMatchingIndexingMap(
                        epilogue.getDpsInitOperand(0)) != identity) {
    reason = "epilogue does not map the contraction to its result";
    return failure();
  }
  for (Operation &op : epilogue.getBody()->without_terminator())
    if (op.getNumRegions() != 0) {
      reason = "epilogue body has regions";
      return failure();
    }
  return success();
}

FailureOr<MmaContraction>
mlir::ridge::matchMmaContraction(func::FuncOp kernel, std::string &reason) {
  if (kernel.isExternal() || !kernel.getBody().hasOneBlock()) {
    reason = "not a single-block kernel";
    return failure();
  }
  SmallVector<linalg::LinalgOp> ops;
  for (Operation &op : kernel.front()) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      ops.push_back(linalgOp);
      continue;
    }
    // Views, constants, buffers and the return are what may surround them.
    if (op.getNumRegions() != 0) {
      reason = "kernel has an op with regions";
      return failure();
    }
  }
  if (ops.size() < 2 || ops.size() > 3 || !isZeroFill(ops[0])) {
    reason = "kernel is not fill, contraction, epilogue";
    return failure();
  }
  MmaContraction result;
  result.fill = ops[0];
  result.contraction = ops[1];
  auto contraction = dyn_cast<linalg::GenericOp>(ops[1].getOperation());
  if (!contraction) {
    reason = "contraction is not a linalg.generic";
    return failure();
  }
  if (failed(matchContraction(contraction, result, reason)))
    return failure();
  bool onTensors = contraction.hasPureTensorSemantics();
  Value acc = onTensors ? contraction->getResult(0)
                        : contraction.getDpsInitOperand(0)->get();
  Value filled = onTensors ? result.fill->getResult(0)
                           : result.fill.getDpsInitOperand(0)->get();
  if (contraction.getDpsInitOperand(0)->get() != filled) {
    reason = "contraction does not accumulate into the zero fill";
    return failure();
  }
  unsigned rank = contraction.getNumLoops() - 1;
  if (ops.size() == 3) {
    result.epilogue = dyn_cast<linalg::GenericOp>(ops[2].getOperation());
    if (!result.epilogue) {
      reason = "epilogue is not a linalg.generic";
      return failure();
    }
    if (failed(matchEpilogue(result.epilogue, acc, rank, reason)))
      return failure();
    // The accumulator is read by the epilogue only (on buffers: written by
    // the fill and the contraction, freed after).
    for (Operation *user : acc.getUsers()) {
      if (user == result.epilogue || user == result.fill ||
          user == contraction || isa<memref::DeallocOp>(user))
        continue;
      reason = "the contraction's result has another use";
      return failure();
    }
    // On buffers the accumulator is a buffer of the kernel's own, or the
    // epilogue's result buffer when bufferization computed it in place.
    Value epilogueInit = result.epilogue.getDpsInitOperand(0)->get();
    if (!onTensors && !acc.getDefiningOp<memref::AllocOp>() &&
        acc != epilogueInit) {
      reason = "the accumulator is not a buffer of the kernel's own";
      return failure();
    }
    if (!onTensors && acc == epilogueInit &&
        !result.epilogue
             .getMatchingBlockArgument(result.epilogue.getDpsInitOperand(0))
             .use_empty()) {
      reason = "the epilogue reads its in-place result";
      return failure();
    }
  } else if (!onTensors && !isa<BlockArgument>(acc)) {
    reason = "the contraction's result is not the kernel's";
    return failure();
  }
  return result;
}
