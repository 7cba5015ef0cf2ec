//===- Report.cpp - memfmt-run's summary, as text or JSON -----------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The output summaries and the two printers of a Report (see Report.h). The
// JSON form is built as an nlohmann::ordered_json, so keys keep the order
// they are set in; numbers that are not integers are rounded to 9
// significant digits (what the text form and the benchmarks need) and are
// null when not finite.
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include "memfmt/runtime/io/Tensor.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace memfmt::run {

using Json = nlohmann::ordered_json;

OutputSummary summarize(const memfmt_model_tensor_info_t &Info,
                        const std::vector<float> &V) {
  OutputSummary S;
  bool First = true;
  double Sum = 0;
  int64_t Finite = 0;
  for (float X : V) {
    if (!std::isfinite(X)) {
      ++S.NonFinite;
      continue;
    }
    S.Min = First ? X : std::min<double>(S.Min, X);
    S.Max = First ? X : std::max<double>(S.Max, X);
    First = false;
    Sum += X;
    ++Finite;
  }
  S.Mean = Finite ? Sum / static_cast<double>(Finite) : 0.0;
  if (Info.rank == 2 && Info.shape[0] > 0 && Info.shape[1] > 0) {
    int64_t Classes = Info.shape[1];
    std::vector<int64_t> Order(static_cast<size_t>(Classes));
    std::iota(Order.begin(), Order.end(), 0);
    size_t K = std::min<size_t>(5, Order.size());
    // Largest first; NaN last; ties by class index.
    auto Key = [&](int64_t C) {
      float X = V[C];
      return std::isnan(X) ? -INFINITY : X;
    };
    std::partial_sort(Order.begin(), Order.begin() + K, Order.end(),
                      [&](int64_t A, int64_t B) {
                        float KA = Key(A), KB = Key(B);
                        return KA != KB ? KA > KB : A < B;
                      });
    for (size_t I = 0; I < K; ++I)
      S.Top5.push_back({Order[I], V[Order[I]]});
  }
  return S;
}

namespace {

std::string format(const char *Fmt, double V) {
  char Buffer[64];
  std::snprintf(Buffer, sizeof(Buffer), Fmt, V);
  return Buffer;
}

/// "480 B", "12.5 KiB", "97.7 MiB", "1.2 GiB".
std::string humanBytes(int64_t Bytes) {
  double B = static_cast<double>(Bytes);
  if (Bytes < 1024)
    return std::to_string(Bytes) + " B";
  if (B < 1024.0 * 1024.0)
    return format("%.1f KiB", B / 1024.0);
  if (B < 1024.0 * 1024.0 * 1024.0)
    return format("%.1f MiB", B / (1024.0 * 1024.0));
  return format("%.2f GiB", B / (1024.0 * 1024.0 * 1024.0));
}

std::string dims(const std::vector<int64_t> &D) { return io::formatShape(D); }

const char *kernelsName(memfmt_kernels_t K) {
  return K == MEMFMT_KERNELS_REFERENCE ? "reference" : "fast";
}

/// \p D as a JSON number with 9 significant digits; null when not finite.
Json number(double D) {
  if (!std::isfinite(D))
    return nullptr;
  char Buffer[32];
  std::snprintf(Buffer, sizeof(Buffer), "%.9g", D);
  return std::strtod(Buffer, nullptr);
}

/// \p J on one line of stdout. Strings that are not UTF-8 (a path, say)
/// get U+FFFD in place of the bad bytes rather than an exception.
void print(const Json &J) {
  std::printf("%s\n", J.dump(-1, ' ', /*ensure_ascii=*/false,
                             Json::error_handler_t::replace)
                          .c_str());
}

} // namespace

