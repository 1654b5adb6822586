//===- MmaContraction.cpp - Contractions the tensor-core path takes -------===//

#include "ridgeline/Codegen/MmaContraction.h"
#include "ridgeline/Codegen/KernelConfig.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::ridge;

bool mlir::ridge::isZeroFill(linalg::LinalgOp op) {
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

static bool isMmaType(Type type) {
  return type.isBF16() || type.isF16() || type.isTF32() ||
         isa<Float8E4M3FNType>(type);
}

bool mlir::ridge::isScaleReduction(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != 0)
    return false;
  auto init = dyn_cast<ShapedType>(generic.getDpsInits()[0].getType());
  if (!init || init.getRank() != 0 || !init.getElementType().isF32())
    return false;
  Block *body = generic.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto max = yield.getOperand(0).getDefiningOp<arith::MaximumFOp>();
  if (!max || body->getOperations().size() != 3)
    return false;
  auto abs = max.getRhs().getDefiningOp<math::AbsFOp>();
  return abs && abs.getOperand() == body->getArgument(0) &&
         max.getLhs() == body->getArgument(1);
}

namespace {
/// The loops a value of a contraction's body depends on, and the ops that
/// compute it there (to be cloned per element by the kernel builder).
struct BodySlice {
  llvm::SmallBitVector loops;
  llvm::SetVector<Operation *> ops;
};
} // namespace

/// Adds the computation of `value` (a value used in `body`) to `slice`.
/// `counted` says whether its loops count as dependences: an affine.apply
/// operand its map does not use is cloned but read by nobody. Fails on block
/// arguments (an operand element or the accumulator) and on ops that are
/// not pure computations or loads.
static LogicalResult collectBodySlice(Value value, Block *body,
                                      BodySlice &slice, bool counted) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return failure(arg.getOwner() == body);
  Operation *op = value.getDefiningOp();
  if (op->getBlock() != body)
    return success();
  if (auto index = dyn_cast<linalg::IndexOp>(op)) {
    if (counted)
      slice.loops.set(index.getDim());
    slice.ops.insert(op);
    return success();
  }
  if (op->getNumRegions() != 0 ||
      !(isPure(op) || isa<memref::LoadOp, tensor::ExtractOp>(op)))
    return failure();
  auto apply = dyn_cast<affine::AffineApplyOp>(op);
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    bool used = true;
    if (apply) {
      AffineMap map = apply.getAffineMap();
      used = i < map.getNumDims()
                 ? map.isFunctionOfDim(i)
                 : map.isFunctionOfSymbol(i - map.getNumDims());
    }
    if (failed(collectBodySlice(operand, body, slice, counted && used)))
      return failure();
  }
  slice.ops.insert(op);
  return success();
}

/// One multiplied value of the body: `ext` is the extf the multiply reads;
/// its source is `extf(x : bf16|f16)` or `extf(truncf(x : f32))`, x an
/// operand's block argument or a value the body computes.
static LogicalResult matchMultiplied(Value ext, linalg::GenericOp op,
                                     MmaOperand &operand, BodySlice &slice,
                                     SmallVectorImpl<Operation *> &chain,
                                     bool allowF32) {
  auto extOp = ext.getDefiningOp<arith::ExtFOp>();
  Value source;
  if (extOp && extOp.getType().isF32() && extOp->hasOneUse() &&
      isMmaType(extOp.getIn().getType())) {
    chain.push_back(extOp);
    source = extOp.getIn();
  } else if (allowF32 && ext.getType().isF32() && !extOp) {
    // Multiplied as stored, in f32 (the bandwidth path).
    source = ext;
  } else {
    return failure();
  }
  operand.mmaType = cast<FloatType>(source.getType());
  // An f32 value the body rounds (ridge-select-precision), or a value
  // stored in the multiply type.
  if (auto trunc = source.getDefiningOp<arith::TruncFOp>();
      trunc && trunc->getBlock() == op.getBody() &&
      trunc.getIn().getType().isF32()) {
    if (!trunc->hasOneUse() || trunc.getRoundingmodeAttr())
      return failure();
    chain.push_back(trunc);
    source = trunc.getIn();
  }
  operand.elementType = source.getType();
  // tf32 is a rounding of f32 values only.
  if (operand.mmaType.isTF32() && !operand.elementType.isF32())
    return failure();
  Block *body = op.getBody();
  slice.loops.resize(op.getNumLoops());
  if (auto arg = dyn_cast<BlockArgument>(source);
      arg && arg.getOwner() == body) {
    if (arg.getArgNumber() >= op.getNumDpsInputs() || !arg.hasOneUse())
      return failure();
    OpOperand *input = op.getDpsInputOperand(arg.getArgNumber());
    operand.value = input->get();
    operand.map = op.getMatchingIndexingMap(input);
    for (unsigned dim = 0; dim < op.getNumLoops(); ++dim)
      if (operand.map.isFunctionOfDim(dim))
        slice.loops.set(dim);
    return success();
  }
  if (!source.hasOneUse())
    return failure();
  operand.bodyValue = source;
  return collectBodySlice(source, body, slice, /*counted=*/true);
}

/// Whether every element `value` holds is a tf32 value (an f32 whose 13
/// low mantissa bits are zero), known at compile time: a constant tensor,
/// or (bufferized) the constant global a memref.get_global reads, through
/// reshapes.
static bool holdsTf32Values(Value value) {
  while (Operation *def = value ? value.getDefiningOp() : nullptr) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             memref::ExpandShapeOp, memref::CollapseShapeOp>(def))
      break;
    value = def->getOperand(0);
  }
  if (!value || !getElementTypeOrSelf(value.getType()).isF32())
    return false;
  Attribute attr;
  if (auto constant = value.getDefiningOp<arith::ConstantOp>()) {
    attr = constant.getValue();
  } else if (auto get = value.getDefiningOp<memref::GetGlobalOp>()) {
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        get, get.getNameAttr());
    if (!global || !global.getConstant())
      return false;
    attr = global.getInitialValue().value_or(Attribute());
  }
  auto isTf32 = [](uint32_t bits) { return (bits & 0x1fffu) == 0; };
  if (auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return false;
    ArrayRef<char> bytes = blob->getData();
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      uint32_t bits;
      std::memcpy(&bits, bytes.data() + i, 4);
      if (!isTf32(bits))
        return false;
    }
    return true;
  }
  if (auto dense = dyn_cast_or_null<DenseFPElementsAttr>(attr))
    return llvm::all_of(dense.getValues<APFloat>(), [&](const APFloat &x) {
      return isTf32(static_cast<uint32_t>(x.bitcastToAPInt().getZExtValue()));
    });
  return false;
}

