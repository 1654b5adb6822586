//===- PtxParser.cpp - PTX text -> decoded module -------------------------===//
//
// A recursive-descent reader for the PTX that LLVM's NVPTX backend and nvcc
// emit: module directives, module-scope variables, .entry/.func definitions
// with their parameter, register, shared and local declarations, labels and
// instructions. Each instruction is decoded here, once: its modifiers become
// fields, its operands register indices, immediates and resolved symbols and
// labels. Anything it does not know (a directive, an opcode, a modifier) is
// an error that names it and its line, so no instruction is ever skipped.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Emulator/Ptx.h"

#include "Hopper.h"
#include "InlineCalls.h"
#include "WarpMatrix.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

using namespace ridge::emu;
using ridge::emu::detail::FragmentRole;

unsigned ridge::emu::getTypeBits(Type type) {
  switch (type) {
  case Type::None:
    return 0;
  case Type::Pred:
    return 1;
  case Type::B8:
  case Type::U8:
  case Type::S8:
    return 8;
  case Type::B16:
  case Type::U16:
  case Type::S16:
  case Type::F16:
  case Type::BF16:
    return 16;
  case Type::B32:
  case Type::U32:
  case Type::S32:
  case Type::F32:
  case Type::F16x2:
  case Type::BF16x2:
  case Type::TF32:
    return 32;
  case Type::B64:
  case Type::U64:
  case Type::S64:
  case Type::F64:
    return 64;
  case Type::B128:
    return 128;
  }
  return 0;
}

bool ridge::emu::isFloatType(Type type) {
  return type == Type::F16 || type == Type::F16x2 || type == Type::BF16 ||
         type == Type::BF16x2 || type == Type::F32 || type == Type::F64 ||
         type == Type::TF32;
}

bool ridge::emu::isSignedType(Type type) {
  return type == Type::S8 || type == Type::S16 || type == Type::S32 ||
         type == Type::S64;
}

namespace {
struct TypeName {
  const char *name;
  Type type;
};
constexpr TypeName kTypeNames[] = {
    {"pred", Type::Pred},   {"b8", Type::B8},     {"b16", Type::B16},
    {"b32", Type::B32},     {"b64", Type::B64},   {"b128", Type::B128},
    {"u8", Type::U8},       {"u16", Type::U16},   {"u32", Type::U32},
    {"u64", Type::U64},     {"s8", Type::S8},     {"s16", Type::S16},
    {"s32", Type::S32},     {"s64", Type::S64},   {"f16", Type::F16},
    {"f16x2", Type::F16x2}, {"bf16", Type::BF16}, {"bf16x2", Type::BF16x2},
    {"f32", Type::F32},     {"f64", Type::F64},   {"tf32", Type::TF32},
};
} // namespace

const char *ridge::emu::getTypeName(Type type) {
  for (const TypeName &entry : kTypeNames)
    if (entry.type == type)
      return entry.name;
  return "";
}

static std::optional<Type> lookupType(const std::string &name) {
  for (const TypeName &entry : kTypeNames)
    if (name == entry.name)
      return entry.type;
  return std::nullopt;
}

const PtxFunction *PtxModule::findFunction(const std::string &name) const {
  for (const auto &function : functions)
    if (function->name == name)
      return function.get();
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

namespace {
struct Token {
  enum Kind : uint8_t { Word, Punct, End } kind = End;
  std::string text;
  uint32_t line = 0;
};

/// Words are runs of [A-Za-z0-9_$%.:] (directives, opcodes with their
/// modifiers, registers, numbers, labels); everything else is one
/// punctuation character. Comments are dropped.
std::vector<Token> tokenize(const std::string &text) {
  std::vector<Token> tokens;
  uint32_t line = 1;
  size_t i = 0, n = text.size();
  auto isWordChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '$' || c == '%' || c == '.' || c == ':';
  };
  while (i < n) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n')
        ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      i += 2;
      while (i + 1 < n && !(text[i] == '*' && text[i + 1] == '/')) {
        if (text[i] == '\n')
          ++line;
        ++i;
      }
      i += 2;
      continue;
    }
    if (c == '"') { // .file names
      size_t start = i++;
      while (i < n && text[i] != '"' && text[i] != '\n')
        ++i;
      ++i;
      tokens.push_back({Token::Word, text.substr(start, i - start), line});
      continue;
    }
    if (isWordChar(c)) {
      size_t start = i;
      while (i < n && isWordChar(text[i])) {
        // A label definition "name:" ends the word at the colon, but
        // "shared::cta" keeps its double colon.
        if (text[i] == ':' && !(i + 1 < n && text[i + 1] == ':') &&
            !(i > start && text[i - 1] == ':'))
          break;
        ++i;
      }
      if (i > start) {
        tokens.push_back({Token::Word, text.substr(start, i - start), line});
        continue;
      }
    }
    tokens.push_back({Token::Punct, std::string(1, c), line});
    ++i;
  }
  tokens.push_back({Token::End, "", line});
  return tokens;
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

/// An operand before symbol and label resolution.
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

class Parser {
public:
  Parser(const std::string &text) : tokens(tokenize(text)) {}

