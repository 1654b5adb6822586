//===- ridge-emu.cpp - Run one PTX kernel on the emulator -----------------===//
//
//   ridge-emu FILE.ptx --kernel NAME --grid X[,Y[,Z]] --block X[,Y[,Z]]
//             [--shared BYTES] [--buffer NAME:TYPE:COUNT[:INIT]]...
//             [--arg SPEC]... [--print NAME[:FIRST[:COUNT]]]...
//             [--write NAME=PATH]... [--stats[=text|json]]
//             [--stats-file=PATH]
//
// Buffers are device allocations of COUNT elements of TYPE (f16 bf16 f32 f64
// s8 u8 s16 u16 s32 u32 s64 u64), initialized by INIT: zero (default), iota
// (0, 1, 2, ...), ones, rand[=SEED] (uniform in [-1, 1), or [0, 100) for
// integers), values=A,B,... (repeated to COUNT) or file=PATH (raw bytes).
// Each --arg is one kernel parameter, in order: buf:NAME[+BYTES] (a device
// pointer), TYPE:VALUE (a scalar), or memref:NAME:D0xD1x... (a row-major
// memref descriptor as MLIR passes it: allocated and aligned pointer,
// offset 0, sizes, strides), or tmap:NAME:TYPE:DIMS:BOX[:OPTION]... (a
// 128-byte TMA tensor map over buffer NAME, as cuTensorMapEncodeTiled makes
// it, passed by value like a __grid_constant__ CUtensorMap). DIMS and BOX
// list the global and box sizes innermost (contiguous) dimension first, as
// cuTensorMapEncodeTiled does: tmap:a:bf16:64x128:64x32:swizzle128 is a
// row-major 128 x 64 bf16 matrix read in boxes of 32 rows of 64. The global
// strides are dense unless strides=S1xS2... (bytes, dimensions 1 and up)
// says otherwise; the options are swizzle32, swizzle64, swizzle128,
// estrides=E0xE1... (element strides) and nanfill (out-of-bounds elements
// read as NaN instead of zero). After the launch, --print writes the elements
// as "NAME[i] = VALUE" lines, --write a buffer's raw bytes to PATH, and
// --stats the launch's counters (docs/emulator.md, "Counters"): as a table,
// or with --stats=json as the counters' JSON document. --stats-file=PATH
// writes that JSON to PATH instead of standard output.
//
// Works on any PTX that the emulator implements, not only Ridgeline's: it is
// how lit tests run nvcc's and LLVM's PTX without a GPU.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Emulator/Emulator.h"

#include "ridgeline/Emulator/FloatFormats.h"
#include "ridgeline/Emulator/TensorMap.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace ridge::emu;

namespace {

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "ridge-emu: error: %s\n", message.c_str());
  std::exit(1);
}

std::vector<std::string> split(const std::string &text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream stream(text);
  while (std::getline(stream, part, separator))
    parts.push_back(part);
  if (!text.empty() && text.back() == separator)
    parts.push_back("");
  return parts;
}

uint64_t parseCount(const std::string &text, const char *what) {
  errno = 0;
  char *end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 0);
  if (text.empty() || errno || *end || text[0] == '-')
    die(std::string("bad ") + what + " '" + text + "'");
  return value;
}

Dim3 parseDims(const std::string &text, const char *what) {
  std::vector<std::string> parts = split(text, ',');
  if (parts.empty() || parts.size() > 3)
    die(std::string("bad ") + what + " '" + text + "' (X[,Y[,Z]])");
  Dim3 dims;
  uint32_t *fields[3] = {&dims.x, &dims.y, &dims.z};
  for (size_t i = 0; i < parts.size(); ++i) {
    uint64_t value = parseCount(parts[i], what);
    if (value == 0 || value > 0xffffffffull)
      die(std::string("bad ") + what + " '" + text + "'");
    *fields[i] = static_cast<uint32_t>(value);
  }
  return dims;
}

