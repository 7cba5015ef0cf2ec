//===- NpzTest.cpp - Reading NumPy .npz archives --------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// parseNpz/readNpz on archives numpy writes at test time (np.savez: stored
// entries; np.savez_compressed: deflated; positional arrays; an empty
// archive), checked value by value against what the script saved, and on
// those archives corrupted: truncated at every interesting point, a flipped
// data byte (CRC-32), a flipped deflate byte, a file that is no zip at all,
// an unsupported compression method. Skipped where python3 with numpy is
// missing (/usr/bin/python3, as in the lit suite).
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/io/Npz.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using namespace memfmt::io;
using ::testing::HasSubstr;

namespace {

/// A fresh directory with the archives of makeArchives, or empty when
/// python3/numpy is missing.
class Archives {
public:
  Archives() {
    const char *Base = std::getenv("TMPDIR");
    std::string Pattern =
        std::string(Base && *Base ? Base : "/tmp") + "/memfmt-npz-XXXXXX";
    if (char *Made = ::mkdtemp(Pattern.data()))
      Dir = Made;
    // x: f32 [5,3,2,2] = arange * 0.25 - 1; y: i64 [5] = [0, 3, 1, 4, 2];
    // big: f32 [4096] of a compressible pattern.
    std::string Script =
        "import numpy as np, sys\n"
        "d = sys.argv[1]\n"
        "x = (np.arange(60, dtype=np.float32) * 0.25 - 1).reshape(5, 3, 2, 2)\n"
        "y = np.array([0, 3, 1, 4, 2], dtype=np.int64)\n"
        "big = (np.arange(4096) % 7).astype(np.float32)\n"
        "np.savez(d + '/stored.npz', x=x, y=y)\n"
        "np.savez_compressed(d + '/deflated.npz', x=x, y=y, big=big)\n"
        "np.savez(d + '/positional.npz', x, y)\n"
        "np.savez(d + '/empty.npz')\n";
    std::string ScriptPath = Dir + "/make.py";
    FILE *F = std::fopen(ScriptPath.c_str(), "w");
    if (!F)
      return;
    std::fputs(Script.c_str(), F);
    std::fclose(F);
    // The interpreter of the lit suite (lit.site.cfg.py.in): Debian's, with
    // python3-numpy.
    Made = std::system(("/usr/bin/python3 " + ScriptPath + " " + Dir +
                        " > /dev/null 2>&1")
                           .c_str()) == 0;
  }
  ~Archives() {
    std::error_code Ignored;
    if (!Dir.empty())
      std::filesystem::remove_all(Dir, Ignored);
  }
  bool ok() const { return Made; }
  std::string file(const std::string &Name) const { return Dir + "/" + Name; }

