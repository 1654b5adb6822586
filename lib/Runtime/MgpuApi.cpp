//===- MgpuApi.cpp - MLIR CUDA runtime-wrapper ABI on CudaDriver ----------===//
//
// Host code lowered by MLIR's gpu-to-llvm / gpu.binary translation calls the
// mgpu* functions of MLIR's CUDA runtime wrappers
// (mlir/lib/ExecutionEngine/CudaRuntimeWrappers.cpp). Debian does not ship
// that library, and it links CUDA at build time, so this file implements the
// same C ABI on top of the dlopen()ed driver.
//
// Signatures follow what MLIR 22 emits (checked against mlir-translate-22 and
// mlir-opt-22 --gpu-to-llvm output):
//   ptr  mgpuModuleLoad(ptr, i64)         from a global constructor
//   ptr  mgpuModuleLoadJIT(ptr, i32)      NUL-terminated PTX, O level
//   void mgpuLaunchKernel(ptr, i64 x6, i32, ptr, ptr, ptr, i64)
//   void mgpuLaunchClusterKernel(ptr, i64 x9, i32, ptr, ptr, ptr)
//   ptr  mgpuMemAlloc(i64, ptr, i8)
//
// Differences from upstream, on purpose:
//  * Errors never abort: each failure is recorded as the thread's sticky
//    GPU error, which Model::run and rt::Session turn into their error
//    result, so that a tool prints it once. Only teardown failures (module
//    unloads in static destructors, which no run reports) and a failed
//    JIT's full log are printed to stderr.
//  * Every entry point makes the default device's primary context current
//    (upstream pushes/pops it in some entry points only).
//  * After the first error of a run (the thread's sticky error), launches,
//    copies, memsets and allocations are not issued: a kernel launched on
//    the null pointer of a failed allocation would poison the context for
//    every later run. takeGpuError says how many were skipped.
//  * A missing driver is recorded without printing: loading a GPU model on a
//    machine without a GPU runs the module-load constructors, and that is
//    reported once, by Model::run, as "no NVIDIA GPU available".
//
// Kernel modules are loaded by the model's static constructors, i.e. during
// dlopen(): every mgpu* symbol must therefore already be resolvable in the
// global scope at that point (see CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Runtime/Runtime.h"

#include "CudaDriver.h"
#include "Fatbin.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

using namespace ridge::rt;
using namespace ridge::rt::cu;

#define RIDGE_MGPU_EXPORT extern "C" __attribute__((visibility("default")))

//===----------------------------------------------------------------------===//
// Sticky errors
//===----------------------------------------------------------------------===//

namespace {
// Trivially destructible on purpose: model static destructors (module
// unloads) can run after this thread's C++ thread_local destructors at exit.
thread_local bool tlsHasError = false;
thread_local char tlsError[2048];

/// Device used by the wrappers on this thread (mgpuSetDefaultDevice).
thread_local int32_t tlsDefaultDevice = 0;

/// Work (launches, copies, allocations) the compiled host code asked for on
/// this thread after the run had already failed, and that was not issued.
thread_local uint64_t tlsSkippedWork = 0;
} // namespace

void ridge::rt::recordGpuError(const std::string &message) {
  if (tlsHasError)
    return; // Keep the first error: later ones are usually its fallout.
  std::snprintf(tlsError, sizeof(tlsError), "%s", message.c_str());
  tlsHasError = true;
}

bool ridge::rt::hasGpuError() { return tlsHasError; }

