//===- MatchRotaryEmbedding.cpp - Exported RoPE into ridge.rotary_embedding
//===//
//
// Exporters write LLaMA's rotary embedding (Hugging Face's
// `apply_rotary_pos_emb` with `rotate_half`) as five graph ops around the
// head-split query or key x [B, H, S, D]:
//
//   %c = ridge.mul %x, %cos                 // cos, sin: [.., S, D] tables
//   %lo = ridge.slice %x [.., 0 : D/2]
//   %hi = ridge.slice %x [.., D/2 : D]
//   %r = ridge.concat (ridge.neg %hi), %lo  // rotate_half(x)
//   %y = ridge.add %c, (ridge.mul %r, %sin)
//
// and the tables repeat their first half (emb = cat(freqs, freqs)). That is
// ONNX RotaryEmbedding-23 (non-interleaved, rotary_embedding_dim = D):
//
//   %y = ridge.rotary_embedding %x, %cos_cache, %sin_cache
//
// with [B, S, D/2] caches, the tables' first halves, made at compile time.
// The composite reads x once and the caches (half the tables); the chain
// wrote x * cos and rotate_half(x) * sin, or, fused, read x twice and both
// full tables; and it is one op that later stages (an attention's
// prologue) can read. y is bit for bit the chain's: x*cos + (-x2)*sin is
// x1*cos - x2*sin exactly, and the op computes the same products and sums.
//
// Only constant tables are matched, since the halves must be compared; a
// chain with tables computed at run time (positions gathered from a cache),
// halves that differ, a partial rotary dimension or another element type
// than f32 is left alone (with `remarks`, a remark at its Add says why).
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Dialect/Ridge/IR/ConstantElements.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-match-rotary-embedding"

namespace mlir::ridge {
#define GEN_PASS_DEF_MATCHROTARYEMBEDDINGPASS
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
/// An exported rotary embedding: y = x * cos + rotate_half(x) * sin.
struct RotaryChain {
  AddOp add;
  /// The rotated tensor [B, H, S, D] and the two [.., S, D] tables.
  Value input, cos, sin;
};
} // namespace

/// Whether `slice` reads all of `input` but the last axis, there
/// [start, start + size) with unit steps.
static bool isLastAxisSlice(SliceOp slice, Value input, int64_t start,
                            int64_t size) {
  if (!slice || slice.getInput() != input)
    return false;
  auto type = cast<RankedTensorType>(input.getType());
  int64_t last = type.getRank() - 1;
  for (int64_t d = 0; d <= last; ++d) {
    if (slice.getSteps()[d] != 1)
      return false;
    int64_t wantStart = d == last ? start : 0;
    int64_t wantSize = d == last ? size : type.getDimSize(d);
    if (slice.getStarts()[d] != wantStart || slice.getSizes()[d] != wantSize)
      return false;
  }
  return true;
}

/// Whether `value` is rotate_half(`input`): concat(-x[.., D/2:], x[.., :D/2])
/// along the last axis.
static bool isRotateHalf(Value value, Value input) {
  auto concat = value.getDefiningOp<ConcatOp>();
  auto type = cast<RankedTensorType>(input.getType());
  int64_t last = type.getRank() - 1, half = type.getDimSize(last) / 2;
  if (!concat || concat.getInputs().size() != 2 ||
      static_cast<int64_t>(concat.getAxis()) != last ||
      type.getDimSize(last) % 2 != 0)
    return false;
  auto neg = concat.getInputs()[0].getDefiningOp<NegOp>();
  return neg &&
         isLastAxisSlice(neg.getInput().getDefiningOp<SliceOp>(), input, half,
                         half) &&
         isLastAxisSlice(concat.getInputs()[1].getDefiningOp<SliceOp>(), input,
                         0, half);
}

/// Matches `add` as an exported rotary embedding; on failure, `why` says
/// what does not hold (empty when `add` is not one at all).
static std::optional<RotaryChain> matchRotaryChain(AddOp add,
                                                   std::string &why) {
  // One addend is x * cos, the other rotate_half(x) * sin, in any order.
  for (auto [first, second] : {std::pair(add.getLhs(), add.getRhs()),
                               std::pair(add.getRhs(), add.getLhs())}) {
    auto cosMul = first.getDefiningOp<MulOp>();
    auto sinMul = second.getDefiningOp<MulOp>();
    if (!cosMul || !sinMul)
      continue;
    for (auto [rotated, sin] : {std::pair(sinMul.getLhs(), sinMul.getRhs()),
                                std::pair(sinMul.getRhs(), sinMul.getLhs())}) {
      auto concat = rotated.getDefiningOp<ConcatOp>();
      if (!concat || concat.getInputs().size() != 2)
        continue;
      for (auto [input, cos] : {std::pair(cosMul.getLhs(), cosMul.getRhs()),
                                std::pair(cosMul.getRhs(), cosMul.getLhs())}) {
        auto type = dyn_cast<RankedTensorType>(input.getType());
        if (!type || type != add.getType() || type.getRank() != 4 ||
            !isRotateHalf(rotated, input))
          continue;
        if (!type.hasStaticShape() || !type.getElementType().isF32()) {
          why = "not a static f32 tensor";
          return std::nullopt;
        }
        return RotaryChain{add, input, cos, sin};
      }
      why = "the concatenation is not rotate_half of the tensor times cos "
            "(concat(-x[.., D/2:], x[.., :D/2]))";
    }
  }
  return std::nullopt;
}

