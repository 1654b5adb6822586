//===- KernelConfig.cpp - How one kernel is tiled and mapped --------------===//
//
// The policy half of kernel configuration (selectKernelConfig) and the
// attribute it is recorded in. See docs/kernel-config.md.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Analysis/PrecisionPolicy.h"
#include "ridgeline/Codegen/FlashAttention.h"
#include "ridgeline/Codegen/MmaContraction.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "KernelConfigPolicy.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::config_policy;

static constexpr int64_t kDefaultBlockSize = 256;
/// Split-K (selectSplitK): at most 16 splits, each of at least 4 k tiles
/// (128 of k: the cp.async pipeline's prologue is 2 or 3 of them). The
/// serial tail of a split tile, its last block's arrival (a fence and an
/// atomic: a round trip to L2), reads of the splits' sums and epilogue, is
/// priced as 4 k steps, a k step costing about one global load's latency.
/// (The 4 priced a second launch before the last block added the splits;
/// it is kept until GPU timings set it.)
static constexpr int64_t kMaxSplitK = 16;
static constexpr int64_t kMinKTilesPerSplit = 4;
static constexpr int64_t kSplitKTailSteps = 4;
/// Elements of a row below which it is not shared by warps: 8 steps of a
/// warp's 128-element vector layout.
static constexpr int64_t kRowElementsPerWarp = 1024;
/// TMA stages: enough k tiles in flight to cover a global load's latency.
static constexpr int64_t kMaxTmaStages = 4;
/// TMA's k tile rows: 128 bytes, the 128-byte swizzle.
static constexpr int64_t kTmaRowBytes = 128;
/// Registers a lane spends on the K and V elements in flight (64 f32: each
/// of the head dimension's d / 32 and dv / 32 per key), and at most this
/// many keys a warp.
static constexpr int64_t kDecodeLoadRegisters = 64;
static constexpr int64_t kMaxDecodeKeysPerWarp = 8;
/// Registers a lane spends on the query heads a decode block shares its
/// loads between (GQA): each head's query and O elements (d / 32 + dv /
/// 32), its maximum and sum, and a score per key of the run; and at most
/// this many heads a block.
static constexpr int64_t kDecodeHeadRegisters = 72;
static constexpr int64_t kMaxDecodeHeads = 8;
/// Decode blocks an SM at most (4 warps each: half an SM's 64 warps).
static constexpr int64_t kMaxDecodeBlocksPerSm = 8;
/// Steps of all of a block's warps a split takes at least.
static constexpr int64_t kMinDecodeStepsPerSplit = 4;
/// Key splits of one query tile or row, at most.
static constexpr int64_t kMaxAttentionSplits = 1024;

DictionaryAttr KernelConfig::toAttr(MLIRContext *context) const {
  Builder b(context);
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("block_size", b.getI64IntegerAttr(blockSize)),
      b.getNamedAttr("vector_width", b.getI64IntegerAttr(vectorWidth)),
      b.getNamedAttr("warps_per_block", b.getI64IntegerAttr(warpsPerBlock)),
  };
  if (rowWarps > 1)
    fields.push_back(
        b.getNamedAttr("row_warps", b.getI64IntegerAttr(rowWarps)));
  if (!tileSizes.empty())
    fields.push_back(
        b.getNamedAttr("tile_sizes", b.getDenseI64ArrayAttr(tileSizes)));
  if (usesTensorCores()) {
    fields.push_back(
        b.getNamedAttr("mma_tile", b.getDenseI64ArrayAttr(mmaTile)));
    fields.push_back(
        b.getNamedAttr("mma_warps", b.getDenseI64ArrayAttr(mmaWarps)));
    fields.push_back(
        b.getNamedAttr("mma_stages", b.getI64IntegerAttr(mmaStages)));
    fields.push_back(b.getNamedAttr(
        "mma_instruction", b.getStringAttr(wgmma ? "wgmma" : "mma_sync")));
    if (mmaSplitK > 1)
      fields.push_back(
          b.getNamedAttr("mma_split_k", b.getI64IntegerAttr(mmaSplitK)));
    if (mmaTma)
      fields.push_back(b.getNamedAttr("mma_tma", b.getBoolAttr(true)));
  }
  if (gemv)
    fields.push_back(b.getNamedAttr("gemv", b.getBoolAttr(true)));
  if (gemvSplitK > 1)
    fields.push_back(
        b.getNamedAttr("gemv_split_k", b.getI64IntegerAttr(gemvSplitK)));
  if (gemvRowsPerWarp > 1)
    fields.push_back(b.getNamedAttr("gemv_rows_per_warp",
                                    b.getI64IntegerAttr(gemvRowsPerWarp)));
  if (attentionDecode) {
    fields.push_back(b.getNamedAttr("attention_decode", b.getBoolAttr(true)));
    fields.push_back(b.getNamedAttr("attention_splits",
                                    b.getI64IntegerAttr(attentionSplits)));
    fields.push_back(b.getNamedAttr("attention_decode_keys",
                                    b.getI64IntegerAttr(attentionDecodeKeys)));
    if (attentionDecodeHeads > 1)
      fields.push_back(b.getNamedAttr(
          "attention_decode_heads", b.getI64IntegerAttr(attentionDecodeHeads)));
  }
  if (usesFlashAttention()) {
    fields.push_back(b.getNamedAttr("attention_tile",
                                    b.getDenseI64ArrayAttr(attentionTile)));
    fields.push_back(b.getNamedAttr("attention_stages",
                                    b.getI64IntegerAttr(attentionStages)));
    fields.push_back(b.getNamedAttr(
        "mma_instruction", b.getStringAttr(wgmma ? "wgmma" : "mma_sync")));
    if (attentionSplits > 1)
      fields.push_back(b.getNamedAttr("attention_splits",
                                      b.getI64IntegerAttr(attentionSplits)));
    if (attentionTma)
      fields.push_back(b.getNamedAttr("attention_tma", b.getBoolAttr(true)));
  }
  return b.getDictionaryAttr(fields);
}