  std::vector<uint8_t> bytes(const std::string &Name) const {
    Result<std::vector<uint8_t>> B = readFileBytes(file(Name));
    EXPECT_TRUE(B) << B.error();
    return B ? *B : std::vector<uint8_t>();
  }

private:
  std::string Dir;
  bool Made = false;
};

#define REQUIRE_ARCHIVES(A)                                                    \
  if (!(A).ok())                                                               \
  GTEST_SKIP() << "python3 with numpy is not available"

template <typename T> std::vector<T> values(const Tensor &X) {
  std::vector<T> V(X.Data.size() / sizeof(T));
  std::memcpy(V.data(), X.Data.data(), X.Data.size());
  return V;
}

void expectXY(const NpzArrays &A, const std::string &XName,
              const std::string &YName) {
  ASSERT_TRUE(A.count(XName));
  ASSERT_TRUE(A.count(YName));
  const Tensor &X = A.at(XName), &Y = A.at(YName);
  EXPECT_EQ(X.Type, DType::F32);
  EXPECT_EQ(X.Shape, (std::vector<int64_t>{5, 3, 2, 2}));
  std::vector<float> XV = values<float>(X);
  ASSERT_EQ(XV.size(), 60u);
  for (size_t I = 0; I < XV.size(); ++I)
    EXPECT_EQ(XV[I], static_cast<float>(I) * 0.25f - 1.0f) << I;
  EXPECT_EQ(Y.Type, DType::I64);
  EXPECT_EQ(Y.Shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(values<int64_t>(Y), (std::vector<int64_t>{0, 3, 1, 4, 2}));
}

// np.savez: stored entries (numpy writes zip64 local headers).
TEST(Npz, ReadsSavez) {
  Archives A;
  REQUIRE_ARCHIVES(A);
  Result<NpzArrays> R = readNpz(A.file("stored.npz"));
  ASSERT_TRUE(R) << R.error();
  EXPECT_EQ(R->size(), 2u);
  expectXY(*R, "x", "y");
}

// np.savez_compressed: deflated entries.
TEST(Npz, ReadsSavezCompressed) {
  Archives A;
  REQUIRE_ARCHIVES(A);
  Result<NpzArrays> R = readNpz(A.file("deflated.npz"));
  ASSERT_TRUE(R) << R.error();
  EXPECT_EQ(R->size(), 3u);
  expectXY(*R, "x", "y");
  std::vector<float> Big = values<float>(R->at("big"));
  ASSERT_EQ(Big.size(), 4096u);
  for (size_t I = 0; I < Big.size(); ++I)
    ASSERT_EQ(Big[I], static_cast<float>(I % 7)) << I;
}

// Positional arrays are arr_0, arr_1, ...; an archive may be empty.
TEST(Npz, PositionalAndEmpty) {
  Archives A;
  REQUIRE_ARCHIVES(A);
  Result<NpzArrays> R = readNpz(A.file("positional.npz"));
  ASSERT_TRUE(R) << R.error();
  expectXY(*R, "arr_0", "arr_1");
  Result<NpzArrays> E = readNpz(A.file("empty.npz"));
  ASSERT_TRUE(E) << E.error();
  EXPECT_TRUE(E->empty());
}

// Every truncation of either archive fails with a message naming the file
// (never a crash, never a partial result).
TEST(Npz, EveryTruncationFails) {
  Archives A;
  REQUIRE_ARCHIVES(A);
  for (const char *Name : {"stored.npz", "deflated.npz"}) {
    std::vector<uint8_t> B = A.bytes(Name);
    for (size_t Size = 0; Size < B.size(); ++Size) {
      Result<NpzArrays> R = parseNpz(B.data(), Size, Name);
      ASSERT_FALSE(R) << Name << " truncated to " << Size << " bytes";
      ASSERT_THAT(R.error(), HasSubstr(Name));
    }
  }
  std::vector<uint8_t> B = A.bytes("stored.npz");
  Result<NpzArrays> R = parseNpz(B.data(), B.size() - 1, "f.npz");
  ASSERT_FALSE(R);
  EXPECT_THAT(R.error(), HasSubstr("f.npz: not an .npz file: no zip end of "
                                   "central directory record"));
}

// Flipped bytes: a stored data byte fails the CRC-32; a deflated byte fails
// inflate or the CRC-32.
TEST(Npz, CorruptDataFails) {
  Archives A;
  REQUIRE_ARCHIVES(A);
  std::vector<uint8_t> B = A.bytes("stored.npz");
  // The last element of x: -1 + 59 * 0.25 = 13.75f, stored little-endian.
  float Last = 13.75f;
  uint8_t Pattern[4];
  std::memcpy(Pattern, &Last, 4);
  auto At = std::search(B.begin(), B.end(), Pattern, Pattern + 4);
  ASSERT_NE(At, B.end());
  *At ^= 0x40;
  Result<NpzArrays> R = parseNpz(B.data(), B.size(), "s.npz");
  ASSERT_FALSE(R);
  EXPECT_THAT(R.error(), HasSubstr("s.npz: entry 'x.npy': CRC-32 mismatch"));

  std::vector<uint8_t> D = A.bytes("deflated.npz");
  // The first entry's data starts after its local header.
  size_t Data = 30 + (D[26] | D[27] << 8) + (D[28] | D[29] << 8);
  D[Data + 5] ^= 0xFF;
  Result<NpzArrays> RD = parseNpz(D.data(), D.size(), "d.npz");
  ASSERT_FALSE(RD);
  EXPECT_THAT(RD.error(), HasSubstr("d.npz: entry 'x.npy'"));
}

// Not a zip archive; an unsupported compression method.
TEST(Npz, NotAnArchiveAndUnsupportedMethod) {
  Archives A;
  REQUIRE_ARCHIVES(A);
  std::vector<uint8_t> Text(100, 'a');
  Result<NpzArrays> R = parseNpz(Text.data(), Text.size(), "t.npz");
  ASSERT_FALSE(R);
  EXPECT_THAT(R.error(), HasSubstr("t.npz: not an .npz file"));
  Result<NpzArrays> Missing = readNpz(A.file("missing.npz"));
  ASSERT_FALSE(Missing);
  EXPECT_THAT(Missing.error(), HasSubstr("missing.npz: cannot open"));

  // Method 12 (bzip2) in the first central directory entry.
  std::vector<uint8_t> B = A.bytes("stored.npz");
  uint8_t Sig[] = {0x50, 0x4b, 0x01, 0x02};
  auto At = std::search(B.begin(), B.end(), Sig, Sig + 4);
  ASSERT_NE(At, B.end());
  At[10] = 12;
  Result<NpzArrays> RM = parseNpz(B.data(), B.size(), "m.npz");
  ASSERT_FALSE(RM);
  EXPECT_THAT(RM.error(), HasSubstr("m.npz: entry 'x.npy': compression "
                                    "method 12 is not supported"));
}

} // namespace