  std::unique_ptr<PtxModule> run(std::string &error);

private:
  const Token &peek(size_t ahead = 0) const {
    return tokens[std::min(pos + ahead, tokens.size() - 1)];
  }
  const Token &next() {
    const Token &token = tokens[pos];
    if (pos + 1 < tokens.size())
      ++pos;
    return token;
  }
  bool consume(const char *text) {
    if (peek().kind != Token::End && peek().text == text) {
      next();
      return true;
    }
    return false;
  }
  bool fail(const std::string &message, uint32_t line = 0) {
    if (errorText.empty())
      errorText = std::to_string(line ? line : peek().line) + ": " + message;
    return false;
  }
  bool expect(const char *text) {
    if (consume(text))
      return true;
    return fail(std::string("expected '") + text + "', found '" + peek().text +
                "'");
  }

  bool parseTopLevel();
  bool parseVariable(Space space, bool isExtern, PtxFunction *function);
  bool parseInitializer(GlobalVar &var, Type elementType);
  bool parseFunction(bool isExtern);
  /// A kernel's parameters live in the launch's parameter buffer; a .func's
  /// parameters and return values (`isReturn`) are variables of its local
  /// frame, which a call binds to the caller's (inlineCalls).
  bool parseParamList(PtxFunction &function, bool isEntry, bool isReturn);
  bool parseCall(PtxFunction &function, Instruction &inst,
                 const std::string &opcodeText);
  bool parseBody(PtxFunction &function);
  bool parseRegDecl(PtxFunction &function);
  bool parseInstruction(PtxFunction &function);
  bool parseOperand(PtxFunction &function, RawOperand &raw);
  bool decode(PtxFunction &function, Instruction &inst,
              const std::string &opcodeText, std::vector<RawOperand> &operands);
  bool decodeMatrixOrAsyncCopy(PtxFunction &function, Instruction &inst,
                               const std::vector<std::string> &parts,
                               std::vector<RawOperand> &operands);
  bool parseUnsigned(const std::string &text, uint64_t &value);

  std::optional<uint32_t> lookupReg(const std::string &name) const {
    auto it = regScope.find(name);
    if (it == regScope.end() || it->second.empty())
      return std::nullopt;
    return it->second.back();
  }
  int32_t resolveSymbol(PtxFunction &function, const std::string &name);

  std::vector<Token> tokens;
  size_t pos = 0;
  std::string errorText;
  std::unique_ptr<PtxModule> module;

  // Per function.
  std::map<std::string, std::vector<uint32_t>> regScope;
  std::vector<std::vector<std::string>> scopes;
  /// Labels are scoped by { } blocks, as ptxas scopes them: inline assembly
  /// that nvcc inlines many times (CUTLASS's "LAB_WAIT:" loops) defines one
  /// label per copy. A branch resolves to the innermost enclosing block that
  /// defines its label, when that block closes.
  std::vector<std::map<std::string, uint32_t>> labels;
  std::vector<std::vector<std::pair<size_t, std::string>>>
      pendingLabels; // per block: inst, label
  bool resolveLabels(PtxFunction &function, bool outermost);
};
} // namespace

bool Parser::parseUnsigned(const std::string &text, uint64_t &value) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
    return fail("expected a number, found '" + text + "'");
  errno = 0;
  char *end = nullptr;
  value = std::strtoull(text.c_str(), &end, 0);
  if (errno || *end)
    return fail("bad number '" + text + "'");
  return true;
}

std::unique_ptr<PtxModule> Parser::run(std::string &error) {
  module = std::make_unique<PtxModule>();
  while (peek().kind != Token::End)
    if (!parseTopLevel()) {
      error = errorText;
      return nullptr;
    }
  if (!detail::inlineCalls(*module, error))
    return nullptr;
  return std::move(module);
}

bool Parser::parseTopLevel() {
  const Token &token = peek();
  if (token.kind != Token::Word)
    return fail("unexpected '" + token.text + "' at module scope");
  std::string word = token.text;
  if (word == ".version") {
    next();
    module->version = next().text;
    return true;
  }
  if (word == ".target") {
    next();
    module->target = next().text;
    while (consume(","))
      next();
    return true;
  }
  if (word == ".address_size") {
    next();
    uint64_t bits;
    if (!parseUnsigned(next().text, bits))
      return false;
    if (bits != 64)
      return fail(".address_size " + std::to_string(bits) +
                  " is not supported (64 only)");
    module->addressSize = 64;
    return true;
  }
  if (word == ".file" || word == ".loc" || word == ".section") {
    // Debug information: skipped up to the end of the line or section.
    uint32_t line = token.line;
    next();
    if (word == ".section") {
      while (peek().kind != Token::End && peek().text != "}")
        next();
      consume("}");
      return true;
    }
    while (peek().kind != Token::End && peek().line == line)
      next();
    return true;
  }
  bool isExtern = false;
  while (word == ".visible" || word == ".weak" || word == ".extern" ||
         word == ".common") {
    isExtern |= word == ".extern";
    next();
    word = peek().text;
  }
  if (word == ".entry" || word == ".func")
    return parseFunction(isExtern);
  if (word == ".global" || word == ".const" || word == ".shared") {
    next();
    Space space = word == ".global"  ? Space::Global
                  : word == ".const" ? Space::Const
                                     : Space::Shared;
    return parseVariable(space, isExtern, nullptr);
  }
  return fail("unsupported directive '" + word + "' at module scope");
}

