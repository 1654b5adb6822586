//===- LowerFlashAttention.cpp - Tensor-core attention kernels ------------===//
//
// The mechanism of the tensor-core attention: a kernel whose
// `ridge.kernel_config` carries an `attention_tile` (decided by
// ridge-select-kernel-config from the kernel's `ridge.online_attention`) is
// rebuilt, on buffers, as one gpu.launch in the structure of
// FlashAttention-2's forward kernel:
//
//   - one block per 64 query rows of one (batch, head); each of its 4 warps
//     owns 16 rows, so every row's softmax state lives in one warp (in the
//     4 lanes of a quad that hold its accumulators);
//   - the query tile is staged once through shared memory into `mma.sync`
//     A fragments held in registers for the whole key loop;
//   - each step stages 64 keys and their values in XOR-swizzled shared
//     memory, rounded to the multiply format on the way (f32 operands;
//     a bf16/f16 model's are stored as read, one 16-byte load a chunk, and
//     its result is rounded to that format as it is stored); with two
//     stages, the next tile's global loads are in
//     flight while the warps work on the current one;
//   - S = Q K^T by `mma.sync.m16n8k16` into f32 accumulators; the scale
//     (times log2(e)), the additive mask and the causal and key-length
//     limits apply to the accumulators; the running maximum and sum per
//     row update with exp2, the accumulators of O are rescaled, and the
//     probabilities, rounded, become the A fragments of O += P V (the
//     accumulator layout of two m16n8 tiles is the A layout of one m16k16);
//   - O / l is stored once, 8 bytes a lane; when the kernel also returns
//     the amax of O (an fp8 consumer's scale,
//     ridge-move-scale-reductions-to-producers), each lane folds the
//     magnitudes it stored into it, one atomic max a warp, after a
//     one-thread launch zeroed it.
//
// With `mma_instruction = "wgmma"` (sm_90a) the 4 warps are one warpgroup
// and each product is `wgmma.mma_async` m64nNk16: S = Q K^T with both
// operands from shared memory (the query tile in a buffer of its own), O
// += P V with P from registers. Q, K and V are stored in the
// 64-byte-swizzled slabs wgmma's descriptors read (MmaFragments.h). Q is
// not held in registers: ptxas 13 reused the registers of loop-invariant A
// fragments inside the key loop (docs/attention.md).
//
// With `attention_tma` as well (K and V stored as multiplied), a fifth warp
// is FlashAttention-3's producer: one lane copies the query tile (where it
// is stored so too) and each key tile's K and V with TMA tensor copies,
// boxes of one 64-byte slab in that same swizzle, into two stages of
// dynamic shared memory; a full and an empty mbarrier per stage (and one
// for the query tile) order them with the warpgroup, which then never
// waits at a block barrier.
//
// With `attention_splits` (few query tiles over many keys: flash-decoding),
// the blocks of a query tile split its key tiles; each writes its rows'
// maximum, sum and unnormalized O to a partial buffer, and the last of the
// tile's blocks to finish (SplitArrival.h), a thread a row, combines them
// with weights exp2(m_s - max m). The
// probabilities of a split are rounded relative to its own running
// maximum, so a split kernel agrees with the CPU's online form to the
// rounding of P, not bit for bit.
//
// With `attention_decode` (a few query rows over a long cache: a decode
// step, memory-bound; f32 arithmetic, operands and P rounded where the
// products are), the kernel is a block of 4 warps per (query row,
// `attention_decode_heads` query heads of one key head, key split): each
// warp loads the K and V rows of a run of `attention_decode_keys` keys
// before it uses the first (the bytes in flight that set a streaming
// kernel's speed) and scores them for each of the block's heads, lanes
// holding d / 32 consecutive elements of the head dimension (one vector
// where the rows allow) or every 32nd, each score a shuffle reduction, one
// online rescale per run; the warps meet in shared memory, the splits in
// the combining launch. With a KV-cache append, keys come from the past
// rows or the new ones and one block of each key head writes the
// concatenations as it reads them.
//
// The scores exist only in registers. The CPU's online form rounds Q, K, V
// and P where this kernel does and steps keys in the same tiles
// (kAttentionKeyTile), so it is the oracle of this kernel's numbers.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/FlashAttention.h"
#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/MmaContraction.h"
#include "ridgeline/Codegen/Passes.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "AtomicMaximum.h"
#include "FlashAttentionBuilder.h"
#include "MmaFragments.h"
#include "SplitArrival.h"
#include "TmaCopies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#include <limits>

#define DEBUG_TYPE "ridge-lower-flash-attention"

