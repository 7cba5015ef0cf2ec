//===- Json.cpp - A minimal strict JSON parser for safetensors headers ----===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// A recursive-descent parser for RFC 8259 JSON (see Json.h). Each function
// consumes one production at Pos and either succeeds or records the first
// error with its byte offset; nothing after an error is parsed.
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include <limits>

namespace memfmt::io::json {

namespace {

constexpr int MaxDepth = 64;

/// Checks the UTF-8 sequence that starts with the byte >= 0x80 at \p Pos of
/// \p Text; sets \p Length and returns nullptr, or returns the problem.
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

class Parser {
public:
  explicit Parser(std::string_view Text) : Text(Text) {}

  std::optional<Value> run(std::string &Error) {
    Value Result;
    skipWhitespace();
    if (parseValue(Result, 0)) {
      skipWhitespace();
      if (Pos != Text.size())
        fail("unexpected data after the JSON value");
    }
    if (!Failed)
      return Result;
    Error = Message;
    return std::nullopt;
  }

private:
  std::string_view Text;
  size_t Pos = 0;
  bool Failed = false;
  std::string Message;

  bool fail(const std::string &What) {
    if (!Failed) {
      Failed = true;
      Message = "at byte " + std::to_string(Pos) + ": " + What;
    }
    return false;
  }

  bool atEnd() const { return Pos >= Text.size(); }
  char peek() const { return atEnd() ? '\0' : Text[Pos]; }

  void skipWhitespace() {
    while (!atEnd() && (Text[Pos] == ' ' || Text[Pos] == '\t' ||
                        Text[Pos] == '\n' || Text[Pos] == '\r'))
      ++Pos;
  }

  bool expectLiteral(std::string_view Word) {
    if (Text.substr(Pos, Word.size()) != Word)
      return fail("invalid literal");
    Pos += Word.size();
    return true;
  }

  bool parseValue(Value &Out, int Depth) {
    if (atEnd())
      return fail("unexpected end of input, expected a value");
    switch (peek()) {
    case '{':
      return parseObject(Out, Depth);
    case '[':
      return parseArray(Out, Depth);
    case '"':
      Out.K = Value::Kind::String;
      return parseString(Out.Text);
    case 't':
      Out.K = Value::Kind::Bool;
      Out.Bool = true;
      return expectLiteral("true");
    case 'f':
      Out.K = Value::Kind::Bool;
      Out.Bool = false;
      return expectLiteral("false");
    case 'n':
      Out.K = Value::Kind::Null;
      return expectLiteral("null");
    default:
      if (peek() == '-' || (peek() >= '0' && peek() <= '9'))
        return parseNumber(Out);
      return fail(std::string("unexpected character '") + printable(peek()) +
                  "', expected a value");
    }
  }

  static std::string printable(char C) {
    auto U = static_cast<unsigned char>(C);
    if (U >= 0x20 && U < 0x7F)
      return std::string(1, C);
    static const char Hex[] = "0123456789abcdef";
    return std::string("\\x") + Hex[U >> 4] + Hex[U & 15];
  }

  bool parseObject(Value &Out, int Depth) {
    if (Depth >= MaxDepth)
      return fail("nesting deeper than " + std::to_string(MaxDepth));
    Out.K = Value::Kind::Object;
    ++Pos; // '{'
    skipWhitespace();
    if (peek() == '}') {
      ++Pos;
      return true;
    }
    while (true) {
      skipWhitespace();
      if (peek() != '"')
        return fail("expected a string key in an object");
      std::string Key;
      if (!parseString(Key))
        return false;
      skipWhitespace();
      if (peek() != ':')
        return fail("expected ':' after an object key");
      ++Pos;
      skipWhitespace();
      Value Member;
      if (!parseValue(Member, Depth + 1))
        return false;
      Out.Members.emplace_back(std::move(Key), std::move(Member));
      skipWhitespace();
      if (peek() == ',') {
        ++Pos;
        continue;
      }
      if (peek() == '}') {
        ++Pos;
        return true;
      }
      return fail("expected ',' or '}' in an object");
    }
  }

