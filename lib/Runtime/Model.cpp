//===- Model.cpp - Loading and running compiled models --------------------===//
//
// Manifest grammar (one directive per '\n'-terminated line, fields separated
// by single spaces or tabs; a final newline is optional):
//
//   ridgeline-model 1
//   target cpu | target sm_<digits>[a]
//   input <name> <dtype> <shape>      zero or more, in graph order
//   output <name> <dtype> <shape>     one or more, in graph order
//
// <shape> is "scalar" or decimal dims joined by 'x' ("4x64", "0x3").
// Anything else (blank lines, unknown directives, extra fields, '\r', inputs
// after outputs, duplicate names, byte sizes that overflow) is rejected: the
// manifest is machine-written, so any deviation means a compiler bug or a
// foreign .so, and running on guessed buffer sizes would corrupt memory.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Runtime/Runtime.h"

#include <chrono>
#include <dlfcn.h>

#include <cstring>
#include <limits>
#include <set>

using namespace ridge::rt;

//===----------------------------------------------------------------------===//
// DType / TensorSpec
//===----------------------------------------------------------------------===//

namespace {
struct DTypeInfo {
  DType type;
  const char *name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F16, "f16", 2}, {DType::BF16, "bf16", 2}, {DType::F32, "f32", 4},
    {DType::F64, "f64", 8}, {DType::I1, "i1", 1},     {DType::I8, "i8", 1},
    {DType::I16, "i16", 2}, {DType::I32, "i32", 4},   {DType::I64, "i64", 8},
    {DType::U8, "u8", 1},   {DType::U16, "u16", 2},   {DType::U32, "u32", 4},
    {DType::U64, "u64", 8},
};

const DTypeInfo &infoFor(DType type) {
  for (const DTypeInfo &info : kDTypes)
    if (info.type == type)
      return info;
  // Unreachable for valid enumerators; an out-of-range cast falls back to the
  // first entry rather than reading past the table.
  return kDTypes[0];
}
} // namespace

bool ridge::rt::parseDType(std::string_view name, DType &out) {
  for (const DTypeInfo &info : kDTypes) {
    if (name == info.name) {
      out = info.type;
      return true;
    }
  }
  return false;
}

const char *ridge::rt::dtypeName(DType type) { return infoFor(type).name; }

size_t ridge::rt::dtypeSize(DType type) { return infoFor(type).size; }

int64_t TensorSpec::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

size_t TensorSpec::byteSize() const {
  return static_cast<size_t>(numElements()) * dtypeSize(dtype);
}

std::string TensorSpec::shapeString() const {
  if (shape.empty())
    return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Manifest parsing
//===----------------------------------------------------------------------===//

namespace {
// Tensors larger than this are certainly a corrupt manifest, and the bound
// keeps every byteSize() computation far from size_t overflow.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

std::vector<std::string_view> splitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
      ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t')
      ++i;
    if (i > start)
      fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

bool isDigits(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  return true;
}

/// Parses a canonical non-negative decimal (no sign, no leading zeros) that
/// is at most `limit`.
bool parseUnsigned(std::string_view s, int64_t limit, int64_t &out) {
  if (!isDigits(s) || (s.size() > 1 && s[0] == '0'))
    return false;
  int64_t v = 0;
  for (char c : s) {
    int digit = c - '0';
    if (v > (limit - digit) / 10)
      return false;
    v = v * 10 + digit;
  }
  out = v;
  return true;
}

bool parseShape(std::string_view text, DType dtype, std::vector<int64_t> &shape,
                std::string &error) {
  shape.clear();
  if (text == "scalar")
    return true;
  if (text.empty() || text.front() == 'x' || text.back() == 'x') {
    error = "malformed shape '" + std::string(text) +
            "' (expected 'scalar' or dims joined by 'x', e.g. 4x64)";
    return false;
  }
  int64_t elemLimit = kMaxTensorBytes / static_cast<int64_t>(dtypeSize(dtype));
  int64_t elems = 1;
  bool empty = false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t next = text.find('x', pos);
    if (next == std::string_view::npos)
      next = text.size();
    std::string_view dimText = text.substr(pos, next - pos);
    int64_t dim = 0;
    if (!parseUnsigned(dimText, kMaxTensorBytes, dim)) {
      if (isDigits(dimText) && dimText.size() > 1 && dimText[0] == '0')
        error = "dimension '" + std::string(dimText) +
                "' has a leading zero in shape '" + std::string(text) + "'";
      else if (isDigits(dimText))
        error = "dimension '" + std::string(dimText) + "' is too large";
      else
        error = "malformed dimension '" + std::string(dimText) +
                "' in shape '" + std::string(text) +
                "' (dims must be non-negative integers; dynamic dims are "
                "not supported)";
      return false;
    }
    shape.push_back(dim);
    // Track the element count, but a zero dim makes the tensor empty no
    // matter how large the other dims are.
    if (dim == 0)
      empty = true;
    else if (!empty) {
      if (elems > elemLimit / dim) {
        error = "shape '" + std::string(text) + "' is too large (over " +
                std::to_string(kMaxTensorBytes) + " bytes)";
        return false;
      }
      elems *= dim;
    }
    pos = next + 1;
  }
  return true;
}

bool isValidTarget(std::string_view target) {
  if (target == "cpu")
    return true;
  int cc = 0;
  bool archSpecific = false;
  return parseGpuTarget(target, cc, archSpecific);
}
} // namespace

