// The README main job's example and the checked-in ResNet-50 stay valid, the
// latter the model zoo's resnet50 (memfmt-compile --model): both printed in
// generic form, without locations, are identical.
// RUN: memfmt-opt %memfmt_src/docs/examples/resnet50_bottleneck.mlir --memfmt-channels-last --memfmt-verify-layouts="contiguous-operands=true" --memfmt-report -o /dev/null 2>&1 | FileCheck %s
// REQUIRES: memfmt-compile
// RUN: rm -rf %t && memfmt-compile --model resnet50 --batch 8 -o %t >/dev/null 2>&1
// RUN: memfmt-opt --mlir-print-op-generic %t/input.mlir -o %t/zoo.mlir
// RUN: memfmt-opt --mlir-print-op-generic %memfmt_src/test/Dialect/MemFmt/Transforms/Inputs/resnet50.mlir -o %t/checked-in.mlir
// RUN: diff %t/zoo.mlir %t/checked-in.mlir

// The block returns a 4-D tensor, so outputs=keep converts it back to NCHW:
// one conversion in, one out.
// CHECK: memfmt layout report: 2 runtime conversion(s), 8028160 bytes moved per run; 0 free (L3), 0 on parameters
// CHECK: why: inputs=convert
// CHECK: why: outputs=keep
