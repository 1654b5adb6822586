//===- CudaDriver.cpp - Run-time binding to libcuda.so.1 ------------------===//
//
// Ridgeline never links against CUDA: the driver is dlopen()ed the first time
// a GPU model needs it, so CPU-only machines run CPU models with the same
// binaries, and a missing driver is an error message instead of a loader
// failure.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Runtime/Runtime.h"

#include "CudaDriver.h"

#include <atomic>

#include <cstdlib>
#include <dlfcn.h>
#include <string_view>

#include <mutex>

using namespace ridge::rt;
using namespace ridge::rt::cu;

namespace {
/// Guards the lazily retained primary contexts. A plain global: std::mutex
/// has a constexpr constructor and a trivial destructor, so it is usable from
/// other libraries' static constructors and destructors.
std::mutex retainMutex;

/// Result of the one-time initialization, shared by every get() call.
struct DriverState {
  CudaDriver *driver = nullptr; // Null unless initialization succeeded.
  CudaDriver *instance = nullptr;
  std::string whyNot;
};

/// Loads `name` into `fn`. Returns false (and names the symbol in `missing`)
/// when a required symbol is absent.
template <typename Fn>
bool bind(void *handle, const char *name, Fn &fn, std::string &missing,
          bool required = true) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn || !required)
    return true;
  if (missing.empty())
    missing = name;
  return false;
}
} // namespace

CudaDriver *CudaDriver::get(std::string &whyNot) {
  // Heap-allocated and never freed on purpose: model .so static destructors
  // (kernel module unloads) may run after this library's static destructors
  // at exit, and they must still find a live driver object.
  static DriverState *state = [] {
    auto *s = new DriverState();
    // Kept even on failure: libcuda may already be loaded and must not be
    // unloaded (the driver does not support it).
    s->instance = new CudaDriver();
    if (s->instance->init(s->whyNot))
      s->driver = s->instance;
    return s;
  }();
  if (!state->driver)
    whyNot = state->whyNot;
  return state->driver;
}

//===----------------------------------------------------------------------===//
// Driver call counts (getDriverCallCounts)
//===----------------------------------------------------------------------===//