/// The [B, S, D/2] cache of `table` (a constant broadcast onto [B, H, S, D],
/// the same for every head, whose second half along D repeats its first),
/// made as a ridge.constant before `add`; failure, with `why`, otherwise.
static FailureOr<Value> buildCache(IRRewriter &rewriter, AddOp add, Value table,
                                   StringRef name, std::string &why) {
  auto type = cast<RankedTensorType>(add.getType());
  int64_t batch = type.getDimSize(0), seq = type.getDimSize(2),
          dim = type.getDimSize(3), half = dim / 2;
  auto tableType = dyn_cast<RankedTensorType>(table.getType());
  std::optional<ConstantElementFn> values = getConstantElements(table);
  if (!tableType || !values || !tableType.getElementType().isF32()) {
    why = "the " + name.str() + " table is not an f32 constant";
    return failure();
  }
  // numpy broadcast onto (b, h, s, d): the table's strides per dimension,
  // 0 along the dimensions it is broadcast over.
  int64_t rank = tableType.getRank();
  if (rank > 4) {
    why = "the " + name.str() + " table has more than 4 dimensions";
    return failure();
  }
  SmallVector<int64_t> strides(4, 0);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    int64_t full = d + 4 - rank;
    int64_t size = tableType.getDimSize(d);
    if (size != 1 && size != type.getDimSize(full)) {
      why = "the " + name.str() + " table does not broadcast to the tensor";
      return failure();
    }
    strides[full] = size == 1 ? 0 : stride;
    stride *= size;
  }
  if (strides[1] != 0) {
    why = "the " + name.str() + " table differs between heads";
    return failure();
  }
  if (strides[3] == 0) {
    why = "the " + name.str() + " table is constant along the head dimension";
    return failure();
  }
  SmallVector<float> cache;
  cache.reserve(batch * seq * half);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < seq; ++s) {
      int64_t row = b * strides[0] + s * strides[2];
      for (int64_t k = 0; k < half; ++k) {
        double low = (*values)(row + k * strides[3]);
        double high = (*values)(row + (k + half) * strides[3]);
        // Bitwise equal halves (NaN included): the composite reads one.
        if (std::memcmp(&low, &high, sizeof(double)) != 0) {
          why = "the " + name.str() +
                " table's halves differ (not cat(freqs, freqs))";
          return failure();
        }
        cache.push_back(static_cast<float>(low));
      }
    }
  }
  auto cacheType =
      RankedTensorType::get({batch, seq, half}, rewriter.getF32Type());
  // A resource, so that the weights (not the IR text) hold it; named after
  // the table it halves.
  std::string key = "rope_" + name.str() + "_cache";
  if (auto constant = table.getDefiningOp<ConstantOp>())
    if (auto resource =
            dyn_cast<DenseResourceElementsAttr>(constant.getValue()))
      key = resource.getRawHandle().getKey().str() + ".half";
  auto attr = DenseResourceElementsAttr::get(
      cacheType, key,
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(cache)));
  return ConstantOp::create(rewriter, table.getLoc(), attr).getResult();
}

namespace {
struct MatchRotaryEmbeddingPass
    : public ridge::impl::MatchRotaryEmbeddingPassBase<
          MatchRotaryEmbeddingPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<AddOp> adds;
    getOperation().walk([&](AddOp add) { adds.push_back(add); });
    IRRewriter rewriter(&getContext());
    for (AddOp add : adds) {
      std::string why;
      std::optional<RotaryChain> chain = matchRotaryChain(add, why);
      if (chain) {
        rewriter.setInsertionPoint(add);
        FailureOr<Value> cosCache =
            buildCache(rewriter, add, chain->cos, "cos", why);
        FailureOr<Value> sinCache =
            succeeded(cosCache)
                ? buildCache(rewriter, add, chain->sin, "sin", why)
                : FailureOr<Value>(failure());
        if (succeeded(sinCache)) {
          int64_t dim = add.getType().getDimSize(3);
          Value rotated = RotaryEmbeddingOp::create(
              rewriter, add.getLoc(), add.getType(), chain->input, *cosCache,
              *sinCache, /*position_ids=*/Value(),
              rewriter.getI64IntegerAttr(dim), rewriter.getBoolAttr(false));
          rewriter.replaceOp(add, rotated);
          ++numMatched;
          LLVM_DEBUG(llvm::dbgs()
                     << "rotary embedding at " << add.getLoc() << "\n");
          continue;
        }
        // A half-built cache is dead: the canonicalizer drops it.
      }
      if (!why.empty()) {
        ++numLeftAlone;
        if (remarks)
          add.emitRemark() << "rotary embedding left as exported: " << why;
      }
    }
  }
};
} // namespace
