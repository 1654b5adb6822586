//===- ridge-exec.cpp - Run a compiled model without the compiler ---------===//
//
//   ridge-exec MODEL.so [INPUT.npy ...] [--random-inputs]
//              [--device=gpu|cuda:N|emulator] [--repeat=N] [--kernel-times[=N]]
//              [--save-outputs=DIR] [--driver-calls] [--no-cuda-graph]
//              [--describe]
//
// Loads a shared object written by ridgec, binds its inputs (NumPy .npy
// files in descriptor order, or uniform random data), runs it once and
// writes its outputs as DIR/output_K.npy. With --repeat it times N more runs
// on the data already in place (device-resident on a GPU) and prints their
// median; with --kernel-times it prints each kernel's time, measured with
// events around each launch, over N further runs. --driver-calls prints the
// allocations, copies and launches (rt::getDriverCallCounts) of the first
// run and of a second one. A GPU model runs in an rt::Session (weights
// uploaded once, one arena); its runs replay a CUDA graph captured at the
// first unless --no-cuda-graph.
//
// It links only libridge_runtime (plain C++17 and libdl): this is what runs
// a model that was compiled elsewhere, on a machine with a GPU and no MLIR,
// LLVM or CUDA toolkit, so it must stay free of them too.
// bf16 tensors travel in .npy files as '<u2' (their raw bits), since NumPy
// has no bf16 type; float8 ones as '|u1'.
// Exit codes: 0 ran, 1 error, 3 no NVIDIA GPU/driver for a GPU model.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Runtime/Runtime.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace rt = ridge::rt;

