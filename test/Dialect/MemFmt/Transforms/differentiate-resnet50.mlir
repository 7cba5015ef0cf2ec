// The whole ResNet-50 training step (batch 8, 224x224) from its NCHW
// training forward (Inputs/resnet50-train-forward.mlir): memfmt-differentiate
// returns the loss and the 161 parameter gradients (53 conv weights, 53 batch
// norm weights and biases, fc's weight and bias; no running statistic),
// computes no input gradient (only the stem's convolution_backward has a
// false mask bit), and sums the 16 residuals' gradients. L9: the
// channels-last pipeline over the training graph leaves the forward's
// runtime conversions (resnet50.mlir): 1 with inputs=convert, 0 with
// channels-last input.
//
// RUN: memfmt-opt %S/Inputs/resnet50-train-forward.mlir --memfmt-differentiate > %t.mlir
// RUN: grep -o "memfmt.gradient_of" %t.mlir | wc -l | FileCheck %s --check-prefix=GRADS
// RUN: FileCheck %s --check-prefix=RUNNING --input-file=%t.mlir
// RUN: grep -c "memfmt.convolution_backward" %t.mlir | FileCheck %s --check-prefix=CONVS
// RUN: grep "memfmt.convolution_backward" %t.mlir | grep -c "i1: false" | FileCheck %s --check-prefix=MASKED
// RUN: grep -c "memfmt.add" %t.mlir | FileCheck %s --check-prefix=ADDS
// RUN: memfmt-opt %t.mlir --memfmt-channels-last="outputs=channels-last" --memfmt-verify-layouts="contiguous-operands=true" --memfmt-report="format=json output=%t.convert.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=CONVERT --input-file=%t.convert.json
// RUN: memfmt-opt %t.mlir --memfmt-channels-last="inputs=channels-last outputs=channels-last" --memfmt-verify-layouts="contiguous-operands=true" --memfmt-report="format=json output=%t.declared.json" | FileCheck %s --check-prefix=DECLARED-IR
// RUN: FileCheck %s --check-prefix=DECLARED --input-file=%t.declared.json

// 161 results are marked; no running statistic is among them.
// GRADS: {{^ *}}161{{$}}
// RUNNING-NOT: gradient_of = "{{[^"]*}}running_
// RUNNING: memfmt.weight "conv1.weight"
// CONVS: 53
// The stem's grad_input: output_mask = [false, true, false].
// MASKED: 1
// 16 forward residual adds and 16 gradient sums.
// ADDS: 32

// Every gradient is channels-last where its primal is; the stem's weight
// gradient and the last block's activations' gradients as examples.
// CHECK-LABEL: func.func @resnet50(
// CHECK-SAME: tensor<64x3x7x7xf32, #memfmt.strides<[147, 1, 21, 3]>> {memfmt.gradient_of = "conv1.weight"}
// CHECK: memfmt.contiguous %arg0 {memfmt.reason = "inputs=convert
// CHECK-NOT: memfmt.contiguous
// CHECK: memfmt.adaptive_avg_pool2d_backward {{.*}} -> tensor<8x2048x7x7xf32, #memfmt.strides<[100352, 1, 14336, 2048]>>
// CHECK-NOT: memfmt.contiguous
// CHECK: memfmt.convolution_backward {{.*}} {output_mask = array<i1: false, true, false>, padding = array<i64: 3, 3>, stride = array<i64: 2, 2>}
// CHECK-NOT: memfmt.contiguous
// CHECK: return

// CONVERT: "runtime_conversions": 1
// CONVERT-NOT: "runtime_conversions"

// DECLARED-IR-LABEL: func.func @resnet50(
// DECLARED-IR-NOT: memfmt.contiguous
// DECLARED-IR: return
// DECLARED: "conversions": [],
// DECLARED: "runtime_conversions": 0
