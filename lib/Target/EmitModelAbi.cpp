//===- EmitModelAbi.cpp - C entry points of a compiled model --------------===//
//
// This file implements ridge-emit-model-abi. The runtime (which links neither
// MLIR nor LLVM) knows a compiled model only through two C symbols and the
// constant descriptor one of them returns; the C declarations are in
// include/ridgeline/Runtime/ModelAbi.h.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Target/Passes.h"
#include "ridgeline/Target/WeightsFile.h"

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "ridgeline/Runtime/ModelAbi.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "ridge-emit-model-abi"

namespace mlir::ridge {
#define GEN_PASS_DEF_EMITMODELABIPASS
#include "ridgeline/Target/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
/// One tensor of the kModelAbiAttr description, checked.
struct TensorAbi {
  StringRef name;
  uint32_t dtype;
  ArrayRef<int64_t> shape;
};
} // namespace

/// Reads and checks the description attachModelAbi recorded. It is
/// compiler-written, but ridge-opt users write it by hand.
static LogicalResult readModelAbi(ModuleOp module, StringRef &target,
                                  SmallVectorImpl<TensorAbi> &tensors,
                                  unsigned &numInputs) {
  auto fail = [&]() {
    return module.emitError("ridge-emit-model-abi: '")
           << ridge::kModelAbiAttr << "' ";
  };
  Attribute raw = module->getAttr(ridge::kModelAbiAttr);
  if (!raw)
    return fail() << "attribute is missing; run ridge-attach-model-abi on "
                     "the graph module";
  auto abi = dyn_cast<DictionaryAttr>(raw);
  auto targetAttr = abi ? abi.getAs<StringAttr>("target") : StringAttr();
  auto inputs = abi ? abi.getAs<ArrayAttr>("inputs") : ArrayAttr();
  auto outputs = abi ? abi.getAs<ArrayAttr>("outputs") : ArrayAttr();
  if (!targetAttr || targetAttr.getValue().empty() || !inputs || !outputs)
    return fail() << "must be a dictionary with a non-empty 'target' string "
                     "and 'inputs' and 'outputs' arrays, got "
                  << raw;
  if (outputs.empty())
    return fail() << "describes no outputs";
  target = targetAttr.getValue();
  numInputs = inputs.size();
  for (auto [kind, list] : {std::pair<StringRef, ArrayAttr>{"input", inputs},
                            {"output", outputs}}) {
    for (auto [index, element] : llvm::enumerate(list)) {
      auto desc = dyn_cast<DictionaryAttr>(element);
      auto name = desc ? desc.getAs<StringAttr>("name") : StringAttr();
      auto dtype = desc ? desc.getAs<IntegerAttr>("dtype") : IntegerAttr();
      auto shape = desc ? dyn_cast_or_null<DenseI64ArrayAttr>(desc.get("shape"))
                        : DenseI64ArrayAttr();
      if (!name || name.getValue().empty() || !dtype || !shape)
        return fail() << kind << " " << index
                      << " must be {name = non-empty string, dtype = integer, "
                         "shape = array<i64>}, got "
                      << element;
      int64_t value = dtype.getValue().getSExtValue();
      if (value < 0 || value > UINT32_MAX ||
          ridge_dtype_size(static_cast<uint32_t>(value)) == 0)
        return fail() << kind << " " << index << " ('" << name.getValue()
                      << "') has dtype " << value
                      << ", which is not a ridge_dtype of ModelAbi.h";
      if (llvm::any_of(shape.asArrayRef(), [](int64_t d) { return d < 0; }))
        return fail() << kind << " " << index << " ('" << name.getValue()
                      << "') has a negative dim in " << shape;
      tensors.push_back(
          {name.getValue(), static_cast<uint32_t>(value), shape.asArrayRef()});
    }
  }
  return success();
}

namespace {
/// One weight of the kDeviceMemoryAttr plan.
struct DeviceWeightAbi {
  StringRef global;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};
/// The kDeviceMemoryAttr plan, checked.
struct DeviceMemoryAbi {
  uint64_t weightsBytes = 0, arenaBytes = 0, peakLiveBytes = 0;
  SmallVector<DeviceWeightAbi> weights;
  /// The arena's first bytes, zero before the first run (kKeptZeroAttr).
  uint64_t zeroedBytes = 0;
};
} // namespace

