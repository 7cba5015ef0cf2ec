//===- MemFmtViewOps.cpp - permute, slice, shuffle, layer_norm, softmax ---===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The ops that move elements to other logical positions - permute, slice
// and channel_shuffle - and the row-wise ops that models with them bring
// along: layer_norm (ConvNeXt, ViT) and softmax (ViT's attention).
// Verifiers, layout declarations and canonicalization:
//
//  * permute is a view where its permuted strides are a supported format
//    (L4): its result then preserves its operand's bytes (L6 for a view,
//    `getPreservedStrides`) and it lowers to nothing; elsewhere it is a
//    copy into a contiguous result.
//  * slice is a view where the result's strides are its input's (a batch
//    slice of a sample-major tensor, as memfmt-tile-batch makes; a channel
//    slice at batch 1 of an NCHW tensor): `getViewElementOffset` says where its
//    elements start, the memory plan places it there and the lowering emits
//    nothing; elsewhere it is a strided copy.
//  * Canonicalization composes permutes and recognises the channel shuffle
//    exporters write as reshape [N, g, C/g, *] - permute [0, 2, 1, ...] -
//    reshape back, so that ShuffleNet keeps channels-last (L5) instead of
//    converting to NCHW for each reshape (L7).
//
//===----------------------------------------------------------------------===//

#include "OpVerification.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"
#include "memfmt/Dialect/MemFmt/IR/TensorLayout.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::memfmt;
namespace layout = ::memfmt::layout;
using namespace mlir::memfmt::detail;

//===----------------------------------------------------------------------===//
// PermuteOp
//===----------------------------------------------------------------------===//

/// `values` reordered by `dims`: element k is values[dims[k]].
static SmallVector<int64_t> permuted(ArrayRef<int64_t> values,
                                     ArrayRef<int64_t> dims) {
  SmallVector<int64_t> result;
  for (int64_t d : dims)
    result.push_back(values[d]);
  return result;
}

LogicalResult PermuteOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> dims = getDims();
  if (dims.size() != in.size())
    return emitOpError() << "'dims' " << formatList(dims) << " has "
                         << dims.size() << " entries for an input of rank "
                         << in.size();
  SmallVector<bool> seen(in.size(), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(in.size()) || seen[d])
      return emitOpError() << "'dims' " << formatList(dims)
                           << " is not a permutation of 0.." << in.size() - 1;
    seen[d] = true;
  }
  if (failed(verifyShape(*this, getOutput().getType(), permuted(in, dims),
                         "result")))
    return failure();
  return verifyResultFormats(*this);
}

OpFoldResult PermuteOp::fold(FoldAdaptor) {
  // The identity permutation of a tensor of the very same type.
  for (auto [k, d] : llvm::enumerate(getDims()))
    if (d != static_cast<int64_t>(k))
      return {};
  if (getInput().getType() != getOutput().getType())
    return {};
  return getInput();
}

std::optional<unsigned> PermuteOp::getPreservedOperand(unsigned) { return 0; }

/// The view's strides where they are a supported format (L4), else the
/// contiguous strides of a copy.
SmallVector<int64_t> PermuteOp::getPreservedStrides(unsigned,
                                                    ArrayRef<int64_t> strides) {
  ArrayRef<int64_t> shape = getOutput().getType().getShape();
  SmallVector<int64_t> view = permuted(strides, getDims());
  if (layout::hasSupportedFormat(shape, view))
    return view;
  std::vector<int64_t> dense = layout::contiguousStrides(shape);
  return {dense.begin(), dense.end()};
}

RankedTensorType PermuteOp::getSourceView() {
  return getTypeWithStrides(getOutput().getType(),
                            permuted(getStrides(getInput().getType()),
                                     getDims()));
}

bool PermuteOp::isBufferAlias() {
  return haveSameBytes(getSourceView(), getOutput().getType());
}

namespace {

/// permute(permute(x, inner), outer) is permute(x, inner o outer).
struct ComposePermutes : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<PermuteOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "the input is no permute");
    SmallVector<int64_t> dims = permuted(inner.getDims(), op.getDims());
    rewriter.replaceOpWithNewOp<PermuteOp>(op, op.getType(), inner.getInput(),
                                           dims);
    return success();
  }
};