std::string ridge::rt::takeGpuError() {
  if (!tlsHasError)
    return std::string();
  tlsHasError = false;
  std::string error(tlsError);
  if (tlsSkippedWork)
    error += " (" + std::to_string(tlsSkippedWork) +
             " later launches, copies and allocations were not issued)";
  tlsSkippedWork = 0;
  return error;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {
/// Records one line naming the wrapper and the problem as the thread's
/// error. Nothing is printed: the run that made the call returns the error,
/// and the tool reports it once.
void report(const char *fn, const std::string &problem) {
  recordGpuError(std::string(fn) + ": " + problem);
}

/// Returns the driver with the default device's primary context current on
/// the calling thread, or nullptr after recording why.
CudaDriver *enter(const char *fn) {
  std::string why;
  CudaDriver *driver = CudaDriver::get(why);
  if (!driver) {
    recordGpuError(std::string(fn) + ": no NVIDIA GPU available: " + why);
    return nullptr;
  }
  std::string error;
  if (!driver->makeCurrent(tlsDefaultDevice, error)) {
    report(fn, error);
    return nullptr;
  }
  return driver;
}

/// Whether the run on this thread has failed: then no more work is issued.
/// A launch after a failed allocation would read a null buffer and leave
/// the context poisoned (an illegal address) for every later run of the
/// process; the first error is what the run reports.
bool skipAfterError() {
  if (!hasGpuError())
    return false;
  ++tlsSkippedWork;
  return true;
}

/// Reports `result` if it is an error. Returns true on success.
bool ok(CudaDriver *driver, const char *fn, const char *call, CUresult result) {
  if (result == CUDA_SUCCESS)
    return true;
  report(fn, std::string(call) + " failed: " + driver->errorString(result));
  return false;
}

/// Like ok(), for teardown calls: after the driver has shut down at process
/// exit (CUDA_ERROR_DEINITIALIZED) there is nothing left to release, and
/// complaining would only add noise to every exit.
bool okTeardown(CudaDriver *driver, const char *fn, const char *call,
                CUresult result) {
  if (result == CUDA_ERROR_DEINITIALIZED || result == CUDA_SUCCESS)
    return true;
  // Model unloads run from static destructors, where no run returns the
  // error: it is printed.
  std::fprintf(stderr, "ridge-runtime: %s: %s failed: %s\n", fn, call,
               driver->errorString(result).c_str());
  return ok(driver, fn, call, result);
}

/// For teardown wrappers: the driver with the context current, or nullptr
/// (silently) when there is no driver, since then nothing was created.
CudaDriver *enterTeardown(const char *fn) {
  std::string why;
  if (!CudaDriver::get(why))
    return nullptr;
  return enter(fn);
}

bool isBinaryImage(const char *data, size_t size) {
  // ELF cubin, or a fatbin (magic 0xBA55ED50, little-endian).
  static const unsigned char kElf[4] = {0x7f, 'E', 'L', 'F'};
  static const unsigned char kFatbin[4] = {0x50, 0xed, 0x55, 0xba};
  return size >= 4 && (std::memcmp(data, kElf, 4) == 0 ||
                       std::memcmp(data, kFatbin, 4) == 0);
}

/// Loads a cubin/fatbin or PTX image. `optLevel` < 0 leaves the PTX JIT
/// optimization level at the driver default (4).
CUmodule loadModule(const char *fn, const void *data, size_t size,
                    int optLevel) {
  CudaDriver *driver = enter(fn);
  if (!driver)
    return nullptr;
  if (!data || size == 0) {
    report(fn, "empty GPU binary");
    return nullptr;
  }
  const CudaDriver::Api &api = driver->api();
  const char *bytes = static_cast<const char *>(data);
  CUmodule module = nullptr;

  // RIDGE_PTX_JIT=1: JIT-compile the PTX of a fatbin even where its cubin
  // would load (to compare load times, or to rule the cubin out).
  std::string fatbinPtx;
  if (isFatbin(bytes) && isEnvFlagSet("RIDGE_PTX_JIT")) {
    std::string why = extractFatbinPtx(bytes, fatbinPtx);
    if (!why.empty()) {
      report(fn, "RIDGE_PTX_JIT=1: " + why);
      return nullptr;
    }
    bytes = fatbinPtx.c_str();
    data = bytes;
    size = fatbinPtx.size() + 1;
  }
  char log[8192];
  log[0] = '\0';
  if (isBinaryImage(bytes, size)) {
    // A fatbin whose cubin does not fit the device is JIT-compiled from its
    // PTX by the driver: keep the log of that.
    int options[2] = {CU_JIT_ERROR_LOG_BUFFER,
                      CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[2] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log)))};
    CUresult result = api.cuModuleLoadDataEx(&module, data, 2, options, values);
    if (result != CUDA_SUCCESS) {
      log[sizeof(log) - 1] = '\0';
      std::string problem =
          "cuModuleLoadDataEx failed: " + driver->errorString(result);
      if (log[0])
        problem += "; JIT log: " + std::string(log, std::strcspn(log, "\n"));
      report(fn, problem);
      return nullptr;
    }
    return module;
  }

  // PTX text. The driver reads up to the first NUL, and the embedded blob is
  // only NUL-terminated when MLIR chose to store it that way: copy it when
  // the terminator is missing rather than let the driver read past the end.
  std::string copy;
  const void *image = data;
  if (bytes[size - 1] != '\0') {
    copy.assign(bytes, size);
    image = copy.c_str();
  }
  int options[3] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                    CU_JIT_OPTIMIZATION_LEVEL};
  int level = optLevel < 0 ? 0 : (optLevel > 4 ? 4 : optLevel);
  void *values[3] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log))),
                     reinterpret_cast<void *>(uintptr_t(level))};
  unsigned numOptions = optLevel < 0 ? 2 : 3;
  CUresult result =
      api.cuModuleLoadDataEx(&module, image, numOptions, options, values);
  if (result != CUDA_SUCCESS) {
    log[sizeof(log) - 1] = '\0';
    std::string problem =
        "cuModuleLoadDataEx (PTX JIT) failed: " + driver->errorString(result);
    if (log[0]) {
      // Keep the sticky message on one line; the full log goes to stderr.
      std::string firstLine(log, std::strcspn(log, "\n"));
      problem += "; ptxas: " + firstLine;
    }
    report(fn, problem);
    if (log[0] && std::strchr(log, '\n'))
      std::fprintf(stderr, "ridge-runtime: full JIT log:\n%s\n", log);
    return nullptr;
  }
  return module;
}

