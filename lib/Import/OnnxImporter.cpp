//===- OnnxImporter.cpp - ONNX model -> ridge graph dialect ---------------===//
//
// The importer works in three phases so that one run reports every problem:
//   1. load and validate the protobuf (file errors, graph structure: dangling
//      values, cycles, unsupported ops, missing input shapes);
//   2. order the nodes topologically;
//   3. translate each node with a handler chosen by (op type, opset); a node
//      without a handler whose op ONNX defines as a function (e.g. Celu,
//      GreaterOrEqual, MeanVarianceNormalization) is replaced by the
//      function's body, which is imported node by node in its place.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Import/OnnxImporter.h"

#include "ImporterInternal.h"

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Import/TensorProto.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/defs/function.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include <google/protobuf/io/coded_stream.h>

#include <deque>
#include <functional>
#include <limits>
#include <optional>

#define DEBUG_TYPE "ridge-onnx-import"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

FailureOr<SmallVector<int64_t>> mlir::ridge::parseShapeString(StringRef text) {
  SmallVector<int64_t> dims;
  text = text.trim();
  if (text == "scalar")
    return dims;
  SmallVector<StringRef> parts;
  text.split(parts, 'x');
  for (StringRef part : parts) {
    int64_t dim;
    if (part.getAsInteger(10, dim) || dim < 0)
      return failure();
    dims.push_back(dim);
  }
  return dims;
}

/// Parses `bytes` as a ModelProto; `path` names the model in errors.
static bool parseModelBytes(StringRef bytes, StringRef path,
                            onnx::ModelProto &model, std::string &error) {
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
    error = "'" + path.str() +
            "' is not a valid ONNX model: larger than protobuf's 2 GiB limit";
    return false;
  }
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(bytes.data()),
      static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(INT32_MAX);
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
    error = "'" + path.str() +
            "' is not a valid ONNX model: the protobuf does not parse (not an "
            "ONNX file, or truncated)";
    return false;
  }
  if (!model.has_graph() ||
      (model.graph().node_size() == 0 && model.graph().output_size() == 0)) {
    error = "'" + path.str() + "' is not a valid ONNX model: it has no graph";
    return false;
  }
  return true;
}

/// Reads and parses the ModelProto at `path`. `opened` tells whether the file
/// could be read at all, for callers that place the error differently.
static bool parseModelFile(StringRef path, onnx::ModelProto &model,
                           bool &opened, std::string &error) {
  opened = false;
  if (!llvm::sys::fs::exists(path)) {
    error = "cannot open '" + path.str() + "': no such file";
    return false;
  }
  if (llvm::sys::fs::is_directory(path)) {
    error = "cannot open '" + path.str() + "': it is a directory";
    return false;
  }
  // A device (/dev/zero) would be read forever; a pipe (`<(...)`) ends.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file &&
      status.type() != llvm::sys::fs::file_type::fifo_file) {
    error = "cannot open '" + path.str() + "': it is not a regular file";
    return false;
  }
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot open '" + path.str() + "': " + buffer.getError().message();
    return false;
  }
  opened = true;
  return parseModelBytes((*buffer)->getBuffer(), path, model, error);
}

std::string mlir::ridge::getOnnxOutOfScopeReason(StringRef domain,
                                                 StringRef opType) {
  if (!domain.empty() && domain != "ai.onnx")
    return ("ops of domain '" + domain + "' are outside Ridgeline's scope")
        .str();
  static const llvm::StringMap<StringRef> kReasons = [] {
    llvm::StringMap<StringRef> reasons;
    auto add = [&](std::initializer_list<StringRef> ops, StringRef why) {
      for (StringRef op : ops)
        reasons[op] = why;
    };
    add({"Loop", "Scan", "If"}, "control flow");
    add({"SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase",
         "SequenceInsert", "SequenceLength", "SequenceMap", "SplitToSequence",
         "ConcatFromSequence"},
        "a sequence op");
    add({"Optional", "OptionalGetElement", "OptionalHasElement"},
        "an optional op");
    add({"RandomNormal", "RandomNormalLike", "RandomUniform",
         "RandomUniformLike", "Multinomial", "Bernoulli"},
        "a random op");
    add({"StringNormalizer", "TfIdfVectorizer", "RegexFullMatch",
         "StringConcat", "StringSplit"},
        "a string op");
    // The loss ops (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss) are
    // standard ops that inference runtimes run; they import through their
    // function bodies.
    add({"Adagrad", "Adam", "Momentum", "Gradient"}, "a training op");
    return reasons;
  }();
  auto it = kReasons.find(opType);
  if (it == kReasons.end())
    return "";
  return ("'" + opType + "' is " + it->second + ", outside Ridgeline's scope")
      .str();
}

/// getOnnxOutOfScopeReason for one node: also the training forms of ops
/// that are in scope for inference (Dropout with a training_mode input,
/// BatchNormalization with training_mode = 1).
static std::string getNodeOutOfScopeReason(const onnx::NodeProto &node) {
  std::string reason =
      mlir::ridge::getOnnxOutOfScopeReason(node.domain(), node.op_type());
  if (!reason.empty())
    return reason;
  if (node.op_type() == "Dropout" && node.input_size() > 2 &&
      !node.input(2).empty())
    return "Dropout with a training_mode input draws random masks, outside "
           "Ridgeline's scope";
  if (node.op_type() == "BatchNormalization")
    for (const auto &attr : node.attribute())
      if (attr.name() == "training_mode" && attr.i() != 0)
        return "BatchNormalization with training_mode = 1 updates running "
               "statistics (a training op), outside Ridgeline's scope";
  return "";
}

