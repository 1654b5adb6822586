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
//===----------------------------------------------------------------------===//

#include "ridgeline/Emulator/Emulator.h"

#include "FloatFormats.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

using namespace ridge::emu;

// Directed rounding (.rz/.rm/.rp) runs the host operation under that
// rounding mode. The helper is kept out of the optimizer's reach: without
// strict floating-point semantics it may move an operation across the mode
// switch.
#if defined(__clang__)
#define RIDGE_EMU_STRICT_FP __attribute__((noinline, optnone))
#else
#define RIDGE_EMU_STRICT_FP __attribute__((noinline, optimize("O0")))
#endif

/// Operation `op` (0 add, 1 sub, 2 mul, 3 fma, 4 div, 5 sqrt) in f32 or f64
/// under the host rounding mode `mode`.
RIDGE_EMU_STRICT_FP static double
directedOp(int mode, int op, double x, double y, double z, bool isDouble) {
  int saved = std::fegetround();
  std::fesetround(mode);
  double r;
  if (isDouble) {
    switch (op) {
    case 0:
      r = x + y;
      break;
    case 1:
      r = x - y;
      break;
    case 2:
      r = x * y;
      break;
    case 3:
      r = std::fma(x, y, z);
      break;
    case 4:
      r = x / y;
      break;
    default:
      r = std::sqrt(x);
      break;
    }
  } else {
    float a = static_cast<float>(x), b = static_cast<float>(y),
          c = static_cast<float>(z), f;
    switch (op) {
    case 0:
      f = a + b;
      break;
    case 1:
      f = a - b;
      break;
    case 2:
      f = a * b;
      break;
    case 3:
      f = std::fma(a, b, c);
      break;
    case 4:
      f = a / b;
      break;
    default:
      f = std::sqrt(a);
      break;
    }
    r = f;
  }
  std::fesetround(saved);
  return r;
}

