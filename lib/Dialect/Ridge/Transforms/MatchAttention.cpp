//===- MatchAttention.cpp - Exported attention chains -> ridge.attention --===//
//
// Exporters write scaled dot-product attention as a chain of graph ops:
//
//   MatMul(Q, K^T) -> Div/Mul (scale) -> Where/Add (mask, bias)
//     -> [Cast f32] Softmax(last axis) [Cast back] -> MatMul(., V)
//
// with the scale sometimes applied to Q and K^T before the first MatMul
// (sqrt(scale) each), the heads folded into the batch (BERT, ViT: 3-D), and
// K/V repeated per query head (GQA: Reshape/Expand/Reshape). Left as
// exported, the chain is three kernels whose B*H*Sq*Skv scores go to device
// memory and back twice. This pass rewrites each chain into one
// ridge.attention, which the fusion plan makes one kernel that never stores
// the scores (docs/attention.md).
//
// A constant mask that is the causal triangle (a boolean mask or an additive
// one of zeros and large negatives) becomes `is_causal` with the offset of
// the last query among the keys; another boolean mask Where(m, s, fill)
// becomes the additive mask Where(m, 0, fill), which gives the same
// probabilities (fill is far below any score); an additive mask or bias
// (BERT's padding mask, T5's position bias) is the op's float mask. A chain
// that almost matches (it ends in a softmax feeding a MatMul) is left alone,
// with a remark saying why when `remarks` is set.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/FusionPlan.h"
#include "ridgeline/Dialect/Ridge/IR/ConstantElements.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#include <cmath>
#include <cstring>
#include <functional>

#define DEBUG_TYPE "ridge-match-attention"

namespace mlir::ridge {
#define GEN_PASS_DEF_MATCHATTENTIONPASS
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {

/// One attention chain as found between its two MatMuls.
struct AttentionChain {
  /// The operands as the first MatMul reads them (scales peeled off):
  /// query [.., Sq, D], transposed key [.., D, Skv]; value [.., Skv, Dv].
  Value query, keyT, value;
  /// Product of the scales found on the scores, Q and K^T.
  double scale = 1.0;
  /// cap * tanh(s / cap) on the scaled scores (Gemma 2); 0: none.
  double softcap = 0.0;
  /// Where(mask, scores, fill), and its constant fill.
  SelectOp where;
  double fill = 0.0;
  /// Add(scores, bias).
  Value bias;
  /// The softmax's type when it is wrapped in casts (f16 scores, f32
  /// softmax).
  Type softmaxType;
  /// The chain's ops, from the first MatMul to the second, to erase.
  SmallVector<Operation *> ops;
};

/// The value of a splat float constant, if `value` is one.
std::optional<double> getSplatConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// Element (i, j) of the last two dimensions of a mask, broadcast onto
/// [Sq, Skv]; nullopt where it is not known.
using MaskElementFn = std::function<std::optional<double>(int64_t, int64_t)>;

/// The elements of a mask that the graph computes from constants, without
/// materializing it: a constant, a comparison of two such values (a causal
/// mask built from position ranges), Trilu, casts and views that keep the
/// last two dimensions. Every other dimension must be 1.
std::optional<MaskElementFn> evaluateMask(Value value, unsigned depth = 0) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || depth > 8)
    return std::nullopt;
  int64_t rank = type.getRank();
  ArrayRef<int64_t> shape = type.getShape();
  if (rank > 2 &&
      llvm::any_of(shape.drop_back(2), [](int64_t d) { return d != 1; }))
    return std::nullopt;
  int64_t rows = rank >= 2 ? shape[rank - 2] : 1;
  int64_t cols = rank >= 1 ? shape[rank - 1] : 1;
  Operation *def = value.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (isa<ConstantOp>(def)) {
    std::optional<ConstantElementFn> element = getConstantElements(value);
    if (!element)
      return std::nullopt;
    return MaskElementFn(
        [element = *element, rows, cols](int64_t i, int64_t j) {
          return std::optional<double>(
              element((rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)));
        });
  }
  auto keepsLastDims = [&](Value input) {
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t r = inputType.getRank();
    return (r >= 2 ? inputType.getDimSize(r - 2) : 1) == rows &&
           (r >= 1 ? inputType.getDimSize(r - 1) : 1) == cols;
  };
  if (isa<ReshapeOp, CastOp>(def) && keepsLastDims(def->getOperand(0)))
    return evaluateMask(def->getOperand(0), depth + 1);
  if (isa<LessOp, LessEqualOp, GreaterOp, GreaterEqualOp, EqualOp>(def)) {
    std::optional<MaskElementFn> lhs =
        evaluateMask(def->getOperand(0), depth + 1);
    std::optional<MaskElementFn> rhs =
        evaluateMask(def->getOperand(1), depth + 1);
    if (!lhs || !rhs)
      return std::nullopt;
    auto compare = [def](double a, double b) {
      if (isa<LessOp>(def))
        return a < b;
      if (isa<LessEqualOp>(def))
        return a <= b;
      if (isa<GreaterOp>(def))
        return a > b;
      if (isa<GreaterEqualOp>(def))
        return a >= b;
      return a == b;
    };
    return MaskElementFn(
        [lhs = *lhs, rhs = *rhs, compare](int64_t i, int64_t j) {
          std::optional<double> a = lhs(i, j), b = rhs(i, j);
          if (!a || !b)
            return std::optional<double>();
          return std::optional<double>(compare(*a, *b) ? 1.0 : 0.0);
        });
  }
  if (auto trilu = dyn_cast<TriluOp>(def)) {
    std::optional<MaskElementFn> input =
        evaluateMask(trilu.getInput(), depth + 1);
    if (!input)
      return std::nullopt;
    int64_t k = trilu.getK();
    bool upper = trilu.getUpper();
    return MaskElementFn([input = *input, k, upper](int64_t i, int64_t j) {
      bool keep = upper ? j - i >= k : j - i <= k;
      return keep ? input(i, j) : std::optional<double>(0.0);
    });
  }
  return std::nullopt;
}