namespace mlir::ridge {
#define GEN_PASS_DEF_LOWERFLASHATTENTIONPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::flash;

SmallVector<Value> FlashAttentionBuilder::loadTile(const GlobalOperand &operand,
                                                   Value head, Value rowBase,
                                                   int64_t rowExtent,
                                                   int64_t cols, bool slabs) {
  auto chunkType = VectorType::get({kChunk}, mmaType);
  auto halfType = VectorType::get({kChunk / 2}, b.getF32Type());
  Value zero =
      arith::ConstantOp::create(b, loc, chunkType, b.getZeroAttr(chunkType));
  int64_t chunksPerRow = cols / kChunk;
  SmallVector<Value> chunks;
  for (int64_t first = 0; first < keyTile * chunksPerRow; first += threads) {
    auto [rowInTile, chunk] = getChunkPosition(add(tid, first), cols, slabs);
    Value row = add(rowBase, rowInTile);
    Value inBounds = lessThan(row, index(rowExtent));
    // Rows past the extent are zeros, not read: a partial last tile moves
    // only the bytes of its rows.
    auto load = scf::IfOp::create(b, loc, TypeRange{chunkType}, inBounds,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(load.thenBlock());
    // The 8 elements of `source` from its column `col` of `row`, as f32:
    // two 16-byte loads of f32, one of a 16-bit format (converted back
    // without loss where the tile stores that format).
    auto loadChunk = [&](const GlobalOperand &source, Value col) -> Value {
      Value at = elementIndex(source, head, row, col);
      llvm::MaybeAlign align =
          source.aligned ? llvm::MaybeAlign(16) : llvm::MaybeAlign();
      if (!source.element.isF32()) {
        Value narrow = vector::LoadOp::create(
            b, loc, VectorType::get({kChunk}, source.element), source.flat,
            ValueRange{at}, false, align);
        return arith::ExtFOp::create(
            b, loc, VectorType::get({kChunk}, b.getF32Type()), narrow);
      }
      Value low = vector::LoadOp::create(b, loc, halfType, source.flat,
                                         ValueRange{at}, false, align);
      Value high =
          vector::LoadOp::create(b, loc, halfType, source.flat,
                                 ValueRange{add(at, kChunk / 2)}, false, align);
      return vector::ShuffleOp::create(
          b, loc, low, high, ArrayRef<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
    };
    Value col = mul(chunk, kChunk);
    Value wide = loadChunk(operand, col);
    if (operand.cos) {
      // RoPE: the chunk and its partner D/2 away (a chunk never straddles
      // the halves: D/2 is a multiple of 8), rotated by the caches' entries
      // of its pair index: cos x - sin x' below D/2, sin x' + cos x above,
      // the rotary embedding's lowering's products. Both halves are
      // fma(+-sin, x', cos x), the sine negated (exactly) below D/2: a
      // multiply, a sign flip and an fma an element, where computing both
      // halves and selecting took two multiplies, an add, a subtract and a
      // select. The fma rounds the sum once, as ridge-contract-multiply-
      // add's contractions do (docs/target.md).
      int64_t half = cols / 2;
      Value lower = lessThan(col, index(half));
      Value pair = arith::SelectOp::create(
          b, loc, lower, col, arith::SubIOp::create(b, loc, col, index(half)));
      Value partner =
          loadChunk(operand, arith::SelectOp::create(b, loc, lower,
                                                     add(col, half), pair));
      Value cosX =
          arith::MulFOp::create(b, loc, loadChunk(*operand.cos, pair), wide);
      // The sign flip is an xor of the sign bits with the chunk's mask:
      // one instruction an element, not a negation and a select.
      auto bitsType = VectorType::get({kChunk}, b.getI32Type());
      Value signMask = vector::BroadcastOp::create(
          b, loc, bitsType,
          arith::SelectOp::create(
              b, loc, lower,
              arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                           static_cast<int32_t>(0x80000000)),
              arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0)));
      Value sinBits = arith::BitcastOp::create(b, loc, bitsType,
                                               loadChunk(*operand.sin, pair));
      Value signedSin = arith::BitcastOp::create(
          b, loc, cosX.getType(),
          arith::XOrIOp::create(b, loc, sinBits, signMask));
      wide = math::FmaOp::create(b, loc, signedSin, partner, cosX);
    }
    scf::YieldOp::create(
        b, loc, ValueRange{arith::TruncFOp::create(b, loc, chunkType, wide)});
    b.setInsertionPointToStart(load.elseBlock());
    scf::YieldOp::create(b, loc, zero);
    chunks.push_back(load.getResult(0));
  }
  return chunks;
}

void FlashAttentionBuilder::copyTileAsync(const GlobalOperand &operand,
                                          Value head, Value rowBase,
                                          int64_t rowExtent, int64_t cols,
                                          Value smem, Value stageOffset,
                                          bool slabs) {
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  int64_t chunksPerRow = cols / kChunk;
  for (int64_t first = 0; first < keyTile * chunksPerRow; first += threads) {
    auto [rowInTile, chunk] = getChunkPosition(add(tid, first), cols, slabs);
    Value row = add(rowBase, rowInTile);
    Value inBounds = lessThan(row, index(rowExtent));
    Value safeRow = arith::MinSIOp::create(b, loc, row, index(rowExtent - 1));
    Value offset =
        add(stageOffset,
            slabs ? mma::getSlabOffset(b, loc, rowInTile, chunk, keyTile)
                  : mma::getSwizzledOffset(b, loc, rowInTile, chunk, cols));
    Value sourceElements =
        arith::SelectOp::create(b, loc, inBounds, index(kChunk), index(0));
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, tokenType, smem, ValueRange{offset}, operand.flat,
        ValueRange{elementIndex(operand, head, safeRow, mul(chunk, kChunk))},
        b.getIndexAttr(kChunk), sourceElements, b.getUnitAttr());
  }
}

void FlashAttentionBuilder::storeTile(ArrayRef<Value> chunks, Value smem,
                                      Value stageOffset, int64_t cols,
                                      bool slabs) {
  for (auto [i, chunk] : llvm::enumerate(chunks)) {
    auto [row, column] = getChunkPosition(
        add(tid, static_cast<int64_t>(i) * threads), cols, slabs);
    Value offset = add(
        stageOffset, slabs ? mma::getSlabOffset(b, loc, row, column, keyTile)
                           : mma::getSwizzledOffset(b, loc, row, column, cols));
    vector::StoreOp::create(b, loc, chunk, smem, offset,
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  }
}

void FlashAttentionBuilder::combineRow(Value partials, Value out, Value row) {
  // The splits' maxima give M; each split's sum and O count with weight
  // exp2(m_s - M); O / L, 0 for a row no split reached.
  int64_t rows = fa.batch * fa.heads * fa.queryLen;
  int64_t partialRow = getPartialRow();
  int64_t splitStride = rows * partialRow;
  Value one = index(1);
  Value rowStart = mul(row, partialRow);
  auto at = [&](Value s, int64_t column) -> Value {
    return memref::LoadOp::create(
        b, loc, partials,
        ValueRange{add(add(mul(s, splitStride), rowStart), column)});
  };
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  auto forSplits =
      [&](ValueRange inits,
          function_ref<SmallVector<Value>(Value, ValueRange)> body) {
        return scf::ForOp::create(
                   b, loc, index(0), index(splits), one, inits,
                   [&](OpBuilder &, Location, Value s, ValueRange args) {
                     scf::YieldOp::create(b, loc, body(s, args));
                   })
            .getResults();
      };
  Value max = forSplits(negInf, [&](Value s, ValueRange args) {
    return SmallVector<Value>{
        arith::MaximumFOp::create(b, loc, args[0], at(s, fa.valueDim))};
  })[0];
  Value allEmpty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max, negInf);
  Value shift = arith::SelectOp::create(b, loc, allEmpty, f32(0.0), max);
  auto weight = [&](Value s) {
    return exp2(arith::SubFOp::create(b, loc, at(s, fa.valueDim), shift));
  };
  Value sum = forSplits(f32(0.0), [&](Value s, ValueRange args) {
    return SmallVector<Value>{math::FmaOp::create(
        b, loc, weight(s), at(s, fa.valueDim + 1), args[0])};
  })[0];
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, f32(0.0));
  Value inverse = arith::SelectOp::create(
      b, loc, empty, f32(0.0), arith::DivFOp::create(b, loc, f32(1.0), sum));
  // (b, h, i) of the row, for the result's indices.
  Value i = rem(row, fa.queryLen);
  Value h = rem(div(row, fa.queryLen), fa.heads);
  Value batch = div(row, fa.queryLen * fa.heads);
  scf::ForOp::create(
      b, loc, index(0), index(fa.valueDim), one, ValueRange(),
      [&](OpBuilder &, Location, Value d, ValueRange) {
        Value acc = forSplits(f32(0.0), [&](Value s, ValueRange args) {
          Value partial = memref::LoadOp::create(
              b, loc, partials,
              ValueRange{add(add(mul(s, splitStride), rowStart), d)});
          return SmallVector<Value>{
              math::FmaOp::create(b, loc, weight(s), partial, args[0])};
        })[0];
        memref::StoreOp::create(
            b, loc, toResult(arith::MulFOp::create(b, loc, acc, inverse)), out,
            ValueRange{batch, h, i, d});
        scf::YieldOp::create(b, loc);
      });
}