/// Element types Ridgeline compiles at graph boundaries.
static bool isSupportedIoElementType(int32_t dataType) {
  switch (static_cast<OnnxDataType>(dataType)) {
  case OnnxDataType::Float:
  case OnnxDataType::Double:
  case OnnxDataType::Float16:
  case OnnxDataType::BFloat16:
  case OnnxDataType::Float8E4M3FN:
  case OnnxDataType::Float8E4M3FNUZ:
  case OnnxDataType::Float8E5M2:
  case OnnxDataType::Float8E5M2FNUZ:
  case OnnxDataType::Bool:
  case OnnxDataType::Int8:
  case OnnxDataType::Int16:
  case OnnxDataType::Int32:
  case OnnxDataType::Int64:
  case OnnxDataType::UInt8:
  case OnnxDataType::UInt16:
  case OnnxDataType::UInt32:
  case OnnxDataType::UInt64:
    return true;
  default:
    return false;
  }
}

bool mlir::ridge::describeOnnxModel(StringRef path, OnnxModelSummary &summary,
                                    std::string &error) {
  onnx::ModelProto model;
  bool opened;
  if (!parseModelFile(path, model, opened, error))
    return false;
  for (const auto &opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      summary.opset = opset.version();
  const onnx::GraphProto &graph = model.graph();
  llvm::StringSet<> seen;
  for (const auto &node : graph.node()) {
    std::string name = node.domain().empty() || node.domain() == "ai.onnx"
                           ? node.op_type()
                           : node.domain() + ":" + node.op_type();
    if (seen.insert(name).second)
      summary.opTypes.push_back(name);
    if (summary.outOfScopeReason.empty())
      summary.outOfScopeReason = getNodeOutOfScopeReason(node);
  }
  auto checkIo = [&](const onnx::ValueInfoProto &info, StringRef kind) {
    if (!summary.outOfScopeReason.empty())
      return;
    if (!info.type().has_tensor_type()) {
      summary.outOfScopeReason =
          ("graph " + kind + " '" + info.name() +
           "' is not a tensor (sequences, maps and optionals are outside "
           "Ridgeline's scope)")
              .str();
      return;
    }
    int32_t elemType = info.type().tensor_type().elem_type();
    if (!isSupportedIoElementType(elemType))
      summary.outOfScopeReason =
          ("graph " + kind + " '" + info.name() + "' has element type " +
           getOnnxDataTypeName(elemType) + ", outside Ridgeline's scope")
              .str();
  };
  for (const auto &input : graph.input())
    checkIo(input, "input");
  for (const auto &output : graph.output())
    checkIo(output, "output");
  return true;
}

void mlir::ridge::registerOnnxImportDialects(DialectRegistry &registry) {
  registry.insert<RidgeDialect, func::FuncDialect>();
}

Type mlir::ridge::onnx_import::getElementType(MLIRContext *ctx,
                                              int32_t dataType) {
  Builder b(ctx);
  switch (static_cast<OnnxDataType>(dataType)) {
  case OnnxDataType::Float:
    return b.getF32Type();
  case OnnxDataType::Double:
    return b.getF64Type();
  case OnnxDataType::Float16:
    return b.getF16Type();
  case OnnxDataType::BFloat16:
    return b.getBF16Type();
  case OnnxDataType::Float8E4M3FN:
    return Float8E4M3FNType::get(ctx);
  case OnnxDataType::Float8E4M3FNUZ:
    return Float8E4M3FNUZType::get(ctx);
  case OnnxDataType::Float8E5M2:
    return Float8E5M2Type::get(ctx);
  case OnnxDataType::Float8E5M2FNUZ:
    return Float8E5M2FNUZType::get(ctx);
  case OnnxDataType::Bool:
    return b.getI1Type();
  case OnnxDataType::Int8:
    return b.getI8Type();
  case OnnxDataType::Int16:
    return b.getI16Type();
  case OnnxDataType::Int32:
    return b.getI32Type();
  case OnnxDataType::Int64:
    return b.getI64Type();
  case OnnxDataType::UInt8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case OnnxDataType::UInt16:
    return b.getIntegerType(16, /*isSigned=*/false);
  case OnnxDataType::UInt32:
    return b.getIntegerType(32, /*isSigned=*/false);
  case OnnxDataType::UInt64:
    return b.getIntegerType(64, /*isSigned=*/false);
  default:
    return {};
  }
}

namespace mlir::ridge::onnx_import {

class OnnxImporter {
public:
  /// Imports the model at `path`, or, given `contents`, the model those
  /// bytes hold as if read from `path`.
  OnnxImporter(MLIRContext *ctx, StringRef path,
               const OnnxImportOptions &options,
               std::optional<StringRef> contents = std::nullopt)
      : ctx(ctx), path(path), modelDir(llvm::sys::path::parent_path(path)),
        contents(contents), options(options), builder(ctx) {
    if (modelDir.empty())
      modelDir = ".";
    registerHandlers();
  }

  OwningOpRef<ModuleOp> run();

  Value lookup(StringRef name) const { return values.lookup(name); }
  /// The value graph input `name` is specialized to, if it has one and is
  /// still bound to its function argument.
  DenseElementsAttr getSpecializedValue(StringRef name) const;
  /// `value` as a constant: a folded one, a specialized graph input, or the
  /// fold of a single-result op whose operands all are such values, up to
  /// `depth` ops deep. This sees through shape arithmetic on specialized
  /// inputs, e.g. the Cast(size) feeding Range in the expanded window
  /// functions.
  DenseElementsAttr evaluateSpecialized(Value value, unsigned depth) const;
  void define(StringRef name, Value value) { values[name] = value; }
  Location fileLoc() const { return FileLineColLoc::get(ctx, path, 0, 0); }
  Location nodeLoc(const onnx::NodeProto &node, unsigned index) const {
    std::string name = node.name().empty()
                           ? node.op_type() + "#" + std::to_string(index)
                           : node.name();
    return getOnnxNodeLoc(ctx, name, node.op_type(), fileLoc());
  }
  /// Builds a ridge.constant from decoded data; large tensors become
  /// dense_resource blobs.
  Value createConstant(Location loc, const TensorData &data, StringRef hint);
  /// Decodes a TensorProto of the model (an initializer, a Constant's value):
  /// external data from the model's folder, within the size limit.
  bool decodeTensor(const onnx::TensorProto &proto, TensorData &data,
                    std::string &error) const {
    if (proto.data_location() == onnx::TensorProto::EXTERNAL)
      readExternalData = true;
    return decodeTensorProto(proto, modelDir, data, error,
                             options.maxTensorBytes);
  }
  /// Fails, naming the node, when it has more or fewer inputs or outputs
  /// than its ONNX schema allows at `opset`.
  LogicalResult checkArity(NodeContext &context, int64_t opset) const;
  /// Why a value of `type` is too big, or empty (describeOversizedTensor).
  std::string describeOversized(RankedTensorType type) const;
  ElementsAttr createElementsAttr(RankedTensorType type,
                                  const std::vector<char> &bytes,
                                  StringRef hint);

private:
  void registerHandlers();
  const OnnxHandlerTable::Entry *findHandler(const onnx::NodeProto &node,
                                             int64_t opset) const;
  const OnnxHandlerTable::Entry *
  findHandler(const onnx::NodeProto &node) const {
    return findHandler(node, defaultOpset);
  }
  /// The schema of `node` at `opset` when ONNX defines the op as a function
  /// of other ops (statically or depending on input types), else null.
  const onnx::OpSchema *findFunctionSchema(const onnx::NodeProto &node,
                                           int64_t opset) const;
  /// Imports one node: with its handler, or else by expanding the ONNX
  /// function that defines it and importing the body's nodes in its place.
  LogicalResult importNode(const onnx::NodeProto &node, int64_t opset,
                           Location loc, unsigned depth);
  LogicalResult expandFunction(const onnx::NodeProto &node,
                               const onnx::OpSchema &schema, int64_t opset,
                               Location loc, unsigned depth);
  bool isDefaultDomain(StringRef domain) const {
    return domain.empty() || domain == "ai.onnx";
  }
  FailureOr<RankedTensorType>
  getValueType(const onnx::ValueInfoProto &info,
               SmallVectorImpl<std::string> &needShape);
  /// Binds the symbolic dims (dim_param) of inputs given a shape, so that
  /// other inputs naming the same symbols need none; inconsistent bindings
  /// are errors.
  LogicalResult bindSymbolicDims(const onnx::GraphProto &graph,
                                 const llvm::StringSet<> &initializerNames);
  /// Marks every output of `node` as poisoned, dropping the ones it did
  /// define before it failed.
  void poisonOutputs(const onnx::NodeProto &node, llvm::StringSet<> &poisoned) {
    for (const std::string &out : node.output()) {
      if (out.empty())
        continue;
      values.erase(out);
      poisoned.insert(out);
    }
  }
  LogicalResult loadModel(onnx::ModelProto &model);
  LogicalResult sortNodes(const onnx::GraphProto &graph,
                          SmallVectorImpl<int> &order);

  MLIRContext *ctx;
  std::string path;
  std::string modelDir;
  std::optional<StringRef> contents;
  /// Whether any tensor came from external data (kExternalDataAttr).
  mutable bool readExternalData = false;
  const OnnxImportOptions &options;
  OpBuilder builder;
  int64_t defaultOpset = 1;
  llvm::StringMap<Value> values;
  /// Values of symbolic input dims, from the input shapes given.
  llvm::StringMap<int64_t> symbolicDims;
  OnnxHandlerTable handlers;
};

Value NodeContext::operand(unsigned i) const {
  if (i >= static_cast<unsigned>(node.input_size()) || node.input(i).empty())
    return nullptr;
  return importer.lookup(node.input(i));
}

DenseElementsAttr NodeContext::constantOperand(unsigned i) const {
  Value v = operand(i);
  DenseElementsAttr attr;
  if (v && matchPattern(v, m_Constant(&attr)))
    return attr;
  return nullptr;
}

DenseElementsAttr OnnxImporter::getSpecializedValue(StringRef name) const {
  auto it = options.inputValues.find(name);
  Value value = lookup(name);
  if (it == options.inputValues.end() || !value || !isa<BlockArgument>(value))
    return nullptr;
  const TensorData &data = it->second;
  auto type = dyn_cast<RankedTensorType>(value.getType());
  Type elementType = getElementType(ctx, data.dataType);
  if (!type || type.getElementType() != elementType ||
      type.getShape() != ArrayRef<int64_t>(data.dims))
    return nullptr;
  if (elementType.isInteger(1)) {
    SmallVector<bool> bits;
    for (char c : data.bytes)
      bits.push_back(c != 0);
    return DenseElementsAttr::get(type, bits);
  }
  ArrayRef<char> raw(data.bytes.data(), data.bytes.size());
  bool detectedSplat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, raw, detectedSplat))
    return nullptr;
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}

