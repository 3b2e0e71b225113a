// JSON values: parsing, MySQL's normalized text, comparison, paths; see json_value.h.
#include "sql-frontend/executor/json_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace duo::sql::executor {

namespace {

// MySQL's limit on nesting (3157 beyond it; a parse error here).
constexpr int kDepthMax = 100;

class Parser {
 public:
  Parser(std::string_view text, JsonParseError* error) : text_(text), error_(error) {}

  std::optional<JsonValue> document() {
    skip_space();
    if (at_ >= text_.size()) return fail("The document is empty.", at_);
    JsonValue value;
    if (!parse_value(&value, 0)) return std::nullopt;
    skip_space();
    if (at_ < text_.size()) {
      return fail("The document root must not be followed by other values.", at_);
    }
    return value;
  }

 private:
  std::nullopt_t fail(const char* message, size_t position) {
    if (!failed_) {
      error_->message = message;
      error_->position = position;
      failed_ = true;
    }
    return std::nullopt;
  }
  bool failed(const char* message, size_t position) {
    fail(message, position);
    return false;
  }
  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
      ++at_;
    }
  }
  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  bool parse_value(JsonValue* out, int depth) {
    if (depth >= kDepthMax) return failed("The JSON document exceeds the maximum depth.", at_);
    if (at_ >= text_.size()) return failed("Invalid value.", at_);
    const char c = text_[at_];
    if (c == '{') return parse_object(out, depth);
    if (c == '[') return parse_array(out, depth);
    if (c == '"') {
      out->type = JsonValue::Type::kString;
      return parse_string(&out->s);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number(out);
    const size_t start = at_;
    if (literal("true")) {
      *out = JsonValue::of_bool(true);
      return true;
    }
    if (literal("false")) {
      *out = JsonValue::of_bool(false);
      return true;
    }
    if (literal("null")) {
      *out = JsonValue();
      return true;
    }
    return failed("Invalid value.", start);
  }

  bool parse_object(JsonValue* out, int depth) {
    *out = JsonValue::empty_object();
    ++at_;
    skip_space();
    if (at_ < text_.size() && text_[at_] == '}') {
      ++at_;
      return true;
    }
    for (;;) {
      if (at_ >= text_.size() || text_[at_] != '"') {
        return failed("Missing a name for object member.", at_);
      }
      std::string key;
      if (!parse_string(&key)) return false;
      skip_space();
      if (at_ >= text_.size() || text_[at_] != ':') {
        return failed("Missing a colon after a name of object member.", at_);
      }
      ++at_;
      skip_space();
      JsonValue value;
      if (!parse_value(&value, depth + 1)) return false;
      out->set_member(std::move(key), std::move(value));  // a duplicate: the last wins
      skip_space();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        skip_space();
        continue;
      }
      if (at_ < text_.size() && text_[at_] == '}') {
        ++at_;
        return true;
      }
      return failed("Missing a comma or '}' after an object member.", at_);
    }
  }

  bool parse_array(JsonValue* out, int depth) {
    *out = JsonValue::empty_array();
    ++at_;
    skip_space();
    if (at_ < text_.size() && text_[at_] == ']') {
      ++at_;
      return true;
    }
    for (;;) {
      JsonValue value;
      if (!parse_value(&value, depth + 1)) return false;
      out->array.push_back(std::move(value));
      skip_space();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        skip_space();
        continue;
      }
      if (at_ < text_.size() && text_[at_] == ']') {
        ++at_;
        return true;
      }
      return failed("Missing a comma or ']' after an array element.", at_);
    }
  }

  static void append_utf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool hex4(uint32_t* out) {
    if (at_ + 4 > text_.size()) return failed("Incorrect hex digit after \\u escape in string.", at_);
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = text_[at_ + k];
      v <<= 4;
      if (h >= '0' && h <= '9') {
        v |= static_cast<uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        v |= static_cast<uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        v |= static_cast<uint32_t>(h - 'A' + 10);
      } else {
        return failed("Incorrect hex digit after \\u escape in string.", at_);
      }
    }
    at_ += 4;
    *out = v;
    return true;
  }

  bool parse_string(std::string* out) {
    const size_t start = at_;
    ++at_;  // the opening quote
    out->clear();
    for (;;) {
      if (at_ >= text_.size()) return failed("Missing a closing quotation mark in string.", start);
      const char c = text_[at_];
      if (c == '"') {
        ++at_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        return failed("Invalid encoding in string.", at_);
      }
      if (c != '\\') {
        *out += c;
        ++at_;
        continue;
      }
      const size_t escape_at = at_;
      ++at_;
      if (at_ >= text_.size()) return failed("Invalid escape character in string.", escape_at);
      const char e = text_[at_++];
      switch (e) {
        case '"': *out += '"'; break;
        case '\\': *out += '\\'; break;
        case '/': *out += '/'; break;
        case 'b': *out += '\b'; break;
        case 'f': *out += '\f'; break;
        case 'n': *out += '\n'; break;
        case 'r': *out += '\r'; break;
        case 't': *out += '\t'; break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(&cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t low = 0;
            if (at_ + 1 >= text_.size() || text_[at_] != '\\' || text_[at_ + 1] != 'u') {
              return failed("The surrogate pair in string is invalid.", at_);
            }
            at_ += 2;
            if (!hex4(&low)) return false;
            if (low < 0xDC00 || low > 0xDFFF) {
              return failed("The surrogate pair in string is invalid.", at_);
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          return failed("Invalid escape character in string.", escape_at);
      }
    }
  }

  bool parse_number(JsonValue* out) {
    const size_t start = at_;
    if (text_[at_] == '-') ++at_;
    if (at_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[at_]))) {
      return failed("Invalid value.", start);
    }
    if (text_[at_] == '0') {
      ++at_;
    } else {
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
    }
    bool integral = true;
    if (at_ < text_.size() && text_[at_] == '.') {
      integral = false;
      ++at_;
      if (at_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[at_]))) {
        return failed("Missing fraction part in number.", at_);
      }
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      integral = false;
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      if (at_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[at_]))) {
        return failed("Missing exponent in number.", at_);
      }
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
    }
    const std::string_view number = text_.substr(start, at_ - start);
    if (integral) {
      int64_t i = 0;
      if (std::from_chars(number.data(), number.data() + number.size(), i).ec == std::errc()) {
        *out = JsonValue::of_int(i);
        return true;
      }
      uint64_t u = 0;
      if (number[0] != '-' &&
          std::from_chars(number.data(), number.data() + number.size(), u).ec == std::errc()) {
        out->type = JsonValue::Type::kUInt;
        out->u = u;
        return true;
      }
    }
    const std::string copy(number);
    const double d = std::strtod(copy.c_str(), nullptr);
    if (std::isinf(d)) return failed("Number too big to be stored in double.", start);
    *out = JsonValue::of_double(d);
    return true;
  }

  std::string_view text_;
  JsonParseError* error_;
  size_t at_ = 0;
  bool failed_ = false;
};

