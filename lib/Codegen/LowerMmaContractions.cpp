//===- LowerMmaContractions.cpp - Tensor-core GEMM kernels (sm_80) --------===//
//
// The mechanism of the tensor-core path: a kernel whose `ridge.kernel_config`
// carries an `mma_tile` (decided by ridge-select-kernel-config from the
// kernel's shape and the target) is rebuilt, on buffers, as one gpu.launch
// in the structure CUTLASS's and Triton's sm_80 GEMMs share:
//
//   - one block per {m, n} tile of the output (and batch index), its warps
//     splitting the tile into warp tiles of 16 x 8 `mma.sync` tiles;
//   - each k step stages the A and B tiles in shared memory, two stages
//     deep: the next tile's global loads (16 bytes a thread, rounded to the
//     multiply type in registers when the operand is stored as f32) are in
//     flight while the warps multiply the current one;
//   - shared memory is XOR-swizzled in 16-byte chunks, so that the 16-byte
//     stores and the `ldmatrix` row reads of a quarter warp hit 8 distinct
//     chunks of a 128-byte line: no bank conflicts, without padding;
//   - fragments are loaded with `ldmatrix` (`.trans` for an operand stored
//     the other way round: the mma's B is "column-major") and multiplied by
//     `mma.sync.m16n8k16` (bf16 or f16 in, f32 accumulators in registers);
//   - the epilogue (the kernel's elementwise op: bias, activation, residual,
//     cast) is applied to the accumulators in registers and stored once.
//
// On sm_90a with `mma_tma` (operands stored as multiplied, whole row-major
// tensors), the threads copy nothing: as in CUTLASS 3's warp-specialized
// GEMMs, a producer warp issues TMA tensor copies of each k tile (64 of k,
// the 128-byte swizzle) into dynamic shared memory, full and empty
// mbarriers per stage order them with the consumer warpgroups' wgmmas, and
// the host encodes the tensor maps before the launch.
//
// The rounding of f32 operands is the one the contraction's body spells
// (`extf(truncf(x))`, placed by ridge-select-precision), so the CPU build
// of the same linalg computes the same products: it is the oracle.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "AtomicMaximum.h"
#include "MmaKernelBuilder.h"
#include "SplitArrival.h"
#include "TmaCopies.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-lower-mma-contractions"

namespace mlir::ridge {
#define GEN_PASS_DEF_LOWERMMACONTRACTIONSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

using mma::kChunk;
using mma::kSlabChunks;
Value MmaKernelBuilder::swizzledOffset(const StagedOperand &staged, Value row,
                                       Value chunk) {
  if (wgmma && staged.chunksPerRow() > kSlabChunks)
    return mma::getSlabOffset(b, loc, row, chunk, staged.outerLen);
  const MmaOperand &operand = *staged.operand;
  return mma::getSwizzledOffset(
      b, loc, row, chunk, staged.innerLen, staged.chunkElements(),
      mma::getSwizzleReads(operand.mmaType, operand.kContiguous));
}

std::pair<Value, Value>
MmaKernelBuilder::getChunkPosition(const StagedOperand &staged, Value q) {
  if (wgmma)
    return mma::getSlabChunkPosition(b, loc, q, staged.outerLen,
                                     staged.chunksPerRow());
  return {div(q, staged.chunksPerRow()), rem(q, staged.chunksPerRow())};
}

void MmaKernelBuilder::decode(Value flat, GemmDim dim,
                              SmallVectorImpl<Value> &coords) {
  unsigned first = numBatch;
  ArrayRef<int64_t> extents = mma.mLoops;
  if (dim != GemmDim::M) {
    first += mma.mLoops.size();
    extents = mma.nLoops;
  }
  if (dim == GemmDim::K) {
    first += mma.nLoops.size();
    extents = product->kLoops;
  }
  // Row-major: the innermost loop varies fastest. The outermost loop of
  // extent > 1 needs no remainder, as flat coordinates stay inside the
  // extents; loops of extent 1 are 0.
  int64_t outermost = 0;
  while (outermost + 1 < static_cast<int64_t>(extents.size()) &&
         extents[outermost] == 1)
    ++outermost;
  for (int64_t i = static_cast<int64_t>(extents.size()) - 1; i >= 0; --i) {
    if (i < outermost) {
      coords[first + i] = index(0);
      continue;
    }
    if (i == outermost) {
      coords[first + i] = flat;
      continue;
    }
    coords[first + i] = rem(flat, extents[i]);
    flat = div(flat, extents[i]);
  }
}

SmallVector<Value> MmaKernelBuilder::getLoopCoordinates() {
  Value zero = index(0);
  SmallVector<Value> coords(product->getNumLoops(), zero);
  for (unsigned i = 0; i < numBatch; ++i)
    coords[i] = batchIndices[i];
  return coords;
}

SmallVector<Value> MmaKernelBuilder::evaluateMap(AffineMap map,
                                                 ArrayRef<Value> coords) {
  SmallVector<Value> indices;
  ArrayRef<Value> dims = coords.take_front(map.getNumDims());
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      indices.push_back(coords[dim.getPosition()]);
    else if (auto constant = dyn_cast<AffineConstantExpr>(expr))
      indices.push_back(index(constant.getValue()));
    else
      indices.push_back(affine::expandAffineExpr(b, loc, expr, dims, {}));
  }
  return indices;
}

void MmaKernelBuilder::collapseKDims(StagedOperand &staged) {
  if (!staged.operand->collapsedK)
    return;
  // Its k dimensions (the trailing ones, contiguous) as one.
  int64_t rank = cast<MemRefType>(staged.source.getType()).getRank();
  int64_t numK = product->kLoops.size();
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank - numK; ++i)
    groups.push_back({i});
  groups.emplace_back();
  for (int64_t i = rank - numK; i < rank; ++i)
    groups.back().push_back(i);
  staged.source =
      memref::CollapseShapeOp::create(b, loc, staged.source, groups);
}

SmallVector<Value> MmaKernelBuilder::operandIndices(const StagedOperand &staged,
                                                    Value rowCoord,
                                                    Value kCoord) {
  const MmaOperand &operand = *staged.operand;
  SmallVector<Value> coords = getLoopCoordinates();
  decode(rowCoord, staged.isLhs ? GemmDim::M : GemmDim::N, coords);
  if (!operand.collapsedK) {
    decode(kCoord, GemmDim::K, coords);
    return evaluateMap(operand.map, coords);
  }
  // The k results are one dimension of the collapsed view: the flat k.
  AffineMap map = operand.map;
  SmallVector<Value> indices = evaluateMap(
      map.getSliceMap(0, map.getNumResults() - product->kLoops.size()), coords);
  indices.push_back(kCoord);
  return indices;
}

