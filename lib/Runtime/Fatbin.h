//===- Fatbin.h - The PTX of a CUDA fat binary ------------------*- C++ -*-===//
//
// ridgec embeds a GPU model's kernels as a fatbin (ridge-build-fatbins): a
// cubin for the target chip and the PTX, uncompressed. The driver picks
// what it needs; the PTX emulator, and the runtime when RIDGE_PTX_JIT=1
// asks it to JIT-compile the PTX anyway, read the PTX out of the container.
// The layout is NVIDIA's and undocumented; these are the fields fatbinary
// (CUDA 12 and 13) writes, checked against its output:
//
//   header (16 bytes): u32 magic 0xBA55ED50, u16 version 1, u16 header size,
//                      u64 bytes of entries after the header
//   entry:             u16 kind (1 PTX, 2 ELF), u16 version, u32 header
//                      size, u64 payload size, ..., u64 flags at byte 40
//                      (0x2000 or 0x8000: the payload is compressed)
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_RUNTIME_FATBIN_H
#define RIDGELINE_LIB_RUNTIME_FATBIN_H

#include <cstdint>
#include <cstring>
#include <string>

namespace ridge::rt {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;

/// Whether `data` starts a fatbin container.
inline bool isFatbin(const void *data) {
  uint32_t magic;
  std::memcpy(&magic, data, 4);
  return magic == kFatbinMagic;
}

/// Bytes of the fatbin at `data`, header included; 0 when the header is not
/// a fatbin's.
inline uint64_t getFatbinSize(const void *data) {
  if (!isFatbin(data))
    return 0;
  uint16_t headerSize;
  uint64_t entryBytes;
  std::memcpy(&headerSize, static_cast<const char *>(data) + 6, 2);
  std::memcpy(&entryBytes, static_cast<const char *>(data) + 8, 8);
  return headerSize + entryBytes;
}

/// Copies the PTX text of the fatbin at `data` into `ptx`. Returns "" or
/// what is wrong (no PTX entry, a compressed one, a truncated container).
inline std::string extractFatbinPtx(const void *data, std::string &ptx) {
  const char *bytes = static_cast<const char *>(data);
  uint64_t size = getFatbinSize(data);
  if (size == 0)
    return "not a fatbin";
  uint16_t headerSize;
  std::memcpy(&headerSize, bytes + 6, 2);
  uint64_t offset = headerSize;
  while (offset + 48 <= size) {
    uint16_t kind;
    uint32_t entryHeader;
    uint64_t payload, flags;
    std::memcpy(&kind, bytes + offset, 2);
    std::memcpy(&entryHeader, bytes + offset + 4, 4);
    std::memcpy(&payload, bytes + offset + 8, 8);
    std::memcpy(&flags, bytes + offset + 40, 8);
    if (entryHeader < 48 || payload > size ||
        offset + entryHeader > size - payload)
      return "the fatbin's entry at byte " + std::to_string(offset) +
             " leaves the container";
    if (kind == 1) {
      if (flags & 0xA000)
        return "the fatbin's PTX is compressed (build it with fatbinary "
               "--compress=false, as ridgec does)";
      const char *text = bytes + offset + entryHeader;
      ptx.assign(text, strnlen(text, payload));
      return "";
    }
    offset += entryHeader + payload;
  }
  return "the fatbin holds no PTX";
}

} // namespace ridge::rt

#endif // RIDGELINE_LIB_RUNTIME_FATBIN_H