namespace {

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kNoGpu = 3;

int fail(const std::string &message) {
  std::fprintf(stderr, "ridge-exec: error: %s\n", message.c_str());
  return kFailed;
}

/// The .npy descriptor ('<f4', ...) that holds `type`'s bytes.
const char *getNpyDescr(rt::DType type) {
  switch (type) {
  case RIDGE_DTYPE_F16:
    return "<f2";
  case RIDGE_DTYPE_BF16:
    return "<u2";
  case RIDGE_DTYPE_F32:
    return "<f4";
  case RIDGE_DTYPE_F64:
    return "<f8";
  case RIDGE_DTYPE_I1:
    return "|b1";
  case RIDGE_DTYPE_I8:
    return "|i1";
  case RIDGE_DTYPE_I16:
    return "<i2";
  case RIDGE_DTYPE_I32:
    return "<i4";
  case RIDGE_DTYPE_I64:
    return "<i8";
  case RIDGE_DTYPE_U8:
  case RIDGE_DTYPE_F8E4M3FN:
  case RIDGE_DTYPE_F8E4M3FNUZ:
  case RIDGE_DTYPE_F8E5M2:
  case RIDGE_DTYPE_F8E5M2FNUZ:
    return "|u1";
  case RIDGE_DTYPE_U16:
    return "<u2";
  case RIDGE_DTYPE_U32:
    return "<u4";
  case RIDGE_DTYPE_U64:
    return "<u8";
  default:
    return nullptr;
  }
}

/// The value of `key` in a .npy header dictionary ("{'descr': '<f4', ...}"),
/// up to the next top-level comma; empty when absent.
std::string getHeaderField(const std::string &header, const std::string &key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return "";
  at = header.find(':', at);
  if (at == std::string::npos)
    return "";
  size_t end = at + 1;
  int depth = 0;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  std::string value = header.substr(at + 1, end - at - 1);
  value.erase(0, value.find_first_not_of(" "));
  value.erase(value.find_last_not_of(" ") + 1);
  return value;
}

/// Reads `path`, a C-ordered .npy file, into `bytes` after checking its
/// element type and shape against `spec`.
int readNpy(const std::string &path, const rt::TensorSpec &spec,
            std::vector<char> &bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(path + ": cannot open: " + std::strerror(errno));
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return fail(path + ": not a .npy file");
  uint32_t headerBytes = 0;
  unsigned char lengthBytes[4] = {0, 0, 0, 0};
  int width = magic[6] == 1 ? 2 : 4;
  if (!in.read(reinterpret_cast<char *>(lengthBytes), width))
    return fail(path + ": truncated .npy header");
  for (int i = width - 1; i >= 0; --i)
    headerBytes = headerBytes << 8 | lengthBytes[i];
  if (headerBytes > (1u << 20))
    return fail(path + ": .npy header of " + std::to_string(headerBytes) +
                " bytes");
  std::string header(headerBytes, '\0');
  if (!in.read(header.data(), headerBytes))
    return fail(path + ": truncated .npy header");

  std::string descr = getHeaderField(header, "descr");
  std::string expected = std::string("'") + getNpyDescr(spec.dtype) + "'";
  // One-byte types are written '|u1' or '<u1' depending on the writer.
  auto normalize = [](std::string d) {
    if (d.size() == 5 && d[1] == '<' && d[3] == '1')
      d[1] = '|';
    return d;
  };
  if (normalize(descr) != normalize(expected))
    return fail(path + ": element type " + descr + " does not match input '" +
                spec.name + "' (" + rt::dtypeName(spec.dtype) + ", stored as " +
                expected + ")");
  if (getHeaderField(header, "fortran_order") != "False")
    return fail(path + ": Fortran-ordered arrays are not supported");
  std::string shapeText = getHeaderField(header, "shape");
  std::vector<int64_t> shape;
  for (size_t i = 0; i < shapeText.size();) {
    if (!std::isdigit(static_cast<unsigned char>(shapeText[i]))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < shapeText.size() &&
           std::isdigit(static_cast<unsigned char>(shapeText[end])))
      ++end;
    shape.push_back(std::stoll(shapeText.substr(i, end - i)));
    i = end;
  }
  if (shape != spec.shape) {
    std::string dims = shape.empty() ? "scalar" : "";
    for (size_t i = 0; i < shape.size(); ++i)
      dims += (i ? "x" : "") + std::to_string(shape[i]);
    return fail(path + ": shape " + dims + " does not match input '" +
                spec.name + "' (" + spec.shapeString() + ")");
  }
  bytes.assign(std::max<size_t>(spec.byteSize(), 1), 0);
  if (spec.byteSize() && !in.read(bytes.data(), spec.byteSize()))
    return fail(path + ": holds fewer than the " +
                std::to_string(spec.byteSize()) + " data bytes of input '" +
                spec.name + "'");
  return kOk;
}

/// Writes `data` as a C-ordered .npy file (format 1.0).
int writeNpy(const std::string &path, const rt::TensorSpec &spec,
             const std::vector<char> &data) {
  std::string shape = "(";
  for (size_t i = 0; i < spec.shape.size(); ++i)
    shape += std::to_string(spec.shape[i]) + (spec.shape.size() == 1      ? ","
                                              : i + 1 < spec.shape.size() ? ", "
                                                                          : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + getNpyDescr(spec.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return fail(path + ": cannot create: " + std::strerror(errno));
  unsigned char length[2] = {static_cast<unsigned char>(header.size() & 0xff),
                             static_cast<unsigned char>(header.size() >> 8)};
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(reinterpret_cast<const char *>(length), 2);
  out << header;
  out.write(data.data(), spec.byteSize());
  if (!out)
    return fail(path + ": write failed");
  return kOk;
}

/// Uniform random data: floats in [-1, 1), integers in [0, 16), booleans
/// 0/1; bf16 and f16 values exact in their types. Deterministic.
int fillRandom(const rt::TensorSpec &spec, std::vector<char> &bytes,
               uint64_t &state) {
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  auto uniform = [&] {
    return static_cast<float>((next() >> 40) / double(1 << 24)) * 2 - 1;
  };
  bytes.assign(std::max<size_t>(spec.byteSize(), 1), 0);
  char *data = bytes.data();
  for (size_t i = 0, e = spec.numElements(); i < e; ++i) {
    switch (spec.dtype) {
    case RIDGE_DTYPE_F32: {
      float v = uniform();
      std::memcpy(data + 4 * i, &v, 4);
      break;
    }
    case RIDGE_DTYPE_F64: {
      double v = uniform();
      std::memcpy(data + 8 * i, &v, 8);
      break;
    }
    case RIDGE_DTYPE_BF16: {
      // Round to 8 significant bits first: the truncation is then exact.
      float v = uniform();
      uint32_t f;
      std::memcpy(&f, &v, 4);
      uint16_t bits =
          static_cast<uint16_t>((f + 0x7fff + ((f >> 16) & 1)) >> 16);
      std::memcpy(data + 2 * i, &bits, 2);
      break;
    }
    case RIDGE_DTYPE_F16: {
      // j / 1024 for j in [-1024, 1024): exact in f16.
      int64_t j = static_cast<int64_t>(next() % 2048) - 1024;
      uint16_t bits = 0;
      if (j != 0) {
        uint64_t magnitude = static_cast<uint64_t>(j < 0 ? -j : j);
        unsigned exponent = 63 - __builtin_clzll(magnitude);
        bits =
            static_cast<uint16_t>((j < 0 ? 0x8000 : 0) | (exponent + 5) << 10 |
                                  ((magnitude << (10 - exponent)) & 0x3ff));
      }
      std::memcpy(data + 2 * i, &bits, 2);
      break;
    }
    case RIDGE_DTYPE_I64: {
      int64_t v = static_cast<int64_t>(next() % 16);
      std::memcpy(data + 8 * i, &v, 8);
      break;
    }
    case RIDGE_DTYPE_I32: {
      int32_t v = static_cast<int32_t>(next() % 16);
      std::memcpy(data + 4 * i, &v, 4);
      break;
    }
    case RIDGE_DTYPE_I1:
      data[i] = static_cast<char>(next() & 1);
      break;
    default:
      return fail(std::string("--random-inputs supports f32, f64, bf16, f16, "
                              "i64, i32 and bool inputs, not ") +
                  rt::dtypeName(spec.dtype) + " ('" + spec.name + "')");
    }
  }
  return kOk;
}

struct Options {
  std::string modelPath;
  std::vector<std::string> inputPaths;
  bool randomInputs = false;
  bool emulator = false;
  /// The CUDA device ordinal (--device=cuda:N; gpu is cuda:0).
  int device = 0;
  bool describe = false;
  bool driverCalls = false;
  bool cudaGraph = true;
  int repeat = 0;
  int kernelTimeRuns = 0;
  std::string saveOutputs;
};

const char *const kUsage =
    "usage: ridge-exec MODEL.so [INPUT.npy ...] [--random-inputs]\n"
    "                  [--device=gpu|cuda:N|emulator] [--repeat=N]\n"
    "                  [--kernel-times[=N]] [--save-outputs=DIR]\n"
    "                  [--driver-calls] [--no-cuda-graph] [--describe]\n";

/// Parses a positive count after `flag=`; -1 on a bad value.
int parseCount(const std::string &arg, size_t prefix) {
  std::string text = arg.substr(prefix);
  char *end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 1 || value > 1000000)
    return -1;
  return static_cast<int>(value);
}

int parseOptions(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto startsWith = [&](const char *prefix) {
      return arg.rfind(prefix, 0) == 0;
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--random-inputs") {
      options.randomInputs = true;
    } else if (arg == "--describe") {
      options.describe = true;
    } else if (arg == "--driver-calls") {
      options.driverCalls = true;
    } else if (arg == "--no-cuda-graph") {
      options.cudaGraph = false;
    } else if (arg == "--device=gpu") {
      options.emulator = false;
    } else if (startsWith("--device=cuda:")) {
      std::string text = arg.substr(14);
      char *end = nullptr;
      long ordinal = std::strtol(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || ordinal < 0 || ordinal > 1023)
        return fail("--device=cuda:N takes a device ordinal, not '" + text +
                    "'");
      options.emulator = false;
      options.device = static_cast<int>(ordinal);
    } else if (arg == "--device=emulator") {
      options.emulator = true;
    } else if (startsWith("--repeat=")) {
      if ((options.repeat = parseCount(arg, 9)) < 0)
        return fail("--repeat takes a count from 1 to 1000000, not '" +
                    arg.substr(9) + "'");
    } else if (arg == "--kernel-times") {
      options.kernelTimeRuns = 10;
    } else if (startsWith("--kernel-times=")) {
      if ((options.kernelTimeRuns = parseCount(arg, 15)) < 0)
        return fail("--kernel-times takes a count from 1 to 1000000, not '" +
                    arg.substr(15) + "'");
    } else if (startsWith("--save-outputs=")) {
      options.saveOutputs = arg.substr(15);
    } else if (startsWith("-")) {
      return fail("unknown option '" + arg + "'\n" + kUsage);
    } else if (options.modelPath.empty()) {
      options.modelPath = arg;
    } else {
      options.inputPaths.push_back(arg);
    }
  }
  if (options.modelPath.empty())
    return fail(std::string("no model given\n") + kUsage);
  if (options.randomInputs && !options.inputPaths.empty())
    return fail("give either input files or --random-inputs, not both");
  return kOk;
}

/// The driver calls between two readings, as one line.
void printDriverCalls(const char *label, const rt::DriverCallCounts &before,
                      const rt::DriverCallCounts &after) {
  auto mb = [](uint64_t bytes) { return bytes / 1e6; };
  std::printf(
      "ridge-exec: driver calls, %s: %llu allocations (%.3f MB), "
      "%llu frees, %llu host-to-device copies (%.3f MB), %llu "
      "device-to-host (%.3f MB), %llu other copies (%.3f MB), %llu "
      "launches, %llu graph launches, %llu module loads\n",
      label,
      static_cast<unsigned long long>(after.allocations - before.allocations),
      mb(after.allocatedBytes - before.allocatedBytes),
      static_cast<unsigned long long>(after.frees - before.frees),
      static_cast<unsigned long long>(after.hostToDevice - before.hostToDevice),
      mb(after.hostToDeviceBytes - before.hostToDeviceBytes),
      static_cast<unsigned long long>(after.deviceToHost - before.deviceToHost),
      mb(after.deviceToHostBytes - before.deviceToHostBytes),
      static_cast<unsigned long long>(after.deviceCopies - before.deviceCopies),
      mb(after.deviceCopyBytes - before.deviceCopyBytes),
      static_cast<unsigned long long>(after.launches - before.launches),
      static_cast<unsigned long long>(after.graphLaunches -
                                      before.graphLaunches),
      static_cast<unsigned long long>(after.moduleLoads - before.moduleLoads));
}

void printTimes(std::vector<double> times) {
  if (times.empty())
    return;
  std::sort(times.begin(), times.end());
  std::printf("ridge-exec: %zu timed runs: median %.4f ms, min %.4f ms\n",
              times.size(), 1e3 * times[times.size() / 2], 1e3 * times[0]);
}

int run(const Options &options) {
  // The driver is chosen when the model loads (its static constructors load
  // the kernels), so the device must be set before.
  if (options.emulator && !std::getenv("RIDGE_DEVICE"))
    setenv("RIDGE_DEVICE", "emulator", 1);
  std::string error;
  auto loadStart = std::chrono::steady_clock::now();
  std::unique_ptr<rt::Model> model =
      rt::Model::load(options.modelPath, error, options.device);
  if (!model)
    return fail(error);
  // On a GPU this includes the driver's JIT compilation of the PTX.
  std::printf("ridge-exec: loaded in %.1f ms\n",
              1e3 * std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - loadStart)
                        .count());
  if (options.describe) {
    std::printf("%s: target %s\n", options.modelPath.c_str(),
                model->target().c_str());
    for (const rt::TensorSpec &spec : model->inputs())
      std::printf("  input  '%s' %s %s\n", spec.name.c_str(),
                  rt::dtypeName(spec.dtype), spec.shapeString().c_str());
    for (const rt::TensorSpec &spec : model->outputs())
      std::printf("  output '%s' %s %s\n", spec.name.c_str(),
                  rt::dtypeName(spec.dtype), spec.shapeString().c_str());
    const rt::ModelInfo &info = model->modelInfo();
    if (model->isGpu())
      std::printf("  device weights %llu bytes (%zu weights), arena %llu "
                  "bytes (peak live %llu bytes, %llu zeroed once)\n",
                  static_cast<unsigned long long>(info.deviceWeightsBytes),
                  info.deviceWeights.size(),
                  static_cast<unsigned long long>(info.arenaBytes),
                  static_cast<unsigned long long>(info.peakLiveBytes),
                  static_cast<unsigned long long>(info.arenaZeroedBytes));
    if (!options.randomInputs && options.inputPaths.empty())
      return kOk;
  }

