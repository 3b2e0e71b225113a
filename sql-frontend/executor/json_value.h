// JSON values for the JSON column type and the JSON_* functions: a parser of JSON text
// with MySQL's error texts and positions (rapidjson's, as MySQL reports them in 3140 and
// 3141), the normalized text MySQL prints (`{"a": 1, "b": [1, 2]}`: ", " and ": "
// separators, object keys sorted by length, then bytes, a duplicate key keeping its last
// value), MySQL's comparison of JSON values, and JSON paths ($, .key, ."key", .*, [n],
// [last], [last-n], [*], **).
//
// Why our own and not nlohmann-json (Debian's nlohmann-json3-dev): MySQL's key order,
// separators, number typing (INTEGER / UNSIGNED INTEGER / DOUBLE), error texts and
// comparison rules would all be written on top of it anyway; what remains, the parser,
// is 150 lines.
//
// A JSON column keeps the normalized text (MySQL keeps a binary form; both print the
// same). Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace duo::sql::executor {

struct JsonValue {
  enum class Type : uint8_t { kNull, kBool, kInt, kUInt, kDouble, kString, kArray, kObject };
  Type type = Type::kNull;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;
  std::vector<JsonValue> array;
  // Sorted by json_key_less, keys unique.
  std::vector<std::pair<std::string, JsonValue>> object;

  static JsonValue of_string(std::string text);
  static JsonValue of_int(int64_t v);
  static JsonValue of_double(double v);
  static JsonValue of_bool(bool v);
  static JsonValue empty_array();
  static JsonValue empty_object();
  // The member `key` of an object, or nullptr.
  const JsonValue* member(std::string_view key) const;
  JsonValue* member(std::string_view key);
  // Sets member `key` (keeping the object's order).
  void set_member(std::string key, JsonValue value);
};

// MySQL's order of object keys: shorter first, then by bytes.
bool json_key_less(std::string_view a, std::string_view b);

struct JsonParseError {
  std::string message;  // "Invalid value." ...
  size_t position = 0;  // byte offset in the text
};

// Parses JSON text; nullopt and *error on failure.
std::optional<JsonValue> parse_json(std::string_view text, JsonParseError* error);
// The normalized text.
std::string to_json_text(const JsonValue& value);
// JSON_TYPE's name: OBJECT, ARRAY, INTEGER, UNSIGNED INTEGER, DOUBLE, STRING, BOOLEAN, NULL.
const char* json_type_name(const JsonValue& value);

// MySQL's comparison of two JSON values (-1, 0, 1): numbers by value across int/uint/
// double, strings by bytes, arrays element-wise then by length, objects equal when
// they have the same members; values of different kinds by MySQL's type precedence
// (BOOLEAN > ARRAY > OBJECT > STRING > numbers > NULL).
int compare_json(const JsonValue& a, const JsonValue& b);

// JSON_CONTAINS's rule: `candidate` is in `target`.
bool json_contains(const JsonValue& target, const JsonValue& candidate);

// A parsed path: legs of member names, array indexes, wildcards.
struct JsonPathLeg {
  enum class Kind : uint8_t { kMember, kAnyMember, kIndex, kLastIndex, kAnyIndex, kAnyDepth };
  Kind kind = Kind::kMember;
  std::string name;      // kMember
  uint64_t index = 0;    // kIndex; kLastIndex: how far from the last
};
struct JsonPath {
  std::vector<JsonPathLeg> legs;
  bool has_wildcard() const;
};
// Parses "$.a[1]"; nullopt and the position of the error when malformed.
std::optional<JsonPath> parse_json_path(std::string_view text, size_t* error_position);
// The values `path` selects in `root`, in document order.
std::vector<const JsonValue*> json_path_find(const JsonValue& root, const JsonPath& path);
// Replaces (replace) or inserts (insert) the value at a path without wildcards, as
// JSON_SET does: a missing last member is added to its object, an index past an
// array's end appends, a non-array at an index leg is wrapped in an array.
void json_path_set(JsonValue* root, const JsonPath& path, JsonValue value, bool replace,
                   bool insert);

}  // namespace duo::sql::executor
