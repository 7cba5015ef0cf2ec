//===- Json.h - A minimal strict JSON parser for safetensors headers ------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// A small RFC 8259 JSON parser, private to the io library, that exists only
// to read safetensors headers (no JSON library is available to the runtime).
// It is strict: no comments, no trailing commas, no leading zeros, no NaN,
// no control characters or invalid UTF-8 in strings, nothing but whitespace
// after the value. Objects keep their members in text order, duplicates
// included, so the caller decides what a duplicate key means. Numbers keep
// their text; callers convert the ones they need with asInt64. Nesting is
// limited to 64 levels so a hostile file cannot exhaust the stack.
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

/// A parsed JSON value.
struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind K = Kind::Null;
  bool Bool = false;
  /// The decoded UTF-8 text of a String; the literal text of a Number.
  std::string Text;
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
/// returns std::nullopt and sets \p Error to a message giving the byte offset
/// ("at byte 17: expected ':' after an object key").
std::optional<Value> parse(std::string_view Text, std::string &Error);

/// Whether \p Text is well-formed UTF-8 (no overlong forms, surrogates or
/// code points past U+10FFFF).
bool isValidUtf8(std::string_view Text);

/// Appends \p Text to \p Out as a JSON string literal, escaping as
/// serde_json does: '"', '\\' and control characters; other UTF-8 is kept.
void appendQuoted(std::string &Out, std::string_view Text);

} // namespace memfmt::io::json

#endif // MEMFMT_RUNTIME_IO_JSON_H