void append_json_string(std::string* out, std::string_view s) {
  *out += '"';
  for (char c : s) {
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof(buffer), "\\u%04x", static_cast<unsigned>(c));
          *out += buffer;
        } else {
          *out += c;
        }
    }
  }
  *out += '"';
}

// MySQL prints a JSON double in its shortest exact form, with ".0" when integral and
// exponents as "1e100".
std::string double_text(double d) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), d);
  std::string text(buffer, result.ptr);
  if (const size_t plus = text.find("e+"); plus != std::string::npos) text.erase(plus + 1, 1);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

void write_json(std::string* out, const JsonValue& v) {
  switch (v.type) {
    case JsonValue::Type::kNull: *out += "null"; break;
    case JsonValue::Type::kBool: *out += v.b ? "true" : "false"; break;
    case JsonValue::Type::kInt: *out += std::to_string(v.i); break;
    case JsonValue::Type::kUInt: *out += std::to_string(v.u); break;
    case JsonValue::Type::kDouble: *out += double_text(v.d); break;
    case JsonValue::Type::kString: append_json_string(out, v.s); break;
    case JsonValue::Type::kArray:
      *out += '[';
      for (size_t k = 0; k < v.array.size(); ++k) {
        if (k > 0) *out += ", ";
        write_json(out, v.array[k]);
      }
      *out += ']';
      break;
    case JsonValue::Type::kObject:
      *out += '{';
      for (size_t k = 0; k < v.object.size(); ++k) {
        if (k > 0) *out += ", ";
        append_json_string(out, v.object[k].first);
        *out += ": ";
        write_json(out, v.object[k].second);
      }
      *out += '}';
      break;
  }
}

bool is_number(const JsonValue& v) {
  return v.type == JsonValue::Type::kInt || v.type == JsonValue::Type::kUInt ||
         v.type == JsonValue::Type::kDouble;
}

