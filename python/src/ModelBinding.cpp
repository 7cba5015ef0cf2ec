//===- ModelBinding.cpp - The memfmt._memfmt extension module -------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The one extension module of the Python package: a thin pybind11 binding of
// the runtime's C API (memfmt/runtime/model.h), so that Python runs compiled
// models through the same loader and kernels as memfmt-run, with no second
// runtime. Everything about arrays (numpy, torch, DLPack, the one
// conversion) is Python's job (memfmt/_arrays.py); this file only moves
// pointers and strings across, and lends Python the layout library's stride
// rules (`suggest_memory_format`, `same_bytes`) and the runtime's one
// safetensors reader and writer (`read_safetensors`, `write_safetensors` on
// numpy arrays; memfmt-train --save writes with the same code):
//
//  * `Model(dir, weights, threads, backend)` owns a context of its own and
//    the model loaded into it, so that models are independent (one per
//    thread, or several per thread). Runtime failures raise RuntimeError with
//    memfmt_context_last_error's message.
//  * `run(inputs, outputs)` takes buffer addresses (the caller keeps the
//    arrays alive) and releases the GIL while the model runs. The C API
//    allows one thread per model at a time; a mutex per model makes a second
//    thread wait instead of racing.
//  * `time_runs` and `profile` are memfmt-run --bench and --profile's
//    measurements (3 warm-ups, then one wall-clock time per run; the
//    context's per-node profile), for Model.benchmark and Model.profile.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Layout/Strides.h"
#include "memfmt/runtime/io/SafeTensors.h"
#include "memfmt/runtime/memfmt_runtime.h"
#include "memfmt/runtime/model.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

/// Warm-up runs before timed runs, as memfmt-run --bench.
constexpr int64_t kWarmupRuns = 3;

py::dict tensorInfo(const memfmt_model_tensor_info_t &info) {
  py::dict d;
  d["name"] = info.name;
  d["dtype"] = info.dtype;
  d["shape"] = std::vector<int64_t>(info.shape, info.shape + info.rank);
  d["strides"] = std::vector<int64_t>(info.strides, info.strides + info.rank);
  d["element_size"] = info.element_size;
  d["buffer_bytes"] = info.buffer_bytes;
  d["zero_init"] = info.zero_init != 0;
  return d;
}

class Model {
public:
  Model(const std::string &dir, std::optional<std::string> weights,
        int32_t threads, const std::string &backend,
        std::optional<bool> allowBf16) {
    memfmt_context_options_t opts;
    memfmt_context_options_init(&opts);
    opts.num_threads = threads;
    if (allowBf16) // Else MEMFMT_ALLOW_BF16 decides.
      opts.allow_bf16 = *allowBf16 ? MEMFMT_SWITCH_ON : MEMFMT_SWITCH_OFF;
    if (backend == "cuda")
      opts.backend = MEMFMT_BACKEND_CUDA;
    else if (backend != "cpu")
      throw py::value_error("unknown backend '" + backend +
                            "' (expected 'cpu' or 'cuda')");
    if (memfmt_status_t s = memfmt_context_create(&opts, &ctx_))
      throw std::runtime_error(
          std::string("cannot create a memfmt ") + backend + " context: " +
          memfmt_status_string(s) +
          (memfmt_context_last_error(nullptr)
               ? std::string(": ") + memfmt_context_last_error(nullptr)
               : std::string()));
    if (memfmt_model_load(ctx_, dir.c_str(),
                          weights ? weights->c_str() : nullptr, &model_)) {
      std::string message = memfmt_context_last_error(ctx_);
      memfmt_context_destroy(ctx_);
      ctx_ = nullptr;
      throw std::runtime_error(message);
    }
  }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  ~Model() { close(); }