FailureOr<KernelConfig> KernelConfig::fromAttr(DictionaryAttr attr,
                                               std::string &error) {
  KernelConfig config;
  auto integer = [&](StringRef name, int64_t &field, int64_t low,
                     int64_t high) -> LogicalResult {
    auto value = attr.getAs<IntegerAttr>(name);
    if (!value || value.getInt() < low || value.getInt() > high) {
      error = ("'" + kKernelConfigAttr + "' needs '" + name +
               "' as an integer in [" + Twine(low) + ", " + Twine(high) + "]")
                  .str();
      return failure();
    }
    field = value.getInt();
    return success();
  };
  // An optional TMA flag (`mma_tma`, `attention_tma`): true only with wgmma,
  // which the config has read before.
  auto tmaFlag = [&](StringRef name, bool &field) -> LogicalResult {
    Attribute value = attr.get(name);
    if (!value)
      return success();
    auto flag = dyn_cast<BoolAttr>(value);
    if (!flag || (flag.getValue() && !config.wgmma)) {
      error = ("'" + kKernelConfigAttr + "' needs '" + name +
               "' as a bool, true only with 'mma_instruction' \"wgmma\" "
               "(TMA is sm_90a's)")
                  .str();
      return failure();
    }
    field = flag.getValue();
    return success();
  };
  if (failed(integer("block_size", config.blockSize, 1, 1024)) ||
      failed(integer("warps_per_block", config.warpsPerBlock, 1,
                     1024 / kWarpSize)) ||
      failed(integer("vector_width", config.vectorWidth, 1, kWideVector)))
    return failure();
  // Warps sharing a row: one row a block, all of its warps.
  if (attr.get("row_warps")) {
    if (failed(integer("row_warps", config.rowWarps, 1, 1024 / kWarpSize)))
      return failure();
    if (config.rowWarps > 1 && config.rowWarps != config.warpsPerBlock) {
      error = ("'" + kKernelConfigAttr + "' has 'row_warps' " +
               Twine(config.rowWarps) + " but 'warps_per_block' " +
               Twine(config.warpsPerBlock) +
               ": a row shared by warps takes the whole block")
                  .str();
      return failure();
    }
  }
  if (config.vectorWidth != 1 && config.vectorWidth != kWideVector) {
    error = ("'" + kKernelConfigAttr + "' has vector_width " +
             Twine(config.vectorWidth) + "; expected 1 or 4")
                .str();
    return failure();
  }
  // A tensor-core tile: {m, n, k} with m and n split evenly by the warps
  // into 16 x 16 warp tiles or larger, k a multiple of the k16 instruction.
  if (attr.get("mma_tile") || attr.get("mma_warps") || attr.get("mma_stages")) {
    auto tile = attr.getAs<DenseI64ArrayAttr>("mma_tile");
    auto warps = attr.getAs<DenseI64ArrayAttr>("mma_warps");
    bool valid =
        tile && warps && tile.size() == 3 && warps.size() == 2 && tile[2] > 0 &&
        tile[2] % 16 == 0 && tile[2] <= 64 && warps[0] > 0 && warps[1] > 0 &&
        warps[0] * warps[1] * kWarpSize <= 1024 &&
        tile[0] % (16 * warps[0]) == 0 && tile[1] % (16 * warps[1]) == 0 &&
        tile[0] <= 256 && tile[1] <= 256;
    if (!valid) {
      error = ("'" + kKernelConfigAttr +
               "' needs 'mma_tile' as {m, n, k} and 'mma_warps' as {m, n}, "
               "with m and n multiples of 16 per warp (at most 256) and k a "
               "multiple of 16 (at most 64)")
                  .str();
      return failure();
    }
    if (failed(integer("mma_stages", config.mmaStages, 2, 4)))
      return failure();
    auto instruction = attr.getAs<StringAttr>("mma_instruction");
    if (!instruction || (instruction.getValue() != "mma_sync" &&
                         instruction.getValue() != "wgmma")) {
      error = ("'" + kKernelConfigAttr +
               "' needs 'mma_instruction' as \"mma_sync\" or \"wgmma\"")
                  .str();
      return failure();
    }
    config.wgmma = instruction.getValue() == "wgmma";
    if (failed(tmaFlag("mma_tma", config.mmaTma)))
      return failure();
    // wgmma: one warpgroup (4 warps) per 64 rows, the whole tile's n; rows
    // of the swizzle span: k steps of 32 and n in 32-element slabs (64
    // bytes), or with TMA of 64 (the 128-byte swizzle). e4m3 (1 byte) takes
    // k 64 and tf32 (staged as 4-byte f32) k 16 for the same 64-byte rows,
    // and tf32 k 32 for TMA's 128-byte rows; the lowering checks the row
    // bytes against the operands' type.
    int64_t span = config.mmaTma ? 64 : 32;
    bool byteRows =
        config.mmaTma ? tile[2] == 32 : (tile[2] == 64 || tile[2] == 16);
    if (config.wgmma &&
        (warps[1] != 1 || warps[0] % 4 != 0 || tile[0] != 16 * warps[0] ||
         (tile[2] != span && !byteRows) || tile[1] % span != 0)) {
      error = ("'" + kKernelConfigAttr +
               "' has a wgmma tile that is not 64 rows per warpgroup "
               "(mma_warps {4 * groups, 1}), n a multiple of " +
               Twine(span) + " and k " + Twine(span) +
               (config.mmaTma ? " (TMA's 128-byte swizzle; 32 for tf32)"
                              : " (64 for 1-byte e4m3, 16 for tf32)"))
                  .str();
      return failure();
    }
    // TMA kernels take dynamic shared memory (up to sm_90a's 227 KiB a
    // block: tiles of 128-byte rows whatever the type); the others static
    // shared memory, 48 KiB a block (counted here at 2 bytes an element: the
    // config does not know the operands; the lowering checks tf32's 4).
    if (config.mmaTma) {
      int64_t bytes =
          getTmaSharedMemoryBytes(tile[0], tile[1], config.mmaStages);
      if (bytes > kMaxTmaSharedMemoryBytes) {
        error = ("'" + kKernelConfigAttr + "' has " + Twine(config.mmaStages) +
                 " TMA stages of a " + Twine(tile[0]) + "x" + Twine(tile[1]) +
                 "x" + Twine(tile[2]) + " tile: " + Twine(bytes) +
                 " bytes of shared memory, more than " +
                 Twine(kMaxTmaSharedMemoryBytes))
                    .str();
        return failure();
      }
    }
    if (attr.get("mma_split_k") &&
        failed(integer("mma_split_k", config.mmaSplitK, 1, kMaxSplitK)))
      return failure();
    if (!config.mmaTma && getStaticSharedMemoryBytes(
                              tile[0], tile[1], tile[2], config.mmaStages,
                              config.mmaSplitK) > kMaxStaticSharedMemoryBytes) {
      error = ("'" + kKernelConfigAttr + "' has " + Twine(config.mmaStages) +
               " stages of a " + Twine(tile[0]) + "x" + Twine(tile[1]) + "x" +
               Twine(tile[2]) + " tile" +
               (config.mmaSplitK > 1 ? " and split-K's arrival verdict" : "") +
               ": more than 48 KiB of shared memory")
                  .str();
      return failure();
    }
    config.mmaTile.assign(tile.asArrayRef().begin(), tile.asArrayRef().end());
    config.mmaWarps.assign(warps.asArrayRef().begin(),
                           warps.asArrayRef().end());
  }
  if (attr.get("mma_split_k") && config.mmaTile.empty()) {
    error = ("'" + kKernelConfigAttr + "' has 'mma_split_k' without 'mma_tile'")
                .str();
    return failure();
  }
  if (Attribute gemv = attr.get("gemv")) {
    auto flag = dyn_cast<BoolAttr>(gemv);
    if (!flag || (flag.getValue() && !config.mmaTile.empty())) {
      error = ("'" + kKernelConfigAttr +
               "' needs 'gemv' as a bool, and not with 'mma_tile'")
                  .str();
      return failure();
    }
    config.gemv = flag.getValue();
    if (attr.get("gemv_split_k") &&
        failed(integer("gemv_split_k", config.gemvSplitK, 1, kMaxGemvSplitK)))
      return failure();
    if (attr.get("gemv_rows_per_warp") &&
        failed(integer("gemv_rows_per_warp", config.gemvRowsPerWarp, 1,
                       kMaxGemvRowsPerWarp)))
      return failure();
  }
  for (StringRef field : {"gemv_split_k", "gemv_rows_per_warp"}) {
    if (attr.get(field) && !config.gemv) {
      error = ("'" + kKernelConfigAttr + "' has '" + field + "' without 'gemv'")
                  .str();
      return failure();
    }
  }
  if (auto decode = attr.get("attention_decode")) {
    auto flag = dyn_cast<BoolAttr>(decode);
    if (!flag || attr.get("attention_tile") || !config.mmaTile.empty() ||
        config.gemv) {
      error = ("'" + kKernelConfigAttr +
               "' needs 'attention_decode' as a bool, and not with "
               "'attention_tile', 'mma_tile' or 'gemv'")
                  .str();
      return failure();
    }
    config.attentionDecode = flag.getValue();
    if (failed(integer("attention_splits", config.attentionSplits, 1,
                       kMaxAttentionSplits)))
      return failure();
    if (attr.get("attention_decode_keys") &&
        failed(integer("attention_decode_keys", config.attentionDecodeKeys, 1,
                       kMaxDecodeKeysPerWarp)))
      return failure();
    if (attr.get("attention_decode_heads") &&
        failed(integer("attention_decode_heads", config.attentionDecodeHeads, 1,
                       kMaxDecodeHeads)))
      return failure();
  } else if (attr.get("attention_decode_keys") ||
             attr.get("attention_decode_heads")) {
    error = ("'" + kKernelConfigAttr +
             "' has 'attention_decode_keys' or 'attention_decode_heads' "
             "without 'attention_decode'")
                .str();
    return failure();
  }
  // The attention kernel's tile: 16 query rows a warp, keys in whole k16
  // steps of the second product.
  if (attr.get("attention_tile") || attr.get("attention_stages")) {
    auto tile = attr.getAs<DenseI64ArrayAttr>("attention_tile");
    if (!tile || tile.size() != 2 || tile[0] != 16 * (tile[0] / 16) ||
        tile[0] < 16 || tile[0] > 128 || tile[1] != kAttentionKeyTile ||
        !config.mmaTile.empty() || config.gemv) {
      error = ("'" + kKernelConfigAttr +
               "' needs 'attention_tile' as {query rows, keys}: rows a "
               "multiple of 16 up to 128, keys " +
               Twine(kAttentionKeyTile) + ", and not with 'mma_tile' or 'gemv'")
                  .str();
      return failure();
    }
    if (failed(integer("attention_stages", config.attentionStages, 1, 2)))
      return failure();
    // The products' instruction: mma.sync (the default) or, with the query
    // tile one warpgroup, sm_90a's wgmma.
    if (Attribute instruction = attr.get("mma_instruction")) {
      auto name = dyn_cast<StringAttr>(instruction);
      if (!name ||
          (name.getValue() != "mma_sync" && name.getValue() != "wgmma") ||
          (name.getValue() == "wgmma" && tile[0] != 64)) {
        error = ("'" + kKernelConfigAttr +
                 "' needs 'mma_instruction' as \"mma_sync\" or \"wgmma\" "
                 "(one warpgroup: 64 query rows)")
                    .str();
        return failure();
      }
      config.wgmma = name.getValue() == "wgmma";
    }
    if (attr.get("attention_splits") &&
        failed(integer("attention_splits", config.attentionSplits, 1,
                       kMaxAttentionSplits)))
      return failure();
    if (failed(tmaFlag("attention_tma", config.attentionTma)))
      return failure();
    config.attentionTile.assign(tile.asArrayRef().begin(),
                                tile.asArrayRef().end());
  }
  // Tile sizes are optional: a kernel without them is not tiled.
  if (!attr.get("tile_sizes"))
    return config;
  auto tiles = attr.getAs<DenseI64ArrayAttr>("tile_sizes");
  if (!tiles ||
      llvm::any_of(tiles.asArrayRef(), [](int64_t size) { return size < 0; })) {
    error = ("'" + kKernelConfigAttr +
             "' needs 'tile_sizes' as an array of non-negative integers")
                .str();
    return failure();
  }
  config.tileSizes.assign(tiles.asArrayRef().begin(), tiles.asArrayRef().end());
  return config;
}

