//===- Json.cpp - Strict JSON reading over nlohmann/json's parser ---------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// nlohmann/json's SAX parser reads the text; TreeBuilder turns its events
// into a json::Value tree (members in text order, duplicates kept) and stops
// at the 65th level of nesting. The input goes in through TrackingIterator,
// which remembers the last byte the lexer read, so the depth error can name
// its bracket. When nlohmann reports a syntax error, describeError maps its
// message (context, lexer error, unexpected and expected token; the wording
// of nlohmann 3.11) and position (bytes read, end of input included) to a
// byte offset and this project's wording, which tests and users rely on.
// The JSON UTF-8 check of strings is nlohmann's; checkUtf8Sequence only says
// which rule a bad sequence breaks, and serves isValidUtf8 for writers.
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

/// Checks the UTF-8 sequence that starts at \p Pos of \p Text (a byte >=
/// 0x80); sets \p Length and returns nullptr, or returns the problem.
const char *checkUtf8Sequence(std::string_view Text, size_t Pos,
                              size_t &Length) {
  auto byteAt = [&](size_t I) { return static_cast<unsigned char>(Text[I]); };
  unsigned char Lead = byteAt(Pos);
  uint32_t CP;
  if (Lead >= 0xC2 && Lead <= 0xDF) {
    Length = 2;
    CP = Lead & 0x1F;
  } else if (Lead >= 0xE0 && Lead <= 0xEF) {
    Length = 3;
    CP = Lead & 0x0F;
  } else if (Lead >= 0xF0 && Lead <= 0xF4) {
    Length = 4;
    CP = Lead & 0x07;
  } else {
    return "invalid UTF-8";
  }
  if (Text.size() - Pos < Length)
    return "truncated UTF-8 sequence";
  for (size_t I = 1; I < Length; ++I) {
    unsigned char C = byteAt(Pos + I);
    if ((C & 0xC0) != 0x80)
      return "invalid UTF-8";
    CP = (CP << 6) | (C & 0x3F);
  }
  if ((Length == 3 && CP < 0x800) || (Length == 4 && CP < 0x10000))
    return "overlong UTF-8 sequence";
  if ((CP >= 0xD800 && CP <= 0xDFFF) || CP > 0x10FFFF)
    return "invalid code point";
  return nullptr;
}

/// \p C for a message: itself when printable ASCII, else \xNN.
std::string printable(char C) {
  auto U = static_cast<unsigned char>(C);
  if (U >= 0x20 && U < 0x7F)
    return std::string(1, C);
  static const char Hex[] = "0123456789abcdef";
  return std::string("\\x") + Hex[U >> 4] + Hex[U & 15];
}

bool startsWith(std::string_view Text, std::string_view Prefix) {
  return Text.substr(0, Prefix.size()) == Prefix;
}

bool contains(std::string_view Text, std::string_view Part) {
  return Text.find(Part) != std::string_view::npos;
}

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

/// The parts of nlohmann's syntax-error message "... while parsing
/// <Context> - <Detail>", where Detail is "<LexError>; last read: '...'[;
/// expected <Expected>]" (the lexer refused the token) or "unexpected
/// <Unexpected>; expected <Expected>" (the parser refused it).
struct SyntaxError {
  std::string_view Context, LexError, Unexpected, Expected;
};

SyntaxError splitMessage(std::string_view What) {
  SyntaxError E;
  constexpr std::string_view While = "while parsing ", Dash = " - ",
                             LastRead = "; last read: '",
                             Unexpected = "unexpected ",
                             Expected = "; expected ";
  size_t At = What.find(While);
  if (At == std::string_view::npos)
    return E;
  What.remove_prefix(At + While.size());
  size_t DashAt = What.find(Dash);
  if (DashAt == std::string_view::npos)
    return E;
  E.Context = What.substr(0, DashAt);
  What.remove_prefix(DashAt + Dash.size());
  if (size_t ReadAt = What.find(LastRead); ReadAt != std::string_view::npos) {
    E.LexError = What.substr(0, ReadAt);
    size_t ExpectedAt = What.rfind(std::string("'") + std::string(Expected));
    if (ExpectedAt != std::string_view::npos && ExpectedAt > ReadAt)
      E.Expected = What.substr(ExpectedAt + 1 + Expected.size());
  } else if (startsWith(What, Unexpected)) {
    What.remove_prefix(Unexpected.size());
    size_t ExpectedAt = What.find(Expected);
    E.Unexpected = What.substr(0, ExpectedAt);
    if (ExpectedAt != std::string_view::npos)
      E.Expected = What.substr(ExpectedAt + Expected.size());
  }
  return E;
}

/// An offset and what is wrong there.
using Located = std::pair<size_t, std::string>;

