// The JSON functions (MySQL 8.0's): JSON_EXTRACT (and the -> / ->> operators, which the
// parser turns into it), JSON_UNQUOTE, JSON_OBJECT, JSON_ARRAY, JSON_CONTAINS,
// JSON_SET / JSON_INSERT / JSON_REPLACE, JSON_VALID, JSON_LENGTH, JSON_KEYS, JSON_TYPE,
// JSON_QUOTE, on json_value.h. JSON results are JSON-typed SqlValues (of_json).
#include <algorithm>
#include <cctype>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/function_family.h"
#include "sql-frontend/executor/json_value.h"

namespace duo::sql::executor::functions_internal {

namespace {

std::string lower_name(const Args& args) {
  std::string name = args.name();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// Argument `i` as a JSON document: NULL for NULL; 3141 for text that is not JSON.
std::optional<JsonValue> json_argument(const Args& args, size_t i) {
  const SqlValue v = args.value(i);
  if (v.is_null()) return std::nullopt;
  if (v.kind != SqlValue::Kind::kString) {
    throw SqlException(3146, "22032",
                       "Invalid data type for JSON data in argument " + std::to_string(i + 1) +
                           " to function " + lower_name(args) +
                           "; a JSON string or JSON type is required.");
  }
  JsonParseError error;
  std::optional<JsonValue> parsed = parse_json(v.s, &error);
  if (!parsed) {
    throw SqlException(3141, "22032",
                       "Invalid JSON text in argument " + std::to_string(i + 1) +
                           " to function " + lower_name(args) + ": \"" + error.message +
                           "\" at position " + std::to_string(error.position) + ".");
  }
  return parsed;
}

// Argument `i` as a path: nullopt for NULL; 3143 when malformed.
std::optional<JsonPath> path_argument(const Args& args, size_t i) {
  const SqlValue v = args.value(i);
  if (v.is_null()) return std::nullopt;
  size_t position = 0;
  std::optional<JsonPath> path = parse_json_path(v.to_text(), &position);
  if (!path) {
    throw SqlException(3143, "42000",
                       "Invalid JSON path expression. The error is around character position " +
                           std::to_string(position) + ".");
  }
  return path;
}

// A path without wildcards, for the functions that change documents (3149).
std::optional<JsonPath> plain_path_argument(const Args& args, size_t i) {
  std::optional<JsonPath> path = path_argument(args, i);
  if (path && path->has_wildcard()) {
    throw SqlException(3149, "42000",
                       "In this situation, path expressions may not contain the * and ** "
                       "tokens or an array range.");
  }
  return path;
}

SqlValue json_result(const JsonValue& value) { return SqlValue::of_json(to_json_text(value)); }

SqlValue json_extract(const Args& args) {
  args.need_at_least(2);
  std::optional<JsonValue> doc = json_argument(args, 0);
  std::vector<JsonPath> paths;
  bool null_path = false;
  for (size_t k = 1; k < args.size(); ++k) {
    std::optional<JsonPath> path = path_argument(args, k);
    if (!path) null_path = true;
    else paths.push_back(std::move(*path));
  }
  if (!doc || null_path) return SqlValue::null();
  const bool wrap = paths.size() > 1 || paths.front().has_wildcard();
  JsonValue matches = JsonValue::empty_array();
  for (const JsonPath& path : paths) {
    for (const JsonValue* found : json_path_find(*doc, path)) matches.array.push_back(*found);
  }
  if (matches.array.empty()) return SqlValue::null();
  if (!wrap) return json_result(matches.array.front());
  return json_result(matches);
}

SqlValue json_unquote(const Args& args) {
  args.need(1);
  const SqlValue v = args.value(0);
  if (v.is_null()) return SqlValue::null();
  const std::string text = v.to_text();
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    JsonParseError error;
    std::optional<JsonValue> parsed = parse_json(text, &error);
    if (!parsed) {
      throw SqlException(3141, "22032",
                         "Invalid JSON text in argument 1 to function json_unquote: \"" +
                             error.message + "\" at position " + std::to_string(error.position) +
                             ".");
    }
    return SqlValue::of_string(parsed->s);
  }
  return SqlValue::of_string(text);
}

SqlValue json_object(const Args& args) {
  if (args.size() % 2 != 0) throw_parameter_count(lower_name(args));
  JsonValue object = JsonValue::empty_object();
  for (size_t k = 0; k < args.size(); k += 2) {
    const SqlValue key = args.value(k);
    if (key.is_null()) {
      throw SqlException(3158, "22032", "JSON documents may not contain NULL member names.");
    }
    object.set_member(key.to_text(), json_of_sql(args.value(k + 1)));
  }
  return json_result(object);
}

SqlValue json_array(const Args& args) {
  JsonValue array = JsonValue::empty_array();
  for (size_t k = 0; k < args.size(); ++k) array.array.push_back(json_of_sql(args.value(k)));
  return json_result(array);
}

SqlValue json_contains_call(const Args& args) {
  args.need_between(2, 3);
  std::optional<JsonValue> target = json_argument(args, 0);
  std::optional<JsonValue> candidate = json_argument(args, 1);
  if (!target || !candidate) return SqlValue::null();
  if (args.size() == 3) {
    std::optional<JsonPath> path = plain_path_argument(args, 2);
    if (!path) return SqlValue::null();
    const std::vector<const JsonValue*> found = json_path_find(*target, *path);
    if (found.empty()) return SqlValue::null();
    return SqlValue::of_int(json_contains(*found.front(), *candidate) ? 1 : 0);
  }
  return SqlValue::of_int(json_contains(*target, *candidate) ? 1 : 0);
}

// JSON_SET (replace and insert), JSON_INSERT (insert only), JSON_REPLACE (replace only).
SqlValue json_modify(const Args& args, bool replace, bool insert) {
  if (args.size() < 3 || args.size() % 2 == 0) throw_parameter_count(lower_name(args));
  std::optional<JsonValue> doc = json_argument(args, 0);
  if (!doc) return SqlValue::null();
  for (size_t k = 1; k < args.size(); k += 2) {
    std::optional<JsonPath> path = plain_path_argument(args, k);
    if (!path) return SqlValue::null();
    json_path_set(&*doc, *path, json_of_sql(args.value(k + 1)), replace, insert);
  }
  return json_result(*doc);
}

// The value at the optional path argument `i` of `doc` (nullptr: none there).
const JsonValue* at_optional_path(const Args& args, const JsonValue& doc, size_t i,
                                  bool* null_path) {
  if (args.size() <= i) return &doc;
  std::optional<JsonPath> path = plain_path_argument(args, i);
  if (!path) {
    *null_path = true;
    return nullptr;
  }
  const std::vector<const JsonValue*> found = json_path_find(doc, *path);
  return found.empty() ? nullptr : found.front();
}

SqlValue json_length(const Args& args) {
  args.need_between(1, 2);
  std::optional<JsonValue> doc = json_argument(args, 0);
  if (!doc) return SqlValue::null();
  bool null_path = false;
  const JsonValue* v = at_optional_path(args, *doc, 1, &null_path);
  if (v == nullptr) return SqlValue::null();
  if (v->type == JsonValue::Type::kArray) return SqlValue::of_int(static_cast<int64_t>(v->array.size()));
  if (v->type == JsonValue::Type::kObject) {
    return SqlValue::of_int(static_cast<int64_t>(v->object.size()));
  }
  return SqlValue::of_int(1);
}

SqlValue json_keys(const Args& args) {
  args.need_between(1, 2);
  std::optional<JsonValue> doc = json_argument(args, 0);
  if (!doc) return SqlValue::null();
  bool null_path = false;
  const JsonValue* v = at_optional_path(args, *doc, 1, &null_path);
  if (v == nullptr || v->type != JsonValue::Type::kObject) return SqlValue::null();
  JsonValue keys = JsonValue::empty_array();
  for (const auto& [key, member] : v->object) keys.array.push_back(JsonValue::of_string(key));
  return json_result(keys);
}

}  // namespace

std::optional<SqlValue> call_json_function(const Args& args) {
  const std::string& name = args.name();
  if (!name.starts_with("JSON_")) return std::nullopt;
  if (name == "JSON_EXTRACT") return json_extract(args);
  if (name == "JSON_UNQUOTE") return json_unquote(args);
  if (name == "JSON_OBJECT") return json_object(args);
  if (name == "JSON_ARRAY") return json_array(args);
  if (name == "JSON_CONTAINS") return json_contains_call(args);
  if (name == "JSON_SET") return json_modify(args, true, true);
  if (name == "JSON_INSERT") return json_modify(args, false, true);
  if (name == "JSON_REPLACE") return json_modify(args, true, false);
  if (name == "JSON_LENGTH") return json_length(args);
  if (name == "JSON_KEYS") return json_keys(args);
  if (name == "JSON_VALID") {
    args.need(1);
    const SqlValue v = args.value(0);
    if (v.is_null()) return SqlValue::null();
    if (v.is_json) return SqlValue::of_int(1);
    if (v.kind != SqlValue::Kind::kString) return SqlValue::of_int(0);
    JsonParseError error;
    return SqlValue::of_int(parse_json(v.s, &error) ? 1 : 0);
  }
  if (name == "JSON_TYPE") {
    args.need(1);
    std::optional<JsonValue> doc = json_argument(args, 0);
    if (!doc) return SqlValue::null();
    return SqlValue::of_string(json_type_name(*doc));
  }
  if (name == "JSON_QUOTE") {
    args.need(1);
    const SqlValue v = args.value(0);
    if (v.is_null()) return SqlValue::null();
    return SqlValue::of_json(to_json_text(JsonValue::of_string(v.to_text())));
  }
  return std::nullopt;
}

}  // namespace duo::sql::executor::functions_internal