Value MmaKernelBuilder::gatherElement(const MmaOperand &operand,
                                      ArrayRef<Value> coords,
                                      IRMapping *loaded) {
  if (linalg::GenericOp producer = operand.producer) {
    // The producer's element at its loop indices (its result is indexed by
    // them); inputs in `loaded` are read already.
    IRMapping mapping;
    if (loaded)
      mapping = *loaded;
    return cloneElement(producer, evaluateMap(operand.map, coords), mapping);
  }
  if (operand.value)
    return memref::LoadOp::create(b, loc, operand.value,
                                  evaluateMap(operand.map, coords));
  // The body's computation of the element (a padded or strided window,
  // clamped and selected as the fused producer wrote it), with its loop
  // indices replaced by this element's.
  Block *body = linalg::LinalgOp(product->contraction).getBlock();
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.filter = [&](Operation *op) { return op->getBlock() == body; };
  options.inclusive = true;
  (void)getBackwardSlice(operand.bodyValue, &slice, options);
  IRMapping mapping;
  for (Operation &op : body->without_terminator()) {
    if (!slice.contains(&op))
      continue;
    if (auto indexOp = dyn_cast<linalg::IndexOp>(op)) {
      mapping.map(indexOp.getResult(), coords[indexOp.getDim()]);
      continue;
    }
    b.clone(op, mapping);
  }
  return mapping.lookup(operand.bodyValue);
}

SmallVector<Value> MmaKernelBuilder::gatherTile(const StagedOperand &staged,
                                                Value kTile) {
  const MmaOperand &operand = *staged.operand;
  if (operand.chunkedGather)
    return gatherChunks(staged, kTile);
  ElementInvariants scope(*this);
  Type stagedType = operand.getStagedType();
  int64_t chunkElements = staged.chunkElements();
  auto chunkType = VectorType::get({chunkElements}, stagedType);
  Value zero =
      arith::ConstantOp::create(b, loc, stagedType, b.getZeroAttr(stagedType));
  Value kBase = mul(kTile, tileK);
  Value rowBase = staged.isLhs ? mBase : nBase;
  bool kInner = operand.kContiguous;
  Value outerBase = kInner ? rowBase : kBase;
  Value innerBase = kInner ? kBase : rowBase;
  GemmDim rowDim = staged.isLhs ? GemmDim::M : GemmDim::N;
  GemmDim outerDim = kInner ? rowDim : GemmDim::K;
  GemmDim innerDim = kInner ? GemmDim::K : rowDim;
  int64_t numChunks = staged.outerLen * staged.chunksPerRow();
  SmallVector<OpOperand *> vectorInputs = getVectorLoadedInputs(staged);
  SmallVector<Value> chunks;
  for (int64_t first = 0; first < numChunks; first += threads) {
    auto [row, chunk] = getChunkPosition(staged, add(tid, first));
    Value outer = add(outerBase, row);
    Value outerInBounds = lessThan(outer, staged.outerExtent);
    // The outer coordinate is decoded once a chunk, the inner one per
    // element; clamped coordinates keep every load inside the operand.
    SmallVector<Value> coords = getLoopCoordinates();
    decode(minimum(outer, staged.outerExtent - 1), outerDim, coords);
    Value innerStart = add(innerBase, mul(chunk, chunkElements));
    SmallVector<Value> elements;
    // The current 4 elements of each vector-loaded input.
    SmallVector<SmallVector<Value>> loaded(vectorInputs.size());
    for (int64_t i = 0; i < chunkElements; ++i) {
      Value inner = add(innerStart, i);
      Value inBounds = arith::AndIOp::create(
          b, loc, outerInBounds, lessThan(inner, staged.innerExtent));
      decode(minimum(inner, staged.innerExtent - 1), innerDim, coords);
      linalg::GenericOp producer = operand.producer;
      if (!vectorInputs.empty() && i % kVectorLoadElements == 0) {
        // The next 4 elements of each such input with one 16-byte load
        // (the tile's inner extent is whole vectors: the 4 are inside or
        // outside together). Past the extent the load is clamped to the
        // last whole vector, aligned, and its elements are not used.
        SmallVector<Value> vectorCoords(coords);
        decode(minimum(inner, staged.innerExtent - kVectorLoadElements),
               innerDim, vectorCoords);
        SmallVector<Value> at = evaluateMap(operand.map, vectorCoords);
        for (auto [input, values] : llvm::zip(vectorInputs, loaded)) {
          Type element = getElementTypeOrSelf(input->get().getType());
          Value vector = vector::LoadOp::create(
              b, loc, VectorType::get({kVectorLoadElements}, element),
              input->get(),
              evaluateMap(producer.getMatchingIndexingMap(input), at),
              /*nontemporal=*/false, llvm::MaybeAlign(16));
          values.clear();
          for (int64_t e = 0; e < kVectorLoadElements; ++e)
            values.push_back(vector::ExtractOp::create(b, loc, vector, e));
        }
      }
      IRMapping current;
      for (auto [input, values] : llvm::zip(vectorInputs, loaded))
        current.map(producer.getMatchingBlockArgument(input),
                    values[i % kVectorLoadElements]);
      Value element = gatherElement(operand, coords, &current);
      if (Value clamped = getE4M3RoundingSource(element)) {
        elements.push_back(arith::SelectOp::create(
            b, loc, inBounds, clamped,
            arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0))));
        continue;
      }
      if (element.getType() != stagedType)
        element = arith::TruncFOp::create(b, loc, stagedType, element);
      elements.push_back(
          arith::SelectOp::create(b, loc, inBounds, element, zero));
    }
    if (elements.front().getType() != stagedType) {
      chunks.push_back(packE4M3Chunk(elements, chunkType));
      continue;
    }
    chunks.push_back(
        vector::FromElementsOp::create(b, loc, chunkType, elements));
  }
  return chunks;
}

MmaKernelBuilder::ChunkCoordinates
MmaKernelBuilder::getChunk(const StagedOperand &staged, Value kTile,
                           int64_t first) {
  const MmaOperand &operand = *staged.operand;
  Value kBase = mul(kTile, tileK);
  Value rowBase = staged.isLhs ? mBase : nBase;
  // Outer and inner coordinates of the tile's origin: the operand's rows
  // are m|n and its row elements k, or the other way round.
  bool kInner = operand.kContiguous;
  Value outerBase = kInner ? rowBase : kBase;
  Value innerBase = kInner ? kBase : rowBase;
  ChunkCoordinates result;
  std::tie(result.row, result.chunk) =
      getChunkPosition(staged, add(tid, first));
  Value outer = add(outerBase, result.row);
  Value inner = add(innerBase, mul(result.chunk, staged.chunkElements()));
  result.inBounds =
      arith::AndIOp::create(b, loc, lessThan(outer, staged.outerExtent),
                            lessThan(inner, staged.innerExtent));
  // Clamped coordinates keep the access inside the buffer; what lies
  // outside the operand (the k tail, the m|n edge) is zeroed.
  Value safeOuter = minimum(outer, staged.outerExtent - 1);
  Value safeInner = minimum(inner, staged.innerExtent - staged.chunkElements());
  Value rowCoord = kInner ? safeOuter : safeInner;
  Value kCoord = kInner ? safeInner : safeOuter;
  result.indices = operandIndices(staged, rowCoord, kCoord);
  return result;
}

