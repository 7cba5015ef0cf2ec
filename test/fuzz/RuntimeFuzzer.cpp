//===- RuntimeFuzzer.cpp - Fuzz the runtime's kernel entry points ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// libFuzzer target for the runtime's input validation: every entry point of
// kernel_abi.h (every kernel of Kernels.def, every element type) called with
// memref descriptors and scalars drawn from the input. The table of entry
// points is generated from Kernels.def, so a new kernel is fuzzed as soon
// as it is declared.
//
// A descriptor gets a random rank (mostly 0-5, sometimes negative or above
// the runtime's maximum), sizes (mostly small, sometimes negative, 0 or
// huge), strides (contiguous, channels-last, small random ones including 0
// and negative, or huge), an offset, and now and then a null memref,
// descriptor or data pointer. The descriptor is allocated with exactly the
// fields its rank claims, and its data buffer with exactly the elements its
// sizes and strides reach, so AddressSanitizer catches a kernel that reads
// or writes outside what the caller described. Claims that overflow or have
// negative sizes get a one-element buffer: the runtime must reject them
// before touching it. Valid claims above a thousand elements are
// shrunk, so that no call does unbounded work. An output may share the
// buffer of an earlier tensor, starting at the same address (in place with
// the same layout, or a different view); other partial overlaps are
// undefined by the ABI and never made.
//
// The runtime must return a status, never crash. A failed call must also
// leave a message in the context and every buffer as it was.
// MEMFMT_FUZZ_VERBOSE=1 prints each call's arguments (to debug an input).
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/kernel_abi.h"
#include "memfmt/runtime/memfmt_runtime.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

/// Tensors with more elements than this are shrunk, so that every call is
/// cheap: a convolution's work is bounded by out x weight elements (a
/// million here). 4096 let the corpus drift to 16M-MAC reference
/// convolutions and 180 executions per second.
constexpr int64_t kMaxElements = 1024;
/// Data buffers span at most this many elements.
constexpr int64_t kMaxSpan = 1 << 16;

constexpr int64_t kSpecialI64[] = {
    std::numeric_limits<int64_t>::min(),
    std::numeric_limits<int64_t>::min() + 1,
    -(int64_t(1) << 31) - 1,
    -(int64_t(1) << 31),
    -(int64_t(1) << 32),
    -65536,
    -1,
    (int64_t(1) << 31) - 1,
    int64_t(1) << 31,
    (int64_t(1) << 31) + 1,
    int64_t(1) << 32,
    int64_t(1) << 40,
    int64_t(1) << 62,
    std::numeric_limits<int64_t>::max() - 1,
    std::numeric_limits<int64_t>::max(),
};

/// One tensor argument: its unranked memref, descriptor and data.
struct Tensor {
  memfmt_memref_t memref{};
  std::vector<int64_t> descriptor; // {allocated, aligned, offset, sizes, strides}
  std::shared_ptr<std::vector<unsigned char>> buffer; // shared when aliased
  int64_t elementSize = 4;
  bool nullMemref = false;
  // Valid geometry for aliasing (count within bounds, no overflow).
  bool valid = false;
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
};

/// Draws the arguments of one call and owns their memory.
class Generator {
public:
  explicit Generator(FuzzedDataProvider &fdp) : fdp(fdp) {}

  /// Draws tensor argument `name`; `output` may alias an earlier tensor.
  void prepareTensor(const char *name, bool output, int64_t elementSize);
  /// The memref of a prepared tensor (null for a null memref).
  const memfmt_memref_t *tensor(const char *name) {
    Tensor &t = tensors.at(name);
    return t.nullMemref ? nullptr : &t.memref;
  }
  int64_t i64(const char *name) {
    auto it = scalars.find(name);
    if (it == scalars.end())
      it = scalars.emplace(name, drawI64()).first;
    return it->second;
  }
  double f64(const char *name) {
    auto it = reals.find(name);
    if (it == reals.end())
      it = reals.emplace(name, drawF64()).first;
    return it->second;
  }
  /// Draws every scalar before the call, in declaration order.
  void prepareI64(const char *name) { (void)i64(name); }
  void prepareF64(const char *name) { (void)f64(name); }

