//===- OnnxMutator.cpp - ONNX-aware libFuzzer mutator ---------------------===//
//
// LLVMFuzzerCustomMutator parses the input as an onnx::ModelProto and, when
// it parses, changes one structural field chosen at random before writing
// the model back: a dim, an element type, an attribute, the opset, an op
// type, the inputs or the nodes of the graph, an initializer's payload, or
// its external-data entries (with hostile strings). One mutation in eight,
// and every input that does not parse, goes to libFuzzer's byte mutator
// instead. LLVMFuzzerCustomCrossOver splices a run of nodes (and the
// initializers they read) of one model into another. Both are deterministic
// given libFuzzer's seed.
//
//===----------------------------------------------------------------------===//

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

using Rng = std::mt19937_64;

// clang-format off
/// Ops the importer has handlers for, plus a few it reports as unsupported or
/// out of scope.
const char *const kOpTypes[] = {
    "Abs", "Add", "And", "ArgMax", "Attention", "AveragePool",
    "BatchNormalization", "BitShift", "Cast", "CastLike", "Ceil", "Celu",
    "Clip", "Compress", "Concat", "Constant", "ConstantOfShape", "Conv",
    "ConvTranspose", "Cos", "CumSum", "DFT", "DepthToSpace",
    "DequantizeLinear", "Div", "Dropout", "Einsum", "Elu", "Equal", "Erf",
    "Exp", "Expand", "EyeLike", "Flatten", "Floor", "GRU", "Gather",
    "GatherElements", "GatherND", "Gelu", "Gemm", "GlobalAveragePool",
    "GlobalMaxPool", "Greater", "GridSample", "GroupNormalization",
    "HannWindow", "HardSigmoid", "HardSwish", "Hardmax", "Identity",
    "InstanceNormalization", "IsInf", "IsNaN", "LRN", "LSTM",
    "LayerNormalization", "LeakyRelu", "Less", "Log", "LogSoftmax",
    "LpNormalization", "MatMul", "MatMulInteger", "Max", "MaxPool",
    "MaxUnpool", "Mean", "MeanVarianceNormalization", "Min", "Mod", "Mul",
    "Neg", "NonZero", "Not", "OneHot", "PRelu", "Pad", "Pow", "QLinearConv",
    "QLinearMatMul", "QuantizeLinear", "RMSNormalization", "RNN", "Range",
    "Reciprocal", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
    "ReduceSum", "ReduceL2", "Relu", "Reshape", "Resize", "ReverseSequence",
    "RoiAlign", "RotaryEmbedding", "Round", "STFT", "ScatterElements",
    "ScatterND", "Selu", "Shape", "Sigmoid", "Sign", "Sin", "Size", "Slice",
    "Softmax", "Softplus", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tanh",
    "Tile", "TopK", "Transpose", "Trilu", "Unique", "Unsqueeze", "Upsample",
    "Where", "Xor", "Loop", "If", "RandomNormal", "NotAnOp"};

/// Attribute names the handlers read.
const char *const kAttrNames[] = {
    "axis", "axes", "perm", "keepdims", "transA", "transB", "alpha",
    "beta", "group", "pads", "strides", "kernel_shape", "dilations",
    "epsilon", "mode", "to", "shape", "value", "starts", "ends", "split",
    "num_outputs", "hidden_size", "direction", "auto_pad", "ceil_mode",
    "output_padding", "output_shape", "blocksize", "k", "largest", "sorted",
    "upper", "exclusive", "reverse", "batch_dims", "noop_with_empty_axes",
    "select_last_index", "stash_type", "num_groups", "equation", "coordinate_transformation_mode",
    "nearest_mode", "cubic_coeff_a", "antialias", "scales", "sizes",
    "periodic", "output_datatype", "onesided", "inverse", "seed"};

const int64_t kInterestingInts[] = {
    0,  1,  -1, 2,  3, 4, 7, 8, 16, 64, 255, 256, 1023, 65535, 1LL << 31,
    (1LL << 31) - 1, 1LL << 32, 1LL << 40, -(1LL << 31),
    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};

const char *const kHostileLocations[] = {
    "external.bin", "", ".", "..", "../external.bin", "/etc/passwd",
    "/dev/zero", "a/../../b", "./external.bin", "external.bin/",
    "external.bin/..", "missing.bin", "%s%n%x", "\xff\xfe",
    "external.bin\n", "dir//../external.bin"};

const char *const kHostileNumbers[] = {
    "0", "1", "4", "16", "4096", "4097", "-1", "-0", "+4", " 4", "4 ",
    "0x10", "abc", "", "9223372036854775807", "9223372036854775808",
    "18446744073709551615", "18446744073709551616",
    "99999999999999999999999"};
