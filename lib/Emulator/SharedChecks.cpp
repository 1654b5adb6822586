//===- SharedChecks.cpp - Shared-memory race and initialization checks ---===//
//
// The checks on shared memory that the hardware does not make: a read of
// bytes no thread or copy of the block has written, a conflicting access by
// another warp in the same barrier interval (a race), and an async-proxy
// read of a thread's write with no fence.proxy.async between. Each byte has
// a SharedByteShadow (BlockRun.h) that these update; they are apart from
// Executor.cpp, which schedules the lanes and warps, so that what they
// report can be read in one place.
//
//===----------------------------------------------------------------------===//

#include "BlockRun.h"

namespace ridge::emu::detail {

bool BlockRun::checkShared(const Warp &warp, unsigned lane,
                           const Instruction &inst, uint64_t offset,
                           uint64_t bytes, bool store, bool atomic) {
  uint32_t thread = warp.index * kWarpSize + lane;
  auto other = [&](uint16_t t, uint32_t line, const char *what) {
    return std::string(what) + " by thread " + describeThreadIndex(t) +
           " at PTX line " + std::to_string(line);
  };
  auto at = [&](uint64_t byte) {
    return " at shared offset " + std::to_string(byte);
  };
  for (uint64_t byte = offset; byte < offset + bytes; ++byte) {
    SharedByteShadow &cell = sharedShadow[byte];
    bool written = cell.writtenBlock == blockSerial;
    // Threads of one warp run in lockstep here and are not checked against
    // each other; between warps only a barrier orders accesses.
    if (!store || atomic) {
      if (!written)
        return fail(warp, lane, inst,
                    "read of uninitialized shared memory" + at(byte) +
                        " (no thread of the block has written it)");
      if (cell.writeEpoch == epoch && cell.writer / kWarpSize != warp.index)
        return fail(warp, lane, inst,
                    "shared-memory race" + at(byte) + ": read after a " +
                        other(cell.writer, cell.writeLine, "write") +
                        " with no barrier between");
    }
    if (store && !atomic) {
      if (written && cell.writeEpoch == epoch &&
          cell.writer / kWarpSize != warp.index)
        return fail(warp, lane, inst,
                    "shared-memory race" + at(byte) + ": write after a " +
                        other(cell.writer, cell.writeLine, "write") +
                        " with no barrier between");
      if (cell.readEpoch == epoch &&
          (cell.readByManyWarps || cell.reader / kWarpSize != warp.index))
        return fail(warp, lane, inst,
                    "shared-memory race" + at(byte) + ": write after a " +
                        other(cell.reader, cell.readLine, "read") +
                        " with no barrier between");
    }
    if (atomic) {
      cell.writtenBlock = blockSerial;
    } else if (store) {
      cell.writtenBlock = blockSerial;
      cell.writeEpoch = epoch;
      cell.writer = static_cast<uint16_t>(thread);
      cell.writeLine = inst.line;
      cell.proxyFence = proxyFences;
    } else if (cell.readEpoch != epoch) {
      cell.readEpoch = epoch;
      cell.reader = static_cast<uint16_t>(thread);
      cell.readLine = inst.line;
      cell.readByManyWarps = false;
    } else if (cell.reader / kWarpSize != warp.index) {
      cell.readByManyWarps = true;
    }
  }
  return true;
}

uint8_t *BlockRun::accessSharedAsync(uint64_t offset, uint64_t bytes,
                                     bool store, std::string &error) {
  if (offset + bytes > shared.size() || offset + bytes < offset) {
    error = "shared bytes [" + std::to_string(offset) + ", " +
            std::to_string(offset + bytes) + ") are out of bounds (the " +
            "block has " + std::to_string(shared.size()) + " bytes)";
    return nullptr;
  }
  for (uint64_t byte = offset; byte < offset + bytes; ++byte) {
    SharedByteShadow &cell = sharedShadow[byte];
    if (store) {
      // Written by the async proxy: initialized, with no writer a thread
      // could race with (the mbarrier orders it).
      cell.writtenBlock = blockSerial;
      cell.writeEpoch = 0;
      cell.proxyFence = 0;
    } else if (cell.writtenBlock != blockSerial) {
      error = "read of uninitialized shared memory at shared offset " +
              std::to_string(byte) + " (no thread or copy of the block has " +
              "written it)";
      return nullptr;
    } else if (cell.proxyFence == proxyFences) {
      // PTX orders a thread's shared-memory writes before reads by the
      // async proxy (wgmma operands, TMA stores) only through
      // fence.proxy.async.
      error = "shared offset " + std::to_string(byte) +
              " was written by thread " + describeThreadIndex(cell.writer) +
              " at PTX line " + std::to_string(cell.writeLine) +
              " with no fence.proxy.async before the async proxy reads it";
      return nullptr;
    }
  }
  return shared.data() + offset;
}

} // namespace ridge::emu::detail
