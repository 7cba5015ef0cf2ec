//===- ResNet.cpp - torchvision ResNet-family models as memfmt IR ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Builds the ResNet family of ResNet.h with the generated op builders. It is
// the project's one definition of these architectures (the test suite checks
// it against torch.fx traces of torchvision, test/Models/
// resnet-zoo-matches-torchvision.py). The construction mirrors
// torchvision.models.resnet statement by statement: a parameter is created
// right before the op that consumes it, attributes equal to their defaults
// are left unset (so the IR is the one a parser makes from its printed
// text), and each layer is a small function of ResNetBuilder. Output sizes
// come from ShapeRules.h, the formulas the op verifiers use.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Models/ResNet.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/ShapeRules.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <array>
#include <string>

using namespace mlir;
using namespace mlir::memfmt;

namespace {

/// The residual block of a stage.
enum class BlockKind { Basic, Bottleneck };

/// One torchvision constructor: `ResNet(block, layers, groups=...,
/// width_per_group=...)`.
struct ResNetConfig {
  StringRef name;
  BlockKind kind;
  std::array<int64_t, 4> blocksPerStage;
  int64_t groups;
  int64_t widthPerGroup;
};

constexpr std::array<int64_t, 4> kStagePlanes = {64, 128, 256, 512};

const ResNetConfig kConfigs[] = {
    {"resnet18", BlockKind::Basic, {2, 2, 2, 2}, 1, 64},
    {"resnet34", BlockKind::Basic, {3, 4, 6, 3}, 1, 64},
    {"resnet50", BlockKind::Bottleneck, {3, 4, 6, 3}, 1, 64},
    {"resnet101", BlockKind::Bottleneck, {3, 4, 23, 3}, 1, 64},
    {"resnet152", BlockKind::Bottleneck, {3, 8, 36, 3}, 1, 64},
    {"resnext50_32x4d", BlockKind::Bottleneck, {3, 4, 6, 3}, 32, 4},
    {"wide_resnet50_2", BlockKind::Bottleneck, {3, 4, 6, 3}, 1, 128},
};

const ResNetConfig *lookupConfig(StringRef name) {
  for (const ResNetConfig &config : kConfigs)
    if (config.name == name)
      return &config;
  return nullptr;
}

/// A value and its NCHW shape.
struct Activation {
  Value value;
  SmallVector<int64_t, 4> shape;
};

/// Emits the ops of one network into a function body, in torchvision order.
class ResNetBuilder {
public:
  ResNetBuilder(OpBuilder &builder, const ResNetConfig &config,
                Type elementType, int64_t numClasses)
      : builder(builder), config(config), elementType(elementType),
        numClasses(numClasses) {}

  /// The whole forward function on `input`; returns the logits.
  Value forward(Activation input);

private:
  Location loc(const Twine &path) {
    return NameLoc::get(builder.getStringAttr(path));
  }
  RankedTensorType tensorType(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, elementType);
  }
  /// A dense i64 array attribute, or null (the default) when equal to
  /// `defaultValue`.
  DenseI64ArrayAttr pairOrDefault(int64_t value, int64_t defaultValue) {
    if (value == defaultValue)
      return {};
    return builder.getDenseI64ArrayAttr({value, value});
  }

  Value weight(const Twine &name, ArrayRef<int64_t> shape);
  Activation conv(const Activation &x, const Twine &path, int64_t outChannels,
                  int64_t kernel, int64_t stride, int64_t padding,
                  int64_t groups = 1);
  Activation batchNorm(const Activation &x, const Twine &path);
  Activation relu(const Activation &x, const Twine &path);
  Activation add(const Activation &lhs, const Activation &rhs,
                 const Twine &path);
  Activation maxPool(const Activation &x);
  Activation basicBlock(const Activation &x, const Twine &path, int64_t planes,
                        int64_t stride);
  Activation bottleneck(const Activation &x, const Twine &path, int64_t planes,
                        int64_t stride);
  Activation block(const Activation &x, const Twine &path, int64_t planes,
                   int64_t stride);
  Value head(const Activation &x);

