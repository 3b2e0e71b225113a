// JSON values: MySQL's normalized text (separators, key order, duplicate keys, number
// forms), parse errors with rapidjson's texts and positions, comparison, containment
// and paths.
#include "sql-frontend/executor/json_value.h"

#include <gtest/gtest.h>

namespace duo::sql::executor {
namespace {

std::string normalized(std::string_view text) {
  JsonParseError error;
  std::optional<JsonValue> v = parse_json(text, &error);
  if (!v) return "error: " + error.message + " @" + std::to_string(error.position);
  return to_json_text(*v);
}

JsonValue json(std::string_view text) {
  JsonParseError error;
  std::optional<JsonValue> v = parse_json(text, &error);
  EXPECT_TRUE(v.has_value()) << text << ": " << error.message;
  return v ? *v : JsonValue();
}

TEST(JsonValueTest, PrintsAsMysql) {
  EXPECT_EQ(normalized(R"({"b":[1,2],"a":1})"), R"({"a": 1, "b": [1, 2]})");
  // Keys: shorter first, then by bytes; a duplicate keeps its last value.
  EXPECT_EQ(normalized(R"({"bb":1,"a":2,"c":3,"a":4})"), R"({"a": 4, "c": 3, "bb": 1})");
  EXPECT_EQ(normalized(" [ true , false , null ] "), "[true, false, null]");
  EXPECT_EQ(normalized("1.5"), "1.5");
  EXPECT_EQ(normalized("1e2"), "100.0");
  EXPECT_EQ(normalized("-0.25e-3"), "-0.00025");
  EXPECT_EQ(normalized("1E100"), "1e100");
  EXPECT_EQ(normalized("18446744073709551615"), "18446744073709551615");
  EXPECT_EQ(normalized("-9223372036854775808"), "-9223372036854775808");
  EXPECT_EQ(normalized(R"("a\"b\\c\n\u00e9\ud83d\ude00/")"), "\"a\\\"b\\\\c\\n\xc3\xa9\xf0\x9f\x98\x80/\"");
  EXPECT_EQ(normalized("{}"), "{}");
  EXPECT_EQ(normalized("[]"), "[]");
}

TEST(JsonValueTest, ErrorsNameTheProblemAndPosition) {
  EXPECT_EQ(normalized(""), "error: The document is empty. @0");
  EXPECT_EQ(normalized("abc"), "error: Invalid value. @0");
  EXPECT_EQ(normalized("[1,]"), "error: Invalid value. @3");
  EXPECT_EQ(normalized("{1:2}"), "error: Missing a name for object member. @1");
  EXPECT_EQ(normalized(R"({"a" 2})"), "error: Missing a colon after a name of object member. @5");
  EXPECT_EQ(normalized(R"({"a":2 "b":3})"), "error: Missing a comma or '}' after an object member. @7");
  EXPECT_EQ(normalized("[1 2]"), "error: Missing a comma or ']' after an array element. @3");
  EXPECT_EQ(normalized("[1] x"), "error: The document root must not be followed by other values. @4");
  EXPECT_EQ(normalized(R"("abc)"), "error: Missing a closing quotation mark in string. @0");
  EXPECT_EQ(normalized(R"("\x")"), "error: Invalid escape character in string. @1");
  EXPECT_EQ(normalized("1."), "error: Missing fraction part in number. @2");
  EXPECT_EQ(normalized(std::string(101, '[') + std::string(101, ']')).substr(0, 6), "error:");
}

TEST(JsonValueTest, TypesAndComparison) {
  EXPECT_STREQ(json_type_name(json("1")), "INTEGER");
  EXPECT_STREQ(json_type_name(json("18446744073709551615")), "UNSIGNED INTEGER");
  EXPECT_STREQ(json_type_name(json("1.0")), "DOUBLE");
  EXPECT_STREQ(json_type_name(json("\"x\"")), "STRING");
  EXPECT_STREQ(json_type_name(json("true")), "BOOLEAN");
  EXPECT_STREQ(json_type_name(json("null")), "NULL");
  EXPECT_STREQ(json_type_name(json("[]")), "ARRAY");
  EXPECT_STREQ(json_type_name(json("{}")), "OBJECT");
  EXPECT_EQ(compare_json(json("1"), json("1.0")), 0) << "numbers by value";
  EXPECT_EQ(compare_json(json("2"), json("18446744073709551615")), -1);
  EXPECT_EQ(compare_json(json("-1"), json("18446744073709551615")), -1);
  EXPECT_EQ(compare_json(json("\"a\""), json("\"b\"")), -1);
  EXPECT_EQ(compare_json(json("[1, 2]"), json("[1, 3]")), -1);
  EXPECT_EQ(compare_json(json("[1, 2]"), json("[1, 2, 0]")), -1);
  EXPECT_EQ(compare_json(json(R"({"a": 1, "b": 2})"), json(R"({"b":2,"a":1})")), 0);
  // MySQL's precedence: BOOLEAN > ARRAY > OBJECT > STRING > numbers > NULL.
  EXPECT_EQ(compare_json(json("true"), json("[1]")), 1);
  EXPECT_EQ(compare_json(json("[1]"), json("{}")), 1);
  EXPECT_EQ(compare_json(json("{}"), json("\"z\"")), 1);
  EXPECT_EQ(compare_json(json("\"0\""), json("99")), 1);
  EXPECT_EQ(compare_json(json("0"), json("null")), 1);
}

TEST(JsonValueTest, ContainsFollowsMysql) {
  EXPECT_TRUE(json_contains(json(R"({"a": 1, "b": [1, 2]})"), json(R"({"b": [2]})")));
  EXPECT_FALSE(json_contains(json(R"({"a": 1})"), json(R"({"a": 2})")));
  EXPECT_TRUE(json_contains(json("[1, [2, 3]]"), json("3"))) << "in some element";
  EXPECT_TRUE(json_contains(json("[1, [2, 3]]"), json("[[3]]")));
  EXPECT_TRUE(json_contains(json("[1, 2, 3]"), json("[3, 1]")));
  EXPECT_TRUE(json_contains(json("[1, 2, 3]"), json("2")));
  EXPECT_FALSE(json_contains(json("1"), json("[1]")));
  EXPECT_TRUE(json_contains(json("1"), json("1.0")));
}

std::string extract(std::string_view doc, std::string_view path_text) {
  size_t position = 0;
  std::optional<JsonPath> path = parse_json_path(path_text, &position);
  if (!path) return "bad path @" + std::to_string(position);
  const JsonValue root = json(doc);
  std::string out;
  for (const JsonValue* v : json_path_find(root, *path)) out += (out.empty() ? "" : "|") + to_json_text(*v);
  return out;
}

TEST(JsonValueTest, PathsSelectLikeMysql) {
  const char* doc = R"({"a": {"b": [10, 20, {"c": 30}]}, "x y": 1})";
  EXPECT_EQ(extract(doc, "$.a.b[1]"), "20");
  EXPECT_EQ(extract(doc, "$.a.b[last]"), R"({"c": 30})");
  EXPECT_EQ(extract(doc, "$.a.b[last-2]"), "10");
  EXPECT_EQ(extract(doc, "$.\"x y\""), "1");
  EXPECT_EQ(extract(doc, "$.a.b[*]"), R"(10|20|{"c": 30})");
  EXPECT_EQ(extract(doc, "$**.c"), "30");
  EXPECT_EQ(extract(doc, "$.*"), R"({"b": [10, 20, {"c": 30}]}|1)") << "in key order";
  EXPECT_EQ(extract(doc, "$.missing"), "");
  EXPECT_EQ(extract("5", "$[0]"), "5") << "a scalar is its own [0]";
  EXPECT_EQ(extract(doc, "a"), "bad path @0");
  EXPECT_EQ(extract(doc, "$.a["), "bad path @4");
  EXPECT_EQ(extract(doc, "$**"), "bad path @3");
}

TEST(JsonValueTest, SetInsertsAndReplaces) {
  size_t position = 0;
  JsonValue doc = json(R"({"a": 1, "b": [1, 2]})");
  json_path_set(&doc, *parse_json_path("$.a", &position), JsonValue::of_int(5), true, true);
  json_path_set(&doc, *parse_json_path("$.c", &position), JsonValue::of_string("n"), true, true);
  json_path_set(&doc, *parse_json_path("$.b[5]", &position), JsonValue::of_int(3), true, true);
  json_path_set(&doc, *parse_json_path("$.a[1]", &position), JsonValue::of_int(6), true, true);
  json_path_set(&doc, *parse_json_path("$.z.y", &position), JsonValue::of_int(0), true, true);
  EXPECT_EQ(to_json_text(doc), R"({"a": [5, 6], "b": [1, 2, 3], "c": "n"})");
  json_path_set(&doc, *parse_json_path("$.c", &position), JsonValue::of_int(9), false, true);
  json_path_set(&doc, *parse_json_path("$.d", &position), JsonValue::of_int(9), true, false);
  EXPECT_EQ(to_json_text(doc), R"({"a": [5, 6], "b": [1, 2, 3], "c": "n"})")
      << "JSON_INSERT keeps existing, JSON_REPLACE adds nothing";
}

}  // namespace
}  // namespace duo::sql::executor