/// Reads ridge-plan-device-memory's description; nullopt for a module
/// without one (a CPU model).
static FailureOr<std::optional<DeviceMemoryAbi>>
readDeviceMemory(ModuleOp module) {
  Attribute raw = module->getAttr(ridge::kDeviceMemoryAttr);
  if (!raw)
    return std::optional<DeviceMemoryAbi>();
  auto fail = [&]() {
    return module.emitError("ridge-emit-model-abi: '")
           << ridge::kDeviceMemoryAttr << "' ";
  };
  auto dict = dyn_cast<DictionaryAttr>(raw);
  auto getSize = [&](StringRef key) -> std::optional<uint64_t> {
    auto value = dict ? dict.getAs<IntegerAttr>(key) : IntegerAttr();
    if (!value || value.getValue().isNegative())
      return std::nullopt;
    return value.getValue().getZExtValue();
  };
  std::optional<uint64_t> weightsBytes = getSize("weights_bytes"),
                          arenaBytes = getSize("arena_bytes"),
                          peakLiveBytes = getSize("peak_live_bytes");
  auto list = dict ? dict.getAs<ArrayAttr>("weights") : ArrayAttr();
  if (!weightsBytes || !arenaBytes || !peakLiveBytes || !list) {
    fail() << "must be {weights_bytes, arena_bytes, peak_live_bytes (sizes), "
              "weights (array)}, got "
           << raw;
    return failure();
  }
  DeviceMemoryAbi plan{*weightsBytes, *arenaBytes, *peakLiveBytes, {}};
  // A plan without buffers kept zero may leave the size out.
  if (dict.get("zeroed_bytes")) {
    std::optional<uint64_t> zeroedBytes = getSize("zeroed_bytes");
    if (!zeroedBytes || *zeroedBytes > *arenaBytes) {
      fail() << "has 'zeroed_bytes' that is not a size at most "
                "'arena_bytes', got "
             << raw;
      return failure();
    }
    plan.zeroedBytes = *zeroedBytes;
  }
  for (auto [index, element] : llvm::enumerate(list)) {
    auto entry = dyn_cast<DictionaryAttr>(element);
    auto global =
        entry ? entry.getAs<FlatSymbolRefAttr>("global") : FlatSymbolRefAttr();
    auto offset = entry ? entry.getAs<IntegerAttr>("offset") : IntegerAttr();
    auto bytes = entry ? entry.getAs<IntegerAttr>("bytes") : IntegerAttr();
    if (!global || !offset || !bytes || offset.getValue().isNegative() ||
        bytes.getValue().isNegative() ||
        offset.getValue().getZExtValue() + bytes.getValue().getZExtValue() >
            *weightsBytes) {
      fail() << "weight " << index
             << " must be {global = @symbol, offset, bytes} inside "
                "weights_bytes, got "
             << element;
      return failure();
    }
    plan.weights.push_back({global.getValue(), offset.getValue().getZExtValue(),
                            bytes.getValue().getZExtValue()});
  }
  return std::optional<DeviceMemoryAbi>(std::move(plan));
}