bool ridge::rt::parseGpuTarget(std::string_view target, int &computeCapability,
                               bool &archSpecific) {
  if (target.substr(0, 3) != "sm_")
    return false;
  std::string_view rest = target.substr(3);
  bool a = !rest.empty() && rest.back() == 'a';
  if (a)
    rest.remove_suffix(1);
  // At least two digits: "sm_8" is not an architecture, "sm_80" is.
  int64_t value = 0;
  if (rest.size() < 2 || !parseUnsigned(rest, 10000, value))
    return false;
  computeCapability = static_cast<int>(value);
  archSpecific = a;
  return true;
}

bool ridge::rt::parseManifest(const std::string &text, Manifest &out,
                              std::string &error) {
  Manifest m;
  std::set<std::string> inputNames, outputNames;
  bool sawTarget = false;
  size_t lineNo = 0;
  size_t pos = 0;

  auto fail = [&](const std::string &msg) {
    error = "line " + std::to_string(lineNo) + ": " + msg;
    return false;
  };

  if (text.empty()) {
    error = "manifest is empty";
    return false;
  }

  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos)
      end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++lineNo;

    if (line.find('\r') != std::string_view::npos)
      return fail("carriage return in manifest (lines must end in '\\n')");
    if (line.find('\0') != std::string_view::npos)
      return fail("NUL byte in manifest");
    std::vector<std::string_view> f = splitFields(line);
    if (f.empty())
      return fail("empty line");

    if (lineNo == 1) {
      if (f[0] != "ridgeline-model")
        return fail("expected 'ridgeline-model 1' header, got '" +
                    std::string(line) + "'");
      if (f.size() != 2)
        return fail("header must be exactly 'ridgeline-model <version>'");
      int64_t version = 0;
      if (!parseUnsigned(f[1], 1000000, version))
        return fail("malformed manifest version '" + std::string(f[1]) + "'");
      if (version != 1)
        return fail("unsupported manifest version " + std::to_string(version) +
                    " (this runtime reads version 1)");
      m.version = 1;
      continue;
    }

    if (f[0] == "ridgeline-model")
      return fail("duplicate 'ridgeline-model' header");

    if (f[0] == "target") {
      if (sawTarget)
        return fail("duplicate 'target' line");
      if (f.size() != 2)
        return fail("expected 'target <cpu|sm_XX>'");
      if (!isValidTarget(f[1]))
        return fail("unknown target '" + std::string(f[1]) +
                    "' (expected 'cpu' or an NVIDIA architecture like "
                    "'sm_80' or 'sm_90a')");
      m.target = std::string(f[1]);
      sawTarget = true;
      continue;
    }

    bool isInput = f[0] == "input";
    if (!isInput && f[0] != "output")
      return fail("unknown directive '" + std::string(f[0]) + "'");
    const char *kind = isInput ? "input" : "output";
    if (!sawTarget)
      return fail(std::string(kind) + " before the 'target' line");
    if (isInput && !m.outputs.empty())
      return fail("input '" + (f.size() > 1 ? std::string(f[1]) : "") +
                  "' after an output (inputs must come first)");
    if (f.size() != 4)
      return fail("expected '" + std::string(kind) +
                  " <name> <dtype> <shape>', got " + std::to_string(f.size()) +
                  " fields");

    TensorSpec spec;
    spec.name = std::string(f[1]);
    if (!parseDType(f[2], spec.dtype))
      return fail("unknown dtype '" + std::string(f[2]) + "' for " + kind +
                  " '" + spec.name +
                  "' (expected one of f16 bf16 f32 f64 i1 i8 i16 i32 i64 u8 "
                  "u16 u32 u64)");
    std::string shapeError;
    if (!parseShape(f[3], spec.dtype, spec.shape, shapeError))
      return fail(std::string(kind) + " '" + spec.name + "': " + shapeError);
    // Names only need to be unique within their list: ONNX allows a graph
    // input to be forwarded directly as an output of the same name.
    std::set<std::string> &names = isInput ? inputNames : outputNames;
    if (!names.insert(spec.name).second)
      return fail("duplicate " + std::string(kind) + " name '" + spec.name +
                  "'");
    (isInput ? m.inputs : m.outputs).push_back(std::move(spec));
  }

  if (m.version == 0) {
    error = "missing 'ridgeline-model 1' header";
    return false;
  }
  if (!sawTarget) {
    error = "missing 'target' line";
    return false;
  }
  if (m.outputs.empty()) {
    error = "manifest declares no outputs";
    return false;
  }
  out = std::move(m);
  return true;
}

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

