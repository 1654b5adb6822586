//===- BlockRun.h - One block's execution state (private) ------*- C++ -*-===//
//
// BlockRun, the executor's state for one block of a launch (its warps'
// registers, shared and local memory, barriers and asynchronous state), is
// declared here so that its members can be defined in more than one file:
// Executor.cpp schedules the lanes and warps and executes the plain
// instructions, MatrixInstructions.cpp the sm_80 tensor-core and cp.async
// ones, WarpCollectives.cpp shfl.sync and vote.sync, and SharedChecks.cpp
// checks shared memory for races and uninitialized reads. Everything stays
// non-virtual: the per-lane helpers below are inline, and the hot path
// (execute, executeLanes, memoryOp, resolve) is defined in Executor.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_EMULATOR_BLOCKRUN_H
#define RIDGELINE_LIB_EMULATOR_BLOCKRUN_H

#include "ridgeline/Emulator/Emulator.h"

#include "AsyncCopy.h"
#include "Hopper.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

/// Marks the BlockRun members that Executor.cpp defines and alone calls. They
/// keep the internal linkage they had while BlockRun was local to that file,
/// so that the optimizer inlines the per-instruction path as it did then
/// (execute into runWarp, memoryOp into executeLanes, ...): it inlines a
/// large function with one caller only when its linkage is internal.
#if defined(__clang__)
#define RIDGE_EXECUTOR_LOCAL [[clang::internal_linkage]]
#else
#define RIDGE_EXECUTOR_LOCAL
#endif

namespace ridge::emu::detail {

constexpr unsigned kWarpSize = 32;

/// What the shared-memory checks know of one byte of shared memory. Epochs
/// number the barrier intervals of a launch (every block starts a new one and
/// every completed barrier another), so that nothing is cleared between
/// blocks or barriers: a field from an older epoch is simply stale.
struct SharedByteShadow {
  uint32_t writtenBlock = 0; // block serial of the last write (0: never)
  uint32_t writeEpoch = 0, readEpoch = 0;
  uint32_t writeLine = 0, readLine = 0;
  uint16_t writer = 0, reader = 0; // thread index within the block
  bool readByManyWarps = false;    // in readEpoch, by more than one warp
  /// BlockRun::proxyFences at the last write by a thread (0: written by the
  /// async proxy), to tell async-proxy reads of it that no
  /// fence.proxy.async came between.
  uint32_t proxyFence = 0;
};

struct Warp {
  uint32_t pc[kWarpSize] = {};
  uint32_t live = 0;    // lanes that have not exited
  uint32_t waiting = 0; // lanes waiting at a block barrier
  uint32_t carry = 0;   // CC.CF per lane
  uint32_t index = 0;
  uint32_t barrierPc[kWarpSize] = {}; // where each waiting lane waits
  uint8_t barrierId[kWarpSize] = {};  // and at which of the 16 barriers
  uint32_t suspended = 0;             // lanes suspended in mbarrier.try_wait
  bool polled = false; // stopped after a failed mbarrier.test_wait
  uint32_t polledPc = 0, polledLane = 0; // that test_wait
  std::vector<uint64_t> regs;
};

/// The distinct global sectors a launch loads, stores and updates
/// atomically (GlobalAccessCounters::footprintSectors), and what the
/// inter-block ordering check (BlockRun::orderGlobalAccess) needs: the block
/// that last stored each 4-byte word of global memory in the launch, with
/// the fences at the GPU's scope its threads had executed by then, and each
/// finished block's count of them (by block serial).
struct LaunchFootprint {
  SectorSet load, store, atomic;
  struct WordWriter {
    uint32_t block = 0, fences = 0;
  };
  std::unordered_map<uint64_t, WordWriter> writers;
  std::vector<uint32_t> finalFences;
};

/// Executes one block of a launch.
class BlockRun : public HopperHost {
public:
  BlockRun(Device &device, const LoadedModule &module,
           const PtxFunction &kernel, Dim3 grid, Dim3 block, Dim3 blockIdx,
           uint32_t dynamicShared, const std::vector<uint8_t> &params,
           LaunchStats &stats, LaunchFootprint &footprint,
           std::vector<SharedByteShadow> &sharedShadow, uint32_t &epoch,
           uint32_t blockSerial)
      : memory(device.getMemory()), module(module), kernel(kernel), grid(grid),
        block(block), blockIdx(blockIdx), params(params), stats(stats),
        footprint(footprint), sharedShadow(sharedShadow), epoch(epoch),
        blockSerial(blockSerial) {
    numThreads = static_cast<uint32_t>(block.count());
    uint64_t dynamicAlign = 16;
    for (const Symbol &symbol : kernel.symbols)
      if (symbol.dynamicShared)
        dynamicAlign = std::max<uint64_t>(dynamicAlign, symbol.align);
    dynamicBase =
        (kernel.staticShared + dynamicAlign - 1) / dynamicAlign * dynamicAlign;
    dynamicBytes = dynamicShared;
    // Fresh shared and local memory hold all-ones bytes (a NaN in every
    // float format), so that code reading what it never wrote is likely to
    // show it in its results.
    shared.assign(dynamicBase + dynamicShared, 0xff);
    if (sharedShadow.size() < shared.size())
      sharedShadow.resize(shared.size());
    ++epoch;
    local.assign(kernel.localBytes * numThreads, 0xff);
    uint32_t numWarps = (numThreads + kWarpSize - 1) / kWarpSize;
    warps.resize(numWarps);
    for (uint32_t w = 0; w < numWarps; ++w) {
      Warp &warp = warps[w];
      warp.index = w;
      uint32_t lanes = std::min(kWarpSize, numThreads - w * kWarpSize);
      warp.live = lanes == 32 ? ~0u : ((1u << lanes) - 1);
      warp.regs.assign(size_t(kernel.numRegs) * kWarpSize, 0);
    }
  }

