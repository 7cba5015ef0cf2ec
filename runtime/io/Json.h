//===- Json.h - Strict JSON reading for manifests and safetensors headers -===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's JSON reader, private to the io and loader libraries. The
// parsing itself is nlohmann/json's (Debian's nlohmann-json3-dev, header
// only, driven through its SAX interface, so no exception is thrown); this
// layer adds what the runtime's readers of untrusted files rely on:
//
//  * strict RFC 8259: no comments, no trailing commas, no leading zeros, no
//    NaN, no byte-order mark, no control characters or invalid UTF-8 in
//    strings, nothing but whitespace after the value (nlohmann would stop
//    at a NUL byte and accept a leading BOM; both are rejected here);
//  * objects keep their members in text order, duplicates included, so the
//    caller decides what a duplicate key means and names it in its message
//    ("duplicate tensor name 'w'", "duplicate field 'arena_bytes'");
//  * nesting is limited to 64 levels, so a hostile file cannot build a tree
//    whose destruction or walk exhausts the stack;
//  * errors name the byte offset where the reader stopped and say what is
//    wrong in nlohmann's words ("at byte 7: syntax error while parsing
//    object separator - unexpected string literal; expected ':'").
//
// Numbers keep their text for messages; asInt64 gives the ones that are
// integers in int64. A number too large for a double (1e999) is an error.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFMT_RUNTIME_IO_JSON_H
#define MEMFMT_RUNTIME_IO_JSON_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memfmt::io::json {

/// The deepest nesting of arrays and objects parse accepts.
constexpr int MaxDepth = 64;

/// A parsed JSON value.
struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind K = Kind::Null;
  bool Bool = false;
  /// The decoded UTF-8 text of a String; the text of a Number (integers in
  /// decimal, other numbers as written).
  std::string Text;
  /// A Number's value when it is an integer (no fraction or exponent) that
  /// fits in int64.
  std::optional<int64_t> Int;
  /// The elements of an Array.
  std::vector<Value> Elements;
  /// The members of an Object, in text order (duplicates kept).
  std::vector<std::pair<std::string, Value>> Members;

  bool isObject() const { return K == Kind::Object; }
  bool isArray() const { return K == Kind::Array; }
  bool isString() const { return K == Kind::String; }
  bool isNumber() const { return K == Kind::Number; }
  bool isNull() const { return K == Kind::Null; }
};

/// The name of \p K for messages: "object", "string", ...
const char *kindName(Value::Kind K);

/// The value of a Number that is an integer written without fraction or
/// exponent and fits in int64, or std::nullopt.
std::optional<int64_t> asInt64(const Value &V);

/// Parses \p Text as one JSON value followed only by whitespace. On failure
/// returns std::nullopt and sets \p Error to "at byte N: " and what is
/// wrong; N is the offset of the byte where reading stopped (the last byte of
/// the refused token, the offending byte, or the text's size at its end).
std::optional<Value> parse(std::string_view Text, std::string &Error);

/// Whether \p Text is well-formed UTF-8 (no overlong forms, surrogates or
/// code points past U+10FFFF), as a JSON string must be; nlohmann's check.
bool isValidUtf8(std::string_view Text);

} // namespace memfmt::io::json

#endif // MEMFMT_RUNTIME_IO_JSON_H
