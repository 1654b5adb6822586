//===- TensorMap.h - The emulator's encoding of CUtensorMap -----*- C++ -*-===//
//
// A TMA tensor map (CUtensorMap) is 128 opaque bytes that the driver's
// cuTensorMapEncodeTiled writes and cp.async.bulk.tensor reads. NVIDIA does
// not document its bits, so the emulator defines its own encoding, written
// by encodeTiledTensorMap (the emulated driver's cuTensorMapEncodeTiled and
// ridge-emu's --arg tmap:...) and read by the emulator's TMA. Kernels pass
// the 128 bytes through untouched (a __grid_constant__ parameter or global
// memory), so any encoding works as long as both ends agree.
//
// Layout (little-endian; every other byte is zero):
//   [0, 4)    magic 0x50414d54 ("TMAP")
//   [4]       version 1
//   [5]       data type (CUtensorMapDataType numbering)
//   [6]       rank, 1 to 5
//   [7]       swizzle (CUtensorMapSwizzle: 0 none, 1 32B, 2 64B, 3 128B)
//   [8]       interleave (0: none, the only one supported)
//   [9]       L2 promotion (kept, without effect)
//   [10]      out-of-bounds fill (0: zeros, 1: NaN request for floats)
//   [16, 24)  global address
//   [24, 64)  global dimensions, 5 x u64 (elements)
//   [64, 96)  global strides of dimensions 1..4, 4 x u64 (bytes)
//   [96, 106) box dimensions, 5 x u16 (elements)
//   [106,111) element strides, 5 x u8
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_EMULATOR_TENSORMAP_H
#define RIDGELINE_EMULATOR_TENSORMAP_H

#include <cstdint>
#include <string>

namespace ridge::emu {

constexpr unsigned kTensorMapBytes = 128;
constexpr uint32_t kTensorMapMagic = 0x50414d54;

/// CUtensorMapDataType's values.
enum class TensorDataType : uint8_t {
  UInt8 = 0,
  UInt16 = 1,
  UInt32 = 2,
  Int32 = 3,
  UInt64 = 4,
  Int64 = 5,
  Float16 = 6,
  Float32 = 7,
  Float64 = 8,
  BFloat16 = 9,
  Float32Ftz = 10,
  TFloat32 = 11,
  TFloat32Ftz = 12,
};

/// CUtensorMapSwizzle's values.
enum class TensorSwizzle : uint8_t { None = 0, B32 = 1, B64 = 2, B128 = 3 };

/// A decoded tensor map.
struct TensorMap {
  TensorDataType dataType = TensorDataType::UInt8;
  unsigned rank = 0;
  uint64_t globalAddress = 0;
  uint64_t globalDim[5] = {};
  uint64_t globalStrides[5] = {}; // bytes; [0] is the element size
  uint32_t boxDim[5] = {};
  uint32_t elementStrides[5] = {};
  TensorSwizzle swizzle = TensorSwizzle::None;
  uint8_t interleave = 0, l2Promotion = 0, oobFill = 0;
};

/// Bytes of one element of `type` (0 for an unknown type).
unsigned getTensorElementBytes(TensorDataType type);

/// Mirrors cuTensorMapEncodeTiled: checks the arguments as the driver
/// documents them and writes the 128 bytes of `out`. `globalStrides` holds
/// rank - 1 byte strides (dimension 0 is dense). Returns "" on success, else
/// what is wrong.
std::string encodeTiledTensorMap(
    void *out, TensorDataType dataType, unsigned rank, uint64_t globalAddress,
    const uint64_t *globalDim, const uint64_t *globalStrides,
    const uint32_t *boxDim, const uint32_t *elementStrides, unsigned interleave,
    TensorSwizzle swizzle, unsigned l2Promotion, unsigned oobFill);

/// Reads 128 bytes written by encodeTiledTensorMap; false with `error` if
/// they are not a tensor map.
bool decodeTensorMap(const void *bytes, TensorMap &map, std::string &error);

/// The shared-memory byte offset that TMA and wgmma use for logical offset
/// `address` under `swizzle`: bits [4, 4+B) of the address XORed with bits
/// [7, 7+B), B = 1, 2, 3 for 32B, 64B, 128B (CUTLASS's Swizzle<B,4,3>).
inline uint64_t swizzleAddress(uint64_t address, TensorSwizzle swizzle) {
  unsigned bits = static_cast<unsigned>(swizzle);
  if (bits == 0)
    return address;
  uint64_t mask = (1u << bits) - 1;
  return address ^ (((address >> 7) & mask) << 4);
}

} // namespace ridge::emu

#endif // RIDGELINE_EMULATOR_TENSORMAP_H
