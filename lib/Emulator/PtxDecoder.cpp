//===- PtxDecoder.cpp - One PTX instruction, decoded ----------------------===//
//
// Turns an instruction's dotted opcode text and its parsed operands into an
// Instruction: the opcode, its types, state space, rounding, comparison and
// flags, and operands checked against the forms the opcode takes. The sm_90a
// instructions go to decodeHopper (Hopper.cpp), the matrix and async-copy
// ones to decodeMatrixOrAsyncCopy below. A modifier or form it does not know
// is an error naming the instruction and its function, never a silent skip.
//
//===----------------------------------------------------------------------===//

#include "PtxDecoder.h"

#include "Hopper.h"
#include "WarpMatrix.h"

#include <cstring>

using namespace ridge::emu;
using namespace ridge::emu::detail;

namespace {

/// Decodes the instructions of one function.
class Decoder {
public:
  Decoder(PtxFunction &function, std::vector<std::string> &labels,
          std::string &error)
      : function(function), labels(labels), errorText(error) {}

  bool decode(Instruction &inst, const std::string &opcodeText,
              std::vector<RawOperand> &operands);

private:
  bool decodeMatrixOrAsyncCopy(Instruction &inst,
                               const std::vector<std::string> &parts,
                               std::vector<RawOperand> &operands);
  /// The parser names the instruction's line.
  bool fail(const std::string &message) {
    errorText = message;
    return false;
  }

  PtxFunction &function;
  std::vector<std::string> &labels;
  std::string &errorText;
};

} // namespace

