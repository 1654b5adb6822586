//===- Hopper.cpp - mbarrier, bulk/tensor copies and wgmma ----------------===//
//
// The sm_90a asynchronous instructions, modeled so that the bugs they invite
// show up on the host:
//
// - An mbarrier is a side record keyed by its shared offset (its 8 bytes in
//   shared memory only carry the checks for initialization and races): the
//   expected arrival count, the arrivals and transaction bytes still pending
//   and the number of completed phases. A state token holds the phase of its
//   arrival; a wait on it succeeds once that phase has completed. A
//   try_wait on an incomplete phase suspends the thread, so that the
//   scheduler runs the other warps and can tell a deadlock.
// - Bulk and tensor copies (the async proxy) are queued at issue and
//   performed when the warps wait on mbarriers (not at a bar.sync), so a
//   thread that reads the destination before waiting on the mbarrier reads
//   memory nobody wrote, which the shared-memory checks report. A copy
//   completes its transaction bytes on the mbarrier when it is performed.
// - wgmma.mma_async computes at issue, each warp the 16 accumulator rows its
//   fragment holds (rows 16w..16w+15 of the warpgroup's 64), but its
//   accumulator and A registers stay in flight until a wgmma.wait_group
//   retires the group: any other instruction naming one of them is an
//   error.
//
//===----------------------------------------------------------------------===//

#include "Hopper.h"

#include "ridgeline/Emulator/Emulator.h"
#include "ridgeline/Emulator/FloatFormats.h"
#include "ridgeline/Emulator/TensorMap.h"

#include <algorithm>
#include <cstring>

using namespace ridge::emu;
using namespace ridge::emu::detail;

namespace {

constexpr unsigned kWarpSize = 32;

// Instruction::mode of Opcode::Mbarrier.
enum MbarrierOp : uint8_t {
  MbInit,
  MbInval,
  MbArrive,
  MbArriveDrop,
  MbExpectTx,
  MbCompleteTx,
  MbTestWait,
  MbTryWait,
  MbPendingCount,
};
// Instruction::variant bits of Opcode::Mbarrier.
constexpr uint32_t kMbExpectTx = 1, kMbParity = 2, kMbNoComplete = 4;

// Instruction::mode of Opcode::CpAsyncBulk.
enum BulkOp : uint8_t {
  BulkLoad,        // cp.async.bulk.shared::cluster.global.mbarrier...
  BulkStore,       // cp.async.bulk.global.shared::cta.bulk_group
  BulkTensorLoad,  // cp.async.bulk.tensor.Nd.shared::cluster.global...
  BulkTensorStore, // cp.async.bulk.tensor.Nd.global.shared::cta...
  BulkCommit,
  BulkWait,
};

// Instruction::mode of Opcode::Wgmma; variant holds N (bits 0-9) and
// kWgmmaARegs.
enum WgmmaOp : uint8_t { WgFence, WgCommit, WgWait, WgMma };
constexpr uint32_t kWgmmaARegs = 1u << 10;

std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx",
                static_cast<unsigned long long>(value));
  return text;
}

bool isNoEffect(const std::string &m) {
  static const char *const kNames[] = {
      "sync",    "aligned", "cta",     "cluster", "gpu",  "sys",
      "release", "acquire", "relaxed", "b64",     "tile", "bytes"};
  for (const char *name : kNames)
    if (m == name)
      return true;
  return false;
}

} // namespace

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

bool ridge::emu::detail::isHopperOpcode(const std::vector<std::string> &parts) {
  const std::string &head = parts[0];
  if (head == "mbarrier" || head == "wgmma" || head == "elect" ||
      head == "setmaxnreg" || head == "griddepcontrol")
    return true;
  if (head == "cp")
    return parts.size() > 2 && parts[1] == "async" && parts[2] == "bulk";
  if (head == "fence")
    return parts.size() > 1 &&
           (parts[1] == "proxy" || parts[1] == "mbarrier_init");
  return false;
}