/// Whether the innermost dimension of `value` is contiguous (a tensor, or a
/// buffer with unit innermost stride): 16-byte vector loads need it.
static bool hasContiguousRows(Value value) {
  auto memref = dyn_cast<MemRefType>(value.getType());
  return !memref || memref.isLastDimUnitStride();
}

/// Whether each of `results` (an operand's leading map results) is a batch
/// loop or the constant 0 (a batch dimension the operand broadcasts).
static bool readsBatchOnly(ArrayRef<AffineExpr> results, unsigned numBatch) {
  return llvm::all_of(results, [&](AffineExpr expr) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      return dim.getPosition() < numBatch;
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    return constant && constant.getValue() == 0;
  });
}

/// Whether loop `dim` is a row loop of A (`isLhs`: m) or B (n) of extent 1
/// beside a longer one: it reads index 0 wherever a map puts it (a
/// sequence-first [L, 1, E] activation read as [1, L, E]), so the layout
/// checks leave it out, as they leave out batch loops.
static bool isUnitRowLoop(const MmaContraction &mma, bool isLhs, unsigned dim) {
  ArrayRef<int64_t> rowLoops = isLhs ? mma.mLoops : mma.nLoops;
  unsigned firstRow = mma.batch.size() + (isLhs ? 0 : mma.mLoops.size());
  return dim >= firstRow && dim < firstRow + rowLoops.size() &&
         rowLoops[dim - firstRow] == 1 &&
         llvm::any_of(rowLoops, [](int64_t extent) { return extent != 1; });
}

/// isUnitRowLoop for a map result that is a loop.
static bool isUnitRowLoop(const MmaContraction &mma, bool isLhs,
                          AffineExpr expr) {
  auto dim = dyn_cast<AffineDimExpr>(expr);
  return dim && isUnitRowLoop(mma, isLhs, dim.getPosition());
}

/// Whether map result `expr` is loop `dim`.
static bool isLoop(AffineExpr expr, unsigned dim) {
  auto loop = dyn_cast<AffineDimExpr>(expr);
  return loop && loop.getPosition() == dim;
}

/// Whether `operand` is read through (batch..., row, k0, ..., kr) with
/// every k loop in order, and those trailing dimensions are contiguous with
/// whole chunks of k (on tensors, assumed; on buffers, by the strides): k is
/// then one contiguous dimension of a collapsed view.
static bool isCollapsibleK(const MmaOperand &operand, const MmaContraction &mma,
                           const MmaProduct &product, bool isLhs) {
  ArrayRef<int64_t> rowLoops = isLhs ? mma.mLoops : mma.nLoops;
  unsigned numBatch = mma.batch.size();
  unsigned firstRow = isLhs ? numBatch : numBatch + mma.mLoops.size();
  unsigned firstK = mma.getNumParallelLoops();
  unsigned numK = product.kLoops.size();
  AffineMap map = operand.map;
  unsigned numResults = map.getNumResults();
  // The operand's one row loop; unit row loops beside it (a sequence-first
  // [L, 1, E] product's weight read as [1, E, ...]) may stand before it.
  unsigned rowLoop = firstRow, numRows = 0;
  for (unsigned i = 0; i < rowLoops.size(); ++i)
    if (!isUnitRowLoop(mma, isLhs, firstRow + i)) {
      rowLoop = firstRow + i;
      ++numRows;
    }
  if (numRows != 1 || numResults < numK + 1 || map.getNumSymbols() != 0 ||
      product.k % operand.getChunkElements() != 0)
    return false;
  unsigned first = numResults - numK;
  if (!isLoop(map.getResult(first - 1), rowLoop))
    return false;
  for (unsigned i = 0; i < numK; ++i)
    if (!isLoop(map.getResult(first + i), firstK + i))
      return false;
  for (AffineExpr expr : map.getResults().take_front(first - 1))
    if (!isUnitRowLoop(mma, isLhs, expr) && !readsBatchOnly(expr, numBatch))
      return false;
  auto memref = dyn_cast<MemRefType>(operand.value.getType());
  if (!memref)
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)))
    return false;
  int64_t expected = 1;
  for (unsigned i = numResults; i > first; --i) {
    if (strides[i - 1] != expected)
      return false;
    expected *= memref.getDimSize(i - 1);
  }
  return true;
}

/// Whether A `operand` is read through its batch loops (or 0), its one row
/// loop and each of its several k loops once, in any order but the
/// innermost k loop last, and that loop a whole number of chunks: an
/// attention's output projection reads the heads' outputs [batch, heads,
/// rows, d] with k = (heads, d). A chunk of k (8 or 4 consecutive d of one
/// head) is then 16 contiguous bytes at the loop indices its flat k
/// decodes to (on buffers, hasContiguousRows has checked the stride).
static bool readsInnermostKLast(const MmaOperand &operand,
                                const MmaContraction &mma,
                                const MmaProduct &product) {
  unsigned numBatch = mma.batch.size();
  unsigned firstK = mma.getNumParallelLoops();
  unsigned numK = product.kLoops.size();
  AffineMap map = operand.map;
  if (mma.mLoops.size() != 1 || map.getNumSymbols() != 0 ||
      map.getNumResults() == 0 ||
      product.kLoops.back() % operand.getChunkElements() != 0)
    return false;
  auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
  if (!last || last.getPosition() != firstK + numK - 1)
    return false;
  llvm::SmallDenseSet<unsigned> read;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      unsigned position = dim.getPosition();
      if (position < numBatch)
        continue;
      bool own = position == numBatch ||
                 (position >= firstK && position < firstK + numK);
      if (!own || !read.insert(position).second)
        return false;
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0)
      return false;
  }
  return read.size() == 1 + numK;
}

