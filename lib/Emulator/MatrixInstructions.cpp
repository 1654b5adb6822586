//===- MatrixInstructions.cpp - sm_80 tensor-core and cp.async ops -------===//
//
// The executor's side of the warp-wide matrix instructions (mma, wmma,
// ldmatrix/stmatrix) and of cp.async: each gathers its operands from the
// warp's registers and its memory through BlockRun's checked accesses, and
// leaves the semantics to WarpMatrix.cpp (fragment layouts, the products)
// and AsyncCopy.cpp (the groups in flight). They are kept apart from
// Executor.cpp, which schedules the lanes and warps; none of them is on the
// path of plain arithmetic and memory instructions.
//
//===----------------------------------------------------------------------===//

#include "BlockRun.h"
#include "LaneArithmetic.h"
#include "WarpMatrix.h"

#include <cstdio>
#include <cstring>

namespace ridge::emu::detail {

bool BlockRun::requireWholeWarp(const Warp &warp, const Instruction &inst,
                                uint32_t exec) {
  // The .sync.aligned matrix instructions are executed by all 32 lanes of
  // the warp together; on hardware anything less is undefined.
  if (exec == ~0u)
    return true;
  char mask[16];
  std::snprintf(mask, sizeof(mask), "%08x", exec);
  return fail(warp, __builtin_ctz(exec), inst,
              inst.text.substr(0, inst.text.find(".sync") + 5) +
                  ": the 32 lanes of the warp are not converged (active "
                  "lanes 0x" +
                  mask + ")");
}

/// Element `e` of a vector operand, or the register of a one-element one.
static uint32_t getElementReg(const Operand &op, unsigned e) {
  return op.kind == OperandKind::Vector ? op.regs[e] : op.reg;
}

bool BlockRun::matrixOp(Warp &warp, const Instruction &inst, uint32_t exec) {
  if (!requireWholeWarp(warp, inst, exec))
    return false;
  auto gather = [&](const Operand &op) {
    std::vector<uint32_t> regs(op.count * kWarpSize);
    for (unsigned e = 0; e < op.count; ++e)
      for (unsigned lane = 0; lane < kWarpSize; ++lane)
        regs[e * kWarpSize + lane] =
            static_cast<uint32_t>(readElement(warp, op, e, lane));
    return regs;
  };
  std::vector<uint32_t> d;
  std::string error =
      multiplyFragments(inst, gather(inst.operands[1]),
                        gather(inst.operands[2]), gather(inst.operands[3]), d);
  if (!error.empty())
    return fail(warp, 0, inst, error);
  const Operand &dest = inst.operands[0];
  for (unsigned e = 0; e < dest.count; ++e)
    for (unsigned lane = 0; lane < kWarpSize; ++lane)
      write(warp, dest.regs[e], lane, d[e * kWarpSize + lane]);
  return true;
}

bool BlockRun::wmmaMemoryOp(Warp &warp, const Instruction &inst,
                            uint32_t exec) {
  if (!requireWholeWarp(warp, inst, exec))
    return false;
  bool load = inst.opcode == Opcode::WmmaLoad;
  const MatrixOperands &matrix = inst.matrix;
  FragmentRole role = matrix.fragment == 0   ? FragmentRole::A
                      : matrix.fragment == 1 ? FragmentRole::B
                                             : FragmentRole::C;
  FragmentShape shape;
  std::string error =
      getFragmentShape(inst.opcode, matrix, role, inst.type, shape);
  if (!error.empty())
    return fail(warp, 0, inst, error);
  const Operand &addressOp = inst.operands[load ? 1 : 0];
  const Operand &data = inst.operands[load ? 0 : 1];
  // The stride counts elements; without one the matrix is dense.
  bool column = matrix.aColumn;
  uint64_t bytes = shape.bits / 8;
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    uint64_t base = getAddress(warp, addressOp, lane, inst.space);
    uint64_t stride = inst.operands.size() > 2
                          ? read(warp, inst.operands[2], lane) & 0xffffffffull
                          : (column ? shape.rows : shape.cols);
    uint64_t regs[8] = {};
    for (unsigned r = 0; r < shape.regs && !load; ++r)
      regs[r] = readElement(warp, data, r, lane);
    for (unsigned i = 0; i < shape.elements; ++i) {
      unsigned row, col;
      locateElement(inst.opcode, matrix, role, shape, lane, i, row, col);
      uint64_t offset = column ? col * stride + row : row * stride + col;
      uint8_t *host = resolve(warp, lane, inst, inst.space,
                              base + offset * bytes, bytes, !load);
      if (!host)
        return false;
      unsigned shift = (i % shape.perReg) * shape.bits;
      uint64_t &reg = regs[i / shape.perReg];
      if (load) {
        uint64_t value = 0;
        std::memcpy(&value, host, bytes);
        reg |= value << shift;
      } else {
        uint64_t value = (reg >> shift) & maskOf(shape.bits);
        std::memcpy(host, &value, bytes);
      }
    }
    for (unsigned r = 0; r < shape.regs && load; ++r)
      write(warp, getElementReg(data, r), lane, regs[r] & 0xffffffffull);
  }
  return true;
}

