//===- FlashAttentionBuilder.h - The attention kernels' builder -*- C++ -*-===//
//
// The builder behind ridge-lower-flash-attention: the tensor-core
// (FlashAttention-2) kernel of an online attention and its split-key
// combine live in LowerFlashAttention.cpp; the decode kernel (a few query
// rows over a long cache, KV-cache appends, GQA head sharing) in
// FlashAttentionDecode.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_CODEGEN_FLASHATTENTIONBUILDER_H
#define RIDGELINE_LIB_CODEGEN_FLASHATTENTIONBUILDER_H

#include "ridgeline/Codegen/FlashAttention.h"
#include "ridgeline/Codegen/KernelConfig.h"

#include "MmaFragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

namespace mlir::ridge::flash {

using mma::kChunk;

/// Query rows of one warp: the m of an m16n8k16 tile.
inline constexpr int64_t kWarpRows = 16;

/// One operand read from a kernel argument: the argument viewed as 1-D and
/// the operand's strides in it.
struct GlobalOperand {
  const StridedOperand *view = nullptr;
  Value flat;
  /// Its element type: f32, or the 16-bit format of a bf16/f16 model;
  /// null for a boolean mask (`allowed`).
  FloatType element;
  /// A boolean mask (i1): true allows a key, false adds -inf.
  bool allowed = false;
  /// Whether the 16-byte loads of a chunk are aligned (offset and strides
  /// multiples of 16 bytes).
  bool aligned = false;
  /// The caches of a rotary embedding applied as the operand is loaded
  /// (FlashAttention::Rotary), or null.
  const GlobalOperand *cos = nullptr, *sin = nullptr;
};

class FlashAttentionBuilder : mma::IndexMath {
public:
  FlashAttentionBuilder(OpBuilder &b, Location loc, const FlashAttention &fa,
                        const KernelConfig &config)
      : IndexMath(b, loc), fa(fa), mmaType(fa.mmaType) {
    splits = config.attentionSplits;
    if (config.attentionDecode) {
      decodeKeys = config.attentionDecodeKeys;
      decodeHeads = config.attentionDecodeHeads;
      warps = 4;
      threads = warps * kWarpSize;
      return;
    }
    blockRows = config.attentionTile[0];
    keyTile = config.attentionTile[1];
    stages = config.attentionStages;
    wgmma = config.wgmma;
    tma = config.attentionTma;
    warps = blockRows / kWarpRows;
    threads = warps * kWarpSize;
  }