/// Whether B `operand` is read through (batch..., k0, ..., kr, n loops...)
/// with pure loop results, the last n loop a whole number of 16-byte chunks
/// (MmaOperand::rowsAfterK).
static bool readsRowsAfterK(const MmaOperand &operand,
                            const MmaContraction &mma,
                            const MmaProduct &product) {
  unsigned numBatch = mma.batch.size();
  unsigned firstRow = numBatch + mma.mLoops.size();
  unsigned firstK = mma.getNumParallelLoops();
  unsigned numK = product.kLoops.size(), numRows = mma.nLoops.size();
  AffineMap map = operand.map;
  unsigned numResults = map.getNumResults();
  if (numResults < numK + numRows || map.getNumSymbols() != 0 ||
      mma.nLoops.back() % operand.getChunkElements() != 0)
    return false;
  auto isDim = [&](unsigned result, unsigned dim) {
    auto expr = dyn_cast<AffineDimExpr>(map.getResult(result));
    return expr && expr.getPosition() == dim;
  };
  unsigned first = numResults - numK - numRows;
  for (unsigned i = 0; i < numK; ++i)
    if (!isDim(first + i, firstK + i))
      return false;
  for (unsigned i = 0; i < numRows; ++i)
    if (!isDim(first + numK + i, firstRow + i))
      return false;
  return readsBatchOnly(map.getResults().take_front(first), numBatch);
}

/// Whether `type` (a buffer or tensor a chunked gather reads) holds whole,
/// 16-byte aligned chunks of `chunk` elements along its contiguous last
/// dimension.
static bool holdsWholeChunks(Type type, int64_t chunk) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape() || shaped.getRank() == 0 ||
      shaped.getShape().back() % chunk != 0)
    return false;
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || offset % chunk != 0 ||
      strides.back() != 1)
    return false;
  return llvm::all_of(ArrayRef(strides).drop_back(), [&](int64_t stride) {
    return !ShapedType::isDynamic(stride) && stride % chunk == 0;
  });
}

SetVector<Operation *> mlir::ridge::getBodySlice(Value value, Block *body) {
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.filter = [&](Operation *op) { return op->getBlock() == body; };
  options.inclusive = true;
  if (failed(getBackwardSlice(value, &slice, options)))
    slice.clear();
  return slice;
}

ChunkComputation mlir::ridge::splitChunkComputation(const MmaOperand &operand) {
  ChunkComputation split;
  Operation *load = operand.chunkLoad;
  Block *body = load->getBlock();
  SetVector<Operation *> slice = getBodySlice(operand.bodyValue, body);
  for (Operation &op : body->without_terminator()) {
    if (!slice.contains(&op))
      continue;
    bool readsLoaded = llvm::any_of(op.getOperands(), [&](Value value) {
      Operation *def = value.getDefiningOp();
      return def && split.dependents.contains(def);
    });
    if (&op == load || readsLoaded)
      split.dependents.insert(&op);
    else
      split.independent.insert(&op);
  }
  return split;
}

/// Whether gathered A `operand` of `op` reads each chunk of k from
/// consecutive elements of one buffer (MmaOperand::chunkedGather).
static bool isChunkedGather(MmaOperand &operand, linalg::GenericOp op,
                            const MmaContraction &mma,
                            const MmaProduct &product) {
  unsigned kLoop = mma.getNumParallelLoops() + product.kLoops.size() - 1;
  int64_t chunk = operand.getChunkElements();
  if (!operand.kContiguous || product.kLoops.back() % chunk != 0)
    return false;
  if (operand.value) {
    AffineMap map = operand.map;
    if (map.getNumResults() == 0 || map.getNumSymbols() != 0)
      return false;
    auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
    return last && last.getPosition() == kLoop &&
           llvm::none_of(
               map.getResults().drop_back(),
               [&](AffineExpr expr) { return expr.isFunctionOfDim(kLoop); }) &&
           holdsWholeChunks(operand.value.getType(), chunk);
  }
  // Computed by the body (a padded window): one load, whose last index is
  // the innermost k loop's index, which nothing else of the computation
  // reads.
  Block *body = op.getBody();
  SetVector<Operation *> slice = getBodySlice(operand.bodyValue, body);
  Operation *load = nullptr;
  for (Operation *sliced : slice) {
    if (!isa<memref::LoadOp, tensor::ExtractOp>(sliced))
      continue;
    if (load)
      return false;
    load = sliced;
  }
  if (!load || load->getNumOperands() < 2 ||
      load->getOperand(0).getParentBlock() == body ||
      !holdsWholeChunks(load->getOperand(0).getType(), chunk))
    return false;
  auto lastIndex = load->getOperands().back().getDefiningOp<linalg::IndexOp>();
  if (!lastIndex || lastIndex.getDim() != kLoop)
    return false;
  for (Operation *sliced : slice) {
    auto index = dyn_cast<linalg::IndexOp>(sliced);
    if (!index || index.getDim() != kLoop)
      continue;
    for (OpOperand &use : index->getUses())
      if (slice.contains(use.getOwner()) &&
          (use.getOwner() != load ||
           use.getOperandNumber() != load->getNumOperands() - 1))
        return false;
  }
  // What follows the load applies to the whole chunk at once: elementwise
  // ops of one result (a select, conversions).
  operand.chunkLoad = load;
  ChunkComputation split = splitChunkComputation(operand);
  if (!llvm::all_of(split.dependents, [&](Operation *dependent) {
        return dependent == load ||
               (OpTrait::hasElementwiseMappableTraits(dependent) &&
                dependent->getNumRegions() == 0 &&
                dependent->getNumResults() == 1);
      })) {
    operand.chunkLoad = nullptr;
    return false;
  }
  return true;
}

/// Whether a chunked gather's chunk is its stored bytes or zeros
/// (MmaOperand::zeroFilledChunks).
static bool isZeroFilledChunk(const MmaOperand &operand, linalg::GenericOp op) {
  Type staged = operand.getStagedType();
  if (operand.value)
    return operand.elementType == staged;
  Operation *load = operand.chunkLoad;
  if (getElementTypeOrSelf(load->getOperand(0).getType()) != staged)
    return false;
  // From the load to the body's value: extf of the staged type, a select of
  // it or +0.0 by a condition that does not depend on it (the chain's truncf
  // back to the staged type follows the body's value).
  Value current = load->getResult(0);
  SetVector<Operation *> slice = getBodySlice(operand.bodyValue, op.getBody());
  while (current != operand.bodyValue) {
    if (!current.hasOneUse())
      return false;
    Operation *user = *current.getUsers().begin();
    if (!slice.contains(user))
      return false;
    if (auto ext = dyn_cast<arith::ExtFOp>(user)) {
      if (ext.getIn().getType() != staged)
        return false;
    } else if (auto select = dyn_cast<arith::SelectOp>(user)) {
      FloatAttr zero;
      if (select.getTrueValue() != current ||
          !matchPattern(select.getFalseValue(), m_Constant(&zero)) ||
          !zero.getValue().isPosZero() ||
          getBodySlice(select.getCondition(), op.getBody()).contains(load))
        return false;
    } else {
      return false;
    }
    current = user->getResult(0);
  }
  return true;
}