/// `[.align N] .type name[[N]...] [= init];` after the state space.
bool Parser::parseVariable(Space space, bool isExtern, PtxFunction *function) {
  uint32_t align = 0;
  Type type = Type::None;
  uint32_t line = peek().line;
  while (peek().kind == Token::Word && peek().text[0] == '.') {
    std::string modifier = next().text;
    if (modifier == ".align") {
      uint64_t value;
      if (!parseUnsigned(next().text, value))
        return false;
      align = static_cast<uint32_t>(value);
    } else if (modifier == ".ptr" || modifier == ".global" ||
               modifier == ".v2" || modifier == ".v4") {
      // Attributes without effect on layout here (vector variables are
      // sized by their element count below).
      if (modifier == ".v2" || modifier == ".v4")
        return fail("vector variables are not supported", line);
    } else if (auto parsed = lookupType(modifier.substr(1))) {
      type = *parsed;
    } else {
      return fail("unsupported variable attribute '" + modifier + "'", line);
    }
  }
  if (type == Type::None || type == Type::Pred)
    return fail("variable without a data type", line);
  std::string name = next().text;
  uint64_t elementBytes = std::max(1u, getTypeBits(type) / 8);
  uint64_t count = 1;
  bool unsized = false;
  while (consume("[")) {
    if (consume("]")) {
      unsized = true;
      continue;
    }
    uint64_t dim;
    if (!parseUnsigned(next().text, dim) || !expect("]"))
      return false;
    count *= dim;
  }
  if (align == 0)
    align = static_cast<uint32_t>(elementBytes);
  GlobalVar var;
  var.name = name;
  var.space = space;
  var.size = unsized ? 0 : count * elementBytes;
  var.align = align;
  if (consume("=")) {
    if (!parseInitializer(var, type))
      return false;
    if (unsized)
      var.size = var.init.size();
  }
  if (!expect(";"))
    return false;
  (void)isExtern;

  if (!function) {
    if (space == Space::Shared)
      module->sharedVars.push_back(std::move(var));
    else
      module->globals.push_back(std::move(var));
    return true;
  }
  Symbol symbol;
  symbol.name = var.name;
  symbol.space = space;
  symbol.size = var.size;
  symbol.align = align;
  if (space == Space::Shared) {
    if (unsized) {
      symbol.dynamicShared = true;
    } else {
      function->staticShared =
          (function->staticShared + align - 1) / align * align;
      symbol.offset = function->staticShared;
      function->staticShared += var.size;
    }
  } else if (space == Space::Local) {
    function->localBytes = (function->localBytes + align - 1) / align * align;
    symbol.offset = function->localBytes;
    function->localBytes += var.size;
  } else {
    return fail("a function-scope ." +
                    std::string(space == Space::Global ? "global" : "const") +
                    " variable is not supported",
                line);
  }
  function->symbolIndex[symbol.name] =
      static_cast<int32_t>(function->symbols.size());
  function->symbols.push_back(symbol);
  return true;
}

bool Parser::parseInitializer(GlobalVar &var, Type elementType) {
  unsigned bytes = std::max(1u, getTypeBits(elementType) / 8);
  auto appendValue = [&](const std::string &text, bool negative) -> bool {
    uint64_t bits = 0;
    if (text.size() > 2 && text[0] == '0' &&
        (text[1] == 'f' || text[1] == 'F' || text[1] == 'd' ||
         text[1] == 'D')) {
      bits = std::strtoull(text.c_str() + 2, nullptr, 16);
    } else if (text.find('.') != std::string::npos) {
      double value = std::strtod(text.c_str(), nullptr);
      if (negative)
        value = -value;
      if (elementType == Type::F32) {
        float f = static_cast<float>(value);
        std::memcpy(&bits, &f, 4);
      } else {
        std::memcpy(&bits, &value, 8);
      }
      negative = false;
    } else if (!parseUnsigned(text, bits)) {
      return false;
    }
    if (negative)
      bits = ~bits + 1;
    for (unsigned i = 0; i < bytes; ++i)
      var.init.push_back(static_cast<uint8_t>(bits >> (8 * i)));
    return true;
  };
  std::vector<int> depth;
  if (!consume("{")) {
    bool negative = consume("-");
    return appendValue(next().text, negative);
  }
  int open = 1;
  while (open > 0) {
    if (consume("{")) {
      ++open;
      continue;
    }
    if (consume("}")) {
      --open;
      continue;
    }
    if (consume(","))
      continue;
    if (peek().kind == Token::End)
      return fail("unterminated initializer");
    if (peek().kind == Token::Word &&
        !std::isdigit(static_cast<unsigned char>(peek().text[0])))
      return fail("initializer '" + peek().text +
                  "' (addresses of symbols) is not supported");
    bool negative = consume("-");
    if (!appendValue(next().text, negative))
      return false;
  }
  if (var.size && var.init.size() < var.size)
    var.init.resize(var.size, 0);
  return true;
}

