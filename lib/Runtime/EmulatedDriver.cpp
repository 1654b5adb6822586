//===- EmulatedDriver.cpp - The CUDA driver API on the PTX emulator -------===//
//
// The subset of the driver API that the runtime calls (CudaDriver::Api),
// implemented on lib/Emulator: device memory, module load from PTX text,
// kernel launches, streams and events that complete at once (every call
// runs synchronously), and CUDA graphs captured from a stream and replayed.
// With RIDGE_DEVICE=emulator[:sm_NN] the runtime binds this table instead of
// libcuda.so.1, so everything above the driver (the mgpu* wrappers, argument
// packing, buffer staging, launch configuration) is the code a GPU would run.
//
// Errors carry the emulator's message (kernel, block, thread, PTX line)
// through cuGetErrorString, so the runtime's usual "call failed: NAME
// (description)" reports say what went wrong.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"
#include "Fatbin.h"

#include "ridgeline/Runtime/Runtime.h"

#include "ridgeline/Emulator/Emulator.h"
#include "ridgeline/Emulator/TensorMap.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

using namespace ridge::rt;
using namespace ridge::rt::cu;

namespace {

struct EmulatedFunction {
  ridge::emu::LoadedModule *module = nullptr;
  const ridge::emu::PtxFunction *kernel = nullptr;
  int maxDynamicShared = 48 * 1024;
};

struct EmulatedModule {
  ridge::emu::LoadedModule *loaded = nullptr;
  std::vector<std::unique_ptr<EmulatedFunction>> functions;
};

/// The one emulated device. Heap-allocated and never freed, like the
/// CudaDriver: model destructors unload modules at exit.
struct EmulatorState {
  ridge::emu::Device device;
  int computeCapability = 90;
  std::mutex mutex;
  int context = 0; // its address serves as the handle
  /// Per kernel name, summed over launches, in the order of first launches
  /// (getEmulatorCounters); guarded by `mutex`.
  std::vector<ridge::emu::KernelCounters> counters;
  std::map<std::string, size_t> counterIndex;
  /// cuMemAlloc calls so far (RIDGE_EMULATOR_FAIL_ALLOC); guarded by `mutex`.
  uint64_t allocations = 0;
  /// RIDGE_EMULATOR_ASYNC_ERRORS=1: the first failed launch, reported from
  /// then on by every synchronization and launch, as a GPU's sticky error
  /// is; guarded by `mutex`.
  CUresult pendingError = 0;
};

EmulatorState *state = nullptr;

/// The detailed message of this thread's last failure, and its code.
thread_local std::string lastDetail;
thread_local CUresult lastCode = 0;

CUresult failWith(CUresult code, std::string detail) {
  lastCode = code;
  lastDetail = std::move(detail);
  return code;
}

const char *getName(CUresult code) {
  switch (code) {
  case CUDA_SUCCESS:
    return "CUDA_SUCCESS";
  case CUDA_ERROR_INVALID_VALUE:
    return "CUDA_ERROR_INVALID_VALUE";
  case CUDA_ERROR_OUT_OF_MEMORY:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case CUDA_ERROR_DEINITIALIZED:
    return "CUDA_ERROR_DEINITIALIZED";
  case CUDA_ERROR_INVALID_DEVICE:
    return "CUDA_ERROR_INVALID_DEVICE";
  case CUDA_ERROR_INVALID_IMAGE:
    return "CUDA_ERROR_INVALID_IMAGE";
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  case CUDA_ERROR_INVALID_PTX:
    return "CUDA_ERROR_INVALID_PTX";
  case CUDA_ERROR_INVALID_HANDLE:
    return "CUDA_ERROR_INVALID_HANDLE";
  case CUDA_ERROR_NOT_FOUND:
    return "CUDA_ERROR_NOT_FOUND";
  case CUDA_ERROR_LAUNCH_FAILED:
    return "CUDA_ERROR_LAUNCH_FAILED";
  case CUDA_ERROR_NOT_SUPPORTED:
    return "CUDA_ERROR_NOT_SUPPORTED";
  case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
    return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
  case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
    return "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
  default:
    return nullptr;
  }
}

CUresult emuInit(unsigned) { return CUDA_SUCCESS; }
CUresult emuDriverGetVersion(int *version) {
  *version = 13000;
  return CUDA_SUCCESS;
}
CUresult emuGetErrorName(CUresult code, const char **name) {
  *name = getName(code);
  return *name ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult emuGetErrorString(CUresult code, const char **text) {
  if (code == lastCode && !lastDetail.empty()) {
    *text = lastDetail.c_str();
    return CUDA_SUCCESS;
  }
  *text = code == CUDA_SUCCESS ? "no error" : "PTX emulator error";
  return CUDA_SUCCESS;
}
CUresult emuDeviceGetCount(int *count) {
  *count = 1;
  return CUDA_SUCCESS;
}
CUresult emuDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult emuDeviceGetName(char *name, int length, CUdevice) {
  std::string text = "Ridgeline PTX emulator (sm_" +
                     std::to_string(state->computeCapability) +
                     (state->computeCapability >= 90 ? "a)" : ")");
  std::strncpy(name, text.c_str(), static_cast<size_t>(length));
  return CUDA_SUCCESS;
}
CUresult emuDeviceGetAttribute(int *value, int attribute, CUdevice) {
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = state->computeCapability / 10;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = state->computeCapability % 10;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = static_cast<int>(state->device.getMaxSharedMemoryPerBlock());
    return CUDA_SUCCESS;
  default:
    return failWith(CUDA_ERROR_INVALID_VALUE, "device attribute " +
                                                  std::to_string(attribute) +
                                                  " is not emulated");
  }
}
CUresult emuPrimaryCtxRetain(CUcontext *context, CUdevice) {
  *context = reinterpret_cast<CUcontext>(&state->context);
  return CUDA_SUCCESS;
}
CUresult emuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult emuCtxGetCurrent(CUcontext *context) {
  *context = reinterpret_cast<CUcontext>(&state->context);
  return CUDA_SUCCESS;
}
//===----------------------------------------------------------------------===//
// Streams and graphs
//===----------------------------------------------------------------------===//

/// One recorded stream operation of a graph: a launch (its parameters
/// packed by value, as the driver copies them at capture), a copy or a fill.
struct GraphNode {
  enum class Kind { Launch, Copy, Fill16, Fill32 } kind = Kind::Launch;
  EmulatedFunction *function = nullptr;
  ridge::emu::Dim3 grid, block;
  unsigned sharedBytes = 0;
  std::vector<uint8_t> params;
  CUdeviceptr dst = 0, src = 0;
  size_t count = 0;
  unsigned value = 0;
};
struct EmulatedGraph {
  std::vector<GraphNode> nodes;
};
/// A stream: work runs at once, except while it captures into a graph.
struct EmulatedStream {
  EmulatedGraph *capture = nullptr;
  /// A call the capture cannot hold was made: cuStreamEndCapture fails.
  bool invalidated = false;
};
/// The stream this thread is capturing (thread-local capture mode): the
/// driver refuses this thread's synchronizing calls meanwhile, as the real
/// one does.
thread_local EmulatedStream *tlsCapturing = nullptr;

EmulatedStream *getCapture(CUstream stream) {
  auto *emulated = reinterpret_cast<EmulatedStream *>(stream);
  return emulated && emulated->capture ? emulated : nullptr;
}
/// Fails a synchronizing call made while this thread captures a stream.
CUresult refuseDuringCapture(const char *what) {
  if (!tlsCapturing)
    return CUDA_SUCCESS;
  tlsCapturing->invalidated = true;
  return failWith(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                  std::string(what) +
                      " is not allowed while the thread captures a stream "
                      "into a CUDA graph");
}

/// RIDGE_EMULATOR_ASYNC_ERRORS=1: a launch that fails returns success, and
/// the failure surfaces at the next synchronization, without the kernel's
/// name, as a fault does on a GPU (kernels run asynchronously there).
bool deferLaunchErrors() {
  static const bool defer = isEnvFlagSet("RIDGE_EMULATOR_ASYNC_ERRORS");
  return defer;
}

/// The deferred error of an earlier launch, if any: sticky, as on a GPU.
CUresult takePendingError() {
  std::lock_guard<std::mutex> lock(state->mutex);
  if (!state->pendingError)
    return CUDA_SUCCESS;
  return failWith(state->pendingError, "unspecified launch failure (a "
                                       "kernel faulted earlier; the context "
                                       "is unusable)");
}

CUresult emuSynchronize() {
  if (CUresult r = refuseDuringCapture("cuCtxSynchronize"))
    return r;
  return takePendingError();
}

/// RIDGE_EMULATOR_FAIL_ALLOC=N: the N-th cuMemAlloc of the process (from 1)
/// fails with CUDA_ERROR_OUT_OF_MEMORY, so that tests can put an
/// out-of-memory error at each allocation of a run; 0 or unset: none.
uint64_t getInjectedAllocFailure() {
  static const uint64_t failAt = [] {
    const char *value = std::getenv("RIDGE_EMULATOR_FAIL_ALLOC");
    return value ? std::strtoull(value, nullptr, 10) : 0;
  }();
  return failAt;
}

CUresult emuMemAlloc(CUdeviceptr *pointer, size_t bytes) {
  if (CUresult r = refuseDuringCapture("cuMemAlloc"))
    return r;
  std::lock_guard<std::mutex> lock(state->mutex);
  if (++state->allocations == getInjectedAllocFailure())
    return failWith(CUDA_ERROR_OUT_OF_MEMORY,
                    "out of memory (injected at allocation " +
                        std::to_string(state->allocations) + " of " +
                        std::to_string(bytes) +
                        " bytes by RIDGE_EMULATOR_FAIL_ALLOC)");
  uint64_t address = state->device.getMemory().allocate(bytes, "");
  if (!address)
    return failWith(CUDA_ERROR_OUT_OF_MEMORY,
                    "cannot allocate " + std::to_string(bytes) +
                        " bytes of emulated device memory");
  *pointer = address;
  return CUDA_SUCCESS;
}
CUresult emuMemAllocManaged(CUdeviceptr *pointer, size_t bytes, unsigned) {
  return emuMemAlloc(pointer, bytes);
}
CUresult emuMemFree(CUdeviceptr pointer) {
  if (CUresult r = refuseDuringCapture("cuMemFree"))
    return r;
  std::lock_guard<std::mutex> lock(state->mutex);
  if (!state->device.getMemory().free(pointer))
    return failWith(CUDA_ERROR_INVALID_VALUE, "cuMemFree of an address that no "
                                              "allocation starts at");
  return CUDA_SUCCESS;
}

/// Checks that [address, address + bytes) is inside one device allocation.
CUresult checkDeviceRange(const char *what, uint64_t address, size_t bytes) {
  if (bytes == 0 || state->device.getMemory().find(address, bytes))
    return CUDA_SUCCESS;
  char text[160];
  std::snprintf(text, sizeof(text),
                "%s of %zu bytes at 0x%llx: not inside one device allocation",
                what, bytes, static_cast<unsigned long long>(address));
  return failWith(CUDA_ERROR_INVALID_VALUE, text);
}

CUresult emuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes) {
  if (CUresult r = checkDeviceRange("cuMemcpyHtoD", dst, bytes))
    return r;
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return CUDA_SUCCESS;
}
CUresult emuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes) {
  if (CUresult r = checkDeviceRange("cuMemcpyDtoH", src, bytes))
    return r;
  std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  return CUDA_SUCCESS;
}
CUresult emuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  if (CUresult r = checkDeviceRange("cuMemcpyDtoD", dst, bytes))
    return r;
  if (CUresult r = checkDeviceRange("cuMemcpyDtoD", src, bytes))
    return r;
  std::memmove(reinterpret_cast<void *>(dst),
               reinterpret_cast<const void *>(src), bytes);
  return CUDA_SUCCESS;
}
/// Unified addressing: either side may be host or device memory.
CUresult emuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                        CUstream stream) {
  if (EmulatedStream *capture = getCapture(stream)) {
    GraphNode node;
    node.kind = GraphNode::Kind::Copy;
    node.dst = dst;
    node.src = src;
    node.count = bytes;
    capture->capture->nodes.push_back(std::move(node));
    return CUDA_SUCCESS;
  }
  std::memmove(reinterpret_cast<void *>(dst),
               reinterpret_cast<const void *>(src), bytes);
  return CUDA_SUCCESS;
}
CUresult emuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes,
                            CUstream stream) {
  if (CUresult r = checkDeviceRange("cuMemcpyHtoDAsync", dst, bytes))
    return r;
  return emuMemcpyAsync(dst, reinterpret_cast<CUdeviceptr>(src), bytes, stream);
}
CUresult emuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes,
                            CUstream stream) {
  if (CUresult r = checkDeviceRange("cuMemcpyDtoHAsync", src, bytes))
    return r;
  return emuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst), src, bytes, stream);
}
template <typename T>
CUresult fill(const char *what, CUdeviceptr dst, T value, size_t count) {
  if (CUresult r = checkDeviceRange(what, dst, count * sizeof(T)))
    return r;
  T *data = reinterpret_cast<T *>(dst);
  for (size_t i = 0; i < count; ++i)
    data[i] = value;
  return CUDA_SUCCESS;
}
CUresult emuMemsetD8(CUdeviceptr dst, unsigned char value, size_t count) {
  return fill("cuMemsetD8", dst, value, count);
}
CUresult emuMemsetD32(CUdeviceptr dst, unsigned value, size_t count) {
  return fill("cuMemsetD32", dst, value, count);
}
/// Records a fill into `stream`'s capture; false when it does not capture.
bool captureFill(CUstream stream, GraphNode::Kind kind, CUdeviceptr dst,
                 unsigned value, size_t count) {
  EmulatedStream *capture = getCapture(stream);
  if (!capture)
    return false;
  GraphNode node;
  node.kind = kind;
  node.dst = dst;
  node.value = value;
  node.count = count;
  capture->capture->nodes.push_back(std::move(node));
  return true;
}
CUresult emuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count,
                           CUstream stream) {
  if (captureFill(stream, GraphNode::Kind::Fill16, dst, value, count))
    return checkDeviceRange("cuMemsetD16Async", dst, count * 2);
  return fill("cuMemsetD16Async", dst, value, count);
}
CUresult emuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count,
                           CUstream stream) {
  if (captureFill(stream, GraphNode::Kind::Fill32, dst, value, count))
    return checkDeviceRange("cuMemsetD32Async", dst, count * 4);
  return fill("cuMemsetD32Async", dst, value, count);
}
CUresult emuHostRegister(void *, size_t, unsigned) { return CUDA_SUCCESS; }
CUresult emuHostUnregister(void *) { return CUDA_SUCCESS; }