/// Decides how `operand` (A when `isLhs`, else B) is staged: with 16-byte
/// loads when it is an operand read through (batch..., rows..., k) or
/// (batch..., k, rows...) with one k loop, its rows contiguous and its
/// contiguous extent whole chunks, or (several k loops) through a view
/// that collapses them, or (A) at the indices each chunk's flat k decodes
/// to, its innermost k loop last (readsInnermostKLast); element by element
/// otherwise.
static void decideStaging(MmaOperand &operand, const MmaContraction &mma,
                          const MmaProduct &product, bool isLhs) {
  unsigned numBatch = mma.batch.size();
  unsigned firstRow = isLhs ? numBatch : numBatch + mma.mLoops.size();
  ArrayRef<int64_t> rowLoops = isLhs ? mma.mLoops : mma.nLoops;
  unsigned kDim = mma.getNumParallelLoops();
  // Gathered A is staged along k (weights are stored k-contiguous), gathered
  // B along n (a convolution's output pixels are neighbours in its input);
  // e4m3 along k always (wgmma reads it only K-major, and the fp8 lowering
  // stores it k-contiguous).
  operand.gathered = true;
  operand.kContiguous = isLhs || isa<Float8E4M3FNType>(operand.mmaType);
  if (!operand.value || !hasContiguousRows(operand.value))
    return;
  if (product.kLoops.size() > 1) {
    if (isCollapsibleK(operand, mma, product, isLhs)) {
      // Its k loops are its last, contiguous dimensions: k-contiguous as
      // either operand (a channels-last convolution's [M, kh, kw, C]
      // weights are B).
      operand.gathered = false;
      operand.collapsedK = true;
      operand.kContiguous = true;
    } else if (isLhs) {
      operand.gathered = !readsInnermostKLast(operand, mma, product);
    } else {
      // Rows after k (a patchified convolution's [c, kh, kw, n] weight, an
      // attention output projection's [heads, d, n]): a chunk of n is 16
      // contiguous bytes at the loop indices its flat k decodes to, so it is
      // staged as an n-contiguous [k, n] matrix (cp.async or TMA), not
      // element by element. e4m3 is staged K-major (wgmma reads it only
      // so), which these strides do not give.
      operand.rowsAfterK = readsRowsAfterK(operand, mma, product);
      operand.gathered = !operand.rowsAfterK || operand.kContiguous;
    }
    return;
  }
  AffineMap map = operand.map;
  if (map.getNumSymbols() != 0)
    return;
  // Unit row loops (isUnitRowLoop) are left out of the order checks.
  SmallVector<unsigned> rowDims;
  for (unsigned i = 0; i < rowLoops.size(); ++i)
    if (!isUnitRowLoop(mma, isLhs, firstRow + i))
      rowDims.push_back(firstRow + i);
  SmallVector<AffineExpr> results;
  for (AffineExpr expr : map.getResults())
    if (!isUnitRowLoop(mma, isLhs, expr))
      results.push_back(expr);
  unsigned numResults = results.size();
  unsigned numOwn = rowDims.size() + 1;
  if (numResults < numOwn)
    return;
  if (!readsBatchOnly(ArrayRef(results).drop_back(numOwn), numBatch))
    return;
  // The operand's own results: its row loops in order and k, k last
  // (k-contiguous) or first.
  auto isDim = [&](unsigned result, unsigned dim) {
    auto expr = dyn_cast<AffineDimExpr>(results[result]);
    return expr && expr.getPosition() == dim;
  };
  unsigned first = numResults - numOwn;
  auto rowsFrom = [&](unsigned result) {
    for (unsigned i = 0; i < rowDims.size(); ++i)
      if (!isDim(result + i, rowDims[i]))
        return false;
    return true;
  };
  bool kContiguous;
  if (rowsFrom(first) && isDim(numResults - 1, kDim))
    kContiguous = true;
  else if (isDim(first, kDim) && rowsFrom(first + 1))
    kContiguous = false;
  else
    return;
  // Chunks of 16 bytes (8 bf16, 4 tf32-rounded f32) along the contiguous
  // dimension, inside one row of it.
  int64_t innerExtent =
      kContiguous ? product.k : rowLoops[rowDims.back() - firstRow];
  if (innerExtent % operand.getChunkElements() != 0)
    return;
  operand.gathered = false;
  operand.kContiguous = kContiguous;
  operand.rowsAfterK = !isLhs && !kContiguous;
}

