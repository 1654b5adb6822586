//===- InlineCalls.cpp - Calls of .func bodies, inlined at load -----------===//
//
// Compilers call `.func`s for what they do not inline themselves: LLVM's
// NVPTX backend calls libdevice's f64 trigonometry (`__nv_sin`), nvcc calls
// non-inlined device functions. Each call site gets a copy of the callee's
// decoded body. Arguments are not copied: the callee's parameter and return
// variables are renamed to the caller's call-site `.param` variables, which
// PTX scopes to one call sequence, so binding them by name is exactly
// call-by-value. Registers and local variables of one callee share a block
// of the caller's at every call site (a callee cannot be live twice without
// recursion, which is refused).
//
//===----------------------------------------------------------------------===//

#include "InlineCalls.h"

#include <algorithm>
#include <map>

using namespace ridge::emu;

namespace {

uint64_t alignTo(uint64_t value, uint64_t align) {
  align = std::max<uint64_t>(align, 1);
  return (value + align - 1) / align * align;
}

class Inliner {
public:
  Inliner(PtxModule &module, std::string &error)
      : module(module), error(error) {}

  bool inlineInto(PtxFunction &function);

private:
  /// Where a callee's registers and non-parameter variables live in one
  /// caller.
  struct CalleeFrame {
    uint32_t regBase = 0;
    std::map<int32_t, int32_t> symbols; // callee symbol -> caller symbol
  };

  bool fail(uint32_t line, const std::string &message) {
    error = std::to_string(line) + ": " + message;
    return false;
  }
  PtxFunction *findDefinition(const std::string &name) {
    for (auto &function : module.functions)
      if (function->name == name)
        return function.get();
    return nullptr;
  }
  CalleeFrame &getFrame(PtxFunction &caller, const PtxFunction &callee);
  int32_t addSymbol(PtxFunction &caller, const PtxFunction &callee,
                    const Symbol &symbol);
  bool emitCall(PtxFunction &caller, const Instruction &call,
                std::vector<Instruction> &code);