/// Converts MLIR's index-typed launch dims to the driver's unsigned int,
/// refusing values that would silently wrap.
bool launchDims(const char *fn, const intptr_t *dims, size_t n, unsigned *out) {
  static const char *const kNames[] = {"clusterX", "clusterY", "clusterZ",
                                       "gridX",    "gridY",    "gridZ",
                                       "blockX",   "blockY",   "blockZ"};
  size_t nameOffset = n == 9 ? 0 : 3;
  for (size_t i = 0; i < n; ++i) {
    if (dims[i] < 1 || static_cast<uintmax_t>(dims[i]) > UINT_MAX) {
      report(fn, std::string("invalid launch dimension ") +
                     kNames[nameOffset + i] + " = " +
                     std::to_string(static_cast<long long>(dims[i])));
      return false;
    }
    out[i] = static_cast<unsigned>(dims[i]);
  }
  return true;
}

/// Prepares `function` for `smem` bytes of dynamic shared memory. Beyond the
/// 48 KiB default a kernel must opt in explicitly, as upstream does.
bool prepareSharedMemory(CudaDriver *driver, const char *fn,
                         CUfunction function, int32_t smem) {
  if (smem < 0) {
    report(fn, "negative dynamic shared memory size " + std::to_string(smem));
    return false;
  }
  constexpr int32_t kDefaultLimit = 48 * 1024;
  if (smem <= kDefaultLimit)
    return true;
  int limit = driver->maxSharedMemoryOptin(tlsDefaultDevice);
  if (limit > 0 && smem > limit) {
    report(fn, "requested " + std::to_string(smem) +
                   " bytes of dynamic shared memory, but the device allows "
                   "at most " +
                   std::to_string(limit));
    return false;
  }
  return ok(
      driver, fn, "cuFuncSetAttribute",
      driver->api().cuFuncSetAttribute(
          function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
}
} // namespace

//===----------------------------------------------------------------------===//
// Modules and kernels
//===----------------------------------------------------------------------===//

RIDGE_MGPU_EXPORT CUmodule mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  return loadModule("mgpuModuleLoad", data, gpuBlobSize, /*optLevel=*/-1);
}

RIDGE_MGPU_EXPORT CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  // MLIR embeds assembly NUL-terminated and passes no size.
  size_t size = data ? std::strlen(static_cast<const char *>(data)) + 1 : 0;
  return loadModule("mgpuModuleLoadJIT", data, size, optLevel);
}

RIDGE_MGPU_EXPORT void mgpuModuleUnload(CUmodule module) {
  if (!module)
    return; // Loading failed earlier and was reported then.
  if (CudaDriver *driver = enterTeardown("mgpuModuleUnload"))
    okTeardown(driver, "mgpuModuleUnload", "cuModuleUnload",
               driver->api().cuModuleUnload(module));
}