  OpBuilder &builder;
  const ResNetConfig &config;
  Type elementType;
  int64_t numClasses;
};

Value ResNetBuilder::weight(const Twine &name, ArrayRef<int64_t> shape) {
  std::string key = name.str();
  return WeightOp::create(builder, loc(key), tensorType(shape), key);
}

/// torchvision's conv3x3/conv1x1/conv1: no bias, symmetric padding.
Activation ResNetBuilder::conv(const Activation &x, const Twine &path,
                               int64_t outChannels, int64_t kernel,
                               int64_t stride, int64_t padding,
                               int64_t groups) {
  std::string name = path.str();
  SmallVector<int64_t, 4> weightShape = {outChannels, x.shape[1] / groups,
                                         kernel, kernel};
  Value w = weight(name + ".weight", weightShape);
  SmallVector<int64_t, 4> shape = {
      x.shape[0], outChannels,
      convOutputSize(x.shape[2], kernel, stride, padding, padding, 1),
      convOutputSize(x.shape[3], kernel, stride, padding, padding, 1)};
  IntegerAttr groupsAttr =
      groups == 1 ? IntegerAttr() : builder.getI64IntegerAttr(groups);
  Value y = Conv2dOp::create(builder, loc(name), tensorType(shape), x.value, w,
                             /*bias=*/Value(), pairOrDefault(stride, 1),
                             pairOrDefault(padding, 0),
                             /*dilation=*/DenseI64ArrayAttr(), groupsAttr);
  return {y, shape};
}

/// nn.BatchNorm2d in eval mode: eps, momentum and training keep their
/// defaults (1e-5, 0.1, false), as in torchvision.
Activation ResNetBuilder::batchNorm(const Activation &x, const Twine &path) {
  std::string name = path.str();
  SmallVector<int64_t, 1> paramShape = {x.shape[1]};
  Value gamma = weight(name + ".weight", paramShape);
  Value beta = weight(name + ".bias", paramShape);
  Value mean = weight(name + ".running_mean", paramShape);
  Value var = weight(name + ".running_var", paramShape);
  Value y = BatchNormOp::create(builder, loc(name), tensorType(x.shape),
                                x.value, gamma, beta, mean, var,
                                /*eps=*/FloatAttr(), /*momentum=*/FloatAttr(),
                                /*training=*/BoolAttr());
  return {y, x.shape};
}

Activation ResNetBuilder::relu(const Activation &x, const Twine &path) {
  Value y = ReluOp::create(builder, loc(path), tensorType(x.shape), x.value);
  return {y, x.shape};
}

Activation ResNetBuilder::add(const Activation &lhs, const Activation &rhs,
                              const Twine &path) {
  Value y = AddOp::create(builder, loc(path), tensorType(lhs.shape), lhs.value,
                          rhs.value);
  return {y, lhs.shape};
}

/// nn.MaxPool2d(kernel_size=3, stride=2, padding=1).
Activation ResNetBuilder::maxPool(const Activation &x) {
  SmallVector<int64_t, 4> shape = {
      x.shape[0], x.shape[1],
      poolOutputSize(x.shape[2], 3, 2, 1, 1, 1, /*ceilMode=*/false),
      poolOutputSize(x.shape[3], 3, 2, 1, 1, 1, /*ceilMode=*/false)};
  Value y = MaxPool2dOp::create(builder, loc("maxpool"), tensorType(shape),
                                x.value, builder.getDenseI64ArrayAttr({3, 3}),
                                builder.getDenseI64ArrayAttr({2, 2}),
                                builder.getDenseI64ArrayAttr({1, 1}),
                                /*dilation=*/DenseI64ArrayAttr(),
                                /*ceil_mode=*/BoolAttr());
  return {y, shape};
}