/// Whether the mask `value` (broadcast to [.., Sq, Skv], every leading
/// dimension 1) allows exactly the keys j <= i + (Skv - Sq): the causal
/// triangle of queries that are the last Sq positions. `allowed` says which
/// element values allow a key.
bool isCausalMask(Value value, int64_t qLen, int64_t kvLen,
                  llvm::function_ref<std::optional<bool>(double)> allowed) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() < 2 || !type.hasStaticShape() || kvLen < qLen)
    return false;
  ArrayRef<int64_t> shape = type.getShape();
  if (shape[shape.size() - 2] != qLen || shape.back() != kvLen)
    return false;
  // Each element is evaluated (1.6 s for 16k x 16k); past 2^31 of them
  // the mask stays a mask.
  if (qLen > (int64_t(1) << 31) || kvLen > (int64_t(1) << 31) ||
      qLen * kvLen > (int64_t(1) << 31))
    return false;
  std::optional<MaskElementFn> element = evaluateMask(value);
  if (!element)
    return false;
  int64_t offset = kvLen - qLen;
  for (int64_t i = 0; i < qLen; ++i)
    for (int64_t j = 0; j < kvLen; ++j) {
      std::optional<double> v = (*element)(i, j);
      std::optional<bool> allows = v ? allowed(*v) : std::nullopt;
      if (!allows || *allows != (j <= i + offset))
        return false;
    }
  return true;
}

/// `def` = Mul/Div of a value by a splat constant (Mul in either operand
/// order): the factor it multiplies by and the other operand.
std::optional<std::pair<double, Value>> matchConstantScale(Operation *def) {
  if (!isa<MulOp, DivOp>(def))
    return std::nullopt;
  Value lhs = def->getOperand(0), rhs = def->getOperand(1);
  std::optional<double> factor = getSplatConstant(rhs);
  Value other = lhs;
  if (!factor && isa<MulOp>(def)) {
    factor = getSplatConstant(lhs);
    other = rhs;
  }
  if (!factor || *factor == 0.0 || other.getType() != def->getResultTypes()[0])
    return std::nullopt;
  return std::pair(isa<DivOp>(def) ? 1.0 / *factor : *factor, other);
}

/// Peels Mul/Div by a splat constant off `value` (an operand of the first
/// MatMul), multiplying `scale`.
Value peelScale(Value value, double &scale, SmallVector<Operation *> &ops) {
  while (Operation *def = value.getDefiningOp()) {
    std::optional<std::pair<double, Value>> scaled = matchConstantScale(def);
    if (!scaled || !value.hasOneUse())
      break;
    scale *= scaled->first;
    ops.push_back(def);
    value = scaled->second;
  }
  return value;
}