void printText(const Report &R) {
  const memfmt_model_info_t &I = R.Info;
  std::printf("model      %s (target %s, %s, %s; inputs %s)\n", I.name,
              I.target, I.precision, I.memory_format, I.input_format);
  std::printf("library    %s (%lld nodes)\n", I.library_path,
              static_cast<long long>(I.num_nodes));
  std::printf("memory     arena %s (peak live %s), weights %s from %s\n",
              humanBytes(I.arena_bytes).c_str(),
              humanBytes(I.peak_live_bytes).c_str(),
              humanBytes(I.weights_bytes).c_str(), I.weights_source);
  std::printf(
      "context    %s kernels%s, %d threads%s\n", kernelsName(R.Context.kernels),
      memfmt_runtime_has_onednn() ? " (oneDNN)" : "", R.Context.num_threads,
      R.Context.kernels == MEMFMT_KERNELS_FAST &&
              R.Context.winograd == MEMFMT_SWITCH_OFF
          ? ", no Winograd"
          : "");
  if (!R.OnDevice)
    std::printf("device     %s\n", R.Device.c_str());
  else
    std::printf("device     %s; CUDA graph %s, TF32 %s\n", R.Device.c_str(),
                R.CudaGraph ? "on" : "off", R.Tf32 ? "on" : "off");
  for (size_t K = 0; K < R.T.Inputs.size(); ++K) {
    const memfmt_model_tensor_info_t &In = R.T.Inputs[K];
    std::printf("input      %s %s %s strides %s <- %s\n", In.name,
                dims(shapeOf(In)).c_str(), In.dtype,
                dims(stridesOf(In)).c_str(), R.InputSources[K].c_str());
  }
  if (R.Rows) {
    int64_t Padding = R.Rows->second - R.Rows->first;
    std::printf("rows       %lld of a batch of %lld: padded with %lld zero "
                "row%s (the run costs a whole batch); outputs are the first "
                "%lld rows\n",
                static_cast<long long>(R.Rows->first),
                static_cast<long long>(R.Rows->second),
                static_cast<long long>(Padding), Padding == 1 ? "" : "s",
                static_cast<long long>(R.Rows->first));
  }
  for (size_t K = 0; K < R.T.Outputs.size(); ++K) {
    const memfmt_model_tensor_info_t &Out = R.T.Outputs[K];
    const OutputSummary &S = R.Outputs[K];
    std::printf("output     %s %s %s: min %.6g max %.6g mean %.6g", Out.name,
                dims(shapeOf(Out)).c_str(), Out.dtype, S.Min, S.Max, S.Mean);
    if (S.NonFinite)
      std::printf(", %lld not finite", static_cast<long long>(S.NonFinite));
    if (!S.File.empty())
      std::printf(" -> %s", S.File.c_str());
    std::printf("\n");
    if (!S.Top5.empty()) {
      std::printf("top-%zu of %s for image 0:\n", S.Top5.size(), Out.name);
      for (size_t J = 0; J < S.Top5.size(); ++J)
        std::printf("  %zu. class %5lld  %.6g\n", J + 1,
                    static_cast<long long>(S.Top5[J].first), S.Top5[J].second);
    }
  }
  if (R.Check) {
    for (const CheckResult &C : R.Check->Outputs)
      std::printf("check      %s vs reference kernels: max abs error %.3g, "
                  "max rel error %.3g (rel = %s)\n",
                  C.Name.c_str(), C.MaxAbs, C.MaxRel, RelDefinition);
    std::printf("check      %s (tolerance %.0e on max rel error)\n",
                R.Check->Passed ? "PASS" : "FAIL", R.Check->Tolerance);
  }
  if (R.Bench) {
    const BenchResult &B = *R.Bench;
    std::printf("bench      %lld runs after %lld warm-ups: median %.3f ms, p10 "
                "%.3f ms, p90 %.3f ms per batch of %lld; %.1f images/s\n",
                static_cast<long long>(B.Runs),
                static_cast<long long>(BenchWarmupRuns), B.MedianMs, B.P10Ms,
                B.P90Ms, static_cast<long long>(B.Batch), B.ImagesPerSecond);
  }
  if (R.Profile) {
    const ProfileResult &P = *R.Profile;
    std::printf("profile    %lld runs: kernels %.3f ms per run, whole model "
                "%.3f ms per run\n",
                static_cast<long long>(P.Runs), P.KernelMsPerRun,
                P.WallMsPerRun);
    std::printf("  %5s %5s %10s %6s %6s  %-32s %-14s %s\n", "rank", "node",
                "ms/run", "%", "calls", "kernel", "impl", "node name");
    for (size_t J = 0; J < P.Rows.size(); ++J) {
      const memfmt_profile_entry_t &E = P.Rows[J].Entry;
      double MsPerRun = E.total_seconds * 1000.0 / static_cast<double>(P.Runs);
      double Percent =
          P.KernelMsPerRun > 0 ? 100.0 * MsPerRun / P.KernelMsPerRun : 0.0;
      std::printf("  %5zu %5lld %10.3f %5.1f%% %6.3g  %-32s %-14s %s\n", J + 1,
                  static_cast<long long>(E.node), MsPerRun, Percent,
                  static_cast<double>(E.calls) / static_cast<double>(P.Runs),
                  E.kernel, E.impl, P.Rows[J].Name.c_str());
    }
  }
}

