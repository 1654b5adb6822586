//===- RidgeElementwiseOps.cpp - ridge Elementwise ops --------------------===//
//
// Type inference, verifiers, folders and costs of the ops declared in
// RidgeElementwiseOps.td, and the constant folders of the arithmetic core
// (add, sub, mul, div, pow, max, min, relu, neg, abs, cast) declared in
// RidgeOps.td.
//
//===----------------------------------------------------------------------===//

#include "RidgeOpsCommon.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APSInt.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::detail;

//===----------------------------------------------------------------------===//
// Constant folding
//===----------------------------------------------------------------------===//

namespace {

/// Folding evaluates every element on the host; larger constants are left to
/// the generated code rather than bloating the IR and the compile time.
constexpr int64_t kMaxFoldElements = 4096;

/// One constant element: integers (and bools) as APInt, floats widened to
/// double, which holds every f16/bf16/f32/f64 value exactly.
struct Element {
  APInt i;
  double f = 0;
  static Element ofInt(APInt v) { return {std::move(v), 0}; }
  static Element ofFloat(double v) { return {APInt(), v}; }
  static Element ofBool(bool v) { return {APInt(1, v), 0}; }
};

using ElementFn = function_ref<std::optional<Element>(ArrayRef<Element>)>;

/// `value` converted to an APFloat of `type` (rounding to nearest even).
APFloat toFloat(double value, FloatType type) {
  APFloat result(value);
  bool losesInfo;
  result.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                 &losesInfo);
  return result;
}

/// Evaluates `fn` on the elements of the constant `operands` broadcast (numpy
/// rules) to `resultType`. Null when an operand is not a dense constant, the
/// result is too large (and not a splat), or `fn` declines an element
/// (division by zero).
Attribute foldElementwise(ArrayRef<Attribute> operands, Type resultType,
                          ElementFn fn) {
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!type || !type.hasStaticShape())
    return {};
  Type elementType = type.getElementType();
  auto floatType = dyn_cast<FloatType>(elementType);
  if (!floatType && !elementType.isInteger())
    return {};
  unsigned width = floatType ? 0 : elementType.getIntOrFloatBitWidth();
  SmallVector<DenseElementsAttr> dense;
  bool allSplat = true;
  for (Attribute attr : operands) {
    auto value = dyn_cast_if_present<DenseElementsAttr>(attr);
    if (!value)
      return {};
    Type operandElement = value.getElementType();
    if (!isa<FloatType>(operandElement) && !operandElement.isInteger())
      return {};
    allSplat &= value.isSplat();
    dense.push_back(value);
  }
  int64_t count = getNumElements(type);
  if (count < 0 || (!allSplat && count > kMaxFoldElements))
    return {};
  // Splats keep one element.
  SmallVector<SmallVector<Element>> values(dense.size());
  for (auto [value, elements] : llvm::zip(dense, values)) {
    bool isFloat = isa<FloatType>(value.getElementType());
    if (value.isSplat()) {
      elements.push_back(
          isFloat ? Element::ofFloat(
                        value.getSplatValue<APFloat>().convertToDouble())
                  : Element::ofInt(value.getSplatValue<APInt>()));
    } else if (isFloat) {
      for (APFloat v : value.getValues<APFloat>())
        elements.push_back(Element::ofFloat(v.convertToDouble()));
    } else {
      for (APInt v : value.getValues<APInt>())
        elements.push_back(Element::ofInt(v));
    }
  }

  if (allSplat) {
    SmallVector<Element> args;
    for (const SmallVector<Element> &elements : values)
      args.push_back(elements.front());
    std::optional<Element> result = fn(args);
    if (!result)
      return {};
    if (floatType)
      return DenseElementsAttr::get(type, toFloat(result->f, floatType));
    if (result->i.getBitWidth() != width)
      return {};
    return DenseElementsAttr::get(type, result->i);
  }

  // Walk the result in row-major order, keeping each operand's linear index
  // in step (broadcast dims do not advance it).
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = shape.size();
  SmallVector<SmallVector<int64_t>> strides;
  for (DenseElementsAttr value : dense) {
    ArrayRef<int64_t> opShape = value.getType().getShape();
    int64_t offset = rank - static_cast<int64_t>(opShape.size());
    if (offset < 0)
      return {};
    SmallVector<int64_t> s(rank, 0);
    int64_t stride = 1;
    for (int64_t d = opShape.size() - 1; d >= 0; --d) {
      if (opShape[d] != 1) {
        if (opShape[d] != shape[d + offset])
          return {};
        s[d + offset] = stride;
      }
      stride *= opShape[d];
    }
    strides.push_back(std::move(s));
  }

  SmallVector<APFloat> floats;
  SmallVector<APInt> ints;
  SmallVector<int64_t> index(rank, 0);
  SmallVector<int64_t> linear(dense.size(), 0);
  SmallVector<Element> args(dense.size());
  for (int64_t n = 0, e = type.getNumElements(); n < e; ++n) {
    for (size_t k = 0; k < dense.size(); ++k)
      args[k] = values[k][dense[k].isSplat() ? 0 : linear[k]];
    std::optional<Element> result = fn(args);
    if (!result)
      return {};
    if (floatType) {
      floats.push_back(toFloat(result->f, floatType));
    } else {
      if (result->i.getBitWidth() != width)
        return {};
      ints.push_back(result->i);
    }
    // Advance the multi-index.
    for (int64_t d = rank - 1; d >= 0; --d) {
      for (size_t k = 0; k < dense.size(); ++k)
        linear[k] += strides[k][d];
      if (++index[d] < shape[d])
        break;
      for (size_t k = 0; k < dense.size(); ++k)
        linear[k] -= strides[k][d] * shape[d];
      index[d] = 0;
    }
  }
  if (floatType)
    return DenseElementsAttr::get(type, floats);
  return DenseElementsAttr::get(type, ints);
}