/// torchvision BasicBlock (expansion 1).
Activation ResNetBuilder::basicBlock(const Activation &x, const Twine &path,
                                     int64_t planes, int64_t stride) {
  std::string p = path.str();
  Activation y = conv(x, p + ".conv1", planes, 3, stride, 1);
  y = relu(batchNorm(y, p + ".bn1"), p + ".relu");
  y = conv(y, p + ".conv2", planes, 3, 1, 1);
  return batchNorm(y, p + ".bn2");
}

/// torchvision Bottleneck (expansion 4, stride on the 3x3 conv, ResNet v1.5).
Activation ResNetBuilder::bottleneck(const Activation &x, const Twine &path,
                                     int64_t planes, int64_t stride) {
  std::string p = path.str();
  // int(planes * (base_width / 64.0)) * groups, in integers.
  int64_t width = planes * config.widthPerGroup / 64 * config.groups;
  Activation y = conv(x, p + ".conv1", width, 1, 1, 0);
  y = relu(batchNorm(y, p + ".bn1"), p + ".relu");
  y = conv(y, p + ".conv2", width, 3, stride, 1, config.groups);
  y = relu(batchNorm(y, p + ".bn2"), p + ".relu");
  y = conv(y, p + ".conv3", planes * 4, 1, 1, 0);
  return batchNorm(y, p + ".bn3");
}

/// A residual block: the main path, then the projection shortcut where the
/// shape changes, then add and relu.
Activation ResNetBuilder::block(const Activation &x, const Twine &path,
                                int64_t planes, int64_t stride) {
  std::string p = path.str();
  bool isBottleneck = config.kind == BlockKind::Bottleneck;
  int64_t outChannels = planes * (isBottleneck ? 4 : 1);
  Activation y = isBottleneck ? bottleneck(x, p, planes, stride)
                              : basicBlock(x, p, planes, stride);
  Activation identity = x;
  if (stride != 1 || x.shape[1] != outChannels) {
    identity = conv(x, p + ".downsample.0", outChannels, 1, stride, 0);
    identity = batchNorm(identity, p + ".downsample.1");
  }
  return relu(add(y, identity, p + ".add"), p + ".relu");
}

/// avgpool, torch.flatten(x, 1) and fc.
Value ResNetBuilder::head(const Activation &x) {
  SmallVector<int64_t, 4> pooledShape = {x.shape[0], x.shape[1], 1, 1};
  Value pooled = AdaptiveAvgPool2dOp::create(
      builder, loc("avgpool"), tensorType(pooledShape), x.value,
      builder.getDenseI64ArrayAttr({1, 1}));
  SmallVector<int64_t, 2> flatShape = {x.shape[0], x.shape[1]};
  Value flat = FlattenOp::create(builder, loc("flatten"), tensorType(flatShape),
                                 pooled, builder.getI64IntegerAttr(1),
                                 /*end_dim=*/IntegerAttr());
  Value fcWeight = weight("fc.weight", {numClasses, x.shape[1]});
  Value fcBias = weight("fc.bias", {numClasses});
  return LinearOp::create(builder, loc("fc"),
                          tensorType({x.shape[0], numClasses}), flat, fcWeight,
                          fcBias);
}

Value ResNetBuilder::forward(Activation input) {
  Activation x = conv(input, "conv1", 64, 7, 2, 3);
  x = relu(batchNorm(x, "bn1"), "relu");
  x = maxPool(x);
  for (auto [stage, planes] : llvm::enumerate(kStagePlanes)) {
    for (int64_t i = 0; i < config.blocksPerStage[stage]; ++i) {
      int64_t stride = stage > 0 && i == 0 ? 2 : 1;
      x = block(x, "layer" + Twine(stage + 1) + "." + Twine(i), planes, stride);
    }
  }
  return head(x);
}

/// The known names, comma-separated, for error messages.
std::string knownNames() {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(resnetModelNames(), os);
  return text;
}