LogicalResult
FlashAttentionBuilder::bindOperands(ArrayRef<BlockArgument> args) {
  auto bind = [&](const StridedOperand &view, GlobalOperand &operand,
                  bool isMask = false) -> LogicalResult {
    if (view.arg >= args.size())
      return emitError(loc) << "attention operand reads argument " << view.arg
                            << " of a kernel with " << args.size();
    auto type = dyn_cast<MemRefType>(args[view.arg].getType());
    auto element =
        type ? dyn_cast<FloatType>(type.getElementType()) : FloatType();
    // A mask may be boolean (ONNX Attention's attn_mask): read a byte each.
    bool allowed = isMask && type && type.getElementType().isInteger(1);
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
        (!allowed && (!element || !(element.isF32() || element.isF16() ||
                                    element.isBF16()))))
      return emitError(loc) << "attention operand argument " << view.arg
                            << " is not a contiguous f32, f16 or bf16 buffer"
                            << (isMask ? " (or i1 mask)" : "");
    operand.view = &view;
    operand.element = element;
    operand.allowed = allowed;
    operand.flat = args[view.arg];
    if (type.getRank() != 1) {
      ReassociationIndices all;
      for (int64_t d = 0; d < type.getRank(); ++d)
        all.push_back(d);
      operand.flat = memref::CollapseShapeOp::create(
          b, loc, operand.flat, ArrayRef<ReassociationIndices>{all});
    }
    int64_t perChunk =
        16 / std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    operand.aligned = view.offset % perChunk == 0 &&
                      llvm::all_of(view.strides, [&](int64_t stride) {
                        return stride % perChunk == 0 || stride == 1;
                      });
    return success();
  };
  if (failed(bind(fa.query, query)) || failed(bind(fa.key, key)) ||
      failed(bind(fa.value, value)) ||
      (fa.mask && failed(bind(*fa.mask, mask, /*isMask=*/true))))
    return failure();
  for (auto [append, operand, tail, present, cols] :
       {std::tuple(&fa.keyAppend, &key, &keyTail, &keyPresent, fa.dim),
        std::tuple(&fa.valueAppend, &value, &valueTail, &valuePresent,
                   fa.valueDim)}) {
    if (!*append)
      continue;
    if (failed(bind((*append)->tail, *tail)))
      return failure();
    if (tail->element != operand->element)
      return emitError(loc) << "a KV-cache append's past and new rows are "
                               "stored in different types";
    if (!(*append)->present)
      continue;
    unsigned arg = *(*append)->present;
    auto type = arg < args.size() ? dyn_cast<MemRefType>(args[arg].getType())
                                  : MemRefType();
    SmallVector<int64_t> shape{fa.batch, fa.kvHeads, fa.keyLen, cols};
    if (!type || type.getShape() != ArrayRef<int64_t>(shape) ||
        !type.getLayout().isIdentity() ||
        type.getElementType() != operand->element)
      return emitError(loc)
             << "a KV-cache append's concatenation (argument " << arg
             << ") is not a contiguous buffer of the "
                "keys' shape and type";
    ReassociationIndices all{0, 1, 2, 3};
    *present = memref::CollapseShapeOp::create(
        b, loc, args[arg], ArrayRef<ReassociationIndices>{all});
  }
  for (auto [rotary, operand, cos, sin] :
       {std::tuple(&fa.queryRotary, &query, &queryCos, &querySin),
        std::tuple(&fa.keyRotary, &key, &keyCos, &keySin)}) {
    if (!*rotary)
      continue;
    if (failed(bind((*rotary)->cos, *cos)) ||
        failed(bind((*rotary)->sin, *sin)))
      return failure();
    operand->cos = cos;
    operand->sin = sin;
  }
  return success();
}

FlashAttentionBuilder::TensorCopyOperand
FlashAttentionBuilder::encodeTensorCopies(const GlobalOperand &operand,
                                          Value arg, int64_t rows,
                                          int64_t heads, int64_t cols,
                                          func::FuncOp encoder) {
  const StridedOperand &view = *operand.view;
  TensorCopyOperand copies;
  copies.cols = cols;
  tma::TensorMapLayout layout;
  layout.elementBytes = mmaType.getIntOrFloatBitWidth() / 8;
  layout.dataType = tma::getDataType(mmaType);
  // [cols, rows], then the heads and the batch where they advance (a
  // broadcast one is left out, its coordinate 0); a box is one 64-byte slab
  // of a 64-row tile (the key tile, the wgmma query tile), the 64-byte
  // swizzle wgmma's descriptors read.
  layout.dims = {cols, rows};
  layout.boxes = {mma::kSlabRowBytes / layout.elementBytes, keyTile};
  // One row: its stride is never used, but must be a 16-byte unit.
  layout.strides = {std::max<int64_t>(view.strides[2], kChunk) *
                    layout.elementBytes};
  copies.heads = heads > 1 && view.strides[1] != 0;
  copies.batch = fa.batch > 1 && view.strides[0] != 0;
  for (auto [kept, extent, stride] :
       {std::tuple(copies.heads, heads, view.strides[1]),
        std::tuple(copies.batch, fa.batch, view.strides[0])}) {
    if (!kept)
      continue;
    layout.dims.push_back(extent);
    layout.strides.push_back(stride * layout.elementBytes);
    layout.boxes.push_back(1);
  }
  layout.swizzle = tma::Swizzle::Bytes64;
  copies.hostMap = tma::encodeTensorMap(
      b, loc, encoder, arg, view.offset * layout.elementBytes, layout);
  return copies;
}

void FlashAttentionBuilder::copyTileTma(const TensorCopyOperand &operand,
                                        Value rowBase, Value tileHead,
                                        Value smem, Value stageBytes,
                                        Value barrier) {
  int64_t slabElements = mma::kSlabRowBytes / 2;
  for (int64_t slab = 0; slab < operand.cols / slabElements; ++slab) {
    SmallVector<Value> coords = {index(slab * slabElements), rowBase};
    if (operand.heads)
      coords.push_back(tileHead);
    if (operand.batch)
      coords.push_back(batchIndex);
    tma::copyBox(
        b, loc,
        tma::getSharedPointer(
            b, loc, smem, add(stageBytes, slab * keyTile * mma::kSlabRowBytes)),
        operand.map, coords, barrier);
  }
}

