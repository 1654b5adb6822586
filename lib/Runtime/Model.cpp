//===- Model.cpp - Loading and running compiled models --------------------===//
//
// A model describes itself through `ridge_model_describe()` (ModelAbi.h), a
// constant struct the compiler emits. readModelDesc checks every field before
// anything is sized from it: a wrong ABI version, an unknown target or dtype,
// a null pointer, a rank or name beyond the bounds below, a negative dim, a
// byte size that overflows, a duplicate name or a model without outputs is
// rejected. The descriptor is machine-written, so any of these means a
// compiler bug or a foreign .so, and running on guessed buffer sizes would
// corrupt memory.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Runtime/Runtime.h"

#include "CudaDriver.h"

#include <chrono>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

using namespace ridge::rt;

// The compiler emits the descriptors as LLVM structs laid out by the host's
// C rules (lib/Target/EmitModelAbi.cpp). Pin that layout here, where the
// runtime reads them.
static_assert(sizeof(void *) == 8, "the model ABI assumes 64-bit pointers");
static_assert(offsetof(ridge_tensor_desc, name) == 0 &&
                  offsetof(ridge_tensor_desc, dtype) == 8 &&
                  offsetof(ridge_tensor_desc, rank) == 12 &&
                  offsetof(ridge_tensor_desc, dims) == 16 &&
                  sizeof(ridge_tensor_desc) == 24,
              "ridge_tensor_desc must be {ptr, i32, i32, ptr}");
static_assert(offsetof(ridge_weight_desc, name) == 0 &&
                  offsetof(ridge_weight_desc, address) == 8 &&
                  offsetof(ridge_weight_desc, offset) == 16 &&
                  offsetof(ridge_weight_desc, bytes) == 24 &&
                  sizeof(ridge_weight_desc) == 32,
              "ridge_weight_desc must be {ptr, ptr, i64, i64}");
static_assert(sizeof(ridge_weights_header) == 32,
              "ridge_weights_header must be 32 bytes");
static_assert(offsetof(ridge_model_desc, abi_version) == 0 &&
                  offsetof(ridge_model_desc, target) == 8 &&
                  offsetof(ridge_model_desc, num_inputs) == 16 &&
                  offsetof(ridge_model_desc, num_outputs) == 20 &&
                  offsetof(ridge_model_desc, tensors) == 24 &&
                  offsetof(ridge_model_desc, weights_file) == 32 &&
                  offsetof(ridge_model_desc, num_weights) == 40 &&
                  offsetof(ridge_model_desc, weights) == 48 &&
                  offsetof(ridge_model_desc, weights_fingerprint) == 56 &&
                  offsetof(ridge_model_desc, weights_bytes) == 64 &&
                  offsetof(ridge_model_desc, device_weights_bytes) == 72 &&
                  offsetof(ridge_model_desc, arena_bytes) == 80 &&
                  offsetof(ridge_model_desc, peak_live_bytes) == 88 &&
                  offsetof(ridge_model_desc, num_device_weights) == 96 &&
                  offsetof(ridge_model_desc, device_weights) == 104 &&
                  offsetof(ridge_model_desc, arena_zeroed_bytes) == 112 &&
                  sizeof(ridge_model_desc) == 120,
              "ridge_model_desc must be {i32, ptr, i32, i32, ptr, ptr, i32, "
              "ptr, i64, i64, i64, i64, i64, i32, ptr, i64}");
static_assert(offsetof(ridge_device_weight_desc, name) == 0 &&
                  offsetof(ridge_device_weight_desc, source) == 8 &&
                  offsetof(ridge_device_weight_desc, offset) == 16 &&
                  offsetof(ridge_device_weight_desc, bytes) == 24 &&
                  sizeof(ridge_device_weight_desc) == 32,
              "ridge_device_weight_desc must be {ptr, ptr, i64, i64}");

//===----------------------------------------------------------------------===//
// TensorSpec
//===----------------------------------------------------------------------===//

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
// Descriptor validation
//===----------------------------------------------------------------------===//

