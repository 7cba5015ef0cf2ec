// RUN: not memfmt-opt %s --memfmt-propagate-channels-last="inputs=nhwc" 2>&1 | FileCheck %s --check-prefix=INPUTS
// RUN: not memfmt-opt %s --memfmt-propagate-channels-last="weights=nhwc" 2>&1 | FileCheck %s --check-prefix=WEIGHTS
// RUN: not memfmt-opt %s --memfmt-propagate-channels-last="outputs=nhwc" 2>&1 | FileCheck %s --check-prefix=OUTPUTS
// RUN: not memfmt-opt %s --memfmt-report="format=xml" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not memfmt-opt %s --memfmt-report="output=/nonexistent/dir/r.json" 2>&1 | FileCheck %s --check-prefix=OUTPUT

// Bad pass options give located errors and a non-zero exit.
// INPUTS: error: memfmt-propagate-channels-last: inputs='nhwc' is not one of convert, channels-last, keep
// WEIGHTS: error: memfmt-propagate-channels-last: weights='nhwc' is not one of channels-last, keep
// OUTPUTS: error: memfmt-propagate-channels-last: outputs='nhwc' is not one of keep, channels-last
// FORMAT: error: memfmt-report: format='xml' is not text or json
// OUTPUT: error: memfmt-report: cannot write '/nonexistent/dir/r.json'
func.func @f(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  return %x : tensor<1x2x3x3xf32>
}
