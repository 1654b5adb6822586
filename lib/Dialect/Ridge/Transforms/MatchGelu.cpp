//===- MatchGelu.cpp - Exported GELU chains into ridge.gelu ---------------===//
//
// Exporters write GELU as the formula, one graph op a term. GPT-2's
// NewGELU (the tanh form):
//
//   %x3 = ridge.mul %x, (ridge.mul %x, %x)          // or ridge.pow %x, 3
//   %s  = ridge.add %x, (ridge.mul %c044715, %x3)
//   %t  = ridge.tanh (ridge.mul %c_sqrt_2_over_pi, %s)
//   %y  = ridge.mul %c05, (ridge.mul %x, (ridge.add %c1, %t))
//
// and torch.nn.GELU() (BERT, ViT; the erf form):
//
//   %y = ridge.mul (ridge.mul %x, (ridge.add (ridge.erf (ridge.div %x,
//        %c_sqrt2)), %c1)), %c05
//
// Both are ONNX Gelu-20, `ridge.gelu` with approximate = "tanh" or "none".
// The composite is one op for the later stages: its lowering computes the
// tanh form as x / (1 + exp(-2u)), which needs no tanh (and has no
// cancellation in 1 + tanh(u) for negative u), and the GPU computes that
// exp with one ex2 instruction (ridge-exp-to-ex2-approx); the chain's
// rational tanh cost about thirty instructions an element in gpt2_tiny's
// MLP epilogue.
//
// Products are read as multisets of factors (through multiplies whose
// results nothing else reads), so any association and order matches; the
// constants must be scalars (or splats) equal to the formula's within f32
// rounding. A chain whose intermediate results are read elsewhere, whose
// constants differ, or whose terms are not the formula's is left alone
// (with `remarks`, a remark at its last multiply says why).
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/FusionPlan.h"
#include "ridgeline/Dialect/Ridge/IR/ConstantElements.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"

#include <cmath>

#define DEBUG_TYPE "ridge-match-gelu"

namespace mlir::ridge {
#define GEN_PASS_DEF_MATCHGELUPASS
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
/// A product read as its factors: the constant ones multiplied together,
/// and the others.
struct Product {
  double constant = 1.0;
  SmallVector<Value> factors;
};
} // namespace

/// The value of `value` when it is a constant whose elements are all equal
/// and that does not grow `result` by broadcasting (a scalar, a splat of its
/// shape or of a shape it broadcasts to).
static std::optional<double> getScalarConstant(Value value, Type result) {
  std::optional<ConstantElementFn> elements = getConstantElements(value);
  auto type = dyn_cast<RankedTensorType>(value.getType());
  auto resultType = dyn_cast<RankedTensorType>(result);
  if (!elements || !type || !type.hasStaticShape() || !resultType ||
      type.getRank() > resultType.getRank())
    return std::nullopt;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t size = type.getDimSize(type.getRank() - 1 - d);
    if (size != 1 &&
        size != resultType.getDimSize(resultType.getRank() - 1 - d))
      return std::nullopt;
  }
  double first = (*elements)(0);
  for (int64_t i = 1, e = type.getNumElements(); i < e; ++i)
    if ((*elements)(i) != first)
      return std::nullopt;
  return first;
}

