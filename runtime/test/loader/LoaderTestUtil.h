//===- LoaderTestUtil.h - Shared helpers of the loader's tests --*- C++ -*-===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Temporary directories, text files and the manifest of the fake model
// (FakeModel.c), which the manifest tests mutate one field at a time and the
// end-to-end tests install beside the fake model's library.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_TEST_LOADER_LOADERTESTUTIL_H
#define MEMFMT_RUNTIME_TEST_LOADER_LOADERTESTUTIL_H

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace memfmt::loader::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
public:
  TempDir() {
    const char *Base = std::getenv("TMPDIR");
    std::string Pattern =
        std::string(Base && *Base ? Base : "/tmp") + "/memfmt-loader-XXXXXX";
    if (char *Made = ::mkdtemp(Pattern.data()))
      Path = Made;
  }
  ~TempDir() {
    std::error_code Ignored;
    if (!Path.empty())
      std::filesystem::remove_all(Path, Ignored);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return Path; }
  std::string file(const std::string &Name) const { return Path + "/" + Name; }

private:
  std::string Path;
};

inline void writeText(const std::string &Path, const std::string &Text) {
  std::ofstream Out(Path, std::ios::binary);
  Out << Text;
  ASSERT_TRUE(Out.good()) << "cannot write " << Path;
}

/// \p Text with the one occurrence of \p From replaced by \p To.
inline std::string replaceOnce(std::string Text, const std::string &From,
                               const std::string &To) {
  size_t At = Text.find(From);
  EXPECT_NE(At, std::string::npos) << "'" << From << "' not in the text";
  if (At != std::string::npos) {
    EXPECT_EQ(Text.find(From, At + 1), std::string::npos)
        << "'" << From << "' occurs twice";
    Text.replace(At, From.size(), To);
  }
  return Text;
}

/// The manifest of FakeModel.c: out = relu(x) + shift with a channels-last
/// input and a parameter at byte 64 of the blob.
inline std::string fakeManifestJson() {
  return R"json({
  "format_version": 2,
  "model": "fake",
  "target": "cpu",
  "precision": "f32",
  "memory_format": "channels-last",
  "input_format": "channels-last",
  "library": "model.so",
  "entry": "memfmt_forward_packed",
  "arena_bytes": 480,
  "peak_live_bytes": 480,
  "weights_bytes": 128,
  "weights_source": "synthetic:0",
  "parameters": [
    {"name": "shift", "dtype": "f32", "shape": [1, 3, 1, 1],
     "strides": [3, 1, 1, 1], "offset": 64, "bytes": 12}
  ],
  "inputs": [
    {"name": "input_0", "dtype": "f32", "shape": [2, 3, 4, 5],
     "strides": [60, 1, 15, 3]}
  ],
  "outputs": [
    {"name": "output_0", "dtype": "f32", "shape": [2, 3, 4, 5],
     "strides": [60, 20, 5, 1]}
  ],
  "nodes": ["memfmt.relu at loc(\"fake.mlir\":1:1)",
            "memfmt.add at loc(\"fake.mlir\":2:1)"]
})json";
}

} // namespace memfmt::loader::test

#endif // MEMFMT_RUNTIME_TEST_LOADER_LOADERTESTUTIL_H