bool ridge::emu::detail::decodeHopper(
    Instruction &inst, const std::vector<std::string> &parts,
    std::vector<Operand> operands,
    const std::vector<std::vector<uint32_t>> &extraRegs, std::string &error) {
  const std::string &head = parts[0];
  auto unsupported = [&](const std::string &what) {
    error = "unsupported " + what + " in '" + inst.text + "'";
    return false;
  };
  auto operandCount = [&](size_t low, size_t high) {
    if (operands.size() >= low && operands.size() <= high)
      return true;
    error = "'" + inst.text + "' takes " + std::to_string(low) +
            (high != low ? "-" + std::to_string(high) : "") +
            " operands, found " + std::to_string(operands.size());
    return false;
  };
  // The one operand of a wait_group: how many groups may stay in flight.
  auto isGroupCount = [&] {
    if (!operandCount(1, 1))
      return false;
    if (operands[0].kind == OperandKind::Imm)
      return true;
    error = "'" + inst.text + "' takes an immediate group count";
    return false;
  };
  auto isAddress = [&](size_t i) {
    if (i < operands.size() && operands[i].kind == OperandKind::Address)
      return true;
    error = "'" + inst.text + "': operand " + std::to_string(i + 1) +
            " must be an address";
    return false;
  };
  // A tensor copy's coordinates: a vector of as many as its dimensions.
  auto areCoordinates = [&](size_t i) {
    if (operands[i].kind == OperandKind::Vector &&
        operands[i].count == inst.variant)
      return true;
    error = "'" + inst.text + "' needs " + std::to_string(inst.variant) +
            " tensor coordinates";
    return false;
  };
  auto setSpace = [&](const std::string &m) {
    // A CTA's own shared memory is the whole cluster's for a launch without
    // clusters (which the emulator refuses), so ::cluster is ::cta here.
    if (m == "shared" || m == "shared::cta" || m == "shared::cluster") {
      inst.space = Space::Shared;
      return true;
    }
    return false;
  };
  bool hasLong = false;
  for (const std::vector<uint32_t> &extra : extraRegs)
    hasLong |= !extra.empty();

  if (head == "fence" || head == "setmaxnreg" || head == "griddepcontrol") {
    // fence.proxy.async and fence.mbarrier_init order the generic and async
    // proxies, which the emulator performs in program order at well-defined
    // points (copies when all warps wait); only the checks need them.
    // setmaxnreg only moves registers between warpgroups, and
    // griddepcontrol concerns overlapping launches, which run one after the
    // other here: both are no-ops without any effect on results.
    inst.opcode = Opcode::Membar;
    inst.operands.clear();
    // fence.proxy.async (for shared memory): mode 1, which the shared-memory
    // checks count (a thread's writes must be fenced before the async proxy
    // reads them); the others, mode 2, order nothing between blocks.
    inst.mode = 2;
    if (head == "fence" && parts[1] == "proxy" && parts.size() > 2 &&
        parts[2] == "async" &&
        (parts.size() == 3 || parts[3].rfind("shared", 0) == 0))
      inst.mode = 1;
    return true;
  }
  if (hasLong && head != "wgmma")
    return unsupported("vector operand of more than 8 elements");

  if (head == "elect") {
    if (parts.size() != 2 || parts[1] != "sync")
      return unsupported("form");
    if (!operandCount(2, 2))
      return false;
    inst.opcode = Opcode::Elect;
    inst.type = Type::B32;
    inst.operands = operands;
    return true;
  }

  if (head == "mbarrier") {
    inst.opcode = Opcode::Mbarrier;
    inst.type = Type::B64;
    if (parts.size() < 2)
      return unsupported("form");
    static const char *const kOps[] = {
        "init",        "inval",     "arrive",   "arrive_drop",  "expect_tx",
        "complete_tx", "test_wait", "try_wait", "pending_count"};
    bool found = false;
    for (uint8_t k = 0; k < 9; ++k)
      if (parts[1] == kOps[k]) {
        inst.mode = k;
        found = true;
      }
    if (!found)
      return unsupported("operation '." + parts[1] + "'");
    for (size_t i = 2; i < parts.size(); ++i) {
      const std::string &m = parts[i];
      if (setSpace(m) || isNoEffect(m) || m == "shared::cluster")
        continue;
      if (m == "expect_tx" &&
          (inst.mode == MbArrive || inst.mode == MbArriveDrop))
        inst.variant |= kMbExpectTx;
      else if (m == "parity" &&
               (inst.mode == MbTestWait || inst.mode == MbTryWait))
        inst.variant |= kMbParity;
      else if (m == "noComplete")
        inst.variant |= kMbNoComplete;
      else
        return unsupported("modifier '." + m + "'");
    }
    inst.operands = operands;
    switch (inst.mode) {
    case MbInit:
      return operandCount(2, 2) && isAddress(0);
    case MbInval:
      return operandCount(1, 1) && isAddress(0);
    case MbArrive:
    case MbArriveDrop:
      if (inst.variant & kMbExpectTx)
        return operandCount(3, 3) && isAddress(1);
      return operandCount(2, 3) && isAddress(1);
    case MbExpectTx:
    case MbCompleteTx:
      return operandCount(2, 2) && isAddress(0);
    case MbTestWait:
    case MbTryWait:
      return operandCount(3, 4) && isAddress(1);
    default:
      return operandCount(2, 2);
    }
  }

  if (head == "cp") {
    // cp.async.bulk[.tensor.Nd] DST.SRC[.tile][.mbarrier::complete_tx::bytes
    // | .bulk_group], and cp.async.bulk.commit_group / wait_group[.read].
    inst.opcode = Opcode::CpAsyncBulk;
    inst.type = Type::B8;
    size_t i = 3;
    bool tensor = false;
    if (parts.size() > 3 && parts[3] == "commit_group") {
      inst.mode = BulkCommit;
      inst.operands = operands;
      return parts.size() == 4 ? operandCount(0, 0) : unsupported("form");
    }
    if (parts.size() > 3 && parts[3] == "wait_group") {
      inst.mode = BulkWait;
      for (size_t k = 4; k < parts.size(); ++k)
        if (parts[k] != "read")
          return unsupported("modifier '." + parts[k] + "'");
      inst.operands = operands;
      return isGroupCount();
    }
    if (parts.size() > 4 && parts[3] == "tensor") {
      tensor = true;
      const std::string &dims = parts[4];
      if (dims.size() != 2 || dims[1] != 'd' || dims[0] < '1' || dims[0] > '5')
        return unsupported("dimension '." + dims + "'");
      inst.variant = static_cast<uint32_t>(dims[0] - '0');
      i = 5;
    }
    if (parts.size() < i + 2)
      return unsupported("form");
    const std::string &dst = parts[i], &src = parts[i + 1];
    bool load =
        (dst == "shared::cluster" || dst == "shared::cta") && src == "global";
    bool store = dst == "global" && src == "shared::cta";
    if (!load && !store)
      return unsupported("direction ." + dst + "." + src);
    bool mbarrier = false, bulkGroup = false;
    for (size_t k = i + 2; k < parts.size(); ++k) {
      const std::string &m = parts[k];
      if (m == "tile" && tensor)
        continue;
      if (m == "mbarrier::complete_tx::bytes")
        mbarrier = true;
      else if (m == "bulk_group")
        bulkGroup = true;
      else
        return unsupported("modifier '." + m + "'");
    }
    if ((load && !mbarrier) || (store && !bulkGroup))
      return unsupported("completion mechanism");
    inst.mode = tensor ? (load ? BulkTensorLoad : BulkTensorStore)
                       : (load ? BulkLoad : BulkStore);
    inst.space = Space::Shared;
    inst.operands = operands;
    switch (inst.mode) {
    case BulkLoad:
      return operandCount(4, 4) && isAddress(0) && isAddress(1) && isAddress(3);
    case BulkStore:
      return operandCount(3, 3) && isAddress(0) && isAddress(1);
    case BulkTensorLoad:
      // [dst], [tensorMap, {coords}], [mbar]: the parser splits the tensor
      // operand into the address and the coordinate vector.
      return operandCount(4, 4) && isAddress(0) && isAddress(1) &&
             isAddress(3) && areCoordinates(2);
    default:
      return operandCount(3, 3) && isAddress(0) && isAddress(2) &&
             areCoordinates(1);
    }
  }

  // wgmma.
  inst.opcode = Opcode::Wgmma;
  if (parts.size() < 2)
    return unsupported("form");
  const std::string &op = parts[1];
  if (op == "fence" || op == "commit_group" || op == "wait_group") {
    inst.mode = op == "fence"          ? WgFence
                : op == "commit_group" ? WgCommit
                                       : WgWait;
    inst.type = Type::B32;
    for (size_t k = 2; k < parts.size(); ++k)
      if (!isNoEffect(parts[k]))
        return unsupported("modifier '." + parts[k] + "'");
    inst.operands = operands;
    if (inst.mode != WgWait)
      return operandCount(0, 0);
    return isGroupCount();
  }
  if (op != "mma_async")
    return unsupported("operation '." + op + "'");
  inst.mode = WgMma;
  // wgmma.mma_async.sync.aligned.m64nNkK.DTYPE.ATYPE.BTYPE
  std::vector<Type> types;
  unsigned n = 0, k = 0;
  for (size_t p = 2; p < parts.size(); ++p) {
    const std::string &m = parts[p];
    if (isNoEffect(m))
      continue;
    if (m.size() > 3 && m[0] == 'm' && m.rfind("m64n", 0) == 0) {
      size_t kPos = m.find('k');
      if (kPos == std::string::npos)
        return unsupported("shape '." + m + "'");
      n = static_cast<unsigned>(std::atoi(m.substr(4, kPos - 4).c_str()));
      k = static_cast<unsigned>(std::atoi(m.substr(kPos + 1).c_str()));
      continue;
    }
    if (m == "f32" || m == "f16" || m == "bf16" || m == "tf32" || m == "e4m3" ||
        m == "e5m2") {
      types.push_back(m == "f32"    ? Type::F32
                      : m == "f16"  ? Type::F16
                      : m == "bf16" ? Type::BF16
                      : m == "tf32" ? Type::B32  // tf32
                      : m == "e4m3" ? Type::B8   // e4m3
                                    : Type::U8); // e5m2
      continue;
    }
    return unsupported("modifier '." + m + "'");
  }
  // A and B may mix e4m3 and e5m2; the other types are both the same.
  bool fp8 = types.size() == 3 &&
             (types[1] == Type::B8 || types[1] == Type::U8) &&
             (types[2] == Type::B8 || types[2] == Type::U8);
  if (types.size() != 3 || (types[1] != types[2] && !fp8))
    return unsupported("type combination");
  inst.type = types[0];    // accumulator
  inst.srcType = types[1]; // A (B32 stands for tf32, B8 e4m3, U8 e5m2)
  inst.bType = types[2];   // B
  bool tf32 = inst.srcType == Type::B32;
  if (n < 8 || n > 256 || n % 8 ||
      k != (tf32  ? 8u
            : fp8 ? 32u
                  : 16u) ||
      (inst.type == Type::F16 && inst.srcType != Type::F16 && !fp8) ||
      (tf32 && inst.type != Type::F32))
    return unsupported("shape or type combination");
  inst.variant = n;
  // D, A (descriptor or 4 registers), B descriptor, scale-d, imm-scale-a,
  // imm-scale-b[, imm-trans-a][, imm-trans-b].
  if (operands.size() < 6 || operands[0].kind != OperandKind::Vector) {
    error = "'" + inst.text + "' needs the accumulator vector, A, B, " +
            "scale-d, imm-scale-a and imm-scale-b";
    return false;
  }
  bool aRegs = operands[1].kind == OperandKind::Vector;
  if (aRegs)
    inst.variant |= kWgmmaARegs;
  unsigned accumulators = inst.type == Type::F32 ? n / 2 : n / 4;
  size_t dCount = operands[0].count + extraRegs[0].size();
  if (dCount != accumulators) {
    error = "'" + inst.text + "' needs " + std::to_string(accumulators) +
            " accumulator registers, found " + std::to_string(dCount);
    return false;
  }
  if (aRegs && operands[1].count != 4) {
    error = "'" + inst.text + "' needs 4 registers of A";
    return false;
  }
  // tf32 and the 8-bit types take no transposes (K-major only).
  size_t maxOperands = tf32 || fp8 ? 6 : aRegs ? 7 : 8;
  if (!operandCount(6, maxOperands))
    return false;
  for (size_t p = 4; p < operands.size(); ++p)
    if (operands[p].kind != OperandKind::Imm) {
      error = "'" + inst.text + "': operand " + std::to_string(p + 1) +
              " must be an immediate";
      return false;
    }
  operands[0].imm = static_cast<int64_t>(inst.longVector.size());
  inst.longVector.insert(inst.longVector.end(), extraRegs[0].begin(),
                         extraRegs[0].end());
  inst.operands = operands;
  return true;
}