  /// Prints every tensor and scalar (MEMFMT_FUZZ_VERBOSE=1).
  void print() const {
    for (const std::string &name : order) {
      const Tensor &t = tensors.at(name);
      std::fprintf(stderr, "  %s: rank %lld%s%s sizes [", name.c_str(),
                   (long long)t.memref.rank, t.nullMemref ? " (null memref)" : "",
                   t.memref.descriptor ? "" : " (null descriptor)");
      for (int64_t v : t.sizes)
        std::fprintf(stderr, " %lld", (long long)v);
      std::fprintf(stderr, " ] strides [");
      for (int64_t v : t.strides)
        std::fprintf(stderr, " %lld", (long long)v);
      std::fprintf(stderr, " ] offset %lld, buffer %zu bytes at %p\n",
                   (long long)t.offset, t.buffer->size(),
                   (void *)t.buffer->data());
    }
    for (const auto &[name, v] : scalars)
      std::fprintf(stderr, "  %s = %lld\n", name.c_str(), (long long)v);
    for (const auto &[name, v] : reals)
      std::fprintf(stderr, "  %s = %g\n", name.c_str(), v);
  }

  /// Copies of every data buffer (to check that a failed call wrote
  /// nothing).
  std::vector<std::vector<unsigned char>> snapshot() const {
    std::vector<std::vector<unsigned char>> copies;
    for (const auto &[name, t] : tensors)
      copies.push_back(*t.buffer);
    return copies;
  }

private:
  int64_t drawI64();
  double drawF64();
  int64_t drawSize();
  void drawGeometry(Tensor &t, int64_t rank);
  void place(Tensor &t, std::shared_ptr<std::vector<unsigned char>> buffer,
             int64_t begin);

  FuzzedDataProvider &fdp;
  std::map<std::string, Tensor> tensors;
  std::vector<std::string> order;
  std::map<std::string, int64_t> scalars;
  std::map<std::string, double> reals;
};

int64_t Generator::drawI64() {
  switch (fdp.ConsumeIntegralInRange<int>(0, 15)) {
  case 0:
    return fdp.PickValueInArray(kSpecialI64);
  case 1:
    return fdp.ConsumeIntegral<int64_t>();
  case 2:
  case 3:
    return fdp.ConsumeIntegralInRange<int64_t>(-3, 40);
  default:
    return fdp.ConsumeIntegralInRange<int64_t>(0, 4);
  }
}

double Generator::drawF64() {
  switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
  case 0:
    return std::numeric_limits<double>::quiet_NaN();
  case 1:
    return fdp.ConsumeBool() ? std::numeric_limits<double>::infinity()
                             : -std::numeric_limits<double>::infinity();
  case 2:
    return fdp.ConsumeFloatingPoint<double>();
  case 3:
    return 0.0;
  case 4:
    return -1e-5;
  default:
    return 1e-5;
  }
}

int64_t Generator::drawSize() {
  switch (fdp.ConsumeIntegralInRange<int>(0, 15)) {
  case 0:
    return fdp.PickValueInArray(kSpecialI64);
  case 1:
    return 0;
  case 2:
    return fdp.ConsumeIntegralInRange<int64_t>(8, 70);
  default:
    return fdp.ConsumeIntegralInRange<int64_t>(1, 7);
  }
}

