//===- OnnxImporter.cpp - ONNX model -> ridge graph dialect ---------------===//
//
// The importer works in three phases so that one run reports every problem:
//   1. load and validate the protobuf (file errors, graph structure: dangling
//      values, cycles, unsupported ops, missing input shapes);
//   2. order the nodes topologically;
//   3. translate each node with a handler chosen by (op type, opset).
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Import/OnnxImporter.h"

#include "ridgeline/Dialect/Ridge.h"
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

#include "onnx/onnx_pb.h"
#include <google/protobuf/io/coded_stream.h>

#include <deque>
#include <functional>

#define DEBUG_TYPE "ridge-onnx-import"

using namespace mlir;
using namespace mlir::ridge;

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
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot open '" + path.str() + "': " + buffer.getError().message();
    return false;
  }
  opened = true;
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
      static_cast<int>((*buffer)->getBufferSize()));
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

void mlir::ridge::registerOnnxImportDialects(DialectRegistry &registry) {
  registry.insert<RidgeDialect, func::FuncDialect>();
}

namespace {

/// Maps an ONNX element type to the graph dialect's element type. Signed
/// integers are signless (as in arith); unsigned ones keep their signedness so
/// that lowerings pick unsigned division, comparison and conversion.
Type getElementType(MLIRContext *ctx, int32_t dataType) {
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

class OnnxImporter;

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
  int64_t opset;
  Location loc;
  OpBuilder &builder;

  unsigned getNumOperands() const { return node.input_size(); }
  /// Operand `i`, or null when absent (omitted optional input).
  Value operand(unsigned i) const;
  /// Operand `i` as a constant, if it folds to one.
  DenseElementsAttr constantOperand(unsigned i) const;

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
  std::optional<SmallVector<int64_t>> attrInts(StringRef name) const {
    const auto *a = attr(name);
    if (!a)
      return std::nullopt;
    return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
  }

  void setResult(unsigned i, Value value);
  InFlightDiagnostic emitError() const {
    return mlir::emitError(loc)
           << "node '" << node.name() << "' (" << node.op_type() << "): ";
  }
};

using NodeHandler = std::function<LogicalResult(NodeContext &)>;

struct HandlerEntry {
  int64_t sinceVersion;
  NodeHandler handler;
};

class OnnxImporter {
public:
  OnnxImporter(MLIRContext *ctx, StringRef path,
               const OnnxImportOptions &options)
      : ctx(ctx), path(path), modelDir(llvm::sys::path::parent_path(path)),
        options(options), builder(ctx) {
    if (modelDir.empty())
      modelDir = ".";
    registerHandlers();
  }

  OwningOpRef<ModuleOp> run();

  Value lookup(StringRef name) const { return values.lookup(name); }
  void define(StringRef name, Value value) { values[name] = value; }
  Location fileLoc() const { return FileLineColLoc::get(ctx, path, 0, 0); }
  Location nodeLoc(const onnx::NodeProto &node, unsigned index) const {
    std::string name = node.name().empty()
                           ? node.op_type() + "#" + std::to_string(index)
                           : node.name();
    return NameLoc::get(StringAttr::get(ctx, name), fileLoc());
  }
  /// Builds a ridge.constant from decoded data; large tensors become
  /// dense_resource blobs.
  Value createConstant(Location loc, const TensorData &data, StringRef hint);
  ElementsAttr createElementsAttr(RankedTensorType type,
                                  const std::vector<char> &bytes,
                                  StringRef hint);

private:
  void registerHandlers();
  void add(StringRef opType, int64_t since, NodeHandler handler) {
    handlers[opType].push_back({since, std::move(handler)});
  }
  const HandlerEntry *findHandler(const onnx::NodeProto &node) const;
  bool isDefaultDomain(StringRef domain) const {
    return domain.empty() || domain == "ai.onnx";
  }
  FailureOr<RankedTensorType>
  getValueType(const onnx::ValueInfoProto &info,
               SmallVectorImpl<std::string> &needShape);
  LogicalResult loadModel(onnx::ModelProto &model);
  LogicalResult sortNodes(const onnx::GraphProto &graph,
                          SmallVectorImpl<int> &order);