//===----------------------------------------------------------------------===//
// Kernel times (setKernelProfiling)
//===----------------------------------------------------------------------===//

namespace {
/// Kernel names by function handle, and the times collected per name.
struct KernelTimes {
  std::mutex mutex;
  bool enabled = false;
  std::map<CUfunction, std::string> names;
  std::vector<KernelTime> times;
  std::map<std::string, size_t> index;
};
KernelTimes &getTimes() {
  // Never destroyed: module unloads run from static destructors at exit.
  static KernelTimes *times = new KernelTimes();
  return *times;
}

void nameKernel(CUfunction function, const char *name) {
  KernelTimes &times = getTimes();
  std::lock_guard<std::mutex> lock(times.mutex);
  times.names[function] = name ? name : "";
}

std::string getKernelName(CUfunction function) {
  KernelTimes &times = getTimes();
  std::lock_guard<std::mutex> lock(times.mutex);
  auto it = times.names.find(function);
  return it != times.names.end() ? it->second : std::string("?");
}

/// RIDGE_SYNC_LAUNCHES=1: wait for each kernel after its launch, so that a
/// fault (which a GPU reports at the next synchronization, for whichever
/// kernel) is reported with the kernel that made it. For debugging: it
/// serializes the host with the GPU and turns CUDA graphs off.
void checkLaunch(CudaDriver *driver, const char *fn, CUfunction function,
                 CUstream stream) {
  if (!isSyncingLaunches() || hasGpuError())
    return;
  CUresult result = driver->api().cuStreamSynchronize(stream);
  if (result != CUDA_SUCCESS)
    report(fn, "kernel '" + getKernelName(function) +
                   "' failed: " + driver->errorString(result));
}

/// Times one launch when profiling is on: an event before it, one after,
/// and a wait for the second when the launch has been issued.
class KernelTimer {
public:
  KernelTimer(CudaDriver *driver, const char *fn, CUfunction function,
              CUstream stream)
      : driver(driver), fn(fn), function(function) {
    KernelTimes &times = getTimes();
    {
      std::lock_guard<std::mutex> lock(times.mutex);
      if (!times.enabled)
        return;
    }
    const CudaDriver::Api &api = driver->api();
    if (!api.cuEventElapsedTime) {
      report(fn, "timing kernels needs cuEventElapsedTime");
      return;
    }
    if (!ok(driver, fn, "cuEventCreate", api.cuEventCreate(&start, 0)) ||
        !ok(driver, fn, "cuEventCreate", api.cuEventCreate(&stop, 0)) ||
        !ok(driver, fn, "cuEventRecord", api.cuEventRecord(start, stream)))
      return;
    this->stream = stream;
    active = true;
  }
  ~KernelTimer() {
    const CudaDriver::Api &api = driver->api();
    float milliseconds = 0;
    if (active &&
        ok(driver, fn, "cuEventRecord", api.cuEventRecord(stop, stream)) &&
        ok(driver, fn, "cuEventSynchronize", api.cuEventSynchronize(stop)) &&
        ok(driver, fn, "cuEventElapsedTime",
           api.cuEventElapsedTime(&milliseconds, start, stop))) {
      KernelTimes &times = getTimes();
      std::lock_guard<std::mutex> lock(times.mutex);
      std::string name = times.names.count(function) ? times.names[function]
                                                     : std::string("?");
      auto [it, inserted] = times.index.try_emplace(name, times.times.size());
      if (inserted)
        times.times.push_back(KernelTime{name, 0, 0});
      KernelTime &entry = times.times[it->second];
      ++entry.launches;
      entry.milliseconds += milliseconds;
    }
    if (start)
      api.cuEventDestroy(start);
    if (stop)
      api.cuEventDestroy(stop);
  }

private:
  CudaDriver *driver;
  const char *fn;
  CUfunction function;
  CUstream stream = nullptr;
  CUevent start = nullptr, stop = nullptr;
  bool active = false;
};
} // namespace

void ridge::rt::setKernelProfiling(bool enabled) {
  KernelTimes &times = getTimes();
  std::lock_guard<std::mutex> lock(times.mutex);
  times.enabled = enabled;
}