  bool run(std::string &error);
  /// The fences at the GPU's scope the block's threads executed.
  uint32_t getGpuFences() const { return gpuFences; }

  // HopperHost: what mbarrier, bulk copies and wgmma use (Hopper.cpp).
  uint32_t getNumWarps() const override {
    return static_cast<uint32_t>(warps.size());
  }
  uint32_t getLiveLanes(uint32_t w) const override { return warps[w].live; }
  uint64_t readOperand(uint32_t w, const Operand &op,
                       unsigned lane) const override {
    return read(warps[w], op, lane);
  }
  uint64_t readReg(uint32_t w, uint32_t reg, unsigned lane) const override {
    return reg == kNoReg ? 0 : warps[w].regs[size_t(reg) * kWarpSize + lane];
  }
  void writeReg(uint32_t w, uint32_t reg, unsigned lane,
                uint64_t value) override {
    write(warps[w], reg, lane, value);
  }
  uint64_t getAddress(uint32_t w, const Operand &op, unsigned lane,
                      Space space) const override {
    return getAddress(warps[w], op, lane, space);
  }
  uint8_t *access(uint32_t w, unsigned lane, const Instruction &inst,
                  Space space, uint64_t address, uint64_t bytes, bool store,
                  bool atomic) override {
    return resolve(warps[w], lane, inst, space, address, bytes, store, atomic);
  }
  uint8_t *accessSharedAsync(uint64_t offset, uint64_t bytes, bool store,
                             std::string &error) override;
  uint8_t *accessGlobalAsync(uint64_t address, uint64_t bytes,
                             std::string &error) override;
  void countAsyncGlobal(bool load,
                        const std::vector<uint64_t> &addresses) override;
  const uint8_t *accessParam(uint64_t offset, uint64_t bytes) override {
    if (offset + bytes > params.size() || offset + bytes < offset)
      return nullptr;
    return params.data() + offset;
  }
  std::string getRegName(uint32_t reg) const override {
    return kernel.regNames[reg];
  }
  const Instruction &getInstruction(uint32_t pc) const override {
    return kernel.code[pc];
  }
  bool fail(uint32_t w, unsigned lane, const Instruction &inst,
            const std::string &message) override {
    return fail(warps[w], lane, inst, message);
  }
  void synchronizeShared() override { ++epoch; }

private:
  RIDGE_EXECUTOR_LOCAL bool runWarp(Warp &warp);
  /// Runs the Hopper unit's side of a round: performs the copies in flight,
  /// lets suspended waits retry, and reports a deadlock when nothing can
  /// change any more. Sets `again` when the warps must run another round
  /// before a bar.sync can complete.
  RIDGE_EXECUTOR_LOCAL bool finishRound(uint64_t versionBefore, bool &again);
  RIDGE_EXECUTOR_LOCAL bool execute(Warp &warp, uint32_t pc, uint32_t active);
  RIDGE_EXECUTOR_LOCAL bool executeLanes(Warp &warp, const Instruction &inst,
                                         uint32_t exec);
  RIDGE_EXECUTOR_LOCAL bool
  executeFastArithmetic(Warp &warp, const Instruction &inst, uint32_t exec);
  /// The 32 lanes of a source operand: its register row, or `scratch`
  /// filled with an immediate or other operand's lanes.
  const uint64_t *getLanes(const Warp &warp, const Operand &op, uint32_t exec,
                           uint64_t (&scratch)[kWarpSize]) const {
    if (op.kind == OperandKind::Reg && !op.negate)
      return &warp.regs[size_t(op.reg) * kWarpSize];
    if (op.kind == OperandKind::Imm) {
      std::fill(scratch, scratch + kWarpSize, static_cast<uint64_t>(op.imm));
      return scratch;
    }
    for (uint32_t m = exec; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      scratch[lane] = read(warp, op, lane);
    }
    return scratch;
  }

