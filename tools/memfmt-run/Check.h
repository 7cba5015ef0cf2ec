//===- Check.h - memfmt-run --check against the reference -------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// --check runs the same model, weights and inputs a second time in a CPU
// context with the reference kernels and compares each output: the maximum
// absolute error max|a - b| and the relative error max|a - b| / max|b| (b =
// the reference), against a tolerance that depends on the precision and on
// where the model ran (toleranceFor).
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_TOOLS_MEMFMT_RUN_CHECK_H
#define MEMFMT_TOOLS_MEMFMT_RUN_CHECK_H

#include "ModelIO.h"
#include "Options.h"

#include <string>
#include <vector>

namespace memfmt::run {

/// The comparison of one output with the reference.
struct CheckResult {
  std::string Name;
  double MaxAbs = 0, MaxRel = 0;
};

/// Every output's comparison and the verdict.
struct CheckReport {
  std::vector<CheckResult> Outputs;
  double Tolerance = 1e-4;
  bool Passed = true;
};

/// How max|a-b| / max|b| is defined, for the report.
extern const char *const RelDefinition;

/// max|a - b| and max|a - b| / max|b| (b = reference). A NaN or infinity in
/// one tensor and not at the same place in the other makes both infinite.
CheckResult compare(const std::string &Name, const std::vector<float> &A,
                    const std::vector<float> &B);

/// The largest relative error that passes for \p Precision ("f32", "f16",
/// "bf16"), on a device or not, with \p ReducedMath (f32 convolutions in
/// TF32 on a GPU, in bf16 on the CPU) or not.
double toleranceFor(const std::string &Precision, bool OnDevice,
                    bool ReducedMath);

/// Runs the model of \p Opts with \p Info's weights source in a CPU context
/// with the reference kernels on \p Inputs and compares with \p Outputs.
CheckReport
checkAgainstReference(const Options &Opts, const memfmt_model_info_t &Info,
                      const Tensors &T,
                      const std::vector<std::vector<float>> &Inputs,
                      const std::vector<std::vector<float>> &Outputs,
                      bool OnDevice, bool ReducedMath);

} // namespace memfmt::run

#endif // MEMFMT_TOOLS_MEMFMT_RUN_CHECK_H