CUresult loadPtx(CUmodule *module, const void *image, std::string &detail) {
  static const unsigned char kElf[4] = {0x7f, 'E', 'L', 'F'};
  if (std::memcmp(image, kElf, 4) == 0) {
    detail = "the PTX emulator runs PTX text, not cubin images";
    return CUDA_ERROR_INVALID_IMAGE;
  }
  // A fatbin (ridgec's cubin + PTX): the emulator runs its PTX.
  std::string fatbinPtx;
  if (isFatbin(image)) {
    std::string why = extractFatbinPtx(image, fatbinPtx);
    if (!why.empty()) {
      detail = why;
      return CUDA_ERROR_INVALID_IMAGE;
    }
    image = fatbinPtx.c_str();
  }
  std::lock_guard<std::mutex> lock(state->mutex);
  std::string error;
  ridge::emu::LoadedModule *loaded =
      state->device.loadModule(static_cast<const char *>(image), error);
  if (!loaded) {
    detail = "PTX line " + error;
    return CUDA_ERROR_INVALID_PTX;
  }
  // PTX for a later chip does not run on an earlier one; sm_90a only on 9.0.
  const std::string &target = loaded->ptx->target;
  int chip = 0;
  bool archSpecific = false;
  int have = state->computeCapability;
  if (!parseGpuTarget(target, chip, archSpecific) || chip > have ||
      (archSpecific && chip != have)) {
    detail = "PTX for " + target + " cannot run on the emulated sm_" +
             std::to_string(have);
    state->device.unloadModule(loaded);
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  auto *emulated = new EmulatedModule;
  emulated->loaded = loaded;
  *module = reinterpret_cast<CUmodule>(emulated);
  return CUDA_SUCCESS;
}

CUresult emuModuleLoadData(CUmodule *module, const void *image) {
  std::string detail;
  CUresult result = loadPtx(module, image, detail);
  return result == CUDA_SUCCESS ? result : failWith(result, detail);
}
CUresult emuModuleLoadDataEx(CUmodule *module, const void *image,
                             unsigned numOptions, int *options, void **values) {
  std::string detail;
  CUresult result = loadPtx(module, image, detail);
  if (result == CUDA_SUCCESS)
    return result;
  // The JIT's error log, as ptxas would fill it.
  char *log = nullptr;
  size_t logSize = 0;
  for (unsigned i = 0; i < numOptions; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
      log = static_cast<char *>(values[i]);
    else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      logSize = reinterpret_cast<uintptr_t>(values[i]);
  }
  if (log && logSize) {
    std::strncpy(log, detail.c_str(), logSize - 1);
    log[logSize - 1] = '\0';
  }
  return failWith(result, detail);
}
CUresult emuModuleUnload(CUmodule module) {
  auto *emulated = reinterpret_cast<EmulatedModule *>(module);
  if (!emulated)
    return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> lock(state->mutex);
  state->device.unloadModule(emulated->loaded);
  delete emulated;
  return CUDA_SUCCESS;
}
CUresult emuModuleGetFunction(CUfunction *function, CUmodule module,
                              const char *name) {
  auto *emulated = reinterpret_cast<EmulatedModule *>(module);
  if (!emulated)
    return CUDA_ERROR_INVALID_HANDLE;
  const ridge::emu::PtxFunction *kernel =
      emulated->loaded->ptx->findFunction(name);
  if (!kernel || !kernel->isEntry)
    return failWith(CUDA_ERROR_NOT_FOUND,
                    std::string("no kernel '") + name + "' in the module");
  auto entry = std::make_unique<EmulatedFunction>();
  entry->module = emulated->loaded;
  entry->kernel = kernel;
  *function = reinterpret_cast<CUfunction>(entry.get());
  emulated->functions.push_back(std::move(entry));
  return CUDA_SUCCESS;
}
CUresult emuFuncSetAttribute(CUfunction function, int attribute, int value) {
  auto *entry = reinterpret_cast<EmulatedFunction *>(function);
  if (!entry)
    return CUDA_ERROR_INVALID_HANDLE;
  if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (value < 0 ||
        static_cast<uint64_t>(value) + entry->kernel->staticShared >
            state->device.getMaxSharedMemoryPerBlock())
      return failWith(CUDA_ERROR_INVALID_VALUE,
                      "dynamic shared memory of " + std::to_string(value) +
                          " bytes for '" + entry->kernel->name +
                          "' exceeds the device's limit");
    entry->maxDynamicShared = value;
    return CUDA_SUCCESS;
  }
  return CUDA_SUCCESS;
}
/// Runs one launch, its parameters packed, and adds up its counters.
CUresult runPacked(EmulatedFunction *entry, ridge::emu::Dim3 grid,
                   ridge::emu::Dim3 block, unsigned sharedBytes,
                   const std::vector<uint8_t> &params) {
  std::lock_guard<std::mutex> lock(state->mutex);
  if (state->pendingError)
    return failWith(state->pendingError,
                    "unspecified launch failure (a kernel faulted earlier; "
                    "the context is unusable)");
  std::string error;
  ridge::emu::KernelCounters launchCounters;
  if (!state->device.launchPacked(*entry->module, *entry->kernel, grid, block,
                                  sharedBytes, params, error,
                                  &launchCounters)) {
    if (deferLaunchErrors()) {
      state->pendingError = CUDA_ERROR_LAUNCH_FAILED;
      return CUDA_SUCCESS;
    }
    return failWith(CUDA_ERROR_LAUNCH_FAILED, error);
  }
  auto [it, inserted] = state->counterIndex.try_emplace(entry->kernel->name,
                                                        state->counters.size());
  if (inserted)
    state->counters.emplace_back();
  state->counters[it->second].accumulate(launchCounters);
  return CUDA_SUCCESS;
}
CUresult emuLaunchKernel(CUfunction function, unsigned gridX, unsigned gridY,
                         unsigned gridZ, unsigned blockX, unsigned blockY,
                         unsigned blockZ, unsigned sharedBytes, CUstream stream,
                         void **params, void **extra) {
  auto *entry = reinterpret_cast<EmulatedFunction *>(function);
  if (!entry)
    return CUDA_ERROR_INVALID_HANDLE;
  if (extra)
    return failWith(CUDA_ERROR_NOT_SUPPORTED,
                    "cuLaunchKernel's 'extra' parameter buffer is not "
                    "emulated");
  if (sharedBytes > static_cast<unsigned>(entry->maxDynamicShared))
    return failWith(CUDA_ERROR_INVALID_VALUE,
                    "kernel '" + entry->kernel->name + "' launched with " +
                        std::to_string(sharedBytes) +
                        " bytes of dynamic shared memory, above its " +
                        std::to_string(entry->maxDynamicShared));
  // The parameters are copied now, by value, as the driver does.
  const ridge::emu::PtxFunction &kernel = *entry->kernel;
  if (!kernel.params.empty() && !params)
    return failWith(CUDA_ERROR_INVALID_VALUE,
                    "kernel '" + kernel.name + "' takes " +
                        std::to_string(kernel.params.size()) +
                        " parameters, but none were passed");
  std::vector<uint8_t> packed(kernel.paramBytes, 0);
  for (size_t i = 0; i < kernel.params.size(); ++i)
    std::memcpy(packed.data() + kernel.params[i].offset, params[i],
                kernel.params[i].size);
  ridge::emu::Dim3 grid{gridX, gridY, gridZ}, block{blockX, blockY, blockZ};
  if (EmulatedStream *capture = getCapture(stream)) {
    GraphNode node;
    node.function = entry;
    node.grid = grid;
    node.block = block;
    node.sharedBytes = sharedBytes;
    node.params = std::move(packed);
    capture->capture->nodes.push_back(std::move(node));
    return CUDA_SUCCESS;
  }
  return runPacked(entry, grid, block, sharedBytes, packed);
}
CUresult emuStreamCreate(CUstream *stream, unsigned) {
  *stream = reinterpret_cast<CUstream>(new EmulatedStream());
  return CUDA_SUCCESS;
}
CUresult emuStreamDestroy(CUstream stream) {
  auto *emulated = reinterpret_cast<EmulatedStream *>(stream);
  if (emulated && emulated->capture)
    return failWith(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                    "cuStreamDestroy of a stream that is capturing");
  delete emulated;
  return CUDA_SUCCESS;
}
CUresult emuStreamSynchronize(CUstream) {
  if (CUresult r = refuseDuringCapture("cuStreamSynchronize"))
    return r;
  return takePendingError();
}
CUresult emuStreamBeginCapture(CUstream stream, int) {
  auto *emulated = reinterpret_cast<EmulatedStream *>(stream);
  if (!emulated)
    return failWith(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                    "the legacy stream cannot be captured");
  if (emulated->capture || tlsCapturing)
    return failWith(CUDA_ERROR_INVALID_VALUE,
                    "cuStreamBeginCapture: a capture is already under way");
  emulated->capture = new EmulatedGraph();
  emulated->invalidated = false;
  tlsCapturing = emulated;
  return CUDA_SUCCESS;
}
CUresult emuStreamEndCapture(CUstream stream, CUgraph *graph) {
  auto *emulated = reinterpret_cast<EmulatedStream *>(stream);
  if (!emulated || !emulated->capture)
    return failWith(CUDA_ERROR_INVALID_VALUE,
                    "cuStreamEndCapture of a stream that is not capturing");
  std::unique_ptr<EmulatedGraph> captured(emulated->capture);
  emulated->capture = nullptr;
  if (tlsCapturing == emulated)
    tlsCapturing = nullptr;
  if (emulated->invalidated) {
    *graph = nullptr;
    return failWith(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                    "the capture was invalidated by a call it cannot hold");
  }
  *graph = reinterpret_cast<CUgraph>(captured.release());
  return CUDA_SUCCESS;
}
CUresult emuGraphInstantiate(CUgraphExec *exec, CUgraph graph,
                             unsigned long long) {
  if (!graph)
    return CUDA_ERROR_INVALID_VALUE;
  *exec = reinterpret_cast<CUgraphExec>(
      new EmulatedGraph(*reinterpret_cast<EmulatedGraph *>(graph)));
  return CUDA_SUCCESS;
}
CUresult emuGraphLaunch(CUgraphExec exec, CUstream) {
  auto *graph = reinterpret_cast<EmulatedGraph *>(exec);
  if (!graph)
    return CUDA_ERROR_INVALID_VALUE;
  for (const GraphNode &node : graph->nodes) {
    CUresult result = CUDA_SUCCESS;
    switch (node.kind) {
    case GraphNode::Kind::Launch:
      result = runPacked(node.function, node.grid, node.block, node.sharedBytes,
                         node.params);
      break;
    case GraphNode::Kind::Copy:
      std::memmove(reinterpret_cast<void *>(node.dst),
                   reinterpret_cast<const void *>(node.src), node.count);
      break;
    case GraphNode::Kind::Fill16:
      result = fill("cuMemsetD16Async", node.dst,
                    static_cast<unsigned short>(node.value), node.count);
      break;
    case GraphNode::Kind::Fill32:
      result = fill("cuMemsetD32Async", node.dst, node.value, node.count);
      break;
    }
    if (result != CUDA_SUCCESS)
      return result;
  }
  return CUDA_SUCCESS;
}
CUresult emuGraphExecDestroy(CUgraphExec exec) {
  delete reinterpret_cast<EmulatedGraph *>(exec);
  return CUDA_SUCCESS;
}
CUresult emuGraphDestroy(CUgraph graph) {
  delete reinterpret_cast<EmulatedGraph *>(graph);
  return CUDA_SUCCESS;
}
CUresult emuStreamWaitEvent(CUstream, CUevent, unsigned) {
  return CUDA_SUCCESS;
}
/// An event records the host time of its last cuEventRecord: every call
/// runs synchronously here, so the time between two records around a
/// launch is the time its emulation took (not a GPU time).
struct EmulatedEvent {
  std::chrono::steady_clock::time_point recorded;
  bool wasRecorded = false;
};
CUresult emuEventCreate(CUevent *event, unsigned) {
  *event = reinterpret_cast<CUevent>(new EmulatedEvent());
  return CUDA_SUCCESS;
}
CUresult emuEventDestroy(CUevent event) {
  delete reinterpret_cast<EmulatedEvent *>(event);
  return CUDA_SUCCESS;
}
CUresult emuEventRecord(CUevent event, CUstream) {
  if (!event)
    return failWith(CUDA_ERROR_INVALID_VALUE, "cuEventRecord: null event");
  auto *emulated = reinterpret_cast<EmulatedEvent *>(event);
  emulated->recorded = std::chrono::steady_clock::now();
  emulated->wasRecorded = true;
  return CUDA_SUCCESS;
}
CUresult emuEventSynchronize(CUevent) { return takePendingError(); }
CUresult emuEventElapsedTime(float *milliseconds, CUevent start, CUevent end) {
  auto *from = reinterpret_cast<EmulatedEvent *>(start);
  auto *to = reinterpret_cast<EmulatedEvent *>(end);
  if (!milliseconds || !from || !to || !from->wasRecorded || !to->wasRecorded)
    return failWith(CUDA_ERROR_INVALID_VALUE,
                    "cuEventElapsedTime: an event that was not recorded");
  *milliseconds =
      std::chrono::duration<float, std::milli>(to->recorded - from->recorded)
          .count();
  return CUDA_SUCCESS;
}