/// The problem of a string that nlohmann's lexer refused with \p LexError
/// ("invalid string: ...") at offset \p At.
Located stringProblem(std::string_view Text, size_t At,
                      std::string_view LexError) {
  bool AtEnd = At >= Text.size();
  if (contains(LexError, "missing closing quote"))
    return {At, "unterminated string"};
  if (contains(LexError, "control character"))
    return {At, "control character in a string"};
  if (contains(LexError, "after backslash"))
    return {At, AtEnd ? "unterminated string"
                      : "invalid escape '\\" + printable(Text[At]) +
                            "' in a string"};
  if (contains(LexError, "4 hex digits")) {
    // Fewer than four bytes left after the \\u is a truncation.
    size_t Escape = Text.rfind("\\u", At);
    if (Escape != std::string_view::npos && Text.size() - Escape - 2 < 4)
      return {Escape + 2, "truncated \\u escape"};
    return {At, "invalid hex digit in a \\u escape"};
  }
  // The byte after the escape that is not the other half; nlohmann stops
  // at the last hex digit of a second \\u escape, or at the byte after a
  // second backslash.
  bool AfterHex = At >= 5 && Text[At - 5] == '\\' && Text[At - 4] == 'u';
  if (contains(LexError, "must be followed by U+DC00"))
    return {AfterHex                         ? At + 1
            : At > 0 && Text[At - 1] == '\\' ? At - 1
                                             : At,
            "unpaired high surrogate in a \\u escape"};
  if (contains(LexError, "must follow U+D800"))
    return {At + 1, "unpaired low surrogate in a \\u escape"};
  if (contains(LexError, "UTF-8")) {
    // nlohmann stops at the byte that breaks the sequence: a bad lead byte,
    // or a bad continuation of a lead byte up to 3 bytes back. Say which
    // rule the whole sequence breaks, at its first byte.
    size_t Lead = At;
    for (size_t Back = 1; Back <= 3 && Back <= At; ++Back) {
      unsigned char B = static_cast<unsigned char>(Text[At - Back]);
      if (B >= 0x80 && B <= 0xBF)
        continue;
      size_t Length = B >= 0xF0 ? 4 : B >= 0xE0 ? 3 : 2;
      if (B >= 0xC2 && B <= 0xF4 && Length > Back)
        Lead = At - Back;
      break;
    }
    size_t Length;
    if (Lead < Text.size() && static_cast<unsigned char>(Text[Lead]) >= 0x80)
      if (const char *Problem = checkUtf8Sequence(Text, Lead, Length))
        return {Lead, std::string(Problem) + " in a string"};
    return {At, "invalid UTF-8 in a string"};
  }
  return {At, std::string(LexError)};
}

/// The length in the text of \p Token, a token as nlohmann shows it (each
/// control character as "<U+XXXX>").
size_t rawLength(const std::string &Token) {
  size_t Length = 0;
  for (size_t I = 0; I < Token.size(); ++I, ++Length)
    if (Token.compare(I, 3, "<U+") == 0 && I + 8 <= Token.size() &&
        Token[I + 7] == '>')
      I += 7;
  return Length;
}

/// Where the token that nlohmann refused begins, \p At being the byte it
/// stopped at and \p End the bytes it read (without the end of the input).
size_t tokenStart(std::string_view Text, size_t At, size_t End,
                  const std::string &LastToken, const SyntaxError &E) {
  // Strings and numbers are read from their first byte into LastToken;
  // literals are not, but they are letters.
  if (E.Unexpected == "number literal" || E.Unexpected == "string literal" ||
      startsWith(E.LexError, "invalid string") ||
      startsWith(E.LexError, "invalid number"))
    return End - std::min(End, rawLength(LastToken));
  if (E.Unexpected == "true literal" || E.Unexpected == "null literal")
    return End - std::min<size_t>(End, 4);
  if (E.Unexpected == "false literal")
    return End - std::min<size_t>(End, 5);
  // A literal broken after its first letters (a proper prefix of true,
  // false or null); a complete one before the bad byte is a token of its own.
  if (startsWith(E.LexError, "invalid literal")) {
    size_t Letters = 0;
    while (Letters < 4 && Letters < At && Text[At - Letters - 1] >= 'a' &&
           Text[At - Letters - 1] <= 'z')
      ++Letters;
    for (; Letters > 0; --Letters)
      for (std::string_view Literal : {"true", "false", "null"})
        if (Letters < Literal.size() &&
            startsWith(Literal, Text.substr(At - Letters, Letters)))
          return At - Letters;
  }
  return At;
}