/// Reads `value` as a product: through `ridge.mul`s (the root's, then only
/// those whose result the product alone reads), and a division by a
/// constant as a multiplication by its inverse.
static Product readProduct(Value value, Type result) {
  Product product;
  SmallVector<std::pair<Value, bool>> work = {{value, /*root=*/true}};
  while (!work.empty()) {
    auto [v, root] = work.pop_back_val();
    if (std::optional<double> c = getScalarConstant(v, result)) {
      product.constant *= *c;
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (def && (root || v.hasOneUse())) {
      if (auto mul = dyn_cast<MulOp>(def)) {
        work.push_back({mul.getLhs(), false});
        work.push_back({mul.getRhs(), false});
        continue;
      }
      if (auto div = dyn_cast<DivOp>(def)) {
        if (std::optional<double> c = getScalarConstant(div.getRhs(), result);
            c && *c != 0.0) {
          product.constant /= *c;
          work.push_back({div.getLhs(), false});
          continue;
        }
      }
    }
    product.factors.push_back(v);
  }
  return product;
}

/// Whether `actual` is `expected` within the rounding of an f32 constant.
static bool isClose(double actual, double expected) {
  return std::abs(actual - expected) <= 1e-6 * std::abs(expected);
}

/// Whether `value` (read by one op of the chain) is x^3: x * x * x through
/// multiplies, or x ** 3; `x` is set from it when null.
static bool isCube(Value value, Value &x, Type result, double &coefficient) {
  Product product = readProduct(value, result);
  coefficient = product.constant;
  if (product.factors.size() == 1) {
    auto pow = product.factors[0].getDefiningOp<PowOp>();
    std::optional<double> exponent =
        pow ? getScalarConstant(pow.getRhs(), result) : std::nullopt;
    if (!exponent || *exponent != 3.0 || !pow->hasOneUse())
      return false;
    x = pow.getLhs();
    return true;
  }
  if (product.factors.size() != 3)
    return false;
  x = product.factors[0];
  return llvm::all_of(product.factors, [&](Value f) { return f == x; });
}

/// The GELU `root` computes, as ridge.gelu's `approximate` ("tanh" or
/// "none") and its input; nullopt with `why` when it is not one (`why`
/// empty when `root` is no GELU-like chain at all).
static std::optional<std::pair<StringRef, Value>> matchGelu(MulOp root,
                                                            std::string &why) {
  Type result = root.getType();
  Product outer = readProduct(root.getResult(), result);
  if (outer.factors.size() != 2)
    return std::nullopt;
  // One factor is 1 + tanh(..) or 1 + erf(..), the other x.
  for (auto [onePlus, x] : {std::pair(outer.factors[0], outer.factors[1]),
                            std::pair(outer.factors[1], outer.factors[0])}) {
    auto add = onePlus.getDefiningOp<AddOp>();
    if (!add)
      continue;
    Value inner;
    if (std::optional<double> one = getScalarConstant(add.getLhs(), result);
        one && *one == 1.0)
      inner = add.getRhs();
    else if (std::optional<double> one =
                 getScalarConstant(add.getRhs(), result);
             one && *one == 1.0)
      inner = add.getLhs();
    Operation *function = inner ? inner.getDefiningOp() : nullptr;
    if (!isa_and_nonnull<TanhOp, ErfOp>(function))
      continue;
    bool isTanh = isa<TanhOp>(function);
    // From here on the chain is GELU-like: say why it does not match.
    if (x.getType() != result) {
      why = "the multiplied tensor is broadcast to another shape";
      return std::nullopt;
    }
    if (!add->hasOneUse() || !inner.hasOneUse()) {
      why = "an intermediate result of the chain is read elsewhere";
      return std::nullopt;
    }
    if (!isClose(outer.constant, 0.5)) {
      why = "the constant factor is " + std::to_string(outer.constant) +
            ", not 0.5";
      return std::nullopt;
    }
    Value argument = function->getOperand(0);
    Product scaled = readProduct(argument, result);
    if (!isTanh) {
      // erf(x / sqrt(2)).
      if (scaled.factors.size() != 1 || scaled.factors[0] != x ||
          !isClose(scaled.constant, M_SQRT1_2)) {
        why = "the erf's argument is not x / sqrt(2)";
        return std::nullopt;
      }
      if (!argument.hasOneUse()) {
        why = "an intermediate result of the chain is read elsewhere";
        return std::nullopt;
      }
      return std::pair(StringRef("none"), x);
    }
    if (!argument.hasOneUse()) {
      why = "an intermediate result of the chain is read elsewhere";
      return std::nullopt;
    }
    // tanh(sqrt(2 / pi) (x + 0.044715 x^3)).
    auto sum = scaled.factors.size() == 1
                   ? scaled.factors[0].getDefiningOp<AddOp>()
                   : AddOp();
    if (!sum || !isClose(scaled.constant, std::sqrt(2.0 / M_PI)) ||
        !sum->hasOneUse()) {
      why = "the tanh's argument is not sqrt(2 / pi) times a sum";
      return std::nullopt;
    }
    for (auto [linear, cubic] : {std::pair(sum.getLhs(), sum.getRhs()),
                                 std::pair(sum.getRhs(), sum.getLhs())}) {
      if (linear != x)
        continue;
      Value cubed;
      double coefficient = 1.0;
      if (!cubic.hasOneUse() || !isCube(cubic, cubed, result, coefficient) ||
          cubed != x) {
        why = "the sum's second term is not a multiple of x^3";
        return std::nullopt;
      }
      if (!isClose(coefficient, 0.044715)) {
        why = "the x^3 coefficient is " + std::to_string(coefficient) +
              ", not 0.044715";
        return std::nullopt;
      }
      return std::pair(StringRef("tanh"), x);
    }
    why = "the sum does not add x";
    return std::nullopt;
  }
  return std::nullopt;
}

namespace {
struct MatchGeluPass : public ridge::impl::MatchGeluPassBase<MatchGeluPass> {
  using Base::Base;

  void runOnOperation() override {
    // Outermost multiplies first: a chain's last multiply matches, and its
    // inner ones (erased with it) are not visited.
    SmallVector<MulOp> muls;
    getOperation().walk([&](MulOp mul) { muls.push_back(mul); });
    llvm::SmallPtrSet<Operation *, 16> erased;
    IRRewriter rewriter(&getContext());
    for (MulOp mul : llvm::reverse(muls)) {
      if (erased.contains(mul))
        continue;
      auto type = dyn_cast<RankedTensorType>(mul.getType());
      if (!type || !isa<FloatType>(type.getElementType()))
        continue;
      std::string why;
      std::optional<std::pair<StringRef, Value>> gelu = matchGelu(mul, why);
      if (!gelu) {
        // A multiply inside a larger product is tried too (GeGLU's
        // gelu(a) * b), but only the outermost one says why it is not a
        // GELU.
        bool inner = mul->hasOneUse() && isa<MulOp>(*mul->user_begin());
        if (!why.empty() && !inner) {
          ++numLeftAlone;
          if (remarks)
            mul.emitRemark() << "GELU left as exported: " << why;
        }
        continue;
      }
      // The chain's other ops are read by it alone: dead once it is
      // replaced; they go now, so that the walk does not visit them. In the
      // order found, each op's readers go before it.
      SetVector<Operation *> dead;
      dead.insert(mul);
      for (size_t i = 0; i < dead.size(); ++i)
        for (Value operand : dead[i]->getOperands())
          if (Operation *def = operand.getDefiningOp();
              def && operand != gelu->second && !isa<ConstantOp>(def) &&
              llvm::all_of(def->getUsers(), [&](Operation *user) {
                return dead.contains(user);
              }))
            dead.insert(def);
      // The composite stands for every ONNX node of the chain, in graph
      // order: the report and --verify list them all. It is named after the
      // last one, as a Gelu.
      SmallVector<Operation *> ordered(dead.begin(), dead.end());
      llvm::sort(ordered, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      SmallVector<Location> nodes;
      for (Operation *op : ordered)
        llvm::append_range(nodes, getOnnxNodeLocs(op->getLoc()));
      OnnxNodeRef root = getOnnxNode(mul.getLoc());
      Location loc = getMatchedNodesLoc(
          &getContext(), root.name.empty() ? StringRef("gelu") : root.name,
          "Gelu", nodes);
      // What the chain moves as exported, one kernel per ONNX node (a node
      // imported as several ops, Pow as two multiplies, is one kernel): the
      // plan the report compares the fused one with.
      llvm::MapVector<StringRef, SmallVector<Operation *>> byNode;
      for (Operation *op : ordered)
        byNode[getOnnxNode(op->getLoc()).name].push_back(op);
      int64_t exportedBytes = 0;
      for (auto &[name, group] : byNode) {
        llvm::SmallPtrSet<Operation *, 4> members(group.begin(), group.end());
        exportedBytes += getKernelBytes(group, [&](OpResult result) {
          return llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !members.contains(user);
          });
        });
      }
      rewriter.setInsertionPoint(mul);
      auto replacement =
          GeluOp::create(rewriter, loc, mul.getType(), gelu->second,
                         rewriter.getStringAttr(gelu->first));
      replacement->setAttr(kPerNodeBytesAttr,
                           rewriter.getI64IntegerAttr(exportedBytes));
      rewriter.replaceOp(mul, replacement);
      for (Operation *op : dead.getArrayRef().drop_front()) {
        erased.insert(op);
        rewriter.eraseOp(op);
      }
      ++numMatched;
      LLVM_DEBUG(llvm::dbgs()
                 << "GELU (" << gelu->first << ") at " << mul.getLoc() << "\n");
    }
  }
};
} // namespace