/// cuTensorMapEncodeTiled: the emulator's encoding (TensorMap.h), which its
/// TMA reads; what the real driver refuses is refused with the reason.
CUresult emuTensorMapEncodeTiled(CUtensorMap *map, int dataType, unsigned rank,
                                 void *globalAddress, const uint64_t *globalDim,
                                 const uint64_t *globalStrides,
                                 const unsigned *boxDim,
                                 const unsigned *elementStrides, int interleave,
                                 int swizzle, int l2Promotion, int oobFill) {
  if (!map || !globalDim || !boxDim || !elementStrides ||
      (rank > 1 && !globalStrides))
    return failWith(CUDA_ERROR_INVALID_VALUE,
                    "cuTensorMapEncodeTiled: a null argument");
  if (dataType < 0 || dataType > 12 || swizzle < 0 || swizzle > 3)
    return failWith(CUDA_ERROR_INVALID_VALUE,
                    "cuTensorMapEncodeTiled: unknown data type or swizzle");
  std::string error = ridge::emu::encodeTiledTensorMap(
      map, static_cast<ridge::emu::TensorDataType>(dataType), rank,
      reinterpret_cast<uint64_t>(globalAddress), globalDim, globalStrides,
      boxDim, elementStrides, static_cast<unsigned>(interleave),
      static_cast<ridge::emu::TensorSwizzle>(swizzle),
      static_cast<unsigned>(l2Promotion), static_cast<unsigned>(oobFill));
  if (!error.empty())
    return failWith(CUDA_ERROR_INVALID_VALUE,
                    "cuTensorMapEncodeTiled: " + error);
  return CUDA_SUCCESS;
}

} // namespace