void printJson(const Report &R) {
  const memfmt_model_info_t &I = R.Info;
  Json J = Json::object();
  J["model"] = I.name;
  J["directory"] = R.Dir;
  J["library"] = I.library_path;
  J["target"] = I.target;
  J["precision"] = I.precision;
  J["memory_format"] = I.memory_format;
  J["input_format"] = I.input_format;
  J["weights_source"] = I.weights_source;
  J["num_nodes"] = I.num_nodes;
  J["arena_bytes"] = I.arena_bytes;
  J["peak_live_bytes"] = I.peak_live_bytes;
  J["weights_bytes"] = I.weights_bytes;
  J["kernels"] = kernelsName(R.Context.kernels);
  J["onednn"] = memfmt_runtime_has_onednn() != 0;
  J["threads"] = static_cast<int64_t>(R.Context.num_threads);
  J["winograd"] = R.Context.winograd == MEMFMT_SWITCH_ON;
  J["device"] = R.Device;
  if (R.OnDevice) {
    J["cuda_graph"] = R.CudaGraph;
    J["tf32"] = R.Tf32;
  } else {
    J["allow_bf16"] = R.AllowBf16;
  }
  Json &Inputs = J["inputs"] = Json::array();
  for (size_t K = 0; K < R.T.Inputs.size(); ++K) {
    const memfmt_model_tensor_info_t &In = R.T.Inputs[K];
    Inputs.push_back({{"name", In.name},
                      {"dtype", In.dtype},
                      {"shape", shapeOf(In)},
                      {"strides", stridesOf(In)},
                      {"source", R.InputSources[K]}});
  }
  if (R.Rows)
    J["rows"] = {{"given", R.Rows->first}, {"batch", R.Rows->second}};
  Json &Outputs = J["outputs"] = Json::array();
  for (size_t K = 0; K < R.T.Outputs.size(); ++K) {
    const memfmt_model_tensor_info_t &Out = R.T.Outputs[K];
    const OutputSummary &S = R.Outputs[K];
    Json O = {{"name", Out.name},         {"dtype", Out.dtype},
              {"shape", shapeOf(Out)},    {"min", number(S.Min)},
              {"max", number(S.Max)},     {"mean", number(S.Mean)},
              {"non_finite", S.NonFinite}};
    if (!S.Top5.empty()) {
      Json &Top5 = O["top5"] = Json::array();
      for (const auto &[Class, Value] : S.Top5)
        Top5.push_back({{"class", Class}, {"value", number(Value)}});
    }
    if (!S.File.empty())
      O["file"] = S.File;
    Outputs.push_back(std::move(O));
  }
  if (R.Check) {
    const CheckReport &C = *R.Check;
    Json Check = {{"kernels", "reference"},
                  {"rel_definition", RelDefinition},
                  {"tolerance", number(C.Tolerance)},
                  {"outputs", Json::array()}};
    double MaxAbs = 0, MaxRel = 0;
    for (const CheckResult &O : C.Outputs) {
      MaxAbs = std::max(MaxAbs, O.MaxAbs);
      MaxRel = std::max(MaxRel, O.MaxRel);
      Check["outputs"].push_back({{"name", O.Name},
                                  {"max_abs_error", number(O.MaxAbs)},
                                  {"max_rel_error", number(O.MaxRel)}});
    }
    Check["max_abs_error"] = number(MaxAbs);
    Check["max_rel_error"] = number(MaxRel);
    Check["pass"] = C.Passed;
    J["check"] = std::move(Check);
  }
  if (R.Bench) {
    const BenchResult &B = *R.Bench;
    J["bench"] = {{"warmup_runs", BenchWarmupRuns},
                  {"runs", B.Runs},
                  {"batch", B.Batch},
                  {"median_ms", number(B.MedianMs)},
                  {"p10_ms", number(B.P10Ms)},
                  {"p90_ms", number(B.P90Ms)},
                  {"mean_ms", number(B.MeanMs)},
                  {"min_ms", number(B.MinMs)},
                  {"images_per_second", number(B.ImagesPerSecond)}};
  }
  if (R.Profile) {
    const ProfileResult &P = *R.Profile;
    Json Entries = Json::array();
    for (const ProfileRow &Row : P.Rows) {
      const memfmt_profile_entry_t &E = Row.Entry;
      Entries.push_back({{"node", E.node},
                         {"name", Row.Name},
                         {"kernel", E.kernel},
                         {"impl", E.impl},
                         {"calls", E.calls},
                         {"total_ms", number(E.total_seconds * 1000.0)},
                         {"ms_per_run", number(E.total_seconds * 1000.0 /
                                               static_cast<double>(P.Runs))}});
    }
    J["profile"] = {{"runs", P.Runs},
                    {"kernel_ms_per_run", number(P.KernelMsPerRun)},
                    {"wall_ms_per_run", number(P.WallMsPerRun)},
                    {"entries", std::move(Entries)}};
  }
  print(J);
}

void printJsonError(const std::string &Message, int ExitCode) {
  print(Json{{"error", Message}, {"exit_code", ExitCode}});
}

} // namespace memfmt::run