namespace {
constexpr const char *kManifestSymbol = "ridge_model_manifest";
constexpr const char *kRunSymbol = "ridge_model_run";

std::string dlerrorString() {
  const char *msg = dlerror();
  return msg ? msg : "unknown dynamic loader error";
}
} // namespace

std::unique_ptr<Model> Model::load(const std::string &soPath,
                                   std::string &error) {
  auto fail = [&](const std::string &msg) {
    error = soPath + ": " + msg;
    return nullptr;
  };
  if (soPath.empty()) {
    error = "empty model path";
    return nullptr;
  }

  // dlopen() searches the library path for names without a '/', which would
  // silently pick up a same-named library elsewhere instead of the file the
  // user named.
  std::string openPath =
      soPath.find('/') == std::string::npos ? "./" + soPath : soPath;

  // Static constructors of GPU models load their kernel modules through
  // mgpuModuleLoad*; start from a clean slate so their errors are ours.
  takeGpuError();
  dlerror();
  void *handle = dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string ctorGpuError = takeGpuError();
  if (!handle) {
    std::string msg = "cannot load model: " + dlerrorString();
    if (msg.find("undefined symbol: mgpu") != std::string::npos)
      msg += " (the GPU runtime wrappers are exported by libridge_runtime.so, "
             "which must be loaded into the global scope before the model)";
    return fail(msg);
  }

  auto model = std::unique_ptr<Model>(new Model());
  model->soPath = soPath;
  model->handle = handle; // From here on ~Model() dlclose()s it.
  model->loadGpuError = std::move(ctorGpuError);

  dlerror();
  auto manifestFn =
      reinterpret_cast<const char *(*)()>(dlsym(handle, kManifestSymbol));
  if (!manifestFn)
    return fail(std::string("not a Ridgeline model: missing symbol '") +
                kManifestSymbol + "'");
  model->entry = reinterpret_cast<RunFn>(dlsym(handle, kRunSymbol));
  if (!model->entry)
    return fail(std::string("not a Ridgeline model: missing symbol '") +
                kRunSymbol + "'");

  const char *text = manifestFn();
  if (!text)
    return fail(std::string(kManifestSymbol) + "() returned null");
  std::string parseError;
  if (!parseManifest(text, model->info, parseError))
    return fail("invalid manifest: " + parseError);
  return model;
}

Model::~Model() {
  if (handle)
    dlclose(handle);
}