/// Checks the arguments of buildResNet; writes the first problem to
/// `errors`.
LogicalResult checkArguments(StringRef name, int64_t batch, int64_t height,
                             int64_t width, Type elementType,
                             int64_t numClasses, llvm::raw_ostream &errors) {
  if (!lookupConfig(name)) {
    errors << "unknown model '" << name << "'; known models: " << knownNames();
    return failure();
  }
  if (numClasses < 1 || numClasses > (int64_t(1) << 24)) {
    errors << "the number of classes must be in [1, 2^24], got " << numClasses;
    return failure();
  }
  if (batch < 1) {
    errors << "batch must be >= 1, got " << batch;
    return failure();
  }
  for (auto [what, size] :
       {std::pair{"height", height}, std::pair{"width", width}}) {
    if (size < kResNetMinSpatialSize) {
      errors << what << " must be >= " << kResNetMinSpatialSize << " for "
             << name << " (it downsamples by 32), got " << size;
      return failure();
    }
  }
  // The largest activation has 16 * batch * height * width elements; keep
  // every byte count far from int64 overflow.
  constexpr int64_t kMaxSize = int64_t(1) << 20;
  if (batch > kMaxSize || height > kMaxSize || width > kMaxSize ||
      batch * height > (int64_t(1) << 40) / width) {
    errors << "an input of " << batch << "x3x" << height << "x" << width
           << " is too large (batch, height and width must be at most 2^20 "
              "and batch * height * width at most 2^40)";
    return failure();
  }
  if (!elementType ||
      !(elementType.isF32() || elementType.isF16() || elementType.isBF16())) {
    errors << "element type must be f32, f16 or bf16, got ";
    if (elementType)
      errors << elementType;
    else
      errors << "none";
    return failure();
  }
  return success();
}

} // namespace

ArrayRef<StringRef> mlir::memfmt::resnetModelNames() {
  static const SmallVector<StringRef> names = llvm::to_vector(
      llvm::map_range(kConfigs, [](const ResNetConfig &c) { return c.name; }));
  return names;
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::memfmt::buildResNet(MLIRContext *context, StringRef name, int64_t batch,
                          int64_t height, int64_t width, Type elementType,
                          llvm::raw_ostream &errors, int64_t numClasses) {
  if (failed(checkArguments(name, batch, height, width, elementType,
                            numClasses, errors)))
    return failure();
  context->getOrLoadDialect<MemFmtDialect>();
  context->getOrLoadDialect<func::FuncDialect>();
  const ResNetConfig &config = *lookupConfig(name);

  OpBuilder builder(context);
  Location moduleLoc = NameLoc::get(builder.getStringAttr(name));
  OwningOpRef<ModuleOp> module = ModuleOp::create(moduleLoc);
  builder.setInsertionPointToEnd(module->getBody());

  SmallVector<int64_t, 4> inputShape = {batch, 3, height, width};
  auto inputType = RankedTensorType::get(inputShape, elementType);
  auto outputType = RankedTensorType::get({batch, numClasses}, elementType);
  auto func =
      func::FuncOp::create(builder, moduleLoc, name,
                           builder.getFunctionType({inputType}, {outputType}));
  // The argument is named after torchvision's forward(x) parameter role, so
  // that the conversion at entry reports as `loc("input")`.
  Block *body = func.addEntryBlock();
  body->getArgument(0).setLoc(NameLoc::get(builder.getStringAttr("input")));
  builder.setInsertionPointToEnd(body);

  ResNetBuilder network(builder, config, elementType, numClasses);
  Value logits = network.forward({body->getArgument(0), inputShape});
  func::ReturnOp::create(builder, NameLoc::get(builder.getStringAttr("fc")),
                         logits);

  // The builder makes only valid IR; a failure here is a bug, reported the
  // same way as a bad argument rather than left for a later pass to find.
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      llvm::raw_string_ostream(diagnostics) << diag << "; ";
      return success();
    });
    if (failed(verify(*module))) {
      errors << "internal error: the built " << name
             << " does not verify: " << diagnostics;
      return failure();
    }
  }
  return module;
}