/// A GPU model's @main issues its work on the stream its caller gives: the
/// streams gpu-to-llvm creates (mgpuStreamCreate; one, unless host code
/// between kernels split the async region) all become that parameter, their
/// destruction goes, and so does the synchronization at the end of the run,
/// so that a run returns once its work is queued (and can be captured in a
/// CUDA graph). Synchronizations before the host reads device data stay.
static void takeStreamParameter(LLVM::LLVMFuncOp main) {
  auto ptrType = LLVM::LLVMPointerType::get(main.getContext());
  SmallVector<LLVM::CallOp> creates;
  main.walk([&](LLVM::CallOp call) {
    if (call.getCallee() == "mgpuStreamCreate")
      creates.push_back(call);
  });
  SmallVector<Type> params(main.getFunctionType().getParams());
  params.push_back(ptrType);
  main.setFunctionType(LLVM::LLVMFunctionType::get(
      main.getFunctionType().getReturnType(), params));
  BlockArgument stream = main.front().addArgument(ptrType, main.getLoc());
  for (LLVM::CallOp create : creates) {
    Value created = create.getResult();
    auto callsOf = [&](StringRef callee) {
      SmallVector<LLVM::CallOp> calls;
      for (Operation *user : created.getUsers())
        if (auto call = dyn_cast<LLVM::CallOp>(user))
          if (call.getCallee() == callee)
            calls.push_back(call);
      return calls;
    };
    for (LLVM::CallOp destroy : callsOf("mgpuStreamDestroy"))
      destroy.erase();
    // The end of the run: the synchronization right before the return.
    for (LLVM::CallOp sync : callsOf("mgpuStreamSynchronize"))
      if (isa_and_nonnull<LLVM::ReturnOp>(sync->getNextNode()))
        sync.erase();
    created.replaceAllUsesWith(stream);
    create.erase();
  }
}

