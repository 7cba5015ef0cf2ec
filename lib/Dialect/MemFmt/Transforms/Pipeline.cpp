//===- Pipeline.cpp - The memfmt-channels-last pipeline -------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// memfmt-channels-last: propagate channels-last (with the options passed
// through), make reshape conversions explicit, fold conversions, then
// canonicalize and CSE. Running it twice gives the same IR as running it
// once.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::memfmt;

void mlir::memfmt::buildChannelsLastPipeline(
    OpPassManager &pm, const ChannelsLastPipelineOptions &options) {
  PropagateChannelsLastOptions propagate;
  propagate.inputs = options.inputs;
  propagate.weights = options.weights;
  propagate.outputs = options.outputs;
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createPropagateChannelsLast(propagate));
  funcPm.addPass(createMaterializeContiguous());
  funcPm.addPass(createFoldConversions());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::memfmt::registerChannelsLastPipeline() {
  PassPipelineRegistration<ChannelsLastPipelineOptions>(
      "memfmt-channels-last",
      "Run memfmt's layout passes: propagate channels-last, make reshape "
      "conversions explicit, fold conversions, canonicalize, cse",
      buildChannelsLastPipeline);
}