bool ridge::rt::isSyncingLaunches() {
  static const bool sync = isEnvFlagSet("RIDGE_SYNC_LAUNCHES");
  return sync;
}

bool ridge::rt::isKernelProfiling() {
  KernelTimes &times = getTimes();
  std::lock_guard<std::mutex> lock(times.mutex);
  return times.enabled;
}

std::vector<KernelTime> ridge::rt::getKernelTimes() {
  KernelTimes &times = getTimes();
  std::lock_guard<std::mutex> lock(times.mutex);
  return times.times;
}

void ridge::rt::resetKernelTimes() {
  KernelTimes &times = getTimes();
  std::lock_guard<std::mutex> lock(times.mutex);
  times.times.clear();
  times.index.clear();
}

RIDGE_MGPU_EXPORT CUfunction mgpuModuleGetFunction(CUmodule module,
                                                   const char *name) {
  const char *fn = "mgpuModuleGetFunction";
  CudaDriver *driver = enter(fn);
  if (!driver)
    return nullptr;
  if (!module) {
    report(fn, std::string("no GPU module to look up kernel '") +
                   (name ? name : "") +
                   "' in (loading the GPU binary failed earlier)");
    return nullptr;
  }
  CUfunction function = nullptr;
  if (!ok(driver, fn, "cuModuleGetFunction",
          driver->api().cuModuleGetFunction(&function, module, name)))
    return nullptr;
  nameKernel(function, name);
  return function;
}

// MLIR passes launch dims as index (intptr_t) rather than CUDA's unsigned
// int; `paramsCount` is informational (the driver reads the kernel's
// signature from the module).
RIDGE_MGPU_EXPORT void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                                        intptr_t gridY, intptr_t gridZ,
                                        intptr_t blockX, intptr_t blockY,
                                        intptr_t blockZ, int32_t smem,
                                        CUstream stream, void **params,
                                        void **extra, size_t paramsCount) {
  (void)paramsCount;
  const char *fn = "mgpuLaunchKernel";
  if (skipAfterError())
    return;
  CudaDriver *driver = enter(fn);
  if (!driver)
    return;
  if (!function) {
    report(fn, "null kernel function (the kernel lookup failed earlier)");
    return;
  }
  const intptr_t dims[] = {gridX, gridY, gridZ, blockX, blockY, blockZ};
  unsigned u[6];
  if (!launchDims(fn, dims, 6, u) ||
      !prepareSharedMemory(driver, fn, function, smem))
    return;
  {
    KernelTimer timer(driver, fn, function, stream);
    ok(driver, fn, "cuLaunchKernel",
       driver->api().cuLaunchKernel(function, u[0], u[1], u[2], u[3], u[4],
                                    u[5], static_cast<unsigned>(smem), stream,
                                    params, extra));
  }
  checkLaunch(driver, fn, function, stream);
}

