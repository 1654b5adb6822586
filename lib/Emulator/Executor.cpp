//===- Executor.cpp - Warp-lockstep execution of decoded PTX --------------===//
//
// One block at a time, each warp run until all its live lanes wait at a
// barrier or have exited; then the barrier releases. Within a warp, the
// lanes at the lowest PC issue together (the active mask): lanes that branch
// apart run one side after the other and reconverge where their PCs meet,
// which for the structured control flow compilers emit is the immediate
// post-dominator. Warp-collective instructions (shfl.sync, vote.sync) require
// every lane of their member mask to issue together, as PTX demands.
//
// Registers are stored per warp, register-major (32 lanes of a register side
// by side), as raw bits zero-extended to 64; an instruction's type says how
// to read them.
//
// BlockRun, one block's state, is declared in BlockRun.h; this file holds
// its scheduling and the per-instruction path, and BlockRun.h names the
// files that hold the rest.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Emulator/Emulator.h"

#include "BlockRun.h"
#include "LaneArithmetic.h"
#include "ridgeline/Emulator/FloatFormats.h"

#include <algorithm>
#include <cfenv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

using namespace ridge::emu;
using namespace ridge::emu::detail;

namespace {

/// A launch that issues more warp instructions than this is reported as not
/// terminating instead of hanging the host.
constexpr uint64_t kMaxWarpInstructionsPerLaunch = uint64_t(1) << 36;
/// Rounds of the block's warps in which some warp polls an mbarrier with
/// test_wait and no barrier or copy changes before the block is reported as
/// deadlocked. (A warp suspended in try_wait is a deadlock at once when a
/// round changes nothing.)
constexpr uint64_t kMaxIdlePollingRounds = uint64_t(1) << 16;

const char *getSpaceName(Space space) {
  switch (space) {
  case Space::Generic:
    return "generic";
  case Space::Global:
    return "global";
  case Space::Shared:
    return "shared";
  case Space::Local:
    return "local";
  case Space::Param:
    return "param";
  case Space::Const:
    return "const";
  }
  return "";
}

/// Instructions that all lanes of their member mask execute together.
bool isWarpCollective(const Instruction &inst) {
  return inst.opcode == Opcode::Shfl || inst.opcode == Opcode::Vote ||
         inst.opcode == Opcode::Elect || inst.opcode == Opcode::Wgmma ||
         (inst.opcode == Opcode::Bar && inst.mode == 1);
}

/// `bytes` (1, 2, 4 or 8) little-endian bytes at `at`, zero-extended: a
/// fixed-size copy per width, which compiles to one move where a memcpy of
/// a variable size is a call.
uint64_t loadBytes(const uint8_t *at, unsigned bytes) {
  switch (bytes) {
  case 4: {
    uint32_t v;
    std::memcpy(&v, at, 4);
    return v;
  }
  case 8: {
    uint64_t v;
    std::memcpy(&v, at, 8);
    return v;
  }
  case 2: {
    uint16_t v;
    std::memcpy(&v, at, 2);
    return v;
  }
  default: {
    uint64_t v = 0;
    std::memcpy(&v, at, bytes);
    return v;
  }
  }
}

void storeBytes(uint8_t *at, uint64_t value, unsigned bytes) {
  switch (bytes) {
  case 4: {
    uint32_t v = static_cast<uint32_t>(value);
    std::memcpy(at, &v, 4);
    return;
  }
  case 8:
    std::memcpy(at, &value, 8);
    return;
  case 2: {
    uint16_t v = static_cast<uint16_t>(value);
    std::memcpy(at, &v, 2);
    return;
  }
  default:
    std::memcpy(at, &value, bytes);
    return;
  }
}

} // namespace