bool Parser::parseFunction(bool isExtern) {
  auto function = std::make_unique<PtxFunction>();
  function->isEntry = next().text == ".entry";
  function->line = peek().line;
  regScope.clear();
  scopes.assign(1, {});
  labels.assign(1, {});
  pendingLabels.assign(1, {});

  if (!function->isEntry && peek().text == "(" &&
      !parseParamList(*function, /*isEntry=*/false, /*isReturn=*/true))
    return false;
  function->name = next().text;
  if (peek().text == "(" &&
      !parseParamList(*function, function->isEntry, /*isReturn=*/false))
    return false;
  // Performance directives.
  while (peek().kind == Token::Word && peek().text[0] == '.') {
    std::string directive = next().text;
    auto readDims = [&](uint32_t *dims) -> bool {
      for (int d = 0; d < 3; ++d) {
        uint64_t value;
        if (!parseUnsigned(next().text, value))
          return false;
        dims[d] = static_cast<uint32_t>(value);
        if (!consume(","))
          break;
      }
      return true;
    };
    if (directive == ".maxntid") {
      if (!readDims(function->maxThreads))
        return false;
    } else if (directive == ".reqntid") {
      if (!readDims(function->reqThreads))
        return false;
    } else if (directive == ".minnctapersm" || directive == ".maxnreg" ||
               directive == ".maxnctapersm" || directive == ".maxclusterrank") {
      next();
    } else if (directive == ".noreturn") {
    } else if (directive == ".reqnctapercluster" ||
               directive == ".explicitcluster") {
      return fail("thread-block clusters (" + directive +
                  ") are not supported");
    } else if (directive == ".pragma") {
      next();
      expect(";");
    } else {
      return fail("unsupported function directive '" + directive + "'");
    }
  }
  if (consume(";")) // A declaration (prototype).
    return true;
  if (isExtern)
    return fail("an .extern function with a body");
  if (!expect("{") || !parseBody(*function))
    return false;
  module->functions.push_back(std::move(function));
  return true;
}

bool Parser::parseParamList(PtxFunction &function, bool isEntry,
                            bool isReturn) {
  if (!expect("("))
    return false;
  if (consume(")"))
    return true;
  do {
    if (!expect(".param") && !consume(".reg"))
      return false;
    uint32_t align = 0;
    Type type = Type::None;
    while (peek().kind == Token::Word && peek().text[0] == '.') {
      std::string modifier = next().text;
      if (modifier == ".align") {
        uint64_t value;
        if (!parseUnsigned(next().text, value))
          return false;
        align = static_cast<uint32_t>(value);
      } else if (modifier == ".ptr" || modifier == ".global" ||
                 modifier == ".shared" || modifier == ".const" ||
                 modifier == ".local") {
      } else if (auto parsed = lookupType(modifier.substr(1))) {
        type = *parsed;
      } else {
        return fail("unsupported parameter attribute '" + modifier + "'");
      }
    }
    Param param;
    param.name = next().text;
    uint64_t elementBytes = std::max(1u, getTypeBits(type) / 8);
    uint64_t count = 1;
    while (consume("[")) {
      uint64_t dim;
      if (!parseUnsigned(next().text, dim) || !expect("]"))
        return false;
      count *= dim;
    }
    param.size = elementBytes * count;
    param.align = align ? align : static_cast<uint32_t>(elementBytes);
    Symbol symbol;
    symbol.name = param.name;
    symbol.size = param.size;
    symbol.align = param.align;
    if (isEntry) {
      function.paramBytes =
          (function.paramBytes + param.align - 1) / param.align * param.align;
      param.offset = function.paramBytes;
      function.paramBytes += param.size;
      symbol.space = Space::Param;
      symbol.offset = param.offset;
    } else {
      function.localBytes =
          (function.localBytes + param.align - 1) / param.align * param.align;
      symbol.space = Space::Local;
      symbol.offset = function.localBytes;
      function.localBytes += param.size;
    }
    int32_t index = static_cast<int32_t>(function.symbols.size());
    function.symbolIndex[symbol.name] = index;
    function.symbols.push_back(symbol);
    if (isReturn) {
      function.returnSymbols.push_back(index);
      continue;
    }
    if (!isEntry)
      function.paramSymbols.push_back(index);
    function.params.push_back(param);
  } while (consume(","));
  return expect(")");
}

bool Parser::parseRegDecl(PtxFunction &function) {
  // After ".reg": [.vN] .type name[<N>] {, name[<N>]} ;
  Type type = Type::None;
  while (peek().kind == Token::Word && peek().text[0] == '.') {
    std::string modifier = next().text;
    auto parsed = lookupType(modifier.substr(1));
    if (!parsed)
      return fail("unsupported register attribute '" + modifier + "'");
    type = *parsed;
  }
  if (type == Type::None)
    return fail(".reg without a type");
  if (type == Type::B128)
    return fail(".b128 registers are not supported");
  auto declare = [&](const std::string &name) {
    uint32_t index = function.numRegs++;
    function.regNames.push_back(name);
    regScope[name].push_back(index);
    scopes.back().push_back(name);
  };
  do {
    // Register names are identifiers; '%' is only a convention (inline
    // assembly declares "tmp").
    const Token &token = next();
    std::string name = token.text;
    if (token.kind != Token::Word || name.empty() ||
        std::isdigit(static_cast<unsigned char>(name[0])) || name[0] == '.')
      return fail("expected a register name, found '" + name + "'");
    if (consume("<")) {
      uint64_t count;
      if (!parseUnsigned(next().text, count) || !expect(">"))
        return false;
      if (count > (1u << 20))
        return fail("too many registers: " + name + "<" +
                    std::to_string(count) + ">");
      for (uint64_t i = 0; i < count; ++i)
        declare(name + std::to_string(i));
    } else {
      declare(name);
    }
  } while (consume(","));
  return expect(";");
}