/// Matches one product's contraction; its output loops go to `result`'s
/// batch, mLoops, nLoops, m and n.
static LogicalResult matchContraction(linalg::GenericOp op, MmaProduct &product,
                                      MmaContraction &result,
                                      std::string &reason, bool allowF32) {
  if (op.getNumDpsInits() != 1 || op.getNumDpsInputs() > 2) {
    reason = "not a contraction of at most two operands";
    return failure();
  }
  unsigned numLoops = op.getNumLoops();
  unsigned numParallel = op.getNumParallelLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (numParallel < 2 || numParallel == numLoops ||
      llvm::any_of(ArrayRef(iterators).drop_front(numParallel),
                   [](utils::IteratorType type) {
                     return type != utils::IteratorType::reduction;
                   })) {
    reason = "the reductions are not the innermost loops";
    return failure();
  }
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (outMap != AffineMap::getMultiDimIdentityMap(numLoops, op.getContext())
                    .getMajorSubMap(numParallel)) {
    reason = "the result is not indexed by the parallel loops";
    return failure();
  }
  if (!getElementTypeOrSelf(init->get().getType()).isF32()) {
    reason = "the accumulator is not f32";
    return failure();
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic)) {
    reason = "dynamic loop extents";
    return failure();
  }
  // (An empty loop leaves the result its init: nothing to multiply.)
  if (llvm::is_contained(ranges, 0)) {
    reason = "a loop of zero iterations";
    return failure();
  }

  // The body: yield(acc + x' * y'), x' and y' the rounded operands.
  Block *body = op.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  Value acc = body->getArgument(body->getNumArguments() - 1);
  if (!add || (add.getLhs() != acc && add.getRhs() != acc) ||
      !acc.hasOneUse()) {
    reason = "body does not accumulate with addf";
    return failure();
  }
  auto mul = (add.getLhs() == acc ? add.getRhs() : add.getLhs())
                 .getDefiningOp<arith::MulFOp>();
  if (!mul || !mul->hasOneUse()) {
    reason = "body is not acc + a * b";
    return failure();
  }
  MmaOperand x, y;
  BodySlice xSlice, ySlice;
  SmallVector<Operation *> chain{mul, add};
  if (failed(matchMultiplied(mul.getLhs(), op, x, xSlice, chain, allowF32)) ||
      failed(matchMultiplied(mul.getRhs(), op, y, ySlice, chain, allowF32))) {
    reason = "operands are not multiplied in bf16, f16, tf32 or e4m3";
    return failure();
  }
  if (x.mmaType != y.mmaType) {
    reason = "operands are multiplied in different types";
    return failure();
  }
  llvm::SetVector<Operation *> computed(xSlice.ops.begin(), xSlice.ops.end());
  computed.insert(ySlice.ops.begin(), ySlice.ops.end());
  if (body->getOperations().size() != computed.size() + chain.size() + 1 ||
      static_cast<int64_t>(op.getNumDpsInputs()) !=
          static_cast<int64_t>(!x.bodyValue) + !y.bodyValue) {
    reason = "body computes more than the two multiplied operands";
    return failure();
  }

  // Roles: A is the operand that does not read the innermost parallel loop.
  unsigned innermost = numParallel - 1;
  if (xSlice.loops.test(innermost) == ySlice.loops.test(innermost)) {
    reason = "no loop is read by one operand only";
    return failure();
  }
  bool swapped = xSlice.loops.test(innermost);
  product.lhs = swapped ? y : x;
  product.rhs = swapped ? x : y;
  const llvm::SmallBitVector &aLoops = swapped ? ySlice.loops : xSlice.loops;
  const llvm::SmallBitVector &bLoops = swapped ? xSlice.loops : ySlice.loops;
  // Parallel loops: batch (any before the first loop A reads and B does
  // not: a batch of images shares the weights), then m (read by A, not B),
  // then n (not read by A).
  unsigned dim = 0;
  auto aOnly = [&](unsigned d) { return aLoops.test(d) && !bLoops.test(d); };
  // (A loop of extent 1 is batch wherever it could be: a convolution's
  // group loop reads the same either way, and two products agree on it;
  // unless m has no other loop, as in a GEMV's m = 1.)
  unsigned firstM = numParallel;
  for (unsigned d = 0; d < numParallel && firstM == numParallel; ++d)
    if (aOnly(d) && ranges[d] > 1)
      firstM = d;
  for (unsigned d = 0; d < numParallel && firstM == numParallel; ++d)
    if (aOnly(d))
      firstM = d;
  // A row vector that reads no loop but k (a class token's features): m is
  // the last loop of extent 1 that neither operand reads.
  for (unsigned d = numParallel; d > 0 && firstM == numParallel; --d)
    if (ranges[d - 1] == 1 && !aLoops.test(d - 1) && !bLoops.test(d - 1))
      firstM = d - 1;
  while (dim < firstM)
    result.batch.push_back(ranges[dim++]);
  if (dim < numParallel && !aOnly(dim))
    result.mLoops.push_back(ranges[dim++]);
  while (dim < numParallel && aOnly(dim))
    result.mLoops.push_back(ranges[dim++]);
  for (; dim < numParallel; ++dim) {
    if (aLoops.test(dim)) {
      reason = "parallel loops are not batch..., m..., n...";
      return failure();
    }
    result.nLoops.push_back(ranges[dim]);
  }
  if (result.mLoops.empty()) {
    reason = "no loop is read by A only";
    return failure();
  }
  product.kLoops.assign(ranges.begin() + numParallel, ranges.end());
  auto multiply = [](ArrayRef<int64_t> extents) {
    int64_t value = 1;
    for (int64_t extent : extents)
      value *= extent;
    return value;
  };
  result.m = multiply(result.mLoops);
  result.n = multiply(result.nLoops);
  product.k = multiply(product.kLoops);
  decideStaging(product.lhs, result, product, /*isLhs=*/true);
  decideStaging(product.rhs, result, product, /*isLhs=*/false);
  for (MmaOperand *operand : {&product.lhs, &product.rhs})
    operand->tf32Exact =
        operand->mmaType.isTF32() && holdsTf32Values(operand->value);
  product.lhs.chunkedGather =
      product.lhs.gathered && isChunkedGather(product.lhs, op, result, product);
  product.lhs.zeroFilledChunks =
      product.lhs.chunkedGather && isZeroFilledChunk(product.lhs, op);
  return success();
}

/// Whether `epilogue` is an elementwise op over the products' result space
/// (possibly permuted, the same way for each) that reads each of `results`
/// once, element for element, and writes its results (one, or several that
/// the kernel returns side by side) in its own space.
static LogicalResult matchEpilogue(linalg::GenericOp epilogue,
                                   ArrayRef<Value> results, unsigned rank,
                                   std::string &reason) {
  if (epilogue.getNumReductionLoops() != 0 || epilogue.getNumLoops() != rank) {
    reason = "epilogue is not elementwise over the result";
    return failure();
  }
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(rank, epilogue.getContext());
  unsigned reads = 0;
  AffineMap resultMap;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    AffineMap map = epilogue.getMatchingIndexingMap(input);
    if (llvm::is_contained(results, input->get())) {
      // A permutation stores the result in another layout (a patch
      // embedding's NCHW -> N(HW)C).
      if (!map.isPermutation() || (resultMap && map != resultMap)) {
        reason = "epilogue reads the contraction through a map that is not "
                 "a permutation";
        return failure();
      }
      resultMap = map;
      ++reads;
    } else if (!map.isProjectedPermutation(/*allowZeroInResults=*/true)) {
      reason = "epilogue operand map is not a projected permutation";
      return failure();
    }
  }
  if (reads != results.size() ||
      llvm::any_of(epilogue.getDpsInitsMutable(), [&](OpOperand &init) {
        return epilogue.getMatchingIndexingMap(&init) != identity;
      })) {
    reason = "epilogue does not map the contraction to its result";
    return failure();
  }
  // Every result is a fresh value: the kernel computes it from the inputs
  // alone (an init may hold an accumulator computed in place, which the
  // epilogue must not read as its old result).
  for (OpOperand &init : epilogue.getDpsInitsMutable())
    if (!epilogue.getMatchingBlockArgument(&init).use_empty()) {
      reason = "epilogue reads one of its results";
      return failure();
    }
  for (Operation &op : epilogue.getBody()->without_terminator())
    if (op.getNumRegions() != 0) {
      reason = "epilogue body has regions";
      return failure();
    }
  return success();
}