  uint64_t read(const Warp &warp, const Operand &op, unsigned lane) const {
    switch (op.kind) {
    case OperandKind::Reg: {
      uint64_t value = warp.regs[size_t(op.reg) * kWarpSize + lane];
      return op.negate ? (value ? 0 : 1) : value;
    }
    case OperandKind::Imm:
      return static_cast<uint64_t>(op.imm);
    case OperandKind::Special:
      return readSpecial(warp, op, lane);
    case OperandKind::Symbol:
      return getSymbolAddress(op.symbol, /*generic=*/false);
    default:
      return 0;
    }
  }
  /// Element `e` of a vector operand: a register, an immediate, or 0 for '_'.
  uint64_t readElement(const Warp &warp, const Operand &op, unsigned e,
                       unsigned lane) const {
    if ((op.immMask >> e) & 1)
      return op.vectorImms[e];
    return op.regs[e] == kNoReg
               ? 0
               : warp.regs[size_t(op.regs[e]) * kWarpSize + lane];
  }
  void write(Warp &warp, uint32_t reg, unsigned lane, uint64_t value) {
    if (reg != kNoReg)
      warp.regs[size_t(reg) * kWarpSize + lane] = value;
  }
  uint64_t readSpecial(const Warp &warp, const Operand &op,
                       unsigned lane) const;
  uint64_t getSymbolAddress(int32_t symbol, bool generic) const;

  /// Host pointer for an access of `bytes` at `address` in `space`, or null
  /// after reporting why.
  uint8_t *resolve(const Warp &warp, unsigned lane, const Instruction &inst,
                   Space space, uint64_t address, uint64_t bytes, bool store,
                   bool atomic = false);
  uint64_t getAddress(const Warp &warp, const Operand &op, unsigned lane,
                      Space space) const {
    uint64_t address =
        op.reg != kNoReg ? warp.regs[size_t(op.reg) * kWarpSize + lane] : 0;
    if (op.symbol >= 0)
      address += getSymbolAddress(op.symbol, space == Space::Generic);
    return address + static_cast<uint64_t>(op.imm);
  }

  bool fail(const Warp &warp, unsigned lane, const Instruction &inst,
            const std::string &message);
  RIDGE_EXECUTOR_LOCAL std::string describeThread(const Warp &warp,
                                                  unsigned lane) const;
  /// "(x,y,z)" of the thread with linear index `t` in the block.
  std::string describeThreadIndex(uint32_t t) const;

  /// Checks an access of [offset, offset + bytes) of shared memory by one
  /// lane against what other threads did in this barrier interval (races)
  /// and whether the block has written it before (uninitialized reads), and
  /// records it. Atomics are ordered among themselves and record no access.
  /// (SharedChecks.cpp)
  bool checkShared(const Warp &warp, unsigned lane, const Instruction &inst,
                   uint64_t offset, uint64_t bytes, bool store, bool atomic);
  /// Completes the barriers whose threads have all arrived; `released`
  /// says whether one did.
  RIDGE_EXECUTOR_LOCAL bool completeBarriers(bool &released);
  /// Every live thread waits at a barrier that cannot complete.
  RIDGE_EXECUTOR_LOCAL bool reportBarrierDeadlock(std::string &error);