DenseElementsAttr OnnxImporter::evaluateSpecialized(Value value,
                                                    unsigned depth) const {
  DenseElementsAttr attr;
  if (!value || matchPattern(value, m_Constant(&attr)))
    return attr;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!func)
      return nullptr;
    auto name =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kOnnxNameAttr);
    return name ? getSpecializedValue(name.getValue()) : nullptr;
  }
  Operation *op = value.getDefiningOp();
  if (!op || depth == 0 || op->getNumRegions() != 0 || op->getNumResults() != 1)
    return nullptr;
  SmallVector<Attribute> operands;
  for (Value operand : op->getOperands()) {
    DenseElementsAttr operandValue = evaluateSpecialized(operand, depth - 1);
    if (!operandValue)
      return nullptr;
    operands.push_back(operandValue);
  }
  SmallVector<OpFoldResult> folded;
  if (failed(op->fold(operands, folded)) || folded.size() != 1)
    return nullptr;
  if (auto result = dyn_cast<Attribute>(folded.front()))
    return dyn_cast<DenseElementsAttr>(result);
  Value forwarded = cast<Value>(folded.front());
  return forwarded == value ? nullptr
                            : evaluateSpecialized(forwarded, depth - 1);
}

DenseElementsAttr NodeContext::shapeOperand(unsigned i) const {
  if (DenseElementsAttr attr = constantOperand(i))
    return attr;
  if (i >= static_cast<unsigned>(node.input_size()) || node.input(i).empty())
    return nullptr;
  // Deep enough for the shape arithmetic of function expansions (e.g.
  // CenterCropPad: Shape, Sub, Div, Concat on a specialized input).
  constexpr unsigned kMaxEvaluationDepth = 8;
  return importer.evaluateSpecialized(operand(i), kMaxEvaluationDepth);
}