/// Adds the constant descriptor globals and `ridge_model_describe` at the
/// end of `module`. The LLVM struct types mirror ModelAbi.h's C structs;
/// LLVM lays out non-packed structs with the host C ABI's alignment, which
/// inserts the same padding (Model.cpp pins the offsets).
static void emitDescriptor(ModuleOp module, StringRef target,
                           ArrayRef<TensorAbi> tensors, unsigned numInputs,
                           const std::optional<ExternalWeights> &weights,
                           const std::optional<DeviceMemoryAbi> &device) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  auto i8 = IntegerType::get(ctx, 8);
  auto i32 = IntegerType::get(ctx, 32);
  auto i64 = IntegerType::get(ctx, 64);
  // struct ridge_tensor_desc { const char *name; uint32_t dtype, rank;
  //                            const int64_t *dims; }
  auto tensorType =
      LLVM::LLVMStructType::getLiteral(ctx, {ptrType, i32, i32, ptrType});
  // struct ridge_weight_desc { const char *name; const void **address;
  //                            uint64_t offset, bytes; }
  auto weightType =
      LLVM::LLVMStructType::getLiteral(ctx, {ptrType, ptrType, i64, i64});
  // struct ridge_model_desc { uint32_t abi_version; const char *target;
  //                           uint32_t num_inputs, num_outputs;
  //                           const struct ridge_tensor_desc *tensors;
  //                           const char *weights_file; uint32_t num_weights;
  //                           const struct ridge_weight_desc *weights;
  //                           uint64_t weights_fingerprint, weights_bytes;
  //                           uint64_t device_weights_bytes, arena_bytes,
  //                                    peak_live_bytes;
  //                           uint32_t num_device_weights;
  //                           const struct ridge_device_weight_desc
  //                               *device_weights;
  //                           uint64_t arena_zeroed_bytes; }
  auto modelType = LLVM::LLVMStructType::getLiteral(
      ctx, {i32, ptrType, i32, i32, ptrType, ptrType, i32, ptrType, i64, i64,
            i64, i64, i64, i32, ptrType, i64});
  // struct ridge_device_weight_desc { const char *name;
  //                                   const void *const *source;
  //                                   uint64_t offset, bytes; }
  auto deviceWeightType = weightType;

  auto addString = [&](const Twine &symbol, StringRef value) {
    std::string text = value.str();
    text.push_back('\0');
    return LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(i8, text.size()), /*isConstant=*/true,
        LLVM::Linkage::Internal, symbol.str(), b.getStringAttr(text));
  };
  // Fills `global`'s initializer region with the value `build` returns.
  auto initialize = [&](LLVM::GlobalOp global,
                        llvm::function_ref<Value()> build) {
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(&global.getInitializerRegion());
    LLVM::ReturnOp::create(b, loc, build());
  };
  // A value of the struct or array `type` with `fields` in order.
  auto aggregate = [&](Type type, ArrayRef<Value> fields) -> Value {
    Value result = LLVM::ZeroOp::create(b, loc, type);
    for (auto [field, value] : llvm::enumerate(fields))
      result = LLVM::InsertValueOp::create(b, loc, result, value,
                                           static_cast<int64_t>(field));
    return result;
  };
  auto constant = [&](Type type, int64_t value) -> Value {
    return LLVM::ConstantOp::create(b, loc, type,
                                    b.getIntegerAttr(type, value));
  };

  LLVM::GlobalOp targetGlobal = addString("ridge_abi_target", target);
  SmallVector<LLVM::GlobalOp> names, dims;
  for (auto [k, tensor] : llvm::enumerate(tensors)) {
    names.push_back(addString("ridge_abi_name_" + Twine(k), tensor.name));
    if (tensor.shape.empty()) {
      dims.push_back(nullptr);
      continue;
    }
    auto dimsType =
        RankedTensorType::get({static_cast<int64_t>(tensor.shape.size())}, i64);
    dims.push_back(LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(i64, tensor.shape.size()),
        /*isConstant=*/true, LLVM::Linkage::Internal,
        ("ridge_abi_dims_" + Twine(k)).str(),
        DenseIntElementsAttr::get(dimsType, tensor.shape)));
  }

  auto arrayType = LLVM::LLVMArrayType::get(tensorType, tensors.size());
  auto tensorArray = LLVM::GlobalOp::create(
      b, loc, arrayType, /*isConstant=*/true, LLVM::Linkage::Internal,
      "ridge_abi_tensors", Attribute());
  initialize(tensorArray, [&]() -> Value {
    Value array = LLVM::ZeroOp::create(b, loc, arrayType);
    for (auto [k, tensor] : llvm::enumerate(tensors)) {
      Value dimsPtr = dims[k]
                          ? Value(LLVM::AddressOfOp::create(b, loc, dims[k]))
                          : Value(LLVM::ZeroOp::create(b, loc, ptrType));
      Value fields[] = {LLVM::AddressOfOp::create(b, loc, names[k]),
                        constant(i32, tensor.dtype),
                        constant(i32, tensor.shape.size()), dimsPtr};
      array = LLVM::InsertValueOp::create(b, loc, array,
                                          aggregate(tensorType, fields),
                                          static_cast<int64_t>(k));
    }
    return array;
  });

  // The weight table: each entry points at the address slot the runtime
  // fills.
  LLVM::GlobalOp weightsFile, weightArray;
  if (weights) {
    weightsFile = addString("ridge_abi_weights_file", weights->file);
    SmallVector<LLVM::GlobalOp> weightNames;
    for (auto [k, weight] : llvm::enumerate(weights->weights))
      weightNames.push_back(
          addString("ridge_abi_weight_name_" + Twine(k), weight.name));
    auto weightArrayType =
        LLVM::LLVMArrayType::get(weightType, weights->weights.size());
    weightArray = LLVM::GlobalOp::create(
        b, loc, weightArrayType, /*isConstant=*/true, LLVM::Linkage::Internal,
        "ridge_abi_weights", Attribute());
    initialize(weightArray, [&]() -> Value {
      Value array = LLVM::ZeroOp::create(b, loc, weightArrayType);
      for (auto [k, weight] : llvm::enumerate(weights->weights)) {
        Value fields[] = {
            LLVM::AddressOfOp::create(b, loc, weightNames[k]),
            LLVM::AddressOfOp::create(b, loc, ptrType, weight.global),
            constant(i64, static_cast<int64_t>(weight.offset)),
            constant(i64, static_cast<int64_t>(weight.bytes))};
        array = LLVM::InsertValueOp::create(b, loc, array,
                                            aggregate(weightType, fields),
                                            static_cast<int64_t>(k));
      }
      return array;
    });
  }
  // The device weight table: each entry points at a pointer to the
  // weight's host bytes, the weight's address slot when it is in the
  // weights file (valid once the file is mapped), a constant otherwise.
  LLVM::GlobalOp deviceWeightArray;
  if (device && !device->weights.empty()) {
    llvm::StringMap<const ExternalWeight *> slots;
    if (weights)
      for (const ExternalWeight &weight : weights->weights)
        slots[weight.global.getValue()] = &weight;
    SmallVector<std::pair<LLVM::GlobalOp, LLVM::GlobalOp>> entries;
    for (auto [k, weight] : llvm::enumerate(device->weights)) {
      StringRef name = weight.global;
      LLVM::GlobalOp source;
      auto slot = slots.find((weight.global + "_address").str());
      if (slot != slots.end()) {
        name = slot->second->name;
        source = module.lookupSymbol<LLVM::GlobalOp>(slot->getKey());
      } else {
        auto data = module.lookupSymbol<LLVM::GlobalOp>(weight.global);
        source = LLVM::GlobalOp::create(
            b, loc, ptrType, /*isConstant=*/true, LLVM::Linkage::Internal,
            ("ridge_abi_device_weight_source_" + Twine(k)).str(), Attribute(),
            /*alignment=*/8);
        initialize(source, [&]() -> Value {
          return LLVM::AddressOfOp::create(b, loc, data);
        });
      }
      entries.push_back(
          {addString("ridge_abi_device_weight_name_" + Twine(k), name),
           source});
    }
    auto arrayType =
        LLVM::LLVMArrayType::get(deviceWeightType, device->weights.size());
    deviceWeightArray = LLVM::GlobalOp::create(
        b, loc, arrayType, /*isConstant=*/true, LLVM::Linkage::Internal,
        "ridge_abi_device_weights", Attribute());
    initialize(deviceWeightArray, [&]() -> Value {
      Value array = LLVM::ZeroOp::create(b, loc, arrayType);
      for (auto [k, weight] : llvm::enumerate(device->weights)) {
        Value fields[] = {LLVM::AddressOfOp::create(b, loc, entries[k].first),
                          LLVM::AddressOfOp::create(b, loc, entries[k].second),
                          constant(i64, static_cast<int64_t>(weight.offset)),
                          constant(i64, static_cast<int64_t>(weight.bytes))};
        array = LLVM::InsertValueOp::create(b, loc, array,
                                            aggregate(deviceWeightType, fields),
                                            static_cast<int64_t>(k));
      }
      return array;
    });
  }
  auto addressOrNull = [&](LLVM::GlobalOp global) -> Value {
    return global ? Value(LLVM::AddressOfOp::create(b, loc, global))
                  : Value(LLVM::ZeroOp::create(b, loc, ptrType));
  };

  auto model = LLVM::GlobalOp::create(b, loc, modelType, /*isConstant=*/true,
                                      LLVM::Linkage::Internal,
                                      "ridge_abi_model", Attribute());
  initialize(model, [&]() -> Value {
    Value fields[] = {
        constant(i32, RIDGE_MODEL_ABI_VERSION),
        LLVM::AddressOfOp::create(b, loc, targetGlobal),
        constant(i32, numInputs),
        constant(i32, tensors.size() - numInputs),
        LLVM::AddressOfOp::create(b, loc, tensorArray),
        addressOrNull(weightsFile),
        constant(i32, weights ? weights->weights.size() : 0),
        addressOrNull(weightArray),
        constant(i64, weights ? static_cast<int64_t>(weights->fingerprint) : 0),
        constant(i64, weights ? static_cast<int64_t>(weights->bytes) : 0),
        constant(i64, device ? static_cast<int64_t>(device->weightsBytes) : 0),
        constant(i64, device ? static_cast<int64_t>(device->arenaBytes) : 0),
        constant(i64, device ? static_cast<int64_t>(device->peakLiveBytes) : 0),
        constant(i32, device ? device->weights.size() : 0),
        addressOrNull(deviceWeightArray),
        constant(i64, device ? static_cast<int64_t>(device->zeroedBytes) : 0),
    };
    return aggregate(modelType, fields);
  });

  // const struct ridge_model_desc *ridge_model_describe(void)
  auto describe = LLVM::LLVMFuncOp::create(
      b, loc, "ridge_model_describe", LLVM::LLVMFunctionType::get(ptrType, {}));
  b.setInsertionPointToStart(describe.addEntryBlock(b));
  LLVM::ReturnOp::create(b, loc,
                         Value(LLVM::AddressOfOp::create(b, loc, model)));
}