std::vector<ridge::emu::KernelCounters> ridge::rt::getEmulatorCounters() {
  if (!state)
    return {};
  std::lock_guard<std::mutex> lock(state->mutex);
  return state->counters;
}

std::string ridge::rt::getEmulatorCountersJson() {
  return ridge::emu::formatCountersJson(getEmulatorCounters());
}

void ridge::rt::resetEmulatorCounters() {
  if (!state)
    return;
  std::lock_guard<std::mutex> lock(state->mutex);
  state->counters.clear();
  state->counterIndex.clear();
}

extern "C" size_t ridge_emulator_counters_json(char *buffer, size_t size) {
  std::string json = getEmulatorCountersJson();
  if (buffer && size) {
    size_t copied = std::min(json.size(), size - 1);
    std::memcpy(buffer, json.data(), copied);
    buffer[copied] = '\0';
  }
  return json.size();
}

CudaDriver::Api ridge::rt::getEmulatedDriverApi(int computeCapability) {
  if (!state)
    state = new EmulatorState();
  state->computeCapability = computeCapability;
  state->device.setComputeCapability(computeCapability);
  CudaDriver::Api a{};
  a.cuInit = emuInit;
  a.cuDriverGetVersion = emuDriverGetVersion;
  a.cuGetErrorName = emuGetErrorName;
  a.cuGetErrorString = emuGetErrorString;
  a.cuDeviceGetCount = emuDeviceGetCount;
  a.cuDeviceGet = emuDeviceGet;
  a.cuDeviceGetName = emuDeviceGetName;
  a.cuDeviceGetAttribute = emuDeviceGetAttribute;
  a.cuDevicePrimaryCtxRetain = emuPrimaryCtxRetain;
  a.cuCtxSetCurrent = emuCtxSetCurrent;
  a.cuCtxGetCurrent = emuCtxGetCurrent;
  a.cuCtxSynchronize = emuSynchronize;
  a.cuMemAlloc = emuMemAlloc;
  a.cuMemAllocManaged = emuMemAllocManaged;
  a.cuMemFree = emuMemFree;
  a.cuMemcpyHtoD = emuMemcpyHtoD;
  a.cuMemcpyDtoH = emuMemcpyDtoH;
  a.cuMemcpyDtoD = emuMemcpyDtoD;
  a.cuMemcpyAsync = emuMemcpyAsync;
  a.cuMemsetD8 = emuMemsetD8;
  a.cuMemsetD32 = emuMemsetD32;
  a.cuMemsetD16Async = emuMemsetD16Async;
  a.cuMemsetD32Async = emuMemsetD32Async;
  a.cuMemHostRegister = emuHostRegister;
  a.cuMemHostUnregister = emuHostUnregister;
  a.cuModuleLoadData = emuModuleLoadData;
  a.cuModuleLoadDataEx = emuModuleLoadDataEx;
  a.cuModuleUnload = emuModuleUnload;
  a.cuModuleGetFunction = emuModuleGetFunction;
  a.cuFuncSetAttribute = emuFuncSetAttribute;
  a.cuLaunchKernel = emuLaunchKernel;
  a.cuLaunchKernelEx = nullptr; // thread-block clusters are not emulated
  a.cuStreamCreate = emuStreamCreate;
  a.cuStreamDestroy = emuStreamDestroy;
  a.cuStreamSynchronize = emuStreamSynchronize;
  a.cuStreamWaitEvent = emuStreamWaitEvent;
  a.cuEventCreate = emuEventCreate;
  a.cuEventDestroy = emuEventDestroy;
  a.cuEventRecord = emuEventRecord;
  a.cuEventSynchronize = emuEventSynchronize;
  a.cuEventElapsedTime = emuEventElapsedTime;
  a.cuTensorMapEncodeTiled = emuTensorMapEncodeTiled;
  a.cuMemcpyHtoDAsync = emuMemcpyHtoDAsync;
  a.cuMemcpyDtoHAsync = emuMemcpyDtoHAsync;
  a.cuStreamBeginCapture = emuStreamBeginCapture;
  a.cuStreamEndCapture = emuStreamEndCapture;
  a.cuGraphInstantiateWithFlags = emuGraphInstantiate;
  a.cuGraphLaunch = emuGraphLaunch;
  a.cuGraphExecDestroy = emuGraphExecDestroy;
  a.cuGraphDestroy = emuGraphDestroy;
  return a;
}