std::optional<SmallVector<int64_t>>
NodeContext::constantInts(unsigned i) const {
  DenseElementsAttr attr = shapeOperand(i);
  if (!attr || !isa<IntegerType>(attr.getElementType()))
    return std::nullopt;
  SmallVector<int64_t> values;
  for (APInt v : attr.getValues<APInt>())
    values.push_back(attr.getElementType().isUnsignedInteger()
                         ? static_cast<int64_t>(v.getZExtValue())
                         : v.getSExtValue());
  return values;
}

bool NodeContext::decodeTensor(const onnx::TensorProto &proto, TensorData &data,
                               std::string &error) const {
  return importer.decodeTensor(proto, data, error);
}

Value NodeContext::createConstant(const TensorData &data, StringRef hint) {
  return importer.createConstant(loc, data, hint);
}

void NodeContext::setResult(unsigned i, Value value) {
  if (i < static_cast<unsigned>(node.output_size()) && !node.output(i).empty())
    importer.define(node.output(i), value);
}

ElementsAttr OnnxImporter::createElementsAttr(RankedTensorType type,
                                              const std::vector<char> &bytes,
                                              StringRef hint) {
  Type elementType = type.getElementType();
  if (elementType.isInteger(1)) {
    SmallVector<bool> bits(bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i)
      bits[i] = bytes[i] != 0;
    return DenseElementsAttr::get(type, bits);
  }
  if (type.getNumElements() <= options.inlineConstantLimit) {
    bool detectedSplat = false;
    ArrayRef<char> raw(bytes.data(), bytes.size());
    if (DenseElementsAttr::isValidRawBuffer(type, raw, detectedSplat))
      return DenseElementsAttr::getFromRawBuffer(type, raw);
  }
  // Keep weights out of the IR text: a blob named after the initializer.
  std::string name = hint.empty() ? "constant" : hint.str();
  for (char &c : name)
    if (!llvm::isAlnum(c) && c != '_' && c != '.')
      c = '_';
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(bytes.data(), bytes.size()), alignof(uint64_t));
  return DenseResourceElementsAttr::get(type, name, std::move(blob));
}

Value OnnxImporter::createConstant(Location loc, const TensorData &data,
                                   StringRef hint) {
  Type elementType = getElementType(ctx, data.dataType);
  auto type = RankedTensorType::get(data.dims, elementType);
  return ConstantOp::create(builder, loc,
                            createElementsAttr(type, data.bytes, hint));
}

const OnnxHandlerTable::Entry *OnnxHandlerTable::find(StringRef opType,
                                                      int64_t opset) const {
  auto it = handlers.find(opType);
  if (it == handlers.end())
    return nullptr;
  const Entry *best = nullptr;
  for (const Entry &entry : it->second)
    if (entry.sinceVersion <= opset &&
        (!best || entry.sinceVersion > best->sinceVersion))
      best = &entry;
  return best;
}

std::optional<int64_t> OnnxHandlerTable::getMinOpset(StringRef opType) const {
  auto it = handlers.find(opType);
  if (it == handlers.end())
    return std::nullopt;
  int64_t minOpset = INT64_MAX;
  for (const Entry &entry : it->second)
    minOpset = std::min(minOpset, entry.sinceVersion);
  return minOpset;
}

const OnnxHandlerTable::Entry *
OnnxImporter::findHandler(const onnx::NodeProto &node, int64_t opset) const {
  if (!isDefaultDomain(node.domain()))
    return nullptr;
  return handlers.find(node.op_type(), opset);
}

const onnx::OpSchema *
OnnxImporter::findFunctionSchema(const onnx::NodeProto &node,
                                 int64_t opset) const {
  // Out-of-scope ops stay unsupported even when ONNX defines them as
  // functions (Bernoulli's body draws random numbers).
  if (!isDefaultDomain(node.domain()) || !getNodeOutOfScopeReason(node).empty())
    return nullptr;
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(opset), "");
  if (!schema || schema->Deprecated() ||
      (!schema->HasFunction() && !schema->HasContextDependentFunction()))
    return nullptr;
  return schema;
}