namespace ridge::emu::detail {

std::string BlockRun::describeThread(const Warp &warp, unsigned lane) const {
  return "block (" + std::to_string(blockIdx.x) + "," +
         std::to_string(blockIdx.y) + "," + std::to_string(blockIdx.z) +
         "), thread " + describeThreadIndex(warp.index * kWarpSize + lane);
}

std::string BlockRun::describeThreadIndex(uint32_t t) const {
  uint32_t x = t % block.x, y = (t / block.x) % block.y,
           z = t / (block.x * block.y);
  return "(" + std::to_string(x) + "," + std::to_string(y) + "," +
         std::to_string(z) + ")";
}

bool BlockRun::fail(const Warp &warp, unsigned lane, const Instruction &inst,
                    const std::string &message) {
  if (errorText.empty())
    errorText = "kernel '" + kernel.name + "', " + describeThread(warp, lane) +
                ", PTX line " + std::to_string(inst.line) + " (" + inst.text +
                "): " + message;
  return false;
}

uint64_t BlockRun::readSpecial(const Warp &warp, const Operand &op,
                               unsigned lane) const {
  auto pick = [&](const Dim3 &dims) -> uint64_t {
    return op.dim == 0 ? dims.x : op.dim == 1 ? dims.y : dims.z;
  };
  uint32_t t = warp.index * kWarpSize + lane;
  switch (op.special) {
  case SpecialReg::Tid: {
    Dim3 tid{t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
    return pick(tid);
  }
  case SpecialReg::Ntid:
    return pick(block);
  case SpecialReg::Ctaid:
    return pick(blockIdx);
  case SpecialReg::Nctaid:
    return pick(grid);
  case SpecialReg::LaneId:
    return lane;
  case SpecialReg::WarpId:
    return warp.index;
  case SpecialReg::NWarpId:
    return 64;
  case SpecialReg::SmId:
    return 0;
  case SpecialReg::LaneMaskLt:
    return (1ull << lane) - 1;
  case SpecialReg::LaneMaskLe:
    return (2ull << lane) - 1;
  case SpecialReg::LaneMaskEq:
    return 1ull << lane;
  case SpecialReg::LaneMaskGe:
    return ~((1ull << lane) - 1) & 0xffffffffull;
  case SpecialReg::LaneMaskGt:
    return ~((2ull << lane) - 1) & 0xffffffffull;
  case SpecialReg::Clock:
  case SpecialReg::Clock64:
  case SpecialReg::GlobalTimer:
    return stats.warpInstructions;
  case SpecialReg::DynamicSmemSize:
    return dynamicBytes;
  case SpecialReg::TotalSmemSize:
    return shared.size();
  }
  return 0;
}

uint64_t BlockRun::getSymbolAddress(int32_t index, bool generic) const {
  const Symbol &symbol = kernel.symbols[index];
  switch (symbol.space) {
  case Space::Shared:
    return (symbol.dynamicShared ? dynamicBase : symbol.offset) +
           (generic ? DeviceMemory::kSharedWindow : 0);
  case Space::Local:
    return symbol.offset + (generic ? DeviceMemory::kLocalWindow : 0);
  case Space::Param:
    return symbol.offset + (generic ? DeviceMemory::kParamWindow : 0);
  default:
    return symbol.global >= 0 ? module.globalAddresses[symbol.global] : 0;
  }
}

uint8_t *BlockRun::resolve(const Warp &warp, unsigned lane,
                           const Instruction &inst, Space space,
                           uint64_t address, uint64_t bytes, bool store,
                           bool atomic) {
  const char *what = store ? "store" : "load";
  auto hex = [](uint64_t value) {
    char text[32];
    std::snprintf(text, sizeof(text), "0x%llx",
                  static_cast<unsigned long long>(value));
    return std::string(text);
  };
  if (bytes > 1 && (address % bytes) != 0)
    return fail(warp, lane, inst,
                "misaligned " + std::string(getSpaceName(space)) + " " + what +
                    " of " + std::to_string(bytes) + " bytes at " +
                    hex(address)),
           nullptr;
  if (space == Space::Generic) {
    if (address >= DeviceMemory::kSharedWindow &&
        address < DeviceMemory::kSharedWindow + DeviceMemory::kWindowSize) {
      space = Space::Shared;
      address -= DeviceMemory::kSharedWindow;
    } else if (address >= DeviceMemory::kLocalWindow &&
               address <
                   DeviceMemory::kLocalWindow + DeviceMemory::kWindowSize) {
      space = Space::Local;
      address -= DeviceMemory::kLocalWindow;
    } else if (address >= DeviceMemory::kParamWindow &&
               address <
                   DeviceMemory::kParamWindow + DeviceMemory::kWindowSize) {
      space = Space::Param;
      address -= DeviceMemory::kParamWindow;
    } else {
      space = Space::Global;
    }
  }
  switch (space) {
  case Space::Shared:
    if (address + bytes > shared.size() || address + bytes < address)
      return fail(warp, lane, inst,
                  "out-of-bounds shared " + std::string(what) + " of " +
                      std::to_string(bytes) + " bytes at offset " +
                      std::to_string(address) + " (the block has " +
                      std::to_string(shared.size()) + " bytes)"),
             nullptr;
    if (!asyncCopies.empty() &&
        !checkAsyncCopies(warp, lane, inst, address, bytes, store))
      return nullptr;
    if (!checkShared(warp, lane, inst, address, bytes, store, atomic))
      return nullptr;
    return shared.data() + address;
  case Space::Local: {
    uint64_t thread = warp.index * kWarpSize + lane;
    if (address + bytes > kernel.localBytes || address + bytes < address)
      return fail(warp, lane, inst,
                  "out-of-bounds local " + std::string(what) + " of " +
                      std::to_string(bytes) + " bytes at offset " +
                      std::to_string(address) + " (a thread has " +
                      std::to_string(kernel.localBytes) + " bytes)"),
             nullptr;
    return local.data() + thread * kernel.localBytes + address;
  }
  case Space::Param:
    if (store)
      return fail(warp, lane, inst, "store to a kernel parameter"), nullptr;
    if (address + bytes > params.size() || address + bytes < address)
      return fail(warp, lane, inst,
                  "parameter load of " + std::to_string(bytes) +
                      " bytes at offset " + std::to_string(address) +
                      " past the " + std::to_string(params.size()) +
                      " bytes of parameters"),
             nullptr;
    return const_cast<uint8_t *>(params.data()) + address;
  default: {
    if (const DeviceMemory::Allocation *allocation =
            memory.find(address, bytes)) {
      (void)allocation;
      return reinterpret_cast<uint8_t *>(address);
    }
    std::string where = "not in any device allocation";
    if (const DeviceMemory::Allocation *near = memory.nearest(address)) {
      if (address < near->base + near->size)
        where = std::to_string(address + bytes - (near->base + near->size)) +
                " bytes past the end of";
      else
        where = std::to_string(address - (near->base + near->size)) +
                " bytes after the end of";
      where +=
          " buffer " +
          (near->label.empty() ? hex(near->base) : "'" + near->label + "'") +
          " (" + std::to_string(near->size) + " bytes at " + hex(near->base) +
          ")";
    }
    return fail(warp, lane, inst,
                "out-of-bounds global " + std::string(what) + " of " +
                    std::to_string(bytes) + " bytes at " + hex(address) + ": " +
                    where),
           nullptr;
  }
  }
}

uint8_t *BlockRun::accessGlobalAsync(uint64_t address, uint64_t bytes,
                                     std::string &error) {
  if (memory.find(address, bytes))
    return reinterpret_cast<uint8_t *>(address);
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx",
                static_cast<unsigned long long>(address));
  error = "global access of " + std::to_string(bytes) + " bytes at " + text +
          " is not in any device allocation";
  return nullptr;
}

void BlockRun::countAsyncGlobal(bool load,
                                const std::vector<uint64_t> &addresses) {
  // 32 pieces of 16 bytes a request, as a warp's 16-byte accesses would be:
  // the bytes and the distinct sectors are what the counters compare.
  constexpr unsigned kPieceBytes = 16;
  for (size_t first = 0; first < addresses.size(); first += kWarpSize) {
    WarpAccess access;
    access.bytes = kPieceBytes;
    size_t count = std::min<size_t>(kWarpSize, addresses.size() - first);
    for (size_t i = 0; i < count; ++i) {
      access.lanes |= 1u << i;
      access.address[i] = addresses[first + i];
    }
    if (load)
      countGlobalAccess(stats.globalLoad, access, &footprint.load,
                        &footprint.store);
    else
      countGlobalAccess(stats.globalStore, access, &footprint.store);
  }
}

bool BlockRun::completeBarriers(bool &released) {
  released = false;
  uint32_t waitingAt[kNumBarriers] = {};
  const Warp *firstWarp[kNumBarriers] = {};
  unsigned firstLane[kNumBarriers] = {};
  uint32_t exited = 0;
  for (Warp &warp : warps) {
    uint32_t lanes = std::min(kWarpSize, numThreads - warp.index * kWarpSize);
    uint32_t all = lanes == 32 ? ~0u : ((1u << lanes) - 1);
    exited += __builtin_popcount(all & ~warp.live);
    for (uint32_t m = warp.waiting; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      unsigned id = warp.barrierId[lane];
      ++waitingAt[id];
      if (!firstWarp[id]) {
        firstWarp[id] = &warp;
        firstLane[id] = lane;
        continue;
      }
      // Threads of a block waiting for barrier 0 as a whole at two
      // different bar.sync instructions is barrier divergence, which
      // deadlocks or silently splits the block on hardware. Named barriers
      // with a count are waited for at different places on purpose
      // (producer and consumer warps).
      uint32_t pc = warp.barrierPc[lane];
      uint32_t firstPc = firstWarp[id]->barrierPc[firstLane[id]];
      if (barrierExpected[id] == 0 && pc != firstPc)
        return fail(warp, lane, kernel.code[pc],
                    "barrier divergence: this thread waits at PTX line " +
                        std::to_string(kernel.code[pc].line) +
                        " while thread " +
                        describeThreadIndex(firstWarp[id]->index * kWarpSize +
                                            firstLane[id]) +
                        " waits at PTX line " +
                        std::to_string(kernel.code[firstPc].line));
    }
  }
  for (unsigned id = 0; id < kNumBarriers; ++id) {
    if (!waitingAt[id])
      continue;
    uint32_t arrived = waitingAt[id] + barrierArrived[id];
    bool complete = barrierExpected[id] == 0 ? arrived + exited >= numThreads
                                             : arrived >= barrierExpected[id];
    if (!complete)
      continue;
    for (Warp &warp : warps)
      for (uint32_t m = warp.waiting; m; m &= m - 1) {
        unsigned lane = __builtin_ctz(m);
        if (warp.barrierId[lane] == id)
          warp.waiting &= ~(1u << lane);
      }
    barrierExpected[id] = barrierArrived[id] = 0;
    released = true;
  }
  // A barrier orders what its threads did before it against what they do
  // after; the race checks start a new interval (which may hide a race
  // between threads that a named barrier over part of the block does not
  // order, never report one that is not there).
  if (released)
    ++epoch;
  return true;
}

bool BlockRun::run(std::string &error) {
  while (true) {
    uint64_t versionBefore = hopper ? hopper->getVersion() : 0;
    for (Warp &warp : warps)
      if (!runWarp(warp)) {
        error = errorText;
        return false;
      }
    if (hopper) {
      bool again = false;
      if (!finishRound(versionBefore, again)) {
        error = errorText;
        return false;
      }
      if (again)
        continue;
    }
    // Every warp waits at the barrier or has exited: the barrier completes
    // (exited threads count as arrived).
    bool anyWaiting = false;
    for (Warp &warp : warps)
      anyWaiting |= warp.waiting != 0;
    if (!anyWaiting) {
      if (hopper && !hopper->finish()) {
        error = errorText;
        return false;
      }
      return true;
    }
    bool released = false;
    if (!completeBarriers(released)) {
      error = errorText;
      return false;
    }
    if (!released)
      return reportBarrierDeadlock(error);
  }
}

bool BlockRun::reportBarrierDeadlock(std::string &error) {
  for (Warp &warp : warps)
    if (warp.waiting) {
      unsigned lane = __builtin_ctz(warp.waiting);
      unsigned id = warp.barrierId[lane];
      uint32_t waiting = 0;
      for (Warp &other : warps)
        for (uint32_t m = other.waiting; m; m &= m - 1)
          waiting += other.barrierId[__builtin_ctz(m)] == id;
      std::string expected = barrierExpected[id]
                                 ? std::to_string(barrierExpected[id])
                                 : "all " + std::to_string(numThreads);
      fail(warp, lane, kernel.code[warp.barrierPc[lane]],
           "deadlock: the thread waits at barrier " + std::to_string(id) +
               " for " + expected + " threads, and " +
               std::to_string(waiting + barrierArrived[id]) +
               " have arrived; no other thread can arrive (every live thread "
               "waits or has exited)");
      break;
    }
  error = errorText;
  return false;
}

bool BlockRun::finishRound(uint64_t versionBefore, bool &again) {
  const Warp *suspendedWarp = nullptr, *polledWarp = nullptr;
  for (Warp &warp : warps) {
    if (warp.suspended && !suspendedWarp)
      suspendedWarp = &warp;
    if (warp.polled && !polledWarp)
      polledWarp = &warp;
  }
  bool polled = polledWarp != nullptr;
  again = suspendedWarp || polled;
  if (!again) {
    // Copies stay in flight across a bar.sync: only an mbarrier (or
    // cp.async.bulk.wait_group, or the end of the block) waits for them, so
    // a thread that reads a copy's destination after a bar.sync alone reads
    // memory nobody wrote.
    idleRounds = 0;
    return true;
  }
  // Every warp waits: the async proxy performs the copies in flight.
  bool copied = hopper->hasCopiesInFlight();
  std::string ignored;
  if (!hopper->drain(ignored))
    return false;
  bool changed = copied || hopper->getVersion() != versionBefore;
  idleRounds = changed ? 0 : idleRounds + 1;
  if (idleRounds > (polled ? kMaxIdlePollingRounds : 0)) {
    // No arrival, transaction or copy happened in a whole round: nothing
    // can complete the phases the warps wait for.
    const Warp &warp = suspendedWarp ? *suspendedWarp : *polledWarp;
    unsigned lane =
        suspendedWarp ? __builtin_ctz(warp.suspended) : warp.polledLane;
    const Instruction &inst =
        kernel.code[suspendedWarp ? warp.pc[lane] : warp.polledPc];
    std::string what = inst.opcode == Opcode::Mbarrier
                           ? hopper->describeWait(warp.index, inst, lane)
                           : "an mbarrier";
    return fail(warp, lane, inst,
                "deadlock: the thread waits for " + what +
                    ", and no thread or copy in flight can complete the "
                    "phase (every live warp of the block waits)");
  }
  for (Warp &warp : warps) {
    warp.suspended = 0;
    warp.polled = false;
  }
  return true;
}

bool BlockRun::runWarp(Warp &warp) {
  while (true) {
    if (warp.polled)
      return true;
    uint32_t ready = warp.live & ~warp.waiting & ~warp.suspended;
    if (!ready)
      return true;
    uint32_t pc = ~0u;
    for (uint32_t m = ready; m; m &= m - 1)
      pc = std::min(pc, warp.pc[__builtin_ctz(m)]);
    uint32_t active = 0;
    for (uint32_t m = ready; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      if (warp.pc[lane] == pc)
        active |= 1u << lane;
    }
    // Lanes of a warp whose other lanes are suspended in mbarrier.try_wait
    // run on, but a warp-collective instruction waits for the suspended
    // lanes, as it would on hardware: the warp ends its turn there.
    if (warp.suspended && isWarpCollective(kernel.code[pc]))
      return true;
    if (++stats.warpInstructions > kMaxWarpInstructionsPerLaunch) {
      const Instruction &inst = kernel.code[pc];
      return fail(warp, __builtin_ctz(active), inst,
                  "the launch did not finish within " +
                      std::to_string(kMaxWarpInstructionsPerLaunch) +
                      " warp instructions");
    }
    if (!execute(warp, pc, active))
      return false;
  }
}

bool BlockRun::execute(Warp &warp, uint32_t pc, uint32_t active) {
  const Instruction &inst = kernel.code[pc];
  uint32_t exec = active;
  if (inst.guard != kNoReg) {
    exec = 0;
    const uint64_t *guard = &warp.regs[size_t(inst.guard) * kWarpSize];
    for (uint32_t m = active; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      if ((guard[lane] != 0) != inst.guardNegate)
        exec |= 1u << lane;
    }
  }
  stats.threadInstructions += __builtin_popcount(exec);
  // A memory instruction is counted once its lanes' addresses resolve: a
  // generic address is a global or a shared access only at run time.
  bool isMemoryAccess =
      inst.opcode == Opcode::Ld || inst.opcode == Opcode::St ||
      inst.opcode == Opcode::Atom || inst.opcode == Opcode::Red;
  if (!exec || !isMemoryAccess) {
    InstructionClass kind = classify(inst, inst.space);
    stats.count(kind);
    if (kind == InstructionClass::TensorCore && exec)
      stats.tensorCoreFlops += getTensorCoreFlops(inst);
  }
  auto advance = [&](uint32_t lanes) {
    for (uint32_t m = lanes; m; m &= m - 1)
      warp.pc[__builtin_ctz(m)] = pc + 1;
  };
  switch (inst.opcode) {
  case Opcode::Bra: {
    uint32_t target = static_cast<uint32_t>(inst.operands[0].imm);
    for (uint32_t m = active; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      warp.pc[lane] = (exec >> lane) & 1 ? target : pc + 1;
    }
    return true;
  }
  case Opcode::Ret:
  case Opcode::Exit:
    warp.live &= ~exec;
    advance(active & ~exec);
    return true;
  case Opcode::Bar: {
    if (inst.mode == 1) { // bar.warp.sync membermask
      uint32_t members =
          static_cast<uint32_t>(read(warp, inst.operands[0], 0)) & warp.live;
      if (exec && (members & ~exec))
        return fail(warp, __builtin_ctz(exec), inst,
                    "bar.warp.sync: member lanes are not converged");
      advance(active);
      return true;
    }
    // bar.sync/bar.arrive a{, b}: barrier a (0 to 15) for b threads, a
    // multiple of the warp size; without b (or with the whole block's
    // count), every thread of the block.
    if (!exec) {
      advance(active);
      return true;
    }
    unsigned first = __builtin_ctz(exec);
    uint64_t id =
        inst.operands.empty() ? 0 : read(warp, inst.operands[0], first);
    if (id >= kNumBarriers)
      return fail(warp, first, inst,
                  "barrier " + std::to_string(id) + " (there are " +
                      std::to_string(kNumBarriers) + ")");
    uint32_t roundedThreads =
        (numThreads + kWarpSize - 1) / kWarpSize * kWarpSize;
    uint64_t count = 0;
    if (inst.operands.size() > 1) {
      count = read(warp, inst.operands[1], first);
      if (count == numThreads || count == roundedThreads)
        count = 0;
      else if (count == 0 || count % kWarpSize || count > roundedThreads)
        return fail(warp, first, inst,
                    "barrier " + std::to_string(id) + " for " +
                        std::to_string(count) +
                        " threads: the count must be a nonzero multiple of "
                        "the warp size, at most the block's " +
                        std::to_string(roundedThreads));
    }
    bool arriveOnly = inst.mode == 2;
    if (arriveOnly && inst.operands.size() < 2)
      return fail(warp, first, inst, "bar.arrive needs a thread count");
    if (barrierExpected[id] != count && (barrierArrived[id] || [&] {
          for (const Warp &other : warps)
            for (uint32_t m = other.waiting; m; m &= m - 1)
              if (other.barrierId[__builtin_ctz(m)] == id)
                return true;
          return false;
        }()))
      return fail(warp, first, inst,
                  "barrier " + std::to_string(id) + " for " +
                      (count ? std::to_string(count) : std::string("all")) +
                      " threads, while other threads wait at it for " +
                      (barrierExpected[id] ? std::to_string(barrierExpected[id])
                                           : std::string("all")));
    barrierExpected[id] = static_cast<uint32_t>(count);
    if (arriveOnly) {
      barrierArrived[id] += __builtin_popcount(exec);
      advance(active);
      return true;
    }
    warp.waiting |= exec;
    for (uint32_t m = exec; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      warp.barrierPc[lane] = pc;
      warp.barrierId[lane] = static_cast<uint8_t>(id);
    }
    advance(active);
    return true;
  }
  case Opcode::Membar:
    if (inst.mode == 1 && exec) // fence.proxy.async
      ++proxyFences;
    if (inst.mode == 0 && exec) { // a fence at the GPU's or system's scope
      ++gpuFences;
      fencedAfterAtomic |= sawAtomic;
    }
    advance(active);
    return true;
  case Opcode::Mbarrier:
  case Opcode::CpAsyncBulk:
  case Opcode::Wgmma:
  case Opcode::Elect: {
    if (!hopper)
      hopper = std::make_unique<HopperUnit>(*this);
    HopperStep step;
    if (exec && !hopper->execute(warp.index, inst, pc, exec, step))
      return false;
    // Suspended lanes stay at the wait and retry in the next round.
    advance(active & ~step.suspended);
    warp.suspended |= step.suspended;
    if (step.yield) {
      warp.polled = true;
      warp.polledPc = pc;
      warp.polledLane = __builtin_ctz(exec);
    }
    return true;
  }
  default:
    break;
  }
  if (hopper && hopper->needsOperandCheck(warp.index) &&
      !hopper->checkOperands(warp.index, inst, exec))
    return false;
  if (exec && !executeLanes(warp, inst, exec))
    return false;
  advance(active);
  return true;
}

bool BlockRun::memoryOp(Warp &warp, const Instruction &inst, uint32_t exec) {
  bool isLoad = inst.opcode == Opcode::Ld;
  const Operand &addressOp = inst.operands[isLoad ? 1 : 0];
  const Operand &data = inst.operands[isLoad ? 0 : 1];
  unsigned bits = getTypeBits(inst.type);
  if (bits < 8)
    return fail(warp, __builtin_ctz(exec), inst, "bad access type");
  unsigned bytes = bits / 8;
  unsigned count = inst.vector;
  WarpAccess access;
  access.bytes = bytes * count;
  Space space = inst.space;
  for (uint32_t m = exec; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    uint64_t address = getAddress(warp, addressOp, lane, inst.space);
    uint8_t *host = resolve(warp, lane, inst, inst.space, address,
                            uint64_t(bytes) * count, !isLoad);
    if (!host)
      return false;
    addLaneAccess(access, inst, space, lane, host);
    for (unsigned e = 0; e < count; ++e) {
      uint8_t *element = host + e * bytes;
      if (isLoad) {
        uint64_t value = loadBytes(element, bytes);
        if (isSignedType(inst.type))
          value = static_cast<uint64_t>(signExtend(value, bits));
        uint32_t reg =
            data.kind == OperandKind::Vector ? data.regs[e] : data.reg;
        write(warp, reg, lane, value);
      } else {
        uint64_t value;
        if (data.kind == OperandKind::Vector)
          value = readElement(warp, data, e, lane);
        else
          value = read(warp, data, lane);
        storeBytes(element, value, bytes);
      }
    }
  }
  countAccess(inst, space, access);
  if (space == Space::Global && !orderGlobalAccess(warp, inst, access, isLoad))
    return false;
  return true;
}

bool BlockRun::orderGlobalAccess(const Warp &warp, const Instruction &inst,
                                 const WarpAccess &access, bool isLoad) {
  for (uint32_t m = access.lanes; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    uint64_t first = access.address[lane] / 4,
             last = (access.address[lane] + access.bytes - 1) / 4;
    for (uint64_t word = first; word <= last; ++word) {
      if (!isLoad) {
        footprint.writers[word] = {blockSerial, gpuFences};
        continue;
      }
      auto it = footprint.writers.find(word);
      if (it == footprint.writers.end() || it->second.block == blockSerial)
        continue;
      const LaunchFootprint::WordWriter &writer = it->second;
      bool released = footprint.finalFences[writer.block] > writer.fences;
      bool acquired = sawAtomic ? fencedAfterAtomic : gpuFences > 0;
      if (released && acquired)
        continue;
      // The writer's coordinates from its serial (x fastest, from 1).
      uint32_t serial = writer.block - 1;
      std::string writerBlock = "(" + std::to_string(serial % grid.x) + "," +
                                std::to_string(serial / grid.x % grid.y) + "," +
                                std::to_string(serial / grid.x / grid.y) + ")";
      return fail(warp, lane, inst,
                  "global-memory ordering: this load reads bytes that block " +
                      writerBlock + " stored in the same launch, " +
                      (released ? std::string("but this block has no fence "
                                              "at the GPU's scope after an "
                                              "atomic (the acquire)")
                                : std::string("with no fence at the GPU's "
                                              "scope after the store (the "
                                              "release)")));
    }
  }
  return true;
}

bool BlockRun::atomicOp(Warp &warp, const Instruction &inst, uint32_t exec) {
  bool isAtom = inst.opcode == Opcode::Atom;
  const Operand &addressOp = inst.operands[isAtom ? 1 : 0];
  unsigned bits = getTypeBits(inst.type);
  unsigned bytes = bits / 8;
  if (bytes != 4 && bytes != 8)
    return fail(warp, __builtin_ctz(exec), inst,
                "atomics on .b16/.f16 are not supported");
  WarpAccess access;
  access.bytes = bytes;
  Space space = inst.space;
  // Lanes update in lane order, each atomically with respect to the others.
  for (uint32_t m = exec; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    uint64_t address = getAddress(warp, addressOp, lane, inst.space);
    uint8_t *host = resolve(warp, lane, inst, inst.space, address, bytes,
                            /*store=*/true, /*atomic=*/true);
    if (!host)
      return false;
    addLaneAccess(access, inst, space, lane, host);
    uint64_t old = 0;
    std::memcpy(&old, host, bytes);
    uint64_t b = read(warp, inst.operands[isAtom ? 2 : 1], lane);
    uint64_t value = old;
    uint64_t mask = maskOf(bits);
    bool isSigned = isSignedType(inst.type);
    switch (inst.mode) {
    case 0: // add
      if (inst.type == Type::F32)
        value = f32ToBits(bitsToF32(old) + bitsToF32(b));
      else if (inst.type == Type::F64)
        value = f64ToBits(bitsToF64(old) + bitsToF64(b));
      else
        value = (old + b) & mask;
      break;
    case 1: // min
    case 2: // max
      if (inst.type == Type::F32) {
        float x = bitsToF32(old), y = bitsToF32(b);
        value = f32ToBits(inst.mode == 1 ? ptxMin(x, y, false)
                                         : ptxMax(x, y, false));
      } else if (isSigned) {
        int64_t x = signExtend(old, bits), y = signExtend(b, bits);
        value = static_cast<uint64_t>(inst.mode == 1 ? std::min(x, y)
                                                     : std::max(x, y)) &
                mask;
      } else {
        value =
            inst.mode == 1 ? std::min(old, b & mask) : std::max(old, b & mask);
      }
      break;
    case 3: // exch
      value = b & mask;
      break;
    case 4: { // cas
      uint64_t newValue = read(warp, inst.operands[3], lane);
      value = old == (b & mask) ? newValue & mask : old;
      break;
    }
    case 5:
      value = old & b & mask;
      break;
    case 6:
      value = (old | b) & mask;
      break;
    case 7:
      value = (old ^ b) & mask;
      break;
    case 8: // inc
      value = old >= (b & mask) ? 0 : old + 1;
      break;
    case 9: // dec
      value = (old == 0 || old > (b & mask)) ? b & mask : old - 1;
      break;
    }
    std::memcpy(host, &value, bytes);
    if (isAtom)
      write(warp, inst.operands[0].reg, lane, old);
  }
  countAccess(inst, space, access);
  if (space == Space::Global)
    sawAtomic = true;
  return true;
}

Space BlockRun::getSpaceOf(const uint8_t *host) const {
  auto within = [&](const uint8_t *base, size_t size) {
    auto at = reinterpret_cast<uintptr_t>(host);
    auto begin = reinterpret_cast<uintptr_t>(base);
    return at >= begin && at - begin < size;
  };
  if (within(shared.data(), shared.size()))
    return Space::Shared;
  if (within(local.data(), local.size()))
    return Space::Local;
  if (within(params.data(), params.size()))
    return Space::Param;
  return Space::Global;
}

void BlockRun::addLaneAccess(WarpAccess &access, const Instruction &inst,
                             Space &space, unsigned lane,
                             const uint8_t *host) const {
  Space laneSpace =
      inst.space == Space::Generic ? getSpaceOf(host) : inst.space;
  if (space == Space::Generic)
    space = laneSpace;
  // Lanes of one generic access that reach another space than the first
  // lane's are left out of its request rather than mixed into it.
  if (laneSpace != space)
    return;
  access.lanes |= 1u << lane;
  access.address[lane] =
      space == Space::Shared
          ? static_cast<uint64_t>(host - shared.data())
          : static_cast<uint64_t>(reinterpret_cast<uintptr_t>(host));
}

void BlockRun::countAccess(const Instruction &inst, Space space,
                           const WarpAccess &access) {
  InstructionClass kind = classify(inst, space);
  stats.count(kind);
  switch (kind) {
  case InstructionClass::GlobalLoad:
    countGlobalAccess(stats.globalLoad, access, &footprint.load,
                      &footprint.store);
    break;
  case InstructionClass::GlobalStore:
    countGlobalAccess(stats.globalStore, access, &footprint.store);
    break;
  case InstructionClass::GlobalAtomic:
    countGlobalAccess(stats.globalAtomic, access, &footprint.atomic);
    break;
  case InstructionClass::SharedLoad:
    countSharedAccess(stats.sharedLoad, access);
    break;
  case InstructionClass::SharedStore:
    countSharedAccess(stats.sharedStore, access);
    break;
  default:
    break;
  }
}

/// The arithmetic that compiled kernels spend most of their time in, over
/// the active lanes at once instead of a call per lane: f32 add, sub, mul,
/// fma and mad rounded to nearest (no .ftz, .sat), and integer add, sub,
/// mul.lo, and, or and xor of 32 or 64 bits (no carry, .sat, .wide, .hi).
/// Each computes exactly what computeFloatOp and computeIntOp compute for
/// the same operands (the same host operations, masked alike); false for
/// every other form, which takes the general path.
bool BlockRun::executeFastArithmetic(Warp &warp, const Instruction &inst,
                                     uint32_t exec) {
  const std::vector<Operand> &ops = inst.operands;
  if (ops.empty() || ops[0].kind != OperandKind::Reg || ops[0].reg == kNoReg ||
      inst.sat)
    return false;
  uint64_t *dest = &warp.regs[size_t(ops[0].reg) * kWarpSize];
  uint64_t scratchA[kWarpSize], scratchB[kWarpSize], scratchC[kWarpSize];
  if (inst.type == Type::F32) {
    if (inst.ftz ||
        (inst.rounding != Rounding::Default && inst.rounding != Rounding::Rn))
      return false;
    bool ternary = inst.opcode == Opcode::Fma || inst.opcode == Opcode::Mad;
    if (!ternary && inst.opcode != Opcode::Add && inst.opcode != Opcode::Sub &&
        inst.opcode != Opcode::Mul)
      return false;
    if (ops.size() != (ternary ? 4u : 3u))
      return false;
    const uint64_t *a = getLanes(warp, ops[1], exec, scratchA);
    const uint64_t *b = getLanes(warp, ops[2], exec, scratchB);
    const uint64_t *c = ternary ? getLanes(warp, ops[3], exec, scratchC) : a;
    for (uint32_t m = exec; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      float x = bitsToF32(a[lane]), y = bitsToF32(b[lane]);
      float r;
      switch (inst.opcode) {
      case Opcode::Add:
        r = x + y;
        break;
      case Opcode::Sub:
        r = x - y;
        break;
      case Opcode::Mul:
        r = x * y;
        break;
      default:
        r = std::fma(x, y, bitsToF32(c[lane]));
        break;
      }
      dest[lane] = f32ToBits(r);
    }
    return true;
  }
  unsigned bits = getTypeBits(inst.type);
  if ((bits != 32 && bits != 64) || isFloatType(inst.type) || inst.carryIn ||
      inst.carryOut || inst.wide || inst.hi || ops.size() != 3)
    return false;
  switch (inst.opcode) {
  case Opcode::Add:
  case Opcode::Sub:
  case Opcode::Mul:
  case Opcode::And:
  case Opcode::Or:
  case Opcode::Xor:
    break;
  default:
    return false;
  }
  uint64_t mask = maskOf(bits);
  const uint64_t *a = getLanes(warp, ops[1], exec, scratchA);
  const uint64_t *b = getLanes(warp, ops[2], exec, scratchB);
  for (uint32_t m = exec; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    uint64_t x = a[lane], y = b[lane], r;
    switch (inst.opcode) {
    case Opcode::Add:
      r = x + y;
      break;
    case Opcode::Sub:
      r = x - y;
      break;
    case Opcode::Mul: // the low half of the product, signed or not
      r = x * y;
      break;
    case Opcode::And:
      r = x & y;
      break;
    case Opcode::Or:
      r = x | y;
      break;
    default:
      r = x ^ y;
      break;
    }
    dest[lane] = r & mask;
  }
  return true;
}

bool BlockRun::executeLanes(Warp &warp, const Instruction &inst,
                            uint32_t exec) {
  const std::vector<Operand> &ops = inst.operands;
  switch (inst.opcode) {
  case Opcode::Ld:
  case Opcode::St:
    return memoryOp(warp, inst, exec);
  case Opcode::Atom:
  case Opcode::Red:
    return atomicOp(warp, inst, exec);
  case Opcode::Shfl:
    return shuffle(warp, inst, exec);
  case Opcode::Vote:
    return vote(warp, inst, exec);
  case Opcode::Mma:
  case Opcode::WmmaMma:
    return matrixOp(warp, inst, exec);
  case Opcode::WmmaLoad:
  case Opcode::WmmaStore:
    return wmmaMemoryOp(warp, inst, exec);
  case Opcode::Ldmatrix:
  case Opcode::Stmatrix:
    return matrixRowsOp(warp, inst, exec);
  case Opcode::CpAsync:
  case Opcode::CpAsyncCommit:
  case Opcode::CpAsyncWait:
    return asyncCopyOp(warp, inst, exec);
  case Opcode::Bfi:
    for (uint32_t m = exec; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      write(warp, ops[0].reg, lane,
            insertBitField(read(warp, ops[1], lane), read(warp, ops[2], lane),
                           read(warp, ops[3], lane), read(warp, ops[4], lane),
                           getTypeBits(inst.type)));
    }
    return true;
  case Opcode::Mov: {
    const Operand &dest = ops[0], &src = ops[1];
    unsigned bits = getTypeBits(inst.type);
    for (uint32_t m = exec; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      if (dest.kind == OperandKind::Vector) { // unpack
        uint64_t value = read(warp, src, lane);
        unsigned part = bits / dest.count;
        for (unsigned e = 0; e < dest.count; ++e)
          write(warp, dest.regs[e], lane, (value >> (e * part)) & maskOf(part));
      } else if (src.kind == OperandKind::Vector) { // pack
        unsigned part = bits / src.count;
        uint64_t value = 0;
        for (unsigned e = 0; e < src.count; ++e)
          value |= (readElement(warp, src, e, lane) & maskOf(part))
                   << (e * part);
        write(warp, dest.reg, lane, value);
      } else {
        write(warp, dest.reg, lane, read(warp, src, lane) & maskOf(bits));
      }
    }
    return true;
  }
  case Opcode::Cvta: {
    for (uint32_t m = exec; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      uint64_t value = read(warp, ops[1], lane);
      uint64_t base = inst.space == Space::Shared  ? DeviceMemory::kSharedWindow
                      : inst.space == Space::Local ? DeviceMemory::kLocalWindow
                      : inst.space == Space::Param ? DeviceMemory::kParamWindow
                                                   : 0;
      write(warp, ops[0].reg, lane,
            inst.mode == 1 ? value - base : value + base);
    }
    return true;
  }
  case Opcode::Setp: {
    const Operand &dest = ops[0];
    uint32_t p = dest.kind == OperandKind::Vector ? dest.regs[0] : dest.reg;
    uint32_t q = dest.kind == OperandKind::Vector ? dest.regs[1] : kNoReg;
    unsigned bits = getTypeBits(inst.type);
    bool isFloat = isFloatType(inst.type);
    for (uint32_t m = exec; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      uint64_t a = read(warp, ops[1], lane), b = read(warp, ops[2], lane);
      bool t;
      if (isFloat) {
        double x =
            inst.type == Type::F64 ? bitsToF64(a) : unpackFloat(inst.type, a);
        double y =
            inst.type == Type::F64 ? bitsToF64(b) : unpackFloat(inst.type, b);
        if (inst.ftz && inst.type == Type::F32) {
          x = flushF32(static_cast<float>(x));
          y = flushF32(static_cast<float>(y));
        }
        t = compareFloat(inst.compare, x, y);
      } else {
        t = compareInt(inst.compare, a, b, isSignedType(inst.type), bits);
      }
      bool c = ops.size() > 3 ? read(warp, ops[3], lane) != 0 : false;
      auto combine = [&](bool value) {
        switch (inst.boolOp) {
        case 1:
          return value && c;
        case 2:
          return value || c;
        case 3:
          return value != c;
        default:
          return value;
        }
      };
      write(warp, p, lane, combine(t));
      write(warp, q, lane, combine(!t));
    }
    return true;
  }
  case Opcode::Selp: {
    unsigned bits = getTypeBits(inst.type);
    for (uint32_t m = exec; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      bool c = read(warp, ops[3], lane) != 0;
      write(warp, ops[0].reg, lane,
            read(warp, ops[c ? 1 : 2], lane) & maskOf(bits));
    }
    return true;
  }
  case Opcode::Cvt: {
    if (ops.size() == 3 &&
        (inst.type == Type::E4M3x2 || inst.type == Type::E5M2x2)) {
      // Two f32 sources rounded to 8-bit floats (.rn.satfinite): a in the
      // upper byte, b in the lower.
      bool e5m2 = inst.type == Type::E5M2x2;
      for (uint32_t m = exec; m; m &= m - 1) {
        unsigned lane = __builtin_ctz(m);
        uint64_t high = f32ToFp8(bitsToF32(read(warp, ops[1], lane)), e5m2);
        uint64_t low = f32ToFp8(bitsToF32(read(warp, ops[2], lane)), e5m2);
        write(warp, ops[0].reg, lane, high << 8 | low);
      }
      return true;
    }
    if (ops.size() == 3) {
      // Two f32 sources packed into one f16x2/bf16x2: a in the upper half,
      // b in the lower.
      Instruction half = inst;
      half.type = inst.type == Type::BF16x2 ? Type::BF16 : Type::F16;
      for (uint32_t m = exec; m; m &= m - 1) {
        unsigned lane = __builtin_ctz(m);
        uint64_t high, low;
        std::string error;
        if (!computeConvert(half, read(warp, ops[1], lane), high, error) ||
            !computeConvert(half, read(warp, ops[2], lane), low, error))
          return fail(warp, lane, inst, error);
        write(warp, ops[0].reg, lane, (high & 0xffff) << 16 | (low & 0xffff));
      }
      return true;
    }
    for (uint32_t m = exec; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      uint64_t result;
      std::string error;
      if (!computeConvert(inst, read(warp, ops[1], lane), result, error))
        return fail(warp, lane, inst, error);
      write(warp, ops[0].reg, lane, result);
    }
    return true;
  }
  default:
    break;
  }
  if (executeFastArithmetic(warp, inst, exec))
    return true;
  // Arithmetic: destination, then up to three sources.
  bool isFloat = isFloatType(inst.type) && inst.opcode != Opcode::And &&
                 inst.opcode != Opcode::Or && inst.opcode != Opcode::Xor;
  size_t numSources = ops.size() - 1;
  for (uint32_t m = exec; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    uint64_t a = numSources > 0 ? read(warp, ops[1], lane) : 0;
    uint64_t b = numSources > 1 ? read(warp, ops[2], lane) : 0;
    uint64_t c = numSources > 2 ? read(warp, ops[3], lane) : 0;
    uint64_t result;
    std::string error;
    bool carryIn = inst.carryIn && ((warp.carry >> lane) & 1);
    bool carryOut = false;
    bool ok =
        isFloat ? computeFloatOp(inst, inst.type, a, b, c, result, error)
                : computeIntOp(inst, a, b, c, carryIn, carryOut, result, error);
    if (!ok)
      return fail(warp, lane, inst, error);
    if (inst.carryOut)
      warp.carry = (warp.carry & ~(1u << lane)) | (uint32_t(carryOut) << lane);
    write(warp, ops[0].reg, lane, result);
  }
  return true;
}

} // namespace ridge::emu::detail

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