//===----------------------------------------------------------------------===//
// mbarrier
//===----------------------------------------------------------------------===//

bool HopperUnit::getMbarrier(uint32_t warp, unsigned lane,
                             const Instruction &inst, const Operand &op,
                             uint64_t &offset, bool init) {
  uint64_t address = host.getAddress(warp, op, lane, inst.space);
  if (inst.space != Space::Shared) {
    if (address < DeviceMemory::kSharedWindow ||
        address >= DeviceMemory::kSharedWindow + DeviceMemory::kWindowSize)
      return host.fail(warp, lane, inst,
                       "mbarrier address " + hex(address) +
                           " is not in shared memory");
    address -= DeviceMemory::kSharedWindow;
  }
  if (!host.access(warp, lane, inst, Space::Shared, address, 8,
                   /*store=*/init, /*atomic=*/!init))
    return false;
  offset = address;
  if (!init && !mbarriers.count(address))
    return host.fail(warp, lane, inst,
                     "no mbarrier is initialized at shared offset " +
                         std::to_string(address));
  return true;
}

void HopperUnit::maybeComplete(Mbarrier &barrier) {
  if (barrier.pending != 0 || barrier.tx != 0)
    return;
  ++barrier.phase;
  barrier.pending = barrier.expected;
  ++version;
  host.synchronizeShared();
}

void HopperUnit::arrive(Mbarrier &barrier, uint32_t count) {
  barrier.pending -= count;
  ++version;
  maybeComplete(barrier);
}

void HopperUnit::completeTx(Mbarrier &barrier, int64_t bytes) {
  barrier.tx -= bytes;
  ++version;
  maybeComplete(barrier);
}