/// The ONNX TypeProto of a tensor type, for context-dependent function
/// builders (they pick casts and constants by input element type).
static onnx::TypeProto getOnnxTypeProto(Type type) {
  onnx::TypeProto proto;
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return proto;
  auto *tensor = proto.mutable_tensor_type();
  Type element = tensorType.getElementType();
  OnnxDataType dataType = OnnxDataType::Undefined;
  if (element.isF32())
    dataType = OnnxDataType::Float;
  else if (element.isF64())
    dataType = OnnxDataType::Double;
  else if (element.isF16())
    dataType = OnnxDataType::Float16;
  else if (element.isBF16())
    dataType = OnnxDataType::BFloat16;
  else if (element.isInteger(1))
    dataType = OnnxDataType::Bool;
  else if (auto intType = dyn_cast<IntegerType>(element)) {
    bool isUnsigned = intType.isUnsigned();
    switch (intType.getWidth()) {
    case 8:
      dataType = isUnsigned ? OnnxDataType::UInt8 : OnnxDataType::Int8;
      break;
    case 16:
      dataType = isUnsigned ? OnnxDataType::UInt16 : OnnxDataType::Int16;
      break;
    case 32:
      dataType = isUnsigned ? OnnxDataType::UInt32 : OnnxDataType::Int32;
      break;
    case 64:
      dataType = isUnsigned ? OnnxDataType::UInt64 : OnnxDataType::Int64;
      break;
    }
  }
  tensor->set_elem_type(static_cast<int32_t>(dataType));
  auto *shape = tensor->mutable_shape();
  for (int64_t dim : tensorType.getShape()) {
    auto *d = shape->add_dim();
    if (!ShapedType::isDynamic(dim))
      d->set_dim_value(dim);
  }
  return proto;
}

LogicalResult OnnxImporter::importNode(const onnx::NodeProto &node,
                                       int64_t opset, Location loc,
                                       unsigned depth) {
  NodeContext context(*this, node, opset, loc, builder);
  LLVM_DEBUG(llvm::dbgs() << "importing " << node.op_type() << " '"
                          << context.getDisplayName() << "' at opset " << opset
                          << "\n");
  if (failed(checkArity(context, opset)))
    return failure();
  if (const OnnxHandlerTable::Entry *entry = findHandler(node, opset)) {
    if (failed(entry->handler(context)))
      return failure();
  } else if (const onnx::OpSchema *schema = findFunctionSchema(node, opset)) {
    if (failed(expandFunction(node, *schema, opset, loc, depth)))
      return failure();
  } else {
    return context.emitError()
           << "unsupported op '" << node.op_type() << "' at opset " << opset;
  }
  bool ok = true;
  for (const std::string &out : node.output()) {
    if (out.empty())
      continue;
    Value value = lookup(out);
    if (!value) {
      context.emitError() << "output '" << out << "' was not produced";
      ok = false;
      continue;
    }
    // Checked here, on every result, so that no shape that wraps around or
    // exceeds the limit reaches the lowering (where it would surface as an
    // anonymous buffer).
    auto type = dyn_cast<RankedTensorType>(value.getType());
    std::string oversized = type ? describeOversized(type) : "";
    if (!oversized.empty()) {
      context.emitError() << "output '" << out << "' " << oversized;
      ok = false;
    }
  }
  return success(ok);
}

LogicalResult OnnxImporter::checkArity(NodeContext &context,
                                       int64_t opset) const {
  const onnx::NodeProto &node = context.node;
  if (!isDefaultDomain(node.domain()))
    return success();
  // Only where the linked ONNX library knows the model's opset: for a newer
  // one its latest schema may predate an added input (ReduceMean-18's axes).
  static const int knownOpset =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance()
          .Map()
          .at(onnx::ONNX_DOMAIN)
          .second;
  if (opset > knownOpset)
    return success();
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(opset), "");
  if (!schema)
    return success();
  // Trailing empty names are optional inputs or outputs left out.
  auto count = [](const auto &names) {
    int n = names.size();
    while (n > 0 && names[n - 1].empty())
      --n;
    return n;
  };
  auto range = [](int min, int max, StringRef what) {
    std::string text = max == std::numeric_limits<int>::max()
                           ? "at least " + std::to_string(min)
                       : min == max
                           ? std::to_string(min)
                           : std::to_string(min) + " to " + std::to_string(max);
    return text + " " + what.str() + (max == 1 ? "" : "s");
  };
  int inputs = count(node.input()), outputs = count(node.output());
  if (inputs < schema->min_input() || inputs > schema->max_input())
    return context.emitError()
           << node.op_type() << "-" << schema->SinceVersion() << " takes "
           << range(schema->min_input(), schema->max_input(), "input")
           << ", the node has " << inputs;
  if (outputs < schema->min_output() || outputs > schema->max_output())
    return context.emitError()
           << node.op_type() << "-" << schema->SinceVersion() << " has "
           << range(schema->min_output(), schema->max_output(), "output")
           << ", the node names " << outputs;
  return success();
}

std::string OnnxImporter::describeOversized(RankedTensorType type) const {
  if (!type.hasStaticShape())
    return "";
  Type element = type.getElementType();
  // i1 takes a byte, as in the model ABI.
  int64_t bytes = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  std::string name;
  llvm::raw_string_ostream os(name);
  os << element;
  return describeOversizedTensor(type.getShape(), bytes, name,
                                 options.maxTensorBytes);
}