/// Whether `op` computes its one result elementwise from its loop indices
/// and its inputs, with ops the kernel builder can clone per element: a
/// layout change (head split, transpose) that the tensor-core kernel folds
/// into the operand it feeds.
static bool isElementwiseProducer(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0 ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() ||
      !op.getMatchingBlockArgument(op.getDpsInitOperand(0)).use_empty())
    return false;
  for (OpOperand *input : op.getDpsInputOperands())
    if (!op.getMatchingIndexingMap(input).isProjectedPermutation(
            /*allowZeroInResults=*/true))
      return false;
  for (Operation &inner : op.getBody()->without_terminator())
    if (inner.getNumRegions() != 0 ||
        !(isPure(&inner) || isa<memref::LoadOp, tensor::ExtractOp>(inner)))
      return false;
  return true;
}

/// The copy of `buffer`, a buffer the kernel allocates, into one of the
/// kernel's arguments, directly or through one collapse_shape/expand_shape
/// view; null when the buffer has other uses (besides linalg ops writing or
/// reading it in place, copies of its zeros and its dealloc).
static memref::CopyOp getResultCopy(Value buffer,
                                    ArrayRef<memref::CopyOp> zeroCopies) {
  if (!buffer.getDefiningOp<memref::AllocOp>())
    return {};
  memref::CopyOp copy;
  auto takeCopy = [&](Operation *user, Value source) {
    auto candidate = dyn_cast<memref::CopyOp>(user);
    if (copy || !candidate || candidate.getSource() != source ||
        !isa<BlockArgument>(candidate.getTarget()))
      return false;
    copy = candidate;
    return true;
  };
  for (Operation *user : buffer.getUsers()) {
    if (isa<linalg::LinalgOp, memref::DeallocOp>(user) ||
        llvm::is_contained(zeroCopies, user))
      continue;
    if (takeCopy(user, buffer))
      continue;
    if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(user) &&
        user->hasOneUse() &&
        takeCopy(*user->getUsers().begin(), user->getResult(0)))
      continue;
    return {};
  }
  return copy;
}

