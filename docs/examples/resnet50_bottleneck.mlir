// The first bottleneck block of ResNet-50 (layer1.0, with its projection
// shortcut), batch 1, 56x56, NCHW as saved by torchvision. The README main
// job runs it through memfmt-opt --memfmt-channels-last.
func.func @bottleneck(%x: tensor<1x64x56x56xf32>) -> tensor<1x256x56x56xf32> {
  %1 = memfmt.weight "layer1.0.conv1.weight" : tensor<64x64x1x1xf32>
  %2 = memfmt.conv2d %x, %1 : (tensor<1x64x56x56xf32>, tensor<64x64x1x1xf32>) -> tensor<1x64x56x56xf32>
  %3 = memfmt.weight "layer1.0.bn1.weight" : tensor<64xf32>
  %4 = memfmt.weight "layer1.0.bn1.bias" : tensor<64xf32>
  %5 = memfmt.weight "layer1.0.bn1.running_mean" : tensor<64xf32>
  %6 = memfmt.weight "layer1.0.bn1.running_var" : tensor<64xf32>
  %7 = memfmt.batch_norm %2, %3, %4, %5, %6 : tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64x56x56xf32>
  %8 = memfmt.relu %7 : tensor<1x64x56x56xf32> -> tensor<1x64x56x56xf32>
  %9 = memfmt.weight "layer1.0.conv2.weight" : tensor<64x64x3x3xf32>
  %10 = memfmt.conv2d %8, %9 {padding = array<i64: 1, 1>} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %11 = memfmt.weight "layer1.0.bn2.weight" : tensor<64xf32>
  %12 = memfmt.weight "layer1.0.bn2.bias" : tensor<64xf32>
  %13 = memfmt.weight "layer1.0.bn2.running_mean" : tensor<64xf32>
  %14 = memfmt.weight "layer1.0.bn2.running_var" : tensor<64xf32>
  %15 = memfmt.batch_norm %10, %11, %12, %13, %14 : tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64x56x56xf32>
  %16 = memfmt.relu %15 : tensor<1x64x56x56xf32> -> tensor<1x64x56x56xf32>
  %17 = memfmt.weight "layer1.0.conv3.weight" : tensor<256x64x1x1xf32>
  %18 = memfmt.conv2d %16, %17 : (tensor<1x64x56x56xf32>, tensor<256x64x1x1xf32>) -> tensor<1x256x56x56xf32>
  %19 = memfmt.weight "layer1.0.bn3.weight" : tensor<256xf32>
  %20 = memfmt.weight "layer1.0.bn3.bias" : tensor<256xf32>
  %21 = memfmt.weight "layer1.0.bn3.running_mean" : tensor<256xf32>
  %22 = memfmt.weight "layer1.0.bn3.running_var" : tensor<256xf32>
  %23 = memfmt.batch_norm %18, %19, %20, %21, %22 : tensor<1x256x56x56xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32> -> tensor<1x256x56x56xf32>
  %24 = memfmt.weight "layer1.0.downsample.0.weight" : tensor<256x64x1x1xf32>
  %25 = memfmt.conv2d %x, %24 : (tensor<1x64x56x56xf32>, tensor<256x64x1x1xf32>) -> tensor<1x256x56x56xf32>
  %26 = memfmt.weight "layer1.0.downsample.1.weight" : tensor<256xf32>
  %27 = memfmt.weight "layer1.0.downsample.1.bias" : tensor<256xf32>
  %28 = memfmt.weight "layer1.0.downsample.1.running_mean" : tensor<256xf32>
  %29 = memfmt.weight "layer1.0.downsample.1.running_var" : tensor<256xf32>
  %30 = memfmt.batch_norm %25, %26, %27, %28, %29 : tensor<1x256x56x56xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32> -> tensor<1x256x56x56xf32>
  %31 = memfmt.add %23, %30 : tensor<1x256x56x56xf32>, tensor<1x256x56x56xf32> -> tensor<1x256x56x56xf32>
  %32 = memfmt.relu %31 : tensor<1x256x56x56xf32> -> tensor<1x256x56x56xf32>
  return %32 : tensor<1x256x56x56xf32>
}
