//===- TransposeWeightProducts.cpp - Products computed as they are read ---===//
//
// transpose(X W + b) = W^T X^T + b^T, for the transpose of the last two
// dimensions of a MatMul by a constant 2-D weight W (and a bias along its
// columns). MLP-Mixer's token mixing computes [B, C, T] = X [B, C, K] by W
// [K, T], adds a bias along T, then transposes back to [B, T, C] for the
// residual add. Computed as exported, its tensor-core kernel stores each
// output element with a 4-byte store of its own (the product's neighbouring
// columns are a row of the transposed result apart) and reads the residual
// the same way, and its weight's rows (T = 196) are no whole 16-byte
// chunks, so it is staged element by element. Computed transposed, W^T [T,
// K] is made at compile time (`<weight>.t`, rows of K), the transpose moves
// to the activation, which becomes the product's right operand (read
// k-contiguous, as a Gemm's transB), and the result is written in the layout
// its readers read.
//
// The rewrite is exact: each output element is the same sum of the same
// products over k.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Dialect/Ridge/IR/ConstantElements.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "ConstantWeights.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-transpose-weight-products"

namespace mlir::ridge {
#define GEN_PASS_DEF_TRANSPOSEWEIGHTPRODUCTSPASS
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
/// A transposed product the pass computes transposed.
struct TransposedProduct {
  MatMulOp product;
  /// The bias add between the product and the transpose, or null; the bias
  /// is its other operand.
  AddOp biasAdd;
  Value bias;
};
} // namespace

/// Whether `perm` swaps the last two of its dimensions and keeps the others.
static bool swapsLastTwo(ArrayRef<int64_t> perm) {
  int64_t rank = perm.size();
  if (rank < 2 || perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
    return false;
  for (int64_t i = 0; i < rank - 2; ++i)
    if (perm[i] != i)
      return false;
  return true;
}

/// Whether `bias` adds along the last dimension only: its dimensions are 1
/// but the last, which is `columns`.
static bool isColumnBias(Value bias, int64_t columns) {
  auto type = dyn_cast<RankedTensorType>(bias.getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0 ||
      type.getShape().back() != columns)
    return false;
  return llvm::all_of(type.getShape().drop_back(),
                      [](int64_t dim) { return dim == 1; });
}

/// The product `transpose` reads that the pass computes transposed, or
/// failure; `reason` says why a transpose of a product is left alone (empty
/// for a transpose that reads no product).
static FailureOr<TransposedProduct>
matchTransposedProduct(TransposeOp transpose, std::string &reason) {
  if (!swapsLastTwo(transpose.getPerm()))
    return failure();
  TransposedProduct match;
  Value transposed = transpose.getInput();
  if (auto add = transposed.getDefiningOp<AddOp>()) {
    for (auto [product, bias] : {std::pair(add.getLhs(), add.getRhs()),
                                 std::pair(add.getRhs(), add.getLhs())}) {
      if (!product.getDefiningOp<MatMulOp>())
        continue;
      match.biasAdd = add;
      match.bias = bias;
      transposed = product;
      break;
    }
  }
  match.product = transposed.getDefiningOp<MatMulOp>();
  if (!match.product)
    return failure();
  auto weight = match.product.getRhs().getDefiningOp<ConstantOp>();
  auto weightType =
      dyn_cast<RankedTensorType>(match.product.getRhs().getType());
  auto lhsType = dyn_cast<RankedTensorType>(match.product.getLhs().getType());
  auto resultType = dyn_cast<RankedTensorType>(transpose.getType());
  if (!weight || !weightType || weightType.getRank() != 2 ||
      !weightType.hasStaticShape() || !weightType.getElementType().isF32() ||
      !getConstantElements(weight.getResult())) {
    reason = "the product's weight is not a 2-D f32 constant at hand";
    return failure();
  }
  if (!lhsType || !resultType || lhsType.getRank() != resultType.getRank()) {
    reason = "the product's activation is not of the result's rank";
    return failure();
  }
  if (match.biasAdd && (!isColumnBias(match.bias, weightType.getDimSize(1)) ||
                        match.biasAdd.getType() != match.product.getType())) {
    reason = "the added operand is not a bias along the product's columns";
    return failure();
  }
  if (!match.product->hasOneUse() ||
      (match.biasAdd && !match.biasAdd->hasOneUse())) {
    reason = "the product is read elsewhere than through the transpose";
    return failure();
  }
  return match;
}

/// Replaces `transpose` by W^T X^T (+ the bias as a column).
static void computeTransposed(RewriterBase &rewriter, TransposeOp transpose,
                              const TransposedProduct &match) {
  MatMulOp product = match.product;
  rewriter.setInsertionPoint(transpose);
  Value weight = product.getRhs();
  auto weightType = cast<RankedTensorType>(weight.getType());
  Value weightT = permuteConstantWeight(rewriter, weight.getLoc(), weight,
                                        {1, 0}, /*lastDimSize=*/0, ".t");
  // The transpose now reads the activation, under its exported node's name.
  Value lhs = product.getLhs();
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  ArrayRef<int64_t> perm = transpose.getPerm();
  Value lhsT = TransposeOp::create(
      rewriter, transpose.getLoc(),
      RankedTensorType::get(getPermutedShape(lhsType.getShape(), perm),
                            lhsType.getElementType()),
      lhs, rewriter.getDenseI64ArrayAttr(perm));
  auto resultType = cast<RankedTensorType>(transpose.getType());
  auto productT =
      MatMulOp::create(rewriter, product.getLoc(), resultType, weightT, lhsT);
  productT->setDiscardableAttrs(product->getDiscardableAttrDictionary());
  Value result = productT;
  if (AddOp add = match.biasAdd) {
    int64_t columns = weightType.getDimSize(1);
    Value column = ReshapeOp::create(
        rewriter, match.bias.getLoc(),
        RankedTensorType::get({columns, 1}, resultType.getElementType()),
        match.bias);
    bool biasFirst = add.getLhs() == match.bias;
    result =
        AddOp::create(rewriter, add.getLoc(), resultType,
                      biasFirst ? column : result, biasFirst ? result : column);
  }
  rewriter.replaceOp(transpose, result);
  if (AddOp add = match.biasAdd)
    rewriter.eraseOp(add);
  rewriter.eraseOp(product);
}

namespace {
struct TransposeWeightProductsPass
    : public ridge::impl::TransposeWeightProductsPassBase<
          TransposeWeightProductsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<TransposeOp> transposes;
    getOperation().walk(
        [&](TransposeOp transpose) { transposes.push_back(transpose); });
    IRRewriter rewriter(&getContext());
    for (TransposeOp transpose : transposes) {
      std::string reason;
      FailureOr<TransposedProduct> match =
          matchTransposedProduct(transpose, reason);
      if (failed(match)) {
        if (!reason.empty()) {
          ++numLeftAlone;
          if (remarks)
            transpose.emitRemark("transposed product left as exported: ")
                << reason;
        }
        continue;
      }
      LLVM_DEBUG(llvm::dbgs()
                 << "computing transposed: " << match->product << "\n");
      computeTransposed(rewriter, transpose, *match);
      ++numTransposed;
    }
  }
};
} // namespace