SmallVector<Value> MmaKernelBuilder::loadTile(const StagedOperand &staged,
                                              Value kTile) {
  const MmaOperand &operand = *staged.operand;
  if (operand.gathered)
    return gatherTile(staged, kTile);
  Type stagedType = operand.getStagedType();
  auto chunkType = VectorType::get({staged.chunkElements()}, stagedType);
  int64_t numChunks = staged.outerLen * staged.chunksPerRow();
  Value zero =
      arith::ConstantOp::create(b, loc, chunkType, b.getZeroAttr(chunkType));
  SmallVector<Value> chunks;
  for (int64_t first = 0; first < numChunks; first += threads) {
    ChunkCoordinates chunk = getChunk(staged, kTile, first);
    Value value = loadChunk(operand, staged.source, chunk.indices, chunkType);
    chunks.push_back(
        arith::SelectOp::create(b, loc, chunk.inBounds, value, zero));
  }
  return chunks;
}

Value MmaKernelBuilder::loadStoredChunk(Value source, ArrayRef<Value> indices,
                                        Type stored, int64_t count) {
  // 16-byte loads along the last index, joined.
  int64_t perLoad = 16 / (stored.getIntOrFloatBitWidth() / 8);
  auto loadType = VectorType::get({perLoad}, stored);
  SmallVector<Value> at(indices);
  Value first = at.back(), joined;
  for (int64_t offset = 0; offset < count; offset += perLoad) {
    at.back() = offset == 0 ? first : add(first, offset);
    Value piece =
        vector::LoadOp::create(b, loc, loadType, source, at,
                               /*nontemporal=*/false, llvm::MaybeAlign(16));
    joined = joined
                 ? vector::ShuffleOp::create(
                       b, loc, joined, piece,
                       llvm::to_vector(llvm::seq<int64_t>(0, offset + perLoad)))
                 : piece;
  }
  return joined;
}

Value MmaKernelBuilder::loadChunk(const MmaOperand &operand, Value source,
                                  ArrayRef<Value> indices,
                                  VectorType chunkType) {
  // An f32 operand multiplied in bf16/f16: two 16-byte loads, rounded to
  // the multiply type as the contraction's body rounds it.
  Value value = loadStoredChunk(source, indices, operand.elementType,
                                chunkType.getNumElements());
  if (operand.elementType == chunkType.getElementType())
    return value;
  return arith::TruncFOp::create(b, loc, chunkType, value);
}

MmaKernelBuilder::GatheredChunk
MmaKernelBuilder::locateChunk(const StagedOperand &staged, Value kTile,
                              int64_t first,
                              const ChunkComputation &computation) {
  const MmaOperand &operand = *staged.operand;
  int64_t chunkElements = staged.chunkElements();
  // A is staged along k: rows m, chunks of k (the innermost k loop's
  // extent is whole chunks, so a chunk never crosses a window position).
  GatheredChunk result;
  std::tie(result.row, result.chunk) =
      getChunkPosition(staged, add(tid, first));
  Value outer = add(mBase, result.row);
  Value inner = add(mul(kTile, tileK), mul(result.chunk, chunkElements));
  result.inBounds =
      arith::AndIOp::create(b, loc, lessThan(outer, staged.outerExtent),
                            lessThan(inner, staged.innerExtent));
  SmallVector<Value> coords = getLoopCoordinates();
  decode(minimum(outer, staged.outerExtent - 1), GemmDim::M, coords);
  decode(minimum(inner, staged.innerExtent - chunkElements), GemmDim::K,
         coords);
  locateChunkAt(operand, coords, computation, result);
  return result;
}

void MmaKernelBuilder::locateChunkAt(const MmaOperand &operand,
                                     ArrayRef<Value> coords,
                                     const ChunkComputation &computation,
                                     GatheredChunk &chunk) {
  if (operand.value) {
    chunk.source = operand.value;
    chunk.indices = evaluateMap(operand.map, coords);
    return;
  }
  // The element's computation at the chunk's first element, up to the load
  // (what does not depend on the loaded value: the window's indices and
  // padding condition).
  for (Operation *op : computation.independent) {
    if (auto indexOp = dyn_cast<linalg::IndexOp>(op))
      chunk.mapping.map(indexOp.getResult(), coords[indexOp.getDim()]);
    else
      b.clone(*op, chunk.mapping);
  }
  Operation *load = operand.chunkLoad;
  chunk.source = load->getOperand(0);
  for (Value index : load->getOperands().drop_front())
    chunk.indices.push_back(chunk.mapping.lookupOrDefault(index));
}

Value MmaKernelBuilder::loadGatheredChunk(const MmaOperand &operand,
                                          GatheredChunk &chunk,
                                          const ChunkComputation &computation,
                                          int64_t count) {
  // One 16-byte load (two for f32 staged in 16 bits), then what the body
  // does with the loaded value.
  Value loaded =
      loadStoredChunk(chunk.source, chunk.indices,
                      getElementTypeOrSelf(chunk.source.getType()), count);
  if (operand.value)
    return loaded;
  return applyToChunk(computation.dependents, operand.chunkLoad->getResult(0),
                      loaded, chunk.mapping, operand.bodyValue);
}

SmallVector<Value> MmaKernelBuilder::gatherChunks(const StagedOperand &staged,
                                                  Value kTile) {
  const MmaOperand &operand = *staged.operand;
  Type stagedType = operand.getStagedType();
  auto chunkType = VectorType::get({staged.chunkElements()}, stagedType);
  Value zero =
      arith::ConstantOp::create(b, loc, chunkType, b.getZeroAttr(chunkType));
  int64_t numChunks = staged.outerLen * staged.chunksPerRow();
  ChunkComputation computation;
  if (operand.chunkLoad)
    computation = splitChunkComputation(operand);
  SmallVector<Value> chunks;
  for (int64_t first = 0; first < numChunks; first += threads) {
    GatheredChunk chunk = locateChunk(staged, kTile, first, computation);
    Value value = loadGatheredChunk(operand, chunk, computation,
                                    chunkType.getNumElements());
    if (cast<VectorType>(value.getType()).getElementType() != stagedType)
      value = arith::TruncFOp::create(b, loc, chunkType, value);
    chunks.push_back(
        arith::SelectOp::create(b, loc, chunk.inBounds, value, zero));
  }
  return chunks;
}

void MmaKernelBuilder::copyChunksAsync(const StagedOperand &staged, Value kTile,
                                       Value stage) {
  const MmaOperand &operand = *staged.operand;
  Value stageOffset =
      arith::MulIOp::create(b, loc, stage, index(staged.stageElements()));
  int64_t numChunks = staged.outerLen * staged.chunksPerRow();
  int64_t chunkElements = staged.chunkElements();
  ChunkComputation computation;
  if (operand.chunkLoad)
    computation = splitChunkComputation(operand);
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  for (int64_t first = 0; first < numChunks; first += threads) {
    GatheredChunk chunk = locateChunk(staged, kTile, first, computation);
    // The stored bytes, or zeros (cp.async's source size 0) outside the
    // operand and where the body selects zero (the window's padding).
    Value copied = chunk.inBounds;
    for (Operation *op : computation.dependents)
      if (auto select = dyn_cast<arith::SelectOp>(op))
        copied = arith::AndIOp::create(
            b, loc, copied, chunk.mapping.lookup(select.getCondition()));
    Value sourceElements =
        arith::SelectOp::create(b, loc, copied, index(chunkElements), index(0));
    Value offset =
        add(stageOffset, swizzledOffset(staged, chunk.row, chunk.chunk));
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, tokenType, staged.smem, ValueRange{offset}, chunk.source,
        chunk.indices, b.getIndexAttr(chunkElements), sourceElements,
        b.getUnitAttr());
  }
}