namespace {

constexpr unsigned kWarpSize = 32;
/// A launch that issues more warp instructions than this is reported as not
/// terminating instead of hanging the host.
constexpr uint64_t kMaxWarpInstructionsPerLaunch = uint64_t(1) << 36;

uint64_t maskOf(unsigned bits) {
  return bits >= 64 ? ~0ull : ((1ull << bits) - 1);
}

int64_t signExtend(uint64_t value, unsigned bits) {
  if (bits >= 64)
    return static_cast<int64_t>(value);
  uint64_t sign = 1ull << (bits - 1);
  value &= maskOf(bits);
  return static_cast<int64_t>((value ^ sign) - sign);
}

float flushF32(float value) {
  return std::fpclassify(value) == FP_SUBNORMAL ? std::copysign(0.0f, value)
                                                : value;
}

/// A 16- or 32-bit float format's value as f32 (exact), and back (rn).
float unpackFloat(Type type, uint64_t bits) {
  switch (type) {
  case Type::F16:
    return halfToF32(static_cast<uint16_t>(bits));
  case Type::BF16:
    return bf16ToF32(static_cast<uint16_t>(bits));
  default:
    return bitsToF32(bits);
  }
}
uint64_t packFloat(Type type, float value) {
  switch (type) {
  case Type::F16:
    return f32ToHalf(value);
  case Type::BF16:
    return f32ToBf16(value);
  default:
    return f32ToBits(value);
  }
}

template <typename T> T ptxMin(T a, T b, bool nanMode) {
  if (std::isnan(a) || std::isnan(b)) {
    if (nanMode || (std::isnan(a) && std::isnan(b)))
      return std::numeric_limits<T>::quiet_NaN();
    return std::isnan(a) ? b : a;
  }
  if (a == b) // -0 is less than +0
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
template <typename T> T ptxMax(T a, T b, bool nanMode) {
  if (std::isnan(a) || std::isnan(b)) {
    if (nanMode || (std::isnan(a) && std::isnan(b)))
      return std::numeric_limits<T>::quiet_NaN();
    return std::isnan(a) ? b : a;
  }
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

/// The value of the float operation `op` of PTX on `x`, `y`, `z` in T
/// (float or double), each one host operation; nothing for an opcode that
/// is no such operation.
template <typename T>
std::optional<T> computeFloat(Opcode op, T x, T y, T z, bool nanMode) {
  switch (op) {
  case Opcode::Add:
    return x + y;
  case Opcode::Sub:
    return x - y;
  case Opcode::Mul:
    return x * y;
  case Opcode::Fma:
  case Opcode::Mad:
    return std::fma(x, y, z);
  case Opcode::Div:
    return x / y;
  case Opcode::Min:
    return ptxMin(x, y, nanMode);
  case Opcode::Max:
    return ptxMax(x, y, nanMode);
  case Opcode::Sqrt:
    return std::sqrt(x);
  case Opcode::Rcp:
    return T(1) / x;
  case Opcode::Rsqrt:
    return T(1) / std::sqrt(x);
  case Opcode::Ex2:
    return std::exp2(x);
  case Opcode::Lg2:
    return std::log2(x);
  case Opcode::Sin:
    return std::sin(x);
  case Opcode::Cos:
    return std::cos(x);
  case Opcode::Tanh:
    return std::tanh(x);
  default:
    return std::nullopt;
  }
}

bool compareFloat(Compare compare, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (compare) {
  case Compare::Eq:
    return !unordered && a == b;
  case Compare::Ne:
    return !unordered && a != b;
  case Compare::Lt:
    return !unordered && a < b;
  case Compare::Le:
    return !unordered && a <= b;
  case Compare::Gt:
    return !unordered && a > b;
  case Compare::Ge:
    return !unordered && a >= b;
  case Compare::Equ:
    return unordered || a == b;
  case Compare::Neu:
    return unordered || a != b;
  case Compare::Ltu:
    return unordered || a < b;
  case Compare::Leu:
    return unordered || a <= b;
  case Compare::Gtu:
    return unordered || a > b;
  case Compare::Geu:
    return unordered || a >= b;
  case Compare::Num:
    return !unordered;
  case Compare::Nan:
    return unordered;
  default:
    return false;
  }
}

bool compareInt(Compare compare, uint64_t a, uint64_t b, bool isSigned,
                unsigned bits) {
  int64_t sa = signExtend(a, bits), sb = signExtend(b, bits);
  a &= maskOf(bits);
  b &= maskOf(bits);
  switch (compare) {
  case Compare::Eq:
    return a == b;
  case Compare::Ne:
    return a != b;
  case Compare::Lt:
    return isSigned ? sa < sb : a < b;
  case Compare::Le:
    return isSigned ? sa <= sb : a <= b;
  case Compare::Gt:
    return isSigned ? sa > sb : a > b;
  case Compare::Ge:
    return isSigned ? sa >= sb : a >= b;
  case Compare::Lo:
    return a < b;
  case Compare::Ls:
    return a <= b;
  case Compare::Hi:
    return a > b;
  case Compare::Hs:
    return a >= b;
  default:
    return false;
  }
}

/// Rounds a float to an integral value as cvt's .rni/.rzi/.rmi/.rpi do.
double roundIntegral(Rounding rounding, double value) {
  switch (rounding) {
  case Rounding::Rni:
    return std::nearbyint(value); // the default mode: ties to even
  case Rounding::Rmi:
    return std::floor(value);
  case Rounding::Rpi:
    return std::ceil(value);
  default:
    return std::trunc(value);
  }
}

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

struct Warp {
  uint32_t pc[kWarpSize] = {};
  uint32_t live = 0;    // lanes that have not exited
  uint32_t waiting = 0; // lanes waiting at a block barrier
  uint32_t carry = 0;   // CC.CF per lane
  uint32_t index = 0;
  std::vector<uint64_t> regs;
};

/// Executes one block of a launch.
class BlockRun {
public:
  BlockRun(Device &device, const LoadedModule &module,
           const PtxFunction &kernel, Dim3 grid, Dim3 block, Dim3 blockIdx,
           uint32_t dynamicShared, const std::vector<uint8_t> &params,
           LaunchStats &stats)
      : memory(device.getMemory()), module(module), kernel(kernel), grid(grid),
        block(block), blockIdx(blockIdx), params(params), stats(stats) {
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

private:
  bool runWarp(Warp &warp);
  bool execute(Warp &warp, uint32_t pc, uint32_t active);
  bool executeLanes(Warp &warp, const Instruction &inst, uint32_t exec);

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
                   Space space, uint64_t address, uint64_t bytes, bool store);
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
  std::string describeThread(const Warp &warp, unsigned lane) const;

  bool floatOp(const Warp &warp, unsigned lane, const Instruction &inst,
               Type type, uint64_t a, uint64_t b, uint64_t c, uint64_t &result);
  bool intOp(Warp &warp, unsigned lane, const Instruction &inst, uint64_t a,
             uint64_t b, uint64_t c, uint64_t &result);
  bool convert(const Warp &warp, unsigned lane, const Instruction &inst,
               uint64_t value, uint64_t &result);
  bool memoryOp(Warp &warp, const Instruction &inst, uint32_t exec);
  bool atomicOp(Warp &warp, const Instruction &inst, uint32_t exec);
  bool shuffle(Warp &warp, const Instruction &inst, uint32_t exec);
  bool vote(Warp &warp, const Instruction &inst, uint32_t exec);

  DeviceMemory &memory;
  const LoadedModule &module;
  const PtxFunction &kernel;
  Dim3 grid, block, blockIdx;
  const std::vector<uint8_t> &params;
  LaunchStats &stats;
  uint32_t numThreads = 0;
  uint64_t dynamicBase = 0, dynamicBytes = 0;
  std::vector<uint8_t> shared, local;
  std::vector<Warp> warps;
  std::string errorText;
};

std::string BlockRun::describeThread(const Warp &warp, unsigned lane) const {
  uint32_t t = warp.index * kWarpSize + lane;
  uint32_t x = t % block.x, y = (t / block.x) % block.y,
           z = t / (block.x * block.y);
  return "block (" + std::to_string(blockIdx.x) + "," +
         std::to_string(blockIdx.y) + "," + std::to_string(blockIdx.z) +
         "), thread (" + std::to_string(x) + "," + std::to_string(y) + "," +
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
    return symbol.offset;
  default:
    return symbol.global >= 0 ? module.globalAddresses[symbol.global] : 0;
  }
}

uint8_t *BlockRun::resolve(const Warp &warp, unsigned lane,
                           const Instruction &inst, Space space,
                           uint64_t address, uint64_t bytes, bool store) {
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

bool BlockRun::run(std::string &error) {
  while (true) {
    for (Warp &warp : warps)
      if (!runWarp(warp)) {
        error = errorText;
        return false;
      }
    // Every warp waits at the barrier or has exited: the barrier completes
    // (exited threads count as arrived).
    bool anyWaiting = false;
    for (Warp &warp : warps) {
      anyWaiting |= warp.waiting != 0;
      warp.waiting = 0;
    }
    if (!anyWaiting)
      return true;
  }
}

bool BlockRun::runWarp(Warp &warp) {
  while (true) {
    uint32_t ready = warp.live & ~warp.waiting;
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
    if (inst.operands.size() > 1 && exec) {
      uint64_t count = read(warp, inst.operands[1], __builtin_ctz(exec));
      if (count != numThreads &&
          count != (numThreads + kWarpSize - 1) / kWarpSize * kWarpSize)
        return fail(warp, __builtin_ctz(exec), inst,
                    "barriers over part of the block (" +
                        std::to_string(count) + " of " +
                        std::to_string(numThreads) +
                        " threads) are not supported");
    }
    warp.waiting |= exec;
    advance(active);
    return true;
  }
  case Opcode::Membar:
    advance(active);
    return true;
  default:
    break;
  }
  if (exec && !executeLanes(warp, inst, exec))
    return false;
  advance(active);
  return true;
}

bool BlockRun::floatOp(const Warp &warp, unsigned lane, const Instruction &inst,
                       Type type, uint64_t a, uint64_t b, uint64_t c,
                       uint64_t &result) {
  if (inst.rounding == Rounding::Rz || inst.rounding == Rounding::Rm ||
      inst.rounding == Rounding::Rp) {
    int op = inst.opcode == Opcode::Add                                   ? 0
             : inst.opcode == Opcode::Sub                                 ? 1
             : inst.opcode == Opcode::Mul                                 ? 2
             : (inst.opcode == Opcode::Fma || inst.opcode == Opcode::Mad) ? 3
             : inst.opcode == Opcode::Div                                 ? 4
             : inst.opcode == Opcode::Sqrt                                ? 5
                                                                          : -1;
    if (op < 0 || (type != Type::F32 && type != Type::F64))
      return fail(warp, lane, inst,
                  "directed rounding is supported for f32/f64 add, sub, "
                  "mul, fma, div and sqrt");
    int mode = inst.rounding == Rounding::Rz   ? FE_TOWARDZERO
               : inst.rounding == Rounding::Rm ? FE_DOWNWARD
                                               : FE_UPWARD;
    bool isDouble = type == Type::F64;
    auto value = [&](uint64_t bits) -> double {
      if (isDouble)
        return bitsToF64(bits);
      float f = bitsToF32(bits);
      return inst.ftz ? flushF32(f) : f;
    };
    double r = directedOp(mode, op, value(a), value(b), value(c), isDouble);
    if (isDouble) {
      result = f64ToBits(r);
    } else {
      float f = static_cast<float>(r); // exact: r holds an f32 value
      if (inst.ftz)
        f = flushF32(f);
      if (inst.sat)
        f = std::isnan(f) ? 0.0f : std::min(1.0f, std::max(0.0f, f));
      result = f32ToBits(f);
    }
    return true;
  }
  if (type == Type::F64) {
    switch (inst.opcode) {
    case Opcode::Neg:
      result = a ^ 0x8000000000000000ull;
      return true;
    case Opcode::Abs:
      result = a & 0x7fffffffffffffffull;
      return true;
    case Opcode::Copysign:
      result = (b & 0x7fffffffffffffffull) | (a & 0x8000000000000000ull);
      return true;
    case Opcode::Ex2:
    case Opcode::Lg2:
    case Opcode::Sin:
    case Opcode::Cos:
    case Opcode::Tanh: // PTX has these in f32 only
      return fail(warp, lane, inst, "unsupported for .f64");
    default:
      break;
    }
    std::optional<double> r = computeFloat(
        inst.opcode, bitsToF64(a), bitsToF64(b), bitsToF64(c), inst.nanMode);
    if (!r)
      return fail(warp, lane, inst, "unsupported for .f64");
    double value = *r;
    if (inst.sat)
      value = std::isnan(value) ? 0.0 : std::min(1.0, std::max(0.0, value));
    result = f64ToBits(value);
    return true;
  }
  if (type == Type::F16x2 || type == Type::BF16x2) {
    Type half = type == Type::F16x2 ? Type::F16 : Type::BF16;
    uint64_t lo, hi;
    if (!floatOp(warp, lane, inst, half, a & 0xffff, b & 0xffff, c & 0xffff,
                 lo) ||
        !floatOp(warp, lane, inst, half, (a >> 16) & 0xffff, (b >> 16) & 0xffff,
                 (c >> 16) & 0xffff, hi))
      return false;
    result = (lo & 0xffff) | ((hi & 0xffff) << 16);
    return true;
  }
  bool narrow = type == Type::F16 || type == Type::BF16;
  if (narrow) {
    uint64_t sign = 0x8000;
    switch (inst.opcode) {
    case Opcode::Neg:
      result = (a ^ sign) & 0xffff;
      return true;
    case Opcode::Abs:
      result = a & 0x7fff;
      return true;
    default:
      break;
    }
  }
  float x = unpackFloat(type, a), y = unpackFloat(type, b),
        z = unpackFloat(type, c), r;
  bool ftz = inst.ftz && type == Type::F32;
  if (ftz) {
    x = flushF32(x);
    y = flushF32(y);
    z = flushF32(z);
  }
  switch (inst.opcode) {
  case Opcode::Neg:
    result = a ^ 0x80000000ull;
    if (ftz)
      result = f32ToBits(-x);
    return true;
  case Opcode::Abs:
    result = a & 0x7fffffffull;
    if (ftz)
      result = f32ToBits(std::fabs(x));
    return true;
  case Opcode::Copysign:
    result = (b & 0x7fffffffull) | (a & 0x80000000ull);
    return true;
  default:
    break;
  }
  // For the 16-bit formats the f32 result of exact inputs is rounded once
  // more to 16 bits; that double rounding cannot change an f16/bf16 result
  // of add, mul or fma, as f32 carries more than twice their precision.
  std::optional<float> value = computeFloat(inst.opcode, x, y, z, inst.nanMode);
  if (!value)
    return fail(warp, lane, inst,
                std::string("unsupported for .") + getTypeName(type));
  r = *value;
  if (ftz)
    r = flushF32(r);
  if (inst.sat)
    r = std::isnan(r) ? 0.0f : std::min(1.0f, std::max(0.0f, r));
  result = packFloat(type, r);
  return true;
}

bool BlockRun::intOp(Warp &warp, unsigned lane, const Instruction &inst,
                     uint64_t a, uint64_t b, uint64_t c, uint64_t &result) {
  unsigned bits = getTypeBits(inst.type);
  bool isSigned = isSignedType(inst.type);
  uint64_t mask = maskOf(bits);
  using u128 = unsigned __int128;
  using s128 = __int128;
  uint32_t carryIn = inst.carryIn ? (warp.carry >> lane) & 1 : 0;
  auto setCarry = [&](bool carry) {
    if (inst.carryOut)
      warp.carry = (warp.carry & ~(1u << lane)) | (uint32_t(carry) << lane);
  };
  auto product = [&]() -> u128 {
    if (isSigned)
      return static_cast<u128>(static_cast<s128>(signExtend(a, bits)) *
                               static_cast<s128>(signExtend(b, bits)));
    return static_cast<u128>(a & mask) * static_cast<u128>(b & mask);
  };
  if (inst.type == Type::Pred) {
    bool x = a != 0, y = b != 0;
    switch (inst.opcode) {
    case Opcode::And:
      result = x && y;
      return true;
    case Opcode::Or:
      result = x || y;
      return true;
    case Opcode::Xor:
      result = x != y;
      return true;
    case Opcode::Not:
      result = !x;
      return true;
    default:
      return fail(warp, lane, inst, "unsupported for .pred");
    }
  }
  switch (inst.opcode) {
  case Opcode::Add: {
    u128 sum = static_cast<u128>(a & mask) + (b & mask) + carryIn;
    setCarry((sum >> bits) & 1);
    result = static_cast<uint64_t>(sum) & mask;
    if (inst.sat && isSigned && bits == 32) {
      int64_t wide = signExtend(a, 32) + signExtend(b, 32);
      wide = std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, wide));
      result = static_cast<uint64_t>(wide) & mask;
    }
    return true;
  }
  case Opcode::Sub: {
    u128 subtrahend = static_cast<u128>(b & mask) + carryIn;
    setCarry(static_cast<u128>(a & mask) < subtrahend);
    result =
        static_cast<uint64_t>(static_cast<u128>(a & mask) - subtrahend) & mask;
    if (inst.sat && isSigned && bits == 32) {
      int64_t wide = signExtend(a, 32) - signExtend(b, 32);
      wide = std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, wide));
      result = static_cast<uint64_t>(wide) & mask;
    }
    return true;
  }
  case Opcode::Mul: {
    u128 p = product();
    if (inst.wide)
      result = static_cast<uint64_t>(p) & maskOf(2 * bits);
    else if (inst.hi)
      result = static_cast<uint64_t>(p >> bits) & mask;
    else
      result = static_cast<uint64_t>(p) & mask;
    return true;
  }
  case Opcode::Mad: {
    u128 p = product();
    unsigned outBits = inst.wide ? 2 * bits : bits;
    uint64_t outMask = maskOf(outBits);
    uint64_t term = inst.wide ? static_cast<uint64_t>(p) & outMask
                    : inst.hi ? static_cast<uint64_t>(p >> bits) & mask
                              : static_cast<uint64_t>(p) & mask;
    u128 sum = static_cast<u128>(term) + (c & outMask) + carryIn;
    setCarry((sum >> outBits) & 1);
    result = static_cast<uint64_t>(sum) & outMask;
    return true;
  }
  case Opcode::Div:
  case Opcode::Rem: {
    bool div = inst.opcode == Opcode::Div;
    if ((b & mask) == 0) { // undefined in PTX; no trap on the GPU either
      result = div ? mask : a & mask;
      return true;
    }
    if (isSigned) {
      int64_t x = signExtend(a, bits), y = signExtend(b, bits);
      if (y == -1) {
        result = div ? static_cast<uint64_t>(-static_cast<u128>(x)) & mask : 0;
        return true;
      }
      result = static_cast<uint64_t>(div ? x / y : x % y) & mask;
    } else {
      result = (div ? (a & mask) / (b & mask) : (a & mask) % (b & mask));
    }
    return true;
  }
  case Opcode::Min:
  case Opcode::Max: {
    bool isMin = inst.opcode == Opcode::Min;
    if (isSigned) {
      int64_t x = signExtend(a, bits), y = signExtend(b, bits);
      result =
          static_cast<uint64_t>(isMin ? std::min(x, y) : std::max(x, y)) & mask;
    } else {
      result =
          isMin ? std::min(a & mask, b & mask) : std::max(a & mask, b & mask);
    }
    return true;
  }
  case Opcode::And:
    result = a & b & mask;
    return true;
  case Opcode::Or:
    result = (a | b) & mask;
    return true;
  case Opcode::Xor:
    result = (a ^ b) & mask;
    return true;
  case Opcode::Not:
    result = ~a & mask;
    return true;
  case Opcode::Cnot:
    result = (a & mask) == 0 ? 1 : 0;
    return true;
  case Opcode::Neg:
    result = (~a + 1) & mask;
    return true;
  case Opcode::Abs: {
    int64_t x = signExtend(a, bits);
    result = static_cast<uint64_t>(x < 0 ? -static_cast<u128>(x) : x) & mask;
    return true;
  }
  case Opcode::Shl: {
    uint64_t amount = b & 0xffffffffull;
    result = amount >= bits ? 0 : (a << amount) & mask;
    return true;
  }
  case Opcode::Shr: {
    uint64_t amount = b & 0xffffffffull;
    if (isSigned) {
      int64_t x = signExtend(a, bits);
      result = static_cast<uint64_t>(amount >= bits ? (x < 0 ? -1 : 0)
                                                    : x >> amount) &
               mask;
    } else {
      result = amount >= bits ? 0 : (a & mask) >> amount;
    }
    return true;
  }
  case Opcode::Popc:
    result = __builtin_popcountll(a & mask);
    return true;
  case Opcode::Clz: {
    uint64_t x = a & mask;
    result = x == 0 ? bits : __builtin_clzll(x) - (64 - bits);
    return true;
  }
  case Opcode::Brev: {
    uint64_t x = a & mask, r = 0;
    for (unsigned i = 0; i < bits; ++i)
      if ((x >> i) & 1)
        r |= 1ull << (bits - 1 - i);
    result = r;
    return true;
  }
  case Opcode::Bfe: {
    unsigned position = static_cast<unsigned>(b & 0xff);
    unsigned length = static_cast<unsigned>(c & 0xff);
    uint64_t x = a & mask;
    bool msb = false;
    if (isSigned && length > 0)
      msb = (x >> std::min(position + length - 1, bits - 1)) & 1;
    uint64_t r = 0;
    for (unsigned i = 0; i < bits; ++i) {
      bool bit = i < length
                     ? (position + i < bits ? (x >> (position + i)) & 1 : msb)
                     : msb;
      if (bit)
        r |= 1ull << i;
    }
    result = r;
    return true;
  }
  case Opcode::Prmt: {
    uint64_t bytes = (a & 0xffffffffull) | ((b & 0xffffffffull) << 32);
    uint32_t r = 0;
    for (unsigned i = 0; i < 4; ++i) {
      unsigned selector = (c >> (4 * i)) & 0xf;
      uint8_t byte = static_cast<uint8_t>(bytes >> (8 * (selector & 7)));
      if (selector & 8)
        byte = (byte & 0x80) ? 0xff : 0;
      r |= static_cast<uint32_t>(byte) << (8 * i);
    }
    if (inst.mode != 0)
      return fail(warp, lane, inst, "prmt modes are not supported");
    result = r;
    return true;
  }
  case Opcode::Shf: {
    bool right = inst.mode & 1, clamp = inst.mode & 2;
    uint64_t amount = c & 0xffffffffull;
    unsigned n = clamp ? static_cast<unsigned>(std::min<uint64_t>(amount, 32))
                       : static_cast<unsigned>(amount & 31);
    uint64_t pair = (a & 0xffffffffull) | ((b & 0xffffffffull) << 32);
    result = right ? (pair >> n) & 0xffffffffull
                   : ((pair << n) >> 32) & 0xffffffffull;
    return true;
  }
  default:
    return fail(warp, lane, inst,
                std::string("unsupported for .") + getTypeName(inst.type));
  }
}