  bool parseArray(Value &Out, int Depth) {
    if (Depth >= MaxDepth)
      return fail("nesting deeper than " + std::to_string(MaxDepth));
    Out.K = Value::Kind::Array;
    ++Pos; // '['
    skipWhitespace();
    if (peek() == ']') {
      ++Pos;
      return true;
    }
    while (true) {
      skipWhitespace();
      Value Element;
      if (!parseValue(Element, Depth + 1))
        return false;
      Out.Elements.push_back(std::move(Element));
      skipWhitespace();
      if (peek() == ',') {
        ++Pos;
        continue;
      }
      if (peek() == ']') {
        ++Pos;
        return true;
      }
      return fail("expected ',' or ']' in an array");
    }
  }

  bool parseNumber(Value &Out) {
    size_t Start = Pos;
    auto digits = [&] {
      size_t First = Pos;
      while (!atEnd() && Text[Pos] >= '0' && Text[Pos] <= '9')
        ++Pos;
      return Pos - First;
    };
    if (peek() == '-')
      ++Pos;
    if (peek() == '0') {
      ++Pos;
      if (peek() >= '0' && peek() <= '9')
        return fail("leading zero in a number");
    } else if (digits() == 0) {
      return fail("expected a digit");
    }
    if (peek() == '.') {
      ++Pos;
      if (digits() == 0)
        return fail("expected a digit after '.'");
    }
    if (peek() == 'e' || peek() == 'E') {
      ++Pos;
      if (peek() == '+' || peek() == '-')
        ++Pos;
      if (digits() == 0)
        return fail("expected a digit in the exponent");
    }
    Out.K = Value::Kind::Number;
    Out.Text = std::string(Text.substr(Start, Pos - Start));
    return true;
  }

  bool parseHex4(uint32_t &Out) {
    if (Text.size() - Pos < 4)
      return fail("truncated \\u escape");
    Out = 0;
    for (int I = 0; I < 4; ++I) {
      char C = Text[Pos++];
      Out <<= 4;
      if (C >= '0' && C <= '9')
        Out |= static_cast<uint32_t>(C - '0');
      else if (C >= 'a' && C <= 'f')
        Out |= static_cast<uint32_t>(C - 'a' + 10);
      else if (C >= 'A' && C <= 'F')
        Out |= static_cast<uint32_t>(C - 'A' + 10);
      else
        return fail("invalid hex digit in a \\u escape");
    }
    return true;
  }

  static void appendUtf8(std::string &Out, uint32_t CP) {
    if (CP < 0x80) {
      Out += static_cast<char>(CP);
    } else if (CP < 0x800) {
      Out += static_cast<char>(0xC0 | (CP >> 6));
      Out += static_cast<char>(0x80 | (CP & 0x3F));
    } else if (CP < 0x10000) {
      Out += static_cast<char>(0xE0 | (CP >> 12));
      Out += static_cast<char>(0x80 | ((CP >> 6) & 0x3F));
      Out += static_cast<char>(0x80 | (CP & 0x3F));
    } else {
      Out += static_cast<char>(0xF0 | (CP >> 18));
      Out += static_cast<char>(0x80 | ((CP >> 12) & 0x3F));
      Out += static_cast<char>(0x80 | ((CP >> 6) & 0x3F));
      Out += static_cast<char>(0x80 | (CP & 0x3F));
    }
  }

  /// Validates one UTF-8 sequence starting at Pos (a byte >= 0x80) and
  /// copies it to \p Out.
  bool copyUtf8Sequence(std::string &Out) {
    size_t Length;
    if (const char *Problem = checkUtf8Sequence(Text, Pos, Length))
      return fail(std::string(Problem) + " in a string");
    Out.append(Text.substr(Pos, Length));
    Pos += Length;
    return true;
  }