/// A soft cap of the scores: Mul(Tanh(Div(x, cap)), cap), either Mul operand
/// order, each intermediate used once.
struct Softcap {
  double cap;
  TanhOp tanh;
  DivOp div;
};

std::optional<Softcap> matchSoftcap(Operation *def, Type scoresType) {
  auto mul = dyn_cast<MulOp>(def);
  if (!mul)
    return std::nullopt;
  for (auto [tanhSide, capSide] : {std::pair(mul.getLhs(), mul.getRhs()),
                                   std::pair(mul.getRhs(), mul.getLhs())}) {
    std::optional<double> cap = getSplatConstant(capSide);
    auto tanh = tanhSide.getDefiningOp<TanhOp>();
    if (!cap || *cap <= 0 || !tanh || !tanhSide.hasOneUse())
      continue;
    auto div = tanh.getInput().getDefiningOp<DivOp>();
    if (!div || !tanh.getInput().hasOneUse() ||
        div.getLhs().getType() != scoresType)
      continue;
    std::optional<double> inner = getSplatConstant(div.getRhs());
    if (!inner || *inner != *cap)
      continue;
    return Softcap{*cap, tanh, div};
  }
  return std::nullopt;
}

/// Follows the scores backwards from the softmax's input to the first
/// MatMul, collecting scale, mask and bias.
FailureOr<MatMulOp> matchScores(Value scores, AttentionChain &chain,
                                std::string &why) {
  // Walking backwards, a mask met after a scale was applied before it: the
  // scale would multiply the mask too.
  bool seenScale = false;
  // A mask or bias must come after the scale and the softcap: they would
  // scale or cap it too.
  auto checkMaskOrder = [&]() -> LogicalResult {
    if (seenScale)
      why = "the scale applies after the mask";
    else if (chain.softcap > 0)
      why = "the softcap applies after the mask";
    return success(why.empty());
  };
  auto scoresType = cast<RankedTensorType>(scores.getType());
  while (true) {
    Operation *def = scores.getDefiningOp();
    if (!def) {
      why = "the scores are a function argument";
      return failure();
    }
    if (!scores.hasOneUse()) {
      why = "the scores of '" + def->getName().getStringRef().str() +
            "' are also read by another op";
      return failure();
    }
    if (auto matmul = dyn_cast<MatMulOp>(def)) {
      chain.ops.push_back(matmul);
      return matmul;
    }
    if (std::optional<Softcap> capped = matchSoftcap(def, scoresType)) {
      if (seenScale || chain.softcap > 0) {
        why = "the softcap is not on the scaled scores";
        return failure();
      }
      chain.softcap = capped->cap;
      llvm::append_range(chain.ops,
                         ArrayRef<Operation *>{def, capped->tanh, capped->div});
      scores = capped->div.getLhs();
      continue;
    }
    if (isa<MulOp, DivOp>(def)) {
      std::optional<std::pair<double, Value>> scaled = matchConstantScale(def);
      if (!scaled) {
        why = "the scores are scaled by a tensor, not a constant";
        return failure();
      }
      seenScale = true;
      chain.scale *= scaled->first;
      chain.ops.push_back(def);
      scores = scaled->second;
      continue;
    }
    if (auto select = dyn_cast<SelectOp>(def)) {
      std::optional<double> fill = getSplatConstant(select.getFalseValue());
      if (failed(checkMaskOrder()))
        return failure();
      if (chain.where || !fill ||
          select.getTrueValue().getType() != scoresType) {
        why = "the Where is not a mask with a constant fill";
        return failure();
      }
      // A fill that is not far below every score would be a value a
      // softmax weighs, not a mask.
      if (!(*fill <= -1.0e4)) {
        why = "the Where's fill value is not a large negative";
        return failure();
      }
      chain.where = select;
      chain.fill = *fill;
      chain.ops.push_back(def);
      scores = select.getTrueValue();
      continue;
    }
    if (auto add = dyn_cast<AddOp>(def)) {
      // The scores are the operand that leads back to the MatMul: the
      // score-shaped one computed by a chain op.
      auto isChainOp = [&](Value v) {
        Operation *op = v.getDefiningOp();
        return op && v.getType() == scoresType &&
               isa<MatMulOp, MulOp, DivOp, SelectOp, AddOp>(op);
      };
      Value lhs = add.getLhs(), rhs = add.getRhs();
      Value next = isChainOp(lhs) ? lhs : isChainOp(rhs) ? rhs : Value();
      Value bias = next == lhs ? rhs : lhs;
      if (failed(checkMaskOrder()))
        return failure();
      if (!next || chain.bias) {
        why = chain.bias ? "the scores get two additive biases"
                         : "the Add does not read the scores";
        return failure();
      }
      chain.bias = bias;
      chain.ops.push_back(def);
      scores = next;
      continue;
    }
    why = "'" + def->getName().getStringRef().str() +
          "' between the MatMul and the Softmax is not a scale, mask or bias";
    return failure();
  }
}