int32_t Parser::resolveSymbol(PtxFunction &function, const std::string &name) {
  auto it = function.symbolIndex.find(name);
  if (it != function.symbolIndex.end())
    return it->second;
  Symbol symbol;
  symbol.name = name;
  for (size_t i = 0; i < module->globals.size(); ++i)
    if (module->globals[i].name == name) {
      symbol.space = module->globals[i].space;
      symbol.size = module->globals[i].size;
      symbol.align = module->globals[i].align;
      symbol.global = static_cast<int32_t>(i);
      function.symbolIndex[name] =
          static_cast<int32_t>(function.symbols.size());
      function.symbols.push_back(symbol);
      return function.symbolIndex[name];
    }
  for (const GlobalVar &var : module->sharedVars)
    if (var.name == name) {
      symbol.space = Space::Shared;
      symbol.size = var.size;
      symbol.align = var.align;
      if (var.size == 0) {
        symbol.dynamicShared = true;
      } else {
        function.staticShared =
            (function.staticShared + var.align - 1) / var.align * var.align;
        symbol.offset = function.staticShared;
        function.staticShared += var.size;
      }
      function.symbolIndex[name] =
          static_cast<int32_t>(function.symbols.size());
      function.symbols.push_back(symbol);
      return function.symbolIndex[name];
    }
  return -1;
}

bool Parser::parseBody(PtxFunction &function) {
  while (true) {
    const Token &token = peek();
    if (token.kind == Token::End)
      return fail("unterminated body of '" + function.name + "'");
    if (token.text == "}") {
      next();
      if (scopes.size() == 1)
        break;
      for (const std::string &name : scopes.back())
        regScope[name].pop_back();
      scopes.pop_back();
      if (!resolveLabels(function, false))
        return false;
      continue;
    }
    if (token.text == "{") {
      next();
      scopes.emplace_back();
      labels.emplace_back();
      pendingLabels.emplace_back();
      continue;
    }
    if (token.kind == Token::Word && token.text == ".reg") {
      next();
      if (!parseRegDecl(function))
        return false;
      continue;
    }
    if (token.kind == Token::Word &&
        (token.text == ".local" || token.text == ".shared")) {
      next();
      if (!parseVariable(token.text == ".local" ? Space::Local : Space::Shared,
                         false, &function))
        return false;
      continue;
    }
    if (token.kind == Token::Word &&
        (token.text == ".loc" || token.text == ".pragma")) {
      uint32_t line = token.line;
      next();
      while (peek().kind != Token::End && peek().line == line &&
             peek().text != ";")
        next();
      consume(";");
      continue;
    }
    if (token.kind == Token::Word && token.text == ".param") {
      // A call sequence's argument or return variable: per thread, in the
      // function's local frame.
      next();
      if (!parseVariable(Space::Local, false, &function))
        return false;
      continue;
    }
    if (token.kind == Token::Word && token.text[0] == '.')
      return fail("unsupported directive '" + token.text + "' in '" +
                  function.name + "'");
    // A label?
    if (token.kind == Token::Word && peek(1).text == ":") {
      labels.back()[token.text] = static_cast<uint32_t>(function.code.size());
      next();
      next();
      continue;
    }
    if (!parseInstruction(function))
      return false;
  }
  if (!resolveLabels(function, true))
    return false;
  // A body must not fall off its end.
  Instruction ret;
  ret.opcode = Opcode::Ret;
  ret.text = "ret";
  ret.line = peek().line;
  function.code.push_back(ret);
  return true;
}

bool Parser::resolveLabels(PtxFunction &function, bool outermost) {
  std::vector<std::pair<size_t, std::string>> unresolved;
  for (auto &[index, name] : pendingLabels.back()) {
    auto it = labels.back().find(name);
    Instruction &inst = function.code[index];
    if (it == labels.back().end()) {
      if (outermost)
        return fail("branch to unknown label '" + name + "'", inst.line);
      unresolved.emplace_back(index, name);
      continue;
    }
    for (Operand &operand : inst.operands)
      if (operand.kind == OperandKind::Label && operand.imm < 0)
        operand.imm = it->second;
  }
  if (outermost)
    return true;
  labels.pop_back();
  pendingLabels.pop_back();
  pendingLabels.back().insert(pendingLabels.back().end(), unresolved.begin(),
                              unresolved.end());
  return true;
}