bool HopperUnit::mbarrierOp(uint32_t warp, const Instruction &inst,
                            uint32_t exec, HopperStep &step) {
  const std::vector<Operand> &ops = inst.operands;
  for (uint32_t m = exec; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    if (inst.mode == MbPendingCount) {
      // The token carries the arrivals still pending after its arrival.
      uint64_t token = host.readOperand(warp, ops[1], lane);
      host.writeReg(warp, ops[0].reg, lane, token >> 32);
      continue;
    }
    bool init = inst.mode == MbInit;
    size_t addressIndex = inst.mode == MbArrive || inst.mode == MbArriveDrop ||
                                  inst.mode == MbTestWait ||
                                  inst.mode == MbTryWait
                              ? 1
                              : 0;
    uint64_t offset;
    if (!getMbarrier(warp, lane, inst, ops[addressIndex], offset, init))
      return false;
    switch (inst.mode) {
    case MbInit: {
      uint64_t count = host.readOperand(warp, ops[1], lane) & 0xffffffffull;
      if (count == 0 || count > (1u << 20) - 1)
        return host.fail(warp, lane, inst,
                         "mbarrier.init count " + std::to_string(count) +
                             " is not in [1, 2^20 - 1]");
      Mbarrier &barrier = mbarriers[offset];
      barrier = Mbarrier();
      barrier.expected = barrier.pending = static_cast<uint32_t>(count);
      barrier.initLine = inst.line;
      ++version;
      break;
    }
    case MbInval:
      mbarriers.erase(offset);
      break;
    case MbArrive:
    case MbArriveDrop: {
      Mbarrier &barrier = mbarriers[offset];
      uint64_t phase = barrier.phase;
      uint32_t count = 1;
      if (inst.variant & kMbExpectTx) {
        barrier.tx += static_cast<int64_t>(
            host.readOperand(warp, ops[2], lane) & 0xffffffffull);
      } else if (ops.size() > 2) {
        count = static_cast<uint32_t>(host.readOperand(warp, ops[2], lane));
      }
      if (count > barrier.pending)
        return host.fail(warp, lane, inst,
                         "mbarrier at shared offset " + std::to_string(offset) +
                             ": " + std::to_string(count) +
                             " arrivals, but only " +
                             std::to_string(barrier.pending) + " of " +
                             std::to_string(barrier.expected) +
                             " are pending in this phase");
      if (inst.mode == MbArriveDrop)
        barrier.expected -= count;
      if (inst.variant & kMbNoComplete) {
        barrier.pending -= count;
        ++version;
      } else {
        arrive(barrier, count);
      }
      // The state token: the phase of the arrival in its low 32 bits (a
      // wait on it succeeds once that phase has completed), and the
      // arrivals still pending after it (mbarrier.pending_count) above.
      uint64_t pending = barrier.phase == phase ? barrier.pending : 0;
      if (ops[0].kind == OperandKind::Reg)
        host.writeReg(warp, ops[0].reg, lane,
                      (phase & 0xffffffffull) | (uint64_t(pending) << 32));
      break;
    }
    case MbExpectTx:
      mbarriers[offset].tx += static_cast<int64_t>(
          host.readOperand(warp, ops[1], lane) & 0xffffffffull);
      ++version;
      break;
    case MbCompleteTx:
      completeTx(mbarriers[offset],
                 static_cast<int64_t>(host.readOperand(warp, ops[1], lane) &
                                      0xffffffffull));
      break;
    default: { // test_wait, try_wait
      const Mbarrier &barrier = mbarriers[offset];
      uint64_t operand = host.readOperand(warp, ops[2], lane);
      bool complete = inst.variant & kMbParity
                          ? (barrier.phase & 1) != (operand & 1)
                          : barrier.phase > (operand & 0xffffffffull);
      if (complete) {
        host.writeReg(warp, ops[0].reg, lane, 1);
      } else if (inst.mode == MbTryWait) {
        // try_wait may suspend the thread until the phase completes; it
        // does so here, so that the other warps run and a wait nobody can
        // satisfy is a deadlock the scheduler reports.
        step.suspended |= 1u << lane;
      } else {
        host.writeReg(warp, ops[0].reg, lane, 0);
        step.yield = true;
      }
      break;
    }
    }
  }
  return true;
}

std::string HopperUnit::describeWait(uint32_t warp, const Instruction &inst,
                                     unsigned lane) const {
  uint64_t address = host.getAddress(warp, inst.operands[1], lane, inst.space);
  if (inst.space != Space::Shared)
    address -= DeviceMemory::kSharedWindow;
  auto it = mbarriers.find(address);
  if (it == mbarriers.end())
    return "the mbarrier at shared offset " + std::to_string(address);
  const Mbarrier &barrier = it->second;
  return "the mbarrier at shared offset " + std::to_string(address) +
         " (phase " + std::to_string(barrier.phase) + ", " +
         std::to_string(barrier.pending) + " of " +
         std::to_string(barrier.expected) + " arrivals and " +
         std::to_string(barrier.tx) + " transaction bytes pending)";
}

//===----------------------------------------------------------------------===//
// Bulk and tensor copies
//===----------------------------------------------------------------------===//

namespace {
/// Shared offset of a .shared address operand, or of a generic one in the
/// shared window; ~0 if a generic address is not shared.
uint64_t toSharedOffset(uint64_t address, Space space) {
  if (space == Space::Shared)
    return address;
  if (address >= DeviceMemory::kSharedWindow &&
      address < DeviceMemory::kSharedWindow + DeviceMemory::kWindowSize)
    return address - DeviceMemory::kSharedWindow;
  return ~0ull;
}
} // namespace

