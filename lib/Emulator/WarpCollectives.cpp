//===- WarpCollectives.cpp - shfl.sync and vote.sync ----------------------===//
//
// The warp-collective data exchanges: shfl.sync, which reads another lane's
// register, and vote.sync, which combines a predicate over the lanes. Each
// requires every lane of its member mask to issue with it (Executor.cpp's
// scheduler lets collective instructions issue only together); kept apart
// from Executor.cpp, which schedules the lanes and warps.
//
//===----------------------------------------------------------------------===//

#include "BlockRun.h"

namespace ridge::emu::detail {

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

} // namespace ridge::emu::detail