bool Parser::parseOperand(PtxFunction &function, RawOperand &raw) {
  Operand &op = raw.operand;
  if (consume("[")) {
    op.kind = OperandKind::Address;
    if (peek().kind != Token::Word)
      return fail("bad address");
    std::string base = next().text;
    if (base[0] == '%') {
      auto reg = lookupReg(base);
      if (!reg)
        return fail("unknown register '" + base + "'");
      op.reg = *reg;
    } else if (std::isdigit(static_cast<unsigned char>(base[0]))) {
      uint64_t value;
      if (!parseUnsigned(base, value))
        return false;
      op.imm = static_cast<int64_t>(value);
    } else {
      raw.name = base;
      op.symbol = resolveSymbol(function, base);
      if (op.symbol < 0)
        return fail("unknown symbol '" + base + "'");
    }
    if (peek().text == "+" || peek().text == "-") {
      bool negative = next().text == "-";
      if (consume("-"))
        negative = !negative;
      uint64_t value;
      if (!parseUnsigned(next().text, value))
        return false;
      op.imm +=
          negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
    }
    if (consume(",")) {
      RawOperand coordinates;
      if (peek().text != "{" || !parseOperand(function, coordinates))
        return fail("expected tensor coordinates '{...}'");
      raw.coordinates = coordinates.operand;
    }
    return expect("]");
  }
  if (consume("{")) {
    op.kind = OperandKind::Vector;
    do {
      bool negative = consume("-");
      std::string name = next().text;
      if (op.count == 8) {
        // wgmma's accumulators: the elements past the eighth are kept
        // aside; decodeHopper refuses them for other instructions.
        auto reg = lookupReg(name);
        if (!reg || negative)
          return fail("unknown register '" + name + "' in a vector operand");
        raw.extraRegs.push_back(*reg);
        continue;
      }
      if (name == "_") {
        op.regs[op.count++] = kNoReg;
        continue;
      }
      if (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0]))) {
        // An immediate element ({%r1, 0f00000000}): raw bits.
        uint64_t bits = 0;
        bool hexFloat = name.size() > 2 && name[0] == '0' &&
                        (name[1] == 'f' || name[1] == 'F' || name[1] == 'd' ||
                         name[1] == 'D');
        if (hexFloat) {
          char *end = nullptr;
          bits = std::strtoull(name.c_str() + 2, &end, 16);
          if (*end)
            return fail("bad float literal '" + name + "'");
          if (negative)
            bits ^= (name[1] == 'f' || name[1] == 'F') ? 0x80000000ull
                                                       : 0x8000000000000000ull;
        } else {
          if (!parseUnsigned(name, bits))
            return false;
          if (negative)
            bits = ~bits + 1;
        }
        op.immMask |= 1u << op.count;
        op.vectorImms[op.count] = bits;
        op.regs[op.count++] = kNoReg;
        continue;
      }
      auto reg = lookupReg(name);
      if (!reg || negative)
        return fail("unknown register '" + name + "' in a vector operand");
      op.regs[op.count++] = *reg;
    } while (consume(","));
    return expect("}");
  }
  if (consume("!")) {
    op.negate = true;
  }
  bool negative = false;
  if (peek().text == "-") {
    next();
    negative = true;
  }
  if (peek().kind != Token::Word)
    return fail("expected an operand, found '" + peek().text + "'");
  std::string word = next().text;
  if (word == "_") {
    op.kind = OperandKind::Sink;
    return true;
  }
  if (word[0] == '%') {
    if (auto reg = lookupReg(word)) {
      op.kind = OperandKind::Reg;
      op.reg = *reg;
      if (negative)
        return fail("negated register operand '-" + word + "'");
      // A register pair "%p|%q" (setp's two results).
      if (consume("|")) {
        std::string second = next().text;
        auto reg2 = lookupReg(second);
        if (!reg2)
          return fail("unknown register '" + second + "'");
        op.kind = OperandKind::Vector;
        op.count = 2;
        op.regs[0] = *reg;
        op.regs[1] = *reg2;
      }
      return true;
    }
    struct SpecialName {
      const char *name;
      SpecialReg reg;
    };
    static const SpecialName kSpecials[] = {
        {"%tid", SpecialReg::Tid},
        {"%ntid", SpecialReg::Ntid},
        {"%ctaid", SpecialReg::Ctaid},
        {"%nctaid", SpecialReg::Nctaid},
        {"%laneid", SpecialReg::LaneId},
        {"%warpid", SpecialReg::WarpId},
        {"%nwarpid", SpecialReg::NWarpId},
        {"%smid", SpecialReg::SmId},
        {"%lanemask_lt", SpecialReg::LaneMaskLt},
        {"%lanemask_le", SpecialReg::LaneMaskLe},
        {"%lanemask_eq", SpecialReg::LaneMaskEq},
        {"%lanemask_ge", SpecialReg::LaneMaskGe},
        {"%lanemask_gt", SpecialReg::LaneMaskGt},
        {"%clock", SpecialReg::Clock},
        {"%clock64", SpecialReg::Clock64},
        {"%globaltimer", SpecialReg::GlobalTimer},
        {"%dynamic_smem_size", SpecialReg::DynamicSmemSize},
        {"%total_smem_size", SpecialReg::TotalSmemSize},
    };
    std::string base = word, suffix;
    size_t dot = word.find('.');
    if (dot != std::string::npos) {
      base = word.substr(0, dot);
      suffix = word.substr(dot + 1);
    }
    for (const SpecialName &special : kSpecials)
      if (base == special.name) {
        op.kind = OperandKind::Special;
        op.special = special.reg;
        if (suffix == "x" || suffix.empty())
          op.dim = 0;
        else if (suffix == "y")
          op.dim = 1;
        else if (suffix == "z")
          op.dim = 2;
        else
          return fail("unknown special register '" + word + "'");
        return true;
      }
    return fail("unknown register '" + word + "'");
  }
  if (std::isdigit(static_cast<unsigned char>(word[0]))) {
    op.kind = OperandKind::Imm;
    if (word.size() > 2 && word[0] == '0' &&
        (word[1] == 'f' || word[1] == 'F' || word[1] == 'd' ||
         word[1] == 'D')) {
      char *end = nullptr;
      uint64_t bits = std::strtoull(word.c_str() + 2, &end, 16);
      if (*end || word.size() != (word[1] == 'f' || word[1] == 'F' ? 10u : 18u))
        return fail("bad float literal '" + word + "'");
      if (negative)
        bits ^= (word[1] == 'f' || word[1] == 'F') ? 0x80000000ull
                                                   : 0x8000000000000000ull;
      op.imm = static_cast<int64_t>(bits);
      return true;
    }
    if (word.find('.') != std::string::npos ||
        word.find_first_of("eE") != std::string::npos) {
      if (word.find('x') == std::string::npos &&
          word.find('X') == std::string::npos) {
        raw.decimalFloat = true;
        raw.floatValue = std::strtod(word.c_str(), nullptr);
        if (negative)
          raw.floatValue = -raw.floatValue;
        return true;
      }
    }
    std::string digits = word;
    if (!digits.empty() && (digits.back() == 'U' || digits.back() == 'u'))
      digits.pop_back();
    uint64_t value;
    if (!parseUnsigned(digits, value))
      return false;
    op.imm =
        negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
    return true;
  }
  if (negative)
    return fail("bad operand '-" + word + "'");
  if (auto reg = lookupReg(word)) {
    op.kind = OperandKind::Reg;
    op.reg = *reg;
    return true;
  }
  // A symbol (its address) or a label.
  raw.name = word;
  op.symbol = resolveSymbol(function, word);
  op.kind = op.symbol >= 0 ? OperandKind::Symbol : OperandKind::Label;
  op.imm = -1;
  return true;
}

