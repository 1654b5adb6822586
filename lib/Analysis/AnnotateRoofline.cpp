//===- AnnotateRoofline.cpp - Record the roofline analysis as attributes --===//
//
// Mechanism only: the analysis computes, the pass writes what it computed as
// attributes so that FileCheck tests (and people reading IR) can see each op's
// FLOPs, bytes, intensity, format, compute ceiling, binding ceiling and
// predicted time.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/Passes.h"
#include "ridgeline/Analysis/Roofline.h"
#include "ridgeline/Analysis/Target.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::ridge {
#define GEN_PASS_DEF_ANNOTATEROOFLINEPASS
#include "ridgeline/Analysis/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
struct AnnotateRooflinePass
    : public ridge::impl::AnnotateRooflinePassBase<AnnotateRooflinePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<RooflineModel> model =
        getRooflineForPass(module, gpu, gpuSpec, precision);
    if (failed(model))
      return signalPassFailure();
    const GpuSpec *spec = &model->getGpu();
    Precision parsedPrecision = model->getPrecision();

    Builder builder(&getContext());
    module->setAttr(
        kRooflineGpuAttr,
        builder.getDictionaryAttr({
            builder.getNamedAttr("name", builder.getStringAttr(spec->name)),
            builder.getNamedAttr(
                "precision",
                builder.getStringAttr(stringifyPrecision(parsedPrecision))),
            builder.getNamedAttr(
                "peak_flops", builder.getF64FloatAttr(model->getMatrixPeak())),
            builder.getNamedAttr(
                "simt_peak_flops",
                builder.getF64FloatAttr(model->getVectorPeak())),
            builder.getNamedAttr("bandwidth",
                                 builder.getF64FloatAttr(spec->bandwidth)),
            builder.getNamedAttr(
                "ridge_point", builder.getF64FloatAttr(model->getRidgePoint())),
        }));

    const CostAnalysis &costs = getAnalysis<CostAnalysis>();
    for (const OpCost &cost : costs.getCosts()) {
      if (!cost.isKnown()) {
        cost.op->setAttr(kRooflineAttr, builder.getStringAttr("unknown"));
        continue;
      }
      RooflinePoint point = model->place(cost);
      cost.op->setAttr(
          kRooflineAttr,
          builder.getDictionaryAttr({
              builder.getNamedAttr("flops",
                                   builder.getI64IntegerAttr(cost.flops)),
              builder.getNamedAttr("bytes",
                                   builder.getI64IntegerAttr(cost.bytes)),
              builder.getNamedAttr(
                  "intensity", builder.getF64FloatAttr(point.getIntensity())),
              builder.getNamedAttr("precision",
                                   builder.getStringAttr(point.precision)),
              builder.getNamedAttr("ceiling_flops",
                                   builder.getF64FloatAttr(point.peakFlops)),
              builder.getNamedAttr(
                  "bound",
                  builder.getStringAttr(stringifyBound(point.getBound()))),
              builder.getNamedAttr("time_s",
                                   builder.getF64FloatAttr(point.getTime())),
          }));
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