bool BlockRun::matrixRowsOp(Warp &warp, const Instruction &inst,
                            uint32_t exec) {
  if (!requireWholeWarp(warp, inst, exec))
    return false;
  bool load = inst.opcode == Opcode::Ldmatrix;
  unsigned count = inst.matrix.fragment;
  const Operand &addressOp = inst.operands[load ? 1 : 0];
  const Operand &data = inst.operands[load ? 0 : 1];
  std::vector<uint16_t> rows(count * 64);
  std::vector<uint32_t> regs(count * kWarpSize);
  if (!load) {
    for (unsigned m = 0; m < count; ++m)
      for (unsigned lane = 0; lane < kWarpSize; ++lane)
        regs[m * kWarpSize + lane] = static_cast<uint32_t>(
            data.kind == OperandKind::Vector ? readElement(warp, data, m, lane)
                                             : read(warp, data, lane));
    collectMatrices(count, inst.matrix.transpose, regs, rows);
  }
  // Lanes 8m to 8m + 7 give the addresses of the 16-byte rows of matrix m;
  // the other lanes' addresses are not used. The rows are one shared request
  // of 16-byte accesses, served a matrix (8 lanes, 128 bytes) per phase: its
  // bank conflicts are those of an ld/st.shared.v4 by those lanes.
  WarpAccess access;
  access.bytes = 16;
  for (unsigned lane = 0; lane < 8 * count; ++lane) {
    uint64_t address = getAddress(warp, addressOp, lane, inst.space);
    uint8_t *host = resolve(warp, lane, inst, inst.space, address, 16, !load);
    if (!host)
      return false;
    if (host >= shared.data() && host < shared.data() + shared.size()) {
      access.lanes |= 1u << lane;
      access.address[lane] = static_cast<uint64_t>(host - shared.data());
    }
    if (load)
      std::memcpy(&rows[lane * 8], host, 16);
    else
      std::memcpy(host, &rows[lane * 8], 16);
  }
  countSharedAccess(load ? stats.sharedLoad : stats.sharedStore, access);
  if (load) {
    distributeMatrices(count, inst.matrix.transpose, rows, regs);
    for (unsigned m = 0; m < count; ++m)
      for (unsigned lane = 0; lane < kWarpSize; ++lane)
        write(warp, getElementReg(data, m), lane, regs[m * kWarpSize + lane]);
  }
  return true;
}