namespace {
struct EmitModelAbiPass : ridge::impl::EmitModelAbiPassBase<EmitModelAbiPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto main = module.lookupSymbol<LLVM::LLVMFuncOp>("main");
    if (!main) {
      module.emitError("ridge-emit-model-abi: no LLVM function @main; run it "
                       "after lowering to the LLVM dialect");
      return signalPassFailure();
    }
    StringRef target;
    SmallVector<TensorAbi> tensors;
    unsigned numInputs = 0;
    if (failed(readModelAbi(module, target, tensors, numInputs)))
      return signalPassFailure();
    FailureOr<std::optional<ExternalWeights>> weights =
        readExternalWeights(module);
    if (failed(weights))
      return signalPassFailure();
    if (*weights) {
      for (const ExternalWeight &weight : (*weights)->weights) {
        auto global = module.lookupSymbol<LLVM::GlobalOp>(weight.global);
        if (!global || global.getConstant() ||
            !isa<LLVM::LLVMPointerType>(global.getGlobalType())) {
          module.emitError("ridge-emit-model-abi: weight '")
              << weight.name << "' names " << weight.global
              << ", which is no writable pointer llvm.mlir.global (the "
                 "weight's address slot)";
          return signalPassFailure();
        }
      }
    }
    FailureOr<std::optional<DeviceMemoryAbi>> device = readDeviceMemory(module);
    if (failed(device))
      return signalPassFailure();
    if (*device) {
      for (const DeviceWeightAbi &weight : (*device)->weights) {
        if (module.lookupSymbol<LLVM::GlobalOp>(weight.global) ||
            module.lookupSymbol<LLVM::GlobalOp>(
                (weight.global + "_address").str()))
          continue;
        module.emitError("ridge-emit-model-abi: device weight @")
            << weight.global << " names no llvm.mlir.global";
        return signalPassFailure();
      }
    }
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    for (Type type : main.getFunctionType().getParams()) {
      if (type != ptrType) {
        main.emitError("ridge-emit-model-abi: @main must take one pointer per "
                       "buffer (bare-pointer convention), found ")
            << type;
        return signalPassFailure();
      }
    }
    if (!isa<LLVM::LLVMVoidType>(main.getFunctionType().getReturnType())) {
      main.emitError("ridge-emit-model-abi: @main must return its results "
                     "through out-parameters");
      return signalPassFailure();
    }