struct ElementType {
  Type type;
  unsigned bytes;
};

ElementType parseElementType(const std::string &name) {
  static const std::map<std::string, ElementType> kTypes = {
      {"f16", {Type::F16, 2}}, {"bf16", {Type::BF16, 2}},
      {"f32", {Type::F32, 4}}, {"f64", {Type::F64, 8}},
      {"s8", {Type::S8, 1}},   {"u8", {Type::U8, 1}},
      {"s16", {Type::S16, 2}}, {"u16", {Type::U16, 2}},
      {"s32", {Type::S32, 4}}, {"u32", {Type::U32, 4}},
      {"s64", {Type::S64, 8}}, {"u64", {Type::U64, 8}},
  };
  auto it = kTypes.find(name);
  if (it == kTypes.end())
    die("unknown element type '" + name + "'");
  return it->second;
}

/// The bits of `value` (a number as text) in `type`.
uint64_t encode(Type type, double value) {
  switch (type) {
  case Type::F16:
    return f32ToHalf(static_cast<float>(value));
  case Type::BF16:
    return f32ToBf16(static_cast<float>(value));
  case Type::F32:
    return f32ToBits(static_cast<float>(value));
  case Type::F64:
    return f64ToBits(value);
  default:
    return static_cast<uint64_t>(static_cast<int64_t>(value));
  }
}

uint64_t parseScalar(Type type, const std::string &text) {
  errno = 0;
  char *end = nullptr;
  if (isFloatType(type)) {
    double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end)
      die("bad number '" + text + "'");
    return encode(type, value);
  }
  long long value = std::strtoll(text.c_str(), &end, 0);
  if (text.empty() || *end || errno) {
    errno = 0;
    unsigned long long unsignedValue = std::strtoull(text.c_str(), &end, 0);
    if (text.empty() || *end || errno)
      die("bad integer '" + text + "'");
    return unsignedValue;
  }
  return static_cast<uint64_t>(value);
}

std::string formatElement(Type type, uint64_t bits) {
  char text[64];
  switch (type) {
  case Type::F16:
    std::snprintf(text, sizeof(text), "%.9g",
                  halfToF32(static_cast<uint16_t>(bits)));
    break;
  case Type::BF16:
    std::snprintf(text, sizeof(text), "%.9g",
                  bf16ToF32(static_cast<uint16_t>(bits)));
    break;
  case Type::F32:
    std::snprintf(text, sizeof(text), "%.9g", bitsToF32(bits));
    break;
  case Type::F64:
    std::snprintf(text, sizeof(text), "%.17g", bitsToF64(bits));
    break;
  case Type::S8:
    std::snprintf(text, sizeof(text), "%d", static_cast<int8_t>(bits));
    break;
  case Type::S16:
    std::snprintf(text, sizeof(text), "%d", static_cast<int16_t>(bits));
    break;
  case Type::S32:
    std::snprintf(text, sizeof(text), "%d", static_cast<int32_t>(bits));
    break;
  case Type::S64:
    std::snprintf(text, sizeof(text), "%" PRId64, static_cast<int64_t>(bits));
    break;
  default:
    std::snprintf(text, sizeof(text), "%" PRIu64, bits);
    break;
  }
  return text;
}

struct Buffer {
  ElementType element;
  uint64_t count = 0;
  uint64_t address = 0;
};

