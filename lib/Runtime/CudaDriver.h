//===- CudaDriver.h - The CUDA driver, loaded at run time ------*- C++ -*-===//
//
// Private to libridge_runtime: the driver API types (mirrors of cuda.h's),
// the dlopen()ed libcuda.so.1 with its dlsym'ed entry points, and the sticky
// GPU errors of the mgpu* wrappers. Model (Runtime.h) is the public API.
// Only the runtime's own sources and its unit test include this header.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_RUNTIME_CUDADRIVER_H
#define RIDGELINE_LIB_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace ridge::rt {

//===----------------------------------------------------------------------===//
// CUDA driver, loaded at run time
//===----------------------------------------------------------------------===//

/// Driver API types declared here instead of including cuda.h: the runtime
/// must build without the CUDA toolkit. They live in this namespace so they
/// never collide with cuda.h in a translation unit that includes both.
namespace cu {
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphExec_st;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
using CUstream = CUstream_st *;
using CUevent = CUevent_st *;
using CUgraph = CUgraph_st *;
using CUgraphExec = CUgraphExec_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
constexpr CUresult CUDA_ERROR_INVALID_HANDLE = 400;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;
constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;
constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901;
/// CUstreamCaptureMode: other threads may make unsafe calls (cuMemAlloc)
/// while this one captures.
constexpr int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr int CU_JIT_OPTIMIZATION_LEVEL = 7;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;
constexpr unsigned CU_MEM_ATTACH_GLOBAL = 1;
constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4;
constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5;
constexpr int CU_CLUSTER_SCHEDULING_POLICY_SPREAD = 1;

/// Mirrors of cuda.h's CUlaunchAttributeValue / CUlaunchAttribute /
/// CUlaunchConfig (CUDA 12), for cuLaunchKernelEx cluster launches.
union CUlaunchAttributeValue {
  char pad[64];
  uint64_t align; // The real union holds pointers and size_t members.
  struct {
    unsigned x, y, z;
  } clusterDim;
  int clusterSchedulingPolicyPreference;
};
struct CUlaunchAttribute {
  int id;
  char pad[8 - sizeof(int)];
  CUlaunchAttributeValue value;
};
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};
static_assert(sizeof(CUlaunchAttribute) == 72, "must match cuda.h");
/// Mirror of cuda.h's CUtensorMap (CUDA 12): 128 opaque bytes, 64-byte
/// aligned, which cuTensorMapEncodeTiled writes and kernels pass by value
/// to TMA (cp.async.bulk.tensor). The enums are plain ints here
/// (CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle,
/// CUtensorMapL2promotion, CUtensorMapFloatOOBfill).
struct alignas(64) CUtensorMap {
  uint64_t opaque[16];
};
static_assert(sizeof(CUtensorMap) == 128, "must match cuda.h");
constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6;
constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7;
constexpr int CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9;
constexpr int CU_TENSOR_MAP_INTERLEAVE_NONE = 0;
constexpr int CU_TENSOR_MAP_SWIZZLE_NONE = 0;
constexpr int CU_TENSOR_MAP_SWIZZLE_32B = 1;
constexpr int CU_TENSOR_MAP_SWIZZLE_64B = 2;
constexpr int CU_TENSOR_MAP_SWIZZLE_128B = 3;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_NONE = 0;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2;
constexpr int CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0;
static_assert(sizeof(CUlaunchConfig) == 56, "must match cuda.h");
} // namespace cu

/// The process-wide handle on libcuda.so.1. Obtained through get(); never
/// destroyed (the driver must outlive every model's static destructors).
class CudaDriver {
public:
  /// Loads and initializes the driver once per process. Returns nullptr and
  /// sets `whyNot` when libcuda.so.1 cannot be loaded, lacks a required entry
  /// point, cuInit fails, or no device exists. The outcome is cached, so
  /// later calls are cheap and report the same reason.
  static CudaDriver *get(std::string &whyNot);

  int deviceCount() const { return static_cast<int>(devices.size()); }
  /// Name of device `ordinal` ("" for an ordinal out of range).
  const std::string &deviceName(int ordinal = 0) const;
  /// Compute capability as major * 10 + minor (90 for an H100), 0 for an
  /// ordinal out of range.
  int computeCapability(int ordinal = 0) const;
  /// Largest dynamic shared memory a block may opt in to, in bytes.
  int maxSharedMemoryOptin(int ordinal = 0) const;
  /// Driver version as reported by cuDriverGetVersion (12040 = 12.4).
  int driverVersion() const { return version; }
  /// Whether the driver is the PTX emulator (RIDGE_DEVICE=emulator).
  bool isEmulated() const { return emulated; }