LogicalResult OnnxImporter::expandFunction(const onnx::NodeProto &node,
                                           const onnx::OpSchema &schema,
                                           int64_t opset, Location loc,
                                           unsigned depth) {
  NodeContext context(*this, node, opset, loc, builder);
  // Function bodies may use other functions, but never recursively.
  if (depth > 16)
    return context.emitError() << "function expansion nested too deeply";
  onnx::FunctionProto function;
  if (schema.HasContextDependentFunction()) {
    std::vector<onnx::TypeProto> inputTypes;
    for (int i = 0; i < node.input_size(); ++i) {
      Value v = context.operand(i);
      inputTypes.push_back(v ? getOnnxTypeProto(v.getType())
                             : onnx::TypeProto());
    }
    onnx::FunctionBodyBuildContextImpl buildContext(node, inputTypes);
    if (!schema.BuildContextDependentFunction(buildContext, function))
      return context.emitError()
             << "ONNX could not build the function body of this node for "
                "its input types";
  } else {
    function = *schema.GetFunction();
  }
  LLVM_DEBUG(llvm::dbgs() << "expanding " << node.op_type() << " into "
                          << function.node_size() << " nodes\n");

  // The body's ops are versioned by the function's own opset import.
  int64_t bodyOpset = opset;
  for (const auto &import : function.opset_import())
    if (isDefaultDomain(import.domain()))
      bodyOpset = import.version();

  // Formal parameters bind to the node's actual names; the body's own values
  // get names no graph value can have.
  std::string display = context.getDisplayName().str();
  llvm::StringMap<std::string> rename;
  for (int i = 0; i < function.input_size(); ++i)
    rename[function.input(i)] = i < node.input_size() ? node.input(i) : "";
  for (int i = 0; i < function.output_size(); ++i)
    rename[function.output(i)] = i < node.output_size() ? node.output(i) : "";
  auto mapName = [&](const std::string &name) -> std::string {
    if (name.empty())
      return name;
    auto it = rename.find(name);
    if (it != rename.end())
      return it->second;
    return display + "::" + name;
  };

  // Attribute references resolve to the node's attributes, then to the
  // schema's defaults; unresolved ones are dropped (optional attributes).
  auto resolveAttribute =
      [&](const onnx::AttributeProto &ref) -> const onnx::AttributeProto * {
    if (const onnx::AttributeProto *given = context.attr(ref.ref_attr_name()))
      return given;
    auto it = schema.attributes().find(ref.ref_attr_name());
    if (it != schema.attributes().end() &&
        it->second.default_value.type() != onnx::AttributeProto::UNDEFINED)
      return &it->second.default_value;
    return nullptr;
  };

  for (auto [k, bodyNode] : llvm::enumerate(function.node())) {
    onnx::NodeProto inlined = bodyNode;
    inlined.set_name(display + "/" + bodyNode.op_type() + "#" +
                     std::to_string(k));
    for (int i = 0; i < inlined.input_size(); ++i)
      inlined.set_input(i, mapName(bodyNode.input(i)));
    for (int i = 0; i < inlined.output_size(); ++i)
      inlined.set_output(i, mapName(bodyNode.output(i)));
    inlined.clear_attribute();
    for (const auto &attribute : bodyNode.attribute()) {
      if (attribute.ref_attr_name().empty()) {
        *inlined.add_attribute() = attribute;
        continue;
      }
      if (const onnx::AttributeProto *value = resolveAttribute(attribute)) {
        onnx::AttributeProto *copy = inlined.add_attribute();
        *copy = *value;
        copy->set_name(attribute.name());
      }
    }
    // An output the node does not use still needs a name inside the body.
    for (int i = 0; i < inlined.output_size(); ++i)
      if (inlined.output(i).empty() && !bodyNode.output(i).empty())
        inlined.set_output(i, display + "::unused::" + bodyNode.output(i));
    Location bodyLoc =
        getOnnxNodeLoc(ctx, inlined.name(), inlined.op_type(), fileLoc());
    if (failed(importNode(inlined, bodyOpset, bodyLoc, depth + 1)))
      return failure();
  }
  return success();
}

void OnnxImporter::registerHandlers() {
  registerCoreHandlers(handlers);
  registerElementwiseHandlers(handlers);
  registerShapeHandlers(handlers);
  registerReductionHandlers(handlers);
  registerNNHandlers(handlers);
  registerRecurrentHandlers(handlers);
  registerSignalHandlers(handlers);
  registerTransformerHandlers(handlers);
}

FailureOr<RankedTensorType>
OnnxImporter::getValueType(const onnx::ValueInfoProto &info,
                           SmallVectorImpl<std::string> &needShape) {
  if (!info.type().has_tensor_type()) {
    mlir::emitError(fileLoc())
        << "graph input '" << info.name() << "' is not a tensor";
    return failure();
  }
  const auto &tensorType = info.type().tensor_type();
  Type elementType = getElementType(ctx, tensorType.elem_type());
  if (!elementType) {
    mlir::emitError(fileLoc())
        << "graph input '" << info.name() << "' has unsupported element type "
        << getOnnxDataTypeName(tensorType.elem_type());
    return failure();
  }
  SmallVector<int64_t> dims;
  bool dynamic = !tensorType.has_shape();
  for (const auto &dim : tensorType.shape().dim()) {
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      dims.push_back(dim.dim_value());
    } else {
      dims.push_back(ShapedType::kDynamic);
      dynamic = true;
    }
  }
  auto it = options.inputShapes.find(info.name());
  if (it != options.inputShapes.end()) {
    ArrayRef<int64_t> given = it->second;
    if (tensorType.has_shape() && given.size() != dims.size()) {
      mlir::emitError(fileLoc())
          << "the shape given for input '" << info.name() << "' has rank "
          << given.size() << ", the model declares rank " << dims.size();
      return failure();
    }
    for (auto [i, d] : llvm::enumerate(dims)) {
      if (tensorType.has_shape() && !ShapedType::isDynamic(d) &&
          d != given[i]) {
        mlir::emitError(fileLoc())
            << "the shape given for input '" << info.name() << "' sets dim "
            << i << " to " << given[i] << ", the model fixes it to " << d;
        return failure();
      }
    }
    return RankedTensorType::get(given, elementType);
  }
  if (dynamic) {
    std::string dimsText;
    if (!tensorType.has_shape()) {
      dimsText = "unknown rank";
    } else {
      for (auto [i, dim] : llvm::enumerate(tensorType.shape().dim())) {
        if (i)
          dimsText += " x ";
        dimsText += dim.has_dim_value()       ? std::to_string(dim.dim_value())
                    : dim.dim_param().empty() ? std::string("?")
                                              : dim.dim_param();
      }
    }
    // Symbols bound by other inputs' shapes make this input static.
    bool resolved = tensorType.has_shape();
    for (auto [i, dim] : llvm::enumerate(tensorType.shape().dim())) {
      if (!ShapedType::isDynamic(dims[i]))
        continue;
      auto bound = symbolicDims.find(dim.dim_param());
      if (dim.dim_param().empty() || bound == symbolicDims.end()) {
        resolved = false;
        break;
      }
      dims[i] = bound->second;
    }
    if (resolved)
      return RankedTensorType::get(dims, elementType);
    needShape.push_back("'" + info.name() + "' [" + dimsText + "]");
    return failure();
  }
  return RankedTensorType::get(dims, elementType);
}