/// Matches the chain that ends in `root`, the MatMul of the probabilities
/// and V.
FailureOr<AttentionChain> matchChain(MatMulOp root, std::string &why) {
  AttentionChain chain;
  Value probabilities = root.getLhs();
  chain.value = root.getRhs();
  Operation *def = probabilities.getDefiningOp();
  auto castBack = dyn_cast_or_null<CastOp>(def);
  if (castBack && probabilities.hasOneUse()) {
    probabilities = castBack.getInput();
    def = probabilities.getDefiningOp();
  } else {
    castBack = nullptr;
  }
  auto softmax = dyn_cast_or_null<SoftmaxOp>(def);
  if (!softmax)
    return failure(); // Not an attention: no remark.
  if (!probabilities.hasOneUse()) {
    why = "the probabilities are also read by another op";
    return failure();
  }
  auto type = cast<RankedTensorType>(softmax.getType());
  int64_t rank = type.getRank();
  // The dialect's axis is non-negative (the verifier checks it).
  if (softmax.getAxis() != static_cast<uint64_t>(rank - 1)) {
    why = "the softmax is not over the last axis";
    return failure();
  }
  Value scores = softmax.getInput();
  CastOp castIn;
  if (castBack) {
    castIn = scores.getDefiningOp<CastOp>();
    if (!castIn || !scores.hasOneUse() ||
        castIn.getInput().getType() != castBack.getType()) {
      why = "the casts around the softmax do not pair up";
      return failure();
    }
    chain.softmaxType = type.getElementType();
    scores = castIn.getInput();
  }
  FailureOr<MatMulOp> first = matchScores(scores, chain, why);
  if (failed(first))
    return failure();
  std::reverse(chain.ops.begin(), chain.ops.end());
  if (castBack) {
    chain.ops.push_back(castIn);
    chain.ops.push_back(softmax);
    chain.ops.push_back(castBack);
  } else {
    chain.ops.push_back(softmax);
  }
  SmallVector<Operation *> prologue;
  chain.query = peelScale(first->getLhs(), chain.scale, prologue);
  chain.keyT = peelScale(first->getRhs(), chain.scale, prologue);
  chain.ops.insert(chain.ops.begin(), prologue.begin(), prologue.end());

  // Shapes: [.., Sq, D] x [.., D, Skv] and [.., Skv, Dv], one element type,
  // batch dims that the attention op can express (3-D: heads as the batch;
  // 4-D: [B, H]).
  auto qType = cast<RankedTensorType>(chain.query.getType());
  auto kType = cast<RankedTensorType>(chain.keyT.getType());
  auto vType = cast<RankedTensorType>(chain.value.getType());
  if (qType.getRank() != rank || kType.getRank() != rank ||
      vType.getRank() != rank || (rank != 3 && rank != 4)) {
    why = "the operands are not all 3-D or all 4-D";
    return failure();
  }
  if (!qType.hasStaticShape() || !kType.hasStaticShape() ||
      !vType.hasStaticShape()) {
    why = "the shapes are not static";
    return failure();
  }
  if (qType.getElementType() != kType.getElementType() ||
      qType.getElementType() != vType.getElementType() ||
      !isa<FloatType>(qType.getElementType())) {
    why = "Q, K and V differ in element type";
    return failure();
  }
  for (int64_t d = 0; d + 2 < rank; ++d) {
    if (kType.getDimSize(d) != vType.getDimSize(d) ||
        (d == 0 && kType.getDimSize(d) != qType.getDimSize(d))) {
      why = "K and V do not share Q's batch";
      return failure();
    }
  }
  if (rank == 4 && qType.getDimSize(1) % kType.getDimSize(1) != 0) {
    why = "the key heads do not divide the query heads";
    return failure();
  }
  if (rank == 3 && kType.getDimSize(0) != qType.getDimSize(0)) {
    why = "K and V do not share Q's batch";
    return failure();
  }
  return chain;
}