// MySQL's precedence of JSON types in comparisons (higher compares greater).
int type_rank(const JsonValue& v) {
  switch (v.type) {
    case JsonValue::Type::kNull: return 0;
    case JsonValue::Type::kInt:
    case JsonValue::Type::kUInt:
    case JsonValue::Type::kDouble: return 1;
    case JsonValue::Type::kString: return 2;
    case JsonValue::Type::kObject: return 3;
    case JsonValue::Type::kArray: return 4;
    case JsonValue::Type::kBool: return 5;
  }
  return 0;
}

int compare_numbers(const JsonValue& a, const JsonValue& b) {
  using T = JsonValue::Type;
  if (a.type == T::kInt && b.type == T::kInt) return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
  if (a.type == T::kUInt && b.type == T::kUInt) return a.u < b.u ? -1 : a.u > b.u ? 1 : 0;
  if (a.type == T::kInt && b.type == T::kUInt) {
    return a.i < 0 ? -1 : static_cast<uint64_t>(a.i) < b.u ? -1 : static_cast<uint64_t>(a.i) > b.u;
  }
  if (a.type == T::kUInt && b.type == T::kInt) return -compare_numbers(b, a);
  const auto as_double = [](const JsonValue& v) {
    return v.type == T::kInt ? static_cast<double>(v.i)
           : v.type == T::kUInt ? static_cast<double>(v.u)
                                : v.d;
  };
  const double x = as_double(a), y = as_double(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

bool parse_path_key(std::string_view text, size_t* at, std::string* key) {
  // A quoted key ("a b") or an ECMAScript-style identifier.
  if (*at < text.size() && text[*at] == '"') {
    size_t end = *at + 1;
    while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
    if (end >= text.size()) return false;
    JsonParseError error;
    std::optional<JsonValue> parsed = parse_json(text.substr(*at, end + 1 - *at), &error);
    if (!parsed) return false;
    *key = parsed->s;
    *at = end + 1;
    return true;
  }
  const size_t start = *at;
  while (*at < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[*at]);
    if (!(std::isalnum(c) || c == '_' || c == '$' || c >= 0x80)) break;
    ++*at;
  }
  if (*at == start || std::isdigit(static_cast<unsigned char>(text[start]))) return false;
  *key = std::string(text.substr(start, *at - start));
  return true;
}

void find(const JsonValue& value, const std::vector<JsonPathLeg>& legs, size_t leg,
          std::vector<const JsonValue*>* out) {
  if (leg == legs.size()) {
    if (std::find(out->begin(), out->end(), &value) == out->end()) out->push_back(&value);
    return;
  }
  const JsonPathLeg& l = legs[leg];
  switch (l.kind) {
    case JsonPathLeg::Kind::kMember:
      if (const JsonValue* m = value.member(l.name)) find(*m, legs, leg + 1, out);
      break;
    case JsonPathLeg::Kind::kAnyMember:
      for (const auto& [key, member] : value.object) find(member, legs, leg + 1, out);
      break;
    case JsonPathLeg::Kind::kIndex:
      if (value.type == JsonValue::Type::kArray) {
        if (l.index < value.array.size()) find(value.array[l.index], legs, leg + 1, out);
      } else if (l.index == 0) {
        find(value, legs, leg + 1, out);  // MySQL: a scalar is an array of itself at [0]
      }
      break;
    case JsonPathLeg::Kind::kLastIndex:
      if (value.type == JsonValue::Type::kArray) {
        if (l.index < value.array.size()) {
          find(value.array[value.array.size() - 1 - l.index], legs, leg + 1, out);
        }
      } else if (l.index == 0) {
        find(value, legs, leg + 1, out);
      }
      break;
    case JsonPathLeg::Kind::kAnyIndex:
      for (const JsonValue& element : value.array) find(element, legs, leg + 1, out);
      break;
    case JsonPathLeg::Kind::kAnyDepth:
      find(value, legs, leg + 1, out);
      for (const JsonValue& element : value.array) find(element, legs, leg, out);
      for (const auto& [key, member] : value.object) find(member, legs, leg, out);
      break;
  }
}

}  // namespace

JsonValue JsonValue::of_string(std::string text) {
  JsonValue v;
  v.type = Type::kString;
  v.s = std::move(text);
  return v;
}
JsonValue JsonValue::of_int(int64_t value) {
  JsonValue v;
  v.type = Type::kInt;
  v.i = value;
  return v;
}
JsonValue JsonValue::of_double(double value) {
  JsonValue v;
  v.type = Type::kDouble;
  v.d = value;
  return v;
}
JsonValue JsonValue::of_bool(bool value) {
  JsonValue v;
  v.type = Type::kBool;
  v.b = value;
  return v;
}
JsonValue JsonValue::empty_array() {
  JsonValue v;
  v.type = Type::kArray;
  return v;
}
JsonValue JsonValue::empty_object() {
  JsonValue v;
  v.type = Type::kObject;
  return v;
}