Device::Device() = default;
Device::~Device() = default;

uint32_t Device::getMaxSharedMemoryPerBlock() const {
  return computeCapability >= 90 ? 227 * 1024 : 163 * 1024;
}

LoadedModule *Device::loadModule(const std::string &ptxText,
                                 std::string &error) {
  std::unique_ptr<PtxModule> ptx = parsePtx(ptxText, error);
  if (!ptx)
    return nullptr;
  auto loaded = std::make_unique<LoadedModule>();
  for (const GlobalVar &var : ptx->globals) {
    uint64_t address = memory.allocate(var.size, var.name);
    if (!address) {
      error = "cannot allocate module variable '" + var.name + "'";
      return nullptr;
    }
    std::memset(reinterpret_cast<void *>(address), 0, var.size);
    std::memcpy(reinterpret_cast<void *>(address), var.init.data(),
                std::min<uint64_t>(var.init.size(), var.size));
    loaded->globalAddresses.push_back(address);
  }
  loaded->ptx = std::move(ptx);
  modules.push_back(std::move(loaded));
  return modules.back().get();
}

void Device::unloadModule(LoadedModule *module) {
  for (auto it = modules.begin(); it != modules.end(); ++it)
    if (it->get() == module) {
      for (uint64_t address : module->globalAddresses)
        memory.free(address);
      modules.erase(it);
      return;
    }
}