  /// Builds the launch before the kernel's return; `args` are the kernel's
  /// buffer arguments, `out` its [B, H, Sq, dv] f32 result buffer, `amax`
  /// (or null) the 0-d f32 buffer of max |O|, `encoder` the runtime's
  /// tensor-map encoder (KernelConfig::attentionTma).
  LogicalResult build(ArrayRef<BlockArgument> args, Value out,
                      Value amax = nullptr, func::FuncOp encoder = nullptr);
  /// The decode kernel (KernelConfig::attentionDecode), the same way.
  LogicalResult buildDecode(ArrayRef<BlockArgument> args, Value out);

private:
  Value lessThan(Value lhs, Value rhs) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lhs, rhs);
  }
  Value f32(double value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  }
  /// Element `at` of `operand`, as f32.
  Value loadElement(const GlobalOperand &operand, Value at) {
    Value x = memref::LoadOp::create(b, loc, operand.flat, ValueRange{at});
    if (operand.allowed)
      return arith::SelectOp::create(
          b, loc, x, f32(0.0), f32(-std::numeric_limits<double>::infinity()));
    if (operand.element.isF32())
      return x;
    return arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  }
  /// `value` rounded to the products' format (the decode kernel's reads
  /// and probabilities, where the precision policy rounds them; a no-op on
  /// operands stored in that format).
  Value roundToProducts(Value value) {
    if (!mmaType)
      return value;
    return arith::ExtFOp::create(
        b, loc, b.getF32Type(),
        arith::TruncFOp::create(b, loc, mmaType, value).getResult());
  }
  /// `value` (f32, or a vector of f32) in the result's format.
  Value toResult(Value value) {
    Type type = value.getType();
    if (outElement.isF32())
      return value;
    if (auto vector = dyn_cast<VectorType>(type))
      return arith::TruncFOp::create(b, loc, vector.clone(outElement), value);
    return arith::TruncFOp::create(b, loc, outElement, value);
  }
  /// 2^x by the multi-function unit (`ex2.approx.ftz.f32`, 2 ulp; 0 for
  /// -inf), as FlashAttention computes its probabilities: one instruction
  /// where the polynomial of math.exp2 costs a dozen, twice per score.
  Value exp2(Value x) {
    return LLVM::CallIntrinsicOp::create(
               b, loc, b.getF32Type(),
               b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"), ValueRange{x})
        .getResult(0);
  }
  /// t + log2(e) * bias, a finite bias kept finite (-FLT_MAX at most) and a
  /// -inf one -inf: the online form's function (TransformerToLinalg's
  /// addBiasLog2), so that a row masked everywhere with the most negative
  /// float is uniform, as the exported Softmax makes it.
  Value addBiasLog2(Value bias, Value t) {
    Value sum = math::FmaOp::create(b, loc, bias, f32(1.4426950408889634), t);
    Value isNegInf =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, bias,
                              f32(-std::numeric_limits<double>::infinity()));
    return arith::SelectOp::create(
        b, loc, isNegInf, f32(-std::numeric_limits<double>::infinity()),
        arith::MaximumFOp::create(b, loc, sum,
                                  f32(-std::numeric_limits<float>::max())));
  }
  /// Butterfly reduction of `value` over the 4 lanes of a quad.
  Value reduceQuad(Value value, bool isMax) {
    Value width =
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), kWarpSize);
    for (int64_t offset : {1, 2}) {
      Value mask = arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset);
      Value other = gpu::ShuffleOp::create(b, loc, value, mask, width,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      value = isMax
                  ? arith::MaximumFOp::create(b, loc, value, other).getResult()
                  : arith::AddFOp::create(b, loc, value, other).getResult();
    }
    return value;
  }

  /// The flat element index of (b, h, row, col) of `operand`.
  Value elementIndex(const GlobalOperand &operand, Value head, Value row,
                     Value col) {
    ArrayRef<int64_t> strides = operand.view->strides;
    Value flat = index(operand.view->offset);
    for (auto [coord, stride] :
         llvm::zip(std::array<Value, 4>{batchIndex, head, row, col}, strides))
      if (stride != 0)
        flat = add(flat, stride == 1 ? coord : mul(coord, stride));
    return flat;
  }
  /// Floats of a split's partial row: O, the maximum and the sum, padded
  /// to whole 16 bytes so that a lane's piece of O is one aligned vector
  /// store.
  int64_t getPartialRow() const { return llvm::alignTo(fa.valueDim + 2, 4); }
  /// The splits' partial rows, [split, b, h, row, getPartialRow()] f32, for
  /// the last split's block (combineRow); null with one split.
  Value allocatePartials() {
    if (splits == 1)
      return Value();
    return memref::AllocOp::create(
        b, loc,
        MemRefType::get(
            {splits * fa.batch * fa.heads * fa.queryLen * getPartialRow()},
            b.getF32Type()));
  }
  /// Elements (head, row, col ... col + width - 1) of `operand` as stored:
  /// one scalar load, or (`width` > 1, a piece aligned to its size:
  /// isPieceAligned) one vector load; with a KV-cache `append`, rows from
  /// its split on come from `tail`, still one load, from the buffer and
  /// index the row selects.
  SmallVector<Value>
  loadStoredPiece(const GlobalOperand &operand,
                  const std::optional<FlashAttention::Append> &append,
                  const GlobalOperand &tail, Value head, Value row, Value col,
                  int64_t width) {
    auto load = [&](Value buffer, Value at) -> SmallVector<Value> {
      if (width == 1)
        return {memref::LoadOp::create(b, loc, buffer, ValueRange{at})};
      auto type = VectorType::get({width}, operand.element);
      Value piece = vector::LoadOp::create(
          b, loc, type, buffer, ValueRange{at}, /*nontemporal=*/false,
          llvm::MaybeAlign(width * operand.element.getIntOrFloatBitWidth() /
                           8));
      SmallVector<Value> elements;
      for (int64_t i = 0; i < width; ++i)
        elements.push_back(vector::ExtractOp::create(b, loc, piece, i));
      return elements;
    };
    if (!append)
      return load(operand.flat, elementIndex(operand, head, row, col));
    Value split = index(append->split);
    Value inPast = lessThan(row, split);
    Value pastRow =
        arith::MinSIOp::create(b, loc, row, index(append->split - 1));
    Value tailRow = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, row, split), index(0));
    auto dynamic = [&](const GlobalOperand &from) -> Value {
      auto type = cast<MemRefType>(from.flat.getType());
      return memref::CastOp::create(
          b, loc,
          MemRefType::get({ShapedType::kDynamic}, type.getElementType()),
          from.flat);
    };
    Value buffer = arith::SelectOp::create(b, loc, inPast, dynamic(operand),
                                           dynamic(tail));
    Value at = arith::SelectOp::create(
        b, loc, inPast, elementIndex(operand, head, pastRow, col),
        elementIndex(tail, head, tailRow, col));
    return load(buffer, at);
  }
  /// Whether every row of `operand` starts on a multiple of `width`
  /// elements (its offset and outer strides are), `width` a power of two:
  /// a lane's `width` consecutive elements are one aligned vector access.
  static bool isPieceAligned(const GlobalOperand &operand, int64_t width) {
    const StridedOperand &view = *operand.view;
    return llvm::isPowerOf2_64(width) && view.offset % width == 0 &&
           llvm::all_of(ArrayRef(view.strides).drop_back(),
                        [&](int64_t stride) { return stride % width == 0; });
  }
  /// `x` (an element as stored) as f32.
  Value extendToF32(Value x) {
    if (x.getType().isF32())
      return x;
    return arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  }
  /// The flat index of (head, row, col) of a KV-cache concatenation
  /// [B, Hkv, Skv, `cols`], contiguous.
  Value presentIndex(Value head, Value row, Value col, int64_t cols) {
    return add(
        mul(add(mul(add(mul(batchIndex, fa.kvHeads), head), fa.keyLen), row),
            cols),
        col);
  }

  /// The global loads of a tile of `rows` rows from `rowBase` (rows past
  /// `rowExtent` read as zero) and `cols` columns of `operand` at head
  /// `head`: one vector of 8 multiply-type elements per chunk the thread
  /// stages, rounded from f32. `slabs`: in the order of the wgmma layout
  /// (mma::getSlabChunkPosition).
  SmallVector<Value> loadTile(const GlobalOperand &operand, Value head,
                              Value rowBase, int64_t rowExtent, int64_t cols,
                              bool slabs = false);
  /// Copies the same tile as loadTile straight into its stage at `smem` +
  /// `stageOffset` (the layout storeTile writes) with 16-byte `cp.async`
  /// copies, for an operand stored in the multiply type: no registers, no
  /// conversion; rows past `rowExtent` are zero-filled (a source size of
  /// 0, read from the last row's address).
  void copyTileAsync(const GlobalOperand &operand, Value head, Value rowBase,
                     int64_t rowExtent, int64_t cols, Value smem,
                     Value stageOffset, bool slabs = false);
  /// The (row, chunk) of the thread's chunk `q` of a tile of `cols`
  /// columns.
  std::pair<Value, Value> getChunkPosition(Value q, int64_t cols, bool slabs) {
    if (slabs)
      return mma::getSlabChunkPosition(b, loc, q, keyTile, cols / kChunk);
    return {div(q, cols / kChunk), rem(q, cols / kChunk)};
  }
  /// The operands' flat views of the kernel arguments `args`.
  LogicalResult bindOperands(ArrayRef<BlockArgument> args);

  /// Q, K or V as TMA copies it (KernelConfig::attentionTma): its tensor
  /// map, [cols, rows] and the heads and batch where they advance; boxes of
  /// one 64-byte slab (32 elements) by a tile's 64 rows.
  struct TensorCopyOperand {
    Value hostMap, map;
    int64_t cols = 0;
    bool heads = false, batch = false;
  };
  /// Host code before the launch: the tensor map of `operand` (`rows` rows
  /// of `cols` columns, `heads` heads), over kernel argument `arg`.
  TensorCopyOperand encodeTensorCopies(const GlobalOperand &operand, Value arg,
                                       int64_t rows, int64_t heads,
                                       int64_t cols, func::FuncOp encoder);
  /// The producer warp's copies of the tile of `operand` from row `rowBase`
  /// of head `tileHead` into shared memory at byte `stageBytes` of `smem`,
  /// slab by slab, completing on `barrier`.
  void copyTileTma(const TensorCopyOperand &operand, Value rowBase,
                   Value tileHead, Value smem, Value stageBytes, Value barrier);
  /// This thread's combine of query row `row` (flat over batch, heads and
  /// query rows), in the last split's block (SplitArrival.h): the splits'
  /// partial rows in `partials` weighted by their maxima, stored into
  /// `out`.
  void combineRow(Value partials, Value out, Value row);
  /// Stores what loadTile returned into the tile at `smem` + `stageOffset`:
  /// in the ldmatrix swizzle, or (`slabs`) in the layout wgmma reads.
  void storeTile(ArrayRef<Value> chunks, Value smem, Value stageOffset,
                 int64_t cols, bool slabs = false);
  /// Makes this thread's shared-memory stores visible to wgmma (the async
  /// proxy) before the barrier that publishes them.
  void fenceSharedForWgmma() {
    if (wgmma)
      NVVM::FenceProxyOp::create(
          b, loc,
          NVVM::ProxyKindAttr::get(b.getContext(),
                                   NVVM::ProxyKind::async_shared),
          NVVM::SharedSpaceAttr::get(b.getContext(),
                                     NVVM::SharedSpace::shared_cta));
  }
  /// wgmma products into `acc` (pinned before the fence and after the
  /// wait): A fragments `a[s]` from registers, B of k16 step s described by
  /// `descriptorOf(s)`.
  SmallVector<Value> multiplyWgmma(ArrayRef<SmallVector<Value>> a,
                                   function_ref<Value(int64_t)> descriptorOf,
                                   SmallVector<Value> acc, int64_t n,
                                   bool transposeB) {
    acc = mma::pinRegisters(b, loc, acc);
    SmallVector<SmallVector<Value>> words;
    for (ArrayRef<Value> fragment : a)
      words.push_back(mma::pinRegisters(b, loc, fragment));
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (auto [step, fragment] : llvm::enumerate(words))
      acc = mma::createWgmmaRegisterA(b, loc, fragment, descriptorOf(step), acc,
                                      n, mmaType, transposeB);
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    return mma::pinRegisters(b, loc, acc);
  }
  /// S = Q K^T by wgmma with both operands in shared memory (Q's tile at
  /// `querySmem`, K's stage at `keyStage`, both K-major slabs): fresh f32
  /// accumulators (scale-d 0 on the first k16 step, so none are moved into
  /// the wgmma's registers before the fence), pinned after the wait.
  SmallVector<Value> multiplyScoresWgmma(Value querySmem, Value keySmem,
                                         Value keyStage) {
    int64_t count = keyTile / 2;
    Value packed = LLVM::PoisonOp::create(
        b, loc,
        LLVM::LLVMStructType::getLiteral(
            b.getContext(), SmallVector<Type>(count, b.getF32Type())));
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t kStep = 0; kStep < fa.dim / 16; ++kStep)
      packed = mma::createWgmmaShared(
          b, loc,
          getTileDescriptor(querySmem, index(0), kStep, /*isValue=*/false),
          getTileDescriptor(keySmem, keyStage, kStep, /*isValue=*/false),
          packed, keyTile, /*k=*/16, mmaType, /*fresh=*/kStep == 0,
          /*transposeA=*/false, /*transposeB=*/false);
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    SmallVector<Value> acc;
    for (int64_t i = 0; i < count; ++i)
      acc.push_back(LLVM::ExtractValueOp::create(b, loc, packed, i));
    return mma::pinRegisters(b, loc, acc);
  }
  /// The wgmma descriptor of k16 step `kStep` of a K tile (K-major: keys
  /// are the rows, the head dimension in 32-element slabs) or of a V tile
  /// (MN-major: keys are the rows, k; the value dimension in slabs, n) at
  /// element offset `stageOffset` of `smem`.
  Value getTileDescriptor(Value smem, Value stageOffset, int64_t kStep,
                          bool isValue) {
    constexpr int64_t kGroupBytes = 8 * mma::kSlabRowBytes;
    int64_t slabBytes = keyTile * mma::kSlabRowBytes;
    Value bytes = mul(stageOffset, 2);
    if (!isValue)
      return mma::getWgmmaDescriptor(
          b, loc, smem, add(bytes, (kStep / 2) * slabBytes + (kStep % 2) * 32),
          /*leadingBytes=*/16, kGroupBytes);
    return mma::getWgmmaDescriptor(b, loc, smem,
                                   add(bytes, kStep * 16 * mma::kSlabRowBytes),
                                   slabBytes, kGroupBytes);
  }
  /// The vector types loadTile returns for a tile of `cols` columns.
  SmallVector<Type> getTileTypes(int64_t cols) {
    return SmallVector<Type>(keyTile * cols / kChunk / threads,
                             VectorType::get({kChunk}, mmaType));
  }
  /// Two f32 values rounded and packed as one mma.sync register.
  Value packRounded(Value low, Value high) {
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, mmaType),
        ValueRange{arith::TruncFOp::create(b, loc, mmaType, low),
                   arith::TruncFOp::create(b, loc, mmaType, high)});
    return mma::packPair(b, loc, pair, mmaType);
  }

  const FlashAttention &fa;
  Type mmaType;
  int64_t blockRows = 0, keyTile = 0, stages = 0, splits = 1, warps = 0,
          threads = 0;
  /// The decode kernel's keys a warp loads before it uses the first, and
  /// the query heads of a key head a block computes from them.
  int64_t decodeKeys = 1, decodeHeads = 1;

public:
  /// Whether build() staged K and V with cp.async.
  bool usedAsyncCopy = false;

private:
  /// sm_90a: both products by wgmma (KernelConfig::wgmma).
  bool wgmma = false;
  /// sm_90a: K and V copied by a producer warp's TMA copies
  /// (KernelConfig::attentionTma).
  bool tma = false;
  /// The result's element type: f32, or the operands' 16-bit format.
  FloatType outElement;

  GlobalOperand query, key, value, mask;
  GlobalOperand queryCos, querySin, keyCos, keySin;
  /// A KV-cache append's new rows (FlashAttention::Append::tail), and the
  /// flat concatenation the decode kernel writes (null when not a result).
  GlobalOperand keyTail, valueTail;
  Value keyPresent, valuePresent;
  Value tid, lane, warp, batchIndex, head, kvHead, queryBase;
};

} // namespace mlir::ridge::flash

#endif // RIDGELINE_LIB_CODEGEN_FLASHATTENTIONBUILDER_H