bool hasFloatElements(Value v) {
  return isa<FloatType>(getElementTypeOrSelf(v.getType()));
}

bool hasUnsignedElements(Value v) {
  Type type = getElementTypeOrSelf(v.getType());
  return type.isUnsignedInteger() || type.isInteger(1);
}

/// Folds a float-only unary op with the host function `fn`.
Attribute foldFloatUnary(ArrayRef<Attribute> operands, Type resultType,
                         double (*fn)(double)) {
  return foldElementwise(operands, resultType,
                         [&](ArrayRef<Element> e) -> std::optional<Element> {
                           return Element::ofFloat(fn(e[0].f));
                         });
}

/// Integer power by squaring with wrap-around; negative exponents give the
/// truncated reciprocal (0 unless the base is 1 or -1), as math.ipowi does.
APInt integerPower(const APInt &base, const APInt &exponent, bool isUnsigned) {
  unsigned width = base.getBitWidth();
  if (!isUnsigned && exponent.isNegative()) {
    if (base.isOne())
      return base;
    if (base.isAllOnes())
      return exponent[0] ? base : APInt(width, 1);
    return APInt(width, 0);
  }
  APInt result(width, 1), b = base, x = exponent;
  while (!x.isZero()) {
    if (x[0])
      result *= b;
    b *= b;
    x.lshrInPlace(1);
  }
  return result;
}

} // namespace

//===----------------------------------------------------------------------===//
// Folders of the arithmetic core (ops declared in RidgeOps.td)
//===----------------------------------------------------------------------===//

#define RIDGE_FOLD_BINARY(OP, INT_EXPR, FLOAT_EXPR)                            \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    bool isFloat = hasFloatElements(getLhs());                                 \
    bool isUnsigned = hasUnsignedElements(getLhs());                           \
    (void)isUnsigned;                                                          \
    return foldElementwise(                                                    \
        adaptor.getOperands(), getType(),                                      \
        [&](ArrayRef<Element> e) -> std::optional<Element> {                   \
          const APInt &a = e[0].i, &b = e[1].i;                                \
          double x = e[0].f, y = e[1].f;                                       \
          (void)a, (void)b, (void)x, (void)y;                                  \
          if (isFloat)                                                         \
            return Element::ofFloat(FLOAT_EXPR);                               \
          return INT_EXPR;                                                     \
        });                                                                    \
  }

