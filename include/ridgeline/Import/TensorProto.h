//===- TensorProto.h - Reading ONNX TensorProto payloads ----------*- C++
//-*-===//
//
// Decodes ONNX TensorProto messages (initializers, Constant attributes and
// the input_K.pb/output_K.pb files of the backend-test layout) into
// little-endian, densely packed bytes. Shared by the importer and ridge-run.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_IMPORT_TENSORPROTO_H
#define RIDGELINE_IMPORT_TENSORPROTO_H

#include "ridgeline/Runtime/ModelAbi.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace mlir::ridge {

/// ONNX TensorProto.DataType values Ridgeline understands.
enum class OnnxDataType : int32_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  BFloat16 = 16,
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
};

/// Bytes per element of an ONNX data type, 0 if unsupported (e.g. string).
unsigned getOnnxDataTypeSize(int32_t dataType);
/// The model-ABI element type of an ONNX data type (ModelAbi.h), or
/// RIDGE_DTYPE_INVALID if Ridgeline has none (string, complex, int4, ...).
ridge_dtype getRidgeDType(int32_t dataType);
/// Short name (f32, i64, u8, i1, ...; ModelAbi.h's spelling) for messages;
/// "string" or "unknown" for types without a ridge_dtype.
llvm::StringRef getOnnxDataTypeName(int32_t dataType);

/// The largest tensor the importer accepts by default: 64 GiB, more than any
/// one tensor of a model that fits a GPU, far less than the sizes whose
/// products wrap around. Tools override it with `--max-tensor-bytes`.
inline constexpr int64_t kDefaultMaxTensorBytes = int64_t(1) << 36;

/// Bytes of a dense tensor of `dims` with `elementBytes` bytes per element,
/// or nullopt if a dimension is negative or the size does not fit in int64.
std::optional<int64_t> getDenseTensorBytes(llvm::ArrayRef<int64_t> dims,
                                           int64_t elementBytes);

/// Why a tensor of `dims` with `elementBytes`-byte elements of type
/// `typeName` is refused ("has shape 1099511627776 x 4 of f32: ... bytes,
/// more than the limit of ..."), or empty when it fits in `maxBytes`.
std::string describeOversizedTensor(llvm::ArrayRef<int64_t> dims,
                                    int64_t elementBytes,
                                    llvm::StringRef typeName, int64_t maxBytes);

struct TensorData {
  std::string name;
  int32_t dataType = 0;
  llvm::SmallVector<int64_t> dims;
  std::vector<char> bytes; ///< Row-major, little-endian, densely packed.

  int64_t getNumElements() const;
};

/// Decodes `proto`. External data is read relative to `modelDir` and must stay
/// inside it (after symbolic links are resolved), from a regular file. A
/// tensor over `maxBytes` is refused before any data is read. Returns false
/// and sets `error` on failure.
bool decodeTensorProto(const onnx::TensorProto &proto, llvm::StringRef modelDir,
                       TensorData &out, std::string &error,
                       int64_t maxBytes = kDefaultMaxTensorBytes);

/// Reads a serialized TensorProto file (input_0.pb, output_0.pb, ...).
bool readTensorProtoFile(llvm::StringRef path, TensorData &out,
                         std::string &error,
                         int64_t maxBytes = kDefaultMaxTensorBytes);

} // namespace mlir::ridge

#endif // RIDGELINE_IMPORT_TENSORPROTO_H
