// The README main job's example and the checked-in ResNet-50 stay valid and
// in sync with their generator.
// RUN: memfmt-opt %memfmt_src/docs/examples/resnet50_bottleneck.mlir --memfmt-channels-last --memfmt-verify-layouts="contiguous-operands=true" --memfmt-report -o /dev/null 2>&1 | FileCheck %s
// RUN: %python %memfmt_src/scripts/gen_resnet_mlir.py --model resnet50 --batch 8 | diff - %memfmt_src/test/Dialect/MemFmt/Transforms/Inputs/resnet50.mlir

// The block returns a 4-D tensor, so outputs=keep converts it back to NCHW:
// one conversion in, one out.
// CHECK: memfmt layout report: 2 runtime conversion(s), 8028160 bytes moved per run; 0 free (L3), 0 on parameters
// CHECK: why: inputs=convert
// CHECK: why: outputs=keep
