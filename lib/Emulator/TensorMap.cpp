//===- TensorMap.cpp - The emulator's CUtensorMap encoding ----------------===//
//
// encodeTiledTensorMap checks what cuTensorMapEncodeTiled documents (rank,
// alignment of the address and strides, box sizes, the inner box dimension
// against the swizzle span) so that a map the driver would refuse is
// refused here too, and writes the layout TensorMap.h describes.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Emulator/TensorMap.h"

#include <cstring>

using namespace ridge::emu;

unsigned ridge::emu::getTensorElementBytes(TensorDataType type) {
  switch (type) {
  case TensorDataType::UInt8:
    return 1;
  case TensorDataType::UInt16:
  case TensorDataType::Float16:
  case TensorDataType::BFloat16:
    return 2;
  case TensorDataType::UInt32:
  case TensorDataType::Int32:
  case TensorDataType::Float32:
  case TensorDataType::Float32Ftz:
  case TensorDataType::TFloat32:
  case TensorDataType::TFloat32Ftz:
    return 4;
  case TensorDataType::UInt64:
  case TensorDataType::Int64:
  case TensorDataType::Float64:
    return 8;
  }
  return 0;
}

namespace {
template <typename T> void put(uint8_t *bytes, unsigned offset, T value) {
  std::memcpy(bytes + offset, &value, sizeof(T));
}
template <typename T> T get(const uint8_t *bytes, unsigned offset) {
  T value;
  std::memcpy(&value, bytes + offset, sizeof(T));
  return value;
}
} // namespace

std::string ridge::emu::encodeTiledTensorMap(
    void *out, TensorDataType dataType, unsigned rank, uint64_t globalAddress,
    const uint64_t *globalDim, const uint64_t *globalStrides,
    const uint32_t *boxDim, const uint32_t *elementStrides, unsigned interleave,
    TensorSwizzle swizzle, unsigned l2Promotion, unsigned oobFill) {
  unsigned elementBytes = getTensorElementBytes(dataType);
  if (!elementBytes)
    return "unknown data type " + std::to_string(unsigned(dataType));
  if (rank < 1 || rank > 5)
    return "rank " + std::to_string(rank) + " is not in [1, 5]";
  if (interleave != 0)
    return "interleaved layouts are not supported";
  if (globalAddress % 16)
    return "the global address is not 16-byte aligned";
  if (static_cast<unsigned>(swizzle) > 3)
    return "unknown swizzle " + std::to_string(unsigned(swizzle));
  for (unsigned d = 0; d < rank; ++d) {
    std::string dim = " of dimension " + std::to_string(d);
    if (globalDim[d] == 0 || globalDim[d] > (uint64_t(1) << 32))
      return "global size" + dim + " is not in [1, 2^32]";
    if (boxDim[d] == 0 || boxDim[d] > 256)
      return "box size" + dim + " is not in [1, 256]";
    if (elementStrides[d] == 0 || elementStrides[d] > 8)
      return "element stride" + dim + " is not in [1, 8]";
    if (d > 0 && (globalStrides[d - 1] % 16 ||
                  globalStrides[d - 1] >= (uint64_t(1) << 40)))
      return "global stride" + dim +
             " is not a multiple of 16 bytes below 2^40";
  }
  uint64_t innerBytes = uint64_t(boxDim[0]) * elementBytes;
  if (innerBytes % 16)
    return "the inner box dimension (" + std::to_string(innerBytes) +
           " bytes) is not a multiple of 16 bytes";
  if (swizzle != TensorSwizzle::None) {
    unsigned span = 16u << static_cast<unsigned>(swizzle);
    if (innerBytes > span)
      return "the inner box dimension (" + std::to_string(innerBytes) +
             " bytes) exceeds the " + std::to_string(span) +
             "-byte swizzle span";
  }
  auto *bytes = static_cast<uint8_t *>(out);
  std::memset(bytes, 0, kTensorMapBytes);
  put<uint32_t>(bytes, 0, kTensorMapMagic);
  bytes[4] = 1;
  bytes[5] = static_cast<uint8_t>(dataType);
  bytes[6] = static_cast<uint8_t>(rank);
  bytes[7] = static_cast<uint8_t>(swizzle);
  bytes[8] = static_cast<uint8_t>(interleave);
  bytes[9] = static_cast<uint8_t>(l2Promotion);
  bytes[10] = static_cast<uint8_t>(oobFill);
  put<uint64_t>(bytes, 16, globalAddress);
  for (unsigned d = 0; d < rank; ++d) {
    put<uint64_t>(bytes, 24 + 8 * d, globalDim[d]);
    if (d > 0)
      put<uint64_t>(bytes, 64 + 8 * (d - 1), globalStrides[d - 1]);
    put<uint16_t>(bytes, 96 + 2 * d, static_cast<uint16_t>(boxDim[d]));
    bytes[106 + d] = static_cast<uint8_t>(elementStrides[d]);
  }
  return "";
}

bool ridge::emu::decodeTensorMap(const void *data, TensorMap &map,
                                 std::string &error) {
  const auto *bytes = static_cast<const uint8_t *>(data);
  if (get<uint32_t>(bytes, 0) != kTensorMapMagic || bytes[4] != 1) {
    error = "not a tensor map (made by cuTensorMapEncodeTiled)";
    return false;
  }
  map.dataType = static_cast<TensorDataType>(bytes[5]);
  map.rank = bytes[6];
  map.swizzle = static_cast<TensorSwizzle>(bytes[7]);
  map.interleave = bytes[8];
  map.l2Promotion = bytes[9];
  map.oobFill = bytes[10];
  map.globalAddress = get<uint64_t>(bytes, 16);
  unsigned elementBytes = getTensorElementBytes(map.dataType);
  if (!elementBytes || map.rank < 1 || map.rank > 5 || bytes[7] > 3) {
    error = "corrupt tensor map";
    return false;
  }
  for (unsigned d = 0; d < map.rank; ++d) {
    map.globalDim[d] = get<uint64_t>(bytes, 24 + 8 * d);
    map.globalStrides[d] =
        d == 0 ? elementBytes : get<uint64_t>(bytes, 64 + 8 * (d - 1));
    map.boxDim[d] = get<uint16_t>(bytes, 96 + 2 * d);
    map.elementStrides[d] = bytes[106 + d];
  }
  return true;
}