  /// Frees the model and its context (waiting for a run in progress).
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    memfmt_model_destroy(model_);
    model_ = nullptr;
    memfmt_context_destroy(ctx_);
    ctx_ = nullptr;
  }

  py::dict info() const {
    memfmt_model_info_t i;
    check(memfmt_model_get_info(live(), &i));
    py::dict d;
    d["name"] = i.name;
    d["target"] = i.target;
    d["precision"] = i.precision;
    d["memory_format"] = i.memory_format;
    d["input_format"] = i.input_format;
    d["weights_source"] = i.weights_source;
    d["directory"] = i.directory;
    d["arena_bytes"] = i.arena_bytes;
    d["peak_live_bytes"] = i.peak_live_bytes;
    d["weights_bytes"] = i.weights_bytes;
    d["num_nodes"] = i.num_nodes;
    d["device"] = memfmt_context_device_description(ctx_);
    return d;
  }

  py::list inputs() const { return tensors(memfmt_model_input_info, "inputs"); }
  py::list outputs() const {
    return tensors(memfmt_model_output_info, "outputs");
  }
  py::list parameters() const {
    return tensors(memfmt_model_parameter_info, "parameters");
  }

  void run(const std::vector<uintptr_t> &inputs,
           const std::vector<uintptr_t> &outputs) {
    Buffers b = buffers(inputs, outputs);
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    check(memfmt_model_run(live(), b.in.data(), b.out.data()));
  }

  /// Milliseconds of each of `runs` runs after the warm-ups.
  std::vector<double> timeRuns(const std::vector<uintptr_t> &inputs,
                               const std::vector<uintptr_t> &outputs,
                               int64_t runs) {
    if (runs < 1)
      throw py::value_error("iters must be >= 1, got " + std::to_string(runs));
    Buffers b = buffers(inputs, outputs);
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t i = 0; i < kWarmupRuns; ++i)
      check(memfmt_model_run(live(), b.in.data(), b.out.data()));
    std::vector<double> ms;
    for (int64_t i = 0; i < runs; ++i) {
      auto start = std::chrono::steady_clock::now();
      check(memfmt_model_run(live(), b.in.data(), b.out.data()));
      ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count());
    }
    return ms;
  }

  /// The per-node profile of `runs` runs: (node name, kernel, impl, calls,
  /// seconds) per node, in order of first call.
  py::list profile(const std::vector<uintptr_t> &inputs,
                   const std::vector<uintptr_t> &outputs, int64_t runs) {
    if (runs < 1)
      throw py::value_error("iters must be >= 1, got " + std::to_string(runs));
    Buffers b = buffers(inputs, outputs);
    std::vector<memfmt_profile_entry_t> entries;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      check(memfmt_context_profile_reset(ctx_));
      check(memfmt_context_set_profiling(ctx_, 1));
      memfmt_status_t status = MEMFMT_STATUS_OK;
      for (int64_t i = 0; i < runs && !status; ++i)
        status = memfmt_model_run(live(), b.in.data(), b.out.data());
      memfmt_context_set_profiling(ctx_, 0);
      check(status);
      int64_t count = 0;
      check(memfmt_context_profile_count(ctx_, &count));
      entries.resize(count);
      for (int64_t i = 0; i < count; ++i)
        check(memfmt_context_profile_entry(ctx_, i, &entries[i]));
    }
    py::list result;
    for (const memfmt_profile_entry_t &e : entries) {
      const char *name = "";
      memfmt_model_node_name(model_, e.node, &name);
      result.append(py::make_tuple(name, e.kernel, e.impl, e.calls,
                                   e.total_seconds));
    }
    return result;
  }

  void readParameter(const std::string &name, uintptr_t values,
                     int64_t elements) {
    std::lock_guard<std::mutex> lock(mutex_);
    check(memfmt_model_read_parameter(live(), name.c_str(),
                                      reinterpret_cast<float *>(values),
                                      elements));
  }

  void writeParameter(const std::string &name, uintptr_t values,
                      int64_t elements) {
    std::lock_guard<std::mutex> lock(mutex_);
    check(memfmt_model_write_parameter(
        live(), name.c_str(), reinterpret_cast<const float *>(values),
        elements));
  }

private:
  struct Buffers {
    std::vector<const void *> in;
    std::vector<void *> out;
  };

  memfmt_model_t *live() const {
    if (!model_)
      throw std::runtime_error("the model was closed");
    return model_;
  }

  void check(memfmt_status_t status) const {
    if (status != MEMFMT_STATUS_OK)
      throw std::runtime_error(ctx_ && memfmt_context_last_error(ctx_)
                                   ? memfmt_context_last_error(ctx_)
                                   : memfmt_status_string(status));
  }

  Buffers buffers(const std::vector<uintptr_t> &inputs,
                  const std::vector<uintptr_t> &outputs) const {
    memfmt_model_info_t i;
    check(memfmt_model_get_info(live(), &i));
    if (int64_t(inputs.size()) != i.num_inputs ||
        int64_t(outputs.size()) != i.num_outputs)
      throw py::value_error(
          "the model takes " + std::to_string(i.num_inputs) + " input(s) and " +
          std::to_string(i.num_outputs) + " output(s), got " +
          std::to_string(inputs.size()) + " and " +
          std::to_string(outputs.size()));
    Buffers b;
    for (uintptr_t p : inputs)
      b.in.push_back(reinterpret_cast<const void *>(p));
    for (uintptr_t p : outputs)
      b.out.push_back(reinterpret_cast<void *>(p));
    return b;
  }

  using InfoFn = memfmt_status_t (*)(const memfmt_model_t *, int64_t,
                                     memfmt_model_tensor_info_t *);
  py::list tensors(InfoFn fn, const char *what) const {
    memfmt_model_info_t i;
    check(memfmt_model_get_info(live(), &i));
    int64_t count = std::string(what) == "inputs"    ? i.num_inputs
                    : std::string(what) == "outputs" ? i.num_outputs
                                                     : i.num_parameters;
    py::list list;
    for (int64_t k = 0; k < count; ++k) {
      memfmt_model_tensor_info_t t;
      check(fn(model_, k, &t));
      list.append(tensorInfo(t));
    }
    return list;
  }

  memfmt_context_t *ctx_ = nullptr;
  memfmt_model_t *model_ = nullptr;
  std::mutex mutex_;
};