  bool parseString(std::string &Out) {
    ++Pos; // '"'
    Out.clear();
    while (true) {
      if (atEnd())
        return fail("unterminated string");
      char C = Text[Pos];
      auto U = static_cast<unsigned char>(C);
      if (C == '"') {
        ++Pos;
        return true;
      }
      if (U < 0x20)
        return fail("control character in a string");
      if (U >= 0x80) {
        if (!copyUtf8Sequence(Out))
          return false;
        continue;
      }
      if (C != '\\') {
        Out += C;
        ++Pos;
        continue;
      }
      ++Pos; // '\\'
      if (atEnd())
        return fail("unterminated string");
      char Esc = Text[Pos++];
      switch (Esc) {
      case '"':
      case '\\':
      case '/':
        Out += Esc;
        break;
      case 'b':
        Out += '\b';
        break;
      case 'f':
        Out += '\f';
        break;
      case 'n':
        Out += '\n';
        break;
      case 'r':
        Out += '\r';
        break;
      case 't':
        Out += '\t';
        break;
      case 'u': {
        uint32_t CP;
        if (!parseHex4(CP))
          return false;
        if (CP >= 0xDC00 && CP <= 0xDFFF)
          return fail("unpaired low surrogate in a \\u escape");
        if (CP >= 0xD800 && CP <= 0xDBFF) {
          uint32_t Low;
          if (Text.substr(Pos, 2) != "\\u")
            return fail("unpaired high surrogate in a \\u escape");
          Pos += 2;
          if (!parseHex4(Low))
            return false;
          if (Low < 0xDC00 || Low > 0xDFFF)
            return fail("unpaired high surrogate in a \\u escape");
          CP = 0x10000 + ((CP - 0xD800) << 10) + (Low - 0xDC00);
        }
        appendUtf8(Out, CP);
        break;
      }
      default:
        --Pos;
        return fail(std::string("invalid escape '\\") + printable(Esc) +
                    "' in a string");
      }
    }
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
  if (!V.isNumber() || V.Text.empty())
    return std::nullopt;
  std::string_view Digits = V.Text;
  bool Negative = Digits.front() == '-';
  if (Negative)
    Digits.remove_prefix(1);
  if (Digits.empty())
    return std::nullopt;
  // Magnitudes up to 2^63 (the most negative int64) accumulate in uint64.
  uint64_t Magnitude = 0;
  const uint64_t Limit =
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1;
  for (char C : Digits) {
    if (C < '0' || C > '9')
      return std::nullopt; // A fraction or an exponent.
    auto D = static_cast<uint64_t>(C - '0');
    if (Magnitude > (Limit - D) / 10)
      return std::nullopt;
    Magnitude = Magnitude * 10 + D;
  }
  if (Negative)
    return Magnitude == Limit ? std::numeric_limits<int64_t>::min()
                              : -static_cast<int64_t>(Magnitude);
  if (Magnitude == Limit)
    return std::nullopt;
  return static_cast<int64_t>(Magnitude);
}

std::optional<Value> parse(std::string_view Text, std::string &Error) {
  return Parser(Text).run(Error);
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

void appendQuoted(std::string &Out, std::string_view Text) {
  static const char Hex[] = "0123456789abcdef";
  Out += '"';
  for (char C : Text) {
    auto U = static_cast<unsigned char>(C);
    switch (C) {
    case '"':
      Out += "\\\"";
      break;
    case '\\':
      Out += "\\\\";
      break;
    case '\b':
      Out += "\\b";
      break;
    case '\f':
      Out += "\\f";
      break;
    case '\n':
      Out += "\\n";
      break;
    case '\r':
      Out += "\\r";
      break;
    case '\t':
      Out += "\\t";
      break;
    default:
      if (U < 0x20) {
        Out += "\\u00";
        Out += Hex[U >> 4];
        Out += Hex[U & 15];
      } else {
        Out += C;
      }
    }
  }
  Out += '"';
}

} // namespace memfmt::io::json
