//===- NpyTest.cpp - Tests of the .npy reader and writer ------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Reads files written by real NumPy (embedded below as byte literals, so the
// tests need no Python), checks that the writer reproduces np.save byte for
// byte, round-trips every element type through files, and exercises every
// error path of the reader and the writer. One test also talks to a live
// NumPy (/usr/bin/python3) when there is one, and is skipped otherwise.
// Also tests the shape helpers of Tensor.h.
//
//===----------------------------------------------------------------------===//

#include "memfmt/runtime/io/Npy.h"
#include "memfmt/runtime/io/HalfFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

using namespace memfmt::io;

namespace {

//===----------------------------------------------------------------------===//
// Fixtures written by NumPy 1.24.2 with np.save (or write_array for 2.0/3.0):
//   import io, numpy as np; f = io.BytesIO(); np.save(f, A); f.getvalue()
//===----------------------------------------------------------------------===//

// np.arange(6, dtype='<f4').reshape(2, 3) * 0.5 - 1
const char NpyF32_2x3[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': "
    "(2, 3), }                                                          \n"
    "\x00\x00\x80\xbf\x00\x00\x00\xbf\x00\x00\x00\x00\x00\x00\x00\x3f"
    "\x00\x00\x80\x3f\x00\x00\xc0\x3f";

// np.array([1.0, -2.5, 65504, 6e-8], dtype='<f2')
const char NpyF16_4[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<f2', 'fortran_order': False, 'shape': "
    "(4,), }                                                            \n"
    "\x00\x3c\x00\xc1\xff\x7b\x01\x00";

// np.array([3.141592653589793, -1e300], dtype='<f8')
const char NpyF64_2[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': "
    "(2,), }                                                            \n"
    "\x18\x2d\x44\x54\xfb\x21\x09\x40\x9c\x75\x00\x88\x3c\xe4\x37\xfe";

// np.array([-1, 2**40, 7], dtype='<i8')
const char NpyI64_3[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<i8', 'fortran_order': False, 'shape': "
    "(3,), }                                                            \n"
    "\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00\x01\x00\x00"
    "\x07\x00\x00\x00\x00\x00\x00\x00";

// np.array([[1, -2], [3, 2**31 - 1]], dtype='<i4')
const char NpyI32_2x2[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<i4', 'fortran_order': False, 'shape': "
    "(2, 2), }                                                          \n"
    "\x01\x00\x00\x00\xfe\xff\xff\xff\x03\x00\x00\x00\xff\xff\xff\x7f";

// np.array([0, 1, 127, 128, 255], dtype='|u1')
const char NpyU8_5[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '|u1', 'fortran_order': False, 'shape': "
    "(5,), }                                                            \n"
    "\x00\x01\x7f\x80\xff";

// np.array([True, False, True])
const char NpyBool_3[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '|b1', 'fortran_order': False, 'shape': "
    "(3,), }                                                            \n"
    "\x01\x00\x01";

// np.array(2.5, dtype='<f4')
const char NpyScalarF32[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': "
    "(), }                                                              \n"
    "\x00\x00\x20\x40";

// np.zeros((0, 3), dtype='<f4')
const char NpyEmpty0x3[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': "
    "(0, 3), }                                                          \n";

// np.lib.format.write_array(f, np.array([1, 2], dtype='<f4'), version=(2, 0))
const char NpyV2F32[] =
    "\x93NUMPY\x02\x00t\x00\x00\x00{'descr': '<f4', 'fortran_order': False, '"
    "shape': (2,), }                                                         "
    " \n"
    "\x00\x00\x80\x3f\x00\x00\x00\x40";

// np.lib.format.write_array(f, np.array([1, 2], dtype='<f4'), version=(3, 0))
const char NpyV3F32[] =
    "\x93NUMPY\x03\x00t\x00\x00\x00{'descr': '<f4', 'fortran_order': False, '"
    "shape': (2,), }                                                         "
    " \n"
    "\x00\x00\x80\x3f\x00\x00\x00\x40";

// np.asfortranarray(np.arange(6, dtype='<f4').reshape(2, 3))
const char NpyFortran[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': True, 'shape': ("
    "2, 3), }                                                           \n"
    "\x00\x00\x00\x00\x00\x00\x40\x40\x00\x00\x80\x3f\x00\x00\x80\x40"
    "\x00\x00\x00\x40\x00\x00\xa0\x40";

// np.array([1, 2], dtype='>f4')
const char NpyBigEndian[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '>f4', 'fortran_order': False, 'shape': "
    "(2,), }                                                            \n"
    "\x3f\x80\x00\x00\x40\x00\x00\x00";

// np.arange(12, dtype='<i8').reshape(2, 3, 1, 2)
const char NpyI64_4D[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<i8', 'fortran_order': False, 'shape': "
    "(2, 3, 1, 2), }                                                    \n"
    "\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
    "\x02\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00"
    "\x04\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00"
    "\x06\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00"
    "\x08\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x00\x00\x00\x00\x00"
    "\x0a\x00\x00\x00\x00\x00\x00\x00\x0b\x00\x00\x00\x00\x00\x00\x00";

#define FIXTURE(Name) std::string(Name, sizeof(Name) - 1)

std::vector<uint8_t> bytesOf(const std::string &S) {
  return std::vector<uint8_t>(S.begin(), S.end());
}

Result<Tensor> parse(const std::string &Bytes,
                     const std::string &Name = "t.npy") {
  return parseNpy(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(),
                  Name);
}

template <typename T> std::vector<T> elements(const Tensor &Tn) {
  std::vector<T> Out(Tn.Data.size() / sizeof(T));
  if (!Out.empty())
    std::memcpy(Out.data(), Tn.Data.data(), Tn.Data.size());
  return Out;
}

template <typename T>
Tensor makeTensor(DType Type, std::vector<int64_t> Shape,
                  const std::vector<T> &Values) {
  Tensor Tn;
  Tn.Type = Type;
  Tn.Shape = std::move(Shape);
  Tn.Data.resize(Values.size() * sizeof(T));
  if (!Values.empty())
    std::memcpy(Tn.Data.data(), Values.data(), Tn.Data.size());
  return Tn;
}

/// Expects \p R to have failed with a message containing each of \p Parts.
template <typename R>
void expectError(const R &Res, std::initializer_list<const char *> Parts) {
  ASSERT_FALSE(Res.ok()) << "expected an error";
  for (const char *Part : Parts)
    EXPECT_NE(Res.error().find(Part), std::string::npos)
        << "message: " << Res.error() << "\nmissing: " << Part;
}

std::string tempPath(const std::string &Leaf) {
  return ::testing::TempDir() + "memfmt_npy_" + Leaf;
}

/// Replaces the first occurrence of \p From in \p S by \p To (same length,
/// so the header length stays right).
std::string patch(std::string S, const std::string &From,
                  const std::string &To) {
  size_t Pos = S.find(From);
  EXPECT_NE(Pos, std::string::npos) << From;
  EXPECT_EQ(From.size(), To.size());
  if (Pos != std::string::npos)
    S.replace(Pos, From.size(), To);
  return S;
}

/// A version 1.0 file with header dict \p Dict (padded, newline added) and
/// \p Data.
std::string makeNpy(const std::string &Dict, const std::string &Data = "") {
  std::string Header = Dict;
  while ((10 + Header.size() + 1) % 64)
    Header += ' ';
  Header += '\n';
  std::string Out = "\x93NUMPY\x01";
  Out += '\0';
  Out += static_cast<char>(Header.size() & 0xFF);
  Out += static_cast<char>(Header.size() >> 8);
  return Out + Header + Data;
}

//===----------------------------------------------------------------------===//
// Reading files written by NumPy
//===----------------------------------------------------------------------===//

TEST(NpyReadTest, F32Matrix) {
  Result<Tensor> T = parse(FIXTURE(NpyF32_2x3));
  ASSERT_TRUE(T.ok()) << T.error();
  EXPECT_EQ(T->Type, DType::F32);
  EXPECT_EQ(T->Shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(elements<float>(*T),
            (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
}

TEST(NpyReadTest, F16Vector) {
  Result<Tensor> T = parse(FIXTURE(NpyF16_4));
  ASSERT_TRUE(T.ok()) << T.error();
  EXPECT_EQ(T->Type, DType::F16);
  EXPECT_EQ(T->Shape, (std::vector<int64_t>{4}));
  std::vector<uint16_t> Bits = elements<uint16_t>(*T);
  ASSERT_EQ(Bits.size(), 4u);
  EXPECT_EQ(halfToFloat(Bits[0]), 1.0f);
  EXPECT_EQ(halfToFloat(Bits[1]), -2.5f);
  EXPECT_EQ(halfToFloat(Bits[2]), 65504.0f);
  EXPECT_EQ(halfToFloat(Bits[3]), std::ldexp(1.0f, -24)); // 6e-8 rounded.
  Result<std::vector<float>> F =
      convertToF32(T->Type, T->Data.data(), T->Data.size());
  ASSERT_TRUE(F.ok()) << F.error();
  EXPECT_EQ(*F,
            (std::vector<float>{1.0f, -2.5f, 65504.0f, std::ldexp(1.0f, -24)}));
}

TEST(NpyReadTest, OtherElementTypes) {
  Result<Tensor> F64 = parse(FIXTURE(NpyF64_2));
  ASSERT_TRUE(F64.ok()) << F64.error();
  EXPECT_EQ(F64->Type, DType::F64);
  EXPECT_EQ(elements<double>(*F64),
            (std::vector<double>{3.141592653589793, -1e300}));

  Result<Tensor> I64 = parse(FIXTURE(NpyI64_3));
  ASSERT_TRUE(I64.ok()) << I64.error();
  EXPECT_EQ(I64->Type, DType::I64);
  EXPECT_EQ(elements<int64_t>(*I64),
            (std::vector<int64_t>{-1, int64_t{1} << 40, 7}));

  Result<Tensor> I32 = parse(FIXTURE(NpyI32_2x2));
  ASSERT_TRUE(I32.ok()) << I32.error();
  EXPECT_EQ(I32->Type, DType::I32);
  EXPECT_EQ(I32->Shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(elements<int32_t>(*I32),
            (std::vector<int32_t>{1, -2, 3, 2147483647}));

  Result<Tensor> U8 = parse(FIXTURE(NpyU8_5));
  ASSERT_TRUE(U8.ok()) << U8.error();
  EXPECT_EQ(U8->Type, DType::U8);
  EXPECT_EQ(U8->Data, (std::vector<uint8_t>{0, 1, 127, 128, 255}));

  Result<Tensor> B = parse(FIXTURE(NpyBool_3));
  ASSERT_TRUE(B.ok()) << B.error();
  EXPECT_EQ(B->Type, DType::Bool);
  EXPECT_EQ(B->Data, (std::vector<uint8_t>{1, 0, 1}));

  Result<Tensor> I4 = parse(FIXTURE(NpyI64_4D));
  ASSERT_TRUE(I4.ok()) << I4.error();
  EXPECT_EQ(I4->Shape, (std::vector<int64_t>{2, 3, 1, 2}));
  EXPECT_EQ(elements<int64_t>(*I4).back(), 11);
}

TEST(NpyReadTest, ScalarAndEmpty) {
  Result<Tensor> S = parse(FIXTURE(NpyScalarF32));
  ASSERT_TRUE(S.ok()) << S.error();
  EXPECT_TRUE(S->Shape.empty());
  EXPECT_EQ(elements<float>(*S), (std::vector<float>{2.5f}));

  Result<Tensor> E = parse(FIXTURE(NpyEmpty0x3));
  ASSERT_TRUE(E.ok()) << E.error();
  EXPECT_EQ(E->Shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(E->Data.empty());
}

TEST(NpyReadTest, Versions2And3) {
  for (const std::string &Bytes : {FIXTURE(NpyV2F32), FIXTURE(NpyV3F32)}) {
    Result<Tensor> T = parse(Bytes);
    ASSERT_TRUE(T.ok()) << T.error();
    EXPECT_EQ(T->Shape, (std::vector<int64_t>{2}));
    EXPECT_EQ(elements<float>(*T), (std::vector<float>{1.0f, 2.0f}));
  }
}

TEST(NpyReadTest, HandWrittenHeaderVariants) {
  // Key order, quotes, spacing and trailing commas numpy would also accept.
  Result<Tensor> T =
      parse(makeNpy("{\"shape\":(2,3,),'fortran_order':False,  'descr':'<i4'}",
                    std::string(24, '\0')));
  ASSERT_TRUE(T.ok()) << T.error();
  EXPECT_EQ(T->Type, DType::I32);
  EXPECT_EQ(T->Shape, (std::vector<int64_t>{2, 3}));
  // An old-style header: not padded to 64 bytes.
  std::string Header = "{'descr': '|u1', 'fortran_order': False, "
                       "'shape': (1,), }\n";
  std::string Old = std::string("\x93NUMPY\x01", 7) + '\0' +
                    static_cast<char>(Header.size()) + '\0' + Header + "A";
  Result<Tensor> U = parse(Old);
  ASSERT_TRUE(U.ok()) << U.error();
  EXPECT_EQ(U->Data, (std::vector<uint8_t>{'A'}));
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

TEST(NpyWriteTest, MatchesNumpyByteForByte) {
  // Every version 1.0 fixture decodes and re-encodes to exactly the bytes
  // NumPy wrote.
  for (const std::string &Bytes :
       {FIXTURE(NpyF32_2x3), FIXTURE(NpyF16_4), FIXTURE(NpyF64_2),
        FIXTURE(NpyI64_3), FIXTURE(NpyI32_2x2), FIXTURE(NpyU8_5),
        FIXTURE(NpyBool_3), FIXTURE(NpyScalarF32), FIXTURE(NpyEmpty0x3),
        FIXTURE(NpyI64_4D)}) {
    Result<Tensor> T = parse(Bytes);
    ASSERT_TRUE(T.ok()) << T.error();
    Result<std::vector<uint8_t>> Out =
        encodeNpy(T->Type, T->Shape, T->Data.data(), T->Data.size());
    ASSERT_TRUE(Out.ok()) << Out.error();
    EXPECT_EQ(*Out, bytesOf(Bytes));
  }
  // And from values, for the two types the compiler writes.
  Tensor F32 = makeTensor<float>(DType::F32, {2, 3},
                                 {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f});
  Result<std::vector<uint8_t>> Out =
      encodeNpy(F32.Type, F32.Shape, F32.Data.data(), F32.Data.size());
  ASSERT_TRUE(Out.ok()) << Out.error();
  EXPECT_EQ(*Out, bytesOf(FIXTURE(NpyF32_2x3)));
  std::vector<int64_t> Iota(12);
  for (int I = 0; I < 12; ++I)
    Iota[I] = I;
  Tensor I64 = makeTensor<int64_t>(DType::I64, {2, 3, 1, 2}, Iota);
  Out = encodeNpy(I64.Type, I64.Shape, I64.Data.data(), I64.Data.size());
  ASSERT_TRUE(Out.ok()) << Out.error();
  EXPECT_EQ(*Out, bytesOf(FIXTURE(NpyI64_4D)));
}

TEST(NpyWriteTest, DataIsAlignedTo64Bytes) {
  for (std::vector<int64_t> Shape : {std::vector<int64_t>{},
                                     {1},
                                     {123456789012345, 0},
                                     {1, 2, 3, 4, 5, 6},
                                     std::vector<int64_t>(20, 1)}) {
    std::optional<int64_t> Size = byteSize(DType::U8, Shape);
    ASSERT_TRUE(Size);
    std::vector<uint8_t> Data(static_cast<size_t>(*Size), 7);
    Result<std::vector<uint8_t>> Out =
        encodeNpy(DType::U8, Shape, Data.data(), Data.size());
    ASSERT_TRUE(Out.ok()) << Out.error();
    EXPECT_EQ((Out->size() - Data.size()) % 64, 0u) << formatShape(Shape);
    Result<Tensor> Back = parseNpy(Out->data(), Out->size(), "x.npy");
    ASSERT_TRUE(Back.ok()) << Back.error();
    EXPECT_EQ(Back->Shape, Shape);
  }
}

TEST(NpyWriteTest, HugeHeaderUsesVersion2) {
  // 30000 dimensions of 1 do not fit a 16-bit header length.
  std::vector<int64_t> Shape(30000, 1);
  float Value = 4.0f;
  Result<std::vector<uint8_t>> Out =
      encodeNpy(DType::F32, Shape, &Value, sizeof(Value));
  ASSERT_TRUE(Out.ok()) << Out.error();
  EXPECT_EQ((*Out)[6], 2);
  EXPECT_EQ((Out->size() - 4) % 64, 0u);
  Result<Tensor> Back = parseNpy(Out->data(), Out->size(), "big.npy");
  ASSERT_TRUE(Back.ok()) << Back.error();
  EXPECT_EQ(Back->Shape, Shape);
  EXPECT_EQ(elements<float>(*Back), (std::vector<float>{4.0f}));
}

TEST(NpyWriteTest, RoundTripEveryTypeThroughAFile) {
  for (DType Type : AllDTypes) {
    if (Type == DType::BF16)
      continue;
    Tensor T;
    T.Type = Type;
    T.Shape = {3, 2};
    T.Data.resize(6 * dtypeSize(Type));
    for (size_t I = 0; I < T.Data.size(); ++I)
      T.Data[I] = static_cast<uint8_t>(Type == DType::Bool ? I % 2 : I * 37);
    std::string Path = tempPath(std::string(dtypeName(Type)) + ".npy");
    Status S = writeNpy(Path, T);
    ASSERT_TRUE(S.ok()) << S.error();
    Result<Tensor> Back = readNpy(Path);
    ASSERT_TRUE(Back.ok()) << Back.error();
    EXPECT_EQ(Back->Type, Type);
    EXPECT_EQ(Back->Shape, T.Shape);
    EXPECT_EQ(Back->Data, T.Data);
    std::remove(Path.c_str());
  }
}

TEST(NpyWriteTest, Errors) {
  uint16_t Bits[2] = {0x3F80, 0x4000};
  expectError(encodeNpy(DType::BF16, {2}, Bits, sizeof(Bits)),
              {"BF16", "NumPy has no such type"});
  float Values[3] = {1, 2, 3};
  expectError(encodeNpy(DType::F32, {2, 2}, Values, sizeof(Values)),
              {"shape [2,2] x F32 = 16 bytes, but 12 bytes were given"});
  expectError(encodeNpy(DType::F32, {-1}, Values, sizeof(Values)),
              {"negative dimension"});
  Tensor T = makeTensor<float>(DType::F32, {3}, {1, 2, 3});
  expectError(writeNpy("/nonexistent-dir/x.npy", T),
              {"/nonexistent-dir/x.npy: cannot create"});
  T.Type = DType::BF16;
  T.Shape = {6};
  expectError(writeNpy(tempPath("bf16.npy"), T),
              {"memfmt_npy_bf16.npy: cannot write BF16"});
}

//===----------------------------------------------------------------------===//
// Reader errors
//===----------------------------------------------------------------------===//

TEST(NpyErrorTest, Preamble) {
  expectError(parse(""), {"t.npy: not a .npy file (bad magic"});
  expectError(parse("PK\x03\x04 a zip file"), {"t.npy:", "bad magic"});
  expectError(parse(std::string("\x93NUMPY", 6)), {"truncated .npy preamble"});
  expectError(parse(std::string("\x93NUMPY\x01\x00\x10", 9)),
              {"truncated .npy preamble"});
  expectError(parse(patch(FIXTURE(NpyF32_2x3), std::string("\x01\x00v", 3),
                          std::string("\x04\x00v", 3))),
              {"unsupported .npy format version 4.0"});
  expectError(parse(patch(FIXTURE(NpyF32_2x3), std::string("\x01\x00v", 3),
                          std::string("\x01\x01v", 3))),
              {"unsupported .npy format version 1.1"});
}

TEST(NpyErrorTest, HeaderLengthBeyondFile) {
  std::string Bytes = FIXTURE(NpyF32_2x3);
  Bytes[8] = '\xff';
  Bytes[9] = '\x7f';
  expectError(parse(Bytes, "w.npy"),
              {"w.npy: header length 32767 runs past the end of the file "
               "(152 bytes)"});
  // Truncated inside the header.
  expectError(parse(FIXTURE(NpyF32_2x3).substr(0, 60)),
              {"header length 118 runs past the end of the file (60 bytes)"});
}

TEST(NpyErrorTest, MalformedHeaderDict) {
  struct Case {
    const char *Dict;
    const char *Error;
  } Cases[] = {
      {"['descr', '<f4']", "expected '{'"},
      {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
      {"{'descr': '<f4', 'shape': ()}", "missing key 'fortran_order'"},
      {"{'fortran_order': False, 'shape': ()}", "missing key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}",
       "unexpected key 'x'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
       "'shape': ()}",
       "duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': ()}",
       "'fortran_order' must be True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3)}",
       "a 1-d shape is written '(N,)'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [3]}",
       "expected '(' to start the shape tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3.0,)}",
       "expected ',' or ')' in the shape tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2L,)}",
       "expected ',' or ')' in the shape tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (,)}",
       "expected an integer dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (03,)}",
       "leading zero"},
      {"{'descr': '<f4', 'fortran_order': False, "
       "'shape': (99999999999999999999,)}",
       "does not fit in 64 bits"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': ()}",
       "expected ',' or '}'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': ()}",
       "expected ',' or '}'"}, // Adjacent strings are not concatenated.
      {"{'descr' '<f4', 'fortran_order': False, 'shape': ()}",
       "expected ':' after a key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (),",
       "expected a quoted string"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x",
       "unterminated string"},
      {"{'descr': '<f4'; 'fortran_order': False, 'shape': ()}",
       "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ()} x",
       "unexpected text after the header dict"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}",
       "structured dtypes"},
      {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': ()}",
       "escapes in strings are not supported"},
  };
  for (const Case &C : Cases)
    expectError(parse(makeNpy(C.Dict), "h.npy"),
                {"h.npy: malformed header at byte", C.Error});
  // The header must end with a newline.
  std::string Bytes = FIXTURE(NpyScalarF32);
  Bytes[127] = ' ';
  expectError(parse(Bytes), {"does not end with a newline"});
}

TEST(NpyErrorTest, UnsupportedLayoutsAndTypes) {
  expectError(parse(FIXTURE(NpyFortran), "f.npy"),
              {"f.npy: Fortran-order (column-major) arrays are not "
               "supported"});
  expectError(parse(FIXTURE(NpyBigEndian), "b.npy"),
              {"b.npy: big-endian data ('>f4') is not supported"});
  expectError(parse(makeNpy("{'descr': '<c8', 'fortran_order': False, "
                            "'shape': ()}")),
              {"unsupported dtype '<c8'"});
  expectError(parse(makeNpy("{'descr': '|O', 'fortran_order': False, "
                            "'shape': ()}")),
              {"unsupported dtype '|O'"});
  expectError(parse(makeNpy("{'descr': '<V2', 'fortran_order': False, "
                            "'shape': ()}")),
              {"unsupported dtype '<V2'"});
}

TEST(NpyErrorTest, DataSize) {
  std::string Full = FIXTURE(NpyF32_2x3);
  expectError(parse(Full.substr(0, Full.size() - 1), "trunc.npy"),
              {"trunc.npy: truncated: shape [2,3] x F32 = 24 bytes but the "
               "file has 23 bytes of data"});
  expectError(parse(Full.substr(0, 128)),
              {"truncated", "file has 0 bytes of data"});
  expectError(parse(Full + "xyz"), {"3 unexpected bytes after the data"});
  expectError(parse(makeNpy("{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (2, -3)}")),
              {"negative dimension in shape [2,-3]"});
  expectError(parse(makeNpy("{'descr': '<f8', 'fortran_order': False, "
                            "'shape': (4294967296, 4294967296)}")),
              {"shape [4294967296,4294967296] x F64 overflows"});
}

TEST(NpyErrorTest, Files) {
  expectError(readNpy("/nonexistent-dir/w.npy"),
              {"/nonexistent-dir/w.npy: cannot open"});
  std::string Path = tempPath("trunc.npy");
  std::string Bytes = FIXTURE(NpyF32_2x3).substr(0, 140);
  ASSERT_TRUE(writeFileBytes(Path, Bytes.data(), Bytes.size()).ok());
  expectError(readNpy(Path), {Path.c_str(), "truncated"});
  std::remove(Path.c_str());
}

TEST(NpyErrorTest, EveryTruncationAndByteFlipIsHandled) {
  // Every proper prefix is an error; flipping any byte gives an error or a
  // well-formed tensor, never a crash (run under sanitizers to see the point).
  for (const std::string &Full : {FIXTURE(NpyF32_2x3), FIXTURE(NpyV2F32)}) {
    for (size_t Length = 0; Length < Full.size(); ++Length)
      EXPECT_FALSE(parse(Full.substr(0, Length)).ok()) << Length;
    for (size_t I = 0; I < Full.size(); ++I)
      for (int Flip : {0x01, 0x20, 0x80, 0xFF}) {
        std::string Bytes = Full;
        Bytes[I] = static_cast<char>(Bytes[I] ^ Flip);
        Result<Tensor> T = parse(Bytes);
        if (T.ok())
          EXPECT_EQ(static_cast<int64_t>(T->Data.size()),
                    byteSize(T->Type, T->Shape));
        else
          EXPECT_EQ(T.error().rfind("t.npy: ", 0), 0u) << T.error();
      }
  }
}

//===----------------------------------------------------------------------===//
// A live NumPy, when there is one
//===----------------------------------------------------------------------===//

TEST(NpyNumpyTest, InteroperatesWithLiveNumpy) {
  const char *Python = "/usr/bin/python3";
  std::string Probe =
      std::string(Python) + " -c 'import numpy' > /dev/null 2>&1";
  if (std::system(Probe.c_str()) != 0)
    GTEST_SKIP() << "no " << Python << " with numpy";

  // Ours -> numpy: numpy checks the values and writes arrays back.
  std::string Ours = tempPath("ours.npy");
  std::vector<float> Values(2 * 3 * 4 * 5);
  for (size_t I = 0; I < Values.size(); ++I)
    Values[I] = static_cast<float>(I) * 0.25f - 3.0f;
  ASSERT_TRUE(
      writeNpy(Ours, makeTensor<float>(DType::F32, {2, 3, 4, 5}, Values)).ok());
  std::string OursI64 = tempPath("ours_i64.npy");
  ASSERT_TRUE(
      writeNpy(OursI64, makeTensor<int64_t>(DType::I64, {3},
                                            {-5, int64_t{1} << 53, 1000000007}))
          .ok());
  std::string Theirs = tempPath("theirs_");
  std::string Script =
      "import numpy as np, sys\n"
      "a = np.load(sys.argv[1])\n"
      "assert a.dtype == np.float32 and a.shape == (2, 3, 4, 5), a.dtype\n"
      "assert (a.ravel() == np.arange(120, dtype=np.float32) * 0.25 - "
      "3).all()\n"
      "b = np.load(sys.argv[3])\n"
      "assert b.dtype == np.int64 and b.tolist() == [-5, 2**53, 1000000007]\n"
      "p = sys.argv[2]\n"
      "np.save(p + 'f16.npy', np.linspace(-70000, 70000, 1001)"
      ".astype(np.float16))\n"
      "np.save(p + 'i64.npy', np.arange(-50, 50, dtype=np.int64)"
      ".reshape(10, 10)[:, ::-1].copy())\n"
      "np.save(p + 'b1.npy', np.arange(7) % 3 == 0)\n"
      "np.save(p + 'f32big.npy', np.ones((1000, 1000), np.float32))\n";
  std::string ScriptPath = tempPath("check.py");
  ASSERT_TRUE(writeFileBytes(ScriptPath, Script.data(), Script.size()).ok());
  std::string Command = std::string(Python) + " -W ignore " + ScriptPath + " " +
                        Ours + " " + Theirs + " " + OursI64;
  ASSERT_EQ(std::system(Command.c_str()), 0) << Command;

  Result<Tensor> F16 = readNpy(Theirs + "f16.npy");
  ASSERT_TRUE(F16.ok()) << F16.error();
  EXPECT_EQ(F16->Type, DType::F16);
  std::vector<uint16_t> Bits = elements<uint16_t>(*F16);
  ASSERT_EQ(Bits.size(), 1001u);
  EXPECT_EQ(Bits.front(), 0xFC00); // -70000 overflows to -inf.
  EXPECT_EQ(Bits[500], 0x0000);
  EXPECT_EQ(halfToFloat(Bits[550]), 7000.0f);
  EXPECT_EQ(halfToFloat(Bits[551]), 7140.0f);
  Result<Tensor> I64 = readNpy(Theirs + "i64.npy");
  ASSERT_TRUE(I64.ok()) << I64.error();
  EXPECT_EQ(I64->Shape, (std::vector<int64_t>{10, 10}));
  EXPECT_EQ(elements<int64_t>(*I64).front(), -41);
  Result<Tensor> B1 = readNpy(Theirs + "b1.npy");
  ASSERT_TRUE(B1.ok()) << B1.error();
  EXPECT_EQ(B1->Data, (std::vector<uint8_t>{1, 0, 0, 1, 0, 0, 1}));
  Result<Tensor> Big = readNpy(Theirs + "f32big.npy");
  ASSERT_TRUE(Big.ok()) << Big.error();
  EXPECT_EQ(Big->Data.size(), 4000000u);
  for (const char *Leaf : {"f16.npy", "i64.npy", "b1.npy", "f32big.npy"})
    std::remove((Theirs + Leaf).c_str());
  std::remove(Ours.c_str());
  std::remove(OursI64.c_str());
  std::remove(ScriptPath.c_str());
}

//===----------------------------------------------------------------------===//
// Tensor.h helpers
//===----------------------------------------------------------------------===//

TEST(TensorTest, ShapeArithmetic) {
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({0, 5}), 0);
  EXPECT_EQ(numElements({64, 3, 7, 7}), 9408);
  EXPECT_EQ(byteSize(DType::F32, {64, 3, 7, 7}), 37632);
  EXPECT_EQ(byteSize(DType::BF16, {3}), 6);
  EXPECT_FALSE(numElements({2, -1}));
  EXPECT_FALSE(numElements({int64_t{1} << 32, int64_t{1} << 32}));
  EXPECT_FALSE(byteSize(DType::F64, {int64_t{1} << 61}));
  EXPECT_EQ(byteSize(DType::F64, {0, int64_t{1} << 62, 1 << 30}), 0);
  EXPECT_EQ(formatShape({64, 3, 7, 7}), "[64,3,7,7]");
  EXPECT_EQ(formatShape({}), "[]");
}

TEST(TensorTest, DTypeNames) {
  for (DType Type : AllDTypes) {
    EXPECT_EQ(parseDTypeName(dtypeName(Type)), Type);
    EXPECT_GT(dtypeSize(Type), 0u);
    EXPECT_EQ(npyDescr(Type) == nullptr, Type == DType::BF16);
  }
  EXPECT_FALSE(parseDTypeName("f32"));
  EXPECT_FALSE(parseDTypeName("F8_E4M3"));
  EXPECT_EQ(std::string(npyDescr(DType::F32)), "<f4");
  EXPECT_EQ(std::string(npyDescr(DType::Bool)), "|b1");
}

TEST(TensorTest, ConvertToF32) {
  double D[2] = {0.1, -1e300};
  Result<std::vector<float>> F = convertToF32(DType::F64, D, sizeof(D));
  ASSERT_TRUE(F.ok()) << F.error();
  EXPECT_EQ((*F)[0], 0.1f);
  EXPECT_EQ((*F)[1], -std::numeric_limits<float>::infinity());
  uint8_t Odd[3] = {0, 0x3C, 0};
  expectError(convertToF32(DType::F16, Odd, 3),
              {"3 bytes is not a whole number of F16 elements"});
  int32_t I[1] = {1};
  expectError(convertToF32(DType::I32, I, 4), {"cannot convert I32"});
  // Unaligned sources work.
  alignas(4) uint8_t Buffer[9] = {};
  float One = 1.0f;
  std::memcpy(Buffer + 1, &One, 4);
  std::memcpy(Buffer + 5, &One, 4);
  F = convertToF32(DType::F32, Buffer + 1, 8);
  ASSERT_TRUE(F.ok()) << F.error();
  EXPECT_EQ(*F, (std::vector<float>{1.0f, 1.0f}));
}

} // namespace