// clang-format on

class Mutator {
public:
  explicit Mutator(unsigned seed) : rng(seed) {}

  /// Applies one structural mutation; false when the chosen one found
  /// nothing to change.
  bool mutate(onnx::ModelProto &model);
  void crossOver(onnx::ModelProto &into, const onnx::ModelProto &from);

private:
  uint64_t below(uint64_t n) { return n == 0 ? 0 : rng() % n; }
  bool coin() { return rng() & 1; }
  template <typename T, size_t N> const T &pick(const T (&array)[N]) {
    return array[below(N)];
  }
  /// A value near `current`, its negation, or an interesting constant; the
  /// arithmetic wraps (in uint64_t) instead of overflowing.
  int64_t interestingInt(int64_t current) {
    switch (below(4)) {
    case 0:
      return static_cast<int64_t>(static_cast<uint64_t>(current) + below(5) -
                                  2);
    case 1:
      return static_cast<int64_t>(uint64_t(0) - static_cast<uint64_t>(current));
    default:
      return pick(kInterestingInts);
    }
  }
  float interestingFloat() {
    const float values[] = {0.0f,
                            -0.0f,
                            1.0f,
                            -1.0f,
                            0.5f,
                            1e-12f,
                            1e30f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::denorm_min()};
    return pick(values);
  }
  /// Every value name the graph knows: inputs, initializers, node outputs.
  std::vector<std::string> valueNames(const onnx::GraphProto &graph);
  onnx::ValueInfoProto *pickValueInfo(onnx::GraphProto &graph);

  bool mutateDim(onnx::GraphProto &graph);
  bool mutateElemType(onnx::GraphProto &graph);
  bool mutateAttribute(onnx::GraphProto &graph);
  bool mutateOpset(onnx::ModelProto &model);
  bool mutateOpType(onnx::GraphProto &graph);
  bool mutateNodeInputs(onnx::GraphProto &graph);
  bool mutateNodes(onnx::GraphProto &graph);
  bool mutateInitializer(onnx::GraphProto &graph);
  bool mutateExternalData(onnx::GraphProto &graph);
  bool mutateGraphIo(onnx::GraphProto &graph);

  Rng rng;
};

std::vector<std::string> Mutator::valueNames(const onnx::GraphProto &graph) {
  std::vector<std::string> names;
  for (const auto &input : graph.input())
    names.push_back(input.name());
  for (const auto &init : graph.initializer())
    names.push_back(init.name());
  for (const auto &node : graph.node())
    for (const std::string &out : node.output())
      names.push_back(out);
  names.push_back("");
  return names;
}

onnx::ValueInfoProto *Mutator::pickValueInfo(onnx::GraphProto &graph) {
  int total =
      graph.input_size() + graph.output_size() + graph.value_info_size();
  if (total == 0)
    return nullptr;
  int i = static_cast<int>(below(total));
  if (i < graph.input_size())
    return graph.mutable_input(i);
  i -= graph.input_size();
  if (i < graph.output_size())
    return graph.mutable_output(i);
  return graph.mutable_value_info(i - graph.output_size());
}

bool Mutator::mutateDim(onnx::GraphProto &graph) {
  onnx::ValueInfoProto *info = pickValueInfo(graph);
  if (!info)
    return false;
  onnx::TensorShapeProto *shape =
      info->mutable_type()->mutable_tensor_type()->mutable_shape();
  switch (below(6)) {
  case 0: // Add a dim.
    shape->add_dim()->set_dim_value(pick(kInterestingInts));
    return true;
  case 1: // Drop a dim.
    if (shape->dim_size() == 0)
      return false;
    shape->mutable_dim()->DeleteSubrange(below(shape->dim_size()), 1);
    return true;
  case 2: // Make it symbolic.
    if (shape->dim_size() == 0)
      return false;
    shape->mutable_dim(below(shape->dim_size()))
        ->set_dim_param(coin() ? "N" : "batch");
    return true;
  case 3: // Unranked.
    info->mutable_type()->mutable_tensor_type()->clear_shape();
    return true;
  default: {
    if (shape->dim_size() == 0)
      return false;
    onnx::TensorShapeProto::Dimension *dim =
        shape->mutable_dim(below(shape->dim_size()));
    dim->set_dim_value(interestingInt(dim->dim_value()));
    return true;
  }
  }
}