  /// The state space a resolved host pointer lies in.
  RIDGE_EXECUTOR_LOCAL Space getSpaceOf(const uint8_t *host) const;
  /// Adds `lane`'s access at `host` to `access` if it reached `space`, the
  /// space of the instruction's first lane (set here for a generic one).
  RIDGE_EXECUTOR_LOCAL void addLaneAccess(WarpAccess &access,
                                          const Instruction &inst, Space &space,
                                          unsigned lane,
                                          const uint8_t *host) const;
  /// Counts one warp-level memory instruction whose active lanes reached
  /// `space`: its class, and the sectors or wavefronts of its request.
  RIDGE_EXECUTOR_LOCAL void countAccess(const Instruction &inst, Space space,
                                        const WarpAccess &access);

  /// Blocks of one launch run one after another here, so a block that
  /// reads what another stored in the launch always sees it; on a GPU it
  /// does only if the writer released its stores (a fence at the GPU's
  /// scope after them, by any of its threads: a barrier before the fence
  /// makes it cover the block's stores) and the reader acquired them (such
  /// a fence after an atomic, the arrival it learned of the stores by, or
  /// any such fence if it has no atomic). Records the words a global store
  /// writes; fails a global load of a word another block stored without
  /// either fence.
  RIDGE_EXECUTOR_LOCAL bool orderGlobalAccess(const Warp &warp,
                                              const Instruction &inst,
                                              const WarpAccess &access,
                                              bool isLoad);
  RIDGE_EXECUTOR_LOCAL bool memoryOp(Warp &warp, const Instruction &inst,
                                     uint32_t exec);
  RIDGE_EXECUTOR_LOCAL bool atomicOp(Warp &warp, const Instruction &inst,
                                     uint32_t exec);
  // Warp-collective instructions (WarpCollectives.cpp).
  bool shuffle(Warp &warp, const Instruction &inst, uint32_t exec);
  bool vote(Warp &warp, const Instruction &inst, uint32_t exec);
  // Tensor-core and cp.async instructions (MatrixInstructions.cpp; semantics
  // in WarpMatrix.cpp and AsyncCopy.cpp).
  bool requireWholeWarp(const Warp &warp, const Instruction &inst,
                        uint32_t exec);
  bool matrixOp(Warp &warp, const Instruction &inst, uint32_t exec);
  bool wmmaMemoryOp(Warp &warp, const Instruction &inst, uint32_t exec);
  bool matrixRowsOp(Warp &warp, const Instruction &inst, uint32_t exec);
  bool asyncCopyOp(Warp &warp, const Instruction &inst, uint32_t exec);
  bool checkAsyncCopies(const Warp &warp, unsigned lane,
                        const Instruction &inst, uint64_t offset,
                        uint64_t bytes, bool store);

  DeviceMemory &memory;
  const LoadedModule &module;
  const PtxFunction &kernel;
  Dim3 grid, block, blockIdx;
  const std::vector<uint8_t> &params;
  LaunchStats &stats;
  LaunchFootprint &footprint;
  uint32_t numThreads = 0;
  uint64_t dynamicBase = 0, dynamicBytes = 0;
  std::vector<uint8_t> shared, local;
  std::vector<Warp> warps;
  std::vector<SharedByteShadow> &sharedShadow;
  uint32_t &epoch;
  uint32_t blockSerial;
  /// The 16 named barriers of the block (bar.sync/bar.arrive a, b): the
  /// threads each expects in its current phase (0: every thread of the
  /// block, exited ones counting as arrived) and the threads that arrived
  /// without waiting (bar.arrive).
  static constexpr unsigned kNumBarriers = 16;
  uint32_t barrierExpected[kNumBarriers] = {};
  uint32_t barrierArrived[kNumBarriers] = {};
  AsyncCopyTracker asyncCopies;
  std::string errorText;
  std::unique_ptr<HopperUnit> hopper; // created by the first Hopper instruction
  uint32_t proxyFences = 1; // fence.proxy.async executed in the block, + 1
  uint64_t idleRounds = 0;
  /// Fences at the GPU's (or the system's) scope the block's threads
  /// executed; whether one of its threads executed a global atomic, and
  /// such a fence after one (orderGlobalAccess).
  uint32_t gpuFences = 0;
  bool sawAtomic = false, fencedAfterAtomic = false;
};

} // namespace ridge::emu::detail

#endif // RIDGELINE_LIB_EMULATOR_BLOCKRUN_H