bool HopperUnit::bulkOp(uint32_t warp, const Instruction &inst, uint32_t exec) {
  WarpState &state = getWarp(warp);
  const std::vector<Operand> &ops = inst.operands;
  if (inst.mode == BulkCommit) {
    ++state.committedBulkGroups;
    for (Copy &copy : copies)
      if (copy.warp == warp && copy.group == 0 &&
          (copy.kind == Copy::Store || copy.kind == Copy::TensorStore))
        copy.group = state.committedBulkGroups;
    return true;
  }
  if (inst.mode == BulkWait) {
    // Bulk async-groups are per thread in PTX; the emulator keeps them per
    // warp, which only matters to code that waits in one lane for another
    // lane's group. The groups older than the N most recent are performed
    // now, in order.
    uint64_t keep = static_cast<uint64_t>(ops[0].imm);
    uint64_t upTo =
        state.committedBulkGroups > keep ? state.committedBulkGroups - keep : 0;
    for (auto it = copies.begin(); it != copies.end();) {
      if (it->warp == warp && it->group != 0 && it->group <= upTo) {
        Copy copy = *it;
        it = copies.erase(it);
        std::string error;
        if (!performCopy(copy, error))
          return false;
      } else {
        ++it;
      }
    }
    return true;
  }
  for (uint32_t m = exec; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    Copy copy;
    copy.warp = warp;
    copy.lane = lane;
    copy.inst = &inst;
    bool tensorLoad = inst.mode == BulkTensorLoad;
    bool tensor = tensorLoad || inst.mode == BulkTensorStore;
    const Operand &sharedOp = ops[inst.mode == BulkStore         ? 1
                                  : inst.mode == BulkTensorStore ? 2
                                                                 : 0];
    copy.shared = toSharedOffset(
        host.getAddress(warp, sharedOp, lane, Space::Shared), Space::Shared);
    if (tensor) {
      const Operand &mapOp = ops[tensorLoad ? 1 : 0];
      uint64_t mapAddress = host.getAddress(warp, mapOp, lane, Space::Generic);
      const uint8_t *bytes = nullptr;
      if (mapAddress >= DeviceMemory::kParamWindow &&
          mapAddress < DeviceMemory::kParamWindow + DeviceMemory::kWindowSize) {
        bytes = host.accessParam(mapAddress - DeviceMemory::kParamWindow,
                                 kTensorMapBytes);
        if (!bytes)
          return host.fail(
              warp, lane, inst,
              "the tensor map at parameter offset " +
                  std::to_string(mapAddress - DeviceMemory::kParamWindow) +
                  " is past the kernel's parameters");
      } else {
        std::string error;
        bytes = host.accessGlobalAsync(mapAddress, kTensorMapBytes, error);
        if (!bytes)
          return host.fail(warp, lane, inst, "tensor map: " + error);
      }
      if (mapAddress % 64)
        return host.fail(warp, lane, inst,
                         "the tensor map at " + hex(mapAddress) +
                             " is not 64-byte aligned");
      TensorMap map;
      std::string error;
      if (!decodeTensorMap(bytes, map, error))
        return host.fail(warp, lane, inst, error);
      if (map.rank != inst.variant)
        return host.fail(warp, lane, inst,
                         "a " + std::to_string(inst.variant) +
                             "-d copy with a tensor map of rank " +
                             std::to_string(map.rank));
      copy.tensorMap.assign(bytes, bytes + kTensorMapBytes);
      const Operand &coords = ops[tensorLoad ? 2 : 1];
      for (unsigned d = 0; d < map.rank; ++d)
        copy.coords[d] = static_cast<int32_t>(
            host.readReg(warp, coords.regs[d], lane) & 0xffffffffull);
      if (coords.immMask)
        for (unsigned d = 0; d < map.rank; ++d)
          if ((coords.immMask >> d) & 1)
            copy.coords[d] = static_cast<int32_t>(coords.vectorImms[d]);
      if (copy.shared % 128)
        return host.fail(warp, lane, inst,
                         "the shared-memory address of a tensor copy must be "
                         "128-byte aligned (shared offset " +
                             std::to_string(copy.shared) + ")");
      copy.kind = tensorLoad ? Copy::TensorLoad : Copy::TensorStore;
    } else {
      const Operand &globalOp = ops[inst.mode == BulkStore ? 0 : 1];
      copy.global = host.getAddress(warp, globalOp, lane, Space::Global);
      copy.bytes = host.readOperand(warp, ops[2], lane) & 0xffffffffull;
      if (copy.bytes % 16 || copy.shared % 16 || copy.global % 16)
        return host.fail(warp, lane, inst,
                         "cp.async.bulk needs 16-byte aligned addresses and a "
                         "size that is a multiple of 16 (size " +
                             std::to_string(copy.bytes) + ")");
      copy.kind = inst.mode == BulkStore ? Copy::Store : Copy::Load;
    }
    if (copy.shared == ~0ull)
      return host.fail(warp, lane, inst,
                       "the shared-memory operand is not in shared memory");
    if (copy.kind == Copy::Load || copy.kind == Copy::TensorLoad) {
      uint64_t barrier;
      if (!getMbarrier(warp, lane, inst, ops[3], barrier, false))
        return false;
      copy.mbarrier = barrier;
    } else {
      copy.group = 0; // joins the warp's open bulk async-group
    }
    copies.push_back(std::move(copy));
  }
  return true;
}

bool HopperUnit::performCopy(const Copy &copy, std::string &error) {
  const Instruction &inst = *copy.inst;
  auto failCopy = [&](const std::string &message) {
    host.fail(copy.warp, copy.lane, inst, message);
    error = message;
    return false;
  };
  uint64_t transferred = 0;
  if (copy.kind == Copy::Load || copy.kind == Copy::Store) {
    std::string why;
    uint8_t *global = host.accessGlobalAsync(copy.global, copy.bytes, why);
    if (!global)
      return failCopy("bulk copy: " + why);
    uint8_t *shared = host.accessSharedAsync(copy.shared, copy.bytes,
                                             copy.kind == Copy::Load, why);
    if (!shared)
      return failCopy("bulk copy: " + why);
    if (copy.kind == Copy::Load)
      std::memcpy(shared, global, copy.bytes);
    else
      std::memcpy(global, shared, copy.bytes);
    transferred = copy.bytes;
    std::vector<uint64_t> pieces;
    for (uint64_t offset = 0; offset < copy.bytes; offset += 16)
      pieces.push_back(copy.global + offset);
    host.countAsyncGlobal(copy.kind == Copy::Load, pieces);
  } else {
    TensorMap map;
    std::string why;
    decodeTensorMap(copy.tensorMap.data(), map, why);
    unsigned elementBytes = getTensorElementBytes(map.dataType);
    uint64_t counts[5] = {1, 1, 1, 1, 1};
    uint64_t total = 1;
    for (unsigned d = 0; d < map.rank; ++d) {
      counts[d] =
          (map.boxDim[d] + map.elementStrides[d] - 1) / map.elementStrides[d];
      total *= counts[d];
    }
    bool load = copy.kind == Copy::TensorLoad;
    // The whole box lands in (or leaves) shared memory, out-of-bounds
    // elements included; the swizzle permutes 16-byte chunks within each
    // 1024-byte-aligned block, so checking the box's extent once bounds
    // every element when the box ends at such a boundary, and each element
    // is checked again below anyway.
    uint64_t boxBytes = total * elementBytes;
    if (!host.accessSharedAsync(copy.shared, boxBytes, load, why))
      return failCopy("tensor copy: " + why);
    // The global bytes moved, in 16-byte pieces (rows of the box are whole
    // 16-byte units: the map's box[0] x element size is a multiple of 16).
    std::vector<uint64_t> pieces;
    for (uint64_t linear = 0; linear < total; ++linear) {
      uint64_t rest = linear;
      bool inBounds = true;
      uint64_t globalOffset = 0;
      for (unsigned d = 0; d < map.rank; ++d) {
        uint64_t index = rest % counts[d];
        rest /= counts[d];
        int64_t coordinate =
            copy.coords[d] +
            static_cast<int64_t>(index * map.elementStrides[d]);
        if (coordinate < 0 ||
            static_cast<uint64_t>(coordinate) >= map.globalDim[d])
          inBounds = false;
        else
          globalOffset +=
              static_cast<uint64_t>(coordinate) * map.globalStrides[d];
      }
      uint64_t sharedOffset =
          swizzleAddress(copy.shared + linear * elementBytes, map.swizzle);
      uint8_t *shared =
          host.accessSharedAsync(sharedOffset, elementBytes, load, why);
      if (!shared)
        return failCopy("tensor copy: " + why);
      if (!inBounds) {
        // Out-of-bounds elements of a load are filled (zeros, or NaN when
        // the map asks for it); those of a store are not written.
        if (load)
          std::memset(shared, map.oobFill ? 0xff : 0, elementBytes);
        continue;
      }
      uint64_t address = map.globalAddress + globalOffset;
      uint8_t *global = host.accessGlobalAsync(address, elementBytes, why);
      if (!global)
        return failCopy("tensor copy: " + why);
      if (pieces.empty() || address / 16 != pieces.back() / 16)
        pieces.push_back(address / 16 * 16);
      if (load)
        std::memcpy(shared, global, elementBytes);
      else
        std::memcpy(global, shared, elementBytes);
    }
    transferred = boxBytes;
    host.countAsyncGlobal(load, pieces);
  }
  ++version;
  if (copy.mbarrier != ~0ull) {
    auto it = mbarriers.find(copy.mbarrier);
    if (it == mbarriers.end())
      return failCopy("the mbarrier at shared offset " +
                      std::to_string(copy.mbarrier) +
                      " was invalidated while a copy was in flight");
    completeTx(it->second, static_cast<int64_t>(transferred));
  }
  return true;
}

