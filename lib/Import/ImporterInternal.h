//===- ImporterInternal.h - ONNX node handler API ---------------*- C++ -*-===//
//
// Private to the importer: what a node handler sees (NodeContext), the table
// handlers are registered in (by op type and the opset they apply from), and
// helpers shared by the per-family handler files Import*.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_IMPORT_IMPORTERINTERNAL_H
#define RIDGELINE_LIB_IMPORT_IMPORTERINTERNAL_H

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Import/TensorProto.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <functional>
#include <optional>

namespace mlir::ridge::onnx_import {

/// Elements an op whose output the importer computes itself (Range, the
/// window functions) may have: the work and the constant grow with the
/// count, whatever --max-tensor-bytes allows.
inline constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

class OnnxImporter;

/// Maps an ONNX element type to the graph dialect's element type; null for
/// types Ridgeline does not support. Signed integers are signless (as in
/// arith); unsigned ones keep their signedness so that lowerings pick
/// unsigned division, comparison and conversion.
Type getElementType(MLIRContext *ctx, int32_t dataType);

/// What a node handler sees: typed access to operands and attributes, and the
/// means to define the node's outputs.
class NodeContext {
public:
  NodeContext(OnnxImporter &importer, const onnx::NodeProto &node,
              int64_t opset, Location loc, OpBuilder &builder)
      : importer(importer), node(node), opset(opset), loc(loc),
        builder(builder) {}

  OnnxImporter &importer;
  const onnx::NodeProto &node;
  /// The model's default-domain opset.
  int64_t opset;
  Location loc;
  OpBuilder &builder;

  unsigned getNumOperands() const { return node.input_size(); }
  unsigned getNumResults() const { return node.output_size(); }
  /// Operand `i`, or null when absent (omitted optional input).
  Value operand(unsigned i) const;
  /// Operand `i` as a constant, if it folds to one.
  DenseElementsAttr constantOperand(unsigned i) const;
  /// Operand `i` as a constant, for operands that decide shapes: a folded
  /// constant, or else the value its graph input is specialized to
  /// (OnnxImportOptions::inputValues).
  DenseElementsAttr shapeOperand(unsigned i) const;
  /// Operand `i` as a list of integers, if it is a constant (or a
  /// specialized graph input, see shapeOperand).
  std::optional<SmallVector<int64_t>> constantInts(unsigned i) const;

  const onnx::AttributeProto *attr(StringRef name) const {
    for (const auto &a : node.attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  int64_t attrInt(StringRef name, int64_t dflt) const {
    const auto *a = attr(name);
    return a ? a->i() : dflt;
  }
  float attrFloat(StringRef name, float dflt) const {
    const auto *a = attr(name);
    return a ? a->f() : dflt;
  }
  std::string attrString(StringRef name, StringRef dflt) const {
    const auto *a = attr(name);
    return a ? a->s() : dflt.str();
  }
  std::optional<SmallVector<int64_t>> attrInts(StringRef name) const {
    const auto *a = attr(name);
    if (!a)
      return std::nullopt;
    return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
  }
  std::optional<SmallVector<float>> attrFloats(StringRef name) const {
    const auto *a = attr(name);
    if (!a)
      return std::nullopt;
    return SmallVector<float>(a->floats().begin(), a->floats().end());
  }

  /// Builds a ridge.constant from decoded tensor data; large tensors become
  /// dense_resource blobs named after `hint`.
  Value createConstant(const TensorData &data, StringRef hint);
  /// Decodes a TensorProto attribute of the node: external data from the
  /// model's folder, within the importer's size limit.
  bool decodeTensor(const onnx::TensorProto &proto, TensorData &data,
                    std::string &error) const;

  void setResult(unsigned i, Value value);
  /// The node's name, or `OpType#index` for unnamed nodes (as in `loc`).
  StringRef getDisplayName() const {
    if (auto nameLoc = dyn_cast<NameLoc>(loc))
      return nameLoc.getName().getValue();
    return node.name();
  }
  InFlightDiagnostic emitError() const {
    return mlir::emitError(loc)
           << "node '" << getDisplayName() << "' (" << node.op_type() << "): ";
  }
};

using NodeHandler = std::function<LogicalResult(NodeContext &)>;

/// Node handlers by ONNX op type. An op may have several handlers, each valid
/// from the opset it names until the next one (attribute-to-input migrations).
class OnnxHandlerTable {
public:
  struct Entry {
    int64_t sinceVersion;
    NodeHandler handler;
  };
  void add(StringRef opType, int64_t sinceVersion, NodeHandler handler) {
    handlers[opType].push_back({sinceVersion, std::move(handler)});
  }
  /// The newest handler not newer than `opset`, or null.
  const Entry *find(StringRef opType, int64_t opset) const;
  /// The oldest opset any handler of `opType` accepts, if there is one.
  std::optional<int64_t> getMinOpset(StringRef opType) const;

private:
  llvm::StringMap<SmallVector<Entry, 2>> handlers;
};

// Per-family registration; each lives in its own Import*.cpp file.
void registerCoreHandlers(OnnxHandlerTable &table);
void registerElementwiseHandlers(OnnxHandlerTable &table);
void registerShapeHandlers(OnnxHandlerTable &table);
void registerReductionHandlers(OnnxHandlerTable &table);
void registerNNHandlers(OnnxHandlerTable &table);
void registerRecurrentHandlers(OnnxHandlerTable &table);
void registerSignalHandlers(OnnxHandlerTable &table);
void registerTransformerHandlers(OnnxHandlerTable &table);

//===----------------------------------------------------------------------===//
// Helpers for handlers
//===----------------------------------------------------------------------===//

/// The ranked tensor type of `v` (every imported value has one).
inline RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Requires operand `i` to be present.
FailureOr<Value> requireOperand(NodeContext &n, unsigned i);

/// `input` reshaped to `shape` (no op when the shape already matches).
Value reshapeTo(NodeContext &n, Value input, ArrayRef<int64_t> shape);

/// Creates a two-operand op whose result type is inferred, reporting
/// incompatible operands at the node instead of building an invalid op.
template <typename OpTy>
FailureOr<Value> createInferred(NodeContext &n, Value lhs, Value rhs) {
  SmallVector<Type> inferred;
  if (failed(OpTy::inferReturnTypes(
          n.builder.getContext(), n.loc,
          typename OpTy::Adaptor(ValueRange{lhs, rhs}), inferred)))
    return failure();
  return n.builder.createOrFold<OpTy>(n.loc, lhs, rhs);
}

} // namespace mlir::ridge::onnx_import

#endif // RIDGELINE_LIB_IMPORT_IMPORTERINTERNAL_H