namespace {
struct OpcodeName {
  const char *name;
  Opcode opcode;
  /// Operands: destinations + sources (0: checked by the opcode itself).
  int minOperands, maxOperands;
};
constexpr OpcodeName kOpcodes[] = {
    {"abs", Opcode::Abs, 2, 2},
    {"add", Opcode::Add, 3, 3},
    {"addc", Opcode::Add, 3, 3},
    {"and", Opcode::And, 3, 3},
    {"atom", Opcode::Atom, 3, 4},
    {"bar", Opcode::Bar, 0, 2},
    {"barrier", Opcode::Bar, 0, 2},
    {"bfe", Opcode::Bfe, 4, 4},
    {"bfi", Opcode::Bfi, 5, 5},
    {"bra", Opcode::Bra, 1, 1},
    {"brev", Opcode::Brev, 2, 2},
    {"clz", Opcode::Clz, 2, 2},
    {"cnot", Opcode::Cnot, 2, 2},
    {"copysign", Opcode::Copysign, 3, 3},
    {"cos", Opcode::Cos, 2, 2},
    {"cp", Opcode::CpAsync, 0, 0}, // decodeMatrixOrAsyncCopy
    {"cvt", Opcode::Cvt, 2, 3},
    {"cvta", Opcode::Cvta, 2, 2},
    {"div", Opcode::Div, 3, 3},
    {"ex2", Opcode::Ex2, 2, 2},
    {"exit", Opcode::Exit, 0, 0},
    {"fence", Opcode::Membar, 0, 0},
    {"fma", Opcode::Fma, 4, 4},
    {"ld", Opcode::Ld, 2, 2},
    {"ldmatrix", Opcode::Ldmatrix, 0, 0},
    {"lg2", Opcode::Lg2, 2, 2},
    {"mad", Opcode::Mad, 4, 4},
    {"madc", Opcode::Mad, 4, 4},
    {"max", Opcode::Max, 3, 3},
    {"membar", Opcode::Membar, 0, 0},
    {"min", Opcode::Min, 3, 3},
    {"mma", Opcode::Mma, 0, 0},
    {"mov", Opcode::Mov, 2, 2},
    {"mul", Opcode::Mul, 3, 3},
    {"neg", Opcode::Neg, 2, 2},
    {"not", Opcode::Not, 2, 2},
    {"or", Opcode::Or, 3, 3},
    {"popc", Opcode::Popc, 2, 2},
    {"prmt", Opcode::Prmt, 4, 4},
    {"rcp", Opcode::Rcp, 2, 2},
    {"red", Opcode::Red, 2, 2},
    {"rem", Opcode::Rem, 3, 3},
    {"ret", Opcode::Ret, 0, 0},
    {"rsqrt", Opcode::Rsqrt, 2, 2},
    {"selp", Opcode::Selp, 4, 4},
    {"setp", Opcode::Setp, 3, 4},
    {"shf", Opcode::Shf, 4, 4},
    {"shfl", Opcode::Shfl, 4, 5},
    {"shl", Opcode::Shl, 3, 3},
    {"shr", Opcode::Shr, 3, 3},
    {"sin", Opcode::Sin, 2, 2},
    {"sqrt", Opcode::Sqrt, 2, 2},
    {"st", Opcode::St, 2, 2},
    {"stmatrix", Opcode::Stmatrix, 0, 0},
    {"sub", Opcode::Sub, 3, 3},
    {"subc", Opcode::Sub, 3, 3},
    {"tanh", Opcode::Tanh, 2, 2},
    {"vote", Opcode::Vote, 2, 3},
    {"wmma", Opcode::WmmaLoad, 0, 0},
    {"xor", Opcode::Xor, 3, 3},
};

struct CompareName {
  const char *name;
  Compare compare;
};
constexpr CompareName kCompares[] = {
    {"eq", Compare::Eq},   {"ne", Compare::Ne},   {"lt", Compare::Lt},
    {"le", Compare::Le},   {"gt", Compare::Gt},   {"ge", Compare::Ge},
    {"lo", Compare::Lo},   {"ls", Compare::Ls},   {"hi", Compare::Hi},
    {"hs", Compare::Hs},   {"equ", Compare::Equ}, {"neu", Compare::Neu},
    {"ltu", Compare::Ltu}, {"leu", Compare::Leu}, {"gtu", Compare::Gtu},
    {"geu", Compare::Geu}, {"num", Compare::Num}, {"nan", Compare::Nan},
};

/// Modifiers that only order or cache memory accesses, or name a scope:
/// without effect on a sequentially consistent emulator.
bool isNoEffectModifier(const std::string &m) {
  static const char *const kNames[] = {
      "nc",  "ca",   "cg",       "cs",      "lu",      "cv",      "wb",
      "wt",  "weak", "volatile", "relaxed", "acquire", "release", "acq_rel",
      "sc",  "gpu",  "cta",      "sys",     "cluster", "aligned", "to",
      "uni", "sync", "full",     "noftz",   "ptr"};
  for (const char *name : kNames)
    if (m == name)
      return true;
  return m.rfind("L1::", 0) == 0 || m.rfind("L2::", 0) == 0;
}
} // namespace

