//===- Counters.cpp - Hardware-style counters of emulated kernels ---------===//
//
// The instruction classes, the sector and bank-conflict models, and the
// counters' JSON and text forms. The executor calls countGlobalAccess and
// countSharedAccess once per warp-level memory instruction, so both work on
// fixed arrays of at most 32 lanes and allocate nothing.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Emulator/Counters.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

using namespace ridge::emu;

namespace {

constexpr unsigned kWarpSize = 32;
constexpr unsigned kSectorBytes = 32;
constexpr unsigned kNumBanks = 32;
constexpr unsigned kBankBytes = 4;

InstructionClass classifyArithmetic(Type type) {
  switch (type) {
  case Type::F32:
  case Type::F16:
  case Type::F16x2:
  case Type::BF16:
  case Type::BF16x2:
    return InstructionClass::Fp32;
  case Type::F64:
    return InstructionClass::Fp64;
  default:
    return InstructionClass::Integer;
  }
}

InstructionClass classifyMemory(Space space, InstructionClass global,
                                InstructionClass shared) {
  switch (space) {
  case Space::Generic:
  case Space::Global:
    return global;
  case Space::Shared:
    return shared;
  case Space::Local:
    return InstructionClass::Local;
  case Space::Param:
  case Space::Const:
    return InstructionClass::Other;
  }
  return InstructionClass::Other;
}

} // namespace

const char *ridge::emu::getInstructionClassName(InstructionClass kind) {
  switch (kind) {
  case InstructionClass::Fp32:
    return "fp32";
  case InstructionClass::Fp64:
    return "fp64";
  case InstructionClass::Integer:
    return "integer";
  case InstructionClass::SpecialFunction:
    return "special_function";
  case InstructionClass::Conversion:
    return "conversion";
  case InstructionClass::TensorCore:
    return "tensor_core";
  case InstructionClass::ShuffleVote:
    return "shuffle_vote";
  case InstructionClass::Barrier:
    return "barrier";
  case InstructionClass::GlobalLoad:
    return "global_load";
  case InstructionClass::GlobalStore:
    return "global_store";
  case InstructionClass::GlobalAtomic:
    return "global_atomic";
  case InstructionClass::SharedLoad:
    return "shared_load";
  case InstructionClass::SharedStore:
    return "shared_store";
  case InstructionClass::SharedAtomic:
    return "shared_atomic";
  case InstructionClass::Local:
    return "local";
  case InstructionClass::Control:
    return "control";
  case InstructionClass::Other:
    return "other";
  }
  return "other";
}