namespace {
/// The bound entry points the counting ones forward to.
CudaDriver::Api rawApi;
std::atomic<uint64_t> numAllocations{0}, allocatedBytes{0}, numFrees{0},
    numHostToDevice{0}, hostToDeviceBytes{0}, numDeviceToHost{0},
    deviceToHostBytes{0}, numDeviceCopies{0}, deviceCopyBytes{0},
    numLaunches{0}, numModuleLoads{0}, numGraphLaunches{0};

CUresult countMemAlloc(CUdeviceptr *pointer, size_t bytes) {
  ++numAllocations;
  allocatedBytes += bytes;
  return rawApi.cuMemAlloc(pointer, bytes);
}
CUresult countMemAllocManaged(CUdeviceptr *pointer, size_t bytes,
                              unsigned flags) {
  ++numAllocations;
  allocatedBytes += bytes;
  return rawApi.cuMemAllocManaged(pointer, bytes, flags);
}
CUresult countMemFree(CUdeviceptr pointer) {
  ++numFrees;
  return rawApi.cuMemFree(pointer);
}
CUresult countMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes) {
  ++numHostToDevice;
  hostToDeviceBytes += bytes;
  return rawApi.cuMemcpyHtoD(dst, src, bytes);
}
CUresult countMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes) {
  ++numDeviceToHost;
  deviceToHostBytes += bytes;
  return rawApi.cuMemcpyDtoH(dst, src, bytes);
}
CUresult countMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes,
                              CUstream stream) {
  ++numHostToDevice;
  hostToDeviceBytes += bytes;
  return rawApi.cuMemcpyHtoDAsync(dst, src, bytes, stream);
}
CUresult countMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes,
                              CUstream stream) {
  ++numDeviceToHost;
  deviceToHostBytes += bytes;
  return rawApi.cuMemcpyDtoHAsync(dst, src, bytes, stream);
}
CUresult countGraphLaunch(CUgraphExec graph, CUstream stream) {
  ++numGraphLaunches;
  return rawApi.cuGraphLaunch(graph, stream);
}
CUresult countMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  ++numDeviceCopies;
  deviceCopyBytes += bytes;
  return rawApi.cuMemcpyDtoD(dst, src, bytes);
}
/// The compiled host code's copies (unified addressing: the direction is
/// the driver's to infer); counted as device copies unless the runtime
/// made them.
CUresult countMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                          CUstream stream) {
  ++numDeviceCopies;
  deviceCopyBytes += bytes;
  return rawApi.cuMemcpyAsync(dst, src, bytes, stream);
}
CUresult countLaunchKernel(CUfunction function, unsigned gx, unsigned gy,
                           unsigned gz, unsigned bx, unsigned by, unsigned bz,
                           unsigned smem, CUstream stream, void **params,
                           void **extra) {
  ++numLaunches;
  return rawApi.cuLaunchKernel(function, gx, gy, gz, bx, by, bz, smem, stream,
                               params, extra);
}
CUresult countLaunchKernelEx(const CUlaunchConfig *config, CUfunction function,
                             void **params, void **extra) {
  ++numLaunches;
  return rawApi.cuLaunchKernelEx(config, function, params, extra);
}
CUresult countModuleLoadData(CUmodule *module, const void *image) {
  ++numModuleLoads;
  return rawApi.cuModuleLoadData(module, image);
}
CUresult countModuleLoadDataEx(CUmodule *module, const void *image,
                               unsigned count, int *options, void **values) {
  ++numModuleLoads;
  return rawApi.cuModuleLoadDataEx(module, image, count, options, values);
}
} // namespace

DriverCallCounts ridge::rt::getDriverCallCounts() {
  DriverCallCounts counts;
  counts.allocations = numAllocations;
  counts.allocatedBytes = allocatedBytes;
  counts.frees = numFrees;
  counts.hostToDevice = numHostToDevice;
  counts.hostToDeviceBytes = hostToDeviceBytes;
  counts.deviceToHost = numDeviceToHost;
  counts.deviceToHostBytes = deviceToHostBytes;
  counts.deviceCopies = numDeviceCopies;
  counts.deviceCopyBytes = deviceCopyBytes;
  counts.launches = numLaunches;
  counts.moduleLoads = numModuleLoads;
  counts.graphLaunches = numGraphLaunches;
  return counts;
}

void ridge::rt::resetDriverCallCounts() {
  for (std::atomic<uint64_t> *counter :
       {&numAllocations, &allocatedBytes, &numFrees, &numHostToDevice,
        &hostToDeviceBytes, &numDeviceToHost, &deviceToHostBytes,
        &numDeviceCopies, &deviceCopyBytes, &numLaunches, &numModuleLoads,
        &numGraphLaunches})
    *counter = 0;
}

void CudaDriver::countCalls() {
  rawApi = fns;
  fns.cuMemAlloc = countMemAlloc;
  fns.cuMemAllocManaged = countMemAllocManaged;
  fns.cuMemFree = countMemFree;
  fns.cuMemcpyHtoD = countMemcpyHtoD;
  fns.cuMemcpyDtoH = countMemcpyDtoH;
  fns.cuMemcpyDtoD = countMemcpyDtoD;
  fns.cuMemcpyAsync = countMemcpyAsync;
  fns.cuMemcpyHtoDAsync = countMemcpyHtoDAsync;
  fns.cuMemcpyDtoHAsync = countMemcpyDtoHAsync;
  if (fns.cuGraphLaunch)
    fns.cuGraphLaunch = countGraphLaunch;
  fns.cuLaunchKernel = countLaunchKernel;
  if (fns.cuLaunchKernelEx)
    fns.cuLaunchKernelEx = countLaunchKernelEx;
  fns.cuModuleLoadData = countModuleLoadData;
  fns.cuModuleLoadDataEx = countModuleLoadDataEx;
}

