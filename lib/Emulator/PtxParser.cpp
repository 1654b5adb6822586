//===- PtxParser.cpp - PTX text -> decoded module -------------------------===//
//
// A recursive-descent reader for the PTX that LLVM's NVPTX backend and nvcc
// emit: module directives, module-scope variables, .entry/.func definitions
// with their parameter, register, shared and local declarations, labels and
// instructions, whose operands it reads and resolves to registers, symbols
// and labels. PtxDecoder.cpp decodes each instruction's opcode, modifiers
// and operand forms, once. Anything either does not know (a directive, an
// opcode, a modifier) is an error that names it and its line, so no
// instruction is ever skipped.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Emulator/Ptx.h"

#include "InlineCalls.h"
#include "PtxDecoder.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

using namespace ridge::emu;
using namespace ridge::emu::detail;

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
  case Type::E4M3x2:
  case Type::E5M2x2:
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
    {"pred", Type::Pred},     {"b8", Type::B8},
    {"b16", Type::B16},       {"b32", Type::B32},
    {"b64", Type::B64},       {"b128", Type::B128},
    {"u8", Type::U8},         {"u16", Type::U16},
    {"u32", Type::U32},       {"u64", Type::U64},
    {"s8", Type::S8},         {"s16", Type::S16},
    {"s32", Type::S32},       {"s64", Type::S64},
    {"f16", Type::F16},       {"f16x2", Type::F16x2},
    {"bf16", Type::BF16},     {"bf16x2", Type::BF16x2},
    {"f32", Type::F32},       {"f64", Type::F64},
    {"tf32", Type::TF32},     {"e4m3x2", Type::E4M3x2},
    {"e5m2x2", Type::E5M2x2},
};
} // namespace

const char *ridge::emu::getTypeName(Type type) {
  for (const TypeName &entry : kTypeNames)
    if (entry.type == type)
      return entry.name;
  return "";
}

std::optional<Type> detail::lookupType(const std::string &name) {
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
    bool pointer = false;
    Type type = Type::None;
    while (peek().kind == Token::Word && peek().text[0] == '.') {
      std::string modifier = next().text;
      if (modifier == ".align") {
        uint64_t value;
        if (!parseUnsigned(next().text, value))
          return false;
        // After .ptr, .align is the pointee's alignment, not the
        // parameter's (`.param .u64 .ptr .align 1 p`).
        if (!pointer)
          align = static_cast<uint32_t>(value);
      } else if (modifier == ".ptr") {
        pointer = true;
      } else if (modifier == ".global" || modifier == ".shared" ||
                 modifier == ".const" || modifier == ".local") {
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
  std::vector<std::string> branchTargets;
  std::string error;
  if (!decodeInstruction(function, inst, opcodeText, operands, branchTargets,
                         error))
    return fail(error, inst.line);
  for (std::string &label : branchTargets)
    pendingLabels.back().emplace_back(function.code.size(), std::move(label));
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

std::unique_ptr<PtxModule> ridge::emu::parsePtx(const std::string &text,
                                                std::string &error) {
  Parser parser(text);
  return parser.run(error);
}