RIDGE_FOLD_BINARY(AddOp, Element::ofInt(a + b), x + y)
RIDGE_FOLD_BINARY(SubOp, Element::ofInt(a - b), x - y)
RIDGE_FOLD_BINARY(MulOp, Element::ofInt(a *b), x *y)
// Integer x / 0 is 0 and INT_MIN / -1 wraps, as in the lowering.
RIDGE_FOLD_BINARY(DivOp,
                  Element::ofInt(b.isZero()   ? APInt(a.getBitWidth(), 0)
                                 : isUnsigned ? a.udiv(b)
                                              : a.sdiv(b)),
                  x / y)
RIDGE_FOLD_BINARY(PowOp, Element::ofInt(integerPower(a, b, isUnsigned)),
                  std::pow(x, y))
RIDGE_FOLD_BINARY(MaxOp,
                  Element::ofInt(isUnsigned ? llvm::APIntOps::umax(a, b)
                                            : llvm::APIntOps::smax(a, b)),
                  std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y))
RIDGE_FOLD_BINARY(MinOp,
                  Element::ofInt(isUnsigned ? llvm::APIntOps::umin(a, b)
                                            : llvm::APIntOps::smin(a, b)),
                  std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y))
#undef RIDGE_FOLD_BINARY

#define RIDGE_FOLD_UNARY(OP, INT_EXPR, FLOAT_EXPR)                             \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    bool isFloat = hasFloatElements(getInput());                               \
    bool isUnsigned = hasUnsignedElements(getInput());                         \
    (void)isUnsigned;                                                          \
    return foldElementwise(                                                    \
        adaptor.getOperands(), getType(),                                      \
        [&](ArrayRef<Element> e) -> std::optional<Element> {                   \
          const APInt &a = e[0].i;                                             \
          double x = e[0].f;                                                   \
          (void)a, (void)x;                                                    \
          if (isFloat)                                                         \
            return Element::ofFloat(FLOAT_EXPR);                               \
          return Element::ofInt(INT_EXPR);                                     \
        });                                                                    \
  }

RIDGE_FOLD_UNARY(NegOp, -a, -x)
RIDGE_FOLD_UNARY(AbsOp, isUnsigned ? a : a.abs(), std::fabs(x))
RIDGE_FOLD_UNARY(ReluOp,
                 !isUnsigned && a.isNegative() ? APInt(a.getBitWidth(), 0) : a,
                 x < 0 ? 0.0 : x)
RIDGE_FOLD_UNARY(SignOp,
                 a.isZero() ? a
                 : !isUnsigned && a.isNegative()
                     ? APInt::getAllOnes(a.getBitWidth())
                     : APInt(a.getBitWidth(), 1),
                 std::isnan(x) ? x
                 : x > 0       ? 1.0
                 : x < 0       ? -1.0
                               : 0.0)
#undef RIDGE_FOLD_UNARY

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  // not(not(x)) -> x.
  if (auto producer = getInput().getDefiningOp<NotOp>())
    return producer.getInput();
  return foldElementwise(adaptor.getOperands(), getType(),
                         [](ArrayRef<Element> e) -> std::optional<Element> {
                           return Element::ofInt(~e[0].i);
                         });
}