/// The 128 bytes of the tensor map that `spec` (tmap:NAME:TYPE:DIMS:BOX
/// [:OPTION]...) describes.
template <typename Lookup>
std::vector<uint8_t> makeTensorMap(const std::string &spec,
                                   const std::string &rest, Lookup &lookup) {
  std::vector<std::string> parts = split(rest, ':');
  if (parts.size() < 4)
    die("bad --arg '" + spec + "' (tmap:NAME:TYPE:DIMS:BOX[:OPTION]...)");
  const Buffer &buffer = lookup(parts[0]);
  static const std::map<std::string, TensorDataType> kTypes = {
      {"u8", TensorDataType::UInt8},      {"s8", TensorDataType::UInt8},
      {"u16", TensorDataType::UInt16},    {"s16", TensorDataType::UInt16},
      {"u32", TensorDataType::UInt32},    {"s32", TensorDataType::Int32},
      {"u64", TensorDataType::UInt64},    {"s64", TensorDataType::Int64},
      {"f16", TensorDataType::Float16},   {"bf16", TensorDataType::BFloat16},
      {"f32", TensorDataType::Float32},   {"f64", TensorDataType::Float64},
      {"tf32", TensorDataType::TFloat32},
  };
  auto type = kTypes.find(parts[1]);
  if (type == kTypes.end())
    die("unknown tensor map element type '" + parts[1] + "'");
  auto list = [&](const std::string &text, const char *what) {
    std::vector<uint64_t> items;
    for (const std::string &item : split(text, 'x'))
      items.push_back(parseCount(item, what));
    return items;
  };
  std::vector<uint64_t> dims = list(parts[2], "tensor size");
  std::vector<uint64_t> box = list(parts[3], "box size");
  unsigned rank = static_cast<unsigned>(dims.size());
  if (box.size() != rank || rank < 1 || rank > 5)
    die("--arg '" + spec + "': DIMS and BOX need the same rank, 1 to 5");
  uint64_t strides[5] = {}, globalDim[5] = {};
  uint32_t boxDim[5] = {}, elementStrides[5] = {1, 1, 1, 1, 1};
  uint64_t stride = getTensorElementBytes(type->second);
  for (unsigned d = 0; d < rank; ++d) {
    globalDim[d] = dims[d];
    boxDim[d] = static_cast<uint32_t>(box[d]);
    stride *= dims[d];
    if (d + 1 < rank)
      strides[d] = stride;
  }
  TensorSwizzle swizzle = TensorSwizzle::None;
  unsigned oobFill = 0;
  for (size_t k = 4; k < parts.size(); ++k) {
    const std::string &option = parts[k];
    if (option == "swizzle32" || option == "swizzle64" ||
        option == "swizzle128") {
      swizzle = option == "swizzle32"   ? TensorSwizzle::B32
                : option == "swizzle64" ? TensorSwizzle::B64
                                        : TensorSwizzle::B128;
    } else if (option == "nanfill") {
      oobFill = 1;
    } else if (option.rfind("strides=", 0) == 0) {
      std::vector<uint64_t> given = list(option.substr(8), "stride");
      if (given.size() + 1 != rank)
        die("--arg '" + spec + "': strides= needs " + std::to_string(rank - 1) +
            " byte strides");
      for (unsigned d = 0; d + 1 < rank; ++d)
        strides[d] = given[d];
    } else if (option.rfind("estrides=", 0) == 0) {
      std::vector<uint64_t> given = list(option.substr(9), "element stride");
      if (given.size() != rank)
        die("--arg '" + spec + "': estrides= needs " + std::to_string(rank) +
            " element strides");
      for (unsigned d = 0; d < rank; ++d)
        elementStrides[d] = static_cast<uint32_t>(given[d]);
    } else {
      die("--arg '" + spec + "': unknown option '" + option + "'");
    }
  }
  // The map may describe less than the buffer, never more.
  uint64_t extent = getTensorElementBytes(type->second);
  for (unsigned d = 0; d < rank; ++d)
    extent += (globalDim[d] - 1) *
              (d == 0 ? getTensorElementBytes(type->second) : strides[d - 1]);
  if (extent > buffer.count * buffer.element.bytes)
    die("--arg '" + spec + "': the tensor spans " + std::to_string(extent) +
        " bytes, more than buffer '" + parts[0] + "' holds");
  std::vector<uint8_t> bytes(kTensorMapBytes);
  std::string error = encodeTiledTensorMap(
      bytes.data(), type->second, rank, buffer.address, globalDim, strides,
      boxDim, elementStrides, /*interleave=*/0, swizzle, /*l2Promotion=*/0,
      oobFill);
  if (!error.empty())
    die("--arg '" + spec + "': " + error);
  return bytes;
}

} // namespace