namespace {
// Tensors larger than this are certainly a corrupt descriptor, and the bound
// keeps every byteSize() computation far from size_t overflow.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;
// Bounds on what a sane descriptor holds; they keep a corrupt one from
// making the runtime read far past the data it points to.
constexpr uint32_t kMaxRank = 64;
constexpr uint32_t kMaxTensors = 1u << 16;
constexpr size_t kMaxNameBytes = 1u << 16;
constexpr size_t kMaxTargetBytes = 64;

/// Parses a canonical non-negative decimal (no sign, no leading zeros) that
/// is at most `limit`.
bool parseUnsigned(std::string_view s, int64_t limit, int64_t &out) {
  if (s.empty() || (s.size() > 1 && s[0] == '0'))
    return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    int digit = c - '0';
    if (v > (limit - digit) / 10)
      return false;
    v = v * 10 + digit;
  }
  out = v;
  return true;
}

bool isValidTarget(std::string_view target) {
  if (target == "cpu")
    return true;
  int cc = 0;
  bool archSpecific = false;
  return parseGpuTarget(target, cc, archSpecific);
}

/// Copies tensor `index` of the list `kind` ("input"/"output") into `spec`.
bool readTensorDesc(const ridge_tensor_desc &desc, const char *kind,
                    uint32_t index, TensorSpec &spec, std::string &error) {
  std::string which = std::string(kind) + " " + std::to_string(index);
  if (!desc.name) {
    error = which + " has a null name";
    return false;
  }
  size_t length = strnlen(desc.name, kMaxNameBytes);
  if (length == kMaxNameBytes) {
    error = which + " has a name of " + std::to_string(kMaxNameBytes) +
            " bytes or more";
    return false;
  }
  if (length == 0) {
    error = which + " has an empty name";
    return false;
  }
  spec.name.assign(desc.name, length);
  which += " ('" + spec.name + "')";

  size_t elementBytes = ridge_dtype_size(desc.dtype);
  if (elementBytes == 0) {
    error = which + " has unknown dtype " + std::to_string(desc.dtype) +
            " (not a ridge_dtype of ModelAbi.h)";
    return false;
  }
  spec.dtype = static_cast<DType>(desc.dtype);

  if (desc.rank > kMaxRank) {
    error = which + " has rank " + std::to_string(desc.rank) + " (at most " +
            std::to_string(kMaxRank) + " is supported)";
    return false;
  }
  if (desc.rank > 0 && !desc.dims) {
    error = which + " has rank " + std::to_string(desc.rank) + " but no dims";
    return false;
  }
  spec.shape.assign(desc.dims, desc.dims + desc.rank);
  int64_t elementLimit = kMaxTensorBytes / static_cast<int64_t>(elementBytes);
  int64_t elements = 1;
  bool empty = false;
  for (int64_t dim : spec.shape) {
    if (dim < 0) {
      error = which + " has dimension " + std::to_string(dim) +
              " (dims must be non-negative; dynamic dims are not supported)";
      return false;
    }
    // A zero dim makes the tensor empty no matter how large the others are.
    if (dim == 0) {
      empty = true;
    } else if (!empty) {
      if (elements > elementLimit / dim) {
        error = which + " of shape " + spec.shapeString() +
                " is too large (over " + std::to_string(kMaxTensorBytes) +
                " bytes)";
        return false;
      }
      elements *= dim;
    }
  }
  return true;
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

bool ridge::rt::readModelDesc(const ridge_model_desc *desc, ModelInfo &out,
                              std::string &error) {
  if (!desc) {
    error = "the model descriptor is null";
    return false;
  }
  if (desc->abi_version != RIDGE_MODEL_ABI_VERSION) {
    error = "unsupported model ABI version " +
            std::to_string(desc->abi_version) +
            " (this runtime reads version " +
            std::to_string(RIDGE_MODEL_ABI_VERSION) +
            "; recompile the model with this Ridgeline)";
    return false;
  }
  ModelInfo info;
  info.version = static_cast<int>(desc->abi_version);

  if (!desc->target) {
    error = "the model descriptor has a null target";
    return false;
  }
  size_t targetLength = strnlen(desc->target, kMaxTargetBytes);
  info.target.assign(desc->target, targetLength);
  if (targetLength == kMaxTargetBytes || !isValidTarget(info.target)) {
    error = "unknown target '" + info.target +
            "' (expected 'cpu' or an NVIDIA architecture like 'sm_80' or "
            "'sm_90a')";
    return false;
  }

  if (desc->num_outputs == 0) {
    error = "the model declares no outputs";
    return false;
  }
  if (desc->num_inputs > kMaxTensors || desc->num_outputs > kMaxTensors) {
    error = "the model declares " + std::to_string(desc->num_inputs) +
            " inputs and " + std::to_string(desc->num_outputs) +
            " outputs (at most " + std::to_string(kMaxTensors) + " each)";
    return false;
  }
  if (!desc->tensors) {
    error = "the model descriptor has a null tensor array";
    return false;
  }

  uint32_t numTensors = desc->num_inputs + desc->num_outputs;
  std::set<std::string> inputNames, outputNames;
  for (uint32_t i = 0; i < numTensors; ++i) {
    bool isInput = i < desc->num_inputs;
    const char *kind = isInput ? "input" : "output";
    uint32_t index = isInput ? i : i - desc->num_inputs;
    TensorSpec spec;
    if (!readTensorDesc(desc->tensors[i], kind, index, spec, error))
      return false;
    // Names only need to be unique within their list: ONNX allows a graph
    // input to be forwarded directly as an output of the same name.
    std::set<std::string> &names = isInput ? inputNames : outputNames;
    if (!names.insert(spec.name).second) {
      error = "duplicate " + std::string(kind) + " name '" + spec.name + "'";
      return false;
    }
    (isInput ? info.inputs : info.outputs).push_back(std::move(spec));
  }
  if (desc->num_weights > kMaxTensors) {
    error = "the model declares " + std::to_string(desc->num_weights) +
            " weights (at most " + std::to_string(kMaxTensors) + ")";
    return false;
  }
  if (desc->num_weights > 0) {
    if (!desc->weights || !desc->weights_file) {
      error = "the model declares weights but no weight table or file";
      return false;
    }
    size_t fileLength = strnlen(desc->weights_file, kMaxNameBytes);
    info.weightsFile.assign(desc->weights_file, fileLength);
    if (fileLength == 0 || fileLength == kMaxNameBytes ||
        info.weightsFile.find('/') != std::string::npos) {
      error = "the weights file '" + info.weightsFile +
              "' is not a file name in the model's folder";
      return false;
    }
    info.weightsFingerprint = desc->weights_fingerprint;
    info.weightsBytes = desc->weights_bytes;
    uint64_t end = sizeof(ridge_weights_header);
    for (uint32_t i = 0; i < desc->num_weights; ++i) {
      const ridge_weight_desc &w = desc->weights[i];
      std::string which = "weight " + std::to_string(i);
      if (!w.name || !w.address) {
        error = which + " has a null name or address slot";
        return false;
      }
      WeightSpec spec;
      spec.name.assign(w.name, strnlen(w.name, kMaxNameBytes));
      spec.address = w.address;
      spec.offset = w.offset;
      spec.bytes = w.bytes;
      // In order and inside the file, so that no region overlaps another.
      if (w.offset < end || w.bytes > desc->weights_bytes ||
          w.offset > desc->weights_bytes - w.bytes) {
        error = which + " ('" + spec.name + "') at bytes [" +
                std::to_string(w.offset) + ", +" + std::to_string(w.bytes) +
                ") overlaps another or leaves the " +
                std::to_string(desc->weights_bytes) + "-byte weights file";
        return false;
      }
      end = w.offset + w.bytes;
      info.weights.push_back(std::move(spec));
    }
  }
  bool isGpu = info.target != "cpu";
  if (!isGpu && (desc->num_device_weights || desc->device_weights_bytes ||
                 desc->arena_bytes)) {
    error = "a cpu model declares device memory";
    return false;
  }
  if (desc->num_device_weights > kMaxTensors) {
    error = "the model declares " + std::to_string(desc->num_device_weights) +
            " device weights (at most " + std::to_string(kMaxTensors) + ")";
    return false;
  }
  if (desc->num_device_weights > 0 && !desc->device_weights) {
    error = "the model declares device weights but no table of them";
    return false;
  }
  if (desc->arena_zeroed_bytes > desc->arena_bytes) {
    error = "the model declares " + std::to_string(desc->arena_zeroed_bytes) +
            " zeroed bytes in an arena of " + std::to_string(desc->arena_bytes);
    return false;
  }
  info.deviceWeightsBytes = desc->device_weights_bytes;
  info.arenaBytes = desc->arena_bytes;
  info.arenaZeroedBytes = desc->arena_zeroed_bytes;
  info.peakLiveBytes = desc->peak_live_bytes;
  for (uint32_t i = 0; i < desc->num_device_weights; ++i) {
    const ridge_device_weight_desc &w = desc->device_weights[i];
    std::string which = "device weight " + std::to_string(i);
    if (!w.name || !w.source) {
      error = which + " has a null name or source";
      return false;
    }
    DeviceWeightSpec spec;
    spec.name.assign(w.name, strnlen(w.name, kMaxNameBytes));
    spec.source = w.source;
    spec.offset = w.offset;
    spec.bytes = w.bytes;
    if (w.bytes > desc->device_weights_bytes ||
        w.offset > desc->device_weights_bytes - w.bytes) {
      error = which + " ('" + spec.name + "') at bytes [" +
              std::to_string(w.offset) + ", +" + std::to_string(w.bytes) +
              ") leaves the " + std::to_string(desc->device_weights_bytes) +
              "-byte device weights block";
      return false;
    }
    info.deviceWeights.push_back(std::move(spec));
  }
  out = std::move(info);
  return true;
}

bool ridge::rt::WeightsMapping::map(const ModelInfo &info,
                                    const std::string &dir,
                                    std::string &error) {
  if (info.weights.empty())
    return true;
  std::string path = (dir.empty() ? "." : dir) + "/" + info.weightsFile;
  auto fail = [&](const std::string &msg) {
    error = "weights file '" + path + "': " + msg;
    return false;
  };
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st;
  if (fstat(fd, &st) != 0)
    return fail(std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail("not a regular file");
  ridge_weights_header header;
  if (static_cast<uint64_t>(st.st_size) < sizeof(header) ||
      pread(fd, &header, sizeof(header), 0) !=
          static_cast<ssize_t>(sizeof(header)) ||
      std::memcmp(header.magic, RIDGE_WEIGHTS_MAGIC, sizeof(header.magic)) != 0)
    return fail("not a Ridgeline weights file");
  if (header.version != RIDGE_WEIGHTS_VERSION)
    return fail("weights file version " + std::to_string(header.version) +
                " (this runtime reads version " +
                std::to_string(RIDGE_WEIGHTS_VERSION) + ")");
  if (header.fingerprint != info.weightsFingerprint ||
      header.data_bytes != info.weightsBytes)
    return fail("it holds the weights of another compile (fingerprint or "
                "size differs from the model's); recompile, or copy the "
                "weights file written with this model");
  if (static_cast<uint64_t>(st.st_size) != info.weightsBytes)
    return fail("it has " + std::to_string(st.st_size) +
                " bytes, the model expects " +
                std::to_string(info.weightsBytes) + " (truncated or extended)");
  // Mapped, not read: pages load on first use and are shared with every
  // process that maps the same file; read-only, so that a stray write
  // faults instead of changing a weight.
  void *base = mmap(nullptr, info.weightsBytes, PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED)
    return fail(std::string("cannot map it: ") + std::strerror(errno));
  unmap();
  data = base;
  bytes = info.weightsBytes;
  for (const WeightSpec &w : info.weights)
    *w.address = static_cast<const char *>(base) + w.offset;
  return true;
}

void ridge::rt::WeightsMapping::unmap() {
  if (data)
    munmap(const_cast<void *>(data), bytes);
  data = nullptr;
  bytes = 0;
}

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

namespace {
constexpr const char *kDescribeSymbol = "ridge_model_describe";
// The entry point of ABI version 1, a text manifest.
constexpr const char *kOldManifestSymbol = "ridge_model_manifest";
constexpr const char *kRunSymbol = "ridge_model_run";

std::string dlerrorString() {
  const char *msg = dlerror();
  return msg ? msg : "unknown dynamic loader error";
}
} // namespace

namespace {
/// The loaded model objects of the process: the device their kernels were
/// loaded on (by their static constructors, which run at the first dlopen
/// only) and how many Models hold each.
struct LoadedObject {
  int device = 0;
  int models = 0;
};
std::mutex loadedMutex;
std::map<void *, LoadedObject> &getLoadedObjects() {
  static auto *objects = new std::map<void *, LoadedObject>();
  return *objects;
}
} // namespace

std::unique_ptr<Model> Model::load(const std::string &soPath,
                                   std::string &error, int device) {
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

  if (device < 0)
    return fail("CUDA device " + std::to_string(device) + " is not an ordinal");
  // Static constructors of GPU models load their kernel modules through
  // mgpuModuleLoad*, on this thread's device; start from a clean slate so
  // their errors are ours.
  takeGpuError();
  dlerror();
  void *handle;
  {
    ThreadDeviceScope scope(device);
    handle = dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  std::string ctorGpuError = takeGpuError();
  if (handle) {
    std::lock_guard<std::mutex> lock(loadedMutex);
    LoadedObject &loaded = getLoadedObjects()[handle];
    if (loaded.models > 0 && loaded.device != device) {
      int first = loaded.device;
      dlclose(handle);
      return fail("already loaded in this process for CUDA device " +
                  std::to_string(first) +
                  ", whose kernels it keeps; it cannot also run on device " +
                  std::to_string(device) + " (load a copy of the file)");
    }
    loaded.device = device;
    ++loaded.models;
  }
  if (!handle) {
    std::string msg = "cannot load model: " + dlerrorString();
    if (msg.find("undefined symbol: mgpu") != std::string::npos)
      msg += " (the GPU runtime wrappers are exported by libridge_runtime.so, "
             "which must be loaded into the global scope before the model)";
    return fail(msg);
  }

  auto model = std::unique_ptr<Model>(new Model());
  model->soPath = soPath;
  model->device = device;
  model->handle = handle; // From here on ~Model() dlclose()s it.
  model->loadGpuError = std::move(ctorGpuError);

  dlerror();
  auto describeFn = reinterpret_cast<const ridge_model_desc *(*)()>(
      dlsym(handle, kDescribeSymbol));
  if (!describeFn) {
    if (dlsym(handle, kOldManifestSymbol))
      return fail("the model was built for model ABI version 1 (a text "
                  "manifest); this runtime reads version " +
                  std::to_string(RIDGE_MODEL_ABI_VERSION) +
                  ": recompile the model with this Ridgeline");
    return fail(std::string("not a Ridgeline model: missing symbol '") +
                kDescribeSymbol + "'");
  }
  model->entry = reinterpret_cast<RunFn>(dlsym(handle, kRunSymbol));
  if (!model->entry)
    return fail(std::string("not a Ridgeline model: missing symbol '") +
                kRunSymbol + "'");

  std::string descError;
  if (!readModelDesc(describeFn(), model->info, descError))
    return fail("invalid model descriptor: " + descError);
  size_t slash = soPath.rfind('/');
  if (!model->weights.map(model->info,
                          slash == std::string::npos ? "."
                                                     : soPath.substr(0, slash),
                          descError))
    return fail(descError);
  return model;
}

Model::~Model() {
  // The session's graph and buffers refer to the kernels of the object.
  session.reset();
  if (handle) {
    {
      std::lock_guard<std::mutex> lock(loadedMutex);
      auto &objects = getLoadedObjects();
      auto it = objects.find(handle);
      if (it != objects.end() && --it->second.models == 0)
        objects.erase(it);
    }
    dlclose(handle);
  }
  // After the model: nothing reads the weights any more.
  weights.unmap();
}

bool Model::checkBuffers(const std::vector<void *> &hostBuffers,
                         std::string &error) const {
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
  return true;
}

bool Model::run(const std::vector<void *> &hostBuffers, std::string &error) {
  if (!checkBuffers(hostBuffers, error))
    return false;
  // The entry point takes a non-const void **.
  std::vector<void *> buffers(hostBuffers);
  std::lock_guard<std::mutex> lock(runMutex);
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

bool Model::runGpu(std::vector<void *> &buffers, std::string &error) {
  if (!session) {
    session = Session::create(*this, error, sessionOptions);
    if (!session)
      return false;
  }
  if (!session->run(buffers, error))
    return false;
  // Benchmark runs: the data stays in the session's device buffers.
  std::vector<void *> device;
  for (size_t i = 0; i < buffers.size(); ++i)
    device.push_back(session->getDeviceBuffer(i));
  for (int i = 0; i < timedRuns; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (!session->enqueue(device, nullptr, error) ||
        !session->synchronize(error))
      return false;
    runTimes.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
  return true;
}