    // A GPU model's @main takes its two device blocks after the tensors.
    unsigned numBlocks = *device ? 2 : 0;
    if (main.getNumArguments() != tensors.size() + numBlocks) {
      main.emitError("ridge-emit-model-abi: @main takes ")
          << main.getNumArguments() << " buffers but '" << ridge::kModelAbiAttr
          << "' describes " << tensors.size() << " tensors"
          << (numBlocks ? " and '" + ridge::kDeviceMemoryAttr.str() +
                              "' two device blocks"
                        : std::string());
      return signalPassFailure();
    }
    if (*device)
      takeStreamParameter(main);

    // Only the two entry points are the model's interface; `main` must not
    // clash with a host program's main.
    main.setLinkage(LLVM::Linkage::Internal);
    // ONNX names live on in the descriptor; LLVM IR has no use for them.
    for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i)
      main.setArgAttrs(i, ArrayRef<NamedAttribute>{});

    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = module.getLoc();
    auto voidType = LLVM::LLVMVoidType::get(ctx);

    // void ridge_model_run(void **buffers): the tensors, then a GPU model's
    // device blocks and stream.
    auto run = LLVM::LLVMFuncOp::create(
        b, loc, "ridge_model_run",
        LLVM::LLVMFunctionType::get(voidType, ptrType));
    Block *body = run.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    SmallVector<Value> buffers;
    for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i) {
      Value slot =
          LLVM::GEPOp::create(b, loc, ptrType, ptrType, body->getArgument(0),
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      buffers.push_back(LLVM::LoadOp::create(b, loc, ptrType, slot));
    }
    LLVM::CallOp::create(b, loc, main, buffers);
    LLVM::ReturnOp::create(b, loc, ValueRange{});

    emitDescriptor(module, target, tensors, numInputs, *weights, *device);
    // The globals are the description from here on.
    module->removeAttr(ridge::kModelAbiAttr);
    module->removeAttr(ridge::kDeviceMemoryAttr);
  }
};

} // namespace
