//===- Npy.h - Reading and writing NumPy .npy files -----------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The NumPy .npy format (numpy.lib.format), version 1.0, 2.0 and 3.0, for
// dense little-endian arrays in C order:
//
//   "\x93NUMPY" major minor  header-length (uint16 LE for 1.0, uint32 LE for
//   2.0 and 3.0)  header: a Python dict literal
//   "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", padded
//   with spaces and ended by '\n'  data: the elements, row-major.
//
// Element types: '<f8' F64, '<f4' F32, '<f2' F16, '<i8' I64, '<i4' I32,
// '<i2' I16, '|i1' I8, '<u8' U64, '<u4' U32, '<u2' U16, '|u1' U8, '|b1' Bool
// (bfloat16 has no NumPy type). Reading is strict: bad magic, an unknown
// version, a header running past the file, a malformed or incomplete dict,
// big-endian or structured types, Fortran order, negative dimensions, and
// data shorter or longer than the shape says are errors whose message names
// the file. Writing produces the bytes np.save produces for the same array.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_IO_NPY_H
#define MEMFMT_RUNTIME_IO_NPY_H

#include "memfmt/runtime/io/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memfmt::io {

/// The NumPy type string of \p Type ("<f4", "|u1", ...), or nullptr for BF16.
const char *npyDescr(DType Type);

/// Parses the \p Size bytes at \p Bytes as a .npy file; \p Name (usually the
/// path) starts every error message.
Result<Tensor> parseNpy(const uint8_t *Bytes, size_t Size,
                        const std::string &Name);

/// Reads the .npy file at \p Path.
Result<Tensor> readNpy(const std::string &Path);

/// Encodes a C-order array as .npy bytes, byte-for-byte what np.save writes
/// (format 1.0, or 2.0 when the header does not fit in 64 KiB; header padded
/// so the data starts at a multiple of 64 bytes). \p NumBytes must equal the
/// size of \p Shape x \p Type; BF16 is rejected.
Result<std::vector<uint8_t>> encodeNpy(DType Type,
                                       const std::vector<int64_t> &Shape,
                                       const void *Data, size_t NumBytes);

/// Writes \p T to \p Path as a .npy file (see encodeNpy).
Status writeNpy(const std::string &Path, const Tensor &T);

} // namespace memfmt::io

#endif // MEMFMT_RUNTIME_IO_NPY_H