  PtxModule &module;
  std::string &error;
  std::map<const PtxFunction *, int> state; // 1: in progress, 2: done
  std::map<std::pair<const PtxFunction *, const PtxFunction *>, CalleeFrame>
      frames; // (caller, callee)
};

/// The caller's symbol for a callee's variable that is not a parameter:
/// module variables and module-scope shared memory by name (so that caller
/// and callee agree on their address), the callee's local variables in a
/// block of the caller's frame.
int32_t Inliner::addSymbol(PtxFunction &caller, const PtxFunction &callee,
                           const Symbol &symbol) {
  Symbol copy = symbol;
  if (symbol.space == Space::Local) {
    copy.name = callee.name + "/" + symbol.name;
    // The offset is set by getFrame, relative to the callee's frame base.
  } else if (auto it = caller.symbolIndex.find(symbol.name);
             it != caller.symbolIndex.end() &&
             caller.symbols[it->second].space == symbol.space &&
             caller.symbols[it->second].global == symbol.global) {
    return it->second;
  } else if (symbol.space == Space::Shared && !symbol.dynamicShared) {
    caller.staticShared = alignTo(caller.staticShared, symbol.align);
    copy.offset = caller.staticShared;
    caller.staticShared += symbol.size;
  }
  int32_t index = static_cast<int32_t>(caller.symbols.size());
  if (symbol.space != Space::Local)
    caller.symbolIndex[copy.name] = index;
  caller.symbols.push_back(copy);
  return index;
}

Inliner::CalleeFrame &Inliner::getFrame(PtxFunction &caller,
                                        const PtxFunction &callee) {
  auto key = std::make_pair(&caller, &callee);
  auto found = frames.find(key);
  if (found != frames.end())
    return found->second;
  CalleeFrame &frame = frames[key];
  frame.regBase = caller.numRegs;
  caller.numRegs += callee.numRegs;
  for (const std::string &name : callee.regNames)
    caller.regNames.push_back(callee.name + "/" + name);
  uint64_t localBase = alignTo(caller.localBytes, 16);
  caller.localBytes = localBase + callee.localBytes;
  std::vector<bool> isParameter(callee.symbols.size(), false);
  for (int32_t index : callee.paramSymbols)
    isParameter[index] = true;
  for (int32_t index : callee.returnSymbols)
    isParameter[index] = true;
  for (size_t i = 0; i < callee.symbols.size(); ++i) {
    if (isParameter[i])
      continue;
    int32_t index = addSymbol(caller, callee, callee.symbols[i]);
    if (callee.symbols[i].space == Space::Local)
      caller.symbols[index].offset = localBase + callee.symbols[i].offset;
    frame.symbols[static_cast<int32_t>(i)] = index;
  }
  return frame;
}

bool Inliner::emitCall(PtxFunction &caller, const Instruction &call,
                       std::vector<Instruction> &code) {
  PtxFunction *callee = findDefinition(call.callee);
  if (!callee)
    return fail(call.line,
                "call to '" + call.callee +
                    "', which is not defined in the module (an external "
                    "function, such as libdevice's, must be linked into the "
                    "PTX)");
  if (callee->isEntry)
    return fail(call.line, "call to the kernel '" + call.callee + "'");
  size_t numReturns = call.mode;
  size_t numArgs = call.operands.size() - numReturns;
  if (numReturns != callee->returnSymbols.size() ||
      numArgs != callee->paramSymbols.size())
    return fail(call.line,
                "call to '" + call.callee + "' with " +
                    std::to_string(numReturns) + " return value(s) and " +
                    std::to_string(numArgs) + " argument(s); it has " +
                    std::to_string(callee->returnSymbols.size()) + " and " +
                    std::to_string(callee->paramSymbols.size()));
  if (!inlineInto(*callee))
    return false;
  CalleeFrame &frame = getFrame(caller, *callee);

  // The callee's parameters are the call site's variables.
  std::map<int32_t, int32_t> symbols = frame.symbols;
  auto bind = [&](const std::vector<int32_t> &calleeSymbols, size_t first,
                  const char *what) {
    for (size_t i = 0; i < calleeSymbols.size(); ++i) {
      int32_t site = call.operands[first + i].symbol;
      const Symbol &formal = callee->symbols[calleeSymbols[i]];
      if (caller.symbols[site].size < formal.size)
        return fail(call.line, std::string(what) + " '" +
                                   caller.symbols[site].name + "' of " +
                                   std::to_string(caller.symbols[site].size) +
                                   " bytes is smaller than '" + formal.name +
                                   "' of '" + callee->name + "' (" +
                                   std::to_string(formal.size) + " bytes)");
      symbols[calleeSymbols[i]] = site;
    }
    return true;
  };
  if (!bind(callee->returnSymbols, 0, "return variable") ||
      !bind(callee->paramSymbols, numReturns, "argument"))
    return false;

  // Branches to the end of the inlined body: a predicated call's skip and
  // every `ret`.
  std::vector<size_t> toEnd;
  auto branch = [&](uint32_t guard, bool negate, uint32_t line) {
    Instruction bra;
    bra.opcode = Opcode::Bra;
    bra.text = "bra";
    bra.line = line;
    bra.guard = guard;
    bra.guardNegate = negate;
    Operand target;
    target.kind = OperandKind::Label;
    bra.operands.push_back(target);
    toEnd.push_back(code.size());
    code.push_back(std::move(bra));
  };
  if (call.guard != kNoReg)
    branch(call.guard, !call.guardNegate, call.line);

  size_t bodyStart = code.size();
  auto remapReg = [&](uint32_t &reg) {
    if (reg != kNoReg)
      reg += frame.regBase;
  };
  for (const Instruction &original : callee->code) {
    if (original.opcode == Opcode::Ret) {
      uint32_t guard = original.guard;
      remapReg(guard);
      branch(guard, original.guardNegate, original.line);
      continue;
    }
    Instruction inst = original;
    remapReg(inst.guard);
    for (uint32_t &reg : inst.longVector)
      remapReg(reg);
    for (Operand &operand : inst.operands) {
      remapReg(operand.reg);
      for (uint32_t &reg : operand.regs)
        remapReg(reg);
      if (operand.kind == OperandKind::Label)
        operand.imm += static_cast<int64_t>(bodyStart);
      else if (operand.symbol >= 0)
        operand.symbol = symbols.at(operand.symbol);
    }
    code.push_back(std::move(inst));
  }
  for (size_t index : toEnd)
    code[index].operands[0].imm = static_cast<int64_t>(code.size());
  return true;
}

bool Inliner::inlineInto(PtxFunction &function) {
  int &status = state[&function];
  if (status == 2)
    return true;
  if (status == 1)
    return fail(function.line, "recursive call of '" + function.name +
                                   "' (recursion is not supported)");
  status = 1;
  if (function.hasCalls) {
    std::vector<Instruction> code;
    // Where each original instruction starts in the new code, for the
    // function's own branch targets.
    std::vector<uint32_t> newIndex(function.code.size() + 1, 0);
    std::vector<size_t> originals;
    for (size_t i = 0; i < function.code.size(); ++i) {
      newIndex[i] = static_cast<uint32_t>(code.size());
      const Instruction &inst = function.code[i];
      if (inst.opcode == Opcode::Call) {
        if (!emitCall(function, inst, code))
          return false;
        continue;
      }
      originals.push_back(code.size());
      code.push_back(inst);
    }
    newIndex[function.code.size()] = static_cast<uint32_t>(code.size());
    for (size_t index : originals)
      for (Operand &operand : code[index].operands)
        if (operand.kind == OperandKind::Label)
          operand.imm = newIndex[operand.imm];
    function.code = std::move(code);
    function.hasCalls = false;
  }
  state[&function] = 2;
  return true;
}

} // namespace

bool ridge::emu::detail::inlineCalls(PtxModule &module, std::string &error) {
  Inliner inliner(module, error);
  for (auto &function : module.functions)
    if (!inliner.inlineInto(*function))
      return false;
  return true;
}