// Thread-block-cluster launch (sm_90+), emitted for gpu.launch_func with a
// cluster size. MLIR 22 passes no paramsCount here.
RIDGE_MGPU_EXPORT void
mgpuLaunchClusterKernel(CUfunction function, intptr_t clusterX,
                        intptr_t clusterY, intptr_t clusterZ, intptr_t gridX,
                        intptr_t gridY, intptr_t gridZ, intptr_t blockX,
                        intptr_t blockY, intptr_t blockZ, int32_t smem,
                        CUstream stream, void **params, void **extra) {
  const char *fn = "mgpuLaunchClusterKernel";
  if (skipAfterError())
    return;
  CudaDriver *driver = enter(fn);
  if (!driver)
    return;
  if (!function) {
    report(fn, "null kernel function (the kernel lookup failed earlier)");
    return;
  }
  const CudaDriver::Api &api = driver->api();
  if (!api.cuLaunchKernelEx) {
    report(fn, "cluster launches need cuLaunchKernelEx (CUDA 12.0+ driver)");
    return;
  }
  const intptr_t dims[] = {clusterX, clusterY, clusterZ, gridX, gridY,
                           gridZ,    blockX,   blockY,   blockZ};
  unsigned u[9];
  if (!launchDims(fn, dims, 9, u) ||
      !prepareSharedMemory(driver, fn, function, smem))
    return;

  CUlaunchAttribute attrs[2];
  std::memset(attrs, 0, sizeof(attrs));
  attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attrs[0].value.clusterDim.x = u[0];
  attrs[0].value.clusterDim.y = u[1];
  attrs[0].value.clusterDim.z = u[2];
  attrs[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
  attrs[1].value.clusterSchedulingPolicyPreference =
      CU_CLUSTER_SCHEDULING_POLICY_SPREAD;

  CUlaunchConfig config;
  std::memset(&config, 0, sizeof(config));
  config.gridDimX = u[3];
  config.gridDimY = u[4];
  config.gridDimZ = u[5];
  config.blockDimX = u[6];
  config.blockDimY = u[7];
  config.blockDimZ = u[8];
  config.sharedMemBytes = static_cast<unsigned>(smem);
  config.hStream = stream;
  config.attrs = attrs;
  config.numAttrs = 2;

  // Cluster sizes above the portable 8 need an explicit opt-in.
  if (!ok(driver, fn, "cuFuncSetAttribute",
          api.cuFuncSetAttribute(
              function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
              1)))
    return;
  ok(driver, fn, "cuLaunchKernelEx",
     api.cuLaunchKernelEx(&config, function, params, extra));
  checkLaunch(driver, fn, function, stream);
}

//===----------------------------------------------------------------------===//
// Tensor maps (TMA)
//===----------------------------------------------------------------------===//

// The host code of an sm_90a tensor-core kernel whose operands are loaded by
// TMA (ridge-lower-mma-contractions, `mma_tma`) encodes each operand's tiled
// tensor map just before the launch, into 128 bytes of its own stack, and
// passes them by value: the kernel reads them as a `__grid_constant__`
// parameter, as CUTLASS's and Triton's do. Encoding touches no device state,
// so it is legal while a stream is being captured, and a captured graph keeps
// the parameter's bytes: no device copy of the map to keep alive or refresh.
//
// Dimensions and box sizes go innermost first (as cuTensorMapEncodeTiled
// takes them), `rank` of them used; strides are in bytes, for dimensions 1
// and up. Every element stride is 1; elements outside the tensor read as
// zeros (the k tail and the m|n edges of a tile).
RIDGE_MGPU_EXPORT void ridgeTensorMapEncodeTiled(
    void *map, void *base, int32_t dataType, int32_t rank, int64_t dim0,
    int64_t dim1, int64_t dim2, int64_t dim3, int64_t dim4, int64_t stride1,
    int64_t stride2, int64_t stride3, int64_t stride4, int32_t box0,
    int32_t box1, int32_t box2, int32_t box3, int32_t box4, int32_t swizzle) {
  const char *fn = "ridgeTensorMapEncodeTiled";
  if (map)
    std::memset(map, 0, sizeof(CUtensorMap));
  if (skipAfterError())
    return;
  CudaDriver *driver = enter(fn);
  if (!driver)
    return;
  const CudaDriver::Api &api = driver->api();
  if (!api.cuTensorMapEncodeTiled) {
    report(fn, "TMA tensor maps need cuTensorMapEncodeTiled (CUDA 12.0+ "
               "driver)");
    return;
  }
  if (rank < 1 || rank > 5) {
    report(fn,
           "tensor map rank " + std::to_string(rank) + " is outside [1, 5]");
    return;
  }
  const int64_t dims[] = {dim0, dim1, dim2, dim3, dim4};
  const int64_t strides[] = {stride1, stride2, stride3, stride4};
  const int32_t boxes[] = {box0, box1, box2, box3, box4};
  uint64_t globalDim[5], globalStrides[4];
  unsigned boxDim[5], elementStrides[5];
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] <= 0 || boxes[i] <= 0) {
      report(fn, "tensor map dimension " + std::to_string(i) + " of size " +
                     std::to_string(dims[i]) + ", box " +
                     std::to_string(boxes[i]));
      return;
    }
    globalDim[i] = static_cast<uint64_t>(dims[i]);
    boxDim[i] = static_cast<unsigned>(boxes[i]);
    elementStrides[i] = 1;
    if (i > 0)
      globalStrides[i - 1] = static_cast<uint64_t>(strides[i - 1]);
  }
  ok(driver, fn, "cuTensorMapEncodeTiled",
     api.cuTensorMapEncodeTiled(static_cast<CUtensorMap *>(map), dataType,
                                static_cast<unsigned>(rank), base, globalDim,
                                globalStrides, boxDim, elementStrides,
                                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

RIDGE_MGPU_EXPORT CUstream mgpuStreamCreate() {
  const char *fn = "mgpuStreamCreate";
  CudaDriver *driver = enter(fn);
  if (!driver)
    return nullptr;
  CUstream stream = nullptr;
  if (!ok(driver, fn, "cuStreamCreate",
          driver->api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING)))
    return nullptr;
  return stream;
}

RIDGE_MGPU_EXPORT void mgpuStreamDestroy(CUstream stream) {
  if (!stream)
    return; // Creation failed earlier; destroying the null stream is wrong.
  if (CudaDriver *driver = enterTeardown("mgpuStreamDestroy"))
    okTeardown(driver, "mgpuStreamDestroy", "cuStreamDestroy",
               driver->api().cuStreamDestroy(stream));
}

RIDGE_MGPU_EXPORT void mgpuStreamSynchronize(CUstream stream) {
  const char *fn = "mgpuStreamSynchronize";
  if (CudaDriver *driver = enter(fn))
    ok(driver, fn, "cuStreamSynchronize",
       driver->api().cuStreamSynchronize(stream));
}

RIDGE_MGPU_EXPORT void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  const char *fn = "mgpuStreamWaitEvent";
  CudaDriver *driver = enter(fn);
  if (!driver)
    return;
  if (!event) {
    report(fn, "null event (event creation failed earlier)");
    return;
  }
  ok(driver, fn, "cuStreamWaitEvent",
     driver->api().cuStreamWaitEvent(stream, event, /*flags=*/0));
}