FailureOr<std::optional<KernelConfig>>
mlir::ridge::getKernelConfig(Operation *op) {
  Attribute attr = op->getAttr(kKernelConfigAttr);
  if (!attr)
    return std::optional<KernelConfig>();
  auto dict = dyn_cast<DictionaryAttr>(attr);
  std::string error = "'" + kKernelConfigAttr.str() + "' must be a dictionary";
  FailureOr<KernelConfig> config = failure();
  if (dict)
    config = KernelConfig::fromAttr(dict, error);
  if (failed(config)) {
    op->emitError() << error;
    return failure();
  }
  return std::optional<KernelConfig>(*config);
}

bool mlir::ridge::isKernelResult(Value value) {
  return llvm::any_of(value.getUsers(), [](Operation *user) {
    if (isa<func::ReturnOp>(user))
      return true;
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user))
      return isKernelResult(user->getResult(0));
    return false;
  });
}

TilingInterface mlir::ridge::getKernelSink(func::FuncOp kernel) {
  TilingInterface sink;
  unsigned numTileable = 0;
  for (Operation &op : kernel.front()) {
    auto tileable = dyn_cast<TilingInterface>(op);
    if (!tileable)
      continue;
    ++numTileable;
    if (llvm::any_of(op.getResults(), isKernelResult))
      sink = tileable;
  }
  return numTileable > 1 ? sink : TilingInterface();
}