/// The offset and this project's wording of the error nlohmann reported
/// after reading \p Consumed bytes (the end of the input counts as one),
/// \p LastToken being the token it read last.
Located describeError(std::string_view Text, size_t Consumed,
                      const std::string &LastToken,
                      const nlohmann::detail::exception &Ex) {
  size_t At = std::min(Consumed > 0 ? Consumed - 1 : 0, Text.size());
  size_t End = std::min(Consumed, Text.size());
  std::string_view What = Ex.what();
  if (Ex.id == 406) { // out_of_range.406: "number overflow parsing '1e999'".
    std::string Number =
        LastToken.size() <= 32 ? LastToken : LastToken.substr(0, 29) + "...";
    return {End - std::min(End, LastToken.size()),
            "the number " + Number + " is out of range"};
  }

  SyntaxError E = splitMessage(What);
  size_t Start = tokenStart(Text, At, End, LastToken, E);
  // nlohmann reads "01" as two numbers.
  bool Number = E.Unexpected == "number literal" ||
                startsWith(E.LexError, "invalid number");
  if (Number && Start > 0 && Start < Text.size() && Text[Start - 1] == '0' &&
      Text[Start] >= '0' && Text[Start] <= '9')
    return {Start, "leading zero in a number"};
  if (E.Expected == "end of input")
    return {Start, "unexpected data after the JSON value"};
  if (E.Context == "object separator")
    return {Start, "expected ':' after an object key"};
  if (E.Context == "object")
    return {Start, "expected ',' or '}' in an object"};
  if (E.Context == "array")
    return {Start, "expected ',' or ']' in an array"};
  bool BadString = startsWith(E.LexError, "invalid string");
  if (E.Context == "object key")
    return BadString ? stringProblem(Text, At, E.LexError)
                     : Located{Start, "expected a string key in an object"};
  if (E.Context != "value")
    return {At, std::string(What)};

  // A value was expected.
  if (BadString)
    return stringProblem(Text, At, E.LexError);
  if (startsWith(E.LexError, "invalid number")) {
    if (contains(E.LexError, "after '-'"))
      return {At, "expected a digit"};
    if (contains(E.LexError, "after '.'"))
      return {At, "expected a digit after '.'"};
    return {At, "expected a digit in the exponent"};
  }
  // A broken true/false/null, or a byte no value starts with.
  if (startsWith(E.LexError, "invalid literal") && Start < At)
    return {Start, "invalid literal"};
  if (At >= Text.size())
    return {At, "unexpected end of input, expected a value"};
  return {At, "unexpected character '" + printable(Text[At]) +
                  "', expected a value"};
}

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
    Value &V = number(std::to_string(N));
    V.Int = N;
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
  bool parse_error(std::size_t Consumed, const std::string &LastToken,
                   const nlohmann::detail::exception &Ex) override {
    Error = describeError(Text, Consumed, LastToken, Ex);
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

  Value &number(std::string Text) {
    Value &V = slot();
    V.K = Value::Kind::Number;
    V.Text = std::move(Text);
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
  switch (K) {
  case Value::Kind::Null:
    return "null";
  case Value::Kind::Bool:
    return "boolean";
  case Value::Kind::Number:
    return "number";
  case Value::Kind::String:
    return "string";
  case Value::Kind::Array:
    return "array";
  case Value::Kind::Object:
    return "object";
  }
  return "?";
}

std::optional<int64_t> asInt64(const Value &V) {
  return V.isNumber() ? V.Int : std::nullopt;
}

std::optional<Value> parse(std::string_view Text, std::string &Error) {
  auto fail = [&](size_t Offset, const std::string &What) {
    Error = "at byte " + std::to_string(Offset) + ": " + What;
    return std::nullopt;
  };
  // nlohmann skips a leading byte-order mark; RFC 8259 does not ask a parser
  // to, and no JSON value starts with 0xEF.
  if (!Text.empty() && static_cast<unsigned char>(Text[0]) == 0xEF)
    return fail(0, "unexpected character '\\xef', expected a value");
  const char *Last = Text.data();
  TreeBuilder Builder(Text, Last);
  bool Ok = Document::sax_parse(
      TrackingIterator(Text.data(), &Last),
      TrackingIterator(Text.data() + Text.size(), &Last), &Builder,
      Document::input_format_t::json, /*strict=*/true,
      /*ignore_comments=*/false);
  if (!Ok) {
    Located E = Builder.Error.value_or(Located{0, "not valid JSON"});
    return fail(E.first, E.second);
  }
  // nlohmann takes a NUL byte for the end of the input. Outside strings
  // (where it is an error) JSON has none, so the first one ends the value.
  if (size_t Nul = Text.find('\0'); Nul != std::string_view::npos)
    return fail(Nul, "unexpected data after the JSON value");
  return std::move(Builder.Root);
}

bool isValidUtf8(std::string_view Text) {
  size_t Pos = 0;
  while (Pos < Text.size()) {
    if (static_cast<unsigned char>(Text[Pos]) < 0x80) {
      ++Pos;
      continue;
    }
    size_t Length;
    if (checkUtf8Sequence(Text, Pos, Length))
      return false;
    Pos += Length;
  }
  return true;
}

} // namespace memfmt::io::json