RIDGE_MGPU_EXPORT CUevent mgpuEventCreate() {
  const char *fn = "mgpuEventCreate";
  CudaDriver *driver = enter(fn);
  if (!driver)
    return nullptr;
  CUevent event = nullptr;
  if (!ok(driver, fn, "cuEventCreate",
          driver->api().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING)))
    return nullptr;
  return event;
}

RIDGE_MGPU_EXPORT void mgpuEventDestroy(CUevent event) {
  if (!event)
    return;
  if (CudaDriver *driver = enterTeardown("mgpuEventDestroy"))
    okTeardown(driver, "mgpuEventDestroy", "cuEventDestroy",
               driver->api().cuEventDestroy(event));
}

RIDGE_MGPU_EXPORT void mgpuEventSynchronize(CUevent event) {
  const char *fn = "mgpuEventSynchronize";
  CudaDriver *driver = enter(fn);
  if (!driver)
    return;
  if (!event) {
    report(fn, "null event (event creation failed earlier)");
    return;
  }
  ok(driver, fn, "cuEventSynchronize", driver->api().cuEventSynchronize(event));
}

RIDGE_MGPU_EXPORT void mgpuEventRecord(CUevent event, CUstream stream) {
  const char *fn = "mgpuEventRecord";
  CudaDriver *driver = enter(fn);
  if (!driver)
    return;
  if (!event) {
    report(fn, "null event (event creation failed earlier)");
    return;
  }
  ok(driver, fn, "cuEventRecord", driver->api().cuEventRecord(event, stream));
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

// Allocation is synchronous (cuMemAlloc), like upstream; `stream` only orders
// the asynchronous lowering and is not needed for correctness here.
RIDGE_MGPU_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream,
                                     bool isHostShared) {
  (void)stream;
  const char *fn = "mgpuMemAlloc";
  if (sizeBytes == 0)
    return nullptr; // Upstream behaviour: an empty memref needs no storage.
  if (skipAfterError())
    return nullptr;
  CudaDriver *driver = enter(fn);
  if (!driver)
    return nullptr;
  CUdeviceptr ptr = 0;
  CUresult result = isHostShared ? driver->api().cuMemAllocManaged(
                                       &ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL)
                                 : driver->api().cuMemAlloc(&ptr, sizeBytes);
  if (result != CUDA_SUCCESS) {
    report(fn, std::string(isHostShared ? "cuMemAllocManaged" : "cuMemAlloc") +
                   "(" + std::to_string(sizeBytes) +
                   " bytes) failed: " + driver->errorString(result));
    return nullptr;
  }
  return reinterpret_cast<void *>(ptr);
}