/// Sizes, strides and offset of a tensor of rank `rank` (0-16).
void Generator::drawGeometry(Tensor &t, int64_t rank) {
  t.sizes.assign(rank, 1);
  t.strides.assign(rank, 0);
  for (int64_t &size : t.sizes)
    size = drawSize();
  int strideKind = fdp.ConsumeIntegralInRange<int>(0, 7);
  if (strideKind <= 3 || (strideKind <= 5 && rank != 4)) {
    // Row-major (NCHW) dense strides.
    int64_t stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      t.strides[d] = stride;
      stride = t.sizes[d] > 0 && stride < (int64_t(1) << 40) / t.sizes[d]
                   ? stride * t.sizes[d]
                   : stride;
    }
  } else if (strideKind <= 5) {
    // Channels-last: [H*W*C, 1, W*C, C].
    int64_t c = t.sizes[1], w = t.sizes[3], h = t.sizes[2];
    auto clamp = [](int64_t v) { return v > 0 && v < (1 << 20) ? v : 1; };
    t.strides = {clamp(h) * clamp(w) * clamp(c), 1, clamp(w) * clamp(c),
                 clamp(c)};
  } else if (strideKind == 6) {
    for (int64_t &stride : t.strides)
      stride = fdp.ConsumeIntegralInRange<int64_t>(-6, 12);
  } else {
    for (int64_t &stride : t.strides)
      stride = fdp.ConsumeBool() ? fdp.PickValueInArray(kSpecialI64)
                                 : fdp.ConsumeIntegralInRange<int64_t>(-2, 9);
  }
  t.offset = fdp.ConsumeIntegralInRange<int64_t>(0, 3);
}

/// Points `t`'s descriptor at `buffer` so that its lowest element is at
/// byte `begin` of the buffer.
void Generator::place(Tensor &t,
                      std::shared_ptr<std::vector<unsigned char>> buffer,
                      int64_t begin) {
  t.buffer = std::move(buffer);
  auto base = reinterpret_cast<uintptr_t>(t.buffer->data());
  // aligned + offset * elementSize is the first element; the lowest element
  // (with negative strides) is `begin` bytes into the buffer.
  uintptr_t aligned = base + uintptr_t(begin);
  std::memcpy(&t.descriptor[0], &base, sizeof(base));
  std::memcpy(&t.descriptor[1], &aligned, sizeof(aligned));
}