Value MmaKernelBuilder::applyToChunk(const SetVector<Operation *> &dependents,
                                     Value element, Value chunk,
                                     const IRMapping &mapping, Value result) {
  int64_t count = cast<VectorType>(chunk.getType()).getNumElements();
  // One select and one conversion per chunk, not per element.
  IRMapping vectorMapping = mapping;
  vectorMapping.map(element, chunk);
  for (Operation *op : dependents) {
    if (op == element.getDefiningOp())
      continue;
    SmallVector<Value> operands;
    for (OpOperand &use : op->getOpOperands()) {
      Value value = vectorMapping.lookupOrDefault(use.get());
      if (!isa<VectorType>(value.getType()) &&
          !(isa<arith::SelectOp>(op) && use.getOperandNumber() == 0))
        value = vector::BroadcastOp::create(
            b, loc, VectorType::get({count}, value.getType()), value);
      operands.push_back(value);
    }
    Type resultType = VectorType::get({count}, op->getResult(0).getType());
    Operation *vectorOp = b.create(op->getLoc(), op->getName().getIdentifier(),
                                   operands, {resultType}, op->getAttrs());
    vectorMapping.map(op->getResult(0), vectorOp->getResult(0));
  }
  return vectorMapping.lookup(result);
}

void MmaKernelBuilder::copyTileAsync(const StagedOperand &staged, Value kTile,
                                     Value stage) {
  if (staged.operand->chunkedGather)
    return copyChunksAsync(staged, kTile, stage);
  Value stageOffset =
      arith::MulIOp::create(b, loc, stage, index(staged.stageElements()));
  int64_t numChunks = staged.outerLen * staged.chunksPerRow();
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  for (int64_t first = 0; first < numChunks; first += threads) {
    ChunkCoordinates chunk = getChunk(staged, kTile, first);
    Value offset =
        add(stageOffset, swizzledOffset(staged, chunk.row, chunk.chunk));
    int64_t chunkElements = staged.chunkElements();
    Value sourceElements = arith::SelectOp::create(
        b, loc, chunk.inBounds, index(chunkElements), index(0));
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, tokenType, staged.smem, ValueRange{offset}, staged.source,
        chunk.indices, b.getIndexAttr(chunkElements), sourceElements,
        b.getUnitAttr());
  }
}

void MmaKernelBuilder::storeTile(const StagedOperand &staged,
                                 ArrayRef<Value> chunks, Value stage) {
  Value stageOffset =
      arith::MulIOp::create(b, loc, stage, index(staged.stageElements()));
  for (auto [i, value] : llvm::enumerate(chunks)) {
    auto [row, chunk] =
        getChunkPosition(staged, add(tid, static_cast<int64_t>(i) * threads));
    Value offset = add(stageOffset, swizzledOffset(staged, row, chunk));
    vector::StoreOp::create(b, loc, value, staged.smem, offset,
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  }
}

SmallVector<Value> MmaKernelBuilder::loadBlock(const StagedOperand &staged,
                                               Value stageOffset,
                                               Value rowOffset, int64_t kStep,
                                               bool rowHalfMinor) {
  mma::FragmentBlock block{staged.smem, stageOffset, staged.operand->mmaType,
                           staged.innerLen, staged.operand->kContiguous};
  return mma::loadFragmentBlock(b, loc, block, lane, rowOffset, kStep,
                                rowHalfMinor);
}

Value MmaKernelBuilder::cloneElement(linalg::GenericOp op, ArrayRef<Value> at,
                                     IRMapping &mapping) {
  return cloneElementResults(op, at, mapping).front();
}

SmallVector<Value> MmaKernelBuilder::cloneElementResults(linalg::GenericOp op,
                                                         ArrayRef<Value> at,
                                                         IRMapping &mapping) {
  Block *body = op.getBody();
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (arg.use_empty() || mapping.contains(arg))
      continue;
    AffineMap map = op.getMatchingIndexingMap(input);
    if (invariants && map.getNumResults() == 0) {
      IRMapping &shared = invariants->values;
      if (!shared.contains(arg)) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(invariants->anchor);
        shared.map(arg,
                   memref::LoadOp::create(b, loc, input->get(), ValueRange()));
      }
      mapping.map(arg, shared.lookup(arg));
      continue;
    }
    mapping.map(arg, memref::LoadOp::create(b, loc, input->get(),
                                            evaluateMap(map, at)));
  }
  // An op of the body is invariant when it is pure and reads only values
  // from outside the body or invariant ones.
  auto isInvariant = [&](Operation &inner) {
    return invariants && isPure(&inner) && inner.getNumRegions() == 0 &&
           inner.getNumResults() != 0 &&
           llvm::all_of(inner.getOperands(), [&](Value operand) {
             return operand.getParentBlock() != body ||
                    invariants->values.contains(operand);
           });
  };
  for (Operation &inner : body->without_terminator()) {
    if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(indexOp.getResult(), at[indexOp.getDim()]);
      continue;
    }
    if (isInvariant(inner)) {
      IRMapping &shared = invariants->values;
      if (!shared.contains(inner.getResult(0))) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(invariants->anchor);
        b.clone(inner, shared);
      }
      for (Value result : inner.getResults())
        mapping.map(result, shared.lookup(result));
      continue;
    }
    b.clone(inner, mapping);
  }
  return llvm::map_to_vector(
      body->getTerminator()->getOperands(),
      [&](Value v) { return mapping.lookupOrDefault(v); });
}

void MmaKernelBuilder::fenceSharedForWgmma() {
  if (wgmma)
    NVVM::FenceProxyOp::create(
        b, loc,
        NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
}

Value MmaKernelBuilder::getDescriptor(const StagedOperand &staged, Value stage,
                                      Value rowOffset) {
  // Byte offsets in the buffer (2-byte elements), rows of R bytes (the
  // swizzle span: 64, or 128 for TMA's stages). K-major (rows of k): 8-row
  // groups 8R bytes apart (SBO). MN-major (rows of R / 2 m|n elements, slab
  // after slab): 8 k-row groups 8R bytes apart (SBO), slabs LBO apart.
  int64_t rowBytes = getSwizzleBytes();
  int64_t groupBytes = 8 * rowBytes;
  Value stageBytes = mul(stage, staged.stageElements() * staged.elementBytes());
  Value offset;
  int64_t leading;
  if (staged.operand->kContiguous) {
    offset = add(stageBytes, mul(rowOffset, rowBytes));
    leading = 16; // unused by the swizzled K-major layout
  } else {
    int64_t slabBytes = staged.outerLen * rowBytes;
    offset = add(stageBytes, mul(div(rowOffset, rowBytes / 2), slabBytes));
    leading = slabBytes;
  }
  return mma::getWgmmaDescriptor(b, loc, staged.smem, offset, leading,
                                 groupBytes, rowBytes);
}

Value MmaKernelBuilder::advanceDescriptor(const StagedOperand &staged,
                                          Value descriptor, int64_t kStep) {
  if (kStep == 0)
    return descriptor;
  // k16 steps are 32 bytes along a K-major row, 16 rows of an MN-major
  // slab. The start address field holds the shared address >> 4 in 14
  // bits, and a stage's addresses stay below 2^18 (228 KiB of shared
  // memory), so the offset adds without a carry out of the field
  // (CUTLASS's descriptor iterators add the same way).
  int64_t bytes =
      staged.operand->kContiguous ? kStep * 32 : kStep * 16 * getSwizzleBytes();
  return arith::AddIOp::create(
      b, loc, descriptor,
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), bytes >> 4));
}

