//===- Emulator.h - A PTX device emulated on the host -----------*- C++ -*-===//
//
// The device that the emulator stands in for: device memory (host memory
// with an allocation table, so that every global access is checked against
// the buffer it falls in), modules loaded from PTX text, and kernel launches
// executed block by block, warp by warp, 32 lanes per decoded instruction in
// lockstep. Lanes of a warp that diverge run apart, lowest PC first, and
// reconverge where their PCs meet again.
//
// Every failure (an unsupported instruction, an out-of-bounds or misaligned
// access, a shuffle or barrier that not all its lanes reach) is an error
// naming the kernel, the block, the thread and the PTX line.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_EMULATOR_EMULATOR_H
#define RIDGELINE_EMULATOR_EMULATOR_H

#include "ridgeline/Emulator/Counters.h"
#include "ridgeline/Emulator/Ptx.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ridge::emu {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
};

/// Emulated device memory: each allocation is host memory; a device address
/// is the host address, so the runtime's copies are plain memcpys. Shared and
/// local memory live in address windows above the 47-bit host address space,
/// which no host pointer reaches.
class DeviceMemory {
public:
  static constexpr uint64_t kSharedWindow = 1ull << 48;
  static constexpr uint64_t kLocalWindow = 2ull << 48;
  /// Generic addresses of kernel parameters (cvta.param, as nvcc emits for
  /// a __grid_constant__ CUtensorMap).
  static constexpr uint64_t kParamWindow = 3ull << 48;
  static constexpr uint64_t kWindowSize = 1ull << 40;

  ~DeviceMemory();
  /// Allocates `bytes` (at least 1) aligned to 256 bytes; 0 on failure.
  uint64_t allocate(uint64_t bytes, std::string label);
  /// Frees the allocation that starts at `address`; false if none does.
  bool free(uint64_t address);
  struct Allocation {
    uint64_t base = 0, size = 0;
    std::string label;
  };
  /// The allocation that holds [address, address + bytes), or null.
  const Allocation *find(uint64_t address, uint64_t bytes) const;
  /// The allocation nearest below `address` (for messages), or null.
  const Allocation *nearest(uint64_t address) const;
  /// Names the allocation starting at `address` (for messages).
  void setLabel(uint64_t address, std::string label);
  size_t getNumAllocations() const { return allocations.size(); }

private:
  std::map<uint64_t, Allocation> allocations;
  std::map<uint64_t, void *> blocks; // base -> what to free
  /// The allocation find() returned last (map nodes do not move).
  mutable const Allocation *lastFound = nullptr;
};

/// A PTX module on the device: its decoded form and the device addresses of
/// its module-scope variables (initialized from the PTX).
struct LoadedModule {
  std::unique_ptr<PtxModule> ptx;
  std::vector<uint64_t> globalAddresses; // PtxModule::globals order
};

/// The counters of one launch (Counters.h): configuration, instructions by
/// class, global sectors and shared-memory wavefronts.
using LaunchStats = KernelCounters;

class Device {
public:
  Device();
  ~Device();

  DeviceMemory &getMemory() { return memory; }
  /// The compute capability the device reports (80: sm_80, 90: sm_90a).
  int getComputeCapability() const { return computeCapability; }
  void setComputeCapability(int cc) { computeCapability = cc; }

  /// Parses, decodes and loads `ptxText`; null with `error` on failure.
  LoadedModule *loadModule(const std::string &ptxText, std::string &error);
  void unloadModule(LoadedModule *module);

  /// Launches `kernel` with cuLaunchKernel's argument convention: `args[i]`
  /// points at the value of parameter i. Runs to completion; false with
  /// `error` (kernel, block, thread, PTX line) on the first failure. The
  /// launch's counters are added to `stats`, if given.
  bool launch(const LoadedModule &module, const PtxFunction &kernel, Dim3 grid,
              Dim3 block, uint32_t dynamicSharedBytes, void **args,
              std::string &error, LaunchStats *stats = nullptr);
  /// As launch, with the parameters already packed into the kernel's
  /// parameter layout.
  bool launchPacked(const LoadedModule &module, const PtxFunction &kernel,
                    Dim3 grid, Dim3 block, uint32_t dynamicSharedBytes,
                    const std::vector<uint8_t> &params, std::string &error,
                    LaunchStats *stats = nullptr);

  /// Largest shared memory per block (dynamic + static), in bytes.
  uint32_t getMaxSharedMemoryPerBlock() const;

private:
  DeviceMemory memory;
  std::vector<std::unique_ptr<LoadedModule>> modules;
  int computeCapability = 90;
};

} // namespace ridge::emu

#endif // RIDGELINE_EMULATOR_EMULATOR_H
