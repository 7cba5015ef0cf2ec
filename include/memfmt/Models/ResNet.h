//===- ResNet.h - torchvision ResNet-family models as memfmt IR -*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The built-in model zoo: the torchvision ResNet family (resnet18/34/50/101/
// 152, resnext50_32x4d, wide_resnet50_2) built directly as memfmt IR, in
// NCHW as saved. The architecture and the op order are those of
// torchvision.models.resnet (the test suite compares them with torch.fx
// traces of torchvision, op by op): conv1/bn1/relu/maxpool, four
// stages of BasicBlock or Bottleneck (stride on the 3x3 conv, projection
// shortcut conv+bn after the main path), adaptive average pooling, flatten
// and fc (1000 classes unless asked otherwise, as torchvision's
// `num_classes`).
//
// Parameters are `memfmt.weight` ops named with torchvision `state_dict`
// keys (`layer1.0.conv1.weight`); batch norm is in inference form. Every op
// has a NameLoc with the torchvision module path (`layer1.0.conv1`, a
// parameter its key), so diagnostics and reports point at layers. Ops that
// are functions in torchvision's forward rather than modules are named after
// their enclosing module: the residual sum is `layer1.0.add`, the flatten is
// `flatten`.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_MODELS_RESNET_H
#define MEMFMT_MODELS_RESNET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace mlir::memfmt {

/// The smallest height and width the zoo accepts: the networks downsample by
/// 32 before global pooling.
inline constexpr int64_t kResNetMinSpatialSize = 32;

/// The names buildResNet knows, in the order of the torchvision docs.
ArrayRef<StringRef> resnetModelNames();

/// Builds the torchvision model `name` for an input of `batch` x 3 x
/// `height` x `width` elements of `elementType` (f32, f16 or bf16) as a
/// module with one public function, `@<name>`, taking the NCHW input and
/// returning the `batch` x `numClasses` logits (torchvision's `num_classes`). Loads the memfmt and func dialects
/// into `context`. On a bad argument (unknown name, batch < 1, height or
/// width < 32, an unsupported element type, a size that overflows) writes
/// one line, without a trailing newline, to `errors` and fails.
FailureOr<OwningOpRef<ModuleOp>>
buildResNet(MLIRContext *context, StringRef name, int64_t batch, int64_t height,
            int64_t width, Type elementType, llvm::raw_ostream &errors,
            int64_t numClasses = 1000);

} // namespace mlir::memfmt

#endif // MEMFMT_MODELS_RESNET_H