LogicalResult
OnnxImporter::bindSymbolicDims(const onnx::GraphProto &graph,
                               const llvm::StringSet<> &initializerNames) {
  bool ok = true;
  for (const auto &input : graph.input()) {
    auto given = options.inputShapes.find(input.name());
    if (initializerNames.contains(input.name()) ||
        given == options.inputShapes.end() ||
        !input.type().tensor_type().has_shape())
      continue;
    const auto &shape = input.type().tensor_type().shape();
    if (static_cast<size_t>(shape.dim_size()) != given->second.size())
      continue; // getValueType reports the rank mismatch.
    for (auto [i, dim] : llvm::enumerate(shape.dim())) {
      if (dim.dim_param().empty())
        continue;
      int64_t value = given->second[i];
      auto [it, inserted] = symbolicDims.try_emplace(dim.dim_param(), value);
      if (!inserted && it->second != value) {
        mlir::emitError(fileLoc())
            << "dimension '" << dim.dim_param() << "' is " << it->second
            << " in one input shape and " << value << " in the shape of '"
            << input.name() << "'";
        ok = false;
      }
    }
  }
  return success(ok);
}

LogicalResult OnnxImporter::loadModel(onnx::ModelProto &model) {
  std::string error;
  bool opened = contents.has_value();
  if (contents ? !parseModelBytes(*contents, path, model, error)
               : !parseModelFile(path, model, opened, error)) {
    // Unopenable files have no location to point at; the rest is the file's.
    mlir::emitError(opened ? fileLoc() : Location(UnknownLoc::get(ctx)))
        << error;
    return failure();
  }
  for (const auto &opset : model.opset_import())
    if (isDefaultDomain(opset.domain()))
      defaultOpset = opset.version();
  return success();
}

LogicalResult OnnxImporter::sortNodes(const onnx::GraphProto &graph,
                                      SmallVectorImpl<int> &order) {
  // Producers of every value; graph inputs and initializers have none.
  llvm::StringMap<int> producer;
  llvm::StringSet<> available;
  for (const auto &init : graph.initializer())
    available.insert(init.name());
  for (const auto &input : graph.input())
    available.insert(input.name());
  bool ok = true;
  for (auto [i, node] : llvm::enumerate(graph.node())) {
    for (const std::string &out : node.output()) {
      if (out.empty())
        continue;
      if (available.contains(out) || producer.count(out)) {
        mlir::emitError(nodeLoc(node, i))
            << "node '" << node.name() << "' (" << node.op_type()
            << "): value '" << out << "' is defined more than once";
        ok = false;
      }
      producer[out] = i;
    }
  }
  // Kahn's algorithm; dangling references are reported here too.
  int numNodes = graph.node_size();
  SmallVector<int> pending(numNodes, 0);
  SmallVector<SmallVector<int>> users(numNodes);
  for (auto [i, node] : llvm::enumerate(graph.node())) {
    for (const std::string &in : node.input()) {
      if (in.empty() || available.contains(in))
        continue;
      auto it = producer.find(in);
      if (it == producer.end()) {
        mlir::emitError(nodeLoc(node, i))
            << "node '" << node.name() << "' (" << node.op_type()
            << "): input '" << in
            << "' is not a graph input, an initializer or a node output";
        ok = false;
        continue;
      }
      ++pending[i];
      users[it->second].push_back(i);
    }
  }
  for (const auto &out : graph.output()) {
    if (!available.contains(out.name()) && !producer.count(out.name())) {
      mlir::emitError(fileLoc())
          << "graph output '" << out.name() << "' is not produced by any node";
      ok = false;
    }
  }
  if (!ok)
    return failure();
  std::deque<int> ready;
  for (int i = 0; i < numNodes; ++i)
    if (pending[i] == 0)
      ready.push_back(i);
  while (!ready.empty()) {
    int i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (int user : users[i])
      if (--pending[user] == 0)
        ready.push_back(user);
  }
  if (static_cast<int>(order.size()) != numNodes) {
    std::string cycle;
    for (int i = 0; i < numNodes; ++i) {
      if (pending[i] == 0)
        continue;
      if (!cycle.empty())
        cycle += ", ";
      cycle +=
          "'" + graph.node(i).name() + "' (" + graph.node(i).op_type() + ")";
    }
    mlir::emitError(fileLoc())
        << "the graph has a cycle through the nodes " << cycle;
    return failure();
  }
  return success();
}