Value MmaKernelBuilder::packAccumulators(ArrayRef<Value> acc) {
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(acc.size(), b.getF32Type()));
  Value packed = LLVM::PoisonOp::create(b, loc, structType);
  for (auto [i, value] : llvm::enumerate(acc))
    packed = LLVM::InsertValueOp::create(b, loc, packed, value, i);
  return packed;
}

SmallVector<Value> MmaKernelBuilder::unpackAccumulators(Value packed,
                                                        int64_t count) {
  SmallVector<Value> acc;
  for (int64_t i = 0; i < count; ++i)
    acc.push_back(LLVM::ExtractValueOp::create(b, loc, packed, i));
  return acc;
}

Value MmaKernelBuilder::issueWgmmaStage(Value stage, Value packed, bool fresh) {
  Value warpgroup = div(div(tid, kWarpSize), 4);
  Value rowOffset = mul(warpgroup, 64);
  // A k step is one wgmma's k: 32 bytes of a K-major row (k16 of 2-byte
  // types, k32 of e4m3, k8 of tf32's f32).
  int64_t kStepLen = 32 / lhs.elementBytes();
  int64_t kSteps = tileK / kStepLen;
  // tf32: wgmma would read A's staged f32 dropping its 13 low bits, where
  // the body rounds them to nearest; A is multiplied from registers
  // instead, each warp's 16 rows loaded as mma.sync's m16n8k8 fragments
  // (the same layout) and rounded by cvt.rna.tf32.f32. B holds tf32 values
  // already (whyNotWgmmaOperands).
  if (product->lhs.mmaType.isTF32()) {
    assert(!fresh && "a tf32 stage accumulates");
    Value warpRow = add(rowOffset, mul(rem(div(tid, kWarpSize), 4), 16));
    Value lhsStage = mul(stage, lhs.stageElements());
    SmallVector<SmallVector<Value>> aFragments;
    for (int64_t kStep = 0; kStep < kSteps; ++kStep)
      aFragments.push_back(mma::pinRegisters(
          b, loc,
          loadBlock(lhs, lhsStage, warpRow, kStep, /*rowHalfMinor=*/true)));
    // Pinned before the fence (and after the wait, multiplyStageWgmma): no
    // move of a wgmma's registers falls between it and its wait.
    int64_t count =
        cast<LLVM::LLVMStructType>(packed.getType()).getBody().size();
    SmallVector<Value> acc =
        mma::pinRegisters(b, loc, unpackAccumulators(packed, count));
    Value firstB = getDescriptor(rhs, stage, index(0));
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t kStep = 0; kStep < kSteps; ++kStep)
      acc = mma::createWgmmaRegisterA(
          b, loc, aFragments[kStep], advanceDescriptor(rhs, firstB, kStep), acc,
          tileN, product->lhs.mmaType, /*transposeB=*/false);
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    return packAccumulators(acc);
  }
  // The stage's descriptors once, each k step's an add to them.
  Value firstA = getDescriptor(lhs, stage, rowOffset);
  Value firstB = getDescriptor(rhs, stage, index(0));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t kStep = 0; kStep < kSteps; ++kStep)
    packed = mma::createWgmmaShared(
        b, loc, advanceDescriptor(lhs, firstA, kStep),
        advanceDescriptor(rhs, firstB, kStep), packed, tileN, kStepLen,
        product->lhs.mmaType, fresh && kStep == 0,
        /*transposeA=*/!product->lhs.kContiguous,
        /*transposeB=*/!product->rhs.kContiguous);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return packed;
}

Value MmaKernelBuilder::waitForWgmmaGroups(Value packed, int64_t inFlight) {
  bool registerA = product->lhs.mmaType.isTF32();
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, registerA ? 0 : inFlight);
  if (!registerA)
    return packed;
  int64_t count = cast<LLVM::LLVMStructType>(packed.getType()).getBody().size();
  return packAccumulators(
      mma::pinRegisters(b, loc, unpackAccumulators(packed, count)));
}

void MmaKernelBuilder::multiplyStageWgmma(Value stage,
                                          SmallVectorImpl<Value> &acc) {
  // This warpgroup's accumulators (64 x tileN, f32) as the struct wgmma
  // reads and writes.
  // e4m3: each stage's sum is added to the f32 accumulators by the
  // threads (the promotion of DeepSeek-V3, sec. 3.3.2, and CUTLASS's
  // non-"FastAccum" fp8 kernels): Hopper's fp8 wgmma keeps fewer bits than
  // f32 as it accumulates, so sums over all of k would lose precision as k
  // grows. The emulator accumulates exactly either way.
  bool promote = isa<Float8E4M3FNType>(product->lhs.mmaType);
  // The stage's sum starts from scale-d 0, so its input is poison: values
  // moved into the wgmma's registers would be accesses that need another
  // wgmma.fence after them.
  Value input = packAccumulators(acc);
  if (promote)
    input = LLVM::PoisonOp::create(b, loc, input.getType());
  // The stage is read before the barrier that lets its next copies in.
  Value packed = waitForWgmmaGroups(issueWgmmaStage(stage, input, promote),
                                    /*inFlight=*/0);
  SmallVector<Value> result = unpackAccumulators(packed, acc.size());
  if (promote)
    for (auto [sum, partial] : llvm::zip(acc, result))
      partial = arith::AddFOp::create(b, loc, sum, partial);
  llvm::copy(result, acc.begin());
}

void MmaKernelBuilder::multiplyStage(Value stage, SmallVectorImpl<Value> &acc) {
  if (wgmma)
    return multiplyStageWgmma(stage, acc);
  Value lhsStage = mul(stage, lhs.stageElements());
  Value rhsStage = mul(stage, rhs.stageElements());
  // A k step is one mma.sync's k: two chunks (k16 of bf16/f16, k8 of
  // tf32).
  int64_t kStepLen = 2 * lhs.chunkElements();
  for (int64_t kStep = 0; kStep < tileK / kStepLen; ++kStep) {
    SmallVector<SmallVector<Value>> aFrags, bFrags;
    for (int64_t fragM = 0; fragM < fragsM; ++fragM)
      aFrags.push_back(loadBlock(lhs, lhsStage,
                                 add(mul(warpM, warpTileM), fragM * 16), kStep,
                                 /*rowHalfMinor=*/true));
    for (int64_t pair = 0; pair < fragsN / 2; ++pair) {
      SmallVector<Value> regs =
          loadBlock(rhs, rhsStage, add(mul(warpN, warpTileN), pair * 16), kStep,
                    /*rowHalfMinor=*/false);
      bFrags.push_back({regs[0], regs[1]});
      bFrags.push_back({regs[2], regs[3]});
    }
    for (int64_t fragM = 0; fragM < fragsM; ++fragM) {
      for (int64_t fragN = 0; fragN < fragsN; ++fragN) {
        int64_t base = (fragM * fragsN + fragN) * 4;
        SmallVector<Value> c(ArrayRef<Value>(acc).slice(base, 4));
        SmallVector<Value> d = mma::createMma(
            b, loc, aFrags[fragM], bFrags[fragN], c, product->lhs.mmaType);
        llvm::copy(d, acc.begin() + base);
      }
    }
  }
}

