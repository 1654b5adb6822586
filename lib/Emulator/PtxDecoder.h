//===- PtxDecoder.h - One PTX instruction, decoded --------------*- C++ -*-===//
//
// Private to the emulator: the seam between reading PTX text (PtxParser.cpp:
// directives, declarations, operands resolved to registers and symbols) and
// decoding an instruction (PtxDecoder.cpp: its opcode, modifiers and operand
// forms, from the dotted opcode text and the parsed operands).
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_EMULATOR_PTXDECODER_H
#define RIDGELINE_LIB_EMULATOR_PTXDECODER_H

#include "ridgeline/Emulator/Ptx.h"

#include <optional>
#include <string>
#include <vector>

namespace ridge::emu::detail {

/// An operand before the decoder has seen its instruction.
struct RawOperand {
  Operand operand;
  std::string name;          // symbol or label name
  bool decimalFloat = false; // "1.5": converted by the instruction's type
  double floatValue = 0;
  std::vector<uint32_t> extraRegs; // a long vector's elements past the 8th
  /// "[tensorMap, {c0, c1}]" (cp.async.bulk.tensor): the coordinates, as a
  /// Vector operand that follows the address.
  std::optional<Operand> coordinates;
};

/// The type a modifier names ("f32", without the dot).
std::optional<Type> lookupType(const std::string &name);

/// Decodes the instruction `opcodeText` (e.g. "ld.global.v4.f32") of
/// `function` with `operands` into `inst` (whose guard and line are set).
/// Branch targets stay unresolved (Label operands with imm -1); their names
/// are appended to `branchTargets` for the caller to resolve. False with
/// `error` naming what the decoder does not know.
bool decodeInstruction(PtxFunction &function, Instruction &inst,
                       const std::string &opcodeText,
                       std::vector<RawOperand> &operands,
                       std::vector<std::string> &branchTargets,
                       std::string &error);

} // namespace ridge::emu::detail

#endif // RIDGELINE_LIB_EMULATOR_PTXDECODER_H
