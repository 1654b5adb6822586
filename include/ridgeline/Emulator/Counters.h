//===- Counters.h - Hardware-style counters of emulated kernels -*- C++ -*-===//
//
// What a profiler such as Nsight Compute reports for a kernel, counted by the
// emulator as it runs: warp instructions by class, global-memory requests with
// the 32-byte sectors they touch, and shared-memory requests with the
// wavefronts the 32-bank model needs for them. The numbers are a function of
// the PTX and the launch only (no timing), so tests can check them exactly
// and the fusion plan's predicted bytes can be compared with them.
//
// The JSON form (formatCountersJson) is a documented interface: its schema is
// in docs/emulator.md ("Counters") and carries a version number.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_EMULATOR_COUNTERS_H
#define RIDGELINE_EMULATOR_COUNTERS_H

#include "ridgeline/Emulator/Ptx.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ridge::emu {

/// Version of the counters' JSON schema; bump it when a field changes
/// meaning or disappears (adding a field does not bump it).
constexpr int kCountersSchemaVersion = 2;

/// What kind of work a warp instruction is, as a profiler groups them. Memory
/// instructions are classed by the state space they reach, which for a
/// generic address is only known when it executes.
enum class InstructionClass : uint8_t {
  Fp32,            // f32/f16/bf16 arithmetic and comparisons
  Fp64,            // f64 arithmetic and comparisons
  Integer,         // integer and bitwise arithmetic, selp, cvta
  SpecialFunction, // ex2, lg2, rsqrt, sin, cos, tanh, rcp/sqrt .approx
  Conversion,      // cvt
  TensorCore,      // mma.sync, wmma.mma, wgmma
  ShuffleVote,     // shfl, vote
  Barrier,         // bar, bar.warp.sync, membar/fence
  GlobalLoad,
  GlobalStore,
  GlobalAtomic, // atom and red on global memory
  SharedLoad,
  SharedStore,
  SharedAtomic,
  Local,   // ld/st.local (register spills, local arrays)
  Control, // bra, ret, exit
  Other,   // mov, ld.param, ld.const, ...
};
constexpr unsigned kNumInstructionClasses =
    static_cast<unsigned>(InstructionClass::Other) + 1;

/// The class's JSON key, e.g. "global_load".
const char *getInstructionClassName(InstructionClass kind);

/// The one place that maps an instruction to its class. `space` is where a
/// memory instruction's access went (its resolved state space; Generic is
/// taken as global); other instructions ignore it. New opcodes get their
/// class here: the switch has no default so that the compiler points at it.
/// Tensor-core math (mma, wmma.mma, wgmma) is TensorCore; fragment loads and
/// copies are memory by the space they read (ldmatrix a shared load, cp.async
/// and TMA a global load), and mbarrier waits are Barrier.
InstructionClass classify(const Instruction &inst, Space space);

/// Requests, requested bytes and 32-byte sectors of one kind of global
/// access. A request is one warp instruction with at least one active lane.
struct GlobalAccessCounters {
  uint64_t requests = 0;
  uint64_t bytes = 0;   // requested bytes, active lanes only
  uint64_t sectors = 0; // distinct 32-byte sectors per request, summed
  /// Distinct 32-byte sectors of the whole launch, summed over launches:
  /// what DRAM must move at least once with an ideal cache, the traffic a
  /// fusion plan predicts (a sector read by many requests counts once).
  uint64_t footprintSectors = 0;
};

/// The set of 32-byte sectors one launch touches, for the footprint: open
/// addressing over sector indices, cheap enough to feed every request.
class SectorSet {
public:
  void insert(uint64_t sector);
  bool contains(uint64_t sector) const;
  uint64_t size() const { return count; }

private:
  void grow();
  static constexpr uint64_t kEmpty = ~0ull;
  std::vector<uint64_t> slots;
  uint64_t count = 0;
  uint64_t last = kEmpty; // lanes of consecutive requests share sectors
};

/// Requests and wavefronts of one kind of shared access under the 32-bank,
/// 4-byte model. `idealWavefronts` is what the request needs without
/// conflicts (one per half- or quarter-warp phase of 8- or 16-byte
/// accesses); wavefronts - idealWavefronts are the bank conflicts.
struct SharedAccessCounters {
  uint64_t requests = 0;
  uint64_t bytes = 0;
  uint64_t wavefronts = 0;
  uint64_t idealWavefronts = 0;
  uint64_t getBankConflicts() const { return wavefronts - idealWavefronts; }
};

/// The counters of one kernel: of one launch as Device::launch fills them, or
/// summed over launches (accumulate).
struct KernelCounters {
  std::string kernel;
  uint64_t launches = 0;
  /// The launch configuration (of the last launch, once accumulated).
  uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  /// PTX virtual registers the kernel declares, predicates included: the
  /// register pressure the PTX names, not what ptxas allocates.
  uint32_t registers = 0;
  uint64_t staticSharedBytes = 0, dynamicSharedBytes = 0;
  uint64_t localBytesPerThread = 0;

  uint64_t blocks = 0;
  uint64_t threads = 0;
  uint64_t warpInstructions = 0;   // issued, predicated-off ones included
  uint64_t threadInstructions = 0; // lanes whose guard held
  /// Host time the emulator spent in the launches (not a GPU time; for the
  /// emulator's own speed, warp instructions per second).
  double hostSeconds = 0;
  uint64_t instructions[kNumInstructionClasses] = {}; // warp instructions
  /// Multiply-add FLOPs (2 per multiply-add) of the tensor-core
  /// instructions executed: a warp's mma.sync m16n8k16 is 4096, its quarter
  /// of a warpgroup's wgmma m64nNk16 2 * 16 * N * 16.
  uint64_t tensorCoreFlops = 0;

  GlobalAccessCounters globalLoad, globalStore, globalAtomic;
  SharedAccessCounters sharedLoad, sharedStore;

  void count(InstructionClass kind) {
    ++instructions[static_cast<unsigned>(kind)];
  }
  /// Adds `other`'s counts; the configuration fields become `other`'s.
  void accumulate(const KernelCounters &other);
};

/// The FLOPs one warp's issue of tensor-core instruction `inst` computes.
uint64_t getTensorCoreFlops(const Instruction &inst);

/// The lanes of one warp instruction's memory access: for each active lane
/// the address (a device address for global memory, the offset in the
/// block's shared memory for shared) of `bytes` contiguous bytes.
struct WarpAccess {
  uint32_t lanes = 0; // active lanes
  unsigned bytes = 0; // per lane, vector elements included
  uint64_t address[32];
};

/// Counts one warp-level global request: its bytes and distinct sectors,
/// which also go into the launch's `footprint` when given, except those in
/// `cached` (a load of what the launch stored before is served by the
/// cache, not DRAM).
void countGlobalAccess(GlobalAccessCounters &counters, const WarpAccess &access,
                       SectorSet *footprint = nullptr,
                       const SectorSet *cached = nullptr);
/// Counts one warp-level shared request: its wavefronts under the 32-bank
/// model (8-byte accesses in two half-warp phases, 16-byte ones in four
/// quarter-warp phases; lanes reading one 4-byte word share it).
void countSharedAccess(SharedAccessCounters &counters,
                       const WarpAccess &access);

/// The JSON document of docs/emulator.md ("Counters") for `kernels`.
std::string formatCountersJson(const std::vector<KernelCounters> &kernels);
/// A human-readable table of one kernel's counters.
std::string formatCountersText(const KernelCounters &counters);

} // namespace ridge::emu

#endif // RIDGELINE_EMULATOR_COUNTERS_H