bool BlockRun::asyncCopyOp(Warp &warp, const Instruction &inst, uint32_t exec) {
  // A cp.async is a global load and a shared store of its lanes' bytes: its
  // requests, sectors and footprint, and the bank conflicts of its shared
  // writes, count as those of ld.global and st.shared would.
  WarpAccess globalAccess, sharedAccess;
  if (inst.opcode == Opcode::CpAsync)
    globalAccess.bytes = sharedAccess.bytes =
        static_cast<unsigned>(inst.operands[2].imm);
  for (uint32_t m = exec; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    uint32_t thread = warp.index * kWarpSize + lane;
    if (inst.opcode == Opcode::CpAsyncCommit) {
      asyncCopies.commit(thread);
      continue;
    }
    if (inst.opcode == Opcode::CpAsyncWait) {
      if (inst.mode == 1) // wait_all: commit_group; wait_group 0
        asyncCopies.commit(thread);
      uint64_t keep = inst.mode == 1 ? 0 : inst.operands[0].imm;
      // The copies of the retired groups happen now, in issue order, as
      // writes by their thread at their cp.async's line, so that the race
      // and initialization checks see them where they complete.
      for (const PendingCopy &copy : asyncCopies.retire(thread, keep)) {
        uint8_t bytes[16] = {};
        if (copy.sourceBytes)
          std::memcpy(bytes, copy.source, copy.sourceBytes);
        uint8_t *host = resolve(warp, lane, kernel.code[copy.pc], Space::Shared,
                                copy.sharedOffset, copy.bytes, /*store=*/true);
        if (!host)
          return false;
        std::memcpy(host, bytes, copy.bytes);
      }
      continue;
    }
    // cp.async: the destination and the source are checked now; the copy
    // waits for the wait_group that retires its group.
    uint32_t size = static_cast<uint32_t>(inst.operands[2].imm);
    uint64_t sourceSize =
        inst.mode & 2 ? read(warp, inst.operands[3], lane) & 0xffffffffull
                      : size;
    uint64_t dest = getAddress(warp, inst.operands[0], lane, Space::Shared);
    uint64_t source = getAddress(warp, inst.operands[1], lane, Space::Global);
    auto hex = [](uint64_t value) {
      char text[32];
      std::snprintf(text, sizeof(text), "0x%llx",
                    static_cast<unsigned long long>(value));
      return std::string(text);
    };
    if (sourceSize > size)
      return fail(warp, lane, inst,
                  "src-size " + std::to_string(sourceSize) +
                      " is larger than the cp-size " + std::to_string(size));
    if (source % size)
      return fail(warp, lane, inst,
                  "misaligned cp.async of " + std::to_string(size) +
                      " bytes from " + hex(source));
    // The destination is checked as a store now, as well as when the copy
    // lands: the copy may land any time after issue, so another warp's
    // access to it in this barrier interval is a race on hardware.
    if (!resolve(warp, lane, inst, Space::Shared, dest, size, /*store=*/true))
      return false;
    const uint8_t *host = nullptr;
    if (sourceSize == size) {
      host = resolve(warp, lane, inst, Space::Global, source, size, false);
      if (!host)
        return false;
    } else {
      for (uint64_t byte = 0; byte < sourceSize; ++byte) {
        const uint8_t *at =
            resolve(warp, lane, inst, Space::Global, source + byte, 1, false);
        if (!at)
          return false;
        if (!host)
          host = at;
      }
    }
    sharedAccess.lanes |= 1u << lane;
    sharedAccess.address[lane] = dest;
    if (sourceSize) {
      globalAccess.lanes |= 1u << lane;
      globalAccess.address[lane] =
          static_cast<uint64_t>(reinterpret_cast<uintptr_t>(host));
    }
    PendingCopy copy;
    copy.sharedOffset = dest;
    copy.source = host;
    copy.bytes = size;
    copy.sourceBytes = static_cast<uint32_t>(sourceSize);
    copy.thread = thread;
    copy.pc = static_cast<uint32_t>(&inst - kernel.code.data());
    asyncCopies.issue(copy, numThreads, shared.size());
  }
  if (inst.opcode == Opcode::CpAsync) {
    countGlobalAccess(stats.globalLoad, globalAccess, &footprint.load,
                      &footprint.store);
    countSharedAccess(stats.sharedStore, sharedAccess);
  }
  return true;
}

bool BlockRun::checkAsyncCopies(const Warp &warp, unsigned lane,
                                const Instruction &inst, uint64_t offset,
                                uint64_t bytes, bool store) {
  const PendingCopy *copy = asyncCopies.find(offset, bytes);
  if (!copy)
    return true;
  uint64_t byte = std::max(offset, copy->sharedOffset);
  const char *what = inst.opcode == Opcode::CpAsync ? "cp.async to"
                     : store                        ? "write of"
                                                    : "read of";
  return fail(warp, lane, inst,
              std::string(what) +
                  " shared memory with a cp.async in flight at shared offset " +
                  std::to_string(byte) + ": the cp.async by thread " +
                  describeThreadIndex(copy->thread) + " at PTX line " +
                  std::to_string(kernel.code[copy->pc].line) +
                  " has not been retired by a cp.async.wait_group or "
                  "cp.async.wait_all of that thread");
}

} // namespace ridge::emu::detail