void Generator::prepareTensor(const char *name, bool output,
                              int64_t elementSize) {
  Tensor &t = tensors[name];
  order.push_back(name);
  t.elementSize = elementSize;

  int mode = fdp.ConsumeIntegralInRange<int>(0, 63);
  int64_t rank;
  if (mode == 0)
    rank = fdp.ConsumeIntegralInRange<int64_t>(-3, -1);
  else if (mode == 1)
    rank = fdp.ConsumeIntegralInRange<int64_t>(6, 16);
  else if (mode < 40)
    rank = 4;
  else
    rank = fdp.ConsumeIntegralInRange<int64_t>(0, 5);

  int64_t storedRank = rank < 0 ? 0 : rank;
  t.descriptor.assign(3 + 2 * storedRank, 0);
  t.memref.rank = rank;
  t.memref.descriptor = t.descriptor.data();
  t.nullMemref = mode == 2;
  if (mode == 3)
    t.memref.descriptor = nullptr;

  // Outputs may start where an earlier tensor starts.
  const Tensor *alias = nullptr;
  if (output && !order.empty() && fdp.ConsumeIntegralInRange<int>(0, 3) == 0) {
    const std::string &other =
        order[fdp.ConsumeIntegralInRange<size_t>(0, order.size() - 1)];
    if (other != name && tensors[other].valid &&
        tensors[other].elementSize == elementSize)
      alias = &tensors[other];
  }
  if (alias && alias->sizes.size() == size_t(storedRank) && fdp.ConsumeBool()) {
    // Exactly the same view (in place).
    t.sizes = alias->sizes;
    t.strides = alias->strides;
    t.offset = alias->offset;
    t.valid = true;
    for (int64_t d = 0; d < storedRank; ++d) {
      t.descriptor[3 + d] = t.sizes[d];
      t.descriptor[3 + storedRank + d] = t.strides[d];
    }
    t.descriptor[2] = t.offset;
    place(t, alias->buffer, 0);
    return;
  }
  drawGeometry(t, storedRank);

  // The element count and the span of offsets the claim reaches.
  bool negative = false, overflow = false;
  int64_t count = 1;
  for (int64_t size : t.sizes) {
    negative |= size < 0;
    if (!negative && __builtin_mul_overflow(count, size, &count))
      overflow = true;
  }
  if (!negative && !overflow && count > kMaxElements) {
    // A valid but large claim: shrink it, keep its strides.
    for (int64_t &size : t.sizes)
      size = size % 4 + (size % 4 == 0 ? 1 : 0);
    count = 1;
    for (int64_t size : t.sizes)
      count *= size;
  }
  // The lowest and highest element offsets; `overflow` when the runtime
  // must reject the claim (its address range does not fit an int64, as
  // decodeMemref computes it: the sum of (size - 1) * |stride|, in bytes).
  auto measure = [&](int64_t &low, int64_t &high) {
    low = high = 0;
    int64_t extent = 0;
    for (size_t d = 0; d < t.sizes.size(); ++d) {
      int64_t reach, magnitude;
      if (t.strides[d] == std::numeric_limits<int64_t>::min() ||
          __builtin_mul_overflow(t.sizes[d] - 1, t.strides[d], &reach) ||
          __builtin_mul_overflow(t.sizes[d] - 1,
                                 t.strides[d] < 0 ? -t.strides[d]
                                                  : t.strides[d],
                                 &magnitude) ||
          __builtin_add_overflow(extent, magnitude, &extent))
        return false;
      (reach < 0 ? low : high) += reach;
    }
    return !__builtin_mul_overflow(extent, elementSize, &extent);
  };
  int64_t low = 0, high = 0;
  if (!negative && !overflow && count > 0 && !measure(low, high))
    overflow = true;
  if (!negative && !overflow && count > 0 && high - low >= kMaxSpan) {
    // A valid claim too wide for a test buffer: dense strides instead.
    int64_t stride = 1;
    for (size_t d = t.sizes.size(); d-- > 0;) {
      t.strides[d] = stride;
      stride *= t.sizes[d];
    }
    measure(low, high);
  }
  bool fits = !negative && !overflow;
  // The offset moves the lowest element to offset + low >= 0.
  if (fits && count > 0)
    t.offset += -low;

  int special = fdp.ConsumeIntegralInRange<int>(0, 31);
  if (special == 0) {
    // An offset whose byte offset overflows: the runtime must reject it.
    t.offset = std::numeric_limits<int64_t>::max() / 2 + 1;
    fits = false;
  }
  bool nullData = special == 1;

  for (int64_t d = 0; d < storedRank; ++d) {
    t.descriptor[3 + d] = t.sizes[d];
    t.descriptor[3 + storedRank + d] = t.strides[d];
  }
  t.descriptor[2] = t.offset;

  if (fits && count > 0 && !nullData) {
    t.valid = true;
    size_t bytes = size_t(t.offset + high + 1) * size_t(elementSize);
    if (alias && alias->buffer->size() >= bytes &&
        alias->offset * alias->elementSize ==
            t.offset * elementSize) {
      place(t, alias->buffer, 0);
    } else {
      auto buffer = std::make_shared<std::vector<unsigned char>>(bytes);
      for (unsigned char &byte : *buffer)
        byte = fdp.ConsumeIntegral<unsigned char>();
      place(t, buffer, 0);
    }
    return;
  }
  // Nothing may be touched: an empty tensor, or a claim the runtime must
  // reject. A one-element buffer catches any access past element 0.
  t.valid = false;
  place(t, std::make_shared<std::vector<unsigned char>>(elementSize), 0);
  if (nullData) {
    t.descriptor[0] = 0;
    t.descriptor[1] = 0;
  }
}

//===----------------------------------------------------------------------===//
// Entry points from Kernels.def
//===----------------------------------------------------------------------===//

using Preparer = void (*)(Generator &);
using Caller = int32_t (*)(memfmt_context_t *, int64_t, Generator &);

struct EntryPoint {
  const char *name;
  Preparer prepare; ///< draws the arguments
  Caller call;      ///< calls the entry point with them
};