FailureOr<MmaContraction> mlir::ridge::matchMmaContraction(func::FuncOp kernel,
                                                           std::string &reason,
                                                           bool allowF32) {
  if (kernel.isExternal() || !kernel.getBody().hasOneBlock()) {
    reason = "not a single-block kernel";
    return failure();
  }
  // One or two products (a zero fill and the contraction accumulating into
  // it), then at most one epilogue. Zero accumulators are a zero fill's
  // result, or on buffers a copy of a zero-filled buffer (bufferization
  // copies a fill that two contractions share), until a contraction
  // accumulates into them.
  MmaContraction result;
  SmallVector<Value> accs;
  llvm::MapVector<Value, linalg::LinalgOp> zeros;
  llvm::MapVector<Value, linalg::GenericOp> producers;
  bool onTensors = false;
  // The zero fill a reduction into `generic`'s init starts from, or null;
  // on buffers the buffer holds zeros no longer after it.
  auto takeZeroFill = [&](linalg::GenericOp generic) -> linalg::LinalgOp {
    auto zero = zeros.find(generic.getDpsInitOperand(0)->get());
    if (zero == zeros.end())
      return {};
    linalg::LinalgOp fill = zero->second;
    if (!onTensors)
      zeros.erase(zero);
    return fill;
  };
  for (Operation &op : kernel.front()) {
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      auto zero = zeros.find(copy.getSource());
      if (zero != zeros.end()) {
        // A copy first: inserting may move the entry `zero` points to.
        linalg::LinalgOp fill = zero->second;
        zeros[copy.getTarget()] = fill;
        result.zeroCopies.push_back(copy);
      }
      continue;
    }
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp) {
      // Views, constants, buffers and the return are what may surround them.
      if (op.getNumRegions() != 0) {
        reason = "kernel has an op with regions";
        return failure();
      }
      continue;
    }
    onTensors = linalgOp.hasPureTensorSemantics();
    auto generic = dyn_cast<linalg::GenericOp>(op);
    // The amax of a result (an fp8 consumer's scale): after the op that
    // computes the result, from a zero fill before it. Which result it
    // reads is resolved below, once the results are known.
    if (generic && isScaleReduction(generic) && !result.products.empty()) {
      Value input = generic.getDpsInputOperand(0)->get();
      bool readsResult = llvm::is_contained(accs, input);
      if (result.epilogue)
        readsResult |=
            onTensors
                ? llvm::is_contained(result.epilogue->getResults(), input)
                : llvm::is_contained(result.epilogue.getDpsInits(), input);
      if (readsResult) {
        linalg::LinalgOp fill = takeZeroFill(generic);
        if (!fill) {
          reason = "a result's amax does not start from zero";
          return failure();
        }
        result.resultAmaxes.push_back({generic, fill});
        continue;
      }
    }
    if (result.epilogue || !result.resultAmaxes.empty()) {
      reason = result.resultAmaxes.empty()
                   ? "kernel has ops after its epilogue"
                   : "kernel has ops after the amax of its results";
      return failure();
    }
    if (isZeroFill(linalgOp)) {
      zeros[onTensors ? linalgOp->getResult(0)
                      : linalgOp.getDpsInitOperand(0)->get()] = linalgOp;
      continue;
    }
    // An fp8 kernel's scale reductions and quantizing producers, which may
    // follow a product when each product quantizes its own copy of an
    // operand (gate and up projections of one activation, before CSE).
    if (generic && isScaleReduction(generic)) {
      linalg::LinalgOp fill = takeZeroFill(generic);
      if (!fill) {
        reason = "a scale reduction does not start from zero";
        return failure();
      }
      result.scaleReductions.push_back({generic, fill});
      continue;
    }
    bool quantizes = generic && generic.getNumDpsInits() == 1 &&
                     isa<Float8E4M3FNType>(getElementTypeOrSelf(
                         generic.getDpsInits()[0].getType()));
    if (linalgOp.getNumReductionLoops() == 0 && generic &&
        (result.products.empty() || quantizes) &&
        isElementwiseProducer(generic)) {
      producers[onTensors ? generic->getResult(0)
                          : generic.getDpsInitOperand(0)->get()] = generic;
      continue;
    }
    if (linalgOp.getNumReductionLoops() == 0) {
      if (result.products.empty() || !generic) {
        reason = "kernel is not fill, contraction, epilogue";
        return failure();
      }
      result.epilogue = generic;
      continue;
    }
    if (!generic) {
      reason = "contraction is not a linalg.generic";
      return failure();
    }
    if (result.products.size() == 2) {
      reason = "kernel has more than two contractions";
      return failure();
    }
    MmaProduct product;
    product.contraction = linalgOp;
    MmaContraction shape;
    if (failed(matchContraction(generic, product, shape, reason, allowF32)))
      return failure();
    if (result.products.empty()) {
      result.batch = shape.batch;
      result.mLoops = shape.mLoops;
      result.nLoops = shape.nLoops;
      result.m = shape.m;
      result.n = shape.n;
    } else if (shape.batch != result.batch || shape.mLoops != result.mLoops ||
               shape.nLoops != result.nLoops ||
               product.lhs.mmaType != result.products[0].lhs.mmaType) {
      reason = "the products differ in their output loops or types";
      return failure();
    }
    // An operand computed by an elementwise producer of the kernel is
    // gathered from the producer's body.
    for (auto [operand, isLhs] :
         {std::pair(&product.lhs, true), std::pair(&product.rhs, false)}) {
      auto producer =
          operand->value ? producers.find(operand->value) : producers.end();
      if (producer == producers.end())
        continue;
      operand->producer = producer->second;
      operand->tf32Exact = false;
      operand->gathered = true;
      operand->chunkedGather = false;
      operand->chunkLoad = nullptr;
      operand->zeroFilledChunks = false;
      operand->collapsedK = false;
      // wgmma reads e4m3 K-major only.
      operand->kContiguous = isLhs || isa<Float8E4M3FNType>(operand->mmaType);
      if (!llvm::is_contained(result.producers, producer->second))
        result.producers.push_back(producer->second);
    }
    Value init = generic.getDpsInitOperand(0)->get();
    auto zero = zeros.find(init);
    if (zero == zeros.end()) {
      reason = "contraction does not accumulate into the zero fill";
      return failure();
    }
    product.fill = zero->second;
    // A buffer holds zeros no longer once a contraction accumulated into it.
    if (!onTensors)
      zeros.erase(zero);
    accs.push_back(onTensors ? generic->getResult(0) : init);
    result.products.push_back(product);
  }
  if (result.products.empty()) {
    reason = "kernel is not fill, contraction, epilogue";
    return failure();
  }
  // Each producer's result is read by the products only (on buffers: written
  // by the producer, freed after).
  for (auto [value, producer] : producers) {
    if (!llvm::is_contained(result.producers, producer)) {
      reason = "kernel computes a value no contraction reads";
      return failure();
    }
    for (Operation *user : value.getUsers()) {
      if (user == producer || isa<memref::DeallocOp>(user) ||
          llvm::any_of(result.products, [&](const MmaProduct &product) {
            return user == linalg::LinalgOp(product.contraction).getOperation();
          }))
        continue;
      reason = "an operand the kernel computes has another use";
      return failure();
    }
  }
  unsigned rank = result.getNumParallelLoops();
  if (result.epilogue) {
    if (failed(matchEpilogue(result.epilogue, accs, rank, reason)))
      return failure();
    // On buffers each accumulator is a buffer of the kernel's own, or one
    // of the epilogue's result buffers when bufferization computed it in
    // place.
    for (Value acc : accs)
      if (!onTensors && !acc.getDefiningOp<memref::AllocOp>() &&
          !llvm::is_contained(result.epilogue.getDpsInits(), acc)) {
        reason = "the accumulator is not a buffer of the kernel's own";
        return failure();
      }
  } else if (result.products.size() > 1) {
    reason = "two products and no epilogue combining them";
    return failure();
  }
  // Each accumulator is read by the epilogue only (on buffers: written by
  // its fill and contraction, freed after, and a result may be copied out
  // to the kernel's result argument).
  SmallVector<Value> resultBuffers;
  if (result.epilogue)
    llvm::append_range(resultBuffers, result.epilogue.getDpsInits());
  else
    resultBuffers.push_back(accs[0]);
  for (Value resultBuffer : resultBuffers) {
    memref::CopyOp copy;
    if (!onTensors && !isa<BlockArgument>(resultBuffer)) {
      copy = getResultCopy(resultBuffer, result.zeroCopies);
      if (!copy) {
        reason = "the contraction's result is not the kernel's";
        return failure();
      }
    }
    result.resultCopies.push_back(copy);
  }
  // Each result amax reads a result as the kernel returns it (not an
  // accumulator that an epilogue goes on to change).
  SmallVector<Value> resultValues;
  if (!onTensors)
    resultValues = resultBuffers;
  else if (result.epilogue)
    llvm::append_range(resultValues, result.epilogue->getResults());
  else
    resultValues.push_back(accs[0]);
  for (MmaContraction::ResultAmax &amax : result.resultAmaxes) {
    auto *found =
        llvm::find(resultValues, amax.reduction.getDpsInputOperand(0)->get());
    if (found == resultValues.end()) {
      reason = "a scale reduction reads an accumulator that the epilogue "
               "changes, not a result";
      return failure();
    }
    amax.result = found - resultValues.begin();
  }
  if (onTensors && !result.epilogue)
    return result;
  auto isResultAmax = [&](Operation *user) {
    return llvm::any_of(result.resultAmaxes,
                        [&](MmaContraction::ResultAmax amax) {
                          return user == amax.reduction.getOperation();
                        });
  };
  for (auto [acc, product] : llvm::zip(accs, result.products)) {
    for (Operation *user : acc.getUsers()) {
      if (user == result.epilogue || user == product.fill ||
          isResultAmax(user) || user == product.contraction ||
          isa<memref::DeallocOp>(user) ||
          llvm::is_contained(result.zeroCopies, user))
        continue;
      bool copiedOut = false;
      for (auto [buffer, copy] : llvm::zip(resultBuffers, result.resultCopies))
        copiedOut |= copy && acc == buffer &&
                     (user == copy.getOperation() ||
                      user == copy.getSource().getDefiningOp());
      if (copiedOut)
        continue;
      reason = "the contraction's result has another use";
      return failure();
    }
  }
  return result;
}