OpFoldResult mlir::ridge::detail::foldCastConstant(Attribute input,
                                                   Type inputType,
                                                   Type resultType,
                                                   bool saturate) {
  Type from = getElementTypeOrSelf(inputType);
  Type to = getElementTypeOrSelf(resultType);
  bool fromFloat = isa<FloatType>(from);
  bool fromUnsigned = from.isUnsignedInteger() || from.isInteger(1);
  bool toUnsigned = to.isUnsignedInteger();
  // A saturating cast to float8 clamps to the largest finite value (as the
  // ONNX reference clips before it rounds); elsewhere APFloat's overflow is
  // ONNX's: infinity for f8E5M2, NaN for the other float8 types.
  bool clamps = saturate && isa<Float8E4M3FNType, Float8E4M3FNUZType,
                                Float8E5M2Type, Float8E5M2FNUZType>(to);
  if (auto floatType = dyn_cast<FloatType>(to); floatType && !fromFloat) {
    // Integer to float rounds once, directly to the target type (through
    // double, 64-bit integers could round twice).
    auto dense = dyn_cast_if_present<DenseElementsAttr>(input);
    auto type = dyn_cast<RankedTensorType>(resultType);
    if (!dense || !type || !type.hasStaticShape() ||
        (!dense.isSplat() && dense.getNumElements() > kMaxFoldElements))
      return {};
    auto convert = [&](const APInt &v) {
      APFloat result(floatType.getFloatSemantics());
      result.convertFromAPInt(v, /*IsSigned=*/!fromUnsigned,
                              APFloat::rmNearestTiesToEven);
      if (clamps && !result.isFinite())
        return APFloat::getLargest(floatType.getFloatSemantics(),
                                   /*Negative=*/!fromUnsigned &&
                                       v.isNegative());
      return result;
    };
    if (dense.isSplat())
      return DenseElementsAttr::get(type,
                                    convert(dense.getSplatValue<APInt>()));
    SmallVector<APFloat> values;
    for (APInt v : dense.getValues<APInt>())
      values.push_back(convert(v));
    return DenseElementsAttr::get(type, values);
  }
  return foldElementwise(
      input, resultType, [&](ArrayRef<Element> e) -> std::optional<Element> {
        const Element &x = e[0];
        if (to.isInteger(1))
          return Element::ofBool(fromFloat ? x.f != 0 : !x.i.isZero());
        if (isa<FloatType>(to)) {
          if (clamps && !std::isnan(x.f)) {
            double largest =
                APFloat::getLargest(cast<FloatType>(to).getFloatSemantics())
                    .convertToDouble();
            return Element::ofFloat(std::clamp(x.f, -largest, largest));
          }
          return x;
        }
        unsigned width = to.getIntOrFloatBitWidth();
        if (fromFloat) {
          // Truncates toward zero; out-of-range values are undefined in
          // ONNX, so do not fold them.
          if (!std::isfinite(x.f))
            return std::nullopt;
          APSInt result(width, toUnsigned);
          bool isExact;
          if (APFloat(x.f).convertToInteger(result, APFloat::rmTowardZero,
                                            &isExact) &
              APFloat::opInvalidOp)
            return std::nullopt;
          return Element::ofInt(result);
        }
        return Element::ofInt(fromUnsigned ? x.i.zextOrTrunc(width)
                                           : x.i.sextOrTrunc(width));
      });
}

//===----------------------------------------------------------------------===//
// Unary math
//===----------------------------------------------------------------------===//

// Float unary math (trigonometric, hyperbolic, floor, ceil, round).
// FLOPs: |out|, one per element (a transcendental counts 1). Bytes: default.
#define RIDGE_FLOAT_UNARY(OP, FN)                                              \
  int64_t OP::getFlops() { return getNumElements(getType()); }                 \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    return foldFloatUnary(adaptor.getOperands(), getType(),                    \
                          [](double x) -> double { return FN(x); });           \
  }
RIDGE_FLOAT_UNARY(SinOp, std::sin)
RIDGE_FLOAT_UNARY(CosOp, std::cos)
RIDGE_FLOAT_UNARY(TanOp, std::tan)
RIDGE_FLOAT_UNARY(AsinOp, std::asin)
RIDGE_FLOAT_UNARY(AcosOp, std::acos)
RIDGE_FLOAT_UNARY(AtanOp, std::atan)
RIDGE_FLOAT_UNARY(SinhOp, std::sinh)
RIDGE_FLOAT_UNARY(CoshOp, std::cosh)
RIDGE_FLOAT_UNARY(AsinhOp, std::asinh)
RIDGE_FLOAT_UNARY(AcoshOp, std::acosh)
RIDGE_FLOAT_UNARY(AtanhOp, std::atanh)
RIDGE_FLOAT_UNARY(FloorOp, std::floor)
RIDGE_FLOAT_UNARY(CeilOp, std::ceil)
// The default floating-point environment rounds halves to even.
RIDGE_FLOAT_UNARY(RoundOp, std::nearbyint)
#undef RIDGE_FLOAT_UNARY