// Statements that draw every argument in declaration order.
#define FZ_PREPARE(ARGS) FZ_PREPARE_CAT(FZ_PREPARE_A ARGS, _END)
#define FZ_PREPARE_CAT(A, B) FZ_PREPARE_CAT_I(A, B)
#define FZ_PREPARE_CAT_I(A, B) A##B
#define FZ_PREPARE_A(K, N) FZ_PREPARE_##K(N) FZ_PREPARE_B
#define FZ_PREPARE_B(K, N) FZ_PREPARE_##K(N) FZ_PREPARE_A
#define FZ_PREPARE_A_END
#define FZ_PREPARE_B_END
#define FZ_PREPARE_IN(N) g.prepareTensor(#N, false, elementSize);
#define FZ_PREPARE_OUT(N) g.prepareTensor(#N, true, elementSize);
#define FZ_PREPARE_OUT_I64(N) g.prepareTensor(#N, true, 8);
#define FZ_PREPARE_IN_I64(N) g.prepareTensor(#N, false, 8);
#define FZ_PREPARE_IN_F32(N) g.prepareTensor(#N, false, 4);
#define FZ_PREPARE_OUT_F32(N) g.prepareTensor(#N, true, 4);
#define FZ_PREPARE_I64(N) g.prepareI64(#N);
#define FZ_PREPARE_F64(N) g.prepareF64(#N);

// The call's arguments, looked up by name (so their evaluation order does
// not matter).
#define FZ_ARGS(ARGS) FZ_ARGS_CAT(FZ_ARGS_A ARGS, _END)
#define FZ_ARGS_CAT(A, B) FZ_ARGS_CAT_I(A, B)
#define FZ_ARGS_CAT_I(A, B) A##B
#define FZ_ARGS_A(K, N) FZ_ARG_##K(N) FZ_ARGS_B
#define FZ_ARGS_B(K, N) FZ_ARG_##K(N) FZ_ARGS_A
#define FZ_ARGS_A_END
#define FZ_ARGS_B_END
// Commas are deferred as in MEMFMT_ABI_PARAMS (kernel_abi.h).
#define FZ_COMMA MEMFMT_ABI_COMMA MEMFMT_ABI_EMPTY()()
#define FZ_ARG_IN(N) FZ_COMMA g.tensor(#N)
#define FZ_ARG_OUT(N) FZ_COMMA g.tensor(#N)
#define FZ_ARG_OUT_I64(N) FZ_COMMA g.tensor(#N)
#define FZ_ARG_IN_I64(N) FZ_COMMA g.tensor(#N)
#define FZ_ARG_IN_F32(N) FZ_COMMA g.tensor(#N)
#define FZ_ARG_OUT_F32(N) FZ_COMMA g.tensor(#N)
#define FZ_ARG_I64(N) FZ_COMMA g.i64(#N)
#define FZ_ARG_F64(N) FZ_COMMA g.f64(#N)

/// Bytes per element of an entry point's element type: f32 4, i64 8 (the
/// step count's increment), f16 and bf16 2.
constexpr int64_t elementSizeOf(const char *type) {
  return type[0] == 'i' ? 8 : type[0] == 'f' && type[1] == '3' ? 4 : 2;
}