/// Prepends unit dimensions to `value` up to `rank` (a view at `value`'s
/// location).
Value expandTo(OpBuilder &b, Value value, int64_t rank) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() >= rank)
    return value;
  SmallVector<int64_t> shape(rank - type.getRank(), 1);
  llvm::append_range(shape, type.getShape());
  return ReshapeOp::create(b, value.getLoc(),
                           RankedTensorType::get(shape, type.getElementType()),
                           value);
}

/// K from the transposed key the first MatMul reads: the transpose that made
/// K^T is undone (composed), or a new one swaps the last two dims. Both
/// keep the location of what they transpose (the key's node, not the
/// attention's).
Value untransposeKey(OpBuilder &b, Value keyT) {
  int64_t rank = cast<RankedTensorType>(keyT.getType()).getRank();
  if (auto transpose = keyT.getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> perm(transpose.getPerm());
    std::swap(perm[rank - 1], perm[rank - 2]);
    if (llvm::equal(perm, llvm::seq<int64_t>(0, rank)))
      return transpose.getInput();
    return TransposeOp::create(b, transpose.getLoc(), transpose.getInput(),
                               perm);
  }
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return TransposeOp::create(b, keyT.getLoc(), keyT, perm);
}

/// The key/value heads before their repetition per query head:
/// Reshape([B, Hkv, S, D] -> [B, Hkv, 1, S, D]) -> Expand(g) ->
/// Reshape([B, Hkv * g, S, D]) gives x and g, as does Tile of a single head;
/// anything else itself and 1.
std::pair<Value, int64_t> unrepeatHeads(Value value) {
  // Tile([B, 1, S, D], [1, g, 1, 1]): one key/value head for every query
  // head (multi-query attention). With more key heads Tile would pair query
  // head h with key head h mod Hkv, not the grouping's h / g.
  if (auto tile = value.getDefiningOp<TileOp>()) {
    auto source = cast<RankedTensorType>(tile.getInput().getType());
    ArrayRef<int64_t> repeats = tile.getRepeats();
    if (source.getRank() == 4 && source.getDimSize(1) == 1 &&
        repeats.size() == 4 && repeats[0] == 1 && repeats[2] == 1 &&
        repeats[3] == 1 && repeats[1] > 1)
      return {tile.getInput(), repeats[1]};
    return {value, 1};
  }
  auto merge = value.getDefiningOp<ReshapeOp>();
  auto expand = merge ? merge.getInput().getDefiningOp<ExpandOp>() : nullptr;
  auto split = expand ? expand.getInput().getDefiningOp<ReshapeOp>() : nullptr;
  if (!split)
    return {value, 1};
  auto source = cast<RankedTensorType>(split.getInput().getType());
  auto expanded = cast<RankedTensorType>(expand.getType());
  auto result = cast<RankedTensorType>(value.getType());
  if (source.getRank() != 4 || expanded.getRank() != 5 || result.getRank() != 4)
    return {value, 1};
  ArrayRef<int64_t> s = source.getShape(), e = expanded.getShape();
  int64_t groups = e[2];
  if (e[0] != s[0] || e[1] != s[1] || e[3] != s[2] || e[4] != s[3] ||
      cast<RankedTensorType>(split.getType()).getDimSize(2) != 1 ||
      result.getDimSize(1) != s[1] * groups)
    return {value, 1};
  return {split.getInput(), groups};
}