bool Model::run(const std::vector<void *> &hostBuffers, std::string &error) {
  size_t expected = info.inputs.size() + info.outputs.size();
  if (hostBuffers.size() != expected) {
    error = "expected " + std::to_string(expected) + " buffers (" +
            std::to_string(info.inputs.size()) + " inputs + " +
            std::to_string(info.outputs.size()) + " outputs), got " +
            std::to_string(hostBuffers.size());
    return false;
  }
  for (size_t i = 0; i < expected; ++i) {
    bool isInput = i < info.inputs.size();
    const TensorSpec &spec =
        isInput ? info.inputs[i] : info.outputs[i - info.inputs.size()];
    if (!hostBuffers[i] && spec.byteSize() != 0) {
      error = std::string("buffer for ") + (isInput ? "input" : "output") +
              " '" + spec.name + "' is null";
      return false;
    }
  }

  // The entry point takes a non-const void **.
  std::vector<void *> buffers(hostBuffers);
  runTimes.clear();
  if (isGpu())
    return runGpu(buffers, error);
  entry(buffers.data());
  for (int i = 0; i < timedRuns; ++i) {
    auto start = std::chrono::steady_clock::now();
    entry(buffers.data());
    runTimes.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
  return true;
}

namespace {
/// Frees device buffers on every exit path of runGpu.
struct DeviceBuffers {
  const CudaDriver::Api &api;
  std::vector<cu::CUdeviceptr> ptrs;
  explicit DeviceBuffers(const CudaDriver::Api &api) : api(api) {}
  ~DeviceBuffers() {
    for (cu::CUdeviceptr p : ptrs)
      if (p)
        api.cuMemFree(p);
  }
};
} // namespace

bool Model::runGpu(std::vector<void *> &buffers, std::string &error) {
  std::string why;
  CudaDriver *driver = CudaDriver::get(why);
  if (!driver) {
    error = "no NVIDIA GPU available: " + why;
    return false;
  }
  const CudaDriver::Api &api = driver->api();
  constexpr int kDevice = 0;

  // Refuse obviously incompatible devices up front: the driver's own error
  // for this (a PTX JIT or "no kernel image" failure) does not say why.
  int required = 0;
  bool archSpecific = false;
  if (parseGpuTarget(info.target, required, archSpecific)) {
    int have = driver->computeCapability(kDevice);
    auto sm = [](int cc) { return "sm_" + std::to_string(cc); };
    if (have < required || (archSpecific && have != required)) {
      error = "model targets " + info.target + " but GPU '" +
              driver->deviceName(kDevice) + "' is " + sm(have);
      return false;
    }
  }
  if (!loadGpuError.empty()) {
    error = "loading the model's GPU kernels failed: " + loadGpuError;
    return false;
  }
  if (!driver->makeCurrent(kDevice, error))
    return false;

  const size_t numInputs = info.inputs.size();
  DeviceBuffers device(api);
  device.ptrs.assign(buffers.size(), 0);
  std::vector<void *> devicePtrs(buffers.size(), nullptr);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const TensorSpec &spec =
        i < numInputs ? info.inputs[i] : info.outputs[i - numInputs];
    // cuMemAlloc rejects 0 bytes; empty tensors still get a valid, distinct
    // pointer so the model never sees null.
    size_t bytes = spec.byteSize() ? spec.byteSize() : 1;
    if (!driver->check(api.cuMemAlloc(&device.ptrs[i], bytes), "cuMemAlloc",
                       error)) {
      error = "allocating " + std::to_string(bytes) + " device bytes for '" +
              spec.name + "': " + error;
      return false;
    }
    devicePtrs[i] = reinterpret_cast<void *>(device.ptrs[i]);
    if (i < numInputs && spec.byteSize() &&
        !driver->check(
            api.cuMemcpyHtoD(device.ptrs[i], buffers[i], spec.byteSize()),
            "cuMemcpyHtoD", error)) {
      error = "copying input '" + spec.name + "' to the GPU: " + error;
      return false;
    }
  }
  // The copies above run on the legacy default stream and may return before
  // the DMA finishes, while compiled code launches on non-blocking streams
  // that do not order against it: wait for the inputs explicitly.
  if (!driver->check(api.cuCtxSynchronize(), "cuCtxSynchronize", error))
    return false;

  takeGpuError();
  entry(devicePtrs.data());
  std::string runError = takeGpuError();
  std::string syncError;
  bool synced =
      driver->check(api.cuCtxSynchronize(), "cuCtxSynchronize", syncError);
  if (!runError.empty()) {
    error = "GPU execution failed: " + runError;
    return false;
  }
  if (!synced) {
    error = "GPU execution failed: " + syncError;
    return false;
  }
  // Benchmark runs: inputs stay on the device, each run is synchronized.
  for (int i = 0; i < timedRuns; ++i) {
    auto start = std::chrono::steady_clock::now();
    entry(devicePtrs.data());
    std::string timedError = takeGpuError();
    if (!timedError.empty() || !driver->check(api.cuCtxSynchronize(),
                                              "cuCtxSynchronize", timedError)) {
      error = "GPU execution failed: " + timedError;
      return false;
    }
    runTimes.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }

  for (size_t i = numInputs; i < buffers.size(); ++i) {
    const TensorSpec &spec = info.outputs[i - numInputs];
    if (spec.byteSize() &&
        !driver->check(
            api.cuMemcpyDtoH(buffers[i], device.ptrs[i], spec.byteSize()),
            "cuMemcpyDtoH", error)) {
      error = "copying output '" + spec.name + "' from the GPU: " + error;
      return false;
    }
  }
  return true;
}
