//===- WeightsFile.cpp - Reading the description, writing the file --------===//

#include "ridgeline/Target/WeightsFile.h"

#include "ridgeline/Runtime/ModelAbi.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;
using namespace mlir::ridge;

FailureOr<std::optional<ExternalWeights>>
mlir::ridge::readExternalWeights(ModuleOp module) {
  Attribute raw = module->getAttr(kExternalWeightsAttr);
  if (!raw)
    return std::optional<ExternalWeights>();
  auto fail = [&]() {
    return module.emitError("'") << kExternalWeightsAttr << "' ";
  };
  auto desc = dyn_cast<DictionaryAttr>(raw);
  auto file = desc ? desc.getAs<StringAttr>("file") : StringAttr();
  auto fingerprint =
      desc ? desc.getAs<IntegerAttr>("fingerprint") : IntegerAttr();
  auto bytes = desc ? desc.getAs<IntegerAttr>("bytes") : IntegerAttr();
  auto list = desc ? desc.getAs<ArrayAttr>("weights") : ArrayAttr();
  if (!file || file.getValue().empty() || !fingerprint || !bytes || !list) {
    fail() << "must be {file, fingerprint, bytes, weights}, got " << raw;
    return failure();
  }
  ExternalWeights result;
  result.file = file.getValue();
  result.fingerprint = fingerprint.getValue().getZExtValue();
  result.bytes = bytes.getValue().getZExtValue();
  uint64_t end = sizeof(ridge_weights_header);
  for (auto [index, element] : llvm::enumerate(list)) {
    auto entry = dyn_cast<DictionaryAttr>(element);
    auto name = entry ? entry.getAs<StringAttr>("name") : StringAttr();
    auto global =
        entry ? entry.getAs<FlatSymbolRefAttr>("global") : FlatSymbolRefAttr();
    auto offset = entry ? entry.getAs<IntegerAttr>("offset") : IntegerAttr();
    auto size = entry ? entry.getAs<IntegerAttr>("bytes") : IntegerAttr();
    if (!name || !global || !offset || !size) {
      fail() << "weight " << index
             << " must be {name, global, offset, bytes, data}, got " << element;
      return failure();
    }
    ExternalWeight weight{name.getValue(),
                          global,
                          offset.getValue().getZExtValue(),
                          size.getValue().getZExtValue(),
                          {}};
    // Weights are laid out in order, without overlap, inside the file.
    if (weight.offset < end || weight.bytes > result.bytes ||
        weight.offset > result.bytes - weight.bytes) {
      fail() << "weight " << index << " ('" << weight.name
             << "') does not fit the file after the previous one";
      return failure();
    }
    end = weight.offset + weight.bytes;
    if (auto data = entry.getAs<DenseResourceElementsAttr>("data"))
      if (AsmResourceBlob *blob = data.getRawHandle().getBlob())
        weight.data = blob->getData();
    if (!weight.data.empty() && weight.data.size() != weight.bytes) {
      fail() << "weight " << index << " ('" << weight.name << "') has "
             << weight.data.size() << " bytes of data for " << weight.bytes;
      return failure();
    }
    result.weights.push_back(weight);
  }
  return std::optional<ExternalWeights>(std::move(result));
}

LogicalResult mlir::ridge::writeWeightsFile(const ExternalWeights &weights,
                                            StringRef path,
                                            std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error =
        "cannot write the weights file '" + path.str() + "': " + ec.message();
    return failure();
  }
  ridge_weights_header header;
  std::memset(&header, 0, sizeof(header));
  std::memcpy(header.magic, RIDGE_WEIGHTS_MAGIC, sizeof(header.magic));
  header.version = RIDGE_WEIGHTS_VERSION;
  header.fingerprint = weights.fingerprint;
  header.data_bytes = weights.bytes;
  os.write(reinterpret_cast<const char *>(&header), sizeof(header));
  uint64_t position = sizeof(header);
  for (const ExternalWeight &weight : weights.weights) {
    if (weight.data.size() != weight.bytes) {
      error = "the bytes of weight '" + weight.name.str() +
              "' are no longer in memory";
      return failure();
    }
    os.write_zeros(weight.offset - position);
    os.write(weight.data.data(), weight.data.size());
    position = weight.offset + weight.bytes;
  }
  os.write_zeros(weights.bytes - position);
  os.close();
  if (os.has_error()) {
    error = "cannot write the weights file '" + path.str() +
            "': " + os.error().message();
    os.clear_error();
    return failure();
  }
  return success();
}