/// Writes {name: float32 or int64 array} as a safetensors file with the
/// runtime's encoder (the one memfmt-train --save uses): int64 tensors
/// first, so that every tensor stays aligned. Raises ValueError for another
/// dtype and OSError when the file cannot be written.
void writeSafeTensors(const std::string &path, const py::dict &tensors) {
  std::vector<py::array> arrays; // Keeps the contiguous copies alive.
  std::vector<memfmt::io::TensorView> views;
  for (bool wide : {true, false}) {
    for (auto [key, value] : tensors) {
      py::array array = py::array::ensure(value, py::array::c_style);
      if (!array)
        throw py::value_error("safetensors: not an array");
      bool isI64 = array.dtype().is(py::dtype::of<int64_t>());
      if (!isI64 && !array.dtype().is(py::dtype::of<float>()))
        throw py::value_error(
            "safetensors: " + py::str(key).cast<std::string>() + " is " +
            py::str(array.dtype()).cast<std::string>() +
            "; only float32 and int64 tensors are written");
      if (isI64 != wide)
        continue;
      memfmt::io::TensorView view;
      view.Name = py::str(key);
      view.Type = isI64 ? memfmt::io::DType::I64 : memfmt::io::DType::F32;
      view.Shape.assign(array.shape(), array.shape() + array.ndim());
      view.Data = static_cast<const uint8_t *>(array.data());
      view.NumBytes = static_cast<size_t>(array.nbytes());
      views.push_back(std::move(view));
      arrays.push_back(std::move(array));
    }
  }
  memfmt::io::Status status = memfmt::io::writeSafeTensors(path, views);
  if (!status)
    throw std::runtime_error(status.error());
}

/// {name: array} of a safetensors file: F32 and I64 tensors exactly, other
/// floating-point types widened to float32 (as the loader does).
py::dict readSafeTensors(const std::string &path) {
  auto file = memfmt::io::SafeTensorsFile::open(path);
  if (!file)
    throw std::runtime_error(file.error());
  py::dict result;
  for (const memfmt::io::TensorView &view : file->tensors()) {
    if (view.Type == memfmt::io::DType::I64) {
      py::array_t<int64_t> array(view.Shape);
      std::memcpy(array.mutable_data(), view.Data, view.NumBytes);
      result[py::str(view.Name)] = std::move(array);
      continue;
    }
    auto values = memfmt::io::convertToF32(view.Type, view.Data, view.NumBytes);
    if (!values)
      throw py::value_error(path + ": " + view.Name + ": " + values.error());
    py::array_t<float> array(view.Shape);
    std::memcpy(array.mutable_data(), values->data(),
                values->size() * sizeof(float));
    result[py::str(view.Name)] = std::move(array);
  }
  return result;
}

} // namespace

PYBIND11_MODULE(_memfmt, m) {
  m.doc() = "memfmt's runtime binding (see the memfmt package)";
  m.def("has_cuda", [] { return memfmt_runtime_has_cuda() != 0; });
  m.def("has_onednn", [] { return memfmt_runtime_has_onednn() != 0; });
  // The layout rules (memfmt/Layout/Strides.h), so that Python classifies
  // and compares strides as the compiler and the runtime do.
  m.def(
      "suggest_memory_format",
      [](const std::vector<int64_t> &sizes,
         const std::vector<int64_t> &strides) {
        return std::string(memfmt::layout::toString(
            memfmt::layout::suggestMemoryFormat(sizes, strides)));
      },
      py::arg("sizes"), py::arg("strides"));
  m.def(
      "same_bytes",
      [](const std::vector<int64_t> &sizes, const std::vector<int64_t> &lhs,
         const std::vector<int64_t> &rhs) {
        return memfmt::layout::sameBytes(sizes, lhs, rhs);
      },
      py::arg("sizes"), py::arg("lhs"), py::arg("rhs"));
  m.def("write_safetensors", &writeSafeTensors, py::arg("path"),
        py::arg("tensors"));
  m.def("read_safetensors", &readSafeTensors, py::arg("path"));
  py::class_<Model>(m, "Model")
      .def(py::init<const std::string &, std::optional<std::string>, int32_t,
                    const std::string &, std::optional<bool>>(),
           py::arg("dir"), py::arg("weights") = py::none(),
           py::arg("threads") = 0, py::arg("backend") = "cpu",
           py::arg("allow_bf16") = py::none())
      .def("close", &Model::close)
      .def("info", &Model::info)
      .def("inputs", &Model::inputs)
      .def("outputs", &Model::outputs)
      .def("parameters", &Model::parameters)
      .def("run", &Model::run)
      .def("time_runs", &Model::timeRuns)
      .def("profile", &Model::profile)
      .def("read_parameter", &Model::readParameter)
      .def("write_parameter", &Model::writeParameter);
}
