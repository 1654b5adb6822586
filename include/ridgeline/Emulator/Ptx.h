//===- Ptx.h - PTX modules, decoded for execution ---------------*- C++ -*-===//
//
// The emulator's program form: a PTX module parsed once and decoded into
// instructions with their opcode, types and modifiers resolved and their
// operands turned into register indices, immediates and addresses, so that
// execution never looks at text again. Plain C++17: the emulator stands in
// for the CUDA driver under the runtime and links neither MLIR nor LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_EMULATOR_PTX_H
#define RIDGELINE_EMULATOR_PTX_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ridge::emu {

/// PTX state spaces. Generic addresses are classified at run time.
enum class Space : uint8_t { Generic, Global, Shared, Local, Param, Const };

/// PTX fundamental types as instruction modifiers name them.
enum class Type : uint8_t {
  None,
  Pred,
  B8,
  B16,
  B32,
  B64,
  B128,
  U8,
  U16,
  U32,
  U64,
  S8,
  S16,
  S32,
  S64,
  F16,
  F16x2,
  BF16,
  BF16x2,
  F32,
  F64,
  TF32,   // a .b32 register holding an f32 whose low 13 mantissa bits are 0
  E4M3x2, // two 8-bit floats in a .b16 (cvt's packed destination)
  E5M2x2,
};

/// Width of `type` in bits (1 for .pred, 0 for None).
unsigned getTypeBits(Type type);
bool isFloatType(Type type);
bool isSignedType(Type type);
/// The modifier's spelling, e.g. "f32" (without the dot).
const char *getTypeName(Type type);

enum class Opcode : uint8_t {
  Abs,
  Add,
  And,
  Atom,
  Bar,
  Bfe,
  Bfi,
  Bra,
  Brev,
  Call, // inlined at load time (inlineCalls); never executed
  Clz,
  Cnot,
  Copysign,
  Cos,
  CpAsync,       // cp.async.{ca,cg}.shared.global
  CpAsyncBulk,   // cp.async.bulk[.tensor], .commit_group, .wait_group
                 // (Hopper.cpp)
  CpAsyncCommit, // cp.async.commit_group
  CpAsyncWait,   // cp.async.wait_group N, cp.async.wait_all (mode 1)
  Cvt,
  Cvta,
  Div,
  Elect,
  Ex2,
  Exit,
  Fma,
  Lg2,
  Ld,
  Ldmatrix,
  Mad,
  Max,
  Mbarrier,
  Membar,
  Min,
  Mma, // mma.sync.aligned
  Mov,
  Mul,
  Neg,
  Not,
  Or,
  Popc,
  Prmt,
  Rcp,
  Red,
  Rem,
  Ret,
  Rsqrt,
  Selp,
  Setp,
  Shf,
  Shfl,
  Shl,
  Shr,
  Sin,
  Sqrt,
  St,
  Stmatrix,
  Sub,
  Tanh,
  Vote,
  WmmaLoad,
  WmmaMma,
  WmmaStore,
  Wgmma, // wgmma.fence, .mma_async, .commit_group, .wait_group (Hopper.cpp)
  Xor,
};

enum class SpecialReg : uint8_t {
  Tid,
  Ntid,
  Ctaid,
  Nctaid,
  LaneId,
  WarpId,
  NWarpId,
  SmId,
  LaneMaskLt,
  LaneMaskLe,
  LaneMaskEq,
  LaneMaskGe,
  LaneMaskGt,
  Clock,
  Clock64,
  GlobalTimer,
  DynamicSmemSize,
  TotalSmemSize,
};

/// Comparison of setp (float ones ordered unless the name ends in 'u').
enum class Compare : uint8_t {
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  Lo,
  Ls,
  Hi,
  Hs,
  Equ,
  Neu,
  Ltu,
  Leu,
  Gtu,
  Geu,
  Num,
  Nan,
};

/// How an instruction rounds (cvt and float arithmetic).
enum class Rounding : uint8_t {
  Default,
  Rn,
  Rz,
  Rm,
  Rp,
  Rni,
  Rzi,
  Rmi,
  Rpi,
  Rna
};

constexpr uint32_t kNoReg = ~0u;

enum class OperandKind : uint8_t {
  None,
  Reg,     // reg
  Imm,     // imm (raw bits; float immediates already in their bit pattern)
  Special, // special, dim
  Address, // [reg + imm] or [symbol + imm] (reg may be kNoReg)
  Vector,  // {regs...} (elements may be kNoReg for '_')
  Symbol,  // the address of `symbol` (mov.u64 %rd, name)
  Label,   // a branch target: imm is the instruction index
  Sink,    // '_'
};

struct Operand {
  OperandKind kind = OperandKind::None;
  bool negate = false; // '!' on a predicate source
  SpecialReg special = SpecialReg::Tid;
  uint8_t dim = 0;   // .x/.y/.z of a special register
  uint8_t count = 0; // elements of a Vector
  uint32_t reg = kNoReg;
  int32_t symbol = -1; // Address/Symbol: index into PtxFunction::symbols
  int64_t imm = 0;
  uint8_t immMask = 0; // Vector elements that are immediates (vectorImms)
  uint64_t vectorImms[8] = {};
  uint32_t regs[8] = {kNoReg, kNoReg, kNoReg, kNoReg,
                      kNoReg, kNoReg, kNoReg, kNoReg};
};

