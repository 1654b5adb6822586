//===- GraphToLinalgCommon.cpp - shared graph-to-linalg helpers ----------===//

#include "GraphToLinalgCommon.h"

#include "ridgeline/Analysis/PrecisionPolicy.h"
#include "ridgeline/Dialect/Ridge/IR/ConstantElements.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;
using namespace mlir::ridge;

namespace mlir::ridge::linalg_lowering {

/// Element type used while reducing: narrow floats accumulate in f32.
Type getAccumulatorType(Type element) {
  if (element.isF16() || element.isBF16())
    return Float32Type::get(element.getContext());
  return element;
}

Value extendTo(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return arith::ExtFOp::create(b, loc, type, v);
}

Value truncateTo(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return arith::TruncFOp::create(b, loc, type, v);
}

FailureOr<Type> getOperandRoundingType(Operation *op) {
  auto attr = op->getAttrOfType<StringAttr>(kPrecisionAttr);
  if (!attr || attr.getValue() == "fp32")
    return Type();
  MLIRContext *ctx = op->getContext();
  if (attr.getValue() == "bf16")
    return Type(BFloat16Type::get(ctx));
  if (attr.getValue() == "fp16")
    return Type(Float16Type::get(ctx));
  // tf32 rounds a contraction's operands; an attention's kernels (the
  // tensor-core and the SIMT online one) multiply bf16/f16 or f32.
  if (attr.getValue() == "tf32" && !isa<AttentionOp>(op))
    return Type(FloatTF32Type::get(ctx));
  // fp8 only with the per-tensor scales buildFp8Contraction builds.
  if (attr.getValue() == "fp8" && isa<MatMulOp, GemmOp>(op))
    return Type(Float8E4M3FNType::get(ctx));
  if (attr.getValue() == "tf32" || attr.getValue() == "fp8")
    return op->emitOpError()
           << "'" << kPrecisionAttr << "' = \"" << attr.getValue()
           << "\" is not supported by code generation yet ("
           << (isa<AttentionOp>(op) ? "fp32, bf16 or fp16"
               : isa<ConvOp>(op)    ? "fp32, tf32, bf16 or fp16"
                                    : "fp32, tf32, bf16, fp16 or fp8")
           << ")";
  return op->emitOpError() << "unknown '" << kPrecisionAttr << "' \""
                           << attr.getValue()
                           << "\" (expected fp32, tf32, bf16 or fp16)";
}

Value roundThrough(OpBuilder &b, Location loc, Value v, Type narrow) {
  if (!narrow || !v.getType().isF32())
    return v;
  Value rounded = arith::TruncFOp::create(b, loc, narrow, v);
  return arith::ExtFOp::create(b, loc, v.getType(), rounded);
}

std::optional<SmallVector<float>> readF32Constant(Value graphValue) {
  if (!graphValue || !getElementTypeOrSelf(graphValue.getType()).isF32())
    return std::nullopt;
  std::optional<ConstantElementFn> element = getConstantElements(graphValue);
  if (!element)
    return std::nullopt;
  auto type = cast<RankedTensorType>(graphValue.getType());
  SmallVector<float> values(type.getNumElements());
  for (auto [i, value] : llvm::enumerate(values))
    value = static_cast<float>((*element)(i));
  return values;
}

/// The bits of `x` rounded to nearest even in `narrow` (bf16 or f16), as
/// arith.truncf rounds it.
static uint16_t roundToNarrowBits(float x, Type narrow) {
  if (narrow.isBF16() && !std::isnan(x)) {
    // bf16 keeps f32's upper 16 bits: add half a unit of the lower ones,
    // less one when the kept part is even (ties to even); a carry moves
    // into the exponent, up to infinity, as the hardware's rounding does.
    uint32_t bits = llvm::bit_cast<uint32_t>(x);
    return static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
  }
  llvm::APFloat value(x);
  bool lost = false;
  value.convert(cast<FloatType>(narrow).getFloatSemantics(),
                llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint16_t>(value.bitcastToAPInt().getZExtValue());
}

/// An f32's bits rounded to tf32 (kept in f32), as `cvt.rna.tf32.f32` and
/// ridge-expand-tf32-rounding round it: to nearest, ties away from zero (add
/// half of the unit of the 13 dropped bits, clear them; a carry moves into
/// the exponent, past the largest finite value to infinity), NaN kept.
static float roundToTf32(float x) {
  if (std::isnan(x))
    return x;
  uint32_t bits = llvm::bit_cast<uint32_t>(x);
  return llvm::bit_cast<float>((bits + 0x1000u) & ~0x1fffu);
}

/// A constant of `type` holding `elements` as the resource `key` (the
/// weights file stores resources): the resource an earlier conversion made
/// when it holds the same bytes (the bytes are compared, not trusted to the
/// key, which a model's own names could take).
template <typename T>
static Value getWeightConstant(OpBuilder &b, Location loc,
                               RankedTensorType type, const std::string &key,
                               ArrayRef<T> elements) {
  ArrayRef<char> bytes(reinterpret_cast<const char *>(elements.data()),
                       elements.size() * sizeof(T));
  auto &resources =
      DenseResourceElementsHandle::getManagerInterface(b.getContext());
  if (DialectResourceBlobManager::BlobEntry *entry =
          resources.getBlobManager().lookup(key);
      entry && entry->getBlob() && entry->getBlob()->getData() == bytes) {
    DenseResourceElementsHandle handle(
        entry, b.getContext()->getLoadedDialect<BuiltinDialect>());
    return arith::ConstantOp::create(
        b, loc, type, DenseResourceElementsAttr::get(type, handle));
  }
  auto attr = DenseResourceElementsAttr::get(
      type, key, HeapAsmResourceBlob::allocateAndCopyInferAlign(elements));
  return arith::ConstantOp::create(b, loc, type, attr);
}

/// The resource name a weight's stored copy is kept under: the weight's own
/// resource name and `suffix`.
static std::string getWeightKey(Value graphOperand, StringRef suffix) {
  auto source = dyn_cast<DenseResourceElementsAttr>(
      graphOperand.getDefiningOp<ConstantOp>().getValue());
  return (source ? source.getRawHandle().getKey().str() : "weight") +
         suffix.str();
}

Value getStoredOperand(OpBuilder &b, Location loc, Operation *op,
                       Value graphOperand, Value lowered) {
  bool tf32 = isCompileTimeTf32Weight(op, graphOperand);
  Type narrow = getCompileTimeWeightType(op, graphOperand);
  if (!narrow && !tf32)
    return lowered;
  std::optional<SmallVector<float>> values = readF32Constant(graphOperand);
  if (!values)
    return lowered;
  auto shape = getTensorType(lowered).getShape();
  if (tf32) {
    for (float &x : *values)
      x = roundToTf32(x);
    return getWeightConstant(
        b, loc, RankedTensorType::get(shape, b.getF32Type()),
        getWeightKey(graphOperand, ".tf32"), ArrayRef<float>(*values));
  }
  SmallVector<uint16_t> bits(values->size());
  for (auto [x, rounded] : llvm::zip(*values, bits))
    rounded = roundToNarrowBits(x, narrow);
  // Another contraction (or kernel) that reads this weight narrowed it
  // already: one copy in the weights file.
  return getWeightConstant(
      b, loc, RankedTensorType::get(shape, narrow),
      getWeightKey(graphOperand, narrow.isBF16() ? ".bf16" : ".f16"),
      ArrayRef<uint16_t>(bits));
}

Value getKMajorTf32Weight(OpBuilder &b, Location loc, Operation *op,
                          Value graphOperand) {
  auto type = dyn_cast<RankedTensorType>(graphOperand.getType());
  if (!type || type.getRank() < 2 || !isCompileTimeTf32Weight(op, graphOperand))
    return Value();
  std::optional<SmallVector<float>> values = readF32Constant(graphOperand);
  if (!values)
    return Value();
  // [batch..., K, N] -> [batch..., N, K], each element rounded.
  SmallVector<int64_t> shape(type.getShape());
  int64_t rows = shape[shape.size() - 2], columns = shape.back();
  int64_t matrices =
      type.getNumElements() / std::max<int64_t>(rows * columns, 1);
  SmallVector<float> transposed(values->size());
  for (int64_t matrix = 0; matrix < matrices; ++matrix)
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t column = 0; column < columns; ++column)
        transposed[(matrix * columns + column) * rows + row] =
            roundToTf32((*values)[(matrix * rows + row) * columns + column]);
  std::swap(shape[shape.size() - 2], shape.back());
  return getWeightConstant(b, loc, RankedTensorType::get(shape, b.getF32Type()),
                           getWeightKey(graphOperand, ".tf32.nk"),
                           ArrayRef<float>(transposed));
}

/// Indexing map reading `operandType` broadcast (numpy rules) into an
/// iteration space of `resultRank` parallel dims.
AffineMap getBroadcastMap(RankedTensorType operandType,
                          ArrayRef<int64_t> resultShape, MLIRContext *ctx) {
  int64_t resultRank = resultShape.size();
  int64_t offset = resultRank - operandType.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < operandType.getRank(); ++i) {
    int64_t dim = operandType.getDimSize(i);
    if (dim == 1 && resultShape[i + offset] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(i + offset, ctx));
  }
  return AffineMap::get(resultRank, 0, exprs, ctx);
}

Value createEmpty(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value createFilled(OpBuilder &b, Location loc, RankedTensorType type,
                   TypedAttr value) {
  Value empty = createEmpty(b, loc, type);
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

/// Elementwise linalg.generic over `inputs` broadcast to `resultType`.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ScalarBuilder scalar) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(getBroadcastMap(cast<RankedTensorType>(input.getType()),
                                   resultType.getShape(), ctx));
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, createEmpty(b, loc, resultType), maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result = scalar(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, result);
      });
  return generic.getResult(0);
}

/// Evaluates `body` in f32 for f16/bf16 operands and converts back.
Value computeInAccumulatorType(OpBuilder &b, Location loc, ValueRange args,
                               function_ref<Value(ValueRange)> body) {
  Type element = args.front().getType();
  Type acc = getAccumulatorType(element);
  SmallVector<Value> widened;
  for (Value v : args)
    widened.push_back(extendTo(b, loc, v, acc));
  return truncateTo(b, loc, body(widened), element);
}

} // namespace mlir::ridge::linalg_lowering