// Sqrt and Reciprocal of constants (an attention scale 1 / sqrt(d) computed
// from a shape). Left unfolded, the plan counted a kernel that the linalg
// canonicalizer then folded away. Both are correctly rounded in double and
// then rounded to the element type, which is the correctly rounded f32 (or
// narrower) result, as sqrt.rn / rcp.rn and the CPU compute it: double
// has more than twice f32's precision plus two bits.
OpFoldResult SqrtOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) -> double { return std::sqrt(x); });
}
OpFoldResult ReciprocalOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) -> double { return 1.0 / x; });
}

// Sign, Not: FLOPs |out|, one per element. Bytes: default.
int64_t SignOp::getFlops() { return getNumElements(getType()); }
int64_t NotOp::getFlops() { return getNumElements(getType()); }

/// Bool tensor of `input`'s shape.
static LogicalResult inferPredicateType(Value input,
                                        SmallVectorImpl<Type> &results) {
  auto type = cast<RankedTensorType>(input.getType());
  results.push_back(RankedTensorType::get(
      type.getShape(), IntegerType::get(input.getContext(), 1)));
  return success();
}

LogicalResult IsNaNOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  return inferPredicateType(adaptor.getInput(), results);
}

// FLOPs: |out|, one compare per element. Bytes: default (|in| + |out| at a
// byte per bool).
int64_t IsNaNOp::getFlops() { return getNumElements(getType()); }

OpFoldResult IsNaNOp::fold(FoldAdaptor adaptor) {
  return foldElementwise(adaptor.getOperands(), getType(),
                         [](ArrayRef<Element> e) -> std::optional<Element> {
                           return Element::ofBool(std::isnan(e[0].f));
                         });
}

LogicalResult IsInfOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  return inferPredicateType(adaptor.getInput(), results);
}

// FLOPs: |out|, one compare per element. Bytes: default.
int64_t IsInfOp::getFlops() { return getNumElements(getType()); }

OpFoldResult IsInfOp::fold(FoldAdaptor adaptor) {
  bool positive = getDetectPositive(), negative = getDetectNegative();
  return foldElementwise(adaptor.getOperands(), getType(),
                         [&](ArrayRef<Element> e) -> std::optional<Element> {
                           double x = e[0].f;
                           return Element::ofBool(
                               std::isinf(x) && (x > 0 ? positive : negative));
                         });
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

/// Bool tensor of the broadcast shape of `lhs` and `rhs`, which must share an
/// element type.
static LogicalResult inferCompareType(std::optional<Location> loc, Value lhs,
                                      Value rhs,
                                      SmallVectorImpl<Type> &results) {
  SmallVector<Type> inferred;
  if (failed(inferBinaryType(loc, lhs, rhs, inferred)))
    return failure();
  results.push_back(cast<RankedTensorType>(inferred.front())
                        .clone(IntegerType::get(lhs.getContext(), 1)));
  return success();
}

// Comparisons: FLOPs |out|, one compare per result element. Bytes: default
// (both operands unbroadcast, the bool result at a byte per element).
#define RIDGE_DEFINE_PREDICATE(OP, INT_EXPR, FLOAT_EXPR)                       \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &results) {                                        \
    return inferCompareType(loc, adaptor.getLhs(), adaptor.getRhs(), results); \
  }                                                                            \
  int64_t OP::getFlops() { return getNumElements(getType()); }                 \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    bool isFloat = hasFloatElements(getLhs());                                 \
    bool isUnsigned = hasUnsignedElements(getLhs());                           \
    (void)isUnsigned;                                                          \
    return foldElementwise(                                                    \
        adaptor.getOperands(), getType(),                                      \
        [&](ArrayRef<Element> e) -> std::optional<Element> {                   \
          const APInt &a = e[0].i, &b = e[1].i;                                \
          double x = e[0].f, y = e[1].f;                                       \
          (void)a, (void)b, (void)x, (void)y;                                  \
          if (isFloat)                                                         \
            return Element::ofBool(FLOAT_EXPR);                                \
          return Element::ofBool(INT_EXPR);                                    \
        });                                                                    \
  }