bool Mutator::mutateElemType(onnx::GraphProto &graph) {
  int32_t type = static_cast<int32_t>(below(26)); // 0 (undefined) to 25.
  if (coin() && graph.initializer_size()) {
    graph.mutable_initializer(below(graph.initializer_size()))
        ->set_data_type(type);
    return true;
  }
  onnx::ValueInfoProto *info = pickValueInfo(graph);
  if (!info)
    return false;
  info->mutable_type()->mutable_tensor_type()->set_elem_type(type);
  return true;
}

bool Mutator::mutateAttribute(onnx::GraphProto &graph) {
  if (graph.node_size() == 0)
    return false;
  onnx::NodeProto *node = graph.mutable_node(below(graph.node_size()));
  if (node->attribute_size() == 0 || below(4) == 0) {
    // A new attribute, of a random kind.
    onnx::AttributeProto *attr = node->add_attribute();
    attr->set_name(pick(kAttrNames));
    switch (below(4)) {
    case 0:
      attr->set_type(onnx::AttributeProto::INT);
      attr->set_i(pick(kInterestingInts));
      break;
    case 1:
      attr->set_type(onnx::AttributeProto::INTS);
      for (uint64_t i = 0, e = below(6); i < e; ++i)
        attr->add_ints(pick(kInterestingInts));
      break;
    case 2:
      attr->set_type(onnx::AttributeProto::FLOAT);
      attr->set_f(interestingFloat());
      break;
    default:
      attr->set_type(onnx::AttributeProto::STRING);
      attr->set_s(coin() ? "NOTSET" : "linear");
      break;
    }
    return true;
  }
  int index = static_cast<int>(below(node->attribute_size()));
  onnx::AttributeProto *attr = node->mutable_attribute(index);
  switch (below(8)) {
  case 0: // Drop it.
    node->mutable_attribute()->DeleteSubrange(index, 1);
    return true;
  case 1: // Change its declared type.
    attr->set_type(static_cast<onnx::AttributeProto::AttributeType>(below(14)));
    return true;
  case 2: // Rename it.
    attr->set_name(pick(kAttrNames));
    return true;
  default:
    break;
  }
  if (attr->has_i() || attr->type() == onnx::AttributeProto::INT) {
    attr->set_i(interestingInt(attr->i()));
    return true;
  }
  if (attr->has_f() || attr->type() == onnx::AttributeProto::FLOAT) {
    attr->set_f(interestingFloat());
    return true;
  }
  if (attr->ints_size() || attr->type() == onnx::AttributeProto::INTS) {
    switch (below(3)) {
    case 0:
      attr->add_ints(pick(kInterestingInts));
      return true;
    case 1:
      if (attr->ints_size() == 0)
        return false;
      attr->mutable_ints()->RemoveLast();
      return true;
    default: {
      if (attr->ints_size() == 0)
        return false;
      int i = static_cast<int>(below(attr->ints_size()));
      attr->set_ints(i, interestingInt(attr->ints(i)));
      return true;
    }
    }
  }
  if (attr->floats_size()) {
    attr->set_floats(below(attr->floats_size()), interestingFloat());
    return true;
  }
  if (attr->has_t()) {
    onnx::TensorProto *t = attr->mutable_t();
    if (t->dims_size() && coin())
      t->set_dims(below(t->dims_size()), interestingInt(t->dims(0)));
    else
      t->set_data_type(static_cast<int32_t>(below(26)));
    return true;
  }
  if (attr->has_s()) {
    attr->set_s(coin() ? "" : pick(kOpTypes));
    return true;
  }
  return false;
}

bool Mutator::mutateOpset(onnx::ModelProto &model) {
  const int64_t versions[] = {-1, 0,  1,  5,  6,  7,  9,  10, 11, 12, 13,
                              14, 17, 18, 19, 20, 21, 22, 23, 24, 28, 100};
  if (model.opset_import_size() == 0 || below(8) == 0) {
    onnx::OperatorSetIdProto *opset = model.add_opset_import();
    opset->set_domain(coin() ? "" : "com.microsoft");
    opset->set_version(pick(versions));
    return true;
  }
  model.mutable_opset_import(below(model.opset_import_size()))
      ->set_version(pick(versions));
  return true;
}

bool Mutator::mutateOpType(onnx::GraphProto &graph) {
  if (graph.node_size() == 0)
    return false;
  onnx::NodeProto *node = graph.mutable_node(below(graph.node_size()));
  if (below(16) == 0)
    node->set_domain(coin() ? "ai.onnx" : "com.microsoft");
  else
    node->set_op_type(pick(kOpTypes));
  return true;
}