/// reshape(permute(reshape(x, [N, g, C/g, *]), [0, 2, 1, ...]), shape of x)
/// is channel_shuffle(x, g), when the reshape and the permute have no other
/// use.
struct RecognizeChannelShuffle : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto permute = op.getInput().getDefiningOp<PermuteOp>();
    auto split = permute ? permute.getInput().getDefiningOp<ReshapeOp>()
                         : ReshapeOp();
    if (!split || !permute->hasOneUse() || !split->hasOneUse())
      return rewriter.notifyMatchFailure(op, "no reshape-permute-reshape");
    Value x = split.getInput();
    ArrayRef<int64_t> in = cast<RankedTensorType>(x.getType()).getShape();
    ArrayRef<int64_t> mid = split.getOutput().getType().getShape();
    if (in.size() < 3 || mid.size() != in.size() + 1 ||
        op.getOutput().getType().getShape() != in)
      return rewriter.notifyMatchFailure(op, "not [N, C, *] to [N, g, C/g, *]");
    int64_t groups = mid[1];
    if (mid[0] != in[0] || mid[1] * mid[2] != in[1] ||
        ArrayRef<int64_t>(mid).drop_front(3) != in.drop_front(2))
      return rewriter.notifyMatchFailure(op, "the split is not of channels");
    for (auto [k, d] : llvm::enumerate(permute.getDims())) {
      int64_t expected = k == 1 ? 2 : k == 2 ? 1 : static_cast<int64_t>(k);
      if (d != expected)
        return rewriter.notifyMatchFailure(op, "not a swap of dims 1 and 2");
    }
    rewriter.replaceOpWithNewOp<ChannelShuffleOp>(
        op, op.getType(), x, rewriter.getI64IntegerAttr(groups));
    return success();
  }
};

/// permute(reshape(x)), where the reshape only merges runs of consecutive
/// dims of x, is reshape(permute(x)) with each merged dim's run moved as a
/// whole. The idiom `x.flatten(2).transpose(1, 2)` of vision transformers
/// ([N, C, H, W] -> [N, C, H*W] -> [N, H*W, C]) becomes a permute
/// [0, 2, 3, 1] - a view of a channels-last x (L4) - and a reshape of its
/// contiguous result: free in a channels-last build, where the reshape
/// first would need x contiguous (L7); one copy in an NCHW build, as
/// before. Applies before layouts are assigned (no stride encodings), when
/// the reshape has no other use.
struct PermuteBeforeMerge : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    auto merge = op.getInput().getDefiningOp<ReshapeOp>();
    if (!merge || !merge->hasOneUse())
      return rewriter.notifyMatchFailure(op, "the input is no reshape");
    auto inType = cast<RankedTensorType>(merge.getInput().getType());
    auto midType = merge.getOutput().getType();
    if (inType.getEncoding() || midType.getEncoding() ||
        op.getOutput().getType().getEncoding())
      return rewriter.notifyMatchFailure(op, "layouts are assigned");
    // The run of input dims [first[k], first[k + 1]) of each merged dim k.
    ArrayRef<int64_t> in = inType.getShape(), mid = midType.getShape();
    SmallVector<int64_t> first = {0};
    for (int64_t size : mid) {
      int64_t d = first.back(), product = 1;
      do {
        if (d == int64_t(in.size()))
          return rewriter.notifyMatchFailure(op, "not a merge of dims");
        product *= in[d++];
      } while (product < size);
      if (product != size)
        return rewriter.notifyMatchFailure(op, "the reshape splits a dim");
      first.push_back(d);
    }
    if (first.back() != int64_t(in.size()) || mid.size() == in.size())
      return rewriter.notifyMatchFailure(op, "the reshape merges no dims");
    SmallVector<int64_t> dims;
    for (int64_t k : op.getDims())
      for (int64_t d = first[k]; d < first[k + 1]; ++d)
        dims.push_back(d);
    Value moved = PermuteOp::create(
        rewriter, op.getLoc(),
        RankedTensorType::get(permuted(in, dims), inType.getElementType()),
        merge.getInput(), dims);
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), moved);
    return success();
  }
};

} // namespace

void PermuteOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<ComposePermutes, PermuteBeforeMerge, RecognizeChannelShuffle>(
      context);
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  if (in.empty())
    return emitOpError() << "expects an input of rank >= 1";
  FailureOr<int64_t> dim = normalizeDim(*this, "dim", getDim(), in.size());
  if (failed(dim))
    return failure();
  int64_t start = getStart(), end = getEnd(), step = getStep();
  if (step < 1)
    return emitOpError() << "expects 'step' >= 1, got " << step;
  if (start < 0 || start >= end || end > in[*dim])
    return emitOpError() << "expects 0 <= start < end <= " << in[*dim]
                         << " (the size of dim " << *dim << "), got start "
                         << start << " and end " << end;
  SmallVector<int64_t> shape(in);
  shape[*dim] = (end - start + step - 1) / step;
  if (failed(verifyShape(*this, getOutput().getType(), shape, "result")))
    return failure();
  return verifyResultFormats(*this);
}

bool SliceOp::propagatesChannelsLast() { return true; }