bool BlockRun::convert(const Warp &warp, unsigned lane, const Instruction &inst,
                       uint64_t value, uint64_t &result) {
  Type to = inst.type, from = inst.srcType;
  unsigned toBits = getTypeBits(to), fromBits = getTypeBits(from);
  if (!isFloatType(from) && !isFloatType(to)) {
    int64_t x = isSignedType(from)
                    ? signExtend(value, fromBits)
                    : static_cast<int64_t>(value & maskOf(fromBits));
    bool fromUnsignedWide =
        !isSignedType(from) && fromBits == 64 && (value >> 63);
    if (inst.sat) {
      if (isSignedType(to)) {
        int64_t lo = signExtend(1ull << (toBits - 1), toBits);
        int64_t hi = static_cast<int64_t>(maskOf(toBits - 1));
        x = fromUnsignedWide ? hi : std::min(hi, std::max(lo, x));
      } else {
        int64_t hi =
            toBits >= 64 ? INT64_MAX : static_cast<int64_t>(maskOf(toBits));
        if (fromUnsignedWide)
          x = static_cast<int64_t>(maskOf(toBits));
        else
          x = std::min(hi, std::max<int64_t>(0, x));
      }
    }
    result = static_cast<uint64_t>(x) & maskOf(toBits);
    return true;
  }
  if (!isFloatType(from)) { // int -> float
    bool isSigned = isSignedType(from);
    int64_t s = signExtend(value, fromBits);
    uint64_t u = value & maskOf(fromBits);
    if (inst.rounding != Rounding::Rn && inst.rounding != Rounding::Default) {
      // Directed rounding matters only where the integer is not exact.
      double exact = isSigned ? static_cast<double>(s) : static_cast<double>(u);
      bool fits = to == Type::F64 ? std::fabs(exact) <= 9007199254740992.0
                                  : std::fabs(exact) <= 2048.0;
      if (!fits)
        return fail(warp, lane, inst,
                    "directed rounding of a large integer is not supported");
    }
    if (to == Type::F64) {
      result =
          f64ToBits(isSigned ? static_cast<double>(s) : static_cast<double>(u));
    } else if (to == Type::F32) {
      result =
          f32ToBits(isSigned ? static_cast<float>(s) : static_cast<float>(u));
    } else if (to == Type::F16 || to == Type::BF16) {
      float f = isSigned ? static_cast<float>(s) : static_cast<float>(u);
      if (std::fabs(f) > 16777216.0f)
        return fail(warp, lane, inst,
                    "integer to 16-bit float above 2^24 is not supported");
      result = packFloat(to, f);
    } else {
      return fail(warp, lane, inst, "unsupported conversion");
    }
    return true;
  }
  // From a float format.
  double x;
  if (from == Type::F64)
    x = bitsToF64(value);
  else if (from == Type::F32 || from == Type::F16 || from == Type::BF16)
    x = unpackFloat(from, value);
  else
    return fail(warp, lane, inst, "unsupported conversion source");
  if (inst.ftz && from == Type::F32)
    x = flushF32(static_cast<float>(x));
  if (!isFloatType(to)) { // float -> int: round, saturate, NaN -> 0
    if (std::isnan(x)) {
      result = 0;
      return true;
    }
    double r = roundIntegral(inst.rounding, x);
    if (isSignedType(to)) {
      double lo = -std::ldexp(1.0, toBits - 1),
             hi = std::ldexp(1.0, toBits - 1);
      int64_t v = r <= lo   ? signExtend(1ull << (toBits - 1), toBits)
                  : r >= hi ? static_cast<int64_t>(maskOf(toBits - 1))
                            : static_cast<int64_t>(r);
      result = static_cast<uint64_t>(v) & maskOf(toBits);
    } else {
      double hi = std::ldexp(1.0, toBits);
      uint64_t v = r <= 0    ? 0
                   : r >= hi ? maskOf(toBits)
                             : static_cast<uint64_t>(r);
      result = v;
    }
    return true;
  }
  // float -> float.
  bool integral =
      inst.rounding == Rounding::Rni || inst.rounding == Rounding::Rzi ||
      inst.rounding == Rounding::Rmi || inst.rounding == Rounding::Rpi;
  if (integral)
    x = roundIntegral(inst.rounding, x);
  bool directed =
      inst.rounding == Rounding::Rz || inst.rounding == Rounding::Rm ||
      inst.rounding == Rounding::Rp || inst.rounding == Rounding::Rna;
  if (directed && toBits < fromBits)
    return fail(warp, lane, inst,
                "directed rounding of a narrowing conversion is not supported");
  if (inst.sat)
    x = std::isnan(x) ? 0.0 : std::min(1.0, std::max(0.0, x));
  switch (to) {
  case Type::F64:
    result = f64ToBits(x);
    return true;
  case Type::F32: {
    float f = static_cast<float>(x);
    if (inst.ftz)
      f = flushF32(f);
    result = f32ToBits(f);
    return true;
  }
  case Type::F16:
  case Type::BF16:
    result = packFloat(to, from == Type::F64 ? f64ToF32RoundToOdd(x)
                                             : static_cast<float>(x));
    return true;
  default:
    return fail(warp, lane, inst, "unsupported conversion target");
  }
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
  for (uint32_t m = exec; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    uint64_t address = getAddress(warp, addressOp, lane, inst.space);
    uint8_t *host = resolve(warp, lane, inst, inst.space, address,
                            uint64_t(bytes) * count, !isLoad);
    if (!host)
      return false;
    for (unsigned e = 0; e < count; ++e) {
      uint8_t *element = host + e * bytes;
      if (isLoad) {
        uint64_t value = 0;
        std::memcpy(&value, element, bytes);
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
        std::memcpy(element, &value, bytes);
      }
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
  // Lanes update in lane order, each atomically with respect to the others.
  for (uint32_t m = exec; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    uint64_t address = getAddress(warp, addressOp, lane, inst.space);
    uint8_t *host = resolve(warp, lane, inst, inst.space, address, bytes, true);
    if (!host)
      return false;
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
  return true;
}

bool BlockRun::shuffle(Warp &warp, const Instruction &inst, uint32_t exec) {
  // shfl.sync.MODE.b32 d[|p], a, b, c, membermask
  unsigned first = __builtin_ctz(exec);
  uint32_t members =
      inst.operands.size() == 5
          ? static_cast<uint32_t>(read(warp, inst.operands[4], first))
          : ~0u;
  if ((members & warp.live & ~exec) != 0)
    return fail(
        warp, first, inst,
        "shfl.sync: lanes of the member mask are not converged "
        "(member mask 0x" +
            [&] {
              char text[16];
              std::snprintf(text, sizeof(text), "%08x", members);
              return std::string(text);
            }() +
            ")");
  const Operand &dest = inst.operands[0];
  uint32_t destReg = dest.kind == OperandKind::Vector ? dest.regs[0] : dest.reg;
  uint32_t predReg = dest.kind == OperandKind::Vector ? dest.regs[1] : kNoReg;
  uint64_t values[kWarpSize], results[kWarpSize];
  bool valid[kWarpSize];
  for (uint32_t m = exec; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    values[lane] = read(warp, inst.operands[1], lane) & 0xffffffffull;
  }
  for (uint32_t m = exec; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    uint32_t b = static_cast<uint32_t>(read(warp, inst.operands[2], lane));
    uint32_t c = static_cast<uint32_t>(read(warp, inst.operands[3], lane));
    int bval = b & 0x1f, cval = c & 0x1f, segmask = (c >> 8) & 0x1f;
    int maxLane = (int(lane) & segmask) | (cval & ~segmask);
    int minLane = int(lane) & segmask;
    int j = int(lane);
    bool inRange = false;
    switch (inst.mode) {
    case 0: // up
      j = int(lane) - bval;
      inRange = j >= maxLane;
      break;
    case 1: // down
      j = int(lane) + bval;
      inRange = j <= maxLane;
      break;
    case 2: // bfly
      j = int(lane) ^ bval;
      inRange = j <= maxLane;
      break;
    default: // idx
      j = minLane | (bval & ~segmask);
      inRange = j <= maxLane;
      break;
    }
    if (!inRange)
      j = int(lane);
    if (!((exec >> j) & 1))
      return fail(warp, lane, inst,
                  "shfl.sync reads lane " + std::to_string(j) +
                      ", which does not take part");
    results[lane] = values[j];
    valid[lane] = inRange;
  }
  for (uint32_t m = exec; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    write(warp, destReg, lane, results[lane]);
    write(warp, predReg, lane, valid[lane] ? 1 : 0);
  }
  return true;
}

bool BlockRun::vote(Warp &warp, const Instruction &inst, uint32_t exec) {
  unsigned first = __builtin_ctz(exec);
  uint32_t members =
      inst.operands.size() == 3
          ? static_cast<uint32_t>(read(warp, inst.operands[2], first))
          : ~0u;
  if ((members & warp.live & ~exec) != 0)
    return fail(warp, first, inst,
                "vote.sync: lanes of the member mask are not converged");
  uint32_t ballot = 0;
  for (uint32_t m = exec; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    if (read(warp, inst.operands[1], lane) != 0)
      ballot |= 1u << lane;
  }
  uint64_t value = 0;
  switch (inst.mode) {
  case 0:
    value = ballot == exec;
    break;
  case 1:
    value = ballot != 0;
    break;
  case 2:
    value = ballot == 0 || ballot == exec;
    break;
  default:
    value = ballot;
    break;
  }
  for (uint32_t m = exec; m; m &= m - 1)
    write(warp, inst.operands[0].reg, __builtin_ctz(m), value);
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
    for (uint32_t m = exec; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      uint64_t result;
      if (!convert(warp, lane, inst, read(warp, ops[1], lane), result))
        return false;
      write(warp, ops[0].reg, lane, result);
    }
    return true;
  }
  default:
    break;
  }
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
    bool ok = isFloat ? floatOp(warp, lane, inst, inst.type, a, b, c, result)
                      : intOp(warp, lane, inst, a, b, c, result);
    if (!ok)
      return false;
    write(warp, ops[0].reg, lane, result);
  }
  return true;
}

} // namespace

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
  for (uint32_t z = 0; z < grid.z; ++z)
    for (uint32_t y = 0; y < grid.y; ++y)
      for (uint32_t x = 0; x < grid.x; ++x) {
        BlockRun run(*this, module, kernel, grid, block, Dim3{x, y, z},
                     dynamicSharedBytes, params, counts);
        if (!run.run(error))
          return false;
        ++counts.blocks;
      }
  return true;
}