bool HopperUnit::drain(std::string &error) {
  while (!copies.empty()) {
    Copy copy = std::move(copies.front());
    copies.pop_front();
    if (!performCopy(copy, error))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// wgmma
//===----------------------------------------------------------------------===//

bool HopperUnit::checkOperands(uint32_t warp, const Instruction &inst,
                               uint32_t exec) {
  if (inst.opcode == Opcode::Wgmma || !exec)
    return true;
  WarpState &state = warps[warp];
  auto check = [&](uint32_t reg) {
    if (reg == kNoReg)
      return true;
    auto it = state.inflightRegs.find(reg);
    if (it == state.inflightRegs.end()) {
      // PTX requires a wgmma.fence between this access and the next
      // wgmma.mma_async that uses the register.
      if (state.fenced && state.wgmmaRegs.count(reg))
        state.fenced = false;
      return true;
    }
    return host.fail(warp, __builtin_ctz(exec), inst,
                     "register " + host.getRegName(reg) +
                         " of the wgmma.mma_async at PTX line " +
                         std::to_string(it->second.line) +
                         " is accessed before a wgmma.wait_group retires it");
  };
  for (const Operand &op : inst.operands) {
    if (op.kind == OperandKind::Reg || op.kind == OperandKind::Address) {
      if (!check(op.reg))
        return false;
    } else if (op.kind == OperandKind::Vector) {
      for (unsigned e = 0; e < std::min<unsigned>(op.count, 8); ++e)
        if (!check(op.regs[e]))
          return false;
    }
  }
  return check(inst.guard);
}

namespace {
/// Byte offset of element (mn, k) of a wgmma operand in shared memory,
/// before swizzling, for the canonical layouts of the PTX ISA (CUTLASS's
/// GMMA layouts): K-major (k contiguous in 16-byte chunks, rows of the
/// swizzle width, 8-row groups SBO apart, and for no swizzle, 16-byte
/// k-chunks LBO apart) or MN-major (mn contiguous).
uint64_t operandOffset(unsigned mn, unsigned k, unsigned elementBytes,
                       bool mnMajor, unsigned swizzle, uint64_t lbo,
                       uint64_t sbo) {
  unsigned perChunk = 16 / elementBytes;            // elements in 16 bytes
  unsigned width = swizzle ? (16u << swizzle) : 16; // bytes of a row
  if (!mnMajor) {
    uint64_t offset = (mn % 8) * uint64_t(width) + (mn / 8) * sbo;
    if (swizzle)
      return offset + uint64_t(k) * elementBytes;
    return offset + (k % perChunk) * elementBytes + (k / perChunk) * lbo;
  }
  // MN-major: mn runs along the row; 8 k-rows form a core matrix group.
  if (!swizzle)
    return (mn % perChunk) * elementBytes + (mn / perChunk) * sbo +
           (k % 8) * 16 + (k / 8) * lbo;
  unsigned perRow = width / elementBytes;
  return (mn % perRow) * elementBytes + (mn / perRow) * lbo +
         (k % 8) * uint64_t(width) + (k / 8) * sbo;
}

double operandValue(Type type, uint64_t bits) {
  switch (type) {
  case Type::F16:
    return halfToF32(static_cast<uint16_t>(bits));
  case Type::BF16:
    return bf16ToF32(static_cast<uint16_t>(bits));
  case Type::B8: // e4m3
  case Type::U8: // e5m2
    return fp8ToF32(static_cast<uint8_t>(bits), type == Type::U8);
  default: // tf32: the low 13 mantissa bits of the f32 are ignored
    return bitsToF32(bits & 0xffffe000u);
  }
}
} // namespace

bool HopperUnit::mma(uint32_t warp, const Instruction &inst, uint32_t exec) {
  const std::vector<Operand> &ops = inst.operands;
  unsigned n = inst.variant & 0x3ff;
  bool aRegs = inst.variant & kWgmmaARegs;
  bool tf32 = inst.srcType == Type::B32;
  bool fp8 = inst.srcType == Type::B8 || inst.srcType == Type::U8;
  unsigned k = tf32 ? 8 : fp8 ? 32 : 16;
  unsigned elementBytes = tf32 ? 4 : fp8 ? 1 : 2;
  unsigned first = __builtin_ctz(exec);
  unsigned slice = warp % 4; // this warp's 16 rows of the 64
  // Descriptors and scale-d must be uniform across the warpgroup; the first
  // lane's stand for all, once the warp's lanes are seen to agree.
  for (size_t index : {size_t(1), size_t(2), size_t(3)}) {
    if (index == 1 && aRegs)
      continue;
    uint64_t value = host.readOperand(warp, ops[index], first);
    for (unsigned lane = first + 1; lane < kWarpSize; ++lane)
      if (host.readOperand(warp, ops[index], lane) != value)
        return host.fail(warp, lane, inst,
                         std::string("wgmma: the ") +
                             (index == 1   ? "A descriptor"
                              : index == 2 ? "B descriptor"
                                           : "scale-d predicate") +
                             " differs between lanes " + std::to_string(first) +
                             " and " + std::to_string(lane) +
                             " (it must be uniform across the warpgroup)");
  }
  bool scaleD = host.readOperand(warp, ops[3], first) != 0;
  if (ops[3].kind == OperandKind::Imm)
    scaleD = ops[3].imm != 0;
  double scaleA = ops[4].imm < 0 ? -1 : 1, scaleB = ops[5].imm < 0 ? -1 : 1;
  bool transA = !aRegs && !tf32 && !fp8 && ops.size() > 6 && ops[6].imm != 0;
  bool transB = !tf32 && !fp8 && ops.size() > (aRegs ? 6u : 7u) &&
                ops[aRegs ? 6 : 7].imm != 0;

  struct Descriptor {
    uint64_t start, lbo, sbo;
    unsigned swizzle;
  };
  auto decodeDescriptor = [&](uint64_t bits, Descriptor &desc,
                              const char *which) {
    desc.start = (bits & 0x3fff) << 4;
    desc.lbo = ((bits >> 16) & 0x3fff) << 4;
    desc.sbo = ((bits >> 32) & 0x3fff) << 4;
    unsigned layout = static_cast<unsigned>(bits >> 62);
    // Layout type 1 is 128B, 2 64B, 3 32B; as a swizzle width exponent
    // (Swizzle<B,4,3>), 128B is 3 and 32B is 1.
    desc.swizzle = layout == 0 ? 0 : 4 - layout;
    unsigned baseOffset = static_cast<unsigned>((bits >> 49) & 7);
    if (baseOffset != 0)
      return host.fail(warp, first, inst,
                       std::string("the ") + which +
                           " matrix descriptor has a base offset (" +
                           std::to_string(baseOffset) +
                           "), which is not supported");
    if ((bits & 0x3ffc'c000'c000'c000ull) != 0) // bits 14-15, 30-31, 46-48
      return host.fail(warp, first, inst,
                       std::string("malformed ") + which +
                           " matrix descriptor " + hex(bits) +
                           ": reserved bits are set");
    return true;
  };
  auto readShared = [&](const Descriptor &desc, unsigned mn, unsigned kk,
                        bool mnMajor, uint64_t &bits, const char *which) {
    uint64_t logical =
        desc.start + operandOffset(mn, kk, elementBytes, mnMajor, desc.swizzle,
                                   desc.lbo, desc.sbo);
    uint64_t offset =
        swizzleAddress(logical, static_cast<TensorSwizzle>(desc.swizzle));
    std::string why;
    uint8_t *data = host.accessSharedAsync(offset, elementBytes, false, why);
    if (!data)
      return host.fail(warp, first, inst,
                       std::string("wgmma ") + which + " descriptor (start " +
                           std::to_string(desc.start) + ", LBO " +
                           std::to_string(desc.lbo) + ", SBO " +
                           std::to_string(desc.sbo) + "): " + why);
    bits = 0;
    std::memcpy(&bits, data, elementBytes);
    return true;
  };

  // A: this warp's 16 rows.
  double a[16][32];
  if (aRegs) {
    // The mma.sync m16nNk16 A fragment: register j of lane l holds rows
    // l/4 (+8 for j odd) and k pair (l%4)*2 (+8 for j >= 2); for tf32 one
    // element per register, k = l%4 (+4 for j >= 2); for the 8-bit types
    // four, k = (l%4)*4 + byte (+16 for j >= 2).
    for (unsigned lane = 0; lane < kWarpSize; ++lane)
      for (unsigned j = 0; j < 4; ++j) {
        uint64_t bits = host.readReg(warp, ops[1].regs[j], lane);
        unsigned row = lane / 4 + (j % 2) * 8;
        if (tf32) {
          a[row][lane % 4 + (j / 2) * 4] = operandValue(inst.srcType, bits);
          continue;
        }
        if (fp8) {
          for (unsigned byte = 0; byte < 4; ++byte)
            a[row][(lane % 4) * 4 + byte + (j / 2) * 16] =
                operandValue(inst.srcType, (bits >> (8 * byte)) & 0xff);
          continue;
        }
        unsigned col = (lane % 4) * 2 + (j / 2) * 8;
        a[row][col] = operandValue(inst.srcType, bits & 0xffff);
        a[row][col + 1] = operandValue(inst.srcType, (bits >> 16) & 0xffff);
      }
  } else {
    Descriptor desc;
    if (!decodeDescriptor(host.readOperand(warp, ops[1], first), desc, "A"))
      return false;
    for (unsigned row = 0; row < 16; ++row)
      for (unsigned kk = 0; kk < k; ++kk) {
        uint64_t bits;
        if (!readShared(desc, slice * 16 + row, kk, transA, bits, "A"))
          return false;
        a[row][kk] = operandValue(inst.srcType, bits);
      }
  }
  // B: all N columns.
  Descriptor descB;
  if (!decodeDescriptor(host.readOperand(warp, ops[2], first), descB, "B"))
    return false;
  std::vector<double> b(size_t(n) * k);
  for (unsigned col = 0; col < n; ++col)
    for (unsigned kk = 0; kk < k; ++kk) {
      uint64_t bits;
      if (!readShared(descB, col, kk, transB, bits, "B"))
        return false;
      b[size_t(col) * k + kk] = operandValue(inst.bType, bits);
    }

  // D fragment: register i of lane l holds row l/4 (+8 if bit 1 of i is
  // set) and column (i/4)*8 + (l%4)*2 + i%2; f16 accumulators pack two
  // consecutive i in one register.
  const Operand &d = ops[0];
  auto dReg = [&](unsigned e) {
    return e < 8 ? d.regs[e] : inst.longVector[size_t(d.imm) + e - 8];
  };
  bool f16Acc = inst.type == Type::F16;
  WarpState &state = getWarp(warp);
  for (unsigned lane = 0; lane < kWarpSize; ++lane)
    for (unsigned i = 0; i < n / 2; ++i) {
      unsigned row = lane / 4 + ((i >> 1) & 1) * 8;
      unsigned col = (i / 4) * 8 + (lane % 4) * 2 + (i % 2);
      // The products of one k-step are summed exactly (each has at most
      // 24 significant bits) and the sum is added to the accumulator with
      // one rounding; the hardware's order is undocumented, so results
      // agree bit for bit when every partial sum is exact.
      double sum = 0;
      for (unsigned kk = 0; kk < k; ++kk)
        sum += (scaleA * a[row][kk]) * (scaleB * b[size_t(col) * k + kk]);
      uint32_t reg = dReg(f16Acc ? i / 2 : i);
      uint64_t old = host.readReg(warp, reg, lane);
      if (f16Acc) {
        unsigned shift = (i % 2) * 16;
        double acc =
            scaleD ? halfToF32(static_cast<uint16_t>(old >> shift)) : 0.0;
        uint64_t half = f32ToHalf(static_cast<float>(acc + sum));
        old = (old & ~(0xffffull << shift)) | (half << shift);
        host.writeReg(warp, reg, lane, old & 0xffffffffull);
      } else {
        double acc = scaleD ? bitsToF32(old) : 0.0;
        host.writeReg(warp, reg, lane,
                      f32ToBits(static_cast<float>(acc + sum)));
      }
    }
  // The accumulators, and A's registers, stay in flight until the
  // wgmma.wait_group that retires this group.
  std::vector<uint32_t> regs;
  for (unsigned e = 0; e < (f16Acc ? n / 4 : n / 2); ++e)
    regs.push_back(dReg(e));
  if (aRegs)
    regs.insert(regs.end(), ops[1].regs, ops[1].regs + 4);
  for (uint32_t reg : regs) {
    state.uncommitted.push_back(reg);
    state.wgmmaRegs.insert(reg);
    InFlight &entry = state.inflightRegs[reg];
    ++entry.count;
    entry.line = inst.line;
  }
  return true;
}

bool HopperUnit::wgmmaOp(uint32_t warp, const Instruction &inst, uint32_t pc,
                         uint32_t exec) {
  WarpState &state = getWarp(warp);
  unsigned first = __builtin_ctz(exec);
  // .sync.aligned: every thread of the warpgroup executes the same wgmma
  // instruction. Within a warp all live lanes issue together; across the
  // warpgroup's four warps, which run one after the other here, each warp
  // must issue the same sequence of wgmma instructions.
  uint32_t live = host.getLiveLanes(warp);
  if (exec != live || live != ~0u)
    return host.fail(warp, first, inst,
                     "wgmma: the 32 lanes of the warp are not converged "
                     "(a warpgroup instruction needs all 128 threads)");
  uint32_t group = warp / 4;
  if (host.getNumWarps() < group * 4 + 4)
    return host.fail(
        warp, first, inst,
        "wgmma: warp " + std::to_string(warp) +
            " is not part of a complete warpgroup (the block has " +
            std::to_string(host.getNumWarps()) + " warps)");
  size_t index = state.wgmmaPcs.size();
  for (uint32_t other = group * 4; other < group * 4 + 4; ++other) {
    if (other == warp || warps.size() <= other)
      continue;
    const std::vector<uint32_t> &pcs = warps[other].wgmmaPcs;
    if (pcs.size() > index && pcs[index] != pc)
      return host.fail(warp, first, inst,
                       "wgmma: the warpgroup is not converged: warp " +
                           std::to_string(other) +
                           " issued a different wgmma instruction here");
  }
  state.wgmmaPcs.push_back(pc);
  switch (inst.mode) {
  case WgFence:
    state.fenced = true;
    return true;
  case WgCommit:
    state.groups.push_back(WgmmaGroup{std::move(state.uncommitted)});
    state.uncommitted.clear();
    return true;
  case WgWait: {
    size_t keep = static_cast<size_t>(inst.operands[0].imm);
    while (state.groups.size() > keep) {
      for (uint32_t reg : state.groups.front().regs) {
        auto it = state.inflightRegs.find(reg);
        if (it != state.inflightRegs.end() && --it->second.count == 0)
          state.inflightRegs.erase(it);
      }
      state.groups.pop_front();
    }
    return true;
  }
  default:
    if (!state.fenced)
      return host.fail(warp, first, inst,
                       "wgmma.mma_async without a wgmma.fence before it "
                       "(needed before the first wgmma.mma_async and after "
                       "other instructions access wgmma registers)");
    return mma(warp, inst, exec);
  }
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

bool HopperUnit::execute(uint32_t warp, const Instruction &inst, uint32_t pc,
                         uint32_t exec, HopperStep &step) {
  switch (inst.opcode) {
  case Opcode::Mbarrier:
    return mbarrierOp(warp, inst, exec, step);
  case Opcode::CpAsyncBulk:
    return bulkOp(warp, inst, exec);
  case Opcode::Wgmma:
    return wgmmaOp(warp, inst, pc, exec);
  case Opcode::Elect: {
    // elect.sync d|p, membermask: the lowest active lane of the mask.
    unsigned first = __builtin_ctz(exec);
    uint32_t members =
        static_cast<uint32_t>(host.readOperand(warp, inst.operands[1], first));
    if (members & host.getLiveLanes(warp) & ~exec)
      return host.fail(warp, first, inst,
                       "elect.sync: lanes of the member mask are not "
                       "converged");
    uint32_t candidates = members & exec;
    unsigned leader = candidates ? __builtin_ctz(candidates) : kWarpSize;
    const Operand &dest = inst.operands[0];
    for (uint32_t m = exec; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      if (dest.kind == OperandKind::Vector) {
        host.writeReg(warp, dest.regs[0], lane, leader);
        host.writeReg(warp, dest.regs[1], lane, lane == leader);
      } else {
        host.writeReg(warp, dest.reg, lane, leader);
      }
    }
    return true;
  }
  default:
    return host.fail(warp, __builtin_ctz(exec), inst,
                     "not a Hopper instruction");
  }
}

bool HopperUnit::finish() {
  std::string error;
  if (!drain(error))
    return false;
  for (uint32_t group = 0; group * 4 < warps.size(); ++group) {
    uint32_t longest = group * 4;
    for (uint32_t w = group * 4; w < group * 4 + 4 && w < warps.size(); ++w)
      if (warps[w].wgmmaPcs.size() > warps[longest].wgmmaPcs.size())
        longest = w;
    for (uint32_t w = group * 4; w < group * 4 + 4 && w < warps.size(); ++w) {
      size_t count = warps[w].wgmmaPcs.size();
      if (count == warps[longest].wgmmaPcs.size())
        continue;
      const Instruction &inst =
          host.getInstruction(warps[longest].wgmmaPcs[count]);
      return host.fail(
          longest, 0, inst,
          "wgmma: the warpgroup is not converged: warp " + std::to_string(w) +
              " never issues this " + "instruction (it issued " +
              std::to_string(count) + " wgmma instructions, warp " +
              std::to_string(longest) + " " +
              std::to_string(warps[longest].wgmmaPcs.size()) + ")");
    }
  }
  return true;
}
