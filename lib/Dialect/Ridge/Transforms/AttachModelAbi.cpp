//===- AttachModelAbi.cpp - Describe a model's inputs and outputs ---------===//
//
// This file implements ridge-attach-model-abi, which records the model's C
// interface (include/ridgeline/Runtime/ModelAbi.h) as a typed module
// attribute at graph level. Later stages erase what the runtime needs: the
// LLVM lowering drops argument attributes (ONNX names) and signedness.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "ridgeline/Runtime/ModelAbi.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "ridge-attach-model-abi"

namespace mlir::ridge {
#define GEN_PASS_DEF_ATTACHMODELABIPASS
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

/// The ModelAbi.h element type of `element`, or RIDGE_DTYPE_INVALID.
static ridge_dtype getElementDType(Type element) {
  if (element.isF16())
    return RIDGE_DTYPE_F16;
  if (element.isBF16())
    return RIDGE_DTYPE_BF16;
  if (element.isF32())
    return RIDGE_DTYPE_F32;
  if (element.isF64())
    return RIDGE_DTYPE_F64;
  if (isa<Float8E4M3FNType>(element))
    return RIDGE_DTYPE_F8E4M3FN;
  if (isa<Float8E4M3FNUZType>(element))
    return RIDGE_DTYPE_F8E4M3FNUZ;
  if (isa<Float8E5M2Type>(element))
    return RIDGE_DTYPE_F8E5M2;
  if (isa<Float8E5M2FNUZType>(element))
    return RIDGE_DTYPE_F8E5M2FNUZ;
  auto integer = dyn_cast<IntegerType>(element);
  if (!integer)
    return RIDGE_DTYPE_INVALID;
  bool isUnsigned = integer.isUnsigned();
  switch (integer.getWidth()) {
  case 1:
    return RIDGE_DTYPE_I1;
  case 8:
    return isUnsigned ? RIDGE_DTYPE_U8 : RIDGE_DTYPE_I8;
  case 16:
    return isUnsigned ? RIDGE_DTYPE_U16 : RIDGE_DTYPE_I16;
  case 32:
    return isUnsigned ? RIDGE_DTYPE_U32 : RIDGE_DTYPE_I32;
  case 64:
    return isUnsigned ? RIDGE_DTYPE_U64 : RIDGE_DTYPE_I64;
  default:
    return RIDGE_DTYPE_INVALID;
  }
}

LogicalResult mlir::ridge::attachModelAbi(ModuleOp module, StringRef target) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return module.emitError("the module has no @main function");
  Builder b(module.getContext());

  auto describe = [&](StringRef kind, Type type, DictionaryAttr attrs,
                      unsigned index) -> FailureOr<DictionaryAttr> {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return main.emitError() << kind << " " << index
                              << " must be a static tensor, got " << type;
    ridge_dtype dtype = getElementDType(tensor.getElementType());
    if (dtype == RIDGE_DTYPE_INVALID)
      return main.emitError()
             << kind << " " << index << " has unsupported element type "
             << tensor.getElementType();
    // The name is kept verbatim: the runtime hands it to users, who look
    // tensors up by their ONNX names.
    std::string name;
    if (attrs)
      if (auto onnxName = attrs.getAs<StringAttr>(kOnnxNameAttr))
        name = onnxName.getValue().str();
    if (name.empty())
      name = kind.str() + std::to_string(index);
    if (name.find('\0') != std::string::npos)
      return main.emitError() << kind << " " << index
                              << " has a name with a NUL byte, which a C "
                                 "string cannot hold";
    return b.getDictionaryAttr({
        b.getNamedAttr("name", b.getStringAttr(name)),
        b.getNamedAttr("dtype", b.getI32IntegerAttr(dtype)),
        b.getNamedAttr("shape", b.getDenseI64ArrayAttr(tensor.getShape())),
    });
  };

  SmallVector<Attribute> inputs, outputs;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    FailureOr<DictionaryAttr> desc = describe(
        "input", main.getArgumentTypes()[i], main.getArgAttrDict(i), i);
    if (failed(desc))
      return failure();
    inputs.push_back(*desc);
  }
  for (unsigned i = 0; i < main.getNumResults(); ++i) {
    FailureOr<DictionaryAttr> desc = describe(
        "output", main.getResultTypes()[i], main.getResultAttrDict(i), i);
    if (failed(desc))
      return failure();
    outputs.push_back(*desc);
  }
  module->setAttr(kModelAbiAttr,
                  b.getDictionaryAttr({
                      b.getNamedAttr("target", b.getStringAttr(target)),
                      b.getNamedAttr("inputs", b.getArrayAttr(inputs)),
                      b.getNamedAttr("outputs", b.getArrayAttr(outputs)),
                  }));
  return success();
}

namespace {
struct AttachModelAbiPass
    : ridge::impl::AttachModelAbiPassBase<AttachModelAbiPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(ridge::attachModelAbi(getOperation(), target)))
      signalPassFailure();
  }
};
} // namespace