bool CudaDriver::init(std::string &whyNot) {
  // RIDGE_DEVICE=emulator[:sm_NN[a]] binds the PTX emulator's driver table
  // (EmulatedDriver.cpp) instead of libcuda.so.1; everything else is the
  // same code path.
  const char *selected = std::getenv("RIDGE_DEVICE");
  std::string device = selected ? selected : "";
  if (device.rfind("emulator", 0) == 0) {
    int cc = 90;
    bool archSpecific = false;
    if (device != "emulator" &&
        (device[8] != ':' || !parseGpuTarget(std::string_view(device).substr(9),
                                             cc, archSpecific))) {
      whyNot = "RIDGE_DEVICE='" + device +
               "': expected emulator or emulator:sm_NN (sm_80, sm_90a, ...)";
      return false;
    }
    fns = getEmulatedDriverApi(cc);
    emulated = true;
  } else if (!device.empty() && device != "gpu") {
    whyNot =
        "RIDGE_DEVICE='" + device + "' is neither 'gpu' nor 'emulator[:sm_NN]'";
    return false;
  } else if (!bindLibcuda(whyNot)) {
    return false;
  }
  countCalls();
  return initDevices(whyNot);
}

bool CudaDriver::bindLibcuda(std::string &whyNot) {
  dlerror();
  handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *msg = dlerror();
    whyNot = std::string("cannot load libcuda.so.1 (the NVIDIA driver): ") +
             (msg ? msg : "unknown error");
    return false;
  }

  std::string missing;
  bool ok = true;
  Api &a = fns;
  ok &= bind(handle, "cuInit", a.cuInit, missing);
  ok &= bind(handle, "cuDriverGetVersion", a.cuDriverGetVersion, missing);
  ok &= bind(handle, "cuGetErrorName", a.cuGetErrorName, missing);
  ok &= bind(handle, "cuGetErrorString", a.cuGetErrorString, missing);
  ok &= bind(handle, "cuDeviceGetCount", a.cuDeviceGetCount, missing);
  ok &= bind(handle, "cuDeviceGet", a.cuDeviceGet, missing);
  ok &= bind(handle, "cuDeviceGetName", a.cuDeviceGetName, missing);
  ok &= bind(handle, "cuDeviceGetAttribute", a.cuDeviceGetAttribute, missing);
  ok &= bind(handle, "cuDevicePrimaryCtxRetain", a.cuDevicePrimaryCtxRetain,
             missing);
  ok &= bind(handle, "cuCtxSetCurrent", a.cuCtxSetCurrent, missing);
  ok &= bind(handle, "cuCtxGetCurrent", a.cuCtxGetCurrent, missing);
  ok &= bind(handle, "cuCtxSynchronize", a.cuCtxSynchronize, missing);
  ok &= bind(handle, "cuMemAlloc_v2", a.cuMemAlloc, missing);
  ok &= bind(handle, "cuMemAllocManaged", a.cuMemAllocManaged, missing);
  ok &= bind(handle, "cuMemFree_v2", a.cuMemFree, missing);
  ok &= bind(handle, "cuMemcpyHtoD_v2", a.cuMemcpyHtoD, missing);
  ok &= bind(handle, "cuMemcpyDtoH_v2", a.cuMemcpyDtoH, missing);
  ok &= bind(handle, "cuMemcpyDtoD_v2", a.cuMemcpyDtoD, missing);
  ok &= bind(handle, "cuMemcpyAsync", a.cuMemcpyAsync, missing);
  ok &= bind(handle, "cuMemsetD8_v2", a.cuMemsetD8, missing);
  ok &= bind(handle, "cuMemsetD32_v2", a.cuMemsetD32, missing);
  ok &= bind(handle, "cuMemsetD16Async", a.cuMemsetD16Async, missing);
  ok &= bind(handle, "cuMemsetD32Async", a.cuMemsetD32Async, missing);
  ok &= bind(handle, "cuMemHostRegister_v2", a.cuMemHostRegister, missing);
  ok &= bind(handle, "cuMemHostUnregister", a.cuMemHostUnregister, missing);
  ok &= bind(handle, "cuModuleLoadData", a.cuModuleLoadData, missing);
  ok &= bind(handle, "cuModuleLoadDataEx", a.cuModuleLoadDataEx, missing);
  ok &= bind(handle, "cuModuleUnload", a.cuModuleUnload, missing);
  ok &= bind(handle, "cuModuleGetFunction", a.cuModuleGetFunction, missing);
  ok &= bind(handle, "cuFuncSetAttribute", a.cuFuncSetAttribute, missing);
  ok &= bind(handle, "cuLaunchKernel", a.cuLaunchKernel, missing);
  ok &= bind(handle, "cuLaunchKernelEx", a.cuLaunchKernelEx, missing,
             /*required=*/false);
  ok &= bind(handle, "cuStreamCreate", a.cuStreamCreate, missing);
  ok &= bind(handle, "cuStreamDestroy_v2", a.cuStreamDestroy, missing);
  ok &= bind(handle, "cuStreamSynchronize", a.cuStreamSynchronize, missing);
  ok &= bind(handle, "cuStreamWaitEvent", a.cuStreamWaitEvent, missing);
  ok &= bind(handle, "cuEventCreate", a.cuEventCreate, missing);
  ok &= bind(handle, "cuEventDestroy_v2", a.cuEventDestroy, missing);
  ok &= bind(handle, "cuEventRecord", a.cuEventRecord, missing);
  ok &= bind(handle, "cuEventSynchronize", a.cuEventSynchronize, missing);
  ok &= bind(handle, "cuEventElapsedTime", a.cuEventElapsedTime, missing,
             /*required=*/false);
  ok &= bind(handle, "cuMemcpyHtoDAsync_v2", a.cuMemcpyHtoDAsync, missing);
  ok &= bind(handle, "cuMemcpyDtoHAsync_v2", a.cuMemcpyDtoHAsync, missing);
  // A graph needs all of its entry points; without one, sessions launch.
  bind(handle, "cuStreamBeginCapture_v2", a.cuStreamBeginCapture, missing,
       /*required=*/false);
  bind(handle, "cuStreamEndCapture", a.cuStreamEndCapture, missing,
       /*required=*/false);
  bind(handle, "cuGraphInstantiateWithFlags", a.cuGraphInstantiateWithFlags,
       missing, /*required=*/false);
  bind(handle, "cuGraphLaunch", a.cuGraphLaunch, missing, /*required=*/false);
  bind(handle, "cuGraphExecDestroy", a.cuGraphExecDestroy, missing,
       /*required=*/false);
  bind(handle, "cuGraphDestroy", a.cuGraphDestroy, missing,
       /*required=*/false);
  if (!a.cuStreamEndCapture || !a.cuGraphInstantiateWithFlags ||
      !a.cuGraphLaunch || !a.cuGraphExecDestroy || !a.cuGraphDestroy)
    a.cuStreamBeginCapture = nullptr;
  ok &= bind(handle, "cuTensorMapEncodeTiled", a.cuTensorMapEncodeTiled,
             missing, /*required=*/false);
  if (!ok) {
    whyNot = "libcuda.so.1 lacks the driver entry point '" + missing +
             "' (NVIDIA driver too old?)";
    return false;
  }
  return true;
}