/// Rewrites `chain`, ending in `root`, into one ridge.attention.
void rewriteChain(MatMulOp root, AttentionChain &chain) {
  OpBuilder b(root);
  // What the chain moves as exported, one kernel per node: the plan the
  // report compares the fused attention with.
  int64_t exportedBytes = 0;
  SmallVector<Operation *> exported(chain.ops);
  exported.push_back(root);
  for (Operation *op : exported)
    if (auto cost = dyn_cast<CostOpInterface>(op))
      exportedBytes += std::max<int64_t>(0, cost.getMinBytes());
  // The attention stands for every node of the chain: the report and the
  // emulator's diagnostics list them all.
  SmallVector<Location> nodes;
  for (Operation *op : chain.ops)
    llvm::append_range(nodes, getOnnxNodeLocs(op->getLoc()));
  llvm::append_range(nodes, getOnnxNodeLocs(root.getLoc()));
  OnnxNodeRef rootNode = getOnnxNode(root.getLoc());
  Location loc = getMatchedNodesLoc(
      b.getContext(),
      rootNode.name.empty() ? StringRef("attention") : rootNode.name,
      "Attention", nodes);
  auto qType = cast<RankedTensorType>(chain.query.getType());
  int64_t rank = qType.getRank();
  Type element = qType.getElementType();
  int64_t qLen = qType.getDimSize(rank - 2);
  int64_t kvLen =
      cast<RankedTensorType>(chain.keyT.getType()).getDimSize(rank - 1);

  Value key = untransposeKey(b, chain.keyT);
  Value query = expandTo(b, chain.query, 4);
  key = expandTo(b, key, 4);
  Value value = expandTo(b, chain.value, 4);
  auto [keyHeads, keyGroups] = unrepeatHeads(key);
  auto [valueHeads, valueGroups] = unrepeatHeads(value);
  if (keyGroups > 1 && keyGroups == valueGroups &&
      keyHeads.getType() == valueHeads.getType()) {
    key = keyHeads;
    value = valueHeads;
  }

  // Masks: the causal triangle becomes the flag; the rest one additive
  // float mask.
  bool causal = false;
  Value mask;
  if (chain.where) {
    Value condition = chain.where.getCondition();
    if (isCausalMask(condition, qLen, kvLen,
                     [](double v) -> std::optional<bool> { return v != 0; })) {
      causal = true;
    } else {
      auto scalar = RankedTensorType::get({}, element);
      // The additive mask is the Where's own node, not the attention.
      Location whereLoc = chain.where.getLoc();
      auto constant = [&](double v) {
        return ConstantOp::create(
            b, whereLoc,
            DenseElementsAttr::get(scalar, b.getFloatAttr(element, v)));
      };
      mask = SelectOp::create(b, whereLoc, condition, constant(0.0),
                              constant(chain.fill));
    }
  }
  if (chain.bias) {
    bool biasIsCausal =
        !causal && isCausalMask(chain.bias, qLen, kvLen,
                                [](double v) -> std::optional<bool> {
                                  if (v == 0.0)
                                    return true;
                                  if (v <= -1.0e30)
                                    return false;
                                  return std::nullopt;
                                });
    if (biasIsCausal)
      causal = true;
    else
      mask = mask ? AddOp::create(b, loc, mask, chain.bias).getResult()
                  : chain.bias;
  }
  // A mask of lower rank broadcasts onto [B, H, Sq, Skv] by numpy's rules
  // as it did onto the 3-D scores ([N, Sq, Skv], N the heads): it stays as
  // it is, and no view of it lands in the kernel that computes it.

  TypeAttr softmaxType;
  if (chain.softmaxType && chain.softmaxType != element)
    softmaxType = TypeAttr::get(chain.softmaxType);
  auto attention = AttentionOp::create(
      b, loc, query, key, value, mask, /*nonpad_kv_seqlen=*/Value(),
      APFloat(float(chain.scale)), causal, causal ? kvLen - qLen : 0,
      /*left_window=*/-1, /*right_window=*/-1, APFloat(float(chain.softcap)),
      /*qk_matmul_output_mode=*/0, softmaxType);
  attention->setAttr(kPerNodeBytesAttr, b.getI64IntegerAttr(exportedBytes));
  Value result = attention.getResult();
  if (rank == 3)
    result = ReshapeOp::create(b, loc, root.getType(), result);
  root.getResult().replaceAllUsesWith(result);
  root.erase();
  for (Operation *op : llvm::reverse(chain.ops))
    if (op->use_empty())
      op->erase();
}

struct MatchAttentionPass
    : public ridge::impl::MatchAttentionPassBase<MatchAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<MatMulOp> roots;
    func.walk([&](MatMulOp op) { roots.push_back(op); });
    for (MatMulOp root : roots) {
      // Why a chain that ends in a softmax is left alone; empty for a
      // MatMul that is no attention's.
      std::string why;
      FailureOr<AttentionChain> chain = matchChain(root, why);
      if (failed(chain)) {
        if (!why.empty()) {
          ++numLeftAlone;
          LLVM_DEBUG(llvm::dbgs() << "left alone: " << why << "\n");
          if (remarks)
            root.emitRemark() << "attention not matched: " << why;
        }
        continue;
      }
      rewriteChain(root, *chain);
      ++numMatched;
    }
  }
};
} // namespace