/// The fragments of a tensor-core instruction (mma.sync, wmma, ldmatrix,
/// stmatrix) as its modifiers name them.
struct MatrixOperands {
  uint8_t m = 0, n = 0, k = 0; // the shape (ldmatrix/stmatrix: m8n8)
  /// Element types of D, A, B and C (wmma.load/store: the loaded one in a).
  Type d = Type::None, a = Type::None, b = Type::None, c = Type::None;
  /// .col layouts of A and B (wmma.load/store: the memory layout in aColumn).
  bool aColumn = false, bColumn = false;
  /// wmma.load: 0, 1, 2 for .a, .b, .c; ldmatrix/stmatrix: .x1/.x2/.x4.
  uint8_t fragment = 0;
  bool transpose = false; // ldmatrix/stmatrix .trans
};

/// One decoded instruction.
struct Instruction {
  Opcode opcode = Opcode::Mov;
  Type type = Type::None;    // the (last) type modifier
  Type srcType = Type::None; // cvt's source type; wgmma's A type
  Type bType = Type::None;   // wgmma's B type (e4m3 and e5m2 may mix)
  Space space = Space::Generic;
  Rounding rounding = Rounding::Default;
  Compare compare = Compare::Eq;
  uint8_t boolOp = 0; // setp .and/.or/.xor: 1/2/3
  uint8_t vector = 1; // .v2/.v4 loads and stores
  uint8_t mode = 0;   // shfl/vote/atom/shf/mul sub-operation; the Hopper
                      // ops' (Hopper.cpp); 1 on Membar: fence.proxy.async
  bool ftz = false, sat = false, approx = false, nanMode = false;
  bool carryOut = false, carryIn = false;
  bool wide = false, hi = false; // mul/mad .wide and .hi
  bool uni = false;
  bool guardNegate = false;
  uint32_t guard = kNoReg; // @%p / @!%p
  /// Hopper instructions (Hopper.cpp): the variant's shape and flags, as
  /// decodeHopper() packs them.
  uint32_t variant = 0;
  std::vector<Operand> operands;
  MatrixOperands matrix;
  /// Elements past the eighth of a long vector operand (wgmma's
  /// accumulators, up to 128 registers): the operand holds the first eight
  /// and its `imm` is where the rest start here.
  std::vector<uint32_t> longVector;
  uint32_t line = 0; // 1-based line in the PTX text
  std::string text;  // the opcode as written, for messages
  /// call: the callee's name; the operands are Symbol operands of the return
  /// variables (`mode` of them), then of the arguments.
  std::string callee;
};

/// A variable of a state space: a kernel parameter, a .shared/.local/.global
/// declaration. Offsets are within the space's per-kernel layout for param,
/// shared and local, and within the module's globals for global/const.
struct Symbol {
  std::string name;
  Space space = Space::Global;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t align = 1;
  bool dynamicShared = false; // .extern .shared name[]
  int32_t global = -1;        // index into PtxModule::globals
};

struct Param {
  std::string name;
  uint64_t offset = 0, size = 0;
  uint32_t align = 1;
};

struct PtxFunction {
  std::string name;
  bool isEntry = false;
  std::vector<Param> params;
  uint64_t paramBytes = 0;
  std::vector<Symbol> symbols; // params, then shared/local/global names used
  std::map<std::string, int32_t> symbolIndex;
  std::vector<std::string> regNames; // index -> name
  uint32_t numRegs = 0;
  uint64_t staticShared = 0;          // bytes of the kernel's .shared variables
  uint64_t localBytes = 0;            // bytes of .local per thread
  uint32_t maxThreads[3] = {0, 0, 0}; // .maxntid (0: none)
  uint32_t reqThreads[3] = {0, 0, 0}; // .reqntid
  std::vector<Instruction> code;
  uint32_t line = 0;
  /// A .func's parameters and return values are per-thread variables (in its
  /// local frame) that a call binds to the caller's call-site `.param`
  /// variables: their symbol indices, in declaration order.
  std::vector<int32_t> paramSymbols, returnSymbols;
  bool hasCalls = false;
};

/// A module-scope variable (.global / .const), with its initial bytes.
struct GlobalVar {
  std::string name;
  Space space = Space::Global;
  uint64_t size = 0;
  uint32_t align = 1;
  std::vector<uint8_t> init;
};

struct PtxModule {
  std::string version;
  std::string target;
  unsigned addressSize = 64;
  std::vector<GlobalVar> globals;
  std::vector<GlobalVar> sharedVars; // module-scope .shared
  std::vector<std::unique_ptr<PtxFunction>> functions;
  const PtxFunction *findFunction(const std::string &name) const;
};

/// Parses and decodes `text`. On failure returns null and sets `error` to
/// "LINE: message" naming the directive or instruction it does not know.
std::unique_ptr<PtxModule> parsePtx(const std::string &text,
                                    std::string &error);

} // namespace ridge::emu

#endif // RIDGELINE_EMULATOR_PTX_H