SmallVector<Value> MmaKernelBuilder::buildRegisterStagedLoop() {
  Value zeroIndex = index(0);
  // Prologue: the first k tile into stage 0 (a split with no tiles loads
  // zeros past k and multiplies nothing).
  SmallVector<Value> a = loadTile(lhs, kFirst);
  SmallVector<Value> bTile = loadTile(rhs, kFirst);
  storeTile(lhs, a, zeroIndex);
  storeTile(rhs, bTile, zeroIndex);
  fenceSharedForWgmma();
  gpu::BarrierOp::create(b, loc);

  scf::ForOp loop = createKLoop();
  OpBuilder::InsertionGuard loopGuard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value kTile = loop.getInductionVar();
  Value next = add(kTile, 1);
  Value hasNext = lessThan(next, kCount);
  Value current = rem(kTile, 2);
  Value nextStage = rem(next, 2);
  // 1. The next tile's global loads, in flight during the multiplies.
  SmallVector<Type> chunkTypes;
  int64_t lhsCount = lhs.outerLen * lhs.chunksPerRow() / threads;
  int64_t rhsCount = rhs.outerLen * rhs.chunksPerRow() / threads;
  chunkTypes.append(lhsCount, VectorType::get({lhs.chunkElements()},
                                              product->lhs.getStagedType()));
  chunkTypes.append(rhsCount, VectorType::get({rhs.chunkElements()},
                                              product->rhs.getStagedType()));
  auto prefetch = scf::IfOp::create(b, loc, chunkTypes, hasNext,
                                    /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(prefetch.thenBlock());
    SmallVector<Value> loaded = loadTile(lhs, add(kFirst, next));
    llvm::append_range(loaded, loadTile(rhs, add(kFirst, next)));
    scf::YieldOp::create(b, loc, loaded);
    b.setInsertionPointToStart(prefetch.elseBlock());
    SmallVector<Value> zeros;
    for (Type type : chunkTypes)
      zeros.push_back(arith::ConstantOp::create(
          b, loc, type, b.getZeroAttr(cast<ShapedType>(type))));
    scf::YieldOp::create(b, loc, zeros);
  }
  // 2. The multiplies of the current stage.
  SmallVector<Value> acc(loop.getRegionIterArgs().begin(),
                         loop.getRegionIterArgs().end());
  multiplyStage(current, acc);
  // 3. The next tile into the other stage, which every warp finished
  //    reading before the previous iteration's barrier.
  auto store = scf::IfOp::create(b, loc, hasNext, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(store.thenBlock()->getTerminator());
    ResultRange loaded = prefetch.getResults();
    storeTile(lhs, SmallVector<Value>(loaded.take_front(lhsCount)), nextStage);
    storeTile(rhs, SmallVector<Value>(loaded.drop_front(lhsCount)), nextStage);
    fenceSharedForWgmma();
  }
  gpu::BarrierOp::create(b, loc);
  scf::YieldOp::create(b, loc, acc);
  return SmallVector<Value>(loop.getResults());
}

SmallVector<Value> MmaKernelBuilder::buildAsyncCopyLoop() {
  // Prologue: the block's first stages-1 k tiles in flight, one commit
  // group each (an empty group past its last tile keeps the wait counts
  // uniform).
  for (int64_t tile = 0; tile < stages - 1; ++tile) {
    if (tile < kCountBound) {
      OpBuilder::InsertionGuard ifGuard(b);
      if (!kCountExact) {
        auto guard = scf::IfOp::create(b, loc, lessThan(index(tile), kCount),
                                       /*withElseRegion=*/false);
        b.setInsertionPoint(guard.thenBlock()->getTerminator());
      }
      copyTileAsync(lhs, add(kFirst, tile), index(tile));
      copyTileAsync(rhs, add(kFirst, tile), index(tile));
    }
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }
  scf::ForOp loop = createKLoop();
  OpBuilder::InsertionGuard loopGuard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value kTile = loop.getInductionVar();
  // 1. Tile kTile has landed once at most stages-2 younger groups are in
  //    flight; the barrier makes every thread's copies visible, and
  //    guarantees every warp finished multiplying tile kTile-1, whose stage
  //    the copies issued next overwrite.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, stages - 2);
  fenceSharedForWgmma();
  gpu::BarrierOp::create(b, loc);
  // 2. Tile kTile + stages - 1 into the stage tile kTile - 1 used.
  Value ahead = add(kTile, stages - 1);
  auto issue = scf::IfOp::create(b, loc, lessThan(ahead, kCount),
                                 /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(issue.thenBlock()->getTerminator());
    Value stage = rem(ahead, stages);
    copyTileAsync(lhs, add(kFirst, ahead), stage);
    copyTileAsync(rhs, add(kFirst, ahead), stage);
  }
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  // 3. The multiplies of tile kTile.
  SmallVector<Value> acc(loop.getRegionIterArgs().begin(),
                         loop.getRegionIterArgs().end());
  multiplyStage(rem(kTile, stages), acc);
  scf::YieldOp::create(b, loc, acc);
  return SmallVector<Value>(loop.getResults());
}

StagedOperand MmaKernelBuilder::stageOperand(const MmaProduct &product,
                                             bool isLhs) {
  const MmaOperand &operand = isLhs ? product.lhs : product.rhs;
  StagedOperand staged;
  staged.operand = &operand;
  staged.isLhs = isLhs;
  staged.source = operand.value;
  int64_t rowLen = isLhs ? tileM : tileN;
  int64_t rowExtent = isLhs ? mma.m : mma.n;
  if (operand.kContiguous) {
    staged.outerLen = rowLen;
    staged.innerLen = tileK;
    staged.outerExtent = rowExtent;
    staged.innerExtent = product.k;
  } else {
    staged.outerLen = tileK;
    staged.innerLen = rowLen;
    staged.outerExtent = product.k;
    staged.innerExtent = rowExtent;
  }
  return staged;
}

MemRefType MmaKernelBuilder::getStageBufferType(const StagedOperand &staged) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  return MemRefType::get({stages * staged.stageElements()},
                         staged.operand->getStagedType(),
                         MemRefLayoutAttrInterface(), workgroup);
}

