//===- DeviceMemory.cpp - Emulated device memory and its table -----------===//
//
// Device allocations are host memory, each followed by a red zone, with a
// table that every emulated global access is checked against.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Emulator/Emulator.h"

#include <cstdlib>
#include <cstring>
#include <iterator>

using namespace ridge::emu;

DeviceMemory::~DeviceMemory() {
  for (auto &[base, block] : blocks)
    std::free(block);
}

uint64_t DeviceMemory::allocate(uint64_t bytes, std::string label) {
  uint64_t size = std::max<uint64_t>(bytes, 1);
  // Rounded up to the alignment, as aligned_alloc requires, plus a red zone
  // of 256 bytes that belongs to no allocation: an access just past the end
  // of one buffer is reported, never served from the next one.
  uint64_t rounded = (size + 255) / 256 * 256 + 256;
  if (rounded < size)
    return 0;
  void *block = std::aligned_alloc(256, rounded);
  if (!block)
    return 0;
  // cuMemAlloc's memory holds whatever it held: all ones here (NaN as f32,
  // -1 as an integer), so that code that reads bytes nobody wrote, or
  // counts on memory being zero, fails here as it would on a GPU instead of
  // passing on the zero pages a fresh host allocation often gets.
  std::memset(block, 0xff, rounded);
  uint64_t base = reinterpret_cast<uint64_t>(block);
  blocks[base] = block;
  allocations[base] = Allocation{base, bytes, std::move(label)};
  return base;
}

bool DeviceMemory::free(uint64_t address) {
  auto it = blocks.find(address);
  if (it == blocks.end())
    return false;
  std::free(it->second);
  blocks.erase(it);
  auto allocation = allocations.find(address);
  if (allocation != allocations.end() && &allocation->second == lastFound)
    lastFound = nullptr;
  allocations.erase(address);
  return true;
}

const DeviceMemory::Allocation *DeviceMemory::find(uint64_t address,
                                                   uint64_t bytes) const {
  auto within = [&](const Allocation &allocation) {
    return address >= allocation.base && address + bytes >= address &&
           address + bytes <= allocation.base + allocation.size;
  };
  // A warp's lanes, and the next instructions, mostly access the buffer
  // the last access did.
  if (lastFound && within(*lastFound))
    return lastFound;
  auto it = allocations.upper_bound(address);
  if (it == allocations.begin())
    return nullptr;
  --it;
  if (!within(it->second))
    return nullptr;
  lastFound = &it->second;
  return lastFound;
}

const DeviceMemory::Allocation *DeviceMemory::nearest(uint64_t address) const {
  auto it = allocations.upper_bound(address);
  if (it == allocations.begin())
    return nullptr;
  return &std::prev(it)->second;
}

void DeviceMemory::setLabel(uint64_t address, std::string label) {
  auto it = allocations.find(address);
  if (it != allocations.end())
    it->second.label = std::move(label);
}