OwningOpRef<ModuleOp> OnnxImporter::run() {
  ctx->loadDialect<RidgeDialect, func::FuncDialect>();
  onnx::ModelProto model;
  if (failed(loadModel(model)))
    return nullptr;
  const onnx::GraphProto &graph = model.graph();

  // Validate before building anything, collecting every problem.
  bool ok = true;
  for (auto [i, node] : llvm::enumerate(graph.node())) {
    std::string outOfScope = getNodeOutOfScopeReason(node);
    if (outOfScope.empty() &&
        (findHandler(node) || findFunctionSchema(node, defaultOpset)))
      continue;
    auto diag = mlir::emitError(nodeLoc(node, i));
    diag << "node '" << cast<NameLoc>(nodeLoc(node, i)).getName().getValue()
         << "': unsupported op '" << node.op_type() << "'";
    if (!isDefaultDomain(node.domain()))
      diag << " of domain '" << node.domain() << "'";
    else
      diag << " at opset " << defaultOpset;
    if (!outOfScope.empty())
      diag << ": " << outOfScope;
    else if (std::optional<int64_t> minOpset =
                 handlers.getMinOpset(node.op_type()))
      diag << " (supported from opset " << *minOpset << ")";
    ok = false;
  }
  SmallVector<int> order;
  if (failed(sortNodes(graph, order)))
    ok = false;

  llvm::StringSet<> initializerNames;
  for (const auto &init : graph.initializer())
    initializerNames.insert(init.name());
  SmallVector<const onnx::ValueInfoProto *> inputs;
  SmallVector<Type> inputTypes;
  SmallVector<std::string> needShape;
  if (failed(bindSymbolicDims(graph, initializerNames)))
    ok = false;
  for (const auto &input : graph.input()) {
    if (initializerNames.contains(input.name()))
      continue;
    FailureOr<RankedTensorType> type = getValueType(input, needShape);
    if (failed(type)) {
      ok = false;
      continue;
    }
    std::string oversized = describeOversized(*type);
    if (!oversized.empty()) {
      mlir::emitError(fileLoc())
          << "graph input '" << input.name() << "' " << oversized;
      ok = false;
      continue;
    }
    inputs.push_back(&input);
    inputTypes.push_back(*type);
  }
  if (!needShape.empty()) {
    auto diag = mlir::emitError(fileLoc())
                << "these graph inputs have dynamic dimensions and need a "
                   "static shape (ridgec --shape NAME=DxD...): ";
    llvm::interleaveComma(needShape, diag);
  }
  if (!ok)
    return nullptr;

  // Build the module and the entry function.
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc());
  module->getOperation()->setAttr("ridge.model",
                                  StringAttr::get(ctx, graph.name()));
  module->getOperation()->setAttr("ridge.opset",
                                  builder.getI64IntegerAttr(defaultOpset));
  builder.setInsertionPointToEnd(module->getBody());
  auto funcType = builder.getFunctionType(inputTypes, {});
  auto func = func::FuncOp::create(builder, fileLoc(), "main", funcType);
  Block *entry = func.addEntryBlock();
  for (auto [i, input] : llvm::enumerate(inputs)) {
    func.setArgAttr(i, kOnnxNameAttr, builder.getStringAttr(input->name()));
    define(input->name(), entry->getArgument(i));
  }
  builder.setInsertionPointToStart(entry);

  for (const auto &init : graph.initializer()) {
    TensorData data;
    std::string error;
    Location loc = NameLoc::get(builder.getStringAttr(init.name()), fileLoc());
    if (!decodeTensor(init, data, error) ||
        !getElementType(ctx, data.dataType)) {
      mlir::emitError(loc) << "initializer '" << init.name() << "': "
                           << (error.empty() ? "unsupported element type"
                                             : error);
      ok = false;
      continue;
    }
    // A graph input with the same name overrides its initializer (ONNX IR <4
    // default values); such inputs were already bound to arguments.
    if (!lookup(init.name()))
      define(init.name(), createConstant(loc, data, init.name()));
  }
  if (!ok)
    return nullptr;

  // A node that fails has reported why; the values it would define are
  // poisoned, and the nodes that depend on them are skipped without a
  // diagnostic of their own (one root cause, one error), while independent
  // nodes still import and report their own problems.
  llvm::StringSet<> poisoned;
  for (int index : order) {
    const onnx::NodeProto &node = graph.node(index);
    bool dependsOnFailure =
        llvm::any_of(node.input(), [&](const std::string &in) {
          return poisoned.contains(in);
        });
    if (dependsOnFailure ||
        failed(importNode(node, defaultOpset, nodeLoc(node, index),
                          /*depth=*/0))) {
      poisonOutputs(node, poisoned);
      ok = false;
    }
  }
  if (!ok)
    return nullptr;

  SmallVector<Value> results;
  for (const auto &out : graph.output())
    results.push_back(lookup(out.name()));
  func::ReturnOp::create(builder, fileLoc(), results);
  func.setType(
      builder.getFunctionType(inputTypes, ValueRange(results).getTypes()));
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, kOnnxNameAttr, builder.getStringAttr(out.name()));

  if (readExternalData)
    module->getOperation()->setAttr(kExternalDataAttr, builder.getUnitAttr());
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

FailureOr<Value> requireOperand(NodeContext &n, unsigned i) {
  Value v = n.operand(i);
  if (!v) {
    n.emitError() << "missing required input " << i;
    return failure();
  }
  return v;
}

Value reshapeTo(NodeContext &n, Value input, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  if (resultType == type)
    return input;
  return n.builder.createOrFold<ReshapeOp>(n.loc, resultType, input);
}

} // namespace mlir::ridge::onnx_import

OwningOpRef<ModuleOp>
mlir::ridge::importOnnxFile(MLIRContext *context, StringRef path,
                            const OnnxImportOptions &options) {
  OnnxImporter importer(context, path, options);
  return importer.run();
}

OwningOpRef<ModuleOp>
mlir::ridge::importOnnxBuffer(MLIRContext *context, StringRef contents,
                              StringRef path,
                              const OnnxImportOptions &options) {
  OnnxImporter importer(context, path, options, contents);
  return importer.run();
}

bool mlir::ridge::listOnnxGraphInputs(StringRef path,
                                      std::vector<std::string> &names,
                                      std::string &error) {
  onnx::ModelProto model;
  bool opened;
  if (!parseModelFile(path, model, opened, error))
    return false;
  llvm::StringSet<> initializers;
  for (const auto &init : model.graph().initializer())
    initializers.insert(init.name());
  for (const auto &input : model.graph().input())
    if (!initializers.contains(input.name()))
      names.push_back(input.name());
  return true;
}
