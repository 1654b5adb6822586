//===- TensorProto.cpp - Decoding ONNX TensorProto payloads ---------------===//

#include "ridgeline/Import/TensorProto.h"

#include "onnx/onnx_pb.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir::ridge;
using llvm::ArrayRef;
using llvm::StringRef;

ridge_dtype mlir::ridge::getRidgeDType(int32_t dataType) {
  switch (static_cast<OnnxDataType>(dataType)) {
  case OnnxDataType::Float:
    return RIDGE_DTYPE_F32;
  case OnnxDataType::UInt8:
    return RIDGE_DTYPE_U8;
  case OnnxDataType::Int8:
    return RIDGE_DTYPE_I8;
  case OnnxDataType::UInt16:
    return RIDGE_DTYPE_U16;
  case OnnxDataType::Int16:
    return RIDGE_DTYPE_I16;
  case OnnxDataType::Int32:
    return RIDGE_DTYPE_I32;
  case OnnxDataType::Int64:
    return RIDGE_DTYPE_I64;
  case OnnxDataType::Bool:
    return RIDGE_DTYPE_I1;
  case OnnxDataType::Float16:
    return RIDGE_DTYPE_F16;
  case OnnxDataType::Double:
    return RIDGE_DTYPE_F64;
  case OnnxDataType::UInt32:
    return RIDGE_DTYPE_U32;
  case OnnxDataType::UInt64:
    return RIDGE_DTYPE_U64;
  case OnnxDataType::BFloat16:
    return RIDGE_DTYPE_BF16;
  case OnnxDataType::Float8E4M3FN:
    return RIDGE_DTYPE_F8E4M3FN;
  case OnnxDataType::Float8E4M3FNUZ:
    return RIDGE_DTYPE_F8E4M3FNUZ;
  case OnnxDataType::Float8E5M2:
    return RIDGE_DTYPE_F8E5M2;
  case OnnxDataType::Float8E5M2FNUZ:
    return RIDGE_DTYPE_F8E5M2FNUZ;
  default:
    return RIDGE_DTYPE_INVALID;
  }
}

unsigned mlir::ridge::getOnnxDataTypeSize(int32_t dataType) {
  return static_cast<unsigned>(ridge_dtype_size(getRidgeDType(dataType)));
}

StringRef mlir::ridge::getOnnxDataTypeName(int32_t dataType) {
  if (const char *name = ridge_dtype_name(getRidgeDType(dataType)))
    return name;
  if (static_cast<OnnxDataType>(dataType) == OnnxDataType::String)
    return "string";
  return "unknown";
}

std::optional<int64_t> mlir::ridge::getDenseTensorBytes(ArrayRef<int64_t> dims,
                                                        int64_t elementBytes) {
  int64_t bytes = elementBytes;
  for (int64_t d : dims) {
    if (d < 0)
      return std::nullopt;
    std::optional<int64_t> product = llvm::checkedMul(bytes, d);
    if (!product)
      return std::nullopt;
    bytes = *product;
  }
  return bytes;
}

std::string mlir::ridge::describeOversizedTensor(ArrayRef<int64_t> dims,
                                                 int64_t elementBytes,
                                                 StringRef typeName,
                                                 int64_t maxBytes) {
  std::optional<int64_t> bytes = getDenseTensorBytes(dims, elementBytes);
  if (bytes && *bytes <= maxBytes)
    return "";
  std::string shape;
  llvm::raw_string_ostream os(shape);
  llvm::interleave(dims, os, " x ");
  if (dims.empty())
    os << "scalar";
  std::string reason = "has shape " + shape + " of " + typeName.str() + ": ";
  reason += bytes ? std::to_string(*bytes) + " bytes"
                  : std::string("a size that overflows 64 bits");
  return reason + ", more than the limit of " + std::to_string(maxBytes) +
         " bytes (--max-tensor-bytes)";
}

int64_t TensorData::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

template <typename T, typename Field>
static void packField(const Field &field, unsigned size,
                      std::vector<char> &out) {
  out.resize(static_cast<size_t>(field.size()) * size);
  for (int i = 0; i < field.size(); ++i) {
    T value = static_cast<T>(field.Get(i));
    std::memcpy(out.data() + static_cast<size_t>(i) * size, &value, size);
  }
}