InstructionClass ridge::emu::classify(const Instruction &inst, Space space) {
  switch (inst.opcode) {
  case Opcode::Abs:
  case Opcode::Add:
  case Opcode::Copysign:
  case Opcode::Div:
  case Opcode::Fma:
  case Opcode::Mad:
  case Opcode::Max:
  case Opcode::Min:
  case Opcode::Mul:
  case Opcode::Neg:
  case Opcode::Rem:
  case Opcode::Setp:
  case Opcode::Sub:
    return classifyArithmetic(inst.type);
  case Opcode::And:
  case Opcode::Bfe:
  case Opcode::Bfi:
  case Opcode::Brev:
  case Opcode::Clz:
  case Opcode::Cnot:
  case Opcode::Cvta:
  case Opcode::Not:
  case Opcode::Or:
  case Opcode::Popc:
  case Opcode::Prmt:
  case Opcode::Selp:
  case Opcode::Shf:
  case Opcode::Shl:
  case Opcode::Shr:
  case Opcode::Xor:
    return InstructionClass::Integer;
  case Opcode::Cos:
  case Opcode::Ex2:
  case Opcode::Lg2:
  case Opcode::Rsqrt:
  case Opcode::Sin:
  case Opcode::Tanh:
    return InstructionClass::SpecialFunction;
  case Opcode::Rcp:
  case Opcode::Sqrt:
    // The .approx forms are one MUFU instruction; the IEEE-rounded ones are
    // a Newton iteration on the FMA pipe.
    return inst.approx ? InstructionClass::SpecialFunction
                       : classifyArithmetic(inst.type);
  case Opcode::Cvt:
    return InstructionClass::Conversion;
  case Opcode::Elect:
  case Opcode::Shfl:
  case Opcode::Vote:
    return InstructionClass::ShuffleVote;
  case Opcode::Mma:
  case Opcode::Wgmma:
  case Opcode::WmmaMma:
    return InstructionClass::TensorCore;
  // Matrix fragments move through shared memory (ldmatrix, stmatrix) or
  // either space (wmma.load/store); asynchronous copies read global memory
  // into shared memory.
  case Opcode::Ldmatrix:
    return InstructionClass::SharedLoad;
  case Opcode::Stmatrix:
    return InstructionClass::SharedStore;
  case Opcode::WmmaLoad:
    return classifyMemory(space, InstructionClass::GlobalLoad,
                          InstructionClass::SharedLoad);
  case Opcode::WmmaStore:
    return classifyMemory(space, InstructionClass::GlobalStore,
                          InstructionClass::SharedStore);
  case Opcode::CpAsync:
  case Opcode::CpAsyncBulk:
    return InstructionClass::GlobalLoad;
  case Opcode::Bar:
  case Opcode::CpAsyncCommit:
  case Opcode::CpAsyncWait:
  case Opcode::Mbarrier:
  case Opcode::Membar:
    return InstructionClass::Barrier;
  case Opcode::Bra:
  case Opcode::Exit:
  case Opcode::Ret:
    return InstructionClass::Control;
  case Opcode::Ld:
    return classifyMemory(space, InstructionClass::GlobalLoad,
                          InstructionClass::SharedLoad);
  case Opcode::St:
    return classifyMemory(space, InstructionClass::GlobalStore,
                          InstructionClass::SharedStore);
  case Opcode::Atom:
  case Opcode::Red:
    return classifyMemory(space, InstructionClass::GlobalAtomic,
                          InstructionClass::SharedAtomic);
  case Opcode::Call: // inlined when the module loads; never issued
  case Opcode::Mov:
    return InstructionClass::Other;
  }
  return InstructionClass::Other;
}

uint64_t ridge::emu::getTensorCoreFlops(const Instruction &inst) {
  if (inst.opcode == Opcode::Wgmma) {
    // A warpgroup's m64nNk16 (k8 for tf32, k32 for e4m3/e5m2), a quarter
    // per warp.
    uint64_t n = inst.variant & 0x3ff;
    uint64_t k = inst.srcType == Type::B32                              ? 8
                 : inst.srcType == Type::B8 || inst.srcType == Type::U8 ? 32
                                                                        : 16;
    return 2 * 16 * n * k;
  }
  const MatrixOperands &shape = inst.matrix;
  return 2 * uint64_t(shape.m) * shape.n * shape.k;
}

void KernelCounters::accumulate(const KernelCounters &other) {
  if (kernel.empty())
    kernel = other.kernel;
  launches += other.launches;
  std::copy(other.grid, other.grid + 3, grid);
  std::copy(other.block, other.block + 3, block);
  registers = other.registers;
  staticSharedBytes = other.staticSharedBytes;
  dynamicSharedBytes = other.dynamicSharedBytes;
  localBytesPerThread = other.localBytesPerThread;
  blocks += other.blocks;
  threads += other.threads;
  warpInstructions += other.warpInstructions;
  threadInstructions += other.threadInstructions;
  hostSeconds += other.hostSeconds;
  for (unsigned i = 0; i < kNumInstructionClasses; ++i)
    instructions[i] += other.instructions[i];
  tensorCoreFlops += other.tensorCoreFlops;
  auto addGlobal = [](GlobalAccessCounters &to,
                      const GlobalAccessCounters &from) {
    to.requests += from.requests;
    to.bytes += from.bytes;
    to.sectors += from.sectors;
    to.footprintSectors += from.footprintSectors;
  };
  addGlobal(globalLoad, other.globalLoad);
  addGlobal(globalStore, other.globalStore);
  addGlobal(globalAtomic, other.globalAtomic);
  auto addShared = [](SharedAccessCounters &to,
                      const SharedAccessCounters &from) {
    to.requests += from.requests;
    to.bytes += from.bytes;
    to.wavefronts += from.wavefronts;
    to.idealWavefronts += from.idealWavefronts;
  };
  addShared(sharedLoad, other.sharedLoad);
  addShared(sharedStore, other.sharedStore);
}

