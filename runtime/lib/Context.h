//===- Context.h - The state behind memfmt_context_t ------------*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The definition of the opaque memfmt_context_t: resolved options, the
// backend that runs kernels, the last error message and the per-node
// profile. Only the runtime's own sources include this header.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_LIB_CONTEXT_H
#define MEMFMT_RUNTIME_LIB_CONTEXT_H

#include "Backend.h"

#include "memfmt/runtime/memfmt_runtime.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct memfmt_context {
  /// Options with the environment applied and the thread count resolved.
  memfmt_context_options_t options{};
  std::unique_ptr<memfmt::runtime::Backend> backend;
  /// memfmt_context_device_description's text.
  std::string description;
  std::string lastError;

  /// Memory declared constant (memfmt_context_declare_constant): start and
  /// size in bytes.
  std::vector<std::pair<const char *, int64_t>> constants;
  /// True if [begin, begin + bytes) lies inside one declared range.
  bool isConstant(const void *begin, int64_t bytes) const;

  /// memfmt_context_get_counters's counters.
  memfmt_context_counters_t counters{};

  /// The replicas this context is one of (memfmt_context_set_communicator);
  /// none: it is the only one.
  std::optional<memfmt_communicator_t> communicator;

  bool profiling = false;
  /// Profile entries in order of first call.
  std::vector<memfmt_profile_entry_t> profile;
  /// (node, kernel name) -> index into `profile`. Kernel names are string
  /// literals, so comparing their addresses is enough.
  std::map<std::pair<int64_t, const char *>, size_t> profileIndex;

  /// Adds one call of `seconds` to the entry of (node, kernel).
  void recordProfile(int64_t node, const char *kernel, const char *impl,
                     double seconds);
};

namespace memfmt::runtime {

/// The calling thread's error message for failures without a context.
std::string &threadLastError();

} // namespace memfmt::runtime

#endif // MEMFMT_RUNTIME_LIB_CONTEXT_H