/// Reads the external-data payload of `proto`, refusing paths that escape the
/// model's folder.
static bool readExternalData(const onnx::TensorProto &proto, StringRef modelDir,
                             std::vector<char> &out, std::string &error) {
  std::string location;
  uint64_t offset = 0;
  int64_t length = -1;
  for (const auto &entry : proto.external_data()) {
    StringRef key = entry.key(), value = entry.value();
    if (key == "location") {
      location = entry.value();
      continue;
    }
    if (key != "offset" && key != "length")
      continue;
    // Decimal only; getAsInteger also rejects trailing characters and
    // out-of-range values.
    bool malformed = key == "offset" ? value.getAsInteger(10, offset)
                                     : value.getAsInteger(10, length);
    if (malformed || (key == "length" && length < 0)) {
      error = "external data of '" + proto.name() + "' has a " +
              (malformed ? "malformed " : "negative ") + key.str() + " '" +
              value.str() + "'";
      return false;
    }
  }
  if (location.empty()) {
    error = "external data of '" + proto.name() + "' has no location";
    return false;
  }
  if (llvm::sys::path::is_absolute(location)) {
    error = "external data path '" + location + "' of '" + proto.name() +
            "' is absolute; it must be relative to the model's folder";
    return false;
  }
  for (StringRef component : llvm::make_range(llvm::sys::path::begin(location),
                                              llvm::sys::path::end(location))) {
    if (component == "..") {
      error = "external data path '" + location + "' of '" + proto.name() +
              "' escapes the model's folder";
      return false;
    }
  }
  // The text check above is not enough: a symbolic link (the file, or a
  // folder on the way) may point anywhere. The real path must stay inside
  // the model's real folder, and name a regular file: reading a FIFO or a
  // device would block or never end.
  llvm::SmallString<256> path(modelDir);
  llvm::sys::path::append(path, location);
  auto cannotRead = [&](const std::string &why) {
    error = "cannot read external data '" + std::string(path) + "' of '" +
            proto.name() + "': " + why;
    return false;
  };
  llvm::SmallString<256> realDir, realPath;
  if (std::error_code ec = llvm::sys::fs::real_path(modelDir, realDir)) {
    error = "cannot resolve the model's folder '" + modelDir.str() +
            "': " + ec.message();
    return false;
  }
  if (std::error_code ec = llvm::sys::fs::real_path(path, realPath)) {
    return cannotRead(ec.message());
  }
  StringRef inside = realPath.str();
  bool contained = inside.consume_front(realDir) && !inside.empty() &&
                   (llvm::sys::path::is_separator(realDir.back()) ||
                    llvm::sys::path::is_separator(inside.front()));
  if (!contained) {
    // Name the first link on the way.
    llvm::SmallString<256> link(modelDir);
    for (StringRef component :
         llvm::make_range(llvm::sys::path::begin(location),
                          llvm::sys::path::end(location))) {
      llvm::sys::path::append(link, component);
      if (llvm::sys::fs::is_symlink_file(link))
        break;
    }
    error = "external data '" + location + "' of '" + proto.name() +
            "' leaves the model's folder through the symbolic link '" +
            std::string(link) + "' (it resolves to '" + std::string(realPath) +
            "')";
    return false;
  }
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(realPath, status)) {
    return cannotRead(ec.message());
  }
  if (status.type() != llvm::sys::fs::file_type::regular_file) {
    error = "external data '" + std::string(path) + "' of '" + proto.name() +
            "' is not a regular file";
    return false;
  }
  uint64_t size = status.getSize();
  uint64_t count = length < 0 ? size - std::min(offset, size) : length;
  if (offset > size || count > size - offset) {
    error = "external data of '" + proto.name() +
            "' reaches past the end of '" + std::string(path) + "'";
    return false;
  }
  // Only the tensor's bytes are mapped, not the whole side file.
  auto buffer = llvm::MemoryBuffer::getFileSlice(realPath, count, offset,
                                                 /*IsVolatile=*/false);
  if (!buffer) {
    return cannotRead(buffer.getError().message());
  }
  const char *start = (*buffer)->getBufferStart();
  out.assign(start, start + (*buffer)->getBufferSize());
  return true;
}