void SectorSet::grow() {
  std::vector<uint64_t> old = std::move(slots);
  slots.assign(std::max<size_t>(1024, old.size() * 2), kEmpty);
  count = 0;
  for (uint64_t sector : old)
    if (sector != kEmpty)
      insert(sector);
}

void SectorSet::insert(uint64_t sector) {
  if (sector == last)
    return;
  last = sector;
  if ((count + 1) * 2 > slots.size())
    grow();
  uint64_t mask = slots.size() - 1;
  // Fibonacci hashing spreads the consecutive indices of one buffer.
  for (uint64_t i = (sector * 0x9E3779B97F4A7C15ull) >> 20 & mask;;
       i = (i + 1) & mask) {
    if (slots[i] == sector)
      return;
    if (slots[i] == kEmpty) {
      slots[i] = sector;
      ++count;
      return;
    }
  }
}

bool SectorSet::contains(uint64_t sector) const {
  if (slots.empty())
    return false;
  uint64_t mask = slots.size() - 1;
  for (uint64_t i = (sector * 0x9E3779B97F4A7C15ull) >> 20 & mask;;
       i = (i + 1) & mask) {
    if (slots[i] == sector)
      return true;
    if (slots[i] == kEmpty)
      return false;
  }
}

void ridge::emu::countGlobalAccess(GlobalAccessCounters &counters,
                                   const WarpAccess &access,
                                   SectorSet *footprint,
                                   const SectorSet *cached) {
  if (!access.lanes)
    return;
  // Each lane's access is naturally aligned, so it spans one sector unless
  // it is wider than one (never for PTX's at most 32-byte accesses, but
  // counted right regardless).
  uint64_t sectors[kWarpSize * 2];
  unsigned count = 0;
  bool sorted = true;
  for (uint32_t m = access.lanes; m; m &= m - 1) {
    uint64_t address = access.address[__builtin_ctz(m)];
    uint64_t first = address / kSectorBytes;
    uint64_t last = (address + access.bytes - 1) / kSectorBytes;
    for (uint64_t s = first; s <= last && count < kWarpSize * 2; ++s) {
      sorted &= count == 0 || sectors[count - 1] <= s;
      sectors[count++] = s;
    }
  }
  // Lanes usually go up in address; only a permuted access pays for a sort.
  if (!sorted)
    std::sort(sectors, sectors + count);
  uint64_t distinct = 0;
  for (unsigned i = 0; i < count; ++i) {
    if (i != 0 && sectors[i] == sectors[i - 1])
      continue;
    ++distinct;
    if (footprint && !(cached && cached->contains(sectors[i])))
      footprint->insert(sectors[i]);
  }
  ++counters.requests;
  counters.bytes +=
      uint64_t(__builtin_popcount(access.lanes)) * uint64_t(access.bytes);
  counters.sectors += distinct;
}

