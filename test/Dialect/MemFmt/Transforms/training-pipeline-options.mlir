// RUN: not memfmt-opt %s --memfmt-training-pipeline="precision=f16" 2>&1 | FileCheck %s --check-prefix=F16
// RUN: not memfmt-opt %s --memfmt-training-pipeline="lr=-0.1" 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not memfmt-opt %s --memfmt-training-pipeline="momentum=0 nesterov=true" 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not memfmt-opt %s --memfmt-training-pipeline="memory-format=nhwc" 2>&1 | FileCheck %s --check-prefix=MEMORY-FORMAT
// RUN: not memfmt-opt %s --memfmt-training-pipeline="gradients=true loss-scale=1024" 2>&1 | FileCheck %s --check-prefix=SCALED-GRADIENTS
// RUN: memfmt-opt --help | FileCheck %s --check-prefix=HELP

// memfmt-training-pipeline rejects, when its options are parsed, what a
// training step cannot be built with (as memfmt-compile --train does), and
// choice options with LLVM's standard error.
// F16: error: memfmt-training-pipeline: precision=f16 training runs on target=cuda (the cpu's reduced-precision kernels are bf16)
// LR: error: memfmt-training-pipeline: lr=-0.1 must be >= 0 (torch.optim.SGD's check)
// SCALED-GRADIENTS: error: memfmt-training-pipeline: loss-scale needs the SGD update: with gradients the step would return the gradients of the scaled loss
// NESTEROV: error: memfmt-training-pipeline: nesterov requires momentum > 0 and dampening = 0
// MEMORY-FORMAT: for the --memory-format option: Cannot find option named 'nhwc'!

// memfmt-opt lists the pipeline and its options, with their defaults.
// HELP: --memfmt-training-pipeline
// HELP-NEXT: --dampening=<number>
// HELP-NEXT: --fusion
// HELP-NEXT: --gradients
// HELP-NEXT: --input-format=<value>
// HELP-NEXT: =channels-last
// HELP-NEXT: =contiguous
// HELP-NEXT: --loss-scale=<number>
// HELP-NEXT: --loss-scale-backoff-factor=<number>
// HELP-NEXT: --loss-scale-growth-factor=<number>
// HELP-NEXT: --loss-scale-growth-interval=<long>
// HELP-NEXT: --lr=<number>
// HELP-NEXT: --memory-format=<value>
// HELP-NEXT: =channels-last
// HELP-NEXT: =contiguous
// HELP-NEXT: --momentum=<number>
// HELP-NEXT: --nesterov
// HELP-NEXT: --precision=<value>
// HELP-NEXT: =f32
// HELP-NEXT: =f16
// HELP-NEXT: =bf16
// HELP-NEXT: --report-json=<string>
// HELP-NEXT: --report-text=<string>
// HELP-NEXT: --target=<value>
// HELP-NEXT: =cpu
// HELP-NEXT: =cuda
// HELP-NEXT: --weight-decay=<number>
func.func @f(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  return %x : tensor<2x5xf32>
}