  const std::vector<rt::TensorSpec> &inputs = model->inputs();
  if (!options.randomInputs && options.inputPaths.size() != inputs.size())
    return fail(options.modelPath + " takes " + std::to_string(inputs.size()) +
                " inputs; " + std::to_string(options.inputPaths.size()) +
                " files given (or --random-inputs)");
  std::vector<std::vector<char>> storage(inputs.size());
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (size_t k = 0; k < inputs.size(); ++k)
    if (int rc = options.randomInputs
                     ? fillRandom(inputs[k], storage[k], state)
                     : readNpy(options.inputPaths[k], inputs[k], storage[k]))
      return rc;
  std::vector<std::vector<char>> outputs;
  for (const rt::TensorSpec &spec : model->outputs())
    outputs.emplace_back(std::max<size_t>(spec.byteSize(), 1));
  std::vector<void *> buffers;
  for (auto &bytes : storage)
    buffers.push_back(bytes.data());
  for (auto &bytes : outputs)
    buffers.push_back(bytes.data());

  model->setSessionOptions(rt::SessionOptions{options.cudaGraph});
  auto runOnce = [&]() -> int {
    if (model->run(buffers, error))
      return kOk;
    fail(error);
    return error.rfind("no NVIDIA GPU available", 0) == 0 ? kNoGpu : kFailed;
  };
  // The first run loads and compiles nothing more but touches every page:
  // it is the warm-up of the timed runs below.
  rt::DriverCallCounts beforeRun = rt::getDriverCallCounts();
  if (int rc = runOnce()) {
    // What a failed run issued: after an out-of-memory error, no launch.
    if (options.driverCalls && model->isGpu())
      printDriverCalls("failed run 1", beforeRun, rt::getDriverCallCounts());
    return rc;
  }
  if (options.driverCalls && model->isGpu()) {
    rt::DriverCallCounts afterRun = rt::getDriverCallCounts();
    printDriverCalls("run 1", beforeRun, afterRun);
    if (int rc = runOnce())
      return rc;
    printDriverCalls("run 2", afterRun, rt::getDriverCallCounts());
    if (const rt::Session *session = model->getSession()) {
      if (session->lastRunUsedGraph())
        std::printf("ridge-exec: run 2 replayed a CUDA graph\n");
      else if (!session->getGraphFallback().empty())
        std::printf("ridge-exec: run 2 launched its kernels one by one: %s\n",
                    session->getGraphFallback().c_str());
    }
  }
  if (!options.saveOutputs.empty()) {
    mkdir(options.saveOutputs.c_str(), 0755);
    for (size_t k = 0; k < outputs.size(); ++k)
      if (int rc = writeNpy(options.saveOutputs + "/output_" +
                                std::to_string(k) + ".npy",
                            model->outputs()[k], outputs[k]))
        return rc;
  }
  if (options.repeat > 0) {
    model->setTimedRuns(options.repeat);
    if (int rc = runOnce())
      return rc;
    printTimes(model->getRunTimes());
    model->setTimedRuns(0);
  }
  if (options.kernelTimeRuns > 0) {
    model->setTimedRuns(options.kernelTimeRuns - 1);
    rt::resetKernelTimes();
    rt::setKernelProfiling(true);
    int rc = runOnce();
    rt::setKernelProfiling(false);
    if (rc)
      return rc;
    double total = 0;
    std::vector<rt::KernelTime> times = rt::getKernelTimes();
    for (const rt::KernelTime &time : times)
      total += time.milliseconds;
    std::printf("ridge-exec: kernel times over %d runs (ms per run):\n",
                options.kernelTimeRuns);
    for (const rt::KernelTime &time : times)
      std::printf("  %-48s %6llu launches %10.4f ms %5.1f%%\n",
                  time.name.c_str(),
                  static_cast<unsigned long long>(time.launches /
                                                  options.kernelTimeRuns),
                  time.milliseconds / options.kernelTimeRuns,
                  total > 0 ? 100 * time.milliseconds / total : 0.0);
    std::printf("  %-48s %6zu kernels  %10.4f ms\n", "total", times.size(),
                total / options.kernelTimeRuns);
  }
  return kOk;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (int rc = parseOptions(argc, argv, options))
    return rc;
  return run(options);
}