bool Device::launch(const LoadedModule &module, const PtxFunction &kernel,
                    Dim3 grid, Dim3 block, uint32_t dynamicSharedBytes,
                    void **args, std::string &error, LaunchStats *stats) {
  std::vector<uint8_t> params(kernel.paramBytes, 0);
  if (!kernel.params.empty() && !args) {
    error = "kernel '" + kernel.name + "' takes " +
            std::to_string(kernel.params.size()) +
            " parameters, but none were passed";
    return false;
  }
  for (size_t i = 0; i < kernel.params.size(); ++i)
    std::memcpy(params.data() + kernel.params[i].offset, args[i],
                kernel.params[i].size);
  return launchPacked(module, kernel, grid, block, dynamicSharedBytes, params,
                      error, stats);
}

bool Device::launchPacked(const LoadedModule &module, const PtxFunction &kernel,
                          Dim3 grid, Dim3 block, uint32_t dynamicSharedBytes,
                          const std::vector<uint8_t> &params,
                          std::string &error, LaunchStats *stats) {
  auto dims = [](Dim3 d) {
    return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," +
           std::to_string(d.z) + ")";
  };
  if (!kernel.isEntry) {
    error = "'" + kernel.name + "' is a .func, not a kernel (.entry)";
    return false;
  }
  if (grid.count() == 0 || block.count() == 0 || block.count() > 1024 ||
      block.z > 64 || grid.y > 65535 || grid.z > 65535) {
    error = "kernel '" + kernel.name + "': invalid launch configuration grid " +
            dims(grid) + ", block " + dims(block);
    return false;
  }
  uint64_t maxThreads = kernel.maxThreads[0]
                            ? uint64_t(kernel.maxThreads[0]) *
                                  std::max(1u, kernel.maxThreads[1]) *
                                  std::max(1u, kernel.maxThreads[2])
                            : 1024;
  if (block.count() > maxThreads) {
    error = "kernel '" + kernel.name + "': block " + dims(block) + " has " +
            std::to_string(block.count()) +
            " threads, more than its .maxntid " + std::to_string(maxThreads);
    return false;
  }
  if (kernel.reqThreads[0] && (block.x != kernel.reqThreads[0] ||
                               block.y != std::max(1u, kernel.reqThreads[1]) ||
                               block.z != std::max(1u, kernel.reqThreads[2]))) {
    error = "kernel '" + kernel.name + "': block " + dims(block) +
            " differs from its .reqntid";
    return false;
  }
  if (kernel.staticShared + dynamicSharedBytes > getMaxSharedMemoryPerBlock()) {
    error = "kernel '" + kernel.name +
            "': " + std::to_string(kernel.staticShared + dynamicSharedBytes) +
            " bytes of shared memory exceed the " +
            std::to_string(getMaxSharedMemoryPerBlock()) + " per block";
    return false;
  }
  if (params.size() != kernel.paramBytes) {
    error = "kernel '" + kernel.name + "': " + std::to_string(params.size()) +
            " bytes of parameters, expected " +
            std::to_string(kernel.paramBytes);
    return false;
  }
  LaunchStats local;
  LaunchStats &counts = stats ? *stats : local;
  counts.kernel = kernel.name;
  ++counts.launches;
  counts.grid[0] = grid.x, counts.grid[1] = grid.y, counts.grid[2] = grid.z;
  counts.block[0] = block.x, counts.block[1] = block.y,
  counts.block[2] = block.z;
  counts.registers = kernel.numRegs;
  counts.staticSharedBytes = kernel.staticShared;
  counts.dynamicSharedBytes = dynamicSharedBytes;
  counts.localBytesPerThread = kernel.localBytes;
  auto start = std::chrono::steady_clock::now();
  std::vector<SharedByteShadow> sharedShadow;
  LaunchFootprint footprint;
  uint32_t epoch = 0, blockSerial = 0;
  for (uint32_t z = 0; z < grid.z; ++z)
    for (uint32_t y = 0; y < grid.y; ++y)
      for (uint32_t x = 0; x < grid.x; ++x) {
        BlockRun run(*this, module, kernel, grid, block, Dim3{x, y, z},
                     dynamicSharedBytes, params, counts, footprint,
                     sharedShadow, epoch, ++blockSerial);
        if (!run.run(error))
          return false;
        footprint.finalFences.resize(blockSerial + 1);
        footprint.finalFences[blockSerial] = run.getGpuFences();
        ++counts.blocks;
        counts.threads += block.count();
      }
  counts.hostSeconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  counts.globalLoad.footprintSectors += footprint.load.size();
  counts.globalStore.footprintSectors += footprint.store.size();
  counts.globalAtomic.footprintSectors += footprint.atomic.size();
  return true;
}