LogicalResult FlashAttentionBuilder::build(ArrayRef<BlockArgument> args,
                                           Value out, Value amax,
                                           func::FuncOp encoder) {
  if (failed(bindOperands(args)))
    return failure();
  outElement =
      cast<FloatType>(cast<MemRefType>(out.getType()).getElementType());
  MLIRContext *context = b.getContext();
  auto workgroup = gpu::AddressSpaceAttr::get(
      context, gpu::GPUDialect::getWorkgroupAddressSpace());
  auto smemType = [&](int64_t cols) {
    return MemRefType::get({stages * keyTile * cols}, mmaType,
                           MemRefLayoutAttrInterface(), workgroup);
  };
  Value one = index(1);
  int64_t queryTiles = llvm::divideCeil(fa.queryLen, blockRows);
  // Split keys: each split's rows' maximum, sum and unnormalized O, at
  // [split, b, h, row, 0 .. dv + 1], for the combining launch.
  int64_t partialRow = getPartialRow();
  Value partials = allocatePartials();
  if (amax)
    createZeroingLaunch(b, loc, amax);
  // TMA: the tensor maps of K and V, encoded on the host; all of the
  // kernel's shared memory is dynamic, its producer warp after the
  // warpgroup.
  TensorCopyOperand keyCopies, valueCopies, queryCopies;
  Value dynamicSharedBytes;
  SmallVector<Type> workgroupTypes;
  // The query tile too, where TMA can copy it (stored as multiplied, not
  // rotated): the warpgroup then loads nothing.
  bool queryByTma =
      tma && !whyNotTensorMapOperand(fa, TypeRange(ValueRange(args)),
                                     AttentionOperand::Query);
  if (tma) {
    keyCopies = encodeTensorCopies(key, args[fa.key.arg], fa.keyLen, fa.kvHeads,
                                   fa.dim, encoder);
    valueCopies = encodeTensorCopies(value, args[fa.value.arg], fa.keyLen,
                                     fa.kvHeads, fa.valueDim, encoder);
    if (queryByTma)
      queryCopies = encodeTensorCopies(query, args[fa.query.arg], fa.queryLen,
                                       fa.heads, fa.dim, encoder);
    dynamicSharedBytes = arith::ConstantIntOp::create(
        b, loc, b.getI32Type(),
        getAttentionTmaSharedBytes(fa, stages) +
            (splits > 1 ? kSplitKArrivalBytes : 0));
  } else {
    // wgmma: the query tile keeps shared memory of its own, in the slabs
    // wgmma's descriptors read, for the whole key loop.
    workgroupTypes = {smemType(fa.dim), smemType(fa.valueDim)};
    if (wgmma)
      workgroupTypes.push_back(MemRefType::get({blockRows * fa.dim}, mmaType,
                                               MemRefLayoutAttrInterface(),
                                               workgroup));
  }
  // With splits, the blocks of one query tile arrive at a counter of their
  // own, and the last of them combines the tile's rows (SplitArrival.h).
  Value counters;
  if (splits > 1) {
    counters = createArrivalCounters(b, loc, queryTiles * fa.heads * fa.batch);
    if (!tma)
      workgroupTypes.push_back(getArrivalVerdictType(b.getContext()));
  }
  auto launch = gpu::LaunchOp::create(
      b, loc, index(queryTiles * splits), index(fa.heads), index(fa.batch),
      index(tma ? threads + kWarpSize : threads), one, one, dynamicSharedBytes,
      /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/ValueRange(), workgroupTypes);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  tid = launch.getThreadIds().x;
  Value keySmem, valueSmem, querySmem, verdict;
  // TMA: each stage's full and empty mbarriers, and the query tile's (a
  // pipeline of one stage).
  tma::StageBarriers barriers, queryBarriers;
  if (tma) {
    // The query tile, K's stages, V's stages, then the mbarriers (every
    // tile a multiple of 4 KiB: each slab starts on the 64-byte swizzle's
    // 512-byte period).
    tma::DynamicSharedMemory shared(b, loc);
    querySmem = shared.carve(MemRefType::get({blockRows * fa.dim}, mmaType));
    keySmem =
        shared.carve(MemRefType::get({stages * keyTile * fa.dim}, mmaType));
    valueSmem = shared.carve(
        MemRefType::get({stages * keyTile * fa.valueDim}, mmaType));
    barriers = {shared.carve(MemRefType::get({2 * stages}, b.getI64Type())),
                stages};
    queryBarriers = {shared.carve(MemRefType::get({2}, b.getI64Type())), 1};
    if (splits > 1)
      verdict = shared.carve(getArrivalVerdictType(b.getContext()));
    keyCopies.map = tma::getKernelTensorMap(b, loc, keyCopies.hostMap);
    valueCopies.map = tma::getKernelTensorMap(b, loc, valueCopies.hostMap);
    if (queryByTma)
      queryCopies.map = tma::getKernelTensorMap(b, loc, queryCopies.hostMap);
  } else {
    keySmem = launch.getWorkgroupAttributions()[0];
    valueSmem = launch.getWorkgroupAttributions()[1];
    if (wgmma)
      querySmem = launch.getWorkgroupAttributions()[2];
    if (splits > 1)
      verdict = launch.getWorkgroupAttributions().back();
  }
  // TMA: the producer warp's and the consumers' branches; the launch ends
  // after them.
  scf::IfOp roles;
  auto terminate = [&] {
    if (roles)
      b.setInsertionPointAfter(roles);
    gpu::TerminatorOp::create(b, loc);
  };
  lane = rem(tid, kWarpSize);
  warp = div(tid, kWarpSize);
  Value split = splits > 1 ? div(blockIds.x, queryTiles) : index(0);
  queryBase =
      mul(splits > 1 ? rem(blockIds.x, queryTiles) : blockIds.x, blockRows);
  head = blockIds.y;
  batchIndex = blockIds.z;
  kvHead = fa.heads == fa.kvHeads ? head : div(head, fa.heads / fa.kvHeads);
  Value group = div(lane, 4), quadLane = rem(lane, 4);
  Value zeroIndex = index(0);
  int64_t keyStageElements = keyTile * fa.dim;
  int64_t valueStageElements = keyTile * fa.valueDim;

  // 1. The query tile: mma.sync, through the first key stage into A
  //    fragments held for the whole key loop; wgmma, into its own shared
  //    memory, read by descriptor at every key tile. (Held in registers as
  //    wgmma's A, the fragments were overwritten by ptxas 13 after the first
  //    key tile: on an H200 every block with two or more key tiles got its
  //    later scores from P, and the SASS shows the same registers reused.
  //    FlashAttention-3 reads Q from shared memory too.)
  Value warpRow = mul(warp, kWarpRows);
  SmallVector<SmallVector<Value>> queryFragments;
  if (queryByTma) {
    // The producer copies it (below).
  } else if (wgmma) {
    // With TMA, the warpgroup's threads load it (the producer warp's lanes
    // would index past the tile) and fence their stores before the block's
    // one barrier.
    OpBuilder::InsertionGuard ifGuard(b);
    if (tma)
      b.setInsertionPoint(scf::IfOp::create(b, loc,
                                            lessThan(tid, index(threads)),
                                            /*withElseRegion=*/false)
                              .thenBlock()
                              ->getTerminator());
    storeTile(loadTile(query, head, queryBase, fa.queryLen, fa.dim,
                       /*slabs=*/true),
              querySmem, zeroIndex, fa.dim, /*slabs=*/true);
    if (tma)
      fenceSharedForWgmma();
  } else {
    storeTile(loadTile(query, head, queryBase, fa.queryLen, fa.dim), keySmem,
              zeroIndex, fa.dim);
    gpu::BarrierOp::create(b, loc);
    mma::FragmentBlock queryBlock{keySmem, zeroIndex, mmaType, fa.dim,
                                  /*kContiguous=*/true};
    for (int64_t kStep = 0; kStep < fa.dim / 16; ++kStep)
      queryFragments.push_back(mma::loadFragmentBlock(
          b, loc, queryBlock, lane, warpRow, kStep, /*rowHalfMinor=*/true));
    gpu::BarrierOp::create(b, loc);
  }

  // 2. The key tiles this block's rows may see: all, or up to the last
  //    row's causal limit.
  Value keyEnd = index(fa.keyLen);
  if (fa.causal) {
    Value limit = add(queryBase, blockRows + fa.queryOffset);
    keyEnd = arith::MaxSIOp::create(
        b, loc, zeroIndex, arith::MinSIOp::create(b, loc, keyEnd, limit));
  }
  Value endTile = div(add(keyEnd, keyTile - 1), keyTile);
  // A split's share: tilesPerSplit consecutive tiles.
  int64_t tilesPerSplit =
      llvm::divideCeil(llvm::divideCeil(fa.keyLen, keyTile), splits);
  Value firstTile = mul(split, tilesPerSplit);
  if (splits > 1)
    endTile =
        arith::MinSIOp::create(b, loc, endTile, add(firstTile, tilesPerSplit));
  Value firstKey = mul(firstTile, keyTile);
  // K and V stored in the multiply type (a half-precision model's) are
  // copied by cp.async, two stages: tile t + 1 is in flight while the warps
  // work on tile t, with no registers holding it.
  bool asyncCopy = !tma && stages == 2 && key.element == mmaType &&
                   value.element == mmaType && key.aligned && value.aligned &&
                   !key.cos;
  int64_t keyStageBytes = keyStageElements * 2;
  int64_t valueStageBytes = valueStageElements * 2;
  if (tma) {
    // One thread initializes the barriers: a stage is empty after one
    // arrival of each consumer thread. The block's one barrier publishes
    // them and the query tile; none follows.
    auto initIf = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, zeroIndex),
        /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPoint(initIf.thenBlock()->getTerminator());
      barriers.initialize(b, loc, threads);
      queryBarriers.initialize(b, loc, threads);
      NVVM::FenceMbarrierInitOp::create(b, loc);
    }
    gpu::BarrierOp::create(b, loc);
    roles = scf::IfOp::create(b, loc,
                              arith::CmpIOp::create(b, loc,
                                                    arith::CmpIPredicate::uge,
                                                    tid, index(threads)),
                              /*withElseRegion=*/true);
    {
      // The producer: one lane copies the query tile (rows past the
      // queries are zeros, as TMA fills them), then walks the block's key
      // tiles, each into the stage the consumers released `stages` tiles
      // before.
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPoint(roles.thenBlock()->getTerminator());
      auto laneIf = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                zeroIndex),
          /*withElseRegion=*/false);
      b.setInsertionPoint(laneIf.thenBlock()->getTerminator());
      if (queryByTma)
        copyTileTma(
            queryCopies, queryBase, head, querySmem, zeroIndex,
            queryBarriers.acquire(b, loc, zeroIndex, blockRows * fa.dim * 2));
      auto produce = scf::ForOp::create(b, loc, firstTile, endTile, one);
      b.setInsertionPointToStart(produce.getBody());
      Value tile = produce.getInductionVar();
      Value step = arith::SubIOp::create(b, loc, tile, firstTile);
      Value full =
          barriers.acquire(b, loc, step, keyStageBytes + valueStageBytes);
      Value stage = rem(step, stages);
      Value keyRow = mul(tile, keyTile);
      copyTileTma(keyCopies, keyRow, kvHead, keySmem, mul(stage, keyStageBytes),
                  full);
      copyTileTma(valueCopies, keyRow, kvHead, valueSmem,
                  mul(stage, valueStageBytes), full);
    }
    // The consumers: the rest of the kernel, once the query tile is in.
    b.setInsertionPoint(roles.elseBlock()->getTerminator());
    if (queryByTma)
      queryBarriers.waitFull(b, loc, zeroIndex);
  } else if (asyncCopy) {
    copyTileAsync(key, kvHead, firstKey, fa.keyLen, fa.dim, keySmem, zeroIndex,
                  wgmma);
    copyTileAsync(value, kvHead, firstKey, fa.keyLen, fa.valueDim, valueSmem,
                  zeroIndex, wgmma);
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    usedAsyncCopy = true;
  } else {
    storeTile(loadTile(key, kvHead, firstKey, fa.keyLen, fa.dim, wgmma),
              keySmem, zeroIndex, fa.dim, wgmma);
    storeTile(loadTile(value, kvHead, firstKey, fa.keyLen, fa.valueDim, wgmma),
              valueSmem, zeroIndex, fa.valueDim, wgmma);
    fenceSharedForWgmma();
    gpu::BarrierOp::create(b, loc);
  }

  // The loop carries per thread: the running maximum and (partial) sum of
  // its two rows (group, group + 8), and the O accumulators (dv / 8
  // fragments of 4).
  const double log2e = 1.4426950408889634;
  const double negInf = -std::numeric_limits<double>::infinity();
  int64_t keyFrags = keyTile / 8, valueFrags = fa.valueDim / 8;
  SmallVector<Value> inits{f32(negInf), f32(negInf), f32(0.0), f32(0.0)};
  inits.append(valueFrags * 4, f32(0.0));
  auto loop = scf::ForOp::create(b, loc, firstTile, endTile, one, inits);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value tile = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs();
    Value next = add(tile, 1);
    Value hasNext = lessThan(next, endTile);
    Value step = arith::SubIOp::create(b, loc, tile, firstTile);
    Value stage = stages == 2 ? rem(step, 2) : zeroIndex;
    Value nextKeyRow = mul(next, keyTile);
    // Two stages: the next tile's global loads, in flight during this
    // tile's products.
    SmallVector<Type> tileTypes = getTileTypes(fa.dim);
    int64_t keyChunks = tileTypes.size();
    llvm::append_range(tileTypes, getTileTypes(fa.valueDim));
    scf::IfOp prefetch;
    auto loadNext = [&]() {
      SmallVector<Value> loaded =
          loadTile(key, kvHead, nextKeyRow, fa.keyLen, fa.dim, wgmma);
      llvm::append_range(loaded, loadTile(value, kvHead, nextKeyRow, fa.keyLen,
                                          fa.valueDim, wgmma));
      return loaded;
    };
    if (tma) {
      // Tile t has landed: the producer's copies completed this phase of
      // its stage's full barrier.
      barriers.waitFull(b, loc, step);
    } else if (asyncCopy) {
      // Tile t has landed (this thread's copies: wait; everyone's: the
      // barrier, which also says every warp is done with tile t - 1, so its
      // stage takes tile t + 1).
      NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
      fenceSharedForWgmma();
      gpu::BarrierOp::create(b, loc);
      auto copyNext =
          scf::IfOp::create(b, loc, hasNext, /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard ifGuard(b);
        b.setInsertionPoint(copyNext.thenBlock()->getTerminator());
        Value nextStage =
            rem(arith::SubIOp::create(b, loc, next, firstTile), 2);
        copyTileAsync(key, kvHead, nextKeyRow, fa.keyLen, fa.dim, keySmem,
                      mul(nextStage, keyStageElements), wgmma);
        copyTileAsync(value, kvHead, nextKeyRow, fa.keyLen, fa.valueDim,
                      valueSmem, mul(nextStage, valueStageElements), wgmma);
        NVVM::CpAsyncCommitGroupOp::create(b, loc);
      }
    } else if (stages == 2) {
      prefetch = scf::IfOp::create(b, loc, tileTypes, hasNext,
                                   /*withElseRegion=*/true);
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(prefetch.thenBlock());
      scf::YieldOp::create(b, loc, loadNext());
      b.setInsertionPointToStart(prefetch.elseBlock());
      SmallVector<Value> zeros;
      for (Type type : tileTypes)
        zeros.push_back(arith::ConstantOp::create(
            b, loc, type, b.getZeroAttr(cast<ShapedType>(type))));
      scf::YieldOp::create(b, loc, zeros);
    }

    // S = Q K^T: keyFrags accumulators of 16 x 8.
    Value keyStage = mul(stage, keyStageElements);
    mma::FragmentBlock keyBlock{keySmem, keyStage, mmaType, fa.dim,
                                /*kContiguous=*/true};
    SmallVector<SmallVector<Value>> scores(keyFrags,
                                           SmallVector<Value>(4, f32(0.0)));
    if (wgmma) {
      // One m64n64k16 per k step: the warpgroup's 64 rows against the 64
      // keys; thread-level, the same accumulators as keyFrags m16n8 tiles.
      SmallVector<Value> acc =
          multiplyScoresWgmma(querySmem, keySmem, keyStage);
      for (int64_t frag = 0; frag < keyFrags; ++frag)
        for (int64_t i = 0; i < 4; ++i)
          scores[frag][i] = acc[frag * 4 + i];
    }
    for (int64_t kStep = 0; !wgmma && kStep < fa.dim / 16; ++kStep) {
      for (int64_t pair = 0; pair < keyFrags / 2; ++pair) {
        SmallVector<Value> regs = mma::loadFragmentBlock(
            b, loc, keyBlock, lane, index(pair * 16), kStep,
            /*rowHalfMinor=*/false);
        for (int64_t half = 0; half < 2; ++half) {
          SmallVector<Value> &acc = scores[2 * pair + half];
          acc = mma::createMma(b, loc, queryFragments[kStep],
                               ValueRange{regs[2 * half], regs[2 * half + 1]},
                               acc, mmaType);
        }
      }
    }

    // Accumulator i of fragment f is row group + 8 (i / 2), key
    // 8 f + 2 (lane % 4) + i % 2 of the tile.
    Value tileKey = mul(tile, keyTile);
    Value rows[2];
    for (int64_t half = 0; half < 2; ++half)
      rows[half] = add(add(queryBase, warpRow), add(group, half * 8));
    Value scaleLog2 = f32(fa.scale * log2e);
    Value negInfValue = f32(negInf);
    Value zeroF = f32(0.0);
    auto keyIndexOf = [&](int64_t frag, int64_t i) {
      return add(add(tileKey, frag * 8 + i % 2), mul(quadLane, 2));
    };
    SmallVector<Value> flatScores;
    for (int64_t frag = 0; frag < keyFrags; ++frag) {
      for (int64_t i = 0; i < 4; ++i) {
        Value t = arith::MulFOp::create(b, loc, scores[frag][i], scaleLog2);
        if (fa.mask) {
          Value safeRow = arith::MinSIOp::create(b, loc, rows[i / 2],
                                                 index(fa.queryLen - 1));
          Value safeKey = arith::MinSIOp::create(b, loc, keyIndexOf(frag, i),
                                                 index(fa.keyLen - 1));
          Value bias =
              loadElement(mask, elementIndex(mask, head, safeRow, safeKey));
          t = addBiasLog2(bias, t);
        }
        flatScores.push_back(t);
      }
    }
    // Keys past the end and, causal, past a row's position are -inf. Only
    // the tiles that hold such keys for some row of the block (the last
    // tile, the tiles across the block's diagonal) test them: the condition
    // is the block's, so the branch does not diverge.
    Value tileEnd = add(tileKey, keyTile);
    Value needsMask = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                            tileEnd, index(fa.keyLen));
    if (fa.causal)
      needsMask = arith::OrIOp::create(
          b, loc, needsMask,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, tileEnd,
                                add(queryBase, 1 + fa.queryOffset)));
    auto maskIf = scf::IfOp::create(
        b, loc, SmallVector<Type>(flatScores.size(), b.getF32Type()), needsMask,
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(maskIf.thenBlock());
      SmallVector<Value> masked;
      for (int64_t frag = 0; frag < keyFrags; ++frag) {
        for (int64_t i = 0; i < 4; ++i) {
          Value keyIndex = keyIndexOf(frag, i);
          Value outside = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sge, keyIndex, index(fa.keyLen));
          if (fa.causal)
            outside = arith::OrIOp::create(
                b, loc, outside,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                      keyIndex,
                                      add(rows[i / 2], fa.queryOffset)));
          masked.push_back(arith::SelectOp::create(b, loc, outside, negInfValue,
                                                   flatScores[frag * 4 + i]));
        }
      }
      scf::YieldOp::create(b, loc, masked);
      b.setInsertionPointToStart(maskIf.elseBlock());
      scf::YieldOp::create(b, loc, flatScores);
    }
    for (int64_t frag = 0; frag < keyFrags; ++frag)
      for (int64_t i = 0; i < 4; ++i)
        scores[frag][i] = maskIf.getResult(frag * 4 + i);

    // The online softmax of each of the thread's two rows.
    SmallVector<Value> results;
    SmallVector<Value> sums, corrections;
    for (int64_t half = 0; half < 2; ++half) {
      Value tileMax = negInfValue;
      for (int64_t frag = 0; frag < keyFrags; ++frag)
        for (int64_t i = 2 * half; i < 2 * half + 2; ++i)
          tileMax = arith::MaximumFOp::create(b, loc, tileMax, scores[frag][i]);
      tileMax = reduceQuad(tileMax, /*isMax=*/true);
      Value max = carried[half];
      Value nextMax = arith::MaximumFOp::create(b, loc, max, tileMax);
      // 0 while every score so far is -inf: exp2 then gives 0, not NaN.
      Value allMasked = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                              nextMax, negInfValue);
      Value shift = arith::SelectOp::create(b, loc, allMasked, zeroF, nextMax);
      Value correction = exp2(arith::SubFOp::create(b, loc, max, shift));
      Value sum = arith::MulFOp::create(b, loc, carried[2 + half], correction);
      for (int64_t frag = 0; frag < keyFrags; ++frag) {
        for (int64_t i = 2 * half; i < 2 * half + 2; ++i) {
          Value p = exp2(arith::SubFOp::create(b, loc, scores[frag][i], shift));
          scores[frag][i] = p;
          sum = arith::AddFOp::create(b, loc, sum, p);
        }
      }
      results.push_back(nextMax);
      sums.push_back(sum);
      corrections.push_back(correction);
    }
    llvm::append_range(results, sums);
    SmallVector<SmallVector<Value>> outAcc;
    for (int64_t frag = 0; frag < valueFrags; ++frag) {
      SmallVector<Value> acc;
      for (int64_t i = 0; i < 4; ++i)
        acc.push_back(arith::MulFOp::create(b, loc, carried[4 + frag * 4 + i],
                                            corrections[i / 2]));
      outAcc.push_back(acc);
    }

    // O += P V: the probabilities of keys 16 s .. 16 s + 15 (fragments 2 s
    // and 2 s + 1) are the A fragment of k step s.
    Value valueStage = mul(stage, valueStageElements);
    mma::FragmentBlock valueBlock{valueSmem, valueStage, mmaType, fa.valueDim,
                                  /*kContiguous=*/false};
    SmallVector<SmallVector<Value>> probabilities;
    for (int64_t kStep = 0; kStep < keyTile / 16; ++kStep) {
      ArrayRef<Value> low = scores[2 * kStep], high = scores[2 * kStep + 1];
      probabilities.push_back(
          {packRounded(low[0], low[1]), packRounded(low[2], low[3]),
           packRounded(high[0], high[1]), packRounded(high[2], high[3])});
    }
    if (wgmma) {
      // One m64n(dv)k16 per k step, P from registers, V MN-major.
      SmallVector<Value> acc;
      for (ArrayRef<Value> fragment : outAcc)
        llvm::append_range(acc, fragment);
      acc = multiplyWgmma(
          probabilities,
          [&](int64_t kStep) {
            return getTileDescriptor(valueSmem, valueStage, kStep,
                                     /*isValue=*/true);
          },
          acc, fa.valueDim, /*transposeB=*/true);
      for (int64_t frag = 0; frag < valueFrags; ++frag)
        outAcc[frag].assign(acc.begin() + frag * 4, acc.begin() + frag * 4 + 4);
    }
    for (int64_t kStep = 0; !wgmma && kStep < keyTile / 16; ++kStep) {
      ArrayRef<Value> a = probabilities[kStep];
      for (int64_t pair = 0; pair < valueFrags / 2; ++pair) {
        SmallVector<Value> regs =
            mma::loadFragmentBlock(b, loc, valueBlock, lane, index(pair * 16),
                                   kStep, /*rowHalfMinor=*/false);
        for (int64_t half = 0; half < 2; ++half) {
          SmallVector<Value> &acc = outAcc[2 * pair + half];
          acc = mma::createMma(b, loc, a,
                               ValueRange{regs[2 * half], regs[2 * half + 1]},
                               acc, mmaType);
        }
      }
    }
    for (ArrayRef<Value> acc : outAcc)
      llvm::append_range(results, acc);

    // The next tile into its stage. Two stages: the other one, which every
    // warp finished reading before the previous iteration's barrier. One:
    // after every warp is done with this one.
    // (cp.async: the next tile is in flight already; the next iteration's
    // barrier orders it. TMA: the stage goes back to the producer, every
    // consumer thread arriving on its empty barrier once its wgmmas, waited
    // for, have read it.)
    if (tma) {
      barriers.release(b, loc, stage);
    } else if (!asyncCopy) {
      Value nextStage =
          stages == 2 ? rem(arith::SubIOp::create(b, loc, next, firstTile), 2)
                      : zeroIndex;
      if (stages == 1)
        gpu::BarrierOp::create(b, loc);
      auto store = scf::IfOp::create(b, loc, hasNext, /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard ifGuard(b);
        b.setInsertionPoint(store.thenBlock()->getTerminator());
        SmallVector<Value> loaded =
            stages == 2 ? SmallVector<Value>(prefetch.getResults())
                        : loadNext();
        storeTile(ArrayRef<Value>(loaded).take_front(keyChunks), keySmem,
                  mul(nextStage, keyStageElements), fa.dim, wgmma);
        storeTile(ArrayRef<Value>(loaded).drop_front(keyChunks), valueSmem,
                  mul(nextStage, valueStageElements), fa.valueDim, wgmma);
        fenceSharedForWgmma();
      }
      gpu::BarrierOp::create(b, loc);
    }
    scf::YieldOp::create(b, loc, results);
  }

  ResultRange state = loop.getResults();
  auto pairType = VectorType::get({2}, b.getF32Type());
  if (splits > 1) {
    // 3. This split's partial rows: O unnormalized, then the maximum and
    //    the sum (reduced over the quad; the first lane writes them).
    for (int64_t half = 0; half < 2; ++half) {
      Value sum = reduceQuad(state[2 + half], /*isMax=*/false);
      Value row = add(add(queryBase, warpRow), add(group, half * 8));
      auto guardIf =
          scf::IfOp::create(b, loc, lessThan(row, index(fa.queryLen)),
                            /*withElseRegion=*/false);
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPoint(guardIf.thenBlock()->getTerminator());
      Value rowIndex = add(
          mul(add(mul(add(mul(split, fa.batch), batchIndex), fa.heads), head),
              fa.queryLen),
          row);
      Value rowStart = mul(rowIndex, partialRow);
      for (int64_t frag = 0; frag < valueFrags; ++frag) {
        Value pair = vector::FromElementsOp::create(
            b, loc, pairType,
            ValueRange{state[4 + frag * 4 + 2 * half],
                       state[4 + frag * 4 + 2 * half + 1]});
        vector::StoreOp::create(
            b, loc, pair, partials,
            ValueRange{add(rowStart, add(mul(quadLane, 2), frag * 8))},
            /*nontemporal=*/false, llvm::MaybeAlign(8));
      }
      auto firstLane = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, quadLane,
                                zeroIndex),
          /*withElseRegion=*/false);
      b.setInsertionPoint(firstLane.thenBlock()->getTerminator());
      memref::StoreOp::create(b, loc, state[half], partials,
                              ValueRange{add(rowStart, fa.valueDim)});
      memref::StoreOp::create(b, loc, sum, partials,
                              ValueRange{add(rowStart, fa.valueDim + 1)});
    }
    // The last split's block: its threads take the tile's rows in turn.
    Value tile = add(mul(add(mul(batchIndex, fa.heads), head), queryTiles),
                     rem(blockIds.x, queryTiles));
    Value last =
        createLastArrival(b, loc, tid, counters, tile, splits, verdict, [&] {
          if (tma)
            tma::createConsumerBarrier(b, loc, threads);
          else
            gpu::BarrierOp::create(b, loc);
        });
    auto lastIf = scf::IfOp::create(b, loc, last, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard lastGuard(b);
      b.setInsertionPoint(lastIf.thenBlock()->getTerminator());
      auto rows =
          scf::ForOp::create(b, loc, tid, index(blockRows), index(threads));
      b.setInsertionPointToStart(rows.getBody());
      Value row = add(queryBase, rows.getInductionVar());
      auto inside = scf::IfOp::create(b, loc, lessThan(row, index(fa.queryLen)),
                                      /*withElseRegion=*/false);
      b.setInsertionPoint(inside.thenBlock()->getTerminator());
      combineRow(
          partials, out,
          add(mul(add(mul(batchIndex, fa.heads), head), fa.queryLen), row));
    }
    terminate();
    b.setInsertionPointAfter(launch);
    memref::DeallocOp::create(b, loc, partials);
    memref::DeallocOp::create(b, loc, counters);
    return success();
  }

  // 3. O / l (0 for a row no key reached, as ONNX defines), 2 elements a
  //    store; with an amax, each row guard yields the lane's maximum
  //    magnitude of what it stored (unchanged outside the rows).
  SmallVector<Value> laneMax;
  if (amax)
    laneMax.push_back(f32(0.0));
  for (int64_t half = 0; half < 2; ++half) {
    Value sum = reduceQuad(state[2 + half], /*isMax=*/false);
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, f32(0.0));
    Value inverse = arith::SelectOp::create(
        b, loc, empty, f32(0.0), arith::DivFOp::create(b, loc, f32(1.0), sum));
    Value row = add(add(queryBase, warpRow), add(group, half * 8));
    laneMax = createGuardedStores(
        b, loc, lessThan(row, index(fa.queryLen)), laneMax,
        [&](SmallVectorImpl<Value> &stored) {
          for (int64_t frag = 0; frag < valueFrags; ++frag) {
            Value base = state[4 + frag * 4 + 2 * half];
            Value first = arith::MulFOp::create(b, loc, base, inverse);
            Value second = arith::MulFOp::create(
                b, loc, state[4 + frag * 4 + 2 * half + 1], inverse);
            Value pair = vector::FromElementsOp::create(
                b, loc, pairType, ValueRange{first, second});
            Value col = add(mul(quadLane, 2), frag * 8);
            vector::StoreOp::create(
                b, loc, toResult(pair), out,
                ValueRange{batchIndex, head, row, col},
                /*nontemporal=*/false,
                llvm::MaybeAlign(2 * outElement.getWidth() / 8));
            if (stored.empty())
              continue;
            for (Value element : {first, second})
              stored[0] = arith::MaximumFOp::create(
                  b, loc, stored[0], math::AbsFOp::create(b, loc, element));
          }
        });
  }
  // Every lane of the block gets here (the row guards hold no shuffles).
  if (amax)
    createWarpMaxIntoBuffer(b, loc, laneMax[0], lane, amax);
  terminate();
  return success();
}