void ridge::emu::countSharedAccess(SharedAccessCounters &counters,
                                   const WarpAccess &access) {
  if (!access.lanes)
    return;
  // The hardware serves a warp's shared request in phases of at most 128
  // bytes: all 32 lanes for 4-byte accesses, half-warps for 8-byte and
  // quarter-warps for 16-byte ones. Within a phase, each bank serves one
  // 4-byte word per wavefront; lanes on the same word share it.
  unsigned phases = std::max(1u, access.bytes / kBankBytes);
  phases = std::min(phases, kWarpSize);
  unsigned lanesPerPhase = kWarpSize / phases;
  unsigned wordsPerLane = std::max(1u, access.bytes / kBankBytes);
  uint64_t wavefronts = 0, ideal = 0;
  for (unsigned phase = 0; phase < phases; ++phase) {
    uint32_t phaseMask = lanesPerPhase == kWarpSize
                             ? ~0u
                             : ((1u << lanesPerPhase) - 1)
                                   << (phase * lanesPerPhase);
    uint32_t lanes = access.lanes & phaseMask;
    if (!lanes)
      continue;
    // At most 32 words per phase: lanesPerPhase * wordsPerLane == 32.
    uint64_t words[kWarpSize];
    unsigned count = 0;
    for (uint32_t m = lanes; m; m &= m - 1) {
      uint64_t word = access.address[__builtin_ctz(m)] / kBankBytes;
      for (unsigned w = 0; w < wordsPerLane && count < kWarpSize; ++w)
        words[count++] = word + w;
    }
    std::sort(words, words + count);
    unsigned perBank[kNumBanks] = {};
    unsigned most = 0;
    for (unsigned i = 0; i < count; ++i) {
      if (i > 0 && words[i] == words[i - 1])
        continue;
      most = std::max(most, ++perBank[words[i] % kNumBanks]);
    }
    wavefronts += most;
    ++ideal;
  }
  ++counters.requests;
  counters.bytes +=
      uint64_t(__builtin_popcount(access.lanes)) * uint64_t(access.bytes);
  counters.wavefronts += wavefronts;
  counters.idealWavefronts += ideal;
}

namespace {

/// printf into a std::string.
template <typename... Args>
void appendf(std::string &out, const char *format, Args... args) {
  char text[256];
  std::snprintf(text, sizeof(text), format, args...);
  out += text;
}

/// Requested bytes per byte of the sectors fetched; null without requests.
std::string formatEfficiency(uint64_t bytes, uint64_t sectors) {
  if (!sectors)
    return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g",
                double(bytes) / (double(sectors) * kSectorBytes));
  return text;
}

/// Kernel names are PTX identifiers, but escape anyway: the JSON must parse.
std::string quote(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20)
      appendf(out, "\\u%04x", unsigned(c));
    else
      out += c;
  }
  return out + "\"";
}

void appendGlobal(std::string &out, const char *name,
                  const GlobalAccessCounters &c, bool last) {
  appendf(out,
          "        \"%s\": {\"requests\": %" PRIu64 ", \"bytes\": %" PRIu64
          ", \"sectors\": %" PRIu64 ", \"efficiency\": %s"
          ", \"footprint_bytes\": %" PRIu64 "}%s\n",
          name, c.requests, c.bytes, c.sectors,
          formatEfficiency(c.bytes, c.sectors).c_str(),
          c.footprintSectors * kSectorBytes, last ? "" : ",");
}

void appendShared(std::string &out, const char *name,
                  const SharedAccessCounters &c, bool last) {
  appendf(out,
          "        \"%s\": {\"requests\": %" PRIu64 ", \"bytes\": %" PRIu64
          ", \"wavefronts\": %" PRIu64 ", \"ideal_wavefronts\": %" PRIu64
          ", \"bank_conflicts\": %" PRIu64 "}%s\n",
          name, c.requests, c.bytes, c.wavefronts, c.idealWavefronts,
          c.getBankConflicts(), last ? "" : ",");
}

} // namespace