RIDGE_DEFINE_PREDICATE(EqualOp, a == b, x == y)
RIDGE_DEFINE_PREDICATE(LessOp, isUnsigned ? a.ult(b) : a.slt(b), x < y)
RIDGE_DEFINE_PREDICATE(LessEqualOp, isUnsigned ? a.ule(b) : a.sle(b), x <= y)
RIDGE_DEFINE_PREDICATE(GreaterOp, isUnsigned ? a.ugt(b) : a.sgt(b), x > y)
RIDGE_DEFINE_PREDICATE(GreaterEqualOp, isUnsigned ? a.uge(b) : a.sge(b), x >= y)
#undef RIDGE_DEFINE_PREDICATE

// Bitwise on any integer type; on bools (i1) bitwise is logical.
// FLOPs: |out|, one operation per result element. Bytes: default.
#define RIDGE_DEFINE_LOGICAL(OP, EXPR)                                         \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &results) {                                        \
    return inferBinaryType(loc, adaptor.getLhs(), adaptor.getRhs(), results);  \
  }                                                                            \
  int64_t OP::getFlops() { return getNumElements(getType()); }                 \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    return foldElementwise(adaptor.getOperands(), getType(),                   \
                           [](ArrayRef<Element> e) -> std::optional<Element> { \
                             const APInt &a = e[0].i, &b = e[1].i;             \
                             return Element::ofInt(EXPR);                      \
                           });                                                 \
  }
RIDGE_DEFINE_LOGICAL(AndOp, a &b)
RIDGE_DEFINE_LOGICAL(OrOp, a | b)
RIDGE_DEFINE_LOGICAL(XorOp, a ^ b)
#undef RIDGE_DEFINE_LOGICAL

LogicalResult ModOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  return inferBinaryType(loc, adaptor.getLhs(), adaptor.getRhs(), results);
}

// FLOPs: |out|, one remainder per result element. Bytes: default.
int64_t ModOp::getFlops() { return getNumElements(getType()); }

OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  bool isFloat = hasFloatElements(getLhs());
  bool isUnsigned = hasUnsignedElements(getLhs());
  bool fmod = getFmod();
  return foldElementwise(adaptor.getOperands(), getType(),
                         [&](ArrayRef<Element> e) -> std::optional<Element> {
                           if (isFloat) {
                             double y = e[1].f;
                             double r = std::fmod(e[0].f, y);
                             if (fmod)
                               return Element::ofFloat(r);
                             // numpy's floor mod, as the lowering.
                             if (r == 0)
                               return Element::ofFloat(std::copysign(0.0, y));
                             if ((r < 0) != (y < 0))
                               r += y;
                             return Element::ofFloat(r);
                           }
                           const APInt &a = e[0].i, &b = e[1].i;
                           if (b.isZero())
                             return Element::ofInt(APInt(a.getBitWidth(), 0));
                           if (isUnsigned)
                             return Element::ofInt(a.urem(b));
                           APInt r = a.srem(b);
                           // Python semantics: the remainder takes the
                           // divisor's sign.
                           if (!fmod && !r.isZero() &&
                               r.isNegative() != b.isNegative())
                             r += b;
                           return Element::ofInt(r);
                         });
}

LogicalResult BitShiftOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  return inferBinaryType(loc, adaptor.getLhs(), adaptor.getRhs(), results);
}

