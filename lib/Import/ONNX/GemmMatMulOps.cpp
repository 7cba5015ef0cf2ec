//===- GemmMatMulOps.cpp - ONNX Gemm and MatMul ---------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The converters of the matrix-product family: Gemm and MatMul.
//
// * With a constant right-hand side they become memfmt.linear with the weight
//   laid out [out, in] (transposed at import when needed, and scaled by
//   alpha): a new parameter `<name>.transposed` / `.scaled`, or, where B is
//   the folded Transpose of a constant (torch.onnx's nn.Linear on a tensor
//   of rank > 2), that constant under its own name.
// * With a runtime right-hand side, A x B is a 1x1 convolution: B as the
//   input [1, K, M, 1] and A as the weight [N, K, 1, 1] (grouped for batched
//   MatMul); a runtime transpose (Gemm's transA) is chunk + cat + reshape.
// * Runtime scaling (alpha, beta) is a batch_norm with unit variance and
//   eps 0, an exact per-channel scale.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "ONNXOpRegistry.h"

#include "memfmt/Dialect/MemFmt/IR/MemFmtOps.h"

using namespace mlir;
using namespace mlir::memfmt;
using namespace mlir::memfmt::onnx_import;

/// Transposes a 2-D host tensor.
static HostTensor transposeHost(const HostTensor &tensor) {
  int64_t rows = tensor.shape[0], cols = tensor.shape[1];
  std::vector<float> in = tensor.toFloats();
  std::vector<float> out(in.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[c * rows + r] = in[r * cols + c];
  return HostTensor::fromFloats({cols, rows}, std::move(out));
}

static HostTensor scaleHost(const HostTensor &tensor, float scale) {
  std::vector<float> values = tensor.toFloats();
  for (float &v : values)
    v *= scale;
  return HostTensor::fromFloats(tensor.shape, std::move(values));
}

/// Gemm: alpha * A' x B' + beta * C (see the file comment).
static LogicalResult convertGemm(GraphImporter &importer, Node &node) {
  OpBuilder &builder = importer.getBuilder();
  if (failed(importer.checkArity(node, importer.getOpset() < 11 ? 3 : 2, 3, 1)))
    return failure();
  FailureOr<float> alpha = importer.floatAttr(node, "alpha", 1.0f);
  FailureOr<float> beta = importer.floatAttr(node, "beta", 1.0f);
  FailureOr<int64_t> transA = importer.intAttr(node, "transA", 0);
  FailureOr<int64_t> transB = importer.intAttr(node, "transB", 0);
  FailureOr<int64_t> broadcast = importer.intAttr(node, "broadcast", 0);
  if (failed(alpha) || failed(beta) || failed(transA) || failed(transB) ||
      failed(broadcast))
    return failure();
  OnnxValue &a = *node.inputs[0];
  OnnxValue &b = *node.inputs[1];
  if (a.shape.size() != 2 || b.shape.size() != 2)
    return importer.invalid(node, "A " + formatShape(a.shape) + " and B " +
                                      formatShape(b.shape) + " must be 2-D");
  int64_t n = *transA ? a.shape[1] : a.shape[0];
  int64_t k = *transA ? a.shape[0] : a.shape[1];
  int64_t kb = *transB ? b.shape[1] : b.shape[0];
  int64_t m = *transB ? b.shape[0] : b.shape[1];
  if (k != kb)
    return importer.invalid(node, "A " + formatShape(a.shape) +
                                      (*transA ? " (transposed)" : "") +
                                      " and B " + formatShape(b.shape) +
                                      (*transB ? " (transposed)" : "") +
                                      " do not multiply: " + Twine(k) + " vs " +
                                      Twine(kb) + " inner elements");
  bool hasC = node.hasInput(2) && *beta != 0.0f;
  SmallVector<int64_t, 4> cShape;
  if (hasC) {
    cShape = node.inputs[2]->shape;
    if (cShape.size() > 2 ||
        broadcastShapes(cShape, {n, m}) != SmallVector<int64_t, 4>{n, m})
      return importer.invalid(node, "C " + formatShape(cShape) +
                                        " does not broadcast to the result [" +
                                        Twine(n) + ", " + Twine(m) + "]");
  }
  StringRef aName = node.inputName(0), bName = node.inputName(1);

  // A as [N, K], alpha folded into a constant operand where there is one.
  bool alphaDone = *alpha == 1.0f;
  Value lhs;
  if (a.isConstant() && (*transA || (!alphaDone && !b.isConstant()))) {
    HostTensor value = *a.constant;
    std::string what;
    if (*transA) {
      value = transposeHost(value);
      what = "transposed";
    }
    if (!alphaDone && !b.isConstant()) {
      value = scaleHost(value, *alpha);
      what += what.empty() ? "scaled" : ".scaled";
      alphaDone = true;
    }
    FailureOr<Value> w = importer.derivedWeight(node, aName, what, value);
    if (failed(w))
      return failure();
    lhs = *w;
  } else {
    FailureOr<Value> value = importer.tensorOperand(node, 0, "A");
    if (failed(value))
      return failure();
    lhs = *value;
    if (*transA) {
      FailureOr<Value> t = importer.transpose2d(node, lhs);
      if (failed(t))
        return failure();
      lhs = *t;
    }
  }

  // The product [N, M].
  Value result;
  bool viaLinear = b.isConstant() || *transB;
  Value bias;
  if (viaLinear) {
    Value rhs;
    if (b.isConstant()) {
      // memfmt.linear wants [M, K].
      HostTensor value = *b.constant;
      std::string what;
      if (!*transB) {
        value = transposeHost(value);
        what = "transposed";
      }
      if (!alphaDone) {
        value = scaleHost(value, *alpha);
        what += what.empty() ? "scaled" : ".scaled";
        alphaDone = true;
      }
      FailureOr<Value> w =
          what.empty() ? importer.weight(node, bName, *b.constant)
                       : importer.derivedWeight(node, bName, what, value);
      if (failed(w))
        return failure();
      rhs = *w;
    } else {
      FailureOr<Value> value = importer.tensorOperand(node, 1, "B");
      if (failed(value))
        return failure();
      rhs = *value;
    }
    // A bias of M values goes into the linear op.
    SmallVector<int64_t, 4> c2 = cShape;
    while (c2.size() < 2)
      c2.insert(c2.begin(), 1);
    if (hasC && alphaDone && c2[0] == 1 && c2[1] == m) {
      OnnxValue &c = *node.inputs[2];
      FailureOr<Value> cv;
      if (c.isConstant() && *beta != 1.0f)
        cv = importer.derivedWeight(node, node.inputName(2), "scaled",
                                    scaleHost(*c.constant, *beta));
      else
        cv = importer.tensorOperand(node, 2, "C");
      if (failed(cv))
        return failure();
      if (!c.isConstant() && *beta != 1.0f) {
        FailureOr<Value> c2 = importer.reshape(node, *cv, {1, m});
        if (failed(c2))
          return failure();
        cv = importer.scaleChannels(node, *c2, *beta, "beta");
        if (failed(cv))
          return failure();
      }
      cv = importer.reshape(node, *cv, {m});
      if (failed(cv))
        return failure();
      bias = *cv;
      hasC = false;
    }
    FailureOr<Value> y = importer.verified(
        node, LinearOp::create(builder, node.loc, importer.tensorType({n, m}),
                               lhs, rhs, bias));
    if (failed(y))
      return failure();
    result = *y;
  } else {
    // B at run time: A x B as a 1x1 convolution.
    FailureOr<Value> rhs = importer.tensorOperand(node, 1, "B");
    if (failed(rhs))
      return failure();
    FailureOr<Value> l3 = importer.reshape(node, lhs, {1, n, k});
    FailureOr<Value> r4 = importer.reshape(node, *rhs, {1, 1, k, m});
    if (failed(l3) || failed(r4))
      return failure();
    FailureOr<Value> y = importer.matmulAsConv(node, *l3, *r4);
    if (failed(y))
      return failure();
    FailureOr<Value> y2 = importer.reshape(node, *y, {n, m});
    if (failed(y2))
      return failure();
    result = *y2;
  }
  if (!alphaDone) {
    FailureOr<Value> scaled =
        importer.scaleChannels(node, result, *alpha, "alpha");
    if (failed(scaled))
      return failure();
    result = *scaled;
  }
  if (hasC) {
    OnnxValue &c = *node.inputs[2];
    SmallVector<int64_t, 4> c2 = cShape;
    while (c2.size() < 2)
      c2.insert(c2.begin(), 1);
    FailureOr<Value> cv;
    if (c.isConstant() && *beta != 1.0f) {
      cv = importer.derivedWeight(node, node.inputName(2), "scaled",
                                  scaleHost(*c.constant, *beta).withShape(c2));
    } else {
      cv = importer.tensorOperand(node, 2, "C");
      if (succeeded(cv))
        cv = importer.reshape(node, *cv, c2);
      if (succeeded(cv) && *beta != 1.0f)
        cv = importer.scaleChannels(node, *cv, *beta, "beta");
    }
    if (failed(cv))
      return failure();
    FailureOr<Value> y = importer.verified(
        node, AddOp::create(builder, node.loc, importer.tensorType({n, m}),
                            result, *cv));
    if (failed(y))
      return failure();
    result = *y;
  }
  importer.setOutput(node, 0, OnnxValue::runtime(result, {n, m}));
  return success();
}

/// MatMul with NumPy semantics: memfmt.linear for a constant 2-D B, else a
/// (grouped) 1x1 convolution.
static LogicalResult convertMatMul(GraphImporter &importer, Node &node) {
  if (failed(importer.checkArity(node, 2, 2, 1)))
    return failure();
  OnnxValue &a = *node.inputs[0];
  OnnxValue &b = *node.inputs[1];
  if (a.shape.empty() || b.shape.empty())
    return importer.invalid(node, "MatMul operands must have rank >= 1, got " +
                                      formatShape(a.shape) + " and " +
                                      formatShape(b.shape));
  // NumPy: a 1-D A is a row [1, K], a 1-D B a column [K, 1]; those dims are
  // dropped from the result.
  SmallVector<int64_t, 4> aShape = a.shape, bShape = b.shape;
  bool rowVector = aShape.size() == 1, columnVector = bShape.size() == 1;
  if (rowVector)
    aShape.insert(aShape.begin(), 1);
  if (columnVector)
    bShape.push_back(1);
  int64_t n = aShape[aShape.size() - 2], k = aShape.back();
  int64_t kb = bShape[bShape.size() - 2], m = bShape.back();
  if (k != kb)
    return importer.invalid(node, "A " + formatShape(a.shape) + " and B " +
                                      formatShape(b.shape) +
                                      " do not multiply: " + Twine(k) + " vs " +
                                      Twine(kb) + " inner elements");
  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(aShape).drop_back(2);
  ArrayRef<int64_t> bBatch = ArrayRef<int64_t>(bShape).drop_back(2);
  std::optional<SmallVector<int64_t, 4>> batch =
      broadcastShapes(aBatch, bBatch);
  if (!batch)
    return importer.invalid(
        node, "the batch dimensions of A " + formatShape(a.shape) + " and B " +
                  formatShape(b.shape) + " do not broadcast");
  SmallVector<int64_t, 4> resultShape(*batch);
  if (!rowVector)
    resultShape.push_back(n);
  if (!columnVector)
    resultShape.push_back(m);
  SmallVector<int64_t, 4> fullShape(*batch);
  fullShape.append({n, m});

  FailureOr<Value> y;
  if (bBatch.empty() && b.isConstant()) {
    // x @ W with a constant W [K, M]: memfmt.linear on W^T [M, K], which
    // is the constant B was transposed from where there is one (nn.Linear:
    // its weight keeps its name).
    HostTensor w = b.constant->withShape({k, m});
    FailureOr<Value> wt =
        b.transposeOf.empty()
            ? importer.derivedWeight(node, node.inputName(1), "transposed",
                                     transposeHost(w))
            : importer.weight(node, b.transposeOf, transposeHost(w));
    FailureOr<Value> x = importer.tensorOperand(node, 0, "A");
    if (failed(wt) || failed(x))
      return failure();
    int64_t rows = product(aBatch) * n;
    FailureOr<Value> x2 = importer.reshape(node, *x, {rows, k});
    if (failed(x2))
      return failure();
    y = importer.verified(node,
                          LinearOp::create(importer.getBuilder(), node.loc,
                                           importer.tensorType({rows, m}), *x2,
                                           *wt, Value()));
  } else {
    FailureOr<Value> x = importer.tensorOperand(node, 0, "A");
    FailureOr<Value> w = importer.tensorOperand(node, 1, "B");
    if (failed(x) || failed(w))
      return failure();
    int64_t aCount = product(aBatch), bCount = product(bBatch);
    if (bCount == 1) {
      // [..., N, K] x [K, M]: the rows of all batches at once.
      FailureOr<Value> l = importer.reshape(node, *x, {1, aCount * n, k});
      FailureOr<Value> r = importer.reshape(node, *w, {1, 1, k, m});
      if (failed(l) || failed(r))
        return failure();
      y = importer.matmulAsConv(node, *l, *r);
    } else if (aCount == 1) {
      // [N, K] x [..., K, M]: the batches of B are the convolution's batch.
      FailureOr<Value> l = importer.reshape(node, *x, {1, n, k});
      FailureOr<Value> r = importer.reshape(node, *w, {bCount, 1, k, m});
      if (failed(l) || failed(r))
        return failure();
      y = importer.matmulAsConv(node, *l, *r);
    } else {
      // Matching batches: one group per batch.
      SmallVector<int64_t, 4> aFull(batch->size() - aBatch.size(), 1);
      aFull.append(aBatch.begin(), aBatch.end());
      SmallVector<int64_t, 4> bFull(batch->size() - bBatch.size(), 1);
      bFull.append(bBatch.begin(), bBatch.end());
      if (aFull != bFull)
        return importer.unsupported(node, "batched MatMul with broadcast batch "
                                          "dimensions (A " +
                                              formatShape(a.shape) + ", B " +
                                              formatShape(b.shape) +
                                              ") is not supported");
      FailureOr<Value> l = importer.reshape(node, *x, {aCount, n, k});
      FailureOr<Value> r = importer.reshape(node, *w, {1, aCount, k, m});
      if (failed(l) || failed(r))
        return failure();
      y = importer.matmulAsConv(node, *l, *r);
    }
  }
  if (failed(y))
    return failure();
  FailureOr<Value> result = importer.reshape(node, *y, resultShape);
  if (failed(result))
    return failure();
  importer.setOutput(node, 0, OnnxValue::runtime(*result, resultShape));
  return success();
}

void mlir::memfmt::onnx_import::registerGemmMatMulOps(
    ONNXOpRegistry &registry) {
  registry.add(
      {"Gemm",
       {"alpha", "beta", "broadcast", "transA", "transB"},
       {{1, convertGemm}},
       {"`linear` (+ `add`)",
        "`alpha`, `beta`, `transA`, `transB`; B constant: `linear` on B as "
        "`[out, in]`; B at run time: `linear` (transB = 1) or a 1x1 "
        "`conv2d`; transA at run time: chunk + cat + reshape; C of any "
        "broadcastable shape",
        ""}});
  registry.add(
      {"MatMul",
       {},
       {{1, convertMatMul}},
       {"`linear`, or a 1x1 `conv2d`",
        "1-D to N-D operands; a constant 2-D right-hand side becomes "
        "`linear`; at run time a (grouped) 1x1 convolution: B is the input "
        "`[1, K, M, 1]`, A the weight `[N, K, 1, 1]`, one group per batch",
        "batch dimensions that broadcast (`[2, 1, ...]` with `[1, 2, ...]`)"}});
}