/// Whether `value` is computed in the kernel from a reduction's result:
/// directly, or through elementwise ops and reshapes (a mean is a sum and a
/// division, expanded back to the rank of its consumer).
static bool derivesFromReduction(Value value) {
  SmallVector<Value> worklist = {value};
  llvm::SmallPtrSet<Operation *, 8> visited;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || !visited.insert(op).second)
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (linalgOp.getNumReductionLoops() > 0)
        return true;
      llvm::append_range(worklist, linalgOp.getDpsInputs());
    } else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op)) {
      worklist.push_back(op->getOperand(0));
    }
  }
  return false;
}

llvm::SmallBitVector mlir::ridge::getRowDims(linalg::LinalgOp sink) {
  llvm::SmallBitVector rowDims(sink.getNumLoops());
  for (OpOperand &operand : sink->getOpOperands()) {
    if (!derivesFromReduction(operand.get()))
      continue;
    // Read whole from an elementwise op of the kernel (a LayerNorm's rows
    // that the kernel returns and also rounds into a narrow copy, the copy
    // the sink): the producer's rows, through both permutations.
    AffineMap map = sink.getMatchingIndexingMap(&operand);
    auto producer = operand.get().getDefiningOp<linalg::LinalgOp>();
    if (producer && producer.getNumReductionLoops() == 0 &&
        map.isPermutation()) {
      AffineMap produced =
          producer.getIndexingMapMatchingResult(cast<OpResult>(operand.get()));
      if (produced.isPermutation()) {
        llvm::SmallBitVector producerRows = getRowDims(producer);
        for (unsigned i = 0; i < produced.getNumResults(); ++i)
          if (producerRows.test(produced.getDimPosition(i)))
            rowDims.set(map.getDimPosition(i));
        continue;
      }
    }
    llvm::SmallBitVector used(sink.getNumLoops());
    for (AffineExpr expr : map.getResults())
      expr.walk([&](AffineExpr sub) {
        if (auto dim = dyn_cast<AffineDimExpr>(sub))
          used.set(dim.getPosition());
      });
    rowDims |= used.flip();
  }
  return rowDims;
}

/// Whether the kernel moves 32-bit data, of which a 16-byte access holds 4:
/// an argument or result (an embedding kernel reads i64 ids and writes f32
/// rows; its weights are constants inside it).
static bool movesWords(func::FuncOp kernel) {
  FunctionType type = kernel.getFunctionType();
  return llvm::any_of(
      llvm::concat<const Type>(type.getInputs(), type.getResults()),
      [](Type type) {
        auto shaped = dyn_cast<ShapedType>(type);
        return shaped && shaped.getElementTypeBitWidth() == 32;
      });
}

/// Whether `config` tiles `kernel` into single elements with a loop inside:
/// every parallel loop of its sink tiled by 1 (no rows kept whole), and a
/// reduction in the kernel (the sink's own window, or a fused sum whose
/// mean the sink computes) that each tile runs whole.
static bool isElementTiled(func::FuncOp kernel, TilingInterface sink,
                           const KernelConfig &config) {
  if (!sink || config.tileSizes.empty())
    return false;
  for (auto [iterator, size] :
       llvm::zip(sink.getLoopIteratorTypes(), config.tileSizes))
    if (iterator == utils::IteratorType::parallel && size != 1)
      return false;
  bool hasReduction = false;
  kernel.walk([&](linalg::LinalgOp op) {
    hasReduction |= op.getNumReductionLoops() > 0;
  });
  return hasReduction;
}

int64_t mlir::ridge::selectWarpsPerBlock(int64_t rows, int64_t smCount,
                                         int64_t maxWarps) {
  return std::clamp<int64_t>(rows / std::max<int64_t>(1, smCount), 1,
                             std::max<int64_t>(1, maxWarps));
}

