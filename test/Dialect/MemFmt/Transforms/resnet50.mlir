// The whole ResNet-50 (batch 8, 224x224, NCHW as saved; the model zoo's,
// see Inputs/resnet50.mlir) through the channels-last pipeline.
//
// RUN: memfmt-opt %S/Inputs/resnet50.mlir --memfmt-channels-last --memfmt-verify-layouts="contiguous-operands=true" --memfmt-report="format=json output=%t.convert.json" > %t.convert.mlir
// RUN: FileCheck %s --input-file=%t.convert.mlir
// RUN: FileCheck %s --check-prefix=CONVERT --input-file=%t.convert.json
// RUN: memfmt-opt %S/Inputs/resnet50.mlir --memfmt-channels-last="inputs=channels-last" --memfmt-verify-layouts="contiguous-operands=true" --memfmt-report="format=json output=%t.declared.json" > %t.declared.mlir
// RUN: FileCheck %s --input-file=%t.declared.mlir
// RUN: FileCheck %s --check-prefix=DECLARED-IR --input-file=%t.declared.mlir
// RUN: FileCheck %s --check-prefix=DECLARED --input-file=%t.declared.json
// The pipeline is idempotent.
// RUN: memfmt-opt %t.convert.mlir --memfmt-channels-last > %t.twice.mlir
// RUN: diff %t.convert.mlir %t.twice.mlir
// Values keep their meaning: the same ops, apart from conversions.
// RUN: grep -c "memfmt.conv2d" %t.convert.mlir | FileCheck %s --check-prefix=CONVS
// RUN: grep -c "memfmt.batch_norm" %t.convert.mlir | FileCheck %s --check-prefix=CONVS
// RUN: grep -c "memfmt.add" %t.convert.mlir | FileCheck %s --check-prefix=ADDS
// CONVS: 53
// ADDS: 16

// Every conv weight is re-laid channels-last (no 4-D weight left without an
// encoding); nothing is converted before the flatten (L3: 8x2048x1x1).
// CHECK-LABEL: func.func @resnet50(
// CHECK-NOT: memfmt.weight "{{[^"]*}}" : tensor<{{[0-9]+}}x{{[0-9]+}}x{{[0-9]+}}x{{[0-9]+}}xf32>
// CHECK: %[[P:.+]] = memfmt.adaptive_avg_pool2d %{{.+}} -> tensor<8x2048x1x1xf32, #memfmt.strides<[2048, 1, 2048, 2048]>>
// CHECK-NOT: memfmt.contiguous
// CHECK: memfmt.flatten %[[P]]
// CHECK: memfmt.linear
// CHECK-NOT: memfmt.contiguous
// CHECK: return

// With inputs=channels-last the argument is declared NHWC.
// DECLARED-IR: func.func @resnet50(%{{.+}}: tensor<8x3x224x224xf32, #memfmt.strides<[150528, 1, 672, 3]>>) -> tensor<8x1000xf32>

// Exactly one runtime conversion with inputs=convert: the input at entry.
// CONVERT: "bytes_moved_per_run": 9633792,
// CONVERT: "from": "contiguous",
// CONVERT: "reason": "inputs=convert: the argument enters channels-last",
// CONVERT: "to": "channels_last"
// CONVERT: "parameter_conversions": 0,
// CONVERT: "runtime_conversions": 1

// None with inputs=channels-last.
// DECLARED: "bytes_moved_per_run": 0,
// DECLARED: "conversions": [],
// DECLARED: "runtime_conversions": 0