bool Mutator::mutateNodeInputs(onnx::GraphProto &graph) {
  if (graph.node_size() == 0)
    return false;
  onnx::NodeProto *node = graph.mutable_node(below(graph.node_size()));
  std::vector<std::string> names = valueNames(graph);
  switch (below(5)) {
  case 0: // Drop an input.
    if (node->input_size() == 0)
      return false;
    node->mutable_input()->DeleteSubrange(below(node->input_size()), 1);
    return true;
  case 1: // Duplicate an input.
    if (node->input_size() == 0)
      return false;
    node->add_input(node->input(below(node->input_size())));
    return true;
  case 2: // Add any value (or an optional gap) as an input.
    node->add_input(names[below(names.size())]);
    return true;
  case 3: // Drop or add an output.
    if (node->output_size() && coin())
      node->mutable_output()->RemoveLast();
    else
      node->add_output(coin() ? names[below(names.size())]
                              : "fuzz" + std::to_string(below(4)));
    return true;
  default: // Rewire an input to another value (maybe a cycle).
    if (node->input_size() == 0)
      return false;
    node->set_input(below(node->input_size()), names[below(names.size())]);
    return true;
  }
}

bool Mutator::mutateNodes(onnx::GraphProto &graph) {
  if (graph.node_size() == 0)
    return false;
  int i = static_cast<int>(below(graph.node_size()));
  switch (below(3)) {
  case 0: // Drop a node.
    graph.mutable_node()->DeleteSubrange(i, 1);
    return true;
  case 1: { // Duplicate a node (its outputs are then defined twice, or, when
            // renamed, a new branch).
    onnx::NodeProto copy = graph.node(i);
    if (coin())
      for (std::string &out : *copy.mutable_output())
        out += "_dup";
    *graph.add_node() = copy;
    return true;
  }
  default: // Swap two nodes.
    graph.mutable_node()->SwapElements(i, below(graph.node_size()));
    return true;
  }
}

bool Mutator::mutateInitializer(onnx::GraphProto &graph) {
  if (graph.initializer_size() == 0)
    return false;
  onnx::TensorProto *t =
      graph.mutable_initializer(below(graph.initializer_size()));
  switch (below(6)) {
  case 0: // A dim that no longer matches the payload.
    if (t->dims_size() == 0) {
      t->add_dims(pick(kInterestingInts));
    } else {
      int i = static_cast<int>(below(t->dims_size()));
      t->set_dims(i, interestingInt(t->dims(i)));
    }
    return true;
  case 1: // Add or drop a dim.
    if (t->dims_size() && coin())
      t->mutable_dims()->RemoveLast();
    else
      t->add_dims(coin() ? 1 : pick(kInterestingInts));
    return true;
  case 2: { // Truncate or extend raw_data.
    std::string *raw = t->mutable_raw_data();
    if (!raw->empty() && coin())
      raw->resize(below(raw->size()));
    else
      raw->append(below(9), '\x7f');
    return true;
  }
  case 3: // Move the payload to the typed field.
    t->clear_raw_data();
    for (uint64_t i = 0, e = below(5); i < e; ++i)
      t->add_float_data(interestingFloat());
    return true;
  case 4: // Typed data of the wrong kind next to raw_data.
    t->add_int64_data(pick(kInterestingInts));
    return true;
  default: // Rename it (it may then shadow or dangle).
    t->set_name(coin() ? "" : valueNames(graph)[0]);
    return true;
  }
}

bool Mutator::mutateExternalData(onnx::GraphProto &graph) {
  if (graph.initializer_size() == 0)
    return false;
  onnx::TensorProto *t =
      graph.mutable_initializer(below(graph.initializer_size()));
  if (t->data_location() != onnx::TensorProto::EXTERNAL || below(8) == 0) {
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    t->clear_raw_data();
    t->clear_external_data();
    onnx::StringStringEntryProto *location = t->add_external_data();
    location->set_key("location");
    location->set_value("external.bin");
    return true;
  }
  const char *const keys[] = {"location", "offset", "length", "checksum", ""};
  if (t->external_data_size() == 0 || below(3) == 0) {
    onnx::StringStringEntryProto *entry = t->add_external_data();
    entry->set_key(pick(keys));
    entry->set_value(coin() ? pick(kHostileNumbers) : pick(kHostileLocations));
    return true;
  }
  onnx::StringStringEntryProto *entry =
      t->mutable_external_data(below(t->external_data_size()));
  switch (below(4)) {
  case 0:
    entry->set_key(pick(keys));
    return true;
  case 1:
    entry->set_value(std::string(below(300), 'a'));
    return true;
  default:
    entry->set_value(entry->key() == "location" ? pick(kHostileLocations)
                                                : pick(kHostileNumbers));
    return true;
  }
}