bool mlir::ridge::hasTileableIndexing(func::FuncOp kernel) {
  // Tiling needs each operand slice to follow from the tile: indices that
  // are non-negative combinations of loops (a strided convolution's window)
  // do; differences, divisions and modulos (a transposed convolution's) do
  // not.
  bool tileable = true;
  kernel.walk([&](linalg::LinalgOp op) {
    for (AffineMap map : op.getIndexingMapsArray())
      for (AffineExpr expr : map.getResults())
        expr.walk([&](AffineExpr sub) {
          auto binary = dyn_cast<AffineBinaryOpExpr>(sub);
          if (!binary)
            return;
          if (sub.getKind() != AffineExprKind::Add &&
              sub.getKind() != AffineExprKind::Mul)
            tileable = false;
          if (auto c = dyn_cast<AffineConstantExpr>(binary.getRHS()))
            tileable &= c.getValue() >= 0;
        });
  });
  return tileable;
}

bool mlir::ridge::hasEmptyLoop(func::FuncOp kernel) {
  bool empty = false;
  kernel.walk([&](linalg::LinalgOp op) {
    empty |= llvm::is_contained(op.getStaticLoopRanges(), 0);
  });
  return empty;
}

SmallVector<int64_t> mlir::ridge::selectTileSizes(TilingInterface sink) {
  // The row rule: loop dimensions that a reduction's result is broadcast
  // along (rows) stay whole, every other parallel loop is tiled by one, so
  // that a reduction runs once per row and a contraction once per output
  // element. Reductions stay whole.
  SmallVector<utils::IteratorType> iterators = sink.getLoopIteratorTypes();
  auto linalgSink = dyn_cast<linalg::LinalgOp>(sink.getOperation());
  llvm::SmallBitVector rowDims = linalgSink
                                     ? getRowDims(linalgSink)
                                     : llvm::SmallBitVector(iterators.size());
  SmallVector<int64_t> sizes;
  for (auto [dim, iterator] : llvm::enumerate(iterators))
    sizes.push_back(
        iterator == utils::IteratorType::parallel && !rowDims.test(dim) ? 1
                                                                        : 0);
  return sizes;
}

/// The product over the static loops of `sink` of `factor(extent, tile
/// size)` (a dynamic extent, or a sink that is not a linalg op, counts one).
static int64_t multiplyOverLoops(
    TilingInterface sink, ArrayRef<int64_t> tileSizes,
    llvm::function_ref<int64_t(int64_t extent, int64_t size)> factor) {
  auto linalgSink = dyn_cast<linalg::LinalgOp>(sink.getOperation());
  if (!linalgSink)
    return 1;
  int64_t count = 1;
  for (auto [range, size] :
       llvm::zip(linalgSink.getStaticLoopRanges(), tileSizes))
    if (!ShapedType::isDynamic(range))
      count *= factor(range, size);
  return count;
}

/// Iterations of the loop that tiling `sink` by `tileSizes` makes.
static int64_t countTiles(TilingInterface sink, ArrayRef<int64_t> tileSizes) {
  return multiplyOverLoops(sink, tileSizes, [](int64_t extent, int64_t size) {
    return size > 0 ? (extent + size - 1) / size : 1;
  });
}

/// Elements of one tile along the loops `tileSizes` keeps whole (0): a row
/// kernel's row.
static int64_t countRowElements(TilingInterface sink,
                                ArrayRef<int64_t> tileSizes) {
  return multiplyOverLoops(sink, tileSizes, [](int64_t extent, int64_t size) {
    return size == 0 ? extent : 1;
  });
}

/// Parallel iterations of the biggest linalg op of a kernel that is not
/// tiled (one op, or ops whose slices do not follow from a tile).
/// Iterations of the kernel's top-level scf.forall loops (static extents).
DictionaryAttr mlir::ridge::getOnlineAttentionAttr(func::FuncOp kernel) {
  if (auto attr = kernel->getAttrOfType<DictionaryAttr>(kOnlineAttentionAttr))
    return attr;
  for (auto forall : kernel.front().getOps<scf::ForallOp>())
    if (auto attr = forall->getAttrOfType<DictionaryAttr>(kOnlineAttentionAttr))
      return attr;
  return nullptr;
}

static int64_t countForallIterations(func::FuncOp kernel) {
  int64_t rows = 0;
  for (auto forall : kernel.front().getOps<scf::ForallOp>()) {
    int64_t count = 1;
    for (OpFoldResult bound : forall.getMixedUpperBound())
      count *= getConstantIntValue(bound).value_or(1);
    rows = std::max(rows, count);
  }
  return rows;
}

static int64_t countParallelIterations(func::FuncOp kernel) {
  int64_t rows = 0;
  for (auto linalgOp : kernel.front().getOps<linalg::LinalgOp>()) {
    int64_t count = 1;
    for (auto [range, iterator] : llvm::zip(linalgOp.getStaticLoopRanges(),
                                            linalgOp.getIteratorTypesArray()))
      if (iterator == utils::IteratorType::parallel &&
          !ShapedType::isDynamic(range))
        count *= range;
    rows = std::max(rows, count);
  }
  return rows;
}