  /// Makes device `ordinal`'s primary context current on the calling thread,
  /// retaining it on first use. Returns false and sets `error` on failure.
  bool makeCurrent(int ordinal, std::string &error);
  /// The retained primary context of `ordinal` (nullptr before makeCurrent).
  cu::CUcontext primaryContext(int ordinal) const;

  /// "CUDA_ERROR_NAME (description)" for a driver result code.
  std::string errorString(cu::CUresult result) const;
  /// Returns true on CUDA_SUCCESS; otherwise sets `error` to
  /// "<what> failed: <errorString>" and returns false.
  bool check(cu::CUresult result, const char *what, std::string &error) const;

  /// Driver entry points, resolved with dlsym. The _v2 symbols are used
  /// where the driver has them (plain names are the legacy 32-bit ABI).
  /// Members marked optional may be null on old drivers.
  struct Api {
    cu::CUresult (*cuInit)(unsigned);
    cu::CUresult (*cuDriverGetVersion)(int *);
    cu::CUresult (*cuGetErrorName)(cu::CUresult, const char **);
    cu::CUresult (*cuGetErrorString)(cu::CUresult, const char **);
    cu::CUresult (*cuDeviceGetCount)(int *);
    cu::CUresult (*cuDeviceGet)(cu::CUdevice *, int);
    cu::CUresult (*cuDeviceGetName)(char *, int, cu::CUdevice);
    cu::CUresult (*cuDeviceGetAttribute)(int *, int, cu::CUdevice);
    cu::CUresult (*cuDevicePrimaryCtxRetain)(cu::CUcontext *, cu::CUdevice);
    cu::CUresult (*cuCtxSetCurrent)(cu::CUcontext);
    cu::CUresult (*cuCtxGetCurrent)(cu::CUcontext *);
    cu::CUresult (*cuCtxSynchronize)();
    cu::CUresult (*cuMemAlloc)(cu::CUdeviceptr *, size_t);
    cu::CUresult (*cuMemAllocManaged)(cu::CUdeviceptr *, size_t, unsigned);
    cu::CUresult (*cuMemFree)(cu::CUdeviceptr);
    cu::CUresult (*cuMemcpyHtoD)(cu::CUdeviceptr, const void *, size_t);
    cu::CUresult (*cuMemcpyDtoH)(void *, cu::CUdeviceptr, size_t);
    cu::CUresult (*cuMemcpyDtoD)(cu::CUdeviceptr, cu::CUdeviceptr, size_t);
    cu::CUresult (*cuMemcpyAsync)(cu::CUdeviceptr, cu::CUdeviceptr, size_t,
                                  cu::CUstream);
    cu::CUresult (*cuMemcpyHtoDAsync)(cu::CUdeviceptr, const void *, size_t,
                                      cu::CUstream);
    cu::CUresult (*cuMemcpyDtoHAsync)(void *, cu::CUdeviceptr, size_t,
                                      cu::CUstream);
    cu::CUresult (*cuMemsetD8)(cu::CUdeviceptr, unsigned char, size_t);
    cu::CUresult (*cuMemsetD32)(cu::CUdeviceptr, unsigned, size_t);
    cu::CUresult (*cuMemsetD16Async)(cu::CUdeviceptr, unsigned short, size_t,
                                     cu::CUstream);
    cu::CUresult (*cuMemsetD32Async)(cu::CUdeviceptr, unsigned, size_t,
                                     cu::CUstream);
    cu::CUresult (*cuMemHostRegister)(void *, size_t, unsigned);
    cu::CUresult (*cuMemHostUnregister)(void *);
    cu::CUresult (*cuModuleLoadData)(cu::CUmodule *, const void *);
    cu::CUresult (*cuModuleLoadDataEx)(cu::CUmodule *, const void *, unsigned,
                                       int *, void **);
    cu::CUresult (*cuModuleUnload)(cu::CUmodule);
    cu::CUresult (*cuModuleGetFunction)(cu::CUfunction *, cu::CUmodule,
                                        const char *);
    cu::CUresult (*cuFuncSetAttribute)(cu::CUfunction, int, int);
    cu::CUresult (*cuLaunchKernel)(cu::CUfunction, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, unsigned, unsigned,
                                   cu::CUstream, void **, void **);
    /// Optional (CUDA 12.0+): needed only for thread-block-cluster launches.
    cu::CUresult (*cuLaunchKernelEx)(const cu::CUlaunchConfig *, cu::CUfunction,
                                     void **, void **);
    cu::CUresult (*cuStreamCreate)(cu::CUstream *, unsigned);
    cu::CUresult (*cuStreamDestroy)(cu::CUstream);
    cu::CUresult (*cuStreamSynchronize)(cu::CUstream);
    cu::CUresult (*cuStreamWaitEvent)(cu::CUstream, cu::CUevent, unsigned);
    cu::CUresult (*cuEventCreate)(cu::CUevent *, unsigned);
    cu::CUresult (*cuEventDestroy)(cu::CUevent);
    cu::CUresult (*cuEventRecord)(cu::CUevent, cu::CUstream);
    cu::CUresult (*cuEventSynchronize)(cu::CUevent);
    /// Optional: needed only to time kernels (setKernelProfiling).
    cu::CUresult (*cuEventElapsedTime)(float *, cu::CUevent, cu::CUevent);
    /// Optional: CUDA graphs (a session replays its captured launches).
    cu::CUresult (*cuStreamBeginCapture)(cu::CUstream, int);
    cu::CUresult (*cuStreamEndCapture)(cu::CUstream, cu::CUgraph *);
    cu::CUresult (*cuGraphInstantiateWithFlags)(cu::CUgraphExec *, cu::CUgraph,
                                                unsigned long long);
    cu::CUresult (*cuGraphLaunch)(cu::CUgraphExec, cu::CUstream);
    cu::CUresult (*cuGraphExecDestroy)(cu::CUgraphExec);
    cu::CUresult (*cuGraphDestroy)(cu::CUgraph);
    /// Optional (CUDA 12.0+): TMA tensor maps for sm_90 kernels. The
    /// emulated driver writes the emulator's own encoding (TensorMap.h).
    cu::CUresult (*cuTensorMapEncodeTiled)(cu::CUtensorMap *, int, unsigned,
                                           void *, const uint64_t *,
                                           const uint64_t *, const unsigned *,
                                           const unsigned *, int, int, int,
                                           int);
  };
  const Api &api() const { return fns; }

  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;

private:
  CudaDriver() = default;
  ~CudaDriver() = default;
  bool init(std::string &whyNot);
  /// dlopen()s libcuda.so.1 and resolves the entry points into `fns`.
  bool bindLibcuda(std::string &whyNot);
  /// cuInit and the device table, through whichever `fns` is bound.
  bool initDevices(std::string &whyNot);
  /// Routes the allocation, copy, launch and module-load entry points of
  /// `fns` through counters (getDriverCallCounts), for real and emulated
  /// drivers alike.
  void countCalls();