LogicalResult BitShiftOp::verify() {
  if (getDirection() != "left" && getDirection() != "right")
    return emitOpError("direction must be \"left\" or \"right\", got \"")
           << getDirection() << "\"";
  return success();
}

// FLOPs: |out|, one shift per result element. Bytes: default.
int64_t BitShiftOp::getFlops() { return getNumElements(getType()); }

OpFoldResult BitShiftOp::fold(FoldAdaptor adaptor) {
  bool left = getDirection() == "left";
  // Signless integers are ONNX's signed ones: they shift arithmetically.
  bool arithmetic = !left && !getType().getElementType().isUnsignedInteger();
  return foldElementwise(
      adaptor.getOperands(), getType(),
      [&](ArrayRef<Element> e) -> std::optional<Element> {
        const APInt &a = e[0].i, &b = e[1].i;
        unsigned width = a.getBitWidth();
        // Negative amounts compare as huge unsigned ones.
        unsigned amount = b.uge(width) ? width : b.getZExtValue();
        if (arithmetic)
          return Element::ofInt(a.ashr(std::min(amount, width - 1)));
        if (amount == width)
          return Element::ofInt(APInt(width, 0));
        return Element::ofInt(left ? a.shl(amount) : a.lshr(amount));
      });
}

//===----------------------------------------------------------------------===//
// SelectOp
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  SmallVector<Type> values;
  if (failed(inferBinaryType(loc, adaptor.getTrueValue(),
                             adaptor.getFalseValue(), values)))
    return failure();
  auto valueType = cast<RankedTensorType>(values.front());
  auto condType = cast<RankedTensorType>(adaptor.getCondition().getType());
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(condType.getShape(), valueType.getShape());
  if (failed(shape))
    return inferenceError(loc, "condition " + Twine(typeToString(condType)) +
                                   " does not broadcast with the values " +
                                   typeToString(valueType));
  results.push_back(valueType.clone(*shape));
  return success();
}

// FLOPs: |out|, one select per result element. Bytes: default (condition,
// both values unbroadcast, and the result).
int64_t SelectOp::getFlops() { return getNumElements(getType()); }

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  // Both branches the same value: the condition does not matter.
  if (getTrueValue() == getFalseValue() &&
      getTrueValue().getType() == getType())
    return getTrueValue();
  // A uniform condition picks one branch, if that branch needs no
  // broadcasting.
  if (auto cond =
          dyn_cast_if_present<SplatElementsAttr>(adaptor.getCondition())) {
    Value chosen =
        cond.getSplatValue<bool>() ? getTrueValue() : getFalseValue();
    if (chosen.getType() == getType())
      return chosen;
  }
  return foldElementwise(adaptor.getOperands(), getType(),
                         [](ArrayRef<Element> e) -> std::optional<Element> {
                           return e[0].i.getBoolValue() ? e[1] : e[2];
                         });
}

//===----------------------------------------------------------------------===//
// BitCastOp
//===----------------------------------------------------------------------===//

/// Storage width in bits; ONNX stores a bool in one byte.
static unsigned getStorageBits(Type elementType) {
  unsigned bits = elementType.getIntOrFloatBitWidth();
  return bits == 1 ? 8 : bits;
}

LogicalResult BitCastOp::verify() {
  Type from = getElementTypeOrSelf(getInput().getType());
  Type to = getElementTypeOrSelf(getType());
  if (getStorageBits(from) != getStorageBits(to))
    return emitOpError("element types of different widths: ")
           << from << " vs " << to;
  return success();
}

// FLOPs: 0 (no arithmetic).
int64_t BitCastOp::getFlops() { return 0; }

// Bytes: 0: reinterpreting the bits is a view, like a reshape. A bitcast to
// bool from another type tests each byte for non-zero, so it reads and
// writes every element: default (|in| + |out|).
int64_t BitCastOp::getMinBytes() {
  if (getType().getElementType().isInteger(1) &&
      !getInput().getType().getElementType().isInteger(1))
    return sumOperandAndResultBytes(getOperation());
  return 0;
}