RIDGE_MGPU_EXPORT void mgpuMemFree(void *ptr, CUstream stream) {
  (void)stream;
  if (!ptr)
    return;
  if (CudaDriver *driver = enterTeardown("mgpuMemFree"))
    okTeardown(driver, "mgpuMemFree", "cuMemFree",
               driver->api().cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)));
}

// Unified addressing lets the driver infer the copy direction.
RIDGE_MGPU_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                                  CUstream stream) {
  const char *fn = "mgpuMemcpy";
  if (sizeBytes == 0 || skipAfterError())
    return;
  if (CudaDriver *driver = enter(fn))
    ok(driver, fn, "cuMemcpyAsync",
       driver->api().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                   reinterpret_cast<CUdeviceptr>(src),
                                   sizeBytes, stream));
}

// `count` is in 32-bit elements, not bytes.
RIDGE_MGPU_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                                    CUstream stream) {
  const char *fn = "mgpuMemset32";
  if (count == 0 || skipAfterError())
    return;
  if (CudaDriver *driver = enter(fn))
    ok(driver, fn, "cuMemsetD32Async",
       driver->api().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                      count, stream));
}

// `count` is in 16-bit elements, not bytes.
RIDGE_MGPU_EXPORT void mgpuMemset16(void *dst, unsigned short value,
                                    size_t count, CUstream stream) {
  const char *fn = "mgpuMemset16";
  if (count == 0 || skipAfterError())
    return;
  if (CudaDriver *driver = enter(fn))
    ok(driver, fn, "cuMemsetD16Async",
       driver->api().cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                      count, stream));
}

RIDGE_MGPU_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  const char *fn = "mgpuMemHostRegister";
  if (!ptr || sizeBytes == 0)
    return;
  if (CudaDriver *driver = enter(fn))
    ok(driver, fn, "cuMemHostRegister",
       driver->api().cuMemHostRegister(ptr, sizeBytes, /*flags=*/0));
}

RIDGE_MGPU_EXPORT void mgpuMemHostUnregister(void *ptr) {
  if (!ptr)
    return;
  if (CudaDriver *driver = enterTeardown("mgpuMemHostUnregister"))
    okTeardown(driver, "mgpuMemHostUnregister", "cuMemHostUnregister",
               driver->api().cuMemHostUnregister(ptr));
}

namespace {
// MLIR's StridedMemRefType<T, N> is {T *allocated, T *aligned, int64_t
// offset, int64_t sizes[N], int64_t strides[N]}: on a 64-bit host, eight-byte
// words 1 and 2 hold the aligned pointer and offset, and the sizes start at
// word 3. Read through memcpy since N is only known at run time.
int64_t memrefWord(const void *descriptor, size_t index) {
  int64_t word;
  std::memcpy(&word, static_cast<const char *>(descriptor) + 8 * index, 8);
  return word;
}

void *memrefData(const void *descriptor, int64_t elementSizeBytes) {
  static_assert(sizeof(void *) == 8, "memref descriptors assume 64-bit");
  char *aligned;
  std::memcpy(&aligned, static_cast<const char *>(descriptor) + 8, 8);
  return aligned + memrefWord(descriptor, 2) * elementSizeBytes;
}
} // namespace

// gpu.host_register lowering: registers a dense memref's data.
RIDGE_MGPU_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                                 int64_t elementSizeBytes) {
  if (!descriptor || rank < 0)
    return;
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i)
    count *= memrefWord(descriptor, 3 + static_cast<size_t>(i));
  mgpuMemHostRegister(memrefData(descriptor, elementSizeBytes),
                      static_cast<uint64_t>(count * elementSizeBytes));
}

RIDGE_MGPU_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank,
                                                   void *descriptor,
                                                   int64_t elementSizeBytes) {
  (void)rank;
  if (descriptor)
    mgpuMemHostUnregister(memrefData(descriptor, elementSizeBytes));
}

RIDGE_MGPU_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  tlsDefaultDevice = device;
}

int ridge::rt::getThreadDevice() { return tlsDefaultDevice; }
void ridge::rt::setThreadDevice(int ordinal) { tlsDefaultDevice = ordinal; }