bool Decoder::decode(Instruction &inst, const std::string &opcodeText,
                     std::vector<RawOperand> &operands) {
  inst.text = opcodeText;
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dot = opcodeText.find('.', start);
    parts.push_back(opcodeText.substr(start, dot - start));
    if (dot == std::string::npos)
      break;
    start = dot + 1;
  }
  if (detail::isHopperOpcode(parts)) {
    // mbarrier, cp.async.bulk, wgmma and their kin decode in Hopper.cpp.
    std::vector<Operand> decoded;
    std::vector<std::vector<uint32_t>> extraRegs;
    for (RawOperand &raw : operands) {
      if (raw.decimalFloat || raw.operand.kind == OperandKind::Label)
        return fail("bad operand '" + raw.name + "' of '" + opcodeText + "'");
      decoded.push_back(raw.operand);
      extraRegs.push_back(raw.extraRegs);
    }
    std::string error;
    if (!detail::decodeHopper(inst, parts, std::move(decoded), extraRegs,
                              error))
      return fail(error + " (function '" + function.name + "')");
    return true;
  }
  for (const RawOperand &raw : operands)
    if (!raw.extraRegs.empty() || raw.coordinates)
      return fail("unsupported operand form in '" + opcodeText +
                  "' (function '" + function.name + "')");
  const OpcodeName *entry = nullptr;
  for (const OpcodeName &candidate : kOpcodes)
    if (parts[0] == candidate.name)
      entry = &candidate;
  auto unsupported = [&](const std::string &what) {
    return fail("unsupported " + what + " in '" + opcodeText + "' (function '" +
                function.name + "')");
  };
  if (!entry)
    return fail("unsupported instruction '" + opcodeText + "' in '" +
                function.name + "'");
  inst.opcode = entry->opcode;
  inst.carryIn = parts[0] == "addc" || parts[0] == "subc" || parts[0] == "madc";
  if (parts[0] == "bra")
    inst.uni = false;
  if (inst.opcode == Opcode::CpAsync || inst.opcode == Opcode::Ldmatrix ||
      inst.opcode == Opcode::Mma || inst.opcode == Opcode::Stmatrix ||
      inst.opcode == Opcode::WmmaLoad)
    return decodeMatrixOrAsyncCopy(inst, parts, operands);

  int typesSeen = 0;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string &m = parts[i];
    if (auto type = lookupType(m)) {
      if (inst.opcode == Opcode::Cvt && typesSeen == 1)
        inst.srcType = *type;
      else if (inst.opcode == Opcode::Setp || inst.opcode == Opcode::Selp ||
               typesSeen == 0)
        inst.type = *type;
      else
        inst.srcType = *type; // e.g. mul.wide.u16 has one; cvt has two
      ++typesSeen;
      continue;
    }
    if (m == "global" || m == "shared" || m == "shared::cta" || m == "local" ||
        m == "param" || m == "const") {
      inst.space = m == "global"  ? Space::Global
                   : m == "local" ? Space::Local
                   : m == "param" ? Space::Param
                   : m == "const" ? Space::Const
                                  : Space::Shared;
      continue;
    }
    // cvta.to.shared::cluster: a CTA's own shared window is its part of the
    // cluster's (clusters are not emulated: a kernel that declares one is
    // refused), which is what LLVM writes before a TMA load's destination.
    if (m == "shared::cluster" && inst.opcode == Opcode::Cvta) {
      inst.space = Space::Shared;
      continue;
    }
    if (m == "shared::cluster")
      return unsupported("state space .shared::cluster");
    if (m == "v2" || m == "v4") {
      inst.vector = m == "v2" ? 2 : 4;
      continue;
    }
    if (inst.opcode == Opcode::Setp) {
      bool matched = false;
      for (const CompareName &compare : kCompares)
        if (m == compare.name) {
          inst.compare = compare.compare;
          matched = true;
        }
      if (matched)
        continue;
      if (m == "and" || m == "or" || m == "xor") {
        inst.boolOp = m == "and" ? 1 : m == "or" ? 2 : 3;
        continue;
      }
    }
    if (m == "rn" || m == "rz" || m == "rm" || m == "rp" || m == "rni" ||
        m == "rzi" || m == "rmi" || m == "rpi" || m == "rna") {
      inst.rounding = m == "rn"    ? Rounding::Rn
                      : m == "rz"  ? Rounding::Rz
                      : m == "rm"  ? Rounding::Rm
                      : m == "rp"  ? Rounding::Rp
                      : m == "rni" ? Rounding::Rni
                      : m == "rzi" ? Rounding::Rzi
                      : m == "rmi" ? Rounding::Rmi
                      : m == "rpi" ? Rounding::Rpi
                                   : Rounding::Rna;
      continue;
    }
    if (m == "ftz") {
      inst.ftz = true;
      continue;
    }
    if (m == "sat" || m == "satfinite") {
      inst.sat = true;
      continue;
    }
    if (m == "approx") {
      inst.approx = true;
      continue;
    }
    if (m == "NaN") {
      inst.nanMode = true;
      continue;
    }
    if (m == "cc") {
      inst.carryOut = true;
      continue;
    }
    if ((inst.opcode == Opcode::Mul || inst.opcode == Opcode::Mad) &&
        (m == "lo" || m == "hi" || m == "wide")) {
      inst.wide = m == "wide";
      inst.hi = m == "hi";
      continue;
    }
    if (inst.opcode == Opcode::Shfl &&
        (m == "up" || m == "down" || m == "bfly" || m == "idx")) {
      inst.mode = m == "up" ? 0 : m == "down" ? 1 : m == "bfly" ? 2 : 3;
      continue;
    }
    if (inst.opcode == Opcode::Vote &&
        (m == "all" || m == "any" || m == "uni" || m == "ballot")) {
      inst.mode = m == "all" ? 0 : m == "any" ? 1 : m == "uni" ? 2 : 3;
      continue;
    }
    if ((inst.opcode == Opcode::Atom || inst.opcode == Opcode::Red) &&
        (m == "add" || m == "min" || m == "max" || m == "exch" || m == "cas" ||
         m == "and" || m == "or" || m == "xor" || m == "inc" || m == "dec")) {
      static const char *const kAtomOps[] = {
          "add", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec"};
      for (uint8_t k = 0; k < 10; ++k)
        if (m == kAtomOps[k])
          inst.mode = k;
      continue;
    }
    if (inst.opcode == Opcode::Shf && (m == "l" || m == "r")) {
      inst.mode |= m == "r" ? 1 : 0;
      continue;
    }
    if (inst.opcode == Opcode::Shf && (m == "wrap" || m == "clamp")) {
      inst.mode |= m == "clamp" ? 2 : 0;
      continue;
    }
    if (inst.opcode == Opcode::Bar &&
        (m == "sync" || m == "warp" || m == "arrive" || m == "red")) {
      if (m == "red")
        return unsupported("barrier mode ." + m);
      if (m == "warp")
        inst.mode = 1;
      if (m == "arrive")
        inst.mode = 2;
      continue;
    }
    if (inst.opcode == Opcode::Cvta && m == "to") {
      inst.mode = 1; // cvta.to.SPACE: generic -> SPACE
      continue;
    }
    // Membar modes: 0 a fence at the GPU's or the system's scope (membar.gl,
    // fence.{sc,acq_rel}.{gpu,sys}), which orders global memory between
    // blocks (BlockRun::orderGlobalAccess); 2 one at the CTA's scope.
    if (inst.opcode == Opcode::Membar &&
        (m == "gl" || m == "sys" || m == "cta" || m == "sc" || m == "acq_rel" ||
         m == "gpu")) {
      if (m == "cta")
        inst.mode = 2;
      continue;
    }
    if (isNoEffectModifier(m))
      continue;
    return unsupported("modifier '." + m + "'");
  }

  int count = static_cast<int>(operands.size());
  if (count < entry->minOperands || count > entry->maxOperands)
    return fail("'" + opcodeText + "' takes " +
                std::to_string(entry->minOperands) +
                (entry->maxOperands != entry->minOperands
                     ? "-" + std::to_string(entry->maxOperands)
                     : "") +
                " operands, found " + std::to_string(count));
  // cvt.{f16x2,bf16x2,e4m3x2,e5m2x2}.f32 d, a, b packs two conversions;
  // every other cvt has one source. The 8-bit ones round to nearest and
  // saturate (PTX requires .rn.satfinite).
  bool fp8Pair = inst.type == Type::E4M3x2 || inst.type == Type::E5M2x2;
  if (inst.opcode == Opcode::Cvt && count == 3 &&
      !((inst.type == Type::F16x2 || inst.type == Type::BF16x2 || fp8Pair) &&
        inst.srcType == Type::F32))
    return fail("'" + opcodeText + "' takes 2 operands, found 3");
  if (inst.opcode == Opcode::Cvt && fp8Pair &&
      (count != 3 || inst.srcType != Type::F32 || !inst.sat ||
       inst.rounding != Rounding::Rn))
    return unsupported("cvt to " + std::string(getTypeName(inst.type)) +
                       " other than .rn.satfinite from two f32");
  if (inst.opcode == Opcode::Shfl && inst.type != Type::B32)
    return unsupported("shuffle type (b32 only)");

  // Decimal float literals take the instruction's type.
  for (RawOperand &raw : operands) {
    if (raw.decimalFloat) {
      raw.operand.kind = OperandKind::Imm;
      if (inst.type == Type::F64) {
        std::memcpy(&raw.operand.imm, &raw.floatValue, 8);
      } else {
        float f = static_cast<float>(raw.floatValue);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        raw.operand.imm = bits;
      }
    }
    if (raw.operand.kind == OperandKind::Label) {
      if (inst.opcode != Opcode::Bra)
        return fail("unknown symbol '" + raw.name + "'");
      labels.push_back(raw.name);
    }
    inst.operands.push_back(raw.operand);
  }
  // Destinations must be registers (or vectors of them, or a sink).
  bool hasDest = inst.opcode != Opcode::St && inst.opcode != Opcode::Bra &&
                 inst.opcode != Opcode::Bar && inst.opcode != Opcode::Ret &&
                 inst.opcode != Opcode::Exit && inst.opcode != Opcode::Membar &&
                 inst.opcode != Opcode::Red;
  if (hasDest) {
    OperandKind kind = inst.operands[0].kind;
    if (kind != OperandKind::Reg && kind != OperandKind::Vector &&
        kind != OperandKind::Sink)
      return fail("'" + opcodeText + "': the destination must be a register");
  }
  if ((inst.opcode == Opcode::Ld &&
       inst.operands[1].kind != OperandKind::Address) ||
      (inst.opcode == Opcode::St &&
       inst.operands[0].kind != OperandKind::Address) ||
      ((inst.opcode == Opcode::Atom) &&
       inst.operands[1].kind != OperandKind::Address) ||
      (inst.opcode == Opcode::Red &&
       inst.operands[0].kind != OperandKind::Address))
    return fail("'" + opcodeText + "' needs an address operand");
  // ld/st.param of a call sequence's variable or of a .func's own parameter
  // address the thread's local frame.
  if ((inst.opcode == Opcode::Ld || inst.opcode == Opcode::St) &&
      inst.space == Space::Param) {
    const Operand &address = inst.operands[inst.opcode == Opcode::Ld ? 1 : 0];
    if (address.symbol >= 0 &&
        function.symbols[address.symbol].space == Space::Local)
      inst.space = Space::Local;
    else if (!function.isEntry)
      return fail("'" + opcodeText + "' in .func '" + function.name +
                  "' addresses no parameter of it");
  }
  if ((inst.opcode == Opcode::Ld || inst.opcode == Opcode::St) &&
      inst.vector > 1) {
    const Operand &data = inst.operands[inst.opcode == Opcode::Ld ? 0 : 1];
    if (data.kind != OperandKind::Vector || data.count != inst.vector)
      return fail("'" + opcodeText + "' needs a vector of " +
                  std::to_string(inst.vector) + " registers");
  }
  if (inst.type == Type::None && inst.opcode != Opcode::Bra &&
      inst.opcode != Opcode::Bar && inst.opcode != Opcode::Ret &&
      inst.opcode != Opcode::Exit && inst.opcode != Opcode::Membar)
    return fail("'" + opcodeText + "' has no type");
  return true;
}

