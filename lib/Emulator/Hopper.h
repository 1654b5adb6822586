//===- Hopper.h - sm_90a asynchronous instructions (private) ----*- C++ -*-===//
//
// The Hopper instructions: mbarrier, the bulk and tensor copies of the async
// proxy (cp.async.bulk[.tensor], TMA) and wgmma. Their semantics live in
// Hopper.cpp, apart from the executor's scheduling, behind two seams:
//
// - decodeHopper() turns their modifiers and operands into an Instruction
//   (the parser calls it for the opcodes isHopperOpcode() names);
// - HopperUnit holds one block's asynchronous state (its mbarriers, the
//   bulk copies in flight, each warp's wgmma groups) and executes those
//   instructions through HopperHost, the executor's register file and
//   checked memory accesses.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_EMULATOR_HOPPER_H
#define RIDGELINE_LIB_EMULATOR_HOPPER_H

#include "ridgeline/Emulator/Ptx.h"

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ridge::emu::detail {

/// Whether the parser hands `opcodeText` (split at dots) to decodeHopper.
bool isHopperOpcode(const std::vector<std::string> &parts);

/// Decodes a Hopper instruction whose operands are already parsed. Long
/// vector operands (more than 8 elements) come with their extra registers
/// in `extraRegs`, one list per operand. False with `error` if a modifier or
/// operand is not supported.
bool decodeHopper(Instruction &inst, const std::vector<std::string> &parts,
                  std::vector<Operand> operands,
                  const std::vector<std::vector<uint32_t>> &extraRegs,
                  std::string &error);

/// What the executor lends the Hopper unit: one warp's registers and the
/// block's checked memory.
class HopperHost {
public:
  virtual ~HopperHost() = default;
  virtual uint32_t getNumWarps() const = 0;
  virtual uint32_t getLiveLanes(uint32_t warp) const = 0;
  virtual uint64_t readOperand(uint32_t warp, const Operand &op,
                               unsigned lane) const = 0;
  virtual uint64_t readReg(uint32_t warp, uint32_t reg,
                           unsigned lane) const = 0;
  virtual void writeReg(uint32_t warp, uint32_t reg, unsigned lane,
                        uint64_t value) = 0;
  /// The address an Address operand names, before space classification.
  virtual uint64_t getAddress(uint32_t warp, const Operand &op, unsigned lane,
                              Space space) const = 0;
  /// A thread's checked access (bounds, alignment, races, uninitialized
  /// reads), as ld/st/atom do; null after reporting.
  virtual uint8_t *access(uint32_t warp, unsigned lane, const Instruction &inst,
                          Space space, uint64_t address, uint64_t bytes,
                          bool store, bool atomic) = 0;
  /// The block's shared memory [offset, offset + bytes) for the async
  /// proxy, bounds-checked; a read also checks that the block wrote it.
  /// Async writes are ordered by mbarriers, not by bar.sync, so they are
  /// recorded as initializing the bytes without a writer to race with.
  virtual uint8_t *accessSharedAsync(uint64_t offset, uint64_t bytes,
                                     bool store, std::string &error) = 0;
  /// Global memory [address, address + bytes) for the async proxy, checked
  /// against the allocation table; null with `error`.
  virtual uint8_t *accessGlobalAsync(uint64_t address, uint64_t bytes,
                                     std::string &error) = 0;
  /// Counts global bytes the async proxy moved for the block (a bulk or
  /// tensor copy), as requests of the 16-byte pieces at `addresses`:
  /// DRAM traffic the threads did not request themselves.
  virtual void countAsyncGlobal(bool load,
                                const std::vector<uint64_t> &addresses) = 0;
  /// The kernel's parameter bytes at a generic or .param address.
  virtual const uint8_t *accessParam(uint64_t address, uint64_t bytes) = 0;
  virtual std::string getRegName(uint32_t reg) const = 0;
  virtual const Instruction &getInstruction(uint32_t pc) const = 0;
  /// Reports an error at one thread of the block; returns false.
  virtual bool fail(uint32_t warp, unsigned lane, const Instruction &inst,
                    const std::string &message) = 0;
  /// A completed mbarrier phase orders the arrivals before it with the
  /// waits after it: the shared-memory checks start a new interval.
  virtual void synchronizeShared() = 0;
};

/// What an executed Hopper instruction asks of the scheduler.
struct HopperStep {
  /// Lanes suspended at the instruction (mbarrier.try_wait on an incomplete
  /// phase): they stay at its PC and retry when the warp runs again.
  uint32_t suspended = 0;
  /// The warp should let the others run (a failed wait).
  bool yield = false;
};

class HopperUnit {
public:
  explicit HopperUnit(HopperHost &host) : host(host) {}

  bool execute(uint32_t warp, const Instruction &inst, uint32_t pc,
               uint32_t exec, HopperStep &step);
  /// Whether the instructions of `warp` need checkOperands: it has wgmma
  /// registers in flight, or a wgmma.fence that an access to a wgmma
  /// register would make stale.
  bool needsOperandCheck(uint32_t warp) const {
    return warp < warps.size() &&
           (!warps[warp].inflightRegs.empty() ||
            (warps[warp].fenced && !warps[warp].wgmmaRegs.empty()));
  }
  /// Refuses an instruction other than wgmma that names an accumulator or A
  /// register of a wgmma.mma_async not yet retired by wgmma.wait_group, and
  /// notes an access to a retired one: the next wgmma.mma_async then needs
  /// a wgmma.fence.
  bool checkOperands(uint32_t warp, const Instruction &inst, uint32_t exec);
  /// Performs the bulk copies in flight, as the async proxy would while the
  /// warps wait; returns false with `error` on a bad access.
  bool drain(std::string &error);
  bool hasCopiesInFlight() const { return !copies.empty(); }
  /// Bumped by every change that could let a waiting thread go on (an
  /// arrival, a transaction, a completed copy).
  uint64_t getVersion() const { return version; }
  /// Describes why a suspended lane of `warp` at `inst` waits.
  std::string describeWait(uint32_t warp, const Instruction &inst,
                           unsigned lane) const;
  /// At the end of the block: performs the copies still in flight and
  /// checks that each warpgroup's warps issued the same wgmma sequence.
  /// False after reporting through the host.
  bool finish();

private:
  struct Mbarrier {
    uint32_t expected = 0; // arrivals per phase
    uint32_t pending = 0;  // arrivals still missing in this phase
    int64_t tx = 0;        // transaction bytes still expected
    uint64_t phase = 0;    // completed phases
    uint32_t initLine = 0;
  };
  struct Copy {
    enum Kind : uint8_t { Load, Store, TensorLoad, TensorStore } kind = Load;
    uint64_t shared = 0, global = 0, bytes = 0;
    uint64_t mbarrier = ~0ull; // shared offset of the completing barrier
    std::vector<uint8_t> tensorMap;
    int64_t coords[5] = {};
    uint32_t warp = 0, lane = 0;
    const Instruction *inst = nullptr; // the issuing instruction
    uint64_t group = 0; // bulk async-group (stores; 0: not committed)
  };
  struct WgmmaGroup {
    std::vector<uint32_t> regs;
  };
  struct InFlight {
    uint32_t count = 0; // wgmma groups (and the open one) writing it
    uint32_t line = 0;  // the latest wgmma.mma_async writing it
  };
  struct WarpState {
    std::vector<uint32_t> uncommitted; // accumulators of the open group
    std::deque<WgmmaGroup> groups;     // committed, oldest first
    std::map<uint32_t, InFlight> inflightRegs;
    std::vector<uint32_t> wgmmaPcs; // warpgroup-convergence record
    uint64_t committedBulkGroups = 0;
    /// Registers that wgmma.mma_async has used (accumulators, A fragments).
    std::set<uint32_t> wgmmaRegs;
    /// A wgmma.fence with no access to those registers by other
    /// instructions since.
    bool fenced = false;
  };

  WarpState &getWarp(uint32_t warp) {
    if (warps.size() <= warp)
      warps.resize(host.getNumWarps());
    return warps[warp];
  }
  bool mbarrierOp(uint32_t warp, const Instruction &inst, uint32_t exec,
                  HopperStep &step);
  bool bulkOp(uint32_t warp, const Instruction &inst, uint32_t exec);
  bool wgmmaOp(uint32_t warp, const Instruction &inst, uint32_t pc,
               uint32_t exec);
  bool mma(uint32_t warp, const Instruction &inst, uint32_t exec);
  /// The shared offset of an mbarrier operand; false after reporting.
  bool getMbarrier(uint32_t warp, unsigned lane, const Instruction &inst,
                   const Operand &op, uint64_t &offset, bool init);
  void arrive(Mbarrier &barrier, uint32_t count);
  void completeTx(Mbarrier &barrier, int64_t bytes);
  void maybeComplete(Mbarrier &barrier);
  bool performCopy(const Copy &copy, std::string &error);

  HopperHost &host;
  std::map<uint64_t, Mbarrier> mbarriers; // by shared offset
  std::deque<Copy> copies;
  std::vector<WarpState> warps;
  uint64_t version = 0;
};

} // namespace ridge::emu::detail

#endif // RIDGELINE_LIB_EMULATOR_HOPPER_H
