//===- TestKernelFault.cpp - A deliberately wrong kernel ------------------===//
//
// test-ridge-inject-kernel-fault{kernel=NAME} and the function behind it,
// which `ridge-run --verify --inject-fault=NAME` uses to check that the
// verification names a broken kernel (test/e2e/fusion-verify.test).
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::ridge;

LogicalResult mlir::ridge::injectKernelFault(ModuleOp module,
                                             StringRef kernel) {
  FusionGroupOp target;
  module.walk([&](FusionGroupOp group) {
    if (group.getName() == kernel)
      target = group;
  });
  if (!target)
    return module.emitError("no kernel named '") << kernel << "'";
  auto yield = cast<YieldOp>(target.getBody().front().getTerminator());
  if (yield.getValues().empty())
    return target.emitError("the kernel has no result");
  Value value = yield.getValues().front();
  auto type = cast<RankedTensorType>(value.getType());
  if (!isa<FloatType>(type.getElementType()))
    return target.emitError("the kernel's first result is not floating-point");
  OpBuilder builder(yield);
  auto scalar = RankedTensorType::get({}, type.getElementType());
  Value one = ConstantOp::create(
      builder, yield.getLoc(),
      DenseElementsAttr::get(scalar,
                             builder.getFloatAttr(type.getElementType(), 1.0)));
  Value wrong = AddOp::create(builder, yield.getLoc(), type, value, one);
  yield->setOperand(0, wrong);
  return success();
}

namespace {
struct TestInjectKernelFaultPass
    : public PassWrapper<TestInjectKernelFaultPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestInjectKernelFaultPass)

  TestInjectKernelFaultPass() = default;
  TestInjectKernelFaultPass(const TestInjectKernelFaultPass &pass)
      : PassWrapper(pass) {}

  StringRef getArgument() const final {
    return "test-ridge-inject-kernel-fault";
  }
  StringRef getDescription() const final {
    return "Add 1 to the first result of the fusion group named `kernel` "
           "(a deliberately wrong kernel)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<RidgeDialect>();
  }
  void runOnOperation() override {
    if (failed(injectKernelFault(getOperation(), kernel)))
      signalPassFailure();
  }

  Option<std::string> kernel{*this, "kernel",
                             llvm::cl::desc("Name of the fusion group")};
};
} // namespace

void mlir::ridge::test::registerRidgeTestPasses() {
  PassRegistration<TestInjectKernelFaultPass>();
  registerRidgeGpuTestPasses();
}