bool CudaDriver::initDevices(std::string &whyNot) {
  Api &a = fns;
  CUresult r = a.cuInit(0);
  if (r != CUDA_SUCCESS) {
    whyNot = "cuInit failed: " + errorString(r);
    return false;
  }
  a.cuDriverGetVersion(&version);

  int count = 0;
  r = a.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) {
    whyNot = "cuDeviceGetCount failed: " + errorString(r);
    return false;
  }
  if (count <= 0) {
    whyNot = "the NVIDIA driver reports no CUDA devices";
    return false;
  }

  std::string error;
  for (int i = 0; i < count; ++i) {
    DeviceInfo info;
    char name[256] = {0};
    int major = 0, minor = 0;
    if (!check(a.cuDeviceGet(&info.device, i), "cuDeviceGet", error) ||
        !check(a.cuDeviceGetName(name, sizeof(name) - 1, info.device),
               "cuDeviceGetName", error) ||
        !check(a.cuDeviceGetAttribute(
                   &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                   info.device),
               "cuDeviceGetAttribute", error) ||
        !check(a.cuDeviceGetAttribute(
                   &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                   info.device),
               "cuDeviceGetAttribute", error) ||
        !check(a.cuDeviceGetAttribute(
                   &info.maxSharedMemoryOptin,
                   CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                   info.device),
               "cuDeviceGetAttribute", error)) {
      whyNot = "querying CUDA device " + std::to_string(i) + ": " + error;
      return false;
    }
    info.name = name;
    info.computeCapability = major * 10 + minor;
    devices.push_back(std::move(info));
  }
  return true;
}