  struct DeviceInfo {
    cu::CUdevice device = 0;
    std::string name;
    int computeCapability = 0;
    int maxSharedMemoryOptin = 0;
    cu::CUcontext primary = nullptr;
  };

  void *handle = nullptr;
  bool emulated = false;
  Api fns{};
  int version = 0;
  std::vector<DeviceInfo> devices;
};

/// The driver API implemented on the PTX emulator (EmulatedDriver.cpp), for
/// one emulated device of compute capability `computeCapability` (80, 90).
CudaDriver::Api getEmulatedDriverApi(int computeCapability);

//===----------------------------------------------------------------------===//
// Sticky GPU errors
//===----------------------------------------------------------------------===//

/// The mgpu* wrappers called by compiled GPU host code cannot return errors
/// and must not abort, so they record the first failure on the calling thread
/// (without printing it: the run returns it). Model::run and rt::Session clear
/// it before running the entry point and check it afterwards.
void recordGpuError(const std::string &message);
bool hasGpuError();
/// Returns the first recorded error on this thread ("" if none) and clears it.
std::string takeGpuError();

/// The device the mgpu* wrappers use on this thread (mgpuSetDefaultDevice),
/// and a scope that sets it: the model's static constructors load its
/// kernels, and its entry point launches them, on whichever device that is.
/// Whether the environment variable `name` is "1" (the runtime's switches:
/// RIDGE_SYNC_LAUNCHES, RIDGE_PTX_JIT, RIDGE_EMULATOR_ASYNC_ERRORS).
inline bool isEnvFlagSet(const char *name) {
  const char *value = std::getenv(name);
  return value && value[0] == '1' && value[1] == '\0';
}

/// Whether kernel launches are being timed (setKernelProfiling): their
/// event waits cannot be captured into a CUDA graph.
bool isKernelProfiling();
/// RIDGE_SYNC_LAUNCHES=1: each launch is followed by a synchronization of
/// its stream, so that a kernel's fault is reported with its name (no CUDA
/// graph then).
bool isSyncingLaunches();

int getThreadDevice();
void setThreadDevice(int ordinal);
class ThreadDeviceScope {
public:
  explicit ThreadDeviceScope(int ordinal) : previous(getThreadDevice()) {
    setThreadDevice(ordinal);
  }
  ~ThreadDeviceScope() { setThreadDevice(previous); }
  ThreadDeviceScope(const ThreadDeviceScope &) = delete;
  ThreadDeviceScope &operator=(const ThreadDeviceScope &) = delete;

private:
  int previous;
};

} // namespace ridge::rt

#endif // RIDGELINE_LIB_RUNTIME_CUDADRIVER_H
