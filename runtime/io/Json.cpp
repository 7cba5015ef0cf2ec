//===- Json.cpp - Strict JSON reading over nlohmann/json's parser ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// nlohmann/json's SAX parser reads the text, strictly and without comments;
// TreeBuilder turns its events into a json::Value tree (members in text
// order, duplicates kept) and stops at the 65th level of nesting. A syntax
// error is reported with nlohmann's own reason at the byte where its lexer
// stopped. The input goes in through TrackingIterator, which remembers the
// last byte the lexer read, so the depth error can name its bracket. parse
// adds the two checks nlohmann lacks: no byte-order mark, no NUL byte.
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
#include <limits>

namespace memfmt::io::json {

namespace {

using Document = nlohmann::json;

/// An offset and what is wrong there.
using Located = std::pair<size_t, std::string>;

/// The input of nlohmann's lexer: the bytes of the text, remembering in
/// \p Last the last one read.
class TrackingIterator {
public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char *;
  using reference = const char &;

  TrackingIterator(const char *P, const char **Last) : P(P), Last(Last) {}
  reference operator*() const {
    *Last = P;
    return *P;
  }
  TrackingIterator &operator++() {
    ++P;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator Old = *this;
    ++P;
    return Old;
  }
  bool operator==(const TrackingIterator &Other) const { return P == Other.P; }
  bool operator!=(const TrackingIterator &Other) const { return P != Other.P; }

private:
  const char *P;
  const char **Last;
};

/// Builds the Value tree from nlohmann's SAX events; records the first
/// error.
class TreeBuilder final : public nlohmann::json_sax<Document> {
public:
  TreeBuilder(std::string_view Text, const char *const &Last)
      : Text(Text), Last(Last) {}

  Value Root;
  std::optional<Located> Error;

  bool null() override {
    slot();
    return true;
  }
  bool boolean(bool B) override {
    Value &V = slot();
    V.K = Value::Kind::Bool;
    V.Bool = B;
    return true;
  }
  bool number_integer(number_integer_t N) override {
    number(std::to_string(N)).Int = N;
    return true;
  }
  bool number_unsigned(number_unsigned_t N) override {
    Value &V = number(std::to_string(N));
    if (N <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      V.Int = static_cast<int64_t>(N);
    return true;
  }
  bool number_float(number_float_t, const string_t &Written) override {
    number(Written);
    return true;
  }
  bool string(string_t &S) override {
    Value &V = slot();
    V.K = Value::Kind::String;
    V.Text = std::move(S);
    return true;
  }
  bool binary(binary_t &) override { return true; } // Not in JSON text.
  bool start_object(std::size_t) override { return open(Value::Kind::Object); }
  bool key(string_t &K) override {
    Key = std::move(K);
    return true;
  }
  bool end_object() override {
    Open.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return open(Value::Kind::Array); }
  bool end_array() override {
    Open.pop_back();
    return true;
  }
  /// \p Consumed counts the bytes nlohmann read, the end of the input as one
  /// more; the last of them is where it stopped. nlohmann's what() is
  /// "[json.exception.<kind>.<id>] " + (for a syntax error) "parse error at
  /// line L, column C: " + the reason, which is kept.
  bool parse_error(std::size_t Consumed, const std::string &,
                   const nlohmann::detail::exception &Ex) override {
    std::string_view Reason = Ex.what();
    if (size_t At = Reason.find("] "); At != std::string_view::npos)
      Reason.remove_prefix(At + 2);
    if (size_t At = Reason.find(": ");
        Reason.substr(0, 11) == "parse error" && At != std::string_view::npos)
      Reason.remove_prefix(At + 2);
    Error = Located{std::min(Consumed > 0 ? Consumed - 1 : 0, Text.size()),
                    std::string(Reason)};
    return false;
  }

private:
  std::string_view Text;
  /// The last byte the lexer read (TrackingIterator).
  const char *const &Last;
  /// The arrays and objects being filled, outermost first. Each is the last
  /// element of its parent, which grows only after it is closed.
  std::vector<Value *> Open;
  std::string Key;

  /// The value the next event fills in.
  Value &slot() {
    if (Open.empty())
      return Root;
    Value &Parent = *Open.back();
    if (Parent.isArray())
      return Parent.Elements.emplace_back();
    return Parent.Members.emplace_back(std::move(Key), Value()).second;
  }

  Value &number(std::string Written) {
    Value &V = slot();
    V.K = Value::Kind::Number;
    V.Text = std::move(Written);
    return V;
  }

  bool open(Value::Kind K) {
    if (Open.size() >= static_cast<size_t>(MaxDepth)) {
      Error = Located{static_cast<size_t>(Last - Text.data()),
                      "nesting deeper than " + std::to_string(MaxDepth)};
      return false;
    }
    Value &V = slot();
    V.K = K;
    Open.push_back(&V);
    return true;
  }
};

} // namespace

const char *kindName(Value::Kind K) {
  static const char *const Names[] = {"null",   "boolean", "number",
                                      "string", "array",   "object"};
  return Names[static_cast<int>(K)];
}

std::optional<int64_t> asInt64(const Value &V) {
  return V.isNumber() ? V.Int : std::nullopt;
}

std::optional<Value> parse(std::string_view Text, std::string &Error) {
  auto fail = [&](size_t Offset, const std::string &What) {
    Error = "at byte " + std::to_string(Offset) + ": " + What;
    return std::nullopt;
  };
  // nlohmann skips a leading byte-order mark; RFC 8259 forbids sending one.
  if (Text.substr(0, 3) == "\xEF\xBB\xBF")
    return fail(0, "byte-order mark before the JSON value");
  const char *Last = Text.data();
  TreeBuilder Builder(Text, Last);
  if (!Document::sax_parse(TrackingIterator(Text.data(), &Last),
                           TrackingIterator(Text.data() + Text.size(), &Last),
                           &Builder, Document::input_format_t::json,
                           /*strict=*/true, /*ignore_comments=*/false)) {
    Located E = Builder.Error.value_or(Located{0, "not valid JSON"});
    return fail(E.first, E.second);
  }
  // nlohmann takes a NUL byte for the end of the input. Outside strings
  // (where it is an error) JSON has none, so the first one ends the value.
  if (size_t Nul = Text.find('\0'); Nul != std::string_view::npos)
    return fail(Nul, "NUL byte after the JSON value");
  return std::move(Builder.Root);
}

bool isValidUtf8(std::string_view Text) {
  // nlohmann's serializer validates UTF-8; an invalid sequence becomes
  // U+FFFD under the replace handler and nothing under the ignore handler,
  // so the two dumps agree exactly when there is none.
  Document S = std::string(Text);
  auto dump = [&](Document::error_handler_t Handler) {
    return S.dump(-1, ' ', /*ensure_ascii=*/false, Handler);
  };
  return dump(Document::error_handler_t::replace) ==
         dump(Document::error_handler_t::ignore);
}

} // namespace memfmt::io::json