void mlir::ridge::selectMmaTile(int64_t batch, int64_t m, int64_t n, int64_t k,
                                bool asyncCopies, FloatType mmaType,
                                bool wgmmaOperands, const TargetSpec &target,
                                KernelConfig &config) {
  // Bigger tiles reuse each staged operand element more (a 128 x 128 tile
  // reads 1/64 of an element per FLOP pair, a 32 x 32 one 1/16) but make
  // fewer blocks; a GPU with idle SMs loses more than the reuse gains.
  struct Candidate {
    int64_t m, n, warpsM, warpsN;
  };
  // sm_90a's wgmma computes 64 x n per warpgroup: 2 warpgroups for 128
  // rows, 1 for 64.
  static constexpr Candidate kMmaSync[] = {
      {128, 128, 2, 4}, {64, 64, 2, 2}, {32, 32, 2, 2}};
  static constexpr Candidate kWgmma[] = {
      {128, 128, 8, 1}, {64, 128, 4, 1}, {64, 64, 4, 1}};
  bool tf32 = mmaType.isTF32();
  bool wgmma = target.chip == "sm_90a" && wgmmaOperands;
  ArrayRef<Candidate> candidates =
      wgmma ? ArrayRef<Candidate>(kWgmma) : ArrayRef<Candidate>(kMmaSync);
  const Candidate *chosen = &candidates.back();
  for (const Candidate &candidate : candidates) {
    int64_t blocks = batch * llvm::divideCeil(m, candidate.m) *
                     llvm::divideCeil(n, candidate.n);
    if (blocks >= target.gpu.smCount) {
      chosen = &candidate;
      break;
    }
  }
  config.wgmma = wgmma;
  // Rows of 64 bytes: the swizzle of a 4-chunk row, conflict-free for the
  // fragment loads of both element sizes, and 3 stages of 128 x 128 in 48
  // KiB either way.
  int64_t elementBytes = tf32 ? 4 : mmaType.getWidth() / 8;
  int64_t tileK = 64 / elementBytes;
  config.mmaTile = {chosen->m, chosen->n, tileK};
  config.mmaWarps = {chosen->warpsM, chosen->warpsN};
  // cp.async stages: as many as hide a global load's latency behind the
  // multiplies of the stages before it (3 is CUTLASS's sm_80 default, 4
  // where 48 KiB of static shared memory holds them); k loops shorter than
  // the pipeline gain nothing from more.
  int64_t stageBytes = (chosen->m + chosen->n) * tileK * elementBytes;
  int64_t stages = 2;
  if (asyncCopies)
    stages =
        std::clamp<int64_t>(std::min<int64_t>(48 * 1024 / stageBytes,
                                              llvm::divideCeil(k, tileK) + 1),
                            3, 4);
  config.mmaStages = stages;
}

int64_t mlir::ridge::selectRowWarps(int64_t rows, int64_t rowElements,
                                    int64_t smCount) {
  // A row kernel maps one warp to a row; with fewer rows than SMs some SMs
  // idle and each busy warp walks a long row alone (a softmax over a
  // vocabulary, a norm over a wide hidden dimension with a few tokens).
  if (rows >= smCount)
    return 1;
  return std::clamp<int64_t>(rowElements / kRowElementsPerWarp, 1,
                             kMaxWarpsPerBlock);
}

int64_t mlir::ridge::selectTmaStages(int64_t kTiles) {
  return std::clamp<int64_t>(kTiles, 2, kMaxTmaStages);
}

int64_t mlir::ridge::getTmaSharedMemoryBytes(int64_t tileM, int64_t tileN,
                                             int64_t stages) {
  constexpr int64_t kAlignmentSlack = 1024, kMbarrierBytes = 8;
  return kAlignmentSlack + stages * (tileM + tileN) * kTmaRowBytes +
         2 * stages * kMbarrierBytes;
}

int64_t mlir::ridge::getStaticSharedMemoryBytes(int64_t tileM, int64_t tileN,
                                                int64_t tileK, int64_t stages,
                                                int64_t splitK) {
  return stages * (tileM + tileN) * tileK * 2 +
         (splitK > 1 ? kSplitKArrivalBytes : 0);
}

int64_t mlir::ridge::getTmaTileK(int64_t stagedBytes) {
  return kTmaRowBytes / stagedBytes;
}

int64_t mlir::ridge::selectSplitK(int64_t blocks, int64_t tileElements,
                                  int64_t kTiles, int64_t operandElements,
                                  int64_t smCount) {
  // A block walks its k tiles one after another, each a global load's
  // latency apart at best; blocks beyond the SMs wait for a second wave.
  // With fewer tiles than SMs (resnet18's 7x7 layers: 8 tiles of 64 x 64
  // for 132 SMs, 144 k tiles each) the k loop is the critical path, and
  // splitting it over idle SMs shortens it; the partial sums cost a write
  // and a read each, bounded by the operands' size.
  int64_t limit = std::min<int64_t>(kMaxSplitK, kTiles / kMinKTilesPerSplit);
  if (blocks > 0 && tileElements > 0)
    limit =
        std::min<int64_t>(limit, operandElements / (2 * blocks * tileElements));
  auto cost = [&](int64_t splits) {
    int64_t waves =
        llvm::divideCeil(blocks * splits, std::max<int64_t>(smCount, 1));
    return waves * llvm::divideCeil(kTiles, splits) +
           (splits > 1 ? kSplitKTailSteps : 0);
  };
  int64_t best = 1;
  for (int64_t splits = 2; splits <= limit; ++splits)
    if (cost(splits) < cost(best))
      best = splits;
  return best;
}

