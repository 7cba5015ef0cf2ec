//===- Check.cpp - memfmt-run --check: against the reference kernels ------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The comparison of a run's outputs with the CPU reference kernels' (see
// Check.h): a second context and model, the same inputs, per-output errors
// and the tolerance.
//
//===----------------------------------------------------------------------===//

#include "Check.h"

#include <algorithm>
#include <cmath>

namespace memfmt::run {

const char *const RelDefinition =
    "max|a-b| / max|b| over the output, b = reference kernels";

CheckResult compare(const std::string &Name, const std::vector<float> &A,
                    const std::vector<float> &B) {
  CheckResult R;
  R.Name = Name;
  double MaxRef = 0;
  for (size_t I = 0; I < A.size(); ++I) {
    double X = A[I], Y = B[I];
    bool SameSpecial = (std::isnan(X) && std::isnan(Y)) ||
                       (std::isinf(X) && std::isinf(Y) && X == Y);
    if (SameSpecial)
      continue;
    if (!std::isfinite(X) || !std::isfinite(Y)) {
      R.MaxAbs = INFINITY;
      continue;
    }
    R.MaxAbs = std::max(R.MaxAbs, std::fabs(X - Y));
    MaxRef = std::max(MaxRef, std::fabs(Y));
  }
  if (std::isinf(R.MaxAbs))
    R.MaxRel = INFINITY;
  else if (MaxRef > 0)
    R.MaxRel = R.MaxAbs / MaxRef;
  else
    R.MaxRel = R.MaxAbs > 0 ? INFINITY : 0.0;
  return R;
}

double toleranceFor(const std::string &Precision, bool OnDevice,
                    bool ReducedMath) {
  if (Precision == "f16")
    return 1e-2;
  if (Precision == "bf16")
    return 4e-2;
  if (!OnDevice)
    return ReducedMath ? 4e-2 : 1e-4;
  return ReducedMath ? 1e-2 : 1e-3;
}

CheckReport
checkAgainstReference(const Options &Opts, const memfmt_model_info_t &Info,
                      const Tensors &T,
                      const std::vector<std::vector<float>> &Inputs,
                      const std::vector<std::vector<float>> &Outputs,
                      bool OnDevice, bool ReducedMath) {
  // The CPU reference kernels, whatever the model's target.
  ContextPtr RefCtx = createContext(MEMFMT_KERNELS_REFERENCE, Opts);
  ModelPtr RefModel = loadModel(RefCtx.get(), Opts.Dir, Info.weights_source,
                                /*AnyTarget=*/true);
  std::vector<std::vector<float>> RefOutputs;
  runLogical(RefModel.get(), T, Inputs, RefOutputs);
  CheckReport R;
  R.Tolerance = toleranceFor(Info.precision, OnDevice, ReducedMath);
  for (size_t I = 0; I < Outputs.size(); ++I) {
    R.Outputs.push_back(compare(T.Outputs[I].name, Outputs[I], RefOutputs[I]));
    if (!(R.Outputs.back().MaxRel <= R.Tolerance))
      R.Passed = false;
  }
  return R;
}

} // namespace memfmt::run