LogicalResult MmaKernelBuilder::build(func::FuncOp encodeFn) {
  int64_t batchCount = mma.getBatchCount();
  // Every product stages A and B tiles of the same size: one pair of shared
  // buffers serves them all.
  for (const MmaProduct &candidate : mma.products) {
    Operation *contraction = candidate.contraction;
    for (bool isLhs : {true, false}) {
      StagedOperand staged = stageOperand(candidate, isLhs);
      if ((staged.outerLen * staged.chunksPerRow()) % threads != 0)
        return contraction->emitError()
               << "tensor-core tile " << tileM << "x" << tileN << "x" << tileK
               << " does not split evenly over " << threads << " threads";
      if (stages <= 2 || tma)
        continue;
      const MmaOperand &operand = *staged.operand;
      if (operand.gathered && !operand.zeroFilledChunks)
        return contraction->emitError()
               << "'mma_stages' " << stages
               << " fills shared memory with cp.async, which copies 16-byte "
                  "chunks: an operand read element by element (a "
                  "convolution's window, or rows that are not whole chunks) "
                  "needs 2 (register-staged) stages";
      if (!operand.isCopiedAsBytes())
        return contraction->emitError()
               << "'mma_stages' " << stages
               << " fills shared memory with cp.async, which copies bytes: "
                  "an operand stored as "
               << operand.elementType << " and multiplied in "
               << operand.mmaType << " needs 2 (register-staged) stages";
    }
  }
  const MmaProduct &first = mma.products.front();
  if (std::optional<std::string> why = whyNotWgmmaOperands(mma); why && wgmma)
    return first.contraction->emitError()
           << "'mma_instruction' \"wgmma\" cannot multiply these operands: "
           << *why << "; they need \"mma_sync\"";
  if (wgmma && !tma && tileK * first.lhs.getStagedBytes() != 64)
    return first.contraction->emitError()
           << "a wgmma tile of k " << tileK << " of " << first.lhs.mmaType
           << " is not rows of 64 bytes (the 64-byte swizzle)";
  if (tma && tileK * first.lhs.getStagedBytes() != 128)
    return first.contraction->emitError()
           << "a TMA tile of k " << tileK << " of " << first.lhs.mmaType
           << " is not rows of 128 bytes (the 128-byte swizzle)";
  if (isa<Float8E4M3FNType>(first.lhs.mmaType) &&
      (!wgmma || !first.lhs.kContiguous || !first.rhs.kContiguous))
    return first.contraction->emitError()
           << "e4m3 operands need 'mma_instruction' \"wgmma\" (sm_90a) and "
              "both operands K-major (wgmma reads e4m3 only K-major)";
  // Static shared memory (the config checked it at 2 bytes an element).
  if (!tma) {
    StagedOperand a = stageOperand(first, true),
                  bStaged = stageOperand(first, false);
    int64_t bytes =
        stages * (a.stageElements() * a.elementBytes() +
                  bStaged.stageElements() * bStaged.elementBytes()) +
        (splitK > 1 ? kSplitKArrivalBytes : 0);
    if (bytes > kMaxStaticSharedMemoryBytes)
      return first.contraction->emitError()
             << stages << " stages of a " << tileM << "x" << tileN << "x"
             << tileK << " tile of " << first.lhs.getStagedType() << " take "
             << bytes << " bytes of shared memory, more than 48 KiB";
  }
  if (tma && failed(prepareTmaOperands(encodeFn)))
    return failure();
  buildScaleReductions();
  for (const MmaContraction::ResultAmax &amax : mma.resultAmaxes)
    createZeroingLaunch(b, loc, getAmaxBuffer(amax));

  Value gridX = index(llvm::divideCeil(mma.n, tileN));
  Value gridY = index(llvm::divideCeil(mma.m, tileM));
  Value gridZ = index(batchCount * splitK);
  Value one = index(1);
  // Split-K: each split's partial sums, in fragment order (accumulators of
  // every product, every thread, every split of every output tile), and
  // each tile's arrival counter. The counters start at zero, and the
  // launch leaves them so (SplitKBuffers): ridge-plan-device-memory may
  // place them in memory zeroed once instead of zeroing them every run.
  int64_t numResults =
      static_cast<int64_t>(mma.products.size()) * fragsM * fragsN * 4;
  int64_t numTiles = batchCount * llvm::divideCeil(mma.n, tileN) *
                     llvm::divideCeil(mma.m, tileM);
  SplitKBuffers splitBuffers;
  if (splitK > 1)
    splitBuffers =
        createSplitKBuffers(numTiles * splitK * numResults * threads, numTiles);
  // The TMA kernel's shared memory is dynamic (its stages may pass the 48
  // KiB of static shared memory), aligned in the kernel; its producer warp
  // comes after the consumer warpgroups. The others stage in two workgroup
  // buffers.
  Value dynamicSharedBytes;
  SmallVector<Type> attributions;
  if (tma)
    dynamicSharedBytes = arith::ConstantIntOp::create(
        b, loc, b.getI32Type(),
        getTmaSharedMemoryBytes(tileM, tileN, stages) +
            getDedicatedStagingBytes() +
            (splitK > 1 ? kSplitKArrivalBytes : 0));
  else
    attributions = {getStageBufferType(stageOperand(mma.products[0], true)),
                    getStageBufferType(stageOperand(mma.products[0], false))};
  // The epilogue's own staging rows, where the stages cannot hold them.
  if (int64_t stagingBytes = tma ? 0 : getDedicatedStagingBytes())
    attributions.push_back(getStagingBufferType(stagingBytes));
  // Split-K's arrival verdict, last.
  if (!tma && splitK > 1)
    attributions.push_back(getArrivalVerdictType(b.getContext()));
  auto launch = gpu::LaunchOp::create(
      b, loc, gridX, gridY, gridZ, index(tma ? threads + kWarpSize : threads),
      one, one, dynamicSharedBytes, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/ValueRange(), attributions);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  // z runs over the batch, and over the splits of each batch index.
  Value split, batchLinear = blockIds.z;
  if (splitK > 1) {
    split = rem(blockIds.z, splitK);
    batchLinear = div(blockIds.z, splitK);
  }
  setBlockCoordinates(launch, batchLinear);
  Value tile;
  if (splitK > 1)
    tile = getTileIndex(batchLinear, blockIds);
  if (tma) {
    buildTmaBlock(split, tile, splitBuffers);
  } else {
    if (splitK > 1)
      splitBuffers.arrival = launch.getWorkgroupAttributions().back();
    buildThreadStagedBlock(launch, split, tile, splitBuffers);
  }
  gpu::TerminatorOp::create(b, loc);
  if (splitK == 1)
    return success();
  b.setInsertionPointAfter(launch);
  deallocSplitKBuffers(splitBuffers);
  return success();
}

void MmaKernelBuilder::buildThreadStagedBlock(
    gpu::LaunchOp launch, Value split, Value tile,
    const SplitKBuffers &splitBuffers) {
  // The products one after the other, each with its own accumulators; the
  // barrier between them keeps the second's first stores out of stages
  // the first is still reading.
  SmallVector<SmallVector<Value>> results;
  for (const MmaProduct &current : mma.products) {
    if (!results.empty())
      gpu::BarrierOp::create(b, loc);
    product = &current;
    lhs = stageOperand(current, /*isLhs=*/true);
    rhs = stageOperand(current, /*isLhs=*/false);
    lhs.smem = launch.getWorkgroupAttributions()[0];
    rhs.smem = launch.getWorkgroupAttributions()[1];
    for (StagedOperand *staged : {&lhs, &rhs})
      collapseKDims(*staged);
    setKRange(llvm::divideCeil(current.k, tileK), split);
    results.push_back(stages > 2 ? buildAsyncCopyLoop()
                                 : buildRegisterStagedLoop());
  }
  // The epilogue's own rows (the third buffer), or the stages, free for it
  // once every warp has read its last tile and no copy is in flight into
  // them.
  Value stagingRows;
  if (getDedicatedStagingBytes())
    stagingRows = launch.getWorkgroupAttributions()[2];
  finishResults(results, split, tile, splitBuffers, stagingRows,
                {lhs.smem, rhs.smem}, [&] {
                  if (stages > 2)
                    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
                  gpu::BarrierOp::create(b, loc);
                });
}