#define FZ_ENTRY(NAME, T, ARGS)                                                \
  {"memfmt_" #NAME "_" #T,                                                     \
   [](Generator &g) {                                                          \
     constexpr int64_t elementSize = elementSizeOf(#T);                        \
     (void)elementSize;                                                        \
     FZ_PREPARE(ARGS)                                                          \
   },                                                                          \
   [](memfmt_context_t *ctx, int64_t node, Generator &g) -> int32_t {          \
     return MEMFMT_ABI_SYMBOL(NAME, T)(ctx, node FZ_ARGS(ARGS));               \
   }},

#define MEMFMT_DTYPE(T) MEMFMT_ABI_DTYPE(T)
#define MEMFMT_IN(N) MEMFMT_ABI_IN(N)
#define MEMFMT_OUT(N) MEMFMT_ABI_OUT(N)
#define MEMFMT_OUT_I64(N) MEMFMT_ABI_OUT_I64(N)
#define MEMFMT_IN_I64(N) MEMFMT_ABI_IN_I64(N)
#define MEMFMT_IN_F32(N) MEMFMT_ABI_IN_F32(N)
#define MEMFMT_OUT_F32(N) MEMFMT_ABI_OUT_F32(N)
#define MEMFMT_I64(N) MEMFMT_ABI_I64(N)
#define MEMFMT_F64(N) MEMFMT_ABI_F64(N)
#define MEMFMT_KERNEL(NAME, DTYPES, ARGS)                                      \
  MEMFMT_ABI_FOR_EACH_DTYPE(FZ_ENTRY, NAME, ARGS, DTYPES)
const EntryPoint kEntryPoints[] = {
#include "memfmt/runtime/Kernels.def"
};
#undef MEMFMT_DTYPE
#undef MEMFMT_IN
#undef MEMFMT_OUT
#undef MEMFMT_OUT_I64
#undef MEMFMT_IN_I64
#undef MEMFMT_IN_F32
#undef MEMFMT_OUT_F32
#undef MEMFMT_I64
#undef MEMFMT_F64

/// The contexts calls run in: fast kernels on one and two threads, and the
/// reference kernels.
memfmt_context_t *getContext(int which) {
  static memfmt_context_t *contexts[3] = {};
  if (!contexts[which]) {
    memfmt_context_options_t options;
    memfmt_context_options_init(&options);
    options.kernels =
        which == 2 ? MEMFMT_KERNELS_REFERENCE : MEMFMT_KERNELS_FAST;
    options.num_threads = which == 1 ? 2 : 1;
    if (memfmt_context_create(&options, &contexts[which]) !=
        MEMFMT_STATUS_OK) {
      std::fprintf(stderr, "memfmt-fuzz-runtime: no context: %s\n",
                   memfmt_context_last_error(nullptr));
      std::abort();
    }
  }
  return contexts[which];
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const EntryPoint &entry = fdp.PickValueInArray(kEntryPoints);
  int which = fdp.ConsumeIntegralInRange<int>(0, 2);
  memfmt_context_t *ctx = fdp.ConsumeIntegralInRange<int>(0, 63) == 0
                              ? nullptr
                              : getContext(which);
  int64_t node = fdp.ConsumeIntegralInRange<int64_t>(-2, 5);

  Generator g(fdp);
  entry.prepare(g);
  static const bool verbose = std::getenv("MEMFMT_FUZZ_VERBOSE") != nullptr;
  if (verbose) {
    std::fprintf(stderr, "%s (context %d, node %lld)\n", entry.name,
                 ctx ? which : -1, (long long)node);
    g.print();
  }
  std::vector<std::vector<unsigned char>> before = g.snapshot();
  int32_t status = entry.call(ctx, node, g);

  if (status < 0 || status > MEMFMT_STATUS_INTERNAL) {
    std::fprintf(stderr, "%s returned %d, not a memfmt_status_t\n", entry.name,
                 status);
    std::abort();
  }
  if (status != MEMFMT_STATUS_OK) {
    const char *message = memfmt_context_last_error(ctx);
    if (!message || !*message) {
      std::fprintf(stderr, "%s failed (status %d) without a message\n",
                   entry.name, status);
      std::abort();
    }
    if (status == MEMFMT_STATUS_INTERNAL) {
      std::fprintf(stderr, "%s: internal error: %s\n", entry.name, message);
      std::abort();
    }
    if (g.snapshot() != before) {
      std::fprintf(stderr, "%s failed (%s) but changed a buffer\n", entry.name,
                   message);
      std::abort();
    }
  }
  memfmt_context_clear_error(ctx);
  if (ctx)
    memfmt_context_invalidate_caches(ctx);
  return 0;
}