bool Parser::parseInstruction(PtxFunction &function) {
  Instruction inst;
  inst.line = peek().line;
  if (consume("@")) {
    if (consume("!"))
      inst.guardNegate = true;
    std::string name = next().text;
    auto reg = lookupReg(name);
    if (!reg)
      return fail("unknown predicate '" + name + "'");
    inst.guard = *reg;
  }
  if (peek().kind != Token::Word)
    return fail("expected an instruction, found '" + peek().text + "'");
  std::string opcodeText = next().text;
  std::vector<RawOperand> operands;
  if (opcodeText == "call" || opcodeText.rfind("call.", 0) == 0)
    return parseCall(function, inst, opcodeText);
  if (peek().text != ";") {
    do {
      RawOperand raw;
      if (!parseOperand(function, raw))
        return false;
      std::optional<Operand> coordinates = raw.coordinates;
      operands.push_back(raw);
      if (coordinates) {
        RawOperand vector;
        vector.operand = *coordinates;
        operands.push_back(vector);
      }
    } while (consume(","));
  }
  if (!expect(";"))
    return false;
  if (!decode(function, inst, opcodeText, operands))
    return false;
  function.code.push_back(std::move(inst));
  return true;
}

/// `call[.uni] [(ret, ...),] name [, (arg, ...)];` with `.param` variables
/// as returns and arguments. The callee is resolved when the module is
/// complete (inlineCalls); indirect calls through a register are refused.
bool Parser::parseCall(PtxFunction &function, Instruction &inst,
                       const std::string &opcodeText) {
  inst.opcode = Opcode::Call;
  inst.text = opcodeText;
  if (opcodeText != "call" && opcodeText != "call.uni")
    return fail("unsupported call form '" + opcodeText + "' in '" +
                function.name + "'");
  auto parseList = [&](unsigned &count) -> bool {
    if (!expect("("))
      return false;
    if (consume(")"))
      return true;
    do {
      std::string name = next().text;
      int32_t symbol = resolveSymbol(function, name);
      if (symbol < 0 || function.symbols[symbol].space != Space::Local)
        return fail("call argument '" + name +
                    "' is not a .param variable of the call sequence");
      Operand operand;
      operand.kind = OperandKind::Symbol;
      operand.symbol = symbol;
      inst.operands.push_back(operand);
      ++count;
    } while (consume(","));
    return expect(")");
  };
  unsigned numReturns = 0, numArgs = 0;
  if (peek().text == "(") {
    if (!parseList(numReturns) || !expect(","))
      return false;
  }
  const Token &callee = next();
  if (callee.kind != Token::Word || callee.text.empty() ||
      callee.text[0] == '%')
    return fail("indirect calls (through '" + callee.text +
                "') are not supported");
  inst.callee = callee.text;
  inst.mode = static_cast<uint8_t>(numReturns);
  if (consume(",")) {
    if (peek().text != "(")
      return fail("indirect calls with a prototype are not supported");
    if (!parseList(numArgs))
      return false;
    if (peek().text == ",")
      return fail("indirect calls with a prototype are not supported");
  }
  if (!expect(";"))
    return false;
  function.hasCalls = true;
  function.code.push_back(std::move(inst));
  return true;
}

