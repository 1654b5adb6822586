//===- InlineCalls.h - Calls of .func bodies, inlined at load ---*- C++ -*-===//
//
// Private to the emulator: PTX calls (`call`, with the `.param` variables of
// a call sequence) are resolved once when a module is loaded, by copying the
// callee's decoded body into its caller, so that the executor only ever runs
// straight-line code with branches and needs no call stack.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_EMULATOR_INLINECALLS_H
#define RIDGELINE_LIB_EMULATOR_INLINECALLS_H

#include "ridgeline/Emulator/Ptx.h"

#include <string>

namespace ridge::emu::detail {

/// Replaces every `call` in `module` by the callee's body. A callee's
/// parameters and return values become the caller's call-site `.param`
/// variables (both live in the thread's local frame), its registers and
/// local variables get a block of the caller's, and its `ret` branches to
/// the instruction after the call. False with `error` ("LINE: message") for
/// a callee the module does not define, an argument count that differs
/// from the callee's, or recursion.
bool inlineCalls(PtxModule &module, std::string &error);

} // namespace ridge::emu::detail

#endif // RIDGELINE_LIB_EMULATOR_INLINECALLS_H