KernelConfig mlir::ridge::selectKernelConfig(func::FuncOp kernel,
                                             const TargetSpec &target) {
  KernelConfig config;
  config.blockSize = kDefaultBlockSize;
  // Tensor cores: a contraction whose operands the precision policy rounded
  // to bf16/f16 (or that are stored so), with its epilogue, is one
  // tensor-core kernel and is not tiled by the row rule.
  std::string reason;
  if (target.isGpu()) {
    FailureOr<MmaContraction> mma =
        matchMmaContraction(kernel, reason, /*allowF32=*/true);
    // A skinny contraction (m or n at most 16), f32 or stored in f16/bf16,
    // takes the bandwidth path instead: memory-bound by its shape (each
    // element of the large operand is used at most 16 times), it gains
    // nothing from tensor cores, whose tiles would pad the short side to 16
    // or more (and split k over partial sums to fill the GPU); what it needs
    // is coalesced 16-byte loads of the large operand and enough of them in
    // flight.
    std::optional<GemvForm> gemv =
        succeeded(mma) ? getGemvForm(*mma) : std::nullopt;
    if (gemv) {
      selectGemvConfig(*mma, *gemv, target, config);
      return config;
    }
    if (succeeded(mma) && !mma->products.front().lhs.mmaType.isF32()) {
      int64_t batch = mma->getBatchCount();
      bool asyncCopies = llvm::all_of(mma->products, [&](const MmaProduct &p) {
        return p.lhs.isCopiedAsBytes() && p.rhs.isCopiedAsBytes();
      });
      selectMmaTile(batch, mma->m, mma->n, mma->getTotalK(), asyncCopies,
                    mma->products.front().lhs.mmaType,
                    !whyNotWgmmaOperands(*mma), target, config);
      // sm_90a: operands that TMA can copy as they are (whole row-major
      // bf16/f16 tensors) are loaded by a producer warp of their own, in k
      // tiles of 64 (rows of 128 bytes: TMA's 128-byte swizzle), the stages
      // in dynamic shared memory (deeper than the 48 KiB of static shared
      // memory allows); the consumers only multiply.
      auto copiedByTma = [&](const MmaProduct &p, const MmaOperand &operand,
                             bool isLhs) {
        std::string why;
        return getMmaTmaLayout(*mma, p, operand, isLhs, why).has_value();
      };
      config.mmaTma =
          config.wgmma && llvm::all_of(mma->products, [&](const MmaProduct &p) {
            return copiedByTma(p, p.lhs, true) && copiedByTma(p, p.rhs, false);
          });
      if (config.mmaTma)
        config.mmaTile[2] =
            getTmaTileK(mma->products.front().lhs.getStagedBytes());
      int64_t blocks = batch * llvm::divideCeil(mma->m, config.mmaTile[0]) *
                       llvm::divideCeil(mma->n, config.mmaTile[1]);
      int64_t kTiles = 0;
      for (const MmaProduct &product : mma->products)
        kTiles += llvm::divideCeil(product.k, config.mmaTile[2]);
      if (config.mmaTma)
        config.mmaStages = selectTmaStages(kTiles);
      int64_t tileElements = config.mmaTile[0] * config.mmaTile[1] *
                             static_cast<int64_t>(mma->products.size());
      config.mmaSplitK = selectSplitK(
          blocks, tileElements, kTiles,
          batch * (mma->m + mma->n) * mma->getTotalK(), target.gpu.smCount);
      // Stages that fill the 48 KiB of static shared memory (3 of 128 x
      // 128) leave no room for split-K's arrival verdict.
      if (!config.mmaTma &&
          getStaticSharedMemoryBytes(
              config.mmaTile[0], config.mmaTile[1], config.mmaTile[2],
              config.mmaStages, config.mmaSplitK) > kMaxStaticSharedMemoryBytes)
        config.mmaSplitK = 1;
      config.warpsPerBlock = config.mmaWarps[0] * config.mmaWarps[1];
      config.blockSize =
          (config.warpsPerBlock + (config.mmaTma ? 1 : 0)) * kWarpSize;
      config.vectorWidth = 1;
      return config;
    }
  }
  // An attention (its online form: one scf.forall over the query rows, one
  // row per thread) takes as many threads per block as still give every SM
  // a block: gpt2_tiny's 512 rows run as 16 one-warp blocks, not as 2
  // blocks of 256 on 2 of the 108 SMs.
  if (auto kind = kernel->getAttrOfType<StringAttr>(kKernelAttr);
      kind && kind.getValue() == "attention") {
    // The tensor-core kernel where it computes the attention: 4 warps of 16
    // query rows, keys in tiles of kAttentionKeyTile, the next tile's loads
    // in flight during the current one's products when two stages of K and
    // V fit in 48 KiB of static shared memory.
    std::string reason;
    FailureOr<FlashAttention> flash =
        readFlashAttention(getOnlineAttentionAttr(kernel), reason);
    // A few query rows (a decode step) take the decode kernel where it
    // applies, even when the tensor-core one could: a 64-row query tile
    // would multiply mostly padding, and the step is memory-bound.
    bool decode = target.isGpu() && succeeded(flash) && !whyNotDecode(*flash);
    if (target.isGpu() && succeeded(flash) && !decode &&
        !whyNotTensorCores(*flash)) {
      // sm_90a multiplies with wgmma (the 64 query rows one warpgroup)
      // where the head dimensions are whole 64-byte slabs, mma.sync
      // elsewhere.
      config.wgmma = target.chip == "sm_90a" && !whyNotWgmma(*flash);
      config.attentionTile = {kAttentionQueryTile, kAttentionKeyTile};
      config.attentionStages =
          getFlashAttentionSharedBytes(*flash, 2, config.wgmma) <= 48 * 1024
              ? 2
              : 1;
      // On sm_90a, K and V stored as multiplied are copied by TMA, a
      // producer warp ahead of the consumers (FlashAttention-3): no thread
      // of the warpgroup computes an address or waits at a block barrier,
      // and the stages, in dynamic shared memory, are two at head dimension
      // 128 too.
      config.attentionTma =
          config.wgmma &&
          !whyNotAttentionTma(*flash, kernel.getArgumentTypes());
      if (config.attentionTma)
        config.attentionStages = 2;
      // Too few query tiles to give every SM a block (few query rows over
      // a long cache): split the keys over blocks, each at least two key
      // tiles, until every SM has one (flash-decoding). Each split writes
      // and the combine reads its rows' partial O: at most a quarter of the
      // keys per query row keeps that traffic under half of K and V's.
      int64_t blocks = llvm::divideCeil(flash->queryLen, kAttentionQueryTile) *
                       flash->heads * flash->batch;
      int64_t keyTiles = llvm::divideCeil(flash->keyLen, kAttentionKeyTile);
      int64_t splits = std::min<int64_t>(
          {static_cast<int64_t>(llvm::divideCeil(target.gpu.smCount, blocks)),
           keyTiles / 2, flash->keyLen / (4 * flash->queryLen)});
      if (blocks < target.gpu.smCount && splits > 1)
        config.attentionSplits = splits;
      config.warpsPerBlock = 4;
      config.blockSize = (4 + (config.attentionTma ? 1 : 0)) * kWarpSize;
      config.vectorWidth = 1;
      return config;
    }
    // The decode kernel for an attention of a few query rows (a decode
    // step, memory-bound: the policy keeps an f32 model's products f32; a
    // half-precision model's are rounded to its format): a block of 4 warps per
    // query row and split, the warps taking runs of keys in turn, the lanes
    // the head dimension. Each warp loads its run's K and V rows before it
    // uses one, and the keys are split over enough blocks that every SM
    // keeps twice Little's bytes in flight (kLoadedMemoryLatencySeconds).
    if (decode) {
      constexpr int64_t warps = 4;
      int64_t rows = flash->queryLen * flash->heads * flash->batch;
      int64_t lanesPerKey = (flash->dim + flash->valueDim) / kWarpSize;
      int64_t keysPerWarp = std::clamp<int64_t>(
          kDecodeLoadRegisters / lanesPerKey, 1, kMaxDecodeKeysPerWarp);
      // K and V's bytes: 4 an element, 2 in a half-precision model (whose
      // elements take a register each all the same).
      int64_t elementBytes = 4;
      if (flash->key.arg < kernel.getNumArguments())
        if (auto shaped = dyn_cast<ShapedType>(
                kernel.getArgument(flash->key.arg).getType()))
          elementBytes =
              std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8);
      double blockBytesInFlight = static_cast<double>(
          warps * keysPerWarp * lanesPerKey * kWarpSize * elementBytes);
      double smBytesNeeded = target.gpu.bandwidth *
                             kLoadedMemoryLatencySeconds /
                             static_cast<double>(target.gpu.smCount);
      int64_t blocksPerSm =
          std::clamp<int64_t>(static_cast<int64_t>(std::ceil(
                                  2 * smBytesNeeded / blockBytesInFlight)),
                              2, kMaxDecodeBlocksPerSm);
      // GQA: the query heads of a key head share a block, which loads each
      // key once for all of them (where one block per head would read the
      // group's keys from L2 once per head): the most that divide the group
      // and whose state fits kDecodeHeadRegisters.
      int64_t group = flash->heads / flash->kvHeads;
      int64_t headRegisters =
          (flash->dim + flash->valueDim) / kWarpSize + 2 + keysPerWarp;
      int64_t heads = 1;
      for (int64_t p = 1; p <= std::min(group, kMaxDecodeHeads); ++p)
        if (group % p == 0 && p * headRegisters <= kDecodeHeadRegisters)
          heads = p;
      int64_t blocks = rows / heads;
      config.attentionDecode = true;
      config.attentionDecodeKeys = keysPerWarp;
      config.attentionDecodeHeads = heads;
      config.attentionSplits = std::max<int64_t>(
          1, std::min<int64_t>({static_cast<int64_t>(llvm::divideCeil(
                                    blocksPerSm * target.gpu.smCount, blocks)),
                                flash->keyLen / (kMinDecodeStepsPerSplit *
                                                 warps * keysPerWarp),
                                kMaxAttentionSplits}));
      config.warpsPerBlock = warps;
      config.blockSize = 4 * kWarpSize;
      config.vectorWidth = 1;
      return config;
    }
    int64_t rows = countForallIterations(kernel);
    int64_t warps = selectWarpsPerBlock(llvm::divideCeil(rows, kWarpSize),
                                        target.gpu.smCount, kMaxWarpsPerBlock);
    config.blockSize = warps * kWarpSize;
    config.warpsPerBlock = warps;
    config.vectorWidth = 1;
    return config;
  }
  // 16-byte lane accesses for 32-bit data; the mapping still checks that a
  // row loop fits (a multiple of 128 elements) and that buffers are aligned.
  config.vectorWidth = movesWords(kernel) ? kWideVector : 1;
  // Tiles: a kernel of several ops becomes one loop around its result op
  // (the sink), by the row rule, when its operand slices follow from a tile
  // and no loop is empty (a reduction over an empty axis is its init).
  TilingInterface sink = getKernelSink(kernel);
  if (sink && hasTileableIndexing(kernel) && !hasEmptyLoop(kernel))
    config.tileSizes = selectTileSizes(sink);
  // Rows: the iterations of that loop, or the parallel iterations of an
  // untiled kernel (a lone reduction runs one row per warp too). Enough
  // blocks to give every SM one before blocks grow past a warp: 128 rows on
  // 132 SMs run as 128 one-warp blocks, 8192 rows as 1024 blocks of 8.
  int64_t rows = config.tileSizes.empty() ? countParallelIterations(kernel)
                                          : countTiles(sink, config.tileSizes);
  config.warpsPerBlock =
      selectWarpsPerBlock(rows, target.gpu.smCount, kMaxWarpsPerBlock);
  // Rows much longer than a warp, too few for the SMs: a block's warps
  // share each row.
  if (!config.tileSizes.empty()) {
    config.rowWarps = selectRowWarps(
        rows, countRowElements(sink, config.tileSizes), target.gpu.smCount);
    if (config.rowWarps > 1)
      config.warpsPerBlock = config.rowWarps;
  }
  // Tiles of one element with a loop inside (a pooling's window, a SIMT
  // contraction's k loop) run 4 elements a thread jammed
  // (ridge-vectorize-pointwise-loops). With fewer than 4 x 32 of them the
  // 4-element threads fill part of one warp, each lane's loop 4 elements
  // long, where one element a thread spreads the same loops over more
  // lanes at the same warp instructions a step: se_block's 16-channel
  // global pool runs 436 warp instructions, 1,058 jammed.
  if (config.vectorWidth == kWideVector &&
      isElementTiled(kernel, sink, config) && rows < kWideVector * kWarpSize)
    config.vectorWidth = 1;
  return config;
}
