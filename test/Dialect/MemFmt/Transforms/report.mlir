// RUN: memfmt-opt %s --memfmt-report -o /dev/null 2>&1 | FileCheck %s
// RUN: memfmt-opt %s --memfmt-report="format=json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: memfmt-opt %s --memfmt-report="format=json output=%t.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t.json

// Runtime conversions are counted with the bytes they read and write; free
// (L3) ones and parameter ones are listed but move nothing per run.
// CHECK: memfmt layout report: 1 runtime conversion(s), 960 bytes moved per run; 1 free (L3), 1 on parameters
// CHECK: #1 runtime: contiguous -> channels_last 2x3x4x5xf32, 960 bytes/run at loc({{.*}}report.mlir":{{[0-9]+}}:{{[0-9]+}})
// CHECK-NEXT: why: explicit in the input
// CHECK: #2 free (L3): contiguous -> channels_last 4x16x1x1xf32, 0 bytes/run
// CHECK: #3 parameter (load time): contiguous -> channels_last 4x3x3x3xf32, 0 bytes/run
// CHECK-NEXT: why: weights=channels-last

// JSON: "bytes_moved_per_run": 960,
// JSON: "bytes_per_run": 960,
// JSON: "kind": "runtime",
// JSON: "kind": "free (L3)",
// JSON: "kind": "parameter (load time)",
// JSON: "free_conversions": 1,
// JSON: "parameter_conversions": 1,
// JSON: "runtime_conversions": 1
func.func @report(%x: tensor<2x3x4x5xf32>, %y: tensor<4x16x1x1xf32>) -> (tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>, tensor<4x16x1x1xf32, #memfmt.strides<[16, 1, 16, 16]>>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>) {
  %0 = memfmt.contiguous %x {memory_format = #memfmt.memory_format<channels_last>} : tensor<2x3x4x5xf32>
  %1 = memfmt.contiguous %y {memory_format = #memfmt.memory_format<channels_last>} : tensor<4x16x1x1xf32>
  %w = memfmt.weight "w" : tensor<4x3x3x3xf32>
  %2 = memfmt.contiguous %w {memfmt.reason = "weights=channels-last", memory_format = #memfmt.memory_format<channels_last>} : tensor<4x3x3x3xf32>
  return %0, %1, %2 : tensor<2x3x4x5xf32, #memfmt.strides<[60, 1, 15, 3]>>, tensor<4x16x1x1xf32, #memfmt.strides<[16, 1, 16, 16]>>, tensor<4x3x3x3xf32, #memfmt.strides<[27, 1, 9, 3]>>
}