void MmaKernelBuilder::setKRange(int64_t numKTiles, Value split) {
  if (splitK == 1) {
    kFirst = index(0);
    kCount = index(numKTiles);
    kCountBound = numKTiles;
    kCountExact = true;
    return;
  }
  int64_t perSplit = llvm::divideCeil(numKTiles, splitK);
  kFirst = mul(split, perSplit);
  // min(perSplit, max(numKTiles - kFirst, 0)), in unsigned arithmetic:
  // kFirst may pass numKTiles when the splits outnumber a product's tiles.
  Value left = arith::SubIOp::create(
      b, loc, arith::MaxUIOp::create(b, loc, index(numKTiles), kFirst), kFirst);
  kCount = minimum(left, perSplit);
  kCountBound = perSplit;
  kCountExact = perSplit * splitK == numKTiles;
  if (kCountExact)
    kCount = index(perSplit);
}

void MmaKernelBuilder::setBlockCoordinates(gpu::LaunchOp launch,
                                           Value batchLinear) {
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  tid = launch.getThreadIds().x;
  lane = rem(tid, kWarpSize);
  Value warp = div(tid, kWarpSize);
  warpM = div(warp, warpsN);
  warpN = rem(warp, warpsN);
  mBase = mul(blockIds.y, tileM);
  nBase = mul(blockIds.x, tileN);
  setBatchIndices(batchLinear);
}

namespace {
struct LowerMmaContractionsPass
    : public ridge::impl::LowerMmaContractionsPassBase<
          LowerMmaContractionsPass> {
  void runOnOperation() override {
    // A module pass: TMA kernels' host code calls a runtime function that
    // the module declares.
    ModuleOp module = getOperation();
    for (auto kernel :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (failed(lowerKernel(kernel)))
        return signalPassFailure();
  }

  LogicalResult lowerKernel(func::FuncOp kernel) {
    if (kernel.isExternal() || !kernel->hasAttr(kKernelAttr))
      return success();
    FailureOr<std::optional<KernelConfig>> config = getKernelConfig(kernel);
    if (failed(config))
      return failure();
    if (!*config || !(*config)->usesDedicatedKernel())
      return success();
    std::string reason;
    FailureOr<MmaContraction> mma =
        matchMmaContraction(kernel, reason, /*allowF32=*/(*config)->gemv);
    if (failed(mma)) {
      kernel.emitError() << "kernel configured for tensor cores is not a "
                            "tensor-core contraction on buffers: "
                         << reason;
      return failure();
    }
    if (!mma->products.front().contraction.hasPureBufferSemantics()) {
      kernel.emitError() << "ridge-lower-mma-contractions runs on buffers "
                            "(after bufferization)";
      return failure();
    }
    // At the last of the ops, where every operand they read is defined (an
    // epilogue's residual may be a view made after the contraction).
    Operation *last = mma->epilogue
                          ? mma->epilogue.getOperation()
                          : mma->products.back().contraction.getOperation();
    OpBuilder builder(last);
    MmaKernelBuilder kernelBuilder(builder, last->getLoc(), *mma, **config);
    func::FuncOp encoder;
    if ((*config)->mmaTma)
      encoder = tma::declareTensorMapEncoder(getOperation());
    if (failed((*config)->gemv ? kernelBuilder.buildGemv()
                               : kernelBuilder.build(encoder)))
      return failure();
    // The linalg ops are now the launch; the accumulator buffer of an
    // epilogue kernel, and a result buffer copied out, are no longer needed.
    llvm::SetVector<Value> buffers;
    if (mma->epilogue) {
      for (Value init : mma->epilogue.getDpsInits())
        buffers.insert(init);
      mma->epilogue->erase();
    }
    for (memref::CopyOp copy : mma->zeroCopies)
      copy->erase();
    llvm::SetVector<Operation *> fills;
    for (MmaProduct &done : mma->products) {
      buffers.insert(done.contraction.getDpsInitOperand(0)->get());
      buffers.insert(done.fill.getDpsInitOperand(0)->get());
      done.contraction->erase();
      fills.insert(done.fill);
    }
    for (Operation *fill : fills)
      fill->erase();
    for (linalg::GenericOp producer : mma->producers) {
      buffers.insert(producer.getDpsInitOperand(0)->get());
      producer->erase();
    }
    // The scale reductions are launches now, and the amaxes of results
    // part of the GEMM's; their 0-d results stay (the GEMM launch reads
    // them, or the kernel returns them).
    llvm::SetVector<Operation *> scaleFills;
    for (MmaContraction::ScaleReduction &scale : mma->scaleReductions) {
      scale.reduction->erase();
      scaleFills.insert(scale.fill);
    }
    for (MmaContraction::ResultAmax &amax : mma->resultAmaxes) {
      amax.reduction->erase();
      scaleFills.insert(amax.fill);
    }
    for (Operation *fill : scaleFills)
      fill->erase();
    for (memref::CopyOp copy : mma->resultCopies) {
      if (!copy)
        continue;
      Operation *view = copy.getSource().getDefiningOp();
      copy->erase();
      if (view && isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(view))
        view->erase();
    }
    for (Value buffer : buffers) {
      auto alloc = buffer.getDefiningOp<memref::AllocOp>();
      if (!alloc)
        continue;
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      if (alloc->use_empty())
        alloc->erase();
    }
    std::optional<GemvForm> form =
        (*config)->gemv ? getGemvForm(*mma) : std::nullopt;
    if (!(*config)->gemv)
      ++numTensorCoreKernels;
    else if (form == GemvForm::TallSkinny)
      ++numTallSkinnyKernels;
    else
      ++numWeightGemvKernels;
    if ((*config)->mmaTma)
      ++numTmaKernels;
    LLVM_DEBUG({
      if (!(*config)->gemv)
        llvm::dbgs() << kernel.getName() << ": tensor-core kernel of "
                     << mma->products.size() << " product(s), "
                     << (*config)->mmaTile[0] << "x" << (*config)->mmaTile[1]
                     << "x" << (*config)->mmaTile[2]
                     << ((*config)->mmaTma ? ", TMA" : "") << "\n";
      else
        llvm::dbgs() << kernel.getName() << ": bandwidth path, "
                     << (form == GemvForm::TallSkinny ? "tall-skinny"
                         : form == GemvForm::NContiguousWeight
                             ? "n-contiguous weight"
                             : "k-contiguous weight")
                     << ", " << mma->m << "x" << mma->n << "x"
                     << mma->products.front().k << ", " << (*config)->gemvSplitK
                     << " share(s), " << (*config)->gemvRowsPerWarp
                     << " row(s) a warp\n";
    });
    return success();
  }
};
} // namespace