std::optional<int64_t> SliceOp::getViewElementOffset() {
  RankedTensorType in = getInput().getType(), out = getOutput().getType();
  int64_t dim = getDim() < 0 ? getDim() + in.getRank() : getDim();
  ArrayRef<int64_t> shape = out.getShape();
  if (getStep() != 1 && shape[dim] != 1)
    return std::nullopt;
  // Element i of the result is element i + start * e_dim of the input; the
  // two coincide in memory iff the strides agree on every dim the result
  // steps along (a dim of size 1 is never stepped).
  SmallVector<int64_t> inStrides = getStrides(in), outStrides = getStrides(out);
  for (auto [size, inStride, outStride] :
       llvm::zip_equal(shape, inStrides, outStrides))
    if (size != 1 && inStride != outStride)
      return std::nullopt;
  return getStart() * inStrides[dim];
}

//===----------------------------------------------------------------------===//
// ChannelShuffleOp
//===----------------------------------------------------------------------===//

LogicalResult ChannelShuffleOp::verify() {
  if (failed(verifyCommon(*this)))
    return failure();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  if (in.size() < 3)
    return emitOpError() << "expects an input [N, C, *] of rank >= 3, got "
                         << formatList(in);
  if (getGroups() < 1 || in[1] % getGroups() != 0)
    return emitOpError() << "expects 'groups' >= 1 dividing the " << in[1]
                         << " channels, got " << getGroups();
  if (failed(verifyShape(*this, getOutput().getType(), in, "result")))
    return failure();
  return verifyResultFormats(*this);
}

bool ChannelShuffleOp::propagatesChannelsLast() { return true; }

//===----------------------------------------------------------------------===//
// LayerNormOp
//===----------------------------------------------------------------------===//

LogicalResult mlir::memfmt::detail::verifyLayerNorm(Operation *op,
                                                    RankedTensorType input,
                                                    ArrayRef<int64_t> normalized,
                                                    double eps, Value weight) {
  ArrayRef<int64_t> in = input.getShape();
  if (in.empty())
    return op->emitOpError() << "expects an input of rank >= 1";
  if (normalized.size() != 1 || normalized[0] != in.back())
    return op->emitOpError() << "normalises over the last dimension: "
                                "'normalized_shape' must be ["
                             << in.back() << "], got "
                             << formatList(normalized);
  if (weight && failed(verifyShape(op, tensorType(weight), normalized,
                                   "weight")))
    return failure();
  if (!std::isfinite(eps) || eps < 0)
    return op->emitOpError() << "expects a finite 'eps' >= 0, got " << eps;
  return success();
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyCommon(*this)) ||
      failed(verifyLayerNorm(*this, getInput().getType(), getNormalizedShape(),
                             getEps().convertToDouble(), getWeight())))
    return failure();
  if (getBias() && failed(verifyShape(*this, getBias().getType(),
                                      getNormalizedShape(), "bias")))
    return failure();
  if (failed(verifyShape(*this, getOutput().getType(),
                         getInput().getType().getShape(), "result")))
    return failure();
  return verifyResultFormats(*this);
}

bool LayerNormOp::propagatesChannelsLast() { return true; }

/// The kernel reads a whole row before it writes any of it.
SmallVector<OpOperand *> LayerNormOp::getInPlaceOperands(unsigned) {
  return {&getInputMutable()};
}

bool LayerNormOp::readsOperandsElementwise() { return false; }

//===----------------------------------------------------------------------===//
// SoftmaxOp
//===----------------------------------------------------------------------===//

LogicalResult mlir::memfmt::detail::verifySoftmaxDim(Operation *op,
                                                     ArrayRef<int64_t> shape,
                                                     int64_t dim,
                                                     StringRef name) {
  if (shape.empty())
    return op->emitOpError() << "expects an " << name << " of rank >= 1";
  if (dim < 0 || dim >= int64_t(shape.size()))
    return op->emitOpError()
           << "expects 'dim' in [0, " << shape.size() << ") for an " << name
           << " of rank " << shape.size() << ", got " << dim;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  if (failed(verifyCommon(*this)) ||
      failed(verifySoftmaxDim(*this, in, getDimAttr().getInt(), "input")) ||
      failed(verifyShape(*this, getOutput().getType(), in, "result")))
    return failure();
  return verifyResultFormats(*this);
}

bool SoftmaxOp::propagatesChannelsLast() { return true; }

/// The kernel reads a whole row (its max and sum) before it writes any of it.
SmallVector<OpOperand *> SoftmaxOp::getInPlaceOperands(unsigned) {
  return {&getInputMutable()};
}

bool SoftmaxOp::readsOperandsElementwise() { return false; }