const JsonValue* JsonValue::member(std::string_view key) const {
  for (const auto& [name, value] : object) {
    if (name == key) return &value;
  }
  return nullptr;
}

JsonValue* JsonValue::member(std::string_view key) {
  for (auto& [name, value] : object) {
    if (name == key) return &value;
  }
  return nullptr;
}

void JsonValue::set_member(std::string key, JsonValue value) {
  if (JsonValue* existing = member(key)) {
    *existing = std::move(value);
    return;
  }
  const auto at = std::lower_bound(
      object.begin(), object.end(), key,
      [](const std::pair<std::string, JsonValue>& m, const std::string& k) {
        return json_key_less(m.first, k);
      });
  object.emplace(at, std::move(key), std::move(value));
}

bool json_key_less(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

std::optional<JsonValue> parse_json(std::string_view text, JsonParseError* error) {
  return Parser(text, error).document();
}

std::string to_json_text(const JsonValue& value) {
  std::string out;
  write_json(&out, value);
  return out;
}

const char* json_type_name(const JsonValue& value) {
  switch (value.type) {
    case JsonValue::Type::kNull: return "NULL";
    case JsonValue::Type::kBool: return "BOOLEAN";
    case JsonValue::Type::kInt: return "INTEGER";
    case JsonValue::Type::kUInt: return "UNSIGNED INTEGER";
    case JsonValue::Type::kDouble: return "DOUBLE";
    case JsonValue::Type::kString: return "STRING";
    case JsonValue::Type::kArray: return "ARRAY";
    case JsonValue::Type::kObject: return "OBJECT";
  }
  return "NULL";
}

int compare_json(const JsonValue& a, const JsonValue& b) {
  if (is_number(a) && is_number(b)) return compare_numbers(a, b);
  const int ra = type_rank(a), rb = type_rank(b);
  if (ra != rb) return ra < rb ? -1 : 1;
  switch (a.type) {
    case JsonValue::Type::kNull: return 0;
    case JsonValue::Type::kBool: return a.b == b.b ? 0 : a.b ? 1 : -1;
    case JsonValue::Type::kString: {
      const int c = a.s.compare(b.s);
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    case JsonValue::Type::kArray: {
      for (size_t k = 0; k < a.array.size() && k < b.array.size(); ++k) {
        if (const int c = compare_json(a.array[k], b.array[k]); c != 0) return c;
      }
      return a.array.size() < b.array.size() ? -1 : a.array.size() > b.array.size() ? 1 : 0;
    }
    case JsonValue::Type::kObject: {
      // MySQL: equal objects have the same keys with equal values; otherwise the order
      // is unspecified but fixed: compare member by member in key order.
      for (size_t k = 0; k < a.object.size() && k < b.object.size(); ++k) {
        if (a.object[k].first != b.object[k].first) {
          return json_key_less(a.object[k].first, b.object[k].first) ? -1 : 1;
        }
        if (const int c = compare_json(a.object[k].second, b.object[k].second); c != 0) return c;
      }
      return a.object.size() < b.object.size() ? -1 : a.object.size() > b.object.size() ? 1 : 0;
    }
    default:
      return 0;
  }
}

bool json_contains(const JsonValue& target, const JsonValue& candidate) {
  if (target.type == JsonValue::Type::kArray) {
    if (candidate.type == JsonValue::Type::kArray) {
      return std::all_of(candidate.array.begin(), candidate.array.end(),
                         [&](const JsonValue& c) { return json_contains(target, c); });
    }
    return std::any_of(target.array.begin(), target.array.end(),
                       [&](const JsonValue& t) { return json_contains(t, candidate); });
  }
  if (target.type == JsonValue::Type::kObject) {
    if (candidate.type != JsonValue::Type::kObject) return false;
    return std::all_of(candidate.object.begin(), candidate.object.end(), [&](const auto& m) {
      const JsonValue* t = target.member(m.first);
      return t != nullptr && json_contains(*t, m.second);
    });
  }
  if (candidate.type == JsonValue::Type::kArray || candidate.type == JsonValue::Type::kObject) {
    return false;
  }
  return compare_json(target, candidate) == 0;
}

bool JsonPath::has_wildcard() const {
  return std::any_of(legs.begin(), legs.end(), [](const JsonPathLeg& l) {
    return l.kind == JsonPathLeg::Kind::kAnyMember || l.kind == JsonPathLeg::Kind::kAnyIndex ||
           l.kind == JsonPathLeg::Kind::kAnyDepth;
  });
}

std::optional<JsonPath> parse_json_path(std::string_view text, size_t* error_position) {
  size_t at = 0;
  const auto skip_space = [&]() {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  };
  const auto fail = [&]() -> std::optional<JsonPath> {
    *error_position = at;
    return std::nullopt;
  };
  skip_space();
  if (at >= text.size() || text[at] != '$') return fail();
  ++at;
  JsonPath path;
  for (;;) {
    skip_space();
    if (at >= text.size()) break;
    JsonPathLeg leg;
    if (text[at] == '.') {
      ++at;
      skip_space();
      if (at < text.size() && text[at] == '*') {
        ++at;
        leg.kind = JsonPathLeg::Kind::kAnyMember;
      } else if (!parse_path_key(text, &at, &leg.name)) {
        return fail();
      }
    } else if (text[at] == '[') {
      ++at;
      skip_space();
      if (at < text.size() && text[at] == '*') {
        ++at;
        leg.kind = JsonPathLeg::Kind::kAnyIndex;
      } else if (text.substr(at, 4) == "last") {
        at += 4;
        leg.kind = JsonPathLeg::Kind::kLastIndex;
        skip_space();
        if (at < text.size() && text[at] == '-') {
          ++at;
          skip_space();
          const auto r = std::from_chars(text.data() + at, text.data() + text.size(), leg.index);
          if (r.ec != std::errc()) return fail();
          at = static_cast<size_t>(r.ptr - text.data());
        }
      } else {
        leg.kind = JsonPathLeg::Kind::kIndex;
        const auto r = std::from_chars(text.data() + at, text.data() + text.size(), leg.index);
        if (r.ec != std::errc()) return fail();
        at = static_cast<size_t>(r.ptr - text.data());
      }
      skip_space();
      if (at >= text.size() || text[at] != ']') return fail();
      ++at;
    } else if (text.substr(at, 2) == "**") {
      at += 2;
      leg.kind = JsonPathLeg::Kind::kAnyDepth;
    } else {
      return fail();
    }
    path.legs.push_back(std::move(leg));
  }
  if (!path.legs.empty() && path.legs.back().kind == JsonPathLeg::Kind::kAnyDepth) {
    return fail();  // "**" must be followed by a leg
  }
  return path;
}

std::vector<const JsonValue*> json_path_find(const JsonValue& root, const JsonPath& path) {
  std::vector<const JsonValue*> out;
  find(root, path.legs, 0, &out);
  return out;
}

void json_path_set(JsonValue* root, const JsonPath& path, JsonValue value, bool replace,
                   bool insert) {
  if (path.legs.empty()) {
    if (replace) *root = std::move(value);
    return;
  }
  JsonPath parent_path;
  parent_path.legs.assign(path.legs.begin(), path.legs.end() - 1);
  const std::vector<const JsonValue*> parents = json_path_find(*root, parent_path);
  if (parents.size() != 1) return;
  JsonValue* parent = const_cast<JsonValue*>(parents.front());  // found in *root, mutable
  const JsonPathLeg& last = path.legs.back();
  if (last.kind == JsonPathLeg::Kind::kMember) {
    if (parent->type != JsonValue::Type::kObject) return;
    JsonValue* existing = parent->member(last.name);
    if (existing != nullptr) {
      if (replace) *existing = std::move(value);
    } else if (insert) {
      parent->set_member(last.name, std::move(value));
    }
    return;
  }
  if (last.kind != JsonPathLeg::Kind::kIndex && last.kind != JsonPathLeg::Kind::kLastIndex) {
    return;
  }
  if (parent->type != JsonValue::Type::kArray) {
    if (last.index == 0) {
      if (replace) *parent = std::move(value);
    } else if (insert) {
      JsonValue wrapped = JsonValue::empty_array();
      wrapped.array.push_back(std::move(*parent));
      wrapped.array.push_back(std::move(value));
      *parent = std::move(wrapped);
    }
    return;
  }
  const size_t size = parent->array.size();
  if (last.kind == JsonPathLeg::Kind::kLastIndex) {
    if (last.index < size && replace) parent->array[size - 1 - last.index] = std::move(value);
    return;
  }
  if (last.index < size) {
    if (replace) parent->array[last.index] = std::move(value);
  } else if (insert) {
    parent->array.push_back(std::move(value));
  }
}

}  // namespace duo::sql::executor