std::string
ridge::emu::formatCountersJson(const std::vector<KernelCounters> &kernels) {
  std::string out;
  appendf(out,
          "{\n  \"schema\": \"ridgeline-emulator-counters\",\n"
          "  \"version\": %d,\n  \"kernels\": [",
          kCountersSchemaVersion);
  for (size_t k = 0; k < kernels.size(); ++k) {
    const KernelCounters &c = kernels[k];
    out += k ? ",\n    {\n" : "\n    {\n";
    out += "      \"name\": " + quote(c.kernel) + ",\n";
    appendf(out, "      \"launches\": %" PRIu64 ",\n", c.launches);
    appendf(out, "      \"grid\": [%u, %u, %u],\n", c.grid[0], c.grid[1],
            c.grid[2]);
    appendf(out, "      \"block\": [%u, %u, %u],\n", c.block[0], c.block[1],
            c.block[2]);
    appendf(out, "      \"registers\": %u,\n", c.registers);
    appendf(out, "      \"shared_static_bytes\": %" PRIu64 ",\n",
            c.staticSharedBytes);
    appendf(out, "      \"shared_dynamic_bytes\": %" PRIu64 ",\n",
            c.dynamicSharedBytes);
    appendf(out, "      \"local_bytes_per_thread\": %" PRIu64 ",\n",
            c.localBytesPerThread);
    appendf(out, "      \"blocks\": %" PRIu64 ",\n", c.blocks);
    appendf(out, "      \"threads\": %" PRIu64 ",\n", c.threads);
    appendf(out, "      \"warp_instructions\": %" PRIu64 ",\n",
            c.warpInstructions);
    appendf(out, "      \"thread_instructions\": %" PRIu64 ",\n",
            c.threadInstructions);
    appendf(out, "      \"host_seconds\": %.6f,\n", c.hostSeconds);
    appendf(out, "      \"tensor_core_flops\": %" PRIu64 ",\n",
            c.tensorCoreFlops);
    out += "      \"instructions\": {\n";
    for (unsigned i = 0; i < kNumInstructionClasses; ++i)
      appendf(out, "        \"%s\": %" PRIu64 "%s\n",
              getInstructionClassName(static_cast<InstructionClass>(i)),
              c.instructions[i], i + 1 < kNumInstructionClasses ? "," : "");
    out += "      },\n      \"global\": {\n";
    appendGlobal(out, "load", c.globalLoad, false);
    appendGlobal(out, "store", c.globalStore, false);
    appendGlobal(out, "atomic", c.globalAtomic, true);
    out += "      },\n      \"shared\": {\n";
    appendShared(out, "load", c.sharedLoad, false);
    appendShared(out, "store", c.sharedStore, true);
    out += "      }\n    }";
  }
  out += kernels.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

std::string ridge::emu::formatCountersText(const KernelCounters &c) {
  std::string out;
  appendf(out,
          "kernel %s: %" PRIu64 " launch%s, grid (%u,%u,%u), block "
          "(%u,%u,%u)\n",
          c.kernel.c_str(), c.launches, c.launches == 1 ? "" : "es", c.grid[0],
          c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2]);
  appendf(out,
          "  %u PTX registers; shared memory %" PRIu64 " static + %" PRIu64
          " dynamic bytes; local %" PRIu64 " bytes per thread\n",
          c.registers, c.staticSharedBytes, c.dynamicSharedBytes,
          c.localBytesPerThread);
  appendf(out, "  %-18s %14s\n", "instruction class", "warp instrs");
  for (unsigned i = 0; i < kNumInstructionClasses; ++i)
    appendf(out, "  %-18s %14" PRIu64 "\n",
            getInstructionClassName(static_cast<InstructionClass>(i)),
            c.instructions[i]);
  appendf(out, "  %-18s %14s %14s %14s %10s %14s\n", "global memory",
          "requests", "bytes", "sectors", "efficiency", "footprint");
  auto global = [&](const char *name, const GlobalAccessCounters &g) {
    appendf(out,
            "  %-18s %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %10s %14" PRIu64
            "\n",
            name, g.requests, g.bytes, g.sectors,
            g.sectors ? formatEfficiency(g.bytes, g.sectors).c_str() : "-",
            g.footprintSectors * kSectorBytes);
  };
  global("load", c.globalLoad);
  global("store", c.globalStore);
  global("atomic", c.globalAtomic);
  appendf(out, "  %-18s %14s %14s %14s %10s\n", "shared memory", "requests",
          "wavefronts", "ideal", "conflicts");
  auto shared = [&](const char *name, const SharedAccessCounters &s) {
    appendf(out,
            "  %-18s %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %10" PRIu64 "\n",
            name, s.requests, s.wavefronts, s.idealWavefronts,
            s.getBankConflicts());
  };
  shared("load", c.sharedLoad);
  shared("store", c.sharedStore);
  return out;
}