bool Mutator::mutateGraphIo(onnx::GraphProto &graph) {
  std::vector<std::string> names = valueNames(graph);
  switch (below(4)) {
  case 0: // Drop an input.
    if (graph.input_size() == 0)
      return false;
    graph.mutable_input()->DeleteSubrange(below(graph.input_size()), 1);
    return true;
  case 1: // Drop an output.
    if (graph.output_size() == 0)
      return false;
    graph.mutable_output()->DeleteSubrange(below(graph.output_size()), 1);
    return true;
  case 2: { // Output any value (an input, an initializer, twice, ...).
    onnx::ValueInfoProto *out = graph.add_output();
    out->set_name(names[below(names.size())]);
    if (coin())
      out->mutable_type()->mutable_tensor_type()->set_elem_type(1);
    return true;
  }
  default: { // A duplicate input.
    if (graph.input_size() == 0)
      return false;
    onnx::ValueInfoProto copy = graph.input(below(graph.input_size()));
    *graph.add_input() = copy;
    return true;
  }
  }
}

bool Mutator::mutate(onnx::ModelProto &model) {
  onnx::GraphProto &graph = *model.mutable_graph();
  switch (below(12)) {
  case 0:
  case 1:
    return mutateDim(graph);
  case 2:
    return mutateElemType(graph);
  case 3:
  case 4:
    return mutateAttribute(graph);
  case 5:
    return mutateOpset(model);
  case 6:
    return mutateOpType(graph);
  case 7:
    return mutateNodeInputs(graph);
  case 8:
    return mutateNodes(graph);
  case 9:
    return mutateInitializer(graph);
  case 10:
    return mutateExternalData(graph);
  default:
    return mutateGraphIo(graph);
  }
}

void Mutator::crossOver(onnx::ModelProto &into, const onnx::ModelProto &from) {
  const onnx::GraphProto &source = from.graph();
  onnx::GraphProto &graph = *into.mutable_graph();
  if (source.node_size() == 0)
    return;
  int begin = static_cast<int>(below(source.node_size()));
  int end = begin + 1 + static_cast<int>(below(source.node_size() - begin));
  std::set<std::string> known;
  for (const auto &init : graph.initializer())
    known.insert(init.name());
  for (int i = begin; i < end; ++i) {
    const onnx::NodeProto &node = source.node(i);
    *graph.add_node() = node;
    // The initializers the spliced nodes read, when the target lacks them.
    for (const std::string &input : node.input()) {
      if (known.count(input))
        continue;
      for (const auto &init : source.initializer())
        if (init.name() == input) {
          *graph.add_initializer() = init;
          known.insert(input);
          break;
        }
    }
  }
  // Make the last spliced node's outputs graph outputs, so they are lowered.
  if (coin())
    for (const std::string &out : source.node(end - 1).output()) {
      onnx::ValueInfoProto *info = graph.add_output();
      info->set_name(out);
    }
}

bool parseModel(const uint8_t *data, size_t size, onnx::ModelProto &model) {
  return size <= static_cast<size_t>(std::numeric_limits<int>::max()) &&
         model.ParseFromArray(data, static_cast<int>(size)) &&
         model.has_graph();
}

size_t writeModel(const onnx::ModelProto &model, uint8_t *data,
                  size_t maxSize) {
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.size() > maxSize)
    return 0;
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  Mutator mutator(seed);
  onnx::ModelProto model;
  if (seed % 8 != 0 && parseModel(data, size, model)) {
    // A few attempts: some mutations find nothing to change.
    for (int attempt = 0; attempt < 4; ++attempt)
      if (mutator.mutate(model))
        if (size_t written = writeModel(model, data, maxSize))
          return written;
  }
  return LLVMFuzzerMutate(data, size, maxSize);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1,
                                            const uint8_t *data2, size_t size2,
                                            uint8_t *out, size_t maxOutSize,
                                            unsigned seed) {
  onnx::ModelProto first, second;
  if (!parseModel(data1, size1, first) || !parseModel(data2, size2, second)) {
    // Not both models: the first input's bytes, then the byte mutator.
    size_t size = std::min(size1, maxOutSize);
    std::memcpy(out, data1, size);
    return LLVMFuzzerMutate(out, size, maxOutSize);
  }
  Mutator mutator(seed);
  mutator.crossOver(first, second);
  return writeModel(first, out, maxOutSize);
}