int main(int argc, char **argv) {
  std::string file, kernelName;
  Dim3 grid, block;
  bool haveGrid = false, haveBlock = false;
  std::string statsFormat, statsFile; // statsFormat "": no --stats
  uint64_t sharedBytes = 0;
  std::vector<std::string> bufferSpecs, argSpecs, printSpecs, writeSpecs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      size_t eq = arg.find('=');
      if (arg.rfind("--", 0) == 0 && eq != std::string::npos)
        return arg.substr(eq + 1);
      if (i + 1 >= argc)
        die("missing value of " + arg);
      return argv[++i];
    };
    std::string option = arg.substr(0, arg.find('='));
    if (option == "--kernel")
      kernelName = value();
    else if (option == "--grid")
      grid = parseDims(value(), "grid"), haveGrid = true;
    else if (option == "--block")
      block = parseDims(value(), "block"), haveBlock = true;
    else if (option == "--shared")
      sharedBytes = parseCount(value(), "shared memory size");
    else if (option == "--buffer")
      bufferSpecs.push_back(value());
    else if (option == "--arg")
      argSpecs.push_back(value());
    else if (option == "--print")
      printSpecs.push_back(value());
    else if (option == "--write")
      writeSpecs.push_back(value());
    else if (option == "--stats") {
      // A bare --stats takes no value: the next argument is not its.
      statsFormat = arg.find('=') == std::string::npos ? "text" : value();
      if (statsFormat != "text" && statsFormat != "json")
        die("bad --stats format '" + statsFormat + "' (text or json)");
    } else if (option == "--stats-file")
      statsFile = value();
    else if (option == "--help" || option == "-h") {
      std::printf("usage: ridge-emu FILE.ptx --kernel NAME --grid X[,Y[,Z]] "
                  "--block X[,Y[,Z]] [--shared BYTES] "
                  "[--buffer NAME:TYPE:COUNT[:INIT]]... [--arg SPEC]... "
                  "(SPEC: buf:NAME[+BYTES], TYPE:VALUE, memref:NAME:D0xD1..., "
                  "tmap:NAME:TYPE:DIMS:BOX[:swizzle32|swizzle64|swizzle128]"
                  "[:strides=S1x...][:estrides=E0x...][:nanfill], DIMS and "
                  "BOX innermost first) "
                  "[--print NAME[:FIRST[:COUNT]]]... [--write NAME=PATH]... "
                  "[--stats[=text|json]] [--stats-file=PATH]\n");
      return 0;
    } else if (!arg.empty() && arg[0] == '-')
      die("unknown option '" + arg + "'");
    else if (file.empty())
      file = arg;
    else
      die("more than one PTX file: '" + file + "' and '" + arg + "'");
  }
  if (file.empty())
    die("no PTX file (ridge-emu FILE.ptx --kernel NAME ...)");
  if (kernelName.empty() || !haveGrid || !haveBlock)
    die("--kernel, --grid and --block are required");

  std::ifstream stream(file, std::ios::binary);
  if (!stream)
    die("cannot read '" + file + "': " + std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(stream)),
                   std::istreambuf_iterator<char>());

  Device device;
  std::string error;
  LoadedModule *module = device.loadModule(text, error);
  if (!module)
    die(file + ":" + error);
  const PtxFunction *kernel = module->ptx->findFunction(kernelName);
  if (!kernel)
    die("no kernel '" + kernelName + "' in '" + file + "'");

  std::map<std::string, Buffer> buffers;
  for (const std::string &spec : bufferSpecs) {
    std::vector<std::string> parts = split(spec, ':');
    if (parts.size() < 3)
      die("bad --buffer '" + spec + "' (NAME:TYPE:COUNT[:INIT])");
    Buffer buffer;
    buffer.element = parseElementType(parts[1]);
    buffer.count = parseCount(parts[2], "element count");
    if (buffer.count > (uint64_t(1) << 32))
      die("buffer '" + parts[0] + "' is too large");
    uint64_t bytes = buffer.count * buffer.element.bytes;
    buffer.address = device.getMemory().allocate(bytes, parts[0]);
    if (!buffer.address)
      die("cannot allocate buffer '" + parts[0] + "'");
    auto *data = reinterpret_cast<uint8_t *>(buffer.address);
    std::memset(data, 0, bytes);
    std::string init = "zero";
    if (parts.size() > 3) {
      init = parts[3];
      for (size_t k = 4; k < parts.size(); ++k)
        init += ":" + parts[k];
    }
    Type type = buffer.element.type;
    auto store = [&](uint64_t index, uint64_t bits) {
      std::memcpy(data + index * buffer.element.bytes, &bits,
                  buffer.element.bytes);
    };
    if (init == "zero") {
    } else if (init == "iota" || init == "ones") {
      for (uint64_t k = 0; k < buffer.count; ++k)
        store(k, encode(type, init == "ones" ? 1.0 : static_cast<double>(k)));
    } else if (init.rfind("rand", 0) == 0) {
      uint64_t seed = init.size() > 5 && init[4] == '='
                          ? parseCount(init.substr(5), "seed")
                          : 1;
      std::mt19937_64 rng(seed);
      for (uint64_t k = 0; k < buffer.count; ++k) {
        double unit = (rng() >> 11) * (1.0 / 9007199254740992.0);
        store(k, encode(type, isFloatType(type) ? unit * 2 - 1
                                                : std::floor(unit * 100)));
      }
    } else if (init.rfind("values=", 0) == 0) {
      std::vector<std::string> values = split(init.substr(7), ',');
      if (values.empty())
        die("no values in '" + spec + "'");
      for (uint64_t k = 0; k < buffer.count; ++k)
        store(k, parseScalar(type, values[k % values.size()]));
    } else if (init.rfind("file=", 0) == 0) {
      std::string path = init.substr(5);
      std::ifstream input(path, std::ios::binary);
      if (!input)
        die("cannot read '" + path + "': " + std::strerror(errno));
      input.read(reinterpret_cast<char *>(data),
                 static_cast<std::streamsize>(bytes));
      if (static_cast<uint64_t>(input.gcount()) != bytes)
        die("'" + path + "' holds fewer than the " + std::to_string(bytes) +
            " bytes of buffer '" + parts[0] + "'");
    } else {
      die("unknown initializer '" + init + "' of buffer '" + parts[0] + "'");
    }
    buffers[parts[0]] = buffer;
  }
  auto lookup = [&](const std::string &name) -> Buffer & {
    auto it = buffers.find(name);
    if (it == buffers.end())
      die("no buffer '" + name + "'");
    return it->second;
  };

  // Parameters, packed by the kernel's own layout: each value's bytes.
  std::vector<std::vector<uint8_t>> values;
  auto pushScalar = [&](uint64_t value) {
    std::vector<uint8_t> bytes(8);
    std::memcpy(bytes.data(), &value, 8);
    values.push_back(std::move(bytes));
  };
  for (const std::string &spec : argSpecs) {
    size_t colon = spec.find(':');
    if (colon == std::string::npos)
      die("bad --arg '" + spec + "'");
    std::string kind = spec.substr(0, colon), rest = spec.substr(colon + 1);
    if (kind == "buf") {
      size_t plus = rest.find('+');
      uint64_t offset = plus == std::string::npos
                            ? 0
                            : parseCount(rest.substr(plus + 1), "offset");
      pushScalar(lookup(rest.substr(0, plus)).address + offset);
    } else if (kind == "memref") {
      std::vector<std::string> parts = split(rest, ':');
      if (parts.size() != 2)
        die("bad --arg '" + spec + "' (memref:NAME:D0xD1x...)");
      Buffer &buffer = lookup(parts[0]);
      std::vector<uint64_t> sizes;
      for (const std::string &dim : split(parts[1], 'x'))
        sizes.push_back(parseCount(dim, "memref size"));
      pushScalar(buffer.address);
      pushScalar(buffer.address);
      pushScalar(0);
      for (uint64_t size : sizes)
        pushScalar(size);
      std::vector<uint64_t> strides(sizes.size(), 1);
      for (size_t d = sizes.size(); d-- > 1;)
        strides[d - 1] = strides[d] * sizes[d];
      for (uint64_t stride : strides)
        pushScalar(stride);
    } else if (kind == "tmap") {
      values.push_back(makeTensorMap(spec, rest, lookup));
    } else {
      pushScalar(parseScalar(parseElementType(kind).type, rest));
    }
  }
  if (values.size() != kernel->params.size())
    die("kernel '" + kernelName + "' takes " +
        std::to_string(kernel->params.size()) + " parameters, --arg gives " +
        std::to_string(values.size()));
  std::vector<uint8_t> params(kernel->paramBytes, 0);
  for (size_t i = 0; i < values.size(); ++i) {
    if (kernel->params[i].size > values[i].size())
      die("parameter " + std::to_string(i) + " of '" + kernelName +
          "' is an aggregate of " + std::to_string(kernel->params[i].size) +
          " bytes; --arg gives " + std::to_string(values[i].size()));
    std::memcpy(params.data() + kernel->params[i].offset, values[i].data(),
                kernel->params[i].size);
  }

  LaunchStats stats;
  if (!device.launchPacked(*module, *kernel, grid, block,
                           static_cast<uint32_t>(sharedBytes), params, error,
                           &stats))
    die(error);

  for (const std::string &spec : printSpecs) {
    std::vector<std::string> parts = split(spec, ':');
    Buffer &buffer = lookup(parts[0]);
    uint64_t first = parts.size() > 1 ? parseCount(parts[1], "index") : 0;
    uint64_t count = parts.size() > 2
                         ? parseCount(parts[2], "count")
                         : buffer.count - std::min(first, buffer.count);
    if (first + count > buffer.count)
      die("--print " + spec + " is past the end of buffer '" + parts[0] + "'");
    const auto *data = reinterpret_cast<const uint8_t *>(buffer.address);
    for (uint64_t k = first; k < first + count; ++k) {
      uint64_t bits = 0;
      std::memcpy(&bits, data + k * buffer.element.bytes, buffer.element.bytes);
      std::printf("%s[%" PRIu64 "] = %s\n", parts[0].c_str(), k,
                  formatElement(buffer.element.type, bits).c_str());
    }
  }
  for (const std::string &spec : writeSpecs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos)
      die("bad --write '" + spec + "' (NAME=PATH)");
    Buffer &buffer = lookup(spec.substr(0, eq));
    std::string path = spec.substr(eq + 1);
    std::ofstream output(path, std::ios::binary);
    output.write(
        reinterpret_cast<const char *>(buffer.address),
        static_cast<std::streamsize>(buffer.count * buffer.element.bytes));
    if (!output)
      die("cannot write '" + path + "': " + std::strerror(errno));
  }
  if (!statsFile.empty()) {
    std::ofstream output(statsFile, std::ios::binary);
    output << formatCountersJson({stats});
    if (!output)
      die("cannot write '" + statsFile + "': " + std::strerror(errno));
  }
  if (statsFormat == "json") {
    std::fputs(formatCountersJson({stats}).c_str(), stdout);
  } else if (statsFormat == "text") {
    std::printf("blocks: %" PRIu64 "\nwarp instructions: %" PRIu64
                "\nthread instructions: %" PRIu64 "\n",
                stats.blocks, stats.warpInstructions, stats.threadInstructions);
    std::fputs(formatCountersText(stats).c_str(), stdout);
  }
  return 0;
}