//===----------------------------------------------------------------------===//
// Decoder
//===----------------------------------------------------------------------===//

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
    {"cvt", Opcode::Cvt, 2, 2},
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

bool Parser::decode(PtxFunction &function, Instruction &inst,
                    const std::string &opcodeText,
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
        return fail("bad operand '" + raw.name + "' of '" + opcodeText + "'",
                    inst.line);
      decoded.push_back(raw.operand);
      extraRegs.push_back(raw.extraRegs);
    }
    std::string error;
    if (!detail::decodeHopper(inst, parts, std::move(decoded), extraRegs,
                              error))
      return fail(error + " (function '" + function.name + "')", inst.line);
    return true;
  }
  for (const RawOperand &raw : operands)
    if (!raw.extraRegs.empty() || raw.coordinates)
      return fail("unsupported operand form in '" + opcodeText +
                      "' (function '" + function.name + "')",
                  inst.line);
  const OpcodeName *entry = nullptr;
  for (const OpcodeName &candidate : kOpcodes)
    if (parts[0] == candidate.name)
      entry = &candidate;
  auto unsupported = [&](const std::string &what) {
    return fail("unsupported " + what + " in '" + opcodeText + "' (function '" +
                    function.name + "')",
                inst.line);
  };
  if (!entry)
    return fail("unsupported instruction '" + opcodeText + "' in '" +
                    function.name + "'",
                inst.line);
  inst.opcode = entry->opcode;
  inst.carryIn = parts[0] == "addc" || parts[0] == "subc" || parts[0] == "madc";
  if (parts[0] == "bra")
    inst.uni = false;
  if (inst.opcode == Opcode::CpAsync || inst.opcode == Opcode::Ldmatrix ||
      inst.opcode == Opcode::Mma || inst.opcode == Opcode::Stmatrix ||
      inst.opcode == Opcode::WmmaLoad)
    return decodeMatrixOrAsyncCopy(function, inst, parts, operands);

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
    if (inst.opcode == Opcode::Membar &&
        (m == "gl" || m == "sys" || m == "cta" || m == "sc" || m == "acq_rel"))
      continue;
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
                    " operands, found " + std::to_string(count),
                inst.line);
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
        return fail("unknown symbol '" + raw.name + "'", inst.line);
      pendingLabels.back().emplace_back(function.code.size(), raw.name);
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
      return fail("'" + opcodeText + "': the destination must be a register",
                  inst.line);
  }
  if ((inst.opcode == Opcode::Ld &&
       inst.operands[1].kind != OperandKind::Address) ||
      (inst.opcode == Opcode::St &&
       inst.operands[0].kind != OperandKind::Address) ||
      ((inst.opcode == Opcode::Atom) &&
       inst.operands[1].kind != OperandKind::Address) ||
      (inst.opcode == Opcode::Red &&
       inst.operands[0].kind != OperandKind::Address))
    return fail("'" + opcodeText + "' needs an address operand", inst.line);
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
                      "' addresses no parameter of it",
                  inst.line);
  }
  if ((inst.opcode == Opcode::Ld || inst.opcode == Opcode::St) &&
      inst.vector > 1) {
    const Operand &data = inst.operands[inst.opcode == Opcode::Ld ? 0 : 1];
    if (data.kind != OperandKind::Vector || data.count != inst.vector)
      return fail("'" + opcodeText + "' needs a vector of " +
                      std::to_string(inst.vector) + " registers",
                  inst.line);
  }
  if (inst.type == Type::None && inst.opcode != Opcode::Bra &&
      inst.opcode != Opcode::Bar && inst.opcode != Opcode::Ret &&
      inst.opcode != Opcode::Exit && inst.opcode != Opcode::Membar)
    return fail("'" + opcodeText + "' has no type", inst.line);
  return true;
}

/// cp.async, ldmatrix, stmatrix, mma.sync and wmma name a shape, layouts and
/// up to four element types in their modifiers, so they are decoded here
/// rather than by decode's one-type loop; WarpMatrix.cpp says which shapes
/// and types the executor implements, so a form it cannot run fails here.
bool Parser::decodeMatrixOrAsyncCopy(PtxFunction &function, Instruction &inst,
                                     const std::vector<std::string> &parts,
                                     std::vector<RawOperand> &operands) {
  auto unsupported = [&](const std::string &what) {
    return fail("unsupported " + what + " in '" + inst.text + "' (function '" +
                    function.name + "')",
                inst.line);
  };
  auto malformed = [&](const std::string &what) {
    return fail("'" + inst.text + "' " + what, inst.line);
  };
  MatrixOperands &matrix = inst.matrix;
  size_t first = 1;
  if (inst.opcode == Opcode::CpAsync) {
    std::string kind = parts.size() > 2 ? parts[2] : "";
    if (parts.size() < 3 || parts[1] != "async" || kind == "bulk" ||
        kind == "mbarrier")
      return fail("unsupported instruction '" + inst.text + "' in '" +
                      function.name + "'",
                  inst.line);
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
                      function.name + "'",
                  inst.line);
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

std::unique_ptr<PtxModule> ridge::emu::parsePtx(const std::string &text,
                                                std::string &error) {
  Parser parser(text);
  return parser.run(error);
}