  MLIRContext *ctx;
  std::string path;
  std::string modelDir;
  const OnnxImportOptions &options;
  OpBuilder builder;
  int64_t defaultOpset = 1;
  llvm::StringMap<Value> values;
  llvm::StringMap<SmallVector<HandlerEntry, 2>> handlers;
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

const HandlerEntry *
OnnxImporter::findHandler(const onnx::NodeProto &node) const {
  if (!isDefaultDomain(node.domain()))
    return nullptr;
  auto it = handlers.find(node.op_type());
  if (it == handlers.end())
    return nullptr;
  const HandlerEntry *best = nullptr;
  for (const HandlerEntry &entry : it->second)
    if (entry.sinceVersion <= defaultOpset &&
        (!best || entry.sinceVersion > best->sinceVersion))
      best = &entry;
  return best;
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
          dimsText += "x";
        dimsText += dim.has_dim_value()       ? std::to_string(dim.dim_value())
                    : dim.dim_param().empty() ? std::string("?")
                                              : dim.dim_param();
      }
    }
    needShape.push_back("'" + info.name() + "' [" + dimsText + "]");
    return failure();
  }
  return RankedTensorType::get(dims, elementType);
}

LogicalResult OnnxImporter::loadModel(onnx::ModelProto &model) {
  std::string error;
  bool opened = false;
  if (!parseModelFile(path, model, opened, error)) {
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
    if (findHandler(node))
      continue;
    auto diag = mlir::emitError(nodeLoc(node, i));
    diag << "node '" << node.name() << "': unsupported op '" << node.op_type()
         << "'";
    if (!isDefaultDomain(node.domain()))
      diag << " of domain '" << node.domain() << "'";
    else
      diag << " at opset " << defaultOpset;
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
  for (const auto &input : graph.input()) {
    if (initializerNames.contains(input.name()))
      continue;
    FailureOr<RankedTensorType> type = getValueType(input, needShape);
    if (failed(type)) {
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
    if (!decodeTensorProto(init, modelDir, data, error) ||
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

  for (int index : order) {
    const onnx::NodeProto &node = graph.node(index);
    NodeContext context(*this, node, defaultOpset, nodeLoc(node, index),
                        builder);
    LLVM_DEBUG(llvm::dbgs() << "importing " << node.op_type() << " '"
                            << node.name() << "'\n");
    if (failed(findHandler(node)->handler(context))) {
      ok = false;
      continue;
    }
    for (const std::string &out : node.output()) {
      if (!out.empty() && !lookup(out)) {
        context.emitError() << "output '" << out << "' was not produced";
        ok = false;
      }
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

  if (failed(verify(*module)))
    return nullptr;
  return module;
}

//===----------------------------------------------------------------------===//
// Node handlers
//===----------------------------------------------------------------------===//

/// Requires operand `i` to be present.
static FailureOr<Value> requireOperand(NodeContext &n, unsigned i) {
  Value v = n.operand(i);
  if (!v) {
    n.emitError() << "missing required input " << i;
    return failure();
  }
  return v;
}

/// Creates a two-operand op whose result type is inferred, reporting
/// incompatible operands at the node instead of building an invalid op.
template <typename OpTy>
static FailureOr<Value> createInferred(NodeContext &n, Value lhs, Value rhs) {
  SmallVector<Type> inferred;
  if (failed(OpTy::inferReturnTypes(
          n.builder.getContext(), n.loc,
          typename OpTy::Adaptor(ValueRange{lhs, rhs}), inferred)))
    return failure();
  return OpTy::create(n.builder, n.loc, lhs, rhs).getResult();
}

template <typename OpTy> static NodeHandler binaryHandler() {
  return [](NodeContext &n) -> LogicalResult {
    FailureOr<Value> lhs = requireOperand(n, 0);
    FailureOr<Value> rhs = requireOperand(n, 1);
    if (failed(lhs) || failed(rhs))
      return failure();
    auto lhsType = cast<RankedTensorType>(lhs->getType());
    auto rhsType = cast<RankedTensorType>(rhs->getType());
    if (lhsType.getElementType() != rhsType.getElementType()) {
      // Pow's exponent may have another type; every other op must agree.
      if (!std::is_same_v<OpTy, PowOp>)
        return n.emitError()
               << "input element types differ: " << lhsType.getElementType()
               << " vs " << rhsType.getElementType();
      *rhs = CastOp::create(
          n.builder, n.loc,
          RankedTensorType::get(rhsType.getShape(), lhsType.getElementType()),
          *rhs);
    }
    FailureOr<Value> result = createInferred<OpTy>(n, *lhs, *rhs);
    if (failed(result))
      return failure();
    n.setResult(0, *result);
    return success();
  };
}

/// Variadic Max/Min/Sum-style ops fold left over their inputs.
template <typename OpTy> static NodeHandler variadicHandler() {
  return [](NodeContext &n) -> LogicalResult {
    FailureOr<Value> acc = requireOperand(n, 0);
    if (failed(acc))
      return failure();
    for (unsigned i = 1; i < n.getNumOperands(); ++i) {
      FailureOr<Value> next = requireOperand(n, i);
      if (failed(next))
        return failure();
      acc = createInferred<OpTy>(n, *acc, *next);
      if (failed(acc))
        return failure();
    }
    n.setResult(0, *acc);
    return success();
  };
}

template <typename OpTy, bool floatOnly = false>
static NodeHandler unaryHandler() {
  return [](NodeContext &n) -> LogicalResult {
    FailureOr<Value> input = requireOperand(n, 0);
    if (failed(input))
      return failure();
    if (floatOnly &&
        !isa<FloatType>(
            cast<RankedTensorType>(input->getType()).getElementType()))
      return n.emitError() << "expects a floating-point input, got "
                           << input->getType();
    n.setResult(0, OpTy::create(n.builder, n.loc, *input));
    return success();
  };
}

static Value reshapeTo(NodeContext &n, Value input, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  if (resultType == type)
    return input;
  return ReshapeOp::create(n.builder, n.loc, resultType, input);
}

static LogicalResult importReshape(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  SmallVector<int64_t> requested;
  if (n.opset < 5) {
    std::optional<SmallVector<int64_t>> shape = n.attrInts("shape");
    if (!shape)
      return n.emitError() << "missing attribute 'shape'";
    requested = *shape;
  } else {
    DenseElementsAttr shape = n.constantOperand(1);
    if (!shape)
      return n.emitError() << "the target shape (input 1) is not a constant; "
                              "Ridgeline needs static shapes";
    for (APInt v : shape.getValues<APInt>())
      requested.push_back(v.getSExtValue());
  }
  bool allowZero = n.attrInt("allowzero", 0) != 0;
  auto type = cast<RankedTensorType>(input->getType());
  int64_t known = 1, inferIndex = -1;
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(requested)) {
    if (d == 0 && !allowZero) {
      if (i >= static_cast<size_t>(type.getRank()))
        return n.emitError()
               << "shape entry " << i << " copies a dimension the input lacks";
      d = type.getDimSize(i);
    }
    if (d == -1) {
      if (inferIndex >= 0)
        return n.emitError() << "more than one -1 in the target shape";
      inferIndex = i;
      shape.push_back(1);
      continue;
    }
    if (d < 0)
      return n.emitError() << "invalid target dimension " << d;
    known *= d;
    shape.push_back(d);
  }
  int64_t total = type.getNumElements();
  if (inferIndex >= 0) {
    if (known == 0 || total % known != 0)
      return n.emitError() << "cannot infer the -1 dimension: " << total
                           << " elements into " << known;
    shape[inferIndex] = total / known;
  } else if (known != total) {
    return n.emitError() << "cannot reshape " << type << " (" << total
                         << " elements) to " << known << " elements";
  }
  n.setResult(0, reshapeTo(n, *input, shape));
  return success();
}

static LogicalResult importFlatten(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  int64_t rank = type.getRank();
  int64_t axis = n.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return n.emitError() << "axis out of range";
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= type.getDimSize(i);
  n.setResult(0, reshapeTo(n, *input, {outer, inner}));
  return success();
}

static LogicalResult importTranspose(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  int64_t rank = cast<RankedTensorType>(input->getType()).getRank();
  SmallVector<int64_t> perm;
  if (auto given = n.attrInts("perm")) {
    perm = *given;
  } else {
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  }
  SmallVector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank)
    return n.emitError() << "perm has " << perm.size()
                         << " entries for an input of rank " << rank;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return n.emitError() << "perm is not a permutation of 0.." << rank - 1;
    seen[p] = true;
  }
  n.setResult(0, TransposeOp::create(n.builder, n.loc, *input, perm));
  return success();
}

static LogicalResult importSoftmax(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  if (!isa<FloatType>(type.getElementType()))
    return n.emitError() << "expects a floating-point input";
  int64_t rank = type.getRank();
  int64_t axis = n.attrInt("axis", n.opset >= 13 ? -1 : 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
    return n.emitError() << "axis out of range for rank " << rank;
  if (n.opset >= 13) {
    n.setResult(0, SoftmaxOp::create(n.builder, n.loc, *input, axis));
    return success();
  }
  // Before opset 13 the input is coerced to 2-D at `axis`.
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= type.getDimSize(i);
  Value flat = reshapeTo(n, *input, {outer, inner});
  Value softmax = SoftmaxOp::create(n.builder, n.loc, flat, 1);
  n.setResult(0, reshapeTo(n, softmax, type.getShape()));
  return success();
}

static LogicalResult importCast(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  int64_t to = n.attrInt("to", 0);
  Type elementType = getElementType(n.builder.getContext(), to);
  if (!elementType)
    return n.emitError() << "unsupported target type "
                         << getOnnxDataTypeName(to) << " (ONNX data_type " << to
                         << ")";
  auto type = cast<RankedTensorType>(input->getType());
  n.setResult(
      0, CastOp::create(n.builder, n.loc, type.clone(elementType), *input));
  return success();
}

static LogicalResult importMatMul(NodeContext &n) {
  FailureOr<Value> lhs = requireOperand(n, 0);
  FailureOr<Value> rhs = requireOperand(n, 1);
  if (failed(lhs) || failed(rhs))
    return failure();
  FailureOr<Value> result = createInferred<MatMulOp>(n, *lhs, *rhs);
  if (failed(result))
    return failure();
  n.setResult(0, *result);
  return success();
}

static LogicalResult importGemm(NodeContext &n) {
  FailureOr<Value> a = requireOperand(n, 0);
  FailureOr<Value> b = requireOperand(n, 1);
  if (failed(a) || failed(b))
    return failure();
  Value c = n.operand(2);
  auto aType = cast<RankedTensorType>(a->getType());
  auto bType = cast<RankedTensorType>(b->getType());
  if (aType.getRank() != 2 || bType.getRank() != 2)
    return n.emitError() << "A and B must be 2-D, got " << aType << " and "
                         << bType;
  bool transA = n.attrInt("transA", 0), transB = n.attrInt("transB", 0);
  // The op's verifier checks the contraction dims and the bias shape.
  auto gemm = GemmOp::create(
      n.builder, n.loc, *a, *b, c,
      n.builder.getF32FloatAttr(n.attrFloat("alpha", 1.0f)),
      n.builder.getF32FloatAttr(n.attrFloat("beta", 1.0f)),
      n.builder.getBoolAttr(transA), n.builder.getBoolAttr(transB));
  if (failed(mlir::verify(gemm, /*verifyRecursively=*/false)))
    return failure();
  n.setResult(0, gemm);
  return success();
}

static LogicalResult importConstant(NodeContext &n) {
  MLIRContext *ctx = n.builder.getContext();
  if (const auto *value = n.attr("value")) {
    TensorData data;
    std::string error;
    if (!decodeTensorProto(value->t(), ".", data, error))
      return n.emitError() << error;
    if (!getElementType(ctx, data.dataType))
      return n.emitError() << "unsupported element type "
                           << getOnnxDataTypeName(data.dataType);
    n.setResult(0, n.importer.createConstant(n.loc, data, n.node.output(0)));
    return success();
  }
  auto make = [&](Type elementType, ArrayRef<int64_t> shape, auto values) {
    auto type = RankedTensorType::get(shape, elementType);
    n.setResult(0, ConstantOp::create(n.builder, n.loc,
                                      DenseElementsAttr::get(type, values)));
    return success();
  };
  Builder b(ctx);
  if (const auto *a = n.attr("value_float"))
    return make(b.getF32Type(), {}, ArrayRef<float>(a->f()));
  if (const auto *a = n.attr("value_int"))
    return make(b.getI64Type(), {}, ArrayRef<int64_t>(a->i()));
  if (const auto *a = n.attr("value_floats")) {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    return make(b.getF32Type(), {static_cast<int64_t>(v.size())}, ArrayRef(v));
  }
  if (const auto *a = n.attr("value_ints")) {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    return make(b.getI64Type(), {static_cast<int64_t>(v.size())}, ArrayRef(v));
  }
  return n.emitError() << "no supported value attribute (value, value_float, "
                          "value_int, value_floats, value_ints)";
}

static LogicalResult importIdentity(NodeContext &n) {
  FailureOr<Value> input = requireOperand(n, 0);
  if (failed(input))
    return failure();
  n.setResult(0, *input);
  return success();
}

void OnnxImporter::registerHandlers() {
  // Elementwise arithmetic: opset 7 introduced multidirectional broadcasting,
  // which is the only form Ridgeline supports.
  add("Add", 7, binaryHandler<AddOp>());
  add("Sub", 7, binaryHandler<SubOp>());
  add("Mul", 7, binaryHandler<MulOp>());
  add("Div", 7, binaryHandler<DivOp>());
  add("Pow", 7, binaryHandler<PowOp>());
  add("Max", 8, variadicHandler<MaxOp>());
  add("Min", 8, variadicHandler<MinOp>());
  add("Relu", 6, unaryHandler<ReluOp>());
  add("Neg", 6, unaryHandler<NegOp>());
  add("Abs", 6, unaryHandler<AbsOp>());
  add("Tanh", 6, unaryHandler<TanhOp, true>());
  add("Exp", 6, unaryHandler<ExpOp, true>());
  add("Log", 6, unaryHandler<LogOp, true>());
  add("Sqrt", 6, unaryHandler<SqrtOp, true>());
  add("Erf", 9, unaryHandler<ErfOp, true>());
  add("Sigmoid", 6, unaryHandler<SigmoidOp, true>());
  add("Reciprocal", 6, unaryHandler<ReciprocalOp, true>());
  add("MatMul", 1, importMatMul);
  add("Gemm", 7, importGemm);
  add("Reshape", 1, importReshape);
  add("Flatten", 1, importFlatten);
  add("Transpose", 1, importTranspose);
  add("Softmax", 1, importSoftmax);
  add("Cast", 6, importCast);
  add("Constant", 1, importConstant);
  add("Identity", 1, importIdentity);
}

} // namespace

OwningOpRef<ModuleOp>
mlir::ridge::importOnnxFile(MLIRContext *context, StringRef path,
                            const OnnxImportOptions &options) {
  OnnxImporter importer(context, path, options);
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