std::optional<std::string>
mlir::ridge::whyNotWgmmaOperands(const MmaContraction &mma) {
  for (const MmaProduct &product : mma.products) {
    if (!product.lhs.mmaType.isTF32())
      continue;
    if (!product.lhs.kContiguous)
      return std::string("tf32 A is staged MN-major (wgmma reads tf32 only "
                         "K-major)");
    const MmaOperand &rhs = product.rhs;
    if (!rhs.kContiguous || rhs.gathered || rhs.producer)
      return std::string("tf32 B is not a K-major tensor read with 16-byte "
                         "loads (wgmma reads tf32 only K-major)");
    if (!rhs.tf32Exact)
      return std::string("tf32 B is not a compile-time constant of tf32 "
                         "values (wgmma would drop its low bits where the "
                         "body rounds them)");
  }
  return std::nullopt;
}

std::optional<MmaTmaLayout> mlir::ridge::getMmaTmaLayout(
    const MmaContraction &mma, const MmaProduct &product,
    const MmaOperand &operand, bool isLhs, std::string &reason) {
  if (!operand.value || operand.gathered || operand.producer) {
    reason = "the operand is not read as a whole tensor (gathered or "
             "computed)";
    return std::nullopt;
  }
  // TMA copies bytes: bf16 and f16 as they are multiplied, and tf32's f32
  // as stored (A's fragments are rounded in registers; B holds tf32 values
  // already, whyNotWgmmaOperands).
  if (operand.elementType != operand.mmaType &&
      !(operand.mmaType.isTF32() && operand.elementType.isF32())) {
    reason = "the operand is stored as another type than it is multiplied in "
             "(TMA copies bf16, f16 and tf32's f32)";
    return std::nullopt;
  }
  auto type = dyn_cast<ShapedType>(operand.value.getType());
  if (!type || !type.hasStaticShape()) {
    reason = "the operand is not a static tensor";
    return std::nullopt;
  }
  if (auto memref = dyn_cast<MemRefType>(type);
      memref && !memref.getLayout().isIdentity()) {
    reason = "the operand's buffer is not row-major";
    return std::nullopt;
  }
  // Loops of the contraction: batch, m, n, then k.
  unsigned numBatch = mma.batch.size();
  unsigned mFirst = numBatch, nFirst = mFirst + mma.mLoops.size();
  unsigned kFirst = nFirst + mma.nLoops.size();
  unsigned rowFirst = isLhs ? mFirst : nFirst;
  unsigned rowCount = isLhs ? mma.mLoops.size() : mma.nLoops.size();
  SmallVector<unsigned> expected;
  MmaTmaLayout layout;
  AffineMap map = operand.map;
  unsigned result = 0;
  for (; result < map.getNumResults(); ++result) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(result));
    if (!dim || dim.getPosition() >= numBatch)
      break;
    layout.batchLoops.push_back(dim.getPosition());
  }
  // Unit row loops after the batch loops are left out of the order (their
  // dimensions change no stride), as decideStaging leaves them out.
  auto append = [&](unsigned first, unsigned count) {
    for (unsigned i = 0; i < count; ++i)
      if (!isUnitRowLoop(mma, isLhs, first + i))
        expected.push_back(first + i);
  };
  unsigned numK = product.kLoops.size();
  // A whose k loops but the innermost come before its rows (an attention's
  // heads' outputs [H, L, d], k = (h, d)): a map dimension each, the k
  // tiles whole within the innermost (the order check below checks the
  // rest of the form).
  bool headed = isLhs && operand.kContiguous && numK > 1 && rowCount == 1 &&
                result < map.getNumResults() &&
                isLoop(map.getResult(result), kFirst);
  if (headed) {
    append(kFirst, numK - 1);
    append(rowFirst, rowCount);
    append(kFirst + numK - 1, 1);
    layout.outerK.assign(product.kLoops.begin(), product.kLoops.end() - 1);
    if (product.kLoops.back() % getTmaTileK(operand.getStagedBytes()) != 0) {
      reason = "the operand's innermost k loop is not whole TMA k tiles";
      return std::nullopt;
    }
  } else if (operand.kContiguous) {
    append(rowFirst, rowCount);
    append(kFirst, numK);
  } else {
    append(kFirst, numK);
    append(rowFirst, rowCount);
  }
  SmallVector<AffineExpr> ownResults;
  for (AffineExpr expr : map.getResults().drop_front(result))
    if (!isUnitRowLoop(mma, isLhs, expr))
      ownResults.push_back(expr);
  bool ordered =
      ownResults.size() == expected.size() &&
      llvm::is_sorted(layout.batchLoops) &&
      std::adjacent_find(layout.batchLoops.begin(), layout.batchLoops.end()) ==
          layout.batchLoops.end();
  for (unsigned i = 0; ordered && i < expected.size(); ++i)
    ordered = isLoop(ownResults[i], expected[i]);
  if (!ordered) {
    reason = "the operand's dimensions are not its batch loops, then its rows, "
             "then its contiguous loops";
    return std::nullopt;
  }
  if (layout.batchLoops.size() + layout.outerK.size() + 2 > 5) {
    reason = "a tensor map has at most 5 dimensions";
    return std::nullopt;
  }
  int64_t rowExtent = isLhs ? mma.m : mma.n;
  int64_t kExtent = layout.outerK.empty() ? product.k : product.kLoops.back();
  layout.outer = operand.kContiguous ? rowExtent : kExtent;
  layout.inner = operand.kContiguous ? kExtent : rowExtent;
  // The bytes TMA copies an element (tf32's f32: 4, not its 19 bits).
  int64_t bytes = operand.getStagedBytes();
  if ((layout.inner * bytes) % 16 != 0) {
    reason = "the operand's rows are not whole 16-byte units";
    return std::nullopt;
  }
  return layout;
}