namespace {
struct LowerFlashAttentionPass
    : public ridge::impl::LowerFlashAttentionPassBase<LowerFlashAttentionPass> {
  void runOnOperation() override {
    // A module pass: a TMA-fed kernel's host code calls the runtime's
    // tensor-map encoder, declared in the module.
    for (auto kernel :
         llvm::make_early_inc_range(getOperation().getOps<func::FuncOp>()))
      if (failed(lowerKernel(kernel)))
        return signalPassFailure();
  }

  LogicalResult lowerKernel(func::FuncOp kernel) {
    if (kernel.isExternal() || !kernel->hasAttr(kKernelAttr))
      return success();
    FailureOr<std::optional<KernelConfig>> config = getKernelConfig(kernel);
    if (failed(config))
      return failure();
    if (!*config || !(*config)->usesAttentionKernel())
      return success();
    bool decode = (*config)->attentionDecode;
    std::string reason;
    FailureOr<FlashAttention> attention = readFlashAttention(
        kernel->getAttrOfType<DictionaryAttr>(kOnlineAttentionAttr), reason);
    if (succeeded(attention)) {
      bool tma = (*config)->attentionTma;
      std::optional<std::string> why =
          decode ? whyNotDecode(*attention)
          : tma  ? whyNotAttentionTma(*attention, kernel.getArgumentTypes())
          : (*config)->wgmma ? whyNotWgmma(*attention)
                             : whyNotTensorCores(*attention);
      // Static shared memory: 48 KiB a block; TMA's dynamic shared memory:
      // sm_90a's 227 KiB.
      int64_t sharedBytes =
          decode ? 0
          : tma  ? getAttentionTmaSharedBytes(*attention,
                                              (*config)->attentionStages)
                 : getFlashAttentionSharedBytes(
                       *attention, (*config)->attentionStages, (*config)->wgmma);
      int64_t sharedLimit =
          tma ? kMaxTmaSharedMemoryBytes : kMaxStaticSharedMemoryBytes;
      if (!why && sharedBytes > sharedLimit)
        why = ("its " + Twine((*config)->attentionStages) + " stage(s) need " +
               Twine(sharedBytes) + " bytes of shared memory, over the " +
               Twine(sharedLimit) + " of " + (tma ? "dynamic" : "static") +
               " shared memory")
                  .str();
      if (why) {
        reason = *why;
        attention = failure();
      }
    }
    if (failed(attention)) {
      kernel.emitError() << "kernel configured for the "
                         << (decode ? "decode" : "tensor-core")
                         << " attention is not one it computes: " << reason;
      return failure();
    }
    // The result: the kernel's one result buffer, its last argument after
    // bufferization (results become out-parameters), or the one before the
    // last when the kernel also returns the result's amax
    // (ridge-move-scale-reductions-to-producers: a 0-d buffer the kernel's
    // scale reduction of the result writes).
    Block &body = kernel.front();
    ArrayRef<BlockArgument> arguments = body.getArguments();
    Value amax;
    if (arguments.size() >= 2) {
      Value result = arguments[arguments.size() - 2];
      for (auto reduction : body.getOps<linalg::GenericOp>())
        if (isScaleReduction(reduction) &&
            reduction.getDpsInputOperand(0)->get() == result &&
            reduction.getDpsInits()[0] == arguments.back())
          amax = arguments.back();
    }
    if (amax) {
      if (decode || (*config)->attentionSplits > 1) {
        kernel.emitError() << "the amax of an attention's result is folded in "
                              "by the one-pass tensor-core kernel only, not "
                              "by the decode or split-key kernels";
        return failure();
      }
      arguments = arguments.drop_back();
    }
    // A kernel with other results (KV-cache concatenations) names its
    // result's argument.
    Value outArg = !arguments.empty() ? Value(arguments.back()) : Value();
    if (attention->resultArg)
      outArg = *attention->resultArg < arguments.size()
                   ? Value(arguments[*attention->resultArg])
                   : Value();
    auto outType =
        outArg ? dyn_cast<MemRefType>(outArg.getType()) : MemRefType();
    SmallVector<int64_t> outShape{attention->batch, attention->heads,
                                  attention->queryLen, attention->valueDim};
    if (kernel.getNumResults() != 0 || !outType ||
        outType.getShape() != ArrayRef<int64_t>(outShape) ||
        !outType.getLayout().isIdentity() ||
        !(outType.getElementType().isF32() ||
          outType.getElementType().isF16() ||
          outType.getElementType().isBF16())) {
      InFlightDiagnostic diag = kernel.emitError()
                                << "ridge-lower-flash-attention runs on "
                                   "buffers (after bufferization), on a "
                                   "kernel whose last argument is its f32, "
                                   "f16 or bf16 result memref<";
      for (int64_t extent : outShape)
        diag << extent << "x";
      diag << "f32>";
      return failure();
    }
    // The kernel stores O in its result buffer's type: a conversion of the
    // online loop's f32 result into it (a result stored narrow,
    // ridge-narrow-kernel-boundaries) is what that store computes; any
    // other op writing the result would be lost.
    for (auto generic : body.getOps<linalg::GenericOp>()) {
      if (generic.getNumDpsInits() != 1 || generic.getDpsInits()[0] != outArg)
        continue;
      Operation *yielded =
          generic.getBody()->getTerminator()->getOperand(0).getDefiningOp();
      if (generic.getNumDpsInputs() != 1 ||
          !llvm::all_of(generic.getIndexingMapsArray(),
                        [](AffineMap map) { return map.isIdentity(); }) ||
          !isa_and_nonnull<arith::TruncFOp>(yielded) ||
          yielded->getOperand(0) != generic.getBody()->getArgument(0) ||
          generic.getBody()->getOperations().size() != 2) {
        generic.emitError() << "ridge-lower-flash-attention stores the "
                               "attention's result itself: an op writing "
                               "the result other than its rounding to the "
                               "result's type would be lost";
        return failure();
      }
    }
    // The online loop and everything it used are replaced by the launch.
    Operation *terminator = body.getTerminator();
    SmallVector<Operation *> replaced = llvm::map_to_vector(
        body.without_terminator(), [](Operation &op) { return &op; });
    for (Operation *op : llvm::reverse(replaced)) {
      op->dropAllUses();
      op->erase();
    }
    OpBuilder builder(terminator);
    FlashAttentionBuilder attentionBuilder(builder, kernel.getLoc(), *attention,
                                           **config);
    ArrayRef<BlockArgument> inputs =
        attention->resultArg ? arguments : arguments.drop_back();
    Value out = outArg;
    func::FuncOp encoder;
    if ((*config)->attentionTma)
      encoder = tma::declareTensorMapEncoder(getOperation());
    if (failed(decode ? attentionBuilder.buildDecode(inputs, out)
                      : attentionBuilder.build(inputs, out, amax, encoder)))
      return failure();
    if (decode)
      ++numDecodeKernels;
    else
      ++numAttentionKernels;
    if (attentionBuilder.usedAsyncCopy)
      ++numAsyncCopyKernels;
    if ((*config)->attentionTma)
      ++numTmaKernels;
    LLVM_DEBUG(llvm::dbgs()
               << kernel.getName() << ": "
               << (decode ? "decode" : "tensor-core") << " attention kernel, "
               << (*config)->attentionSplits << " split(s)"
               << ((*config)->attentionTma ? ", K and V by TMA" : "") << "\n");
    return success();
  }
};
} // namespace
