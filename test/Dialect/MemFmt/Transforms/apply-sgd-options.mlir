// RUN: not memfmt-opt %s --memfmt-apply-sgd="lr=-1" 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not memfmt-opt %s --memfmt-apply-sgd="momentum=-0.5" 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// RUN: not memfmt-opt %s --memfmt-apply-sgd="weight-decay=-1e-4" 2>&1 | FileCheck %s --check-prefix=DECAY
// RUN: not memfmt-opt %s --memfmt-apply-sgd="momentum=0 nesterov=true" 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not memfmt-opt %s --memfmt-apply-sgd="dampening=0.1 nesterov=true" 2>&1 | FileCheck %s --check-prefix=NESTEROV-DAMP
// RUN: not memfmt-opt %s -split-input-file --memfmt-apply-sgd="dampening=0.1" 2>&1 | FileCheck %s --check-prefix=STEP-NAME
// RUN: memfmt-opt %s --memfmt-apply-sgd="momentum=0 dampening=0.1" | FileCheck %s --check-prefix=NO-MOMENTUM

// memfmt-apply-sgd checks its options as torch.optim.SGD checks its
// arguments, with an error at the function (without momentum dampening is
// unused, as in torch).
// LR: apply-sgd-options.mlir:{{[0-9]+}}:1: error: memfmt-apply-sgd: lr=-1 must be >= 0 (torch.optim.SGD's check)
// MOMENTUM: error: memfmt-apply-sgd: momentum=-0.5 must be >= 0 (torch.optim.SGD's check)
// DECAY: error: memfmt-apply-sgd: weight-decay=-0.0001 must be >= 0 (torch.optim.SGD's check)
// NESTEROV: error: memfmt-apply-sgd: nesterov requires momentum > 0 and dampening = 0 (torch.optim.SGD's check), got momentum=0 dampening=0
// NESTEROV-DAMP: error: memfmt-apply-sgd: nesterov requires momentum > 0 and dampening = 0 (torch.optim.SGD's check), got momentum=0.9 dampening=0.1
// NO-MOMENTUM: memfmt.sgd_update {{.*}} {dampening = 1.000000e-01 : f64, lr = 1.000000e-01 : f64, weight_decay = 1.000000e-04 : f64}

func.func @step(%l: tensor<f32>, %g: tensor<5xf32>) -> (tensor<f32>, tensor<5xf32> {memfmt.gradient_of = "fc.bias"}) {
  %b = memfmt.weight "fc.bias" : tensor<5xf32>
  return %l, %g : tensor<f32>, tensor<5xf32>
}

// -----

// Dampening with momentum keeps the step count in the model state under a
// reserved name, which a weight of the model must not have.
// STEP-NAME: apply-sgd-options.mlir:{{[0-9]+}}:8: error: memfmt-apply-sgd: the model has a weight named 'optimizer.step', the name of the optimizer's step count
func.func @taken(%l: tensor<f32>, %g: tensor<5xf32>) -> (tensor<f32>, tensor<5xf32> {memfmt.gradient_of = "optimizer.step"}) {
  %b = memfmt.weight "optimizer.step" : tensor<5xf32>
  return %l, %g : tensor<f32>, tensor<5xf32>
}