/// cp.async, ldmatrix, stmatrix, mma.sync and wmma name a shape, layouts and
/// up to four element types in their modifiers, so they are decoded here
/// rather than by decode's one-type loop; WarpMatrix.cpp says which shapes
/// and types the executor implements, so a form it cannot run fails here.
bool Decoder::decodeMatrixOrAsyncCopy(Instruction &inst,
                                      const std::vector<std::string> &parts,
                                      std::vector<RawOperand> &operands) {
  auto unsupported = [&](const std::string &what) {
    return fail("unsupported " + what + " in '" + inst.text + "' (function '" +
                function.name + "')");
  };
  auto malformed = [&](const std::string &what) {
    return fail("'" + inst.text + "' " + what);
  };
  MatrixOperands &matrix = inst.matrix;
  size_t first = 1;
  if (inst.opcode == Opcode::CpAsync) {
    std::string kind = parts.size() > 2 ? parts[2] : "";
    if (parts.size() < 3 || parts[1] != "async" || kind == "bulk" ||
        kind == "mbarrier")
      return fail("unsupported instruction '" + inst.text + "' in '" +
                  function.name + "'");
    if (kind == "commit_group" || kind == "wait_group" || kind == "wait_all") {
      inst.opcode =
          kind == "commit_group" ? Opcode::CpAsyncCommit : Opcode::CpAsyncWait;
      inst.mode = kind == "wait_all" ? 1 : 0;
      first = 3;
    } else {
      first = 2;
    }
  } else if (inst.opcode == Opcode::WmmaLoad) {
    std::string kind = parts.size() > 1 ? parts[1] : "";
    std::string which = parts.size() > 2 ? parts[2] : "";
    if (kind == "load" && (which == "a" || which == "b" || which == "c")) {
      matrix.fragment = which == "a" ? 0 : which == "b" ? 1 : 2;
      first = 3;
    } else if (kind == "store" && which == "d") {
      inst.opcode = Opcode::WmmaStore;
      matrix.fragment = 2;
      first = 3;
    } else if (kind == "mma") {
      inst.opcode = Opcode::WmmaMma;
      first = 2;
    } else {
      return fail("unsupported instruction '" + inst.text + "' in '" +
                  function.name + "'");
    }
  }
  std::vector<Type> types;
  bool sawLayout = false, cacheHint = false;
  for (size_t i = first; i < parts.size(); ++i) {
    const std::string &m = parts[i];
    if (auto type = lookupType(m)) {
      types.push_back(*type);
      continue;
    }
    unsigned dm = 0, dn = 0, dk = 0;
    char tail = 0;
    if (m[0] == 'm' &&
        (std::sscanf(m.c_str(), "m%un%uk%u%c", &dm, &dn, &dk, &tail) == 3 ||
         std::sscanf(m.c_str(), "m%un%u%c", &dm, &dn, &tail) == 2)) {
      matrix.m = static_cast<uint8_t>(dm);
      matrix.n = static_cast<uint8_t>(dn);
      matrix.k = static_cast<uint8_t>(dk);
      continue;
    }
    if (m == "row" || m == "col") {
      (sawLayout ? matrix.bColumn : matrix.aColumn) = m == "col";
      sawLayout = true;
      continue;
    }
    if (inst.opcode != Opcode::CpAsync &&
        (m == "shared" || m == "shared::cta" || m == "global")) {
      inst.space = m == "global" ? Space::Global : Space::Shared;
      continue;
    }
    if (inst.opcode == Opcode::CpAsync &&
        (m == "shared" || m == "shared::cta" || m == "global" || m == "ca" ||
         m == "cg")) {
      if (m == "cg")
        inst.mode |= 1;
      continue;
    }
    if (m == "x1" || m == "x2" || m == "x4") {
      matrix.fragment = static_cast<uint8_t>(m[1] - '0');
      continue;
    }
    if (m == "trans") {
      matrix.transpose = true;
      continue;
    }
    if (m == "satfinite") {
      inst.sat = true;
      continue;
    }
    if (m == "L2::cache_hint") {
      cacheHint = true;
      continue;
    }
    // Prefetch sizes (.L2::64B) and the rest only steer caches.
    if (m == "sync" || m == "aligned" || m.rfind("L2::", 0) == 0)
      continue;
    return unsupported("modifier '." + m + "'");
  }

  // Operand kinds; every operand is pushed as parsed below.
  auto isAddress = [&](size_t i) {
    return i < operands.size() &&
           operands[i].operand.kind == OperandKind::Address;
  };
  auto isVector = [&](size_t i, unsigned count) {
    if (i >= operands.size())
      return false;
    const Operand &op = operands[i].operand;
    return (op.kind == OperandKind::Vector && op.count == count) ||
           (count == 1 && op.kind == OperandKind::Reg);
  };
  auto isValue = [&](size_t i) {
    return i < operands.size() &&
           (operands[i].operand.kind == OperandKind::Reg ||
            operands[i].operand.kind == OperandKind::Imm);
  };
  auto fragmentRegs = [&](FragmentRole role, Type type,
                          unsigned &regs) -> bool {
    detail::FragmentShape shape;
    std::string error =
        detail::getFragmentShape(inst.opcode, matrix, role, type, shape);
    if (!error.empty())
      return unsupported(error);
    regs = shape.regs;
    return true;
  };
  switch (inst.opcode) {
  case Opcode::CpAsync: {
    // [dst], [src], cp-size {, src-size} {, cache-policy}
    size_t count = operands.size() - (cacheHint ? 1 : 0);
    if (!isAddress(0) || !isAddress(1) || count < 3 || count > 4 ||
        operands[2].operand.kind != OperandKind::Imm ||
        (count == 4 && !isValue(3)))
      return malformed("takes [shared], [global], cp-size{, src-size}");
    int64_t size = operands[2].operand.imm;
    if (size != 4 && size != 8 && size != 16)
      return malformed("copies 4, 8 or 16 bytes, not " + std::to_string(size));
    if ((inst.mode & 1) && size != 16)
      return malformed("(.cg) copies 16 bytes only");
    if (count == 4)
      inst.mode |= 2; // a src-size operand
    break;
  }
  case Opcode::CpAsyncCommit:
    if (!operands.empty())
      return malformed("takes no operands");
    break;
  case Opcode::CpAsyncWait:
    if (inst.mode == 1 ? !operands.empty()
                       : operands.size() != 1 ||
                             operands[0].operand.kind != OperandKind::Imm)
      return malformed(inst.mode == 1 ? "takes no operands"
                                      : "takes one immediate group count");
    break;
  case Opcode::Ldmatrix:
  case Opcode::Stmatrix: {
    if (matrix.m != 8 || matrix.n != 8 || matrix.k != 0)
      return unsupported("shape (.m8n8 only)");
    if (types.size() != 1 || types[0] != Type::B16)
      return unsupported("type (.b16 only)");
    if (!matrix.fragment)
      return malformed("needs .x1, .x2 or .x4");
    bool load = inst.opcode == Opcode::Ldmatrix;
    if (operands.size() != 2 || !isAddress(load ? 1 : 0) ||
        !isVector(load ? 0 : 1, matrix.fragment))
      return malformed("takes " +
                       std::string(load ? "{registers}, [address]"
                                        : "[address], {registers}") +
                       " with one register per matrix");
    inst.type = Type::B16;
    break;
  }
  case Opcode::Mma:
  case Opcode::WmmaMma: {
    if (inst.opcode == Opcode::WmmaMma && types.size() == 2) {
      // wmma.mma's f16 form names only D's and C's types.
      types = {types[0], Type::F16, Type::F16, types[1]};
    }
    if (types.size() != 4)
      return malformed("needs the types of D, A, B and C");
    matrix.d = types[0];
    matrix.a = types[1];
    matrix.b = types[2];
    matrix.c = types[3];
    if (inst.opcode == Opcode::Mma && (matrix.aColumn || !matrix.bColumn))
      return unsupported("layout (.row.col only)");
    bool isInteger = matrix.a == Type::S8 || matrix.a == Type::U8;
    if (isInteger != (matrix.b == Type::S8 || matrix.b == Type::U8) ||
        (!isInteger && matrix.a != matrix.b) ||
        (isInteger != (matrix.d == Type::S32)) ||
        (isInteger != (matrix.c == Type::S32)) ||
        ((matrix.a == Type::BF16 || matrix.a == Type::TF32) &&
         (matrix.d != Type::F32 || matrix.c != Type::F32)))
      return unsupported("type combination");
    if (inst.sat && !isInteger)
      return unsupported("modifier '.satfinite' on floats");
    unsigned regsD, regsA, regsB, regsC;
    if (!fragmentRegs(FragmentRole::C, matrix.d, regsD) ||
        !fragmentRegs(FragmentRole::A, matrix.a, regsA) ||
        !fragmentRegs(FragmentRole::B, matrix.b, regsB) ||
        !fragmentRegs(FragmentRole::C, matrix.c, regsC))
      return false;
    if (operands.size() != 4 || !isVector(0, regsD) || !isVector(1, regsA) ||
        !isVector(2, regsB) || !isVector(3, regsC))
      return malformed("takes {d}, {a}, {b}, {c} of " + std::to_string(regsD) +
                       ", " + std::to_string(regsA) + ", " +
                       std::to_string(regsB) + " and " + std::to_string(regsC) +
                       " registers");
    inst.type = matrix.d;
    break;
  }
  case Opcode::WmmaLoad:
  case Opcode::WmmaStore: {
    if (types.size() != 1)
      return malformed("needs one element type");
    FragmentRole role = matrix.fragment == 0   ? FragmentRole::A
                        : matrix.fragment == 1 ? FragmentRole::B
                                               : FragmentRole::C;
    (role == FragmentRole::A            ? matrix.a
     : role == FragmentRole::B          ? matrix.b
     : inst.opcode == Opcode::WmmaStore ? matrix.d
                                        : matrix.c) = types[0];
    if (role == FragmentRole::C && types[0] == Type::S32)
      return unsupported("type .s32");
    unsigned regs;
    if (!fragmentRegs(role, types[0], regs))
      return false;
    bool load = inst.opcode == Opcode::WmmaLoad;
    if (operands.size() < 2 || operands.size() > 3 ||
        !isAddress(load ? 1 : 0) || !isVector(load ? 0 : 1, regs) ||
        (operands.size() == 3 && !isValue(2)))
      return malformed(
          "takes " + std::string(load ? "{d}, [address]" : "[address], {d}") +
          "{, stride} with " + std::to_string(regs) + " registers");
    inst.type = types[0];
    break;
  }
  default:
    break;
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    RawOperand &raw = operands[i];
    if (raw.operand.kind == OperandKind::Label || raw.decimalFloat)
      return malformed("has a bad operand '" + raw.name + "'");
    // A one-register fragment may be written without braces; the executor
    // sees every fragment as a vector.
    bool isFragment =
        inst.opcode == Opcode::Mma || inst.opcode == Opcode::WmmaMma ||
        ((inst.opcode == Opcode::Ldmatrix || inst.opcode == Opcode::WmmaLoad) &&
         i == 0) ||
        ((inst.opcode == Opcode::Stmatrix ||
          inst.opcode == Opcode::WmmaStore) &&
         i == 1);
    Operand &op = raw.operand;
    if (op.kind == OperandKind::Reg && isFragment) {
      op.kind = OperandKind::Vector;
      op.count = 1;
      op.regs[0] = op.reg;
      op.reg = kNoReg;
    }
    inst.operands.push_back(op);
  }
  return true;
}

bool detail::decodeInstruction(PtxFunction &function, Instruction &inst,
                               const std::string &opcodeText,
                               std::vector<RawOperand> &operands,
                               std::vector<std::string> &branchTargets,
                               std::string &error) {
  return Decoder(function, branchTargets, error)
      .decode(inst, opcodeText, operands);
}