bool mlir::ridge::decodeTensorProto(const onnx::TensorProto &proto,
                                    StringRef modelDir, TensorData &out,
                                    std::string &error, int64_t maxBytes) {
  out.name = proto.name();
  out.dataType = proto.data_type();
  out.dims.assign(proto.dims().begin(), proto.dims().end());
  for (int64_t d : out.dims) {
    if (d < 0) {
      error = "tensor '" + proto.name() + "' has a negative dimension";
      return false;
    }
  }
  unsigned size = getOnnxDataTypeSize(out.dataType);
  if (size == 0) {
    error = "tensor '" + proto.name() + "' has unsupported element type " +
            getOnnxDataTypeName(out.dataType).str() + " (ONNX data_type " +
            std::to_string(out.dataType) + ")";
    return false;
  }
  // Before any data is read or packed: the size must not wrap around and
  // must stay within the limit.
  std::string oversized = describeOversizedTensor(
      out.dims, size, getOnnxDataTypeName(out.dataType), maxBytes);
  if (!oversized.empty()) {
    error = "tensor '" + proto.name() + "' " + oversized;
    return false;
  }

  using DT = OnnxDataType;
  auto type = static_cast<DT>(out.dataType);
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!readExternalData(proto, modelDir, out.bytes, error))
      return false;
  } else if (proto.has_raw_data()) {
    out.bytes.assign(proto.raw_data().begin(), proto.raw_data().end());
  } else {
    switch (type) {
    case DT::Float:
      packField<float>(proto.float_data(), size, out.bytes);
      break;
    case DT::Double:
      packField<double>(proto.double_data(), size, out.bytes);
      break;
    case DT::Int64:
      packField<int64_t>(proto.int64_data(), size, out.bytes);
      break;
    case DT::UInt32:
    case DT::UInt64:
      packField<uint64_t>(proto.uint64_data(), 8, out.bytes);
      if (size == 4) { // Narrow the 64-bit storage.
        std::vector<char> narrow(out.bytes.size() / 2);
        for (size_t i = 0; i < narrow.size() / 4; ++i)
          std::memcpy(narrow.data() + 4 * i, out.bytes.data() + 8 * i, 4);
        out.bytes.swap(narrow);
      }
      break;
    case DT::Int32:
    case DT::Int16:
    case DT::Int8:
    case DT::UInt16:
    case DT::UInt8:
    case DT::Bool:
    case DT::Float16:
    case DT::BFloat16:
    case DT::Float8E4M3FN:
    case DT::Float8E4M3FNUZ:
    case DT::Float8E5M2:
    case DT::Float8E5M2FNUZ:
      // int32_data holds each element (or its 16- or 8-bit pattern) widened.
      if (size == 4)
        packField<int32_t>(proto.int32_data(), 4, out.bytes);
      else if (size == 2)
        packField<uint16_t>(proto.int32_data(), 2, out.bytes);
      else
        packField<uint8_t>(proto.int32_data(), 1, out.bytes);
      break;
    default:
      break;
    }
  }
  size_t expected = static_cast<size_t>(out.getNumElements()) * size;
  if (out.bytes.size() != expected) {
    error = "tensor '" + proto.name() + "' holds " +
            std::to_string(out.bytes.size()) +
            " bytes of data, its shape needs " + std::to_string(expected);
    return false;
  }
  return true;
}

bool mlir::ridge::readTensorProtoFile(StringRef path, TensorData &out,
                                      std::string &error, int64_t maxBytes) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot open '" + path.str() + "': " + buffer.getError().message();
    return false;
  }
  onnx::TensorProto proto;
  if (!proto.ParseFromArray((*buffer)->getBufferStart(),
                            static_cast<int>((*buffer)->getBufferSize()))) {
    error = "'" + path.str() + "' is not a serialized ONNX TensorProto";
    return false;
  }
  StringRef dir = llvm::sys::path::parent_path(path);
  if (!decodeTensorProto(proto, dir.empty() ? StringRef(".") : dir, out, error,
                         maxBytes)) {
    error = path.str() + ": " + error;
    return false;
  }
  return true;
}