const std::string &CudaDriver::deviceName(int ordinal) const {
  static const std::string empty;
  if (ordinal < 0 || ordinal >= deviceCount())
    return empty;
  return devices[ordinal].name;
}

int CudaDriver::computeCapability(int ordinal) const {
  if (ordinal < 0 || ordinal >= deviceCount())
    return 0;
  return devices[ordinal].computeCapability;
}

int CudaDriver::maxSharedMemoryOptin(int ordinal) const {
  if (ordinal < 0 || ordinal >= deviceCount())
    return 0;
  return devices[ordinal].maxSharedMemoryOptin;
}

CUcontext CudaDriver::primaryContext(int ordinal) const {
  if (ordinal < 0 || ordinal >= deviceCount())
    return nullptr;
  std::lock_guard<std::mutex> lock(retainMutex);
  return devices[ordinal].primary;
}

bool CudaDriver::makeCurrent(int ordinal, std::string &error) {
  if (ordinal < 0 || ordinal >= deviceCount()) {
    error = "CUDA device " + std::to_string(ordinal) + " does not exist (" +
            std::to_string(deviceCount()) + " device(s) present)";
    return false;
  }
  DeviceInfo &info = devices[ordinal];
  CUcontext ctx = nullptr;
  {
    // Retaining creates the context (slow, allocates device memory), so it
    // is done lazily and exactly once per device; the reference is never
    // released because modules loaded into it live until process exit.
    std::lock_guard<std::mutex> lock(retainMutex);
    if (!info.primary) {
      CUcontext retained = nullptr;
      if (!check(fns.cuDevicePrimaryCtxRetain(&retained, info.device),
                 "cuDevicePrimaryCtxRetain", error))
        return false;
      info.primary = retained;
    }
    ctx = info.primary;
  }
  return check(fns.cuCtxSetCurrent(ctx), "cuCtxSetCurrent", error);
}

std::string CudaDriver::errorString(CUresult result) const {
  const char *name = nullptr;
  const char *desc = nullptr;
  if (fns.cuGetErrorName)
    fns.cuGetErrorName(result, &name);
  if (fns.cuGetErrorString)
    fns.cuGetErrorString(result, &desc);
  std::string s = name ? name : "CUDA error " + std::to_string(result);
  if (desc)
    s += std::string(" (") + desc + ")";
  return s;
}

bool CudaDriver::check(CUresult result, const char *what,
                       std::string &error) const {
  if (result == CUDA_SUCCESS)
    return true;
  error = std::string(what) + " failed: " + errorString(result);
  return false;
}
