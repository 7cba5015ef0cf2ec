// RUN: not memfmt-opt %s --memfmt-propagate-channels-last="inputs=nhwc" 2>&1 | FileCheck %s --check-prefix=INPUTS
// RUN: not memfmt-opt %s --memfmt-propagate-channels-last="weights=nhwc" 2>&1 | FileCheck %s --check-prefix=WEIGHTS
// RUN: not memfmt-opt %s --memfmt-propagate-channels-last="outputs=nhwc" 2>&1 | FileCheck %s --check-prefix=OUTPUTS
// RUN: not memfmt-opt %s --memfmt-channels-last="inputs=nhwc" 2>&1 | FileCheck %s --check-prefix=INPUTS
// RUN: not memfmt-opt %s --memfmt-report="format=xml" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not memfmt-opt %s --memfmt-report="output=/nonexistent/dir/r.json" 2>&1 | FileCheck %s --check-prefix=OUTPUT
// RUN: not memfmt-opt %s --memfmt-compile-pipeline="memory-format=nhwc" 2>&1 | FileCheck %s --check-prefix=MEMORY-FORMAT
// RUN: not memfmt-opt %s --memfmt-compile-pipeline="target=tpu" 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not memfmt-opt %s --memfmt-compile-pipeline="precision=f16" 2>&1 | FileCheck %s --check-prefix=F16-CPU

// Pass and pipeline options that are choices reject other values with
// LLVM's standard error and a non-zero exit; other bad options give located
// errors.
// INPUTS: for the --inputs option: Cannot find option named 'nhwc'!
// WEIGHTS: for the --weights option: Cannot find option named 'nhwc'!
// OUTPUTS: for the --outputs option: Cannot find option named 'nhwc'!
// FORMAT: for the --format option: Cannot find option named 'xml'!
// OUTPUT: error: memfmt-report: cannot write '/nonexistent/dir/r.json'
// MEMORY-FORMAT: for the --memory-format option: Cannot find option named 'nhwc'!
// TARGET: for the --target option: Cannot find option named 'tpu'!

// The compile pipeline rejects a precision its target has no kernels for,
// as memfmt-compile does.
// F16-CPU: error: memfmt-compile-pipeline: precision=f16 is not available on target=cpu (its reduced-precision kernels are bf16)
func.func @f(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  return %x : tensor<1x2x3x3xf32>
}
