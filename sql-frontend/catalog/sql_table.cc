// SQL table definitions, their sql_definition encoding and the SQL-to-storage type
// mapping; see sql_table.h.
#include "sql-frontend/catalog/sql_table.h"
#include "sql-frontend/catalog/definition_escape.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <set>
#include <sstream>

#include "ndb-kernel/protocol/distribution.h"
#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/parser/ast_printer.h"
#include "storage/row/collation.h"

namespace duo::sql::catalog {

namespace {

constexpr const char* kMagic = "duo-sql-table 1";
// MySQL's limits on declared lengths, in characters.
constexpr uint64_t kCharLengthMax = 255;
constexpr uint64_t kVarcharLengthMax = 16383;  // utf8mb4: 65535 bytes / 4
// Bytes of a utf8mb4 character at most: CHAR/VARCHAR(n) reserve 4n bytes in the row and
// the engine checks the length in characters before storing.
constexpr uint32_t kUtf8mb4BytesMax = 4;
// MySQL's BLOB/TEXT size classes: the longest value in bytes.
constexpr uint64_t kTinyBlobBytesMax = 255;
constexpr uint64_t kBlobBytesMax = 65535;
constexpr uint64_t kMediumBlobBytesMax = 16777215;
constexpr uint64_t kLongBlobBytesMax = 4294967295;
// BIT(M): at most 64 bits (MySQL's limit; they fit the BIGINT UNSIGNED they are kept in).
constexpr uint64_t kBitWidthMax = 64;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// ENUM/SET labels are equal under the column's collation (collation.h), as MySQL checks
// duplicates and DEFAULT: ENUM('é', 'E') is 1291.
bool same_label(std::string_view a, std::string_view b) {
  return storage::compare_case_insensitive(a, b) == 0;
}

std::vector<std::string_view> split(std::string_view s, char separator) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == separator) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

[[noreturn]] void throw_error(uint16_t code, const char* state, const std::string& message) {
  throw SqlException(code, state, message);
}

// Declared default as text, from the literal of DEFAULT <literal>.
std::optional<std::string> default_text(const Expr& expr, const std::string& column) {
  if (expr.kind == ExprKind::kLiteral) {
    const auto& literal = expr.as<LiteralExpr>();
    if (literal.literal_kind == LiteralKind::kNull) return std::nullopt;
    if (literal.literal_kind == LiteralKind::kTrue) return std::string("1");
    if (literal.literal_kind == LiteralKind::kFalse) return std::string("0");
    return literal.value;
  }
  if (expr.kind == ExprKind::kUnary && expr.as<UnaryExpr>().op == UnaryOp::kNegate &&
      expr.as<UnaryExpr>().operand->kind == ExprKind::kLiteral) {
    return "-" + expr.as<UnaryExpr>().operand->as<LiteralExpr>().value;
  }
  throw_error(1067, "42000", "Invalid default value for '" + column + "'");
}

}  // namespace

int SqlTable::find_column(std::string_view column) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (iequals(columns[i].name, column)) return static_cast<int>(i);
  }
  return -1;
}

bool SqlTable::is_key_column(uint16_t column) const {
  if (indexes.empty()) return false;  // an in-memory table without keys (CREATE ... SELECT)
  const auto& key = primary_key().columns;
  return std::find(key.begin(), key.end(), column) != key.end();
}

int SqlTable::auto_increment_column() const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].auto_increment) return static_cast<int>(i);
  }
  return -1;
}

std::string cluster_table_name(const std::string& db, const std::string& table) {
  return db + "/def/" + table;
}

bool split_cluster_table_name(const std::string& cluster_name, std::string* db,
                              std::string* table) {
  const size_t at = cluster_name.find("/def/");
  if (at == std::string::npos || at == 0 || at + 5 >= cluster_name.size()) return false;
  *db = cluster_name.substr(0, at);
  *table = cluster_name.substr(at + 5);
  return true;
}

std::string declared_type_text(const DataType& type) {
  std::string base;
  switch (type.name) {
    case TypeName::kTinyInt:
      base = "tinyint";
      break;
    case TypeName::kSmallInt:
      base = "smallint";
      break;
    case TypeName::kMediumInt:
      base = "mediumint";
      break;
    case TypeName::kInt:
      base = "int";
      break;
    case TypeName::kBigInt:
      base = "bigint";
      break;
    case TypeName::kFloat:
      base = "float";
      break;
    case TypeName::kDouble:
      base = "double";
      break;
    case TypeName::kDecimal:
      base = "decimal(" + std::to_string(type.length.value_or(10)) + "," +
             std::to_string(type.scale.value_or(0)) + ")";
      break;
    case TypeName::kChar:
      base = "char(" + std::to_string(type.length.value_or(1)) + ")";
      break;
    case TypeName::kVarchar:
      if (!type.length) throw_error(1064, "42000", "VARCHAR needs a length");
      base = "varchar(" + std::to_string(*type.length) + ")";
      break;
    case TypeName::kBinary:
      base = "binary(" + std::to_string(type.length.value_or(1)) + ")";
      break;
    case TypeName::kVarbinary:
      if (!type.length) throw_error(1064, "42000", "VARBINARY needs a length");
      base = "varbinary(" + std::to_string(*type.length) + ")";
      break;
    case TypeName::kDate:
      base = "date";
      break;
    case TypeName::kTime:
      base = "time";
      break;
    case TypeName::kDatetime:
      base = "datetime";
      break;
    case TypeName::kTimestamp:
      base = "timestamp";
      break;
    case TypeName::kYear:
      // MySQL 8.0 keeps only the 4-digit YEAR; YEAR(4) is the same type.
      if (type.length && *type.length != 4) {
        throw_error(1818, "HY000", "Supports only YEAR or YEAR(4) column.");
      }
      return "year";
    case TypeName::kBit:
      // Range checked by derive_storage, which knows the column's name for 1439.
      return "bit(" + std::to_string(type.length.value_or(1)) + ")";
    case TypeName::kBlob:
      base = "blob";
      break;
    case TypeName::kText:
      base = "text";
      break;
    case TypeName::kTinyBlob:
      base = "tinyblob";
      break;
    case TypeName::kMediumBlob:
      base = "mediumblob";
      break;
    case TypeName::kLongBlob:
      base = "longblob";
      break;
    case TypeName::kTinyText:
      base = "tinytext";
      break;
    case TypeName::kMediumText:
      base = "mediumtext";
      break;
    case TypeName::kLongText:
      base = "longtext";
      break;
    case TypeName::kJson:
      return "json";
    case TypeName::kEnum:
    case TypeName::kSet: {
      // enum('a','it''s'): MySQL's SHOW CREATE TABLE form, values as written.
      base = type.name == TypeName::kEnum ? "enum(" : "set(";
      for (size_t k = 0; k < type.values.size(); ++k) {
        if (k > 0) base += ',';
        base += '\'';
        for (char c : type.values[k]) base += c == '\'' ? std::string("''") : std::string(1, c);
        base += '\'';
      }
      return base + ")";
    }
    default:
      throw_not_supported("column type " + lower(to_sql(type)));
  }
  if ((type.name == TypeName::kTime || type.name == TypeName::kDatetime ||
       type.name == TypeName::kTimestamp) &&
      type.length && *type.length > 0) {
    base += "(" + std::to_string(*type.length) + ")";
  }
  if (type.is_unsigned) base += " unsigned";
  const bool binary_collation = (type.charset && iequals(*type.charset, "binary")) ||
                                (type.collate && lower(*type.collate).ends_with("_bin"));
  const bool text = type.name == TypeName::kTinyText || type.name == TypeName::kText ||
                    type.name == TypeName::kMediumText || type.name == TypeName::kLongText;
  if (binary_collation && (type.name == TypeName::kChar || type.name == TypeName::kVarchar || text)) {
    base += " binary";
  }
  return base;
}

// The values of "enum('a','it''s')" / "set(...)"; false when `text` is neither.
bool parse_enum_values(std::string_view text, std::vector<std::string>* values) {
  const size_t open = text.starts_with("enum(") ? 5 : text.starts_with("set(") ? 4 : 0;
  if (open == 0 || !text.ends_with(")")) return false;
  values->clear();
  size_t at = open;
  while (at < text.size() - 1) {
    if (text[at] != '\'') return false;
    std::string value;
    for (++at; at < text.size(); ++at) {
      if (text[at] != '\'') {
        value += text[at];
      } else if (at + 1 < text.size() && text[at + 1] == '\'') {
        value += '\'';
        ++at;
      } else {
        break;
      }
    }
    if (at >= text.size()) return false;
    values->push_back(std::move(value));
    ++at;  // the closing quote
    if (text[at] == ',') ++at;
  }
  return !values->empty();
}

void derive_storage(SqlColumn* column) {
  std::string text = column->declared_type;
  storage::ColumnDef& def = column->storage;
  def = storage::ColumnDef{};
  def.name = column->name;
  def.nullable = column->nullable;
  column->enum_values.clear();
  column->is_set = text.starts_with("set(");
  column->is_year = false;
  column->bit_width = 0;
  column->blob_bytes_max = 0;
  column->blob_part_bytes = 0;
  column->is_json = false;
  if (text == "json") {
    // MySQL keeps binary JSON; we keep normalized text (utf8mb4_bin) of LONGTEXT's size.
    column->is_json = true;
    column->char_length = 0;
    def.type = storage::ColumnType::kText;
    def.collation = storage::Collation::kBinary;
    def.length = api::kBlobInlineBytes;
    column->blob_bytes_max = kLongBlobBytesMax;
    column->blob_part_bytes = api::kLongBlobPartBytes;
    return;
  }
  if (text == "year") {
    column->is_year = true;
    column->char_length = 0;
    def.type = storage::ColumnType::kSmallInt;
    def.is_unsigned = true;
    def.collation = storage::Collation::kBinary;
    return;
  }
  if (text.starts_with("bit(")) {
    const uint64_t bits = std::strtoull(text.c_str() + 4, nullptr, 10);
    if (bits > kBitWidthMax) {
      throw_error(1439, "42000",
                  "Display width out of range for column '" + column->name +
                      "' (max = " + std::to_string(kBitWidthMax) + ")");
    }
    column->bit_width = static_cast<uint8_t>(std::max<uint64_t>(1, bits));
    column->char_length = 0;
    def.type = storage::ColumnType::kBigInt;
    def.is_unsigned = true;
    def.collation = storage::Collation::kBinary;
    return;
  }
  if (parse_enum_values(text, &column->enum_values)) {
    const char* kind = column->is_set ? "SET" : "ENUM";
    if (column->is_set && column->enum_values.size() > 64) {
      throw_error(1097, "HY000", "Too many strings for column " + column->name + " and SET");
    }
    uint32_t longest = 1;
    uint32_t all = 0;  // every member of a SET, with commas
    for (size_t k = 0; k < column->enum_values.size(); ++k) {
      const std::string& value = column->enum_values[k];
      longest = std::max<uint32_t>(longest, static_cast<uint32_t>(value.size()));
      all += static_cast<uint32_t>(value.size()) + (k > 0 ? 1 : 0);
      if (column->is_set && value.find(',') != std::string::npos) {
        throw_error(1367, "22007",
                    "Illegal set '" + value + "' value found during parsing");
      }
      for (size_t j = 0; j < k; ++j) {
        if (same_label(column->enum_values[j], value)) {
          throw_error(1291, "HY000", "Column '" + column->name + "' has duplicated value '" +
                                         value + "' in " + kind);
        }
      }
    }
    def.type = storage::ColumnType::kVarchar;
    def.collation = storage::Collation::kCaseInsensitive;
    def.length = std::max<uint32_t>(1, column->is_set ? all : longest);  // bytes, as written
    column->char_length = def.length;
    return;
  }
  if (text.ends_with(" binary")) {
    text.resize(text.size() - 7);
  } else {
    def.collation = storage::Collation::kCaseInsensitive;
  }
  if (text.ends_with(" unsigned")) {
    def.is_unsigned = true;
    text.resize(text.size() - 9);
  }
  std::string base = text;
  uint64_t a = 0, b = 0;
  if (size_t open = text.find('('); open != std::string::npos) {
    base = text.substr(0, open);
    std::sscanf(text.c_str() + open + 1, "%lu,%lu", &a, &b);
  }
  column->char_length = 0;
  if (base == "tinyint")
    def.type = storage::ColumnType::kTinyInt;
  else if (base == "smallint")
    def.type = storage::ColumnType::kSmallInt;
  else if (base == "mediumint")
    def.type = storage::ColumnType::kMediumInt;
  else if (base == "int")
    def.type = storage::ColumnType::kInt;
  else if (base == "bigint")
    def.type = storage::ColumnType::kBigInt;
  else if (base == "float")
    def.type = storage::ColumnType::kFloat;
  else if (base == "double")
    def.type = storage::ColumnType::kDouble;
  else if (base == "decimal") {
    if (a < 1 || a > 65 || b > 30 || b > a) {
      throw_error(1426, "42000",
                  "Too big precision or scale specified for column '" + column->name + "'");
    }
    def.type = storage::ColumnType::kDecimal;
    def.precision = static_cast<uint8_t>(a);
    def.scale = static_cast<uint8_t>(b);
  } else if (base == "char" || base == "varchar") {
    const bool fixed = base == "char";
    if (a > (fixed ? kCharLengthMax : kVarcharLengthMax)) {
      throw_error(1074, "42000",
                  "Column length too big for column '" + column->name +
                      "' (max = " + std::to_string(fixed ? kCharLengthMax : kVarcharLengthMax) +
                      "); use BLOB or TEXT instead");
    }
    def.type = fixed ? storage::ColumnType::kChar : storage::ColumnType::kVarchar;
    def.length = static_cast<uint32_t>(a) * kUtf8mb4BytesMax;
    column->char_length = static_cast<uint32_t>(a);
    if (def.length == 0) def.length = 1;
  } else if (base == "binary" || base == "varbinary") {
    def.type = base == "binary" ? storage::ColumnType::kBinary : storage::ColumnType::kVarbinary;
    def.length = std::max<uint32_t>(1, static_cast<uint32_t>(a));
    def.collation = storage::Collation::kBinary;
  } else if (base == "date")
    def.type = storage::ColumnType::kDate;
  else if (base == "time" || base == "datetime" || base == "timestamp") {
    def.type = base == "time"       ? storage::ColumnType::kTime
               : base == "datetime" ? storage::ColumnType::kDatetime
                                    : storage::ColumnType::kTimestamp;
    if (a > 6) throw_error(1426, "42000", "Too big precision specified for '" + column->name + "'");
    def.scale = static_cast<uint8_t>(a);
  } else if (base.ends_with("blob") || base.ends_with("text")) {
    const bool blob = base.ends_with("blob");
    const std::string size_class = base.substr(0, base.size() - 4);
    def.type = blob ? storage::ColumnType::kBlob : storage::ColumnType::kText;
    if (blob) def.collation = storage::Collation::kBinary;
    // NDB's layout: 256 bytes inline and parts of 2000/4000/13948 bytes; TINY* values
    // fit the row whole (inline 255, no parts table).
    if (size_class == "tiny") {
      def.length = api::kTinyBlobBytesMax;
      column->blob_bytes_max = kTinyBlobBytesMax;
    } else if (size_class.empty()) {
      def.length = api::kBlobInlineBytes;
      column->blob_bytes_max = kBlobBytesMax;
      column->blob_part_bytes = api::kBlobPartBytes;
    } else if (size_class == "medium") {
      def.length = api::kBlobInlineBytes;
      column->blob_bytes_max = kMediumBlobBytesMax;
      column->blob_part_bytes = api::kMediumBlobPartBytes;
    } else if (size_class == "long") {
      def.length = api::kBlobInlineBytes;
      column->blob_bytes_max = kLongBlobBytesMax;
      column->blob_part_bytes = api::kLongBlobPartBytes;
    } else {
      throw_not_supported("column type " + column->declared_type);
    }
  } else {
    throw_not_supported("column type " + column->declared_type);
  }
  if (storage::is_integer(def.type) || def.type == storage::ColumnType::kFloat ||
      def.type == storage::ColumnType::kDouble || def.type == storage::ColumnType::kDecimal ||
      def.type == storage::ColumnType::kDate || def.type == storage::ColumnType::kTime ||
      def.type == storage::ColumnType::kDatetime || def.type == storage::ColumnType::kTimestamp) {
    def.collation = storage::Collation::kBinary;
  }
}

// An ENUM's DEFAULT must be one of its values (1067); it is kept as declared.
void check_enum_default(SqlColumn* column) {
  if (column->enum_values.empty() || !column->default_value) return;
  if (column->is_set) {
    // Each member named must be one of the set's; kept as written.
    std::string_view rest = *column->default_value;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view member = rest.substr(0, comma);
      const bool known = std::any_of(column->enum_values.begin(), column->enum_values.end(),
                                     [&](const std::string& v) { return same_label(v, member); });
      if (!known) throw_error(1067, "42000", "Invalid default value for '" + column->name + "'");
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return;
  }
  for (const std::string& value : column->enum_values) {
    if (same_label(value, *column->default_value)) {
      column->default_value = value;
      return;
    }
  }
  throw_error(1067, "42000", "Invalid default value for '" + column->name + "'");
}

namespace {

// A YEAR's or BIT's DEFAULT, kept in the form the insert paths store back unchanged (they
// store the default text as a string): YEAR as its 4 digits, BIT as its big-endian
// bytes. The literal's kind matters (DEFAULT 0 is the year 0000, DEFAULT '0' is 2000;
// DEFAULT 5 is the bits 101, DEFAULT '5' the byte 0x35), so this reads the expression.
// A value that does not fit is 1067, as in MySQL.
void normalize_default(SqlColumn* column, const Expr& value) {
  if ((!column->is_year && column->bit_width == 0) || !column->default_value) return;
  const auto invalid = [&]() {
    throw_error(1067, "42000", "Invalid default value for '" + column->name + "'");
  };
  bool number = false;
  if (value.kind == ExprKind::kLiteral) {
    const LiteralKind kind = value.as<LiteralExpr>().literal_kind;
    number = kind == LiteralKind::kInteger || kind == LiteralKind::kDecimal ||
             kind == LiteralKind::kFloat || kind == LiteralKind::kTrue ||
             kind == LiteralKind::kFalse;
    if (column->bit_width > 0 && (kind == LiteralKind::kHex || kind == LiteralKind::kBit)) {
      number = false;
    }
  } else {
    number = true;  // -N
  }
  const std::string& text = *column->default_value;
  if (column->is_year) {
    if (text.empty() || text.size() > 4 ||
        text.find_first_not_of("0123456789") != std::string::npos) {
      invalid();
    }
    uint64_t year = std::strtoull(text.c_str(), nullptr, 10);
    if ((year >= 100 && year <= 1900) || year > 2155) invalid();
    if (year != 0 || (!number && text.size() != 4)) {
      year += year < 70 ? 2000 : year < 100 ? 1900 : 0;
    }
    char digits[8];
    std::snprintf(digits, sizeof digits, "%04u", static_cast<unsigned>(year));
    column->default_value = digits;
    return;
  }
  uint64_t bits = 0;
  if (number) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) invalid();
    errno = 0;
    bits = std::strtoull(text.c_str(), nullptr, 10);
    if (errno == ERANGE) invalid();
  } else {
    std::string_view bytes = text;
    while (!bytes.empty() && bytes.front() == '\0') bytes.remove_prefix(1);
    if (bytes.size() > 8) invalid();
    for (char c : bytes) bits = bits << 8 | static_cast<unsigned char>(c);
  }
  if (column->bit_width < 64 && (bits >> column->bit_width) != 0) invalid();
  std::string stored((column->bit_width + 7) / 8, '\0');
  for (size_t k = 0; k < stored.size(); ++k) {
    stored[stored.size() - 1 - k] = static_cast<char>(bits >> (8 * k) & 0xFF);
  }
  column->default_value = std::move(stored);
}

}  // namespace

std::optional<std::string> shown_default(const SqlColumn& column) {
  if (column.bit_width == 0 || !column.default_value) return column.default_value;
  uint64_t bits = 0;
  for (char c : *column.default_value) bits = bits << 8 | static_cast<unsigned char>(c);
  std::string digits;
  for (; bits != 0; bits >>= 1) digits.insert(digits.begin(), static_cast<char>('0' + (bits & 1)));
  return "b'" + (digits.empty() ? std::string("0") : digits) + "'";
}

SqlColumn column_from_def(const ColumnDef& def) {
  SqlColumn column;
  column.name = def.name.name;
  column.declared_type = declared_type_text(def.type);
  column.nullable = def.nullable.value_or(true) && !def.primary_key;
  column.auto_increment = def.auto_increment;
  column.declared_storage = def.storage;
  if (def.default_value) {
    column.has_default = true;
    column.default_value = default_text(*def.default_value, column.name);
    if (!column.default_value && def.nullable == false) {
      throw_error(1067, "42000", "Invalid default value for '" + column.name + "'");
    }
  }
  derive_storage(&column);
  check_enum_default(&column);
  if (def.default_value) normalize_default(&column, *def.default_value);
  return column;
}

void set_default(SqlColumn* column, const Expr& value) {
  std::optional<std::string> text = default_text(value, column->name);
  if (!text && !column->nullable) {
    throw_error(1067, "42000", "Invalid default value for '" + column->name + "'");
  }
  column->has_default = true;
  column->default_value = std::move(text);
  check_enum_default(column);
  normalize_default(column, value);
}

SqlTable table_from_create(const CreateTableStatement& statement, const std::string& db) {
  if (statement.like) throw_not_supported("CREATE TABLE ... LIKE");
  SqlTable table;
  table.db = db;
  table.name = statement.table.name.name;
  std::vector<SqlIndex> secondary;
  std::optional<SqlIndex> primary;
  auto add_primary = [&](std::vector<uint16_t> columns) {
    if (primary) throw_error(1068, "42000", "Multiple primary key defined");
    primary = SqlIndex{SqlIndexKind::kPrimary, "PRIMARY", std::move(columns)};
  };
  for (const ColumnDef& def : statement.columns) {
    if (table.find_column(def.name.name) >= 0) {
      throw_error(1060, "42S21", "Duplicate column name '" + def.name.name + "'");
    }
    SqlColumn column = column_from_def(def);
    const uint16_t id = static_cast<uint16_t>(table.columns.size());
    table.columns.push_back(std::move(column));
    if (def.primary_key) add_primary({id});
    if (def.unique) secondary.push_back(SqlIndex{SqlIndexKind::kUnique, def.name.name, {id}});
  }
  for (const IndexDef& def : statement.indexes) {
    std::vector<uint16_t> columns;
    for (const IndexColumn& ic : def.columns) {
      const int id = table.find_column(ic.name.name);
      if (id < 0) {
        throw_error(1072, "42000", "Key column '" + ic.name.name + "' doesn't exist in table");
      }
      if (ic.prefix_length) throw_not_supported("index prefix lengths");
      columns.push_back(static_cast<uint16_t>(id));
    }
    if (def.kind == IndexKind::kPrimary) {
      add_primary(std::move(columns));
      continue;
    }
    std::string name = def.name ? def.name->name : table.columns[columns.front()].name;
    // MySQL names unnamed indexes after their first column, then _2, _3 ...
    std::string unique_name = name;
    for (int n = 2;; ++n) {
      bool taken = false;
      for (const SqlIndex& index : secondary) taken |= iequals(index.name, unique_name);
      if (!taken) break;
      if (def.name) throw_error(1061, "42000", "Duplicate key name '" + name + "'");
      unique_name = name + "_" + std::to_string(n);
    }
    secondary.push_back(
        SqlIndex{def.kind == IndexKind::kUnique ? SqlIndexKind::kUnique : SqlIndexKind::kKey,
                 unique_name, std::move(columns)});
  }
  if (!primary) {
    throw_not_supported("tables without a PRIMARY KEY");
  }
  for (uint16_t id : primary->columns) table.columns[id].nullable = false;
  table.indexes.push_back(std::move(*primary));
  for (SqlIndex& index : secondary) table.indexes.push_back(std::move(index));
  int auto_increments = 0;
  for (size_t i = 0; i < table.columns.size(); ++i) {
    SqlColumn& column = table.columns[i];
    derive_storage(&column);
    if (!column.auto_increment) continue;
    ++auto_increments;
    bool keyed = false;
    for (const SqlIndex& index : table.indexes) keyed |= index.columns.front() == i;
    if (!keyed || !storage::is_integer(column.storage.type)) {
      throw_error(1075, "42000",
                  "Incorrect table definition; there can be only one auto column and it must be "
                  "defined as a key");
    }
  }
  if (auto_increments > 1) {
    throw_error(1075, "42000",
                "Incorrect table definition; there can be only one auto column and it must be "
                "defined as a key");
  }
  for (const SqlColumn& column : table.columns) {
    if (column.storage.type == storage::ColumnType::kBlob ||
        column.storage.type == storage::ColumnType::kText) {
      for (const SqlIndex& index : table.indexes) {
        for (uint16_t id : index.columns) {
          if (table.columns[id].name == column.name && column.is_json) {
            throw_error(3152, "42000",
                        "JSON column '" + column.name +
                            "' supports indexing only via generated columns on a specified "
                            "JSON path.");
          }
          if (table.columns[id].name == column.name) {
            throw_error(1170, "42000",
                        "BLOB/TEXT column '" + column.name +
                            "' used in key specification without a key length");
          }
        }
      }
    }
  }
  for (size_t i = 0; i < statement.columns.size() && i < table.columns.size(); ++i) {
    table.columns[i].declared_storage = statement.columns[i].storage;
  }
  if (statement.options.tablespace) table.tablespace = *statement.options.tablespace;
  table.storage = statement.options.storage;
  apply_disk_storage(&table);
  check_disk_storage(table);
  if (statement.partition_by_key) {
    table.partition_by_key = true;
    if (statement.partitions) {
      if (*statement.partitions == 0) {
        throw_error(1504, "HY000", "Number of partitions = 0 is not an allowed value");
      }
      if (*statement.partitions > ::duo::protocol::kFragmentCountMax) {
        throw_error(1499, "HY000", "Too many partitions (including subpartitions) were defined");
      }
      table.partitions = static_cast<uint32_t>(*statement.partitions);
    }
  }
  return table;
}

::duo::protocol::TableDef to_table_def(const SqlTable& table) {
  ::duo::protocol::TableDef def;
  def.schema.name = cluster_table_name(table.db, table.name);
  for (size_t i = 0; i < table.columns.size(); ++i) {
    def.schema.columns.push_back(table.columns[i].storage);
    def.schema.columns.back().storage_disk = column_on_disk(table, i);
  }
  def.schema.primary_key = table.primary_key().columns;
  for (size_t i = 1; i < table.indexes.size(); ++i) {
    const SqlIndex& index = table.indexes[i];
    def.schema.ordered_indexes.push_back(
        storage::IndexDef{index.name, index.columns, index.kind == SqlIndexKind::kUnique});
  }
  // NDB's hidden ordered index on the primary key, for range scans and ordered reads on
  // it. Not unique: the hash index already keeps the key unique, and a unique ordered
  // index would probe the tree again on every insert.
  def.schema.ordered_indexes.push_back(
      storage::IndexDef{kPrimaryOrderedIndex, table.primary_key().columns, false});
  def.flags = table.read_backup ? ::duo::protocol::kTableReadBackup : 0;
  def.fragment_count = table.partitions;  // 0: the cluster's default
  def.sql_definition = encode_sql_definition(table);
  def.tablespace_id = table.tablespace_id;
  return def;
}

namespace {
// In any index (PRIMARY, UNIQUE or KEY): NDB keeps such columns in memory.
bool is_indexed(const SqlTable& table, size_t column) {
  for (const SqlIndex& index : table.indexes) {
    if (std::find(index.columns.begin(), index.columns.end(), column) != index.columns.end()) {
      return true;
    }
  }
  return false;
}
}  // namespace

bool column_on_disk(const SqlTable& table, size_t i) {
  switch (table.columns[i].declared_storage) {
    case ColumnStorage::kDisk:
      return true;
    case ColumnStorage::kMemory:
      return false;
    case ColumnStorage::kDefault:
      break;
  }
  return table.storage == ColumnStorage::kDisk && !is_indexed(table, i);
}

void apply_disk_storage(SqlTable* table) {
  for (size_t i = 0; i < table->columns.size(); ++i) {
    table->columns[i].storage.storage_disk = column_on_disk(*table, i);
  }
}

void check_disk_storage(const SqlTable& table) {
  bool any_disk = false;
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const SqlColumn& column = table.columns[i];
    any_disk |= column.storage.storage_disk;
    if (column.declared_storage == ColumnStorage::kDisk && is_indexed(table, i)) {
      throw SqlException(1005, "HY000",
                         "Can't create table '" + table.name +
                             "' (use SHOW WARNINGS for more info).")
          .with_warning(1296, "Got error 756 'Index on disk column is not supported' from NDB");
    }
  }
  if (any_disk && table.tablespace.empty()) {
    throw SqlException(3014, "HY000",
                       "Table storage engine 'ndbcluster' found required create option missing")
        .with_warning(1296, "Got error 755 'Invalid tablespace' from NDB");
  }
}

std::string encode_sql_definition(const SqlTable& table) {
  std::string out = kMagic;
  out += '\n';
  for (const SqlColumn& column : table.columns) {
    out += "column\t" + escape(column.name) + "\t" + escape(column.declared_type) + "\t" +
           (column.nullable ? "NULL" : "NOT NULL") + "\t";
    if (!column.has_default)
      out += "-";
    else if (!column.default_value)
      out += "N";
    else
      out += "V" + escape(*column.default_value);
    out += column.auto_increment ? "\t1\n" : "\t0\n";
  }
  for (const SqlIndex& index : table.indexes) {
    out += "index\t";
    out += index.kind == SqlIndexKind::kPrimary  ? "PRIMARY"
           : index.kind == SqlIndexKind::kUnique ? "UNIQUE"
                                                 : "KEY";
    out += "\t" + escape(index.name) + "\t";
    for (size_t i = 0; i < index.columns.size(); ++i) {
      if (i > 0) out += ',';
      out += escape(table.columns[index.columns[i]].name);
    }
    out += '\n';
  }
  // Written only when there is one, so tables without a comment stay readable by
  // readers that predate the record.
  if (!table.comment.empty()) out += "comment\t" + escape(table.comment) + "\n";
  // Likewise only for a table created with PARTITION BY KEY ().
  if (table.partition_by_key) out += "partition\tKEY\t" + std::to_string(table.partitions) + "\n";
  for (const SqlColumn& column : table.columns) {
    if (column.declared_storage == ColumnStorage::kDefault) continue;
    out += "storage\t" + escape(column.name) + "\t" +
           (column.declared_storage == ColumnStorage::kDisk ? "DISK" : "MEMORY") + "\n";
  }
  if (!table.tablespace.empty() || table.storage != ColumnStorage::kDefault) {
    const std::string name = table.tablespace.empty() ? "-" : escape(table.tablespace);
    out += "tablespace\t" + name + "\t" +
           (table.storage == ColumnStorage::kDisk     ? "DISK"
            : table.storage == ColumnStorage::kMemory ? "MEMORY"
                                                      : "DEFAULT") +
           "\n";
  }
  return out;
}

Result<SqlTable> decode_sql_definition(const std::string& text, std::string db, std::string name) {
  auto corrupt = [&](const std::string& why) {
    return Status(ErrorCode::kCorruption,
                  "bad SQL definition of table " + db + "." + name + ": " + why);
  };
  SqlTable table;
  table.db = std::move(db);
  table.name = std::move(name);
  std::vector<std::string_view> lines = split(text, '\n');
  if (lines.empty() || lines.front() != kMagic) return corrupt("unknown header");
  for (size_t l = 1; l < lines.size(); ++l) {
    if (lines[l].empty()) continue;
    std::vector<std::string_view> fields = split(lines[l], '\t');
    if (fields[0] == "column" && fields.size() == 6) {
      SqlColumn column;
      std::string value;
      if (!unescape(fields[1], &column.name) || !unescape(fields[2], &column.declared_type)) {
        return corrupt("bad escape");
      }
      column.nullable = fields[3] == "NULL";
      if (fields[4] == "N") {
        column.has_default = true;
      } else if (!fields[4].empty() && fields[4][0] == 'V') {
        if (!unescape(fields[4].substr(1), &value)) return corrupt("bad escape");
        column.has_default = true;
        column.default_value = value;
      } else if (fields[4] != "-") {
        return corrupt("bad default");
      }
      column.auto_increment = fields[5] == "1";
      try {
        derive_storage(&column);
      } catch (const SqlException& e) {
        return corrupt(e.what());
      }
      table.columns.push_back(std::move(column));
    } else if (fields[0] == "index" && fields.size() == 4) {
      SqlIndex index;
      if (fields[1] == "PRIMARY")
        index.kind = SqlIndexKind::kPrimary;
      else if (fields[1] == "UNIQUE")
        index.kind = SqlIndexKind::kUnique;
      else if (fields[1] == "KEY")
        index.kind = SqlIndexKind::kKey;
      else
        return corrupt("bad index kind");
      if (!unescape(fields[2], &index.name)) return corrupt("bad escape");
      for (std::string_view c : split(fields[3], ',')) {
        std::string column;
        if (!unescape(c, &column)) return corrupt("bad escape");
        const int id = table.find_column(column);
        if (id < 0) return corrupt("index on unknown column " + column);
        index.columns.push_back(static_cast<uint16_t>(id));
      }
      if ((index.kind == SqlIndexKind::kPrimary) != table.indexes.empty()) {
        return corrupt("PRIMARY must be the first index");
      }
      table.indexes.push_back(std::move(index));
    } else if (fields[0] == "storage" && fields.size() == 3) {
      std::string column;
      if (!unescape(fields[1], &column)) return corrupt("bad escape");
      const int id = table.find_column(column);
      if (id < 0 || (fields[2] != "DISK" && fields[2] != "MEMORY")) return corrupt("bad storage");
      table.columns[id].declared_storage =
          fields[2] == "DISK" ? ColumnStorage::kDisk : ColumnStorage::kMemory;
    } else if (fields[0] == "tablespace" && fields.size() == 3) {
      if (fields[1] != "-" && !unescape(fields[1], &table.tablespace)) return corrupt("bad escape");
      if (fields[2] == "DISK") {
        table.storage = ColumnStorage::kDisk;
      } else if (fields[2] == "MEMORY") {
        table.storage = ColumnStorage::kMemory;
      } else if (fields[2] != "DEFAULT") {
        return corrupt("bad table storage");
      }
    } else if (fields[0] == "comment" && fields.size() == 2) {
      if (!unescape(fields[1], &table.comment)) return corrupt("bad escape");
    } else if (fields[0] == "partition" && fields.size() == 3 && fields[1] == "KEY") {
      uint64_t count = 0;
      for (char c : fields[2]) {
        if (c < '0' || c > '9' || count > ::duo::protocol::kFragmentCountMax) {
          return corrupt("bad partition count");
        }
        count = count * 10 + static_cast<uint64_t>(c - '0');
      }
      if (fields[2].empty() || count > ::duo::protocol::kFragmentCountMax) {
        return corrupt("bad partition count");
      }
      table.partition_by_key = true;
      table.partitions = static_cast<uint32_t>(count);
    } else {
      return corrupt("unknown record");
    }
  }
  if (table.columns.empty() || table.indexes.empty()) return corrupt("no columns or no key");
  apply_disk_storage(&table);
  return table;
}

std::vector<api::BlobPartsSpec> blob_parts_specs(const SqlTable& table) {
  std::vector<api::BlobPartsSpec> out;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (table.columns[c].blob_part_bytes == 0) continue;
    out.push_back(api::BlobPartsSpec{static_cast<uint16_t>(c), table.columns[c].blob_part_bytes});
  }
  return out;
}

int ordered_index_number(const storage::TableSchema& schema, std::string_view name) {
  for (size_t i = 0; i < schema.ordered_indexes.size(); ++i) {
    if (schema.ordered_indexes[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Result<SqlTable> from_table_def(const ::duo::protocol::TableDef& table_def) {
  std::string db, name;
  if (!split_cluster_table_name(table_def.schema.name, &db, &name)) {
    return Status(ErrorCode::kNoSuchTable, "not an SQL table: " + table_def.schema.name);
  }
  DUO_ASSIGN_OR_RETURN(SqlTable table, decode_sql_definition(table_def.sql_definition,
                                                             std::move(db), std::move(name)));
  if (table.columns.size() != table_def.schema.columns.size()) {
    return Status(ErrorCode::kCorruption,
                  "SQL definition and schema of " + table_def.schema.name + " disagree");
  }
  table.read_backup = (table_def.flags & ::duo::protocol::kTableReadBackup) != 0;
  table.tablespace_id = table_def.tablespace_id;
  return table;
}

protocol::FieldType field_type(const SqlColumn& column) {
  using protocol::FieldType;
  if (!column.enum_values.empty()) return FieldType::kString;  // as MySQL sends ENUM / SET
  if (column.is_year) return FieldType::kYear;
  if (column.bit_width > 0) return FieldType::kBit;
  switch (column.storage.type) {
    case storage::ColumnType::kTinyInt:
      return FieldType::kTiny;
    case storage::ColumnType::kSmallInt:
      return FieldType::kShort;
    case storage::ColumnType::kMediumInt:
      return FieldType::kInt24;
    case storage::ColumnType::kInt:
      return FieldType::kLong;
    case storage::ColumnType::kBigInt:
      return FieldType::kLongLong;
    case storage::ColumnType::kFloat:
      return FieldType::kFloat;
    case storage::ColumnType::kDouble:
      return FieldType::kDouble;
    case storage::ColumnType::kDecimal:
      return FieldType::kNewDecimal;
    case storage::ColumnType::kChar:
    case storage::ColumnType::kBinary:
      return FieldType::kString;
    case storage::ColumnType::kVarchar:
    case storage::ColumnType::kVarbinary:
      return FieldType::kVarString;
    case storage::ColumnType::kDate:
      return FieldType::kDate;
    case storage::ColumnType::kTime:
      return FieldType::kTime;
    case storage::ColumnType::kDatetime:
      return FieldType::kDateTime;
    case storage::ColumnType::kTimestamp:
      return FieldType::kTimestamp;
    case storage::ColumnType::kBlob:
    case storage::ColumnType::kText:
      return column.is_json ? FieldType::kJson : FieldType::kBlob;
  }
  return FieldType::kVarString;
}

uint16_t column_flags(const SqlTable& table, uint16_t column) {
  const SqlColumn& c = table.columns[column];
  uint16_t flags = 0;
  if (!c.nullable) flags |= protocol::kNotNullFlag;
  if (table.is_key_column(column)) flags |= protocol::kPriKeyFlag;
  if (c.storage.is_unsigned) flags |= protocol::kUnsignedFlag;
  if (c.auto_increment) flags |= protocol::kAutoIncrementFlag;
  if (!c.enum_values.empty()) flags |= c.is_set ? protocol::kSetFlag : protocol::kEnumFlag;
  if (c.storage.type == storage::ColumnType::kBlob ||
      c.storage.type == storage::ColumnType::kText) {
    flags |= protocol::kBlobFlag;
  }
  if (c.storage.collation == storage::Collation::kBinary && !storage::is_integer(c.storage.type)) {
    flags |= protocol::kBinaryFlag;
  }
  // MySQL marks YEAR UNSIGNED ZEROFILL (it shows 4 digits) and BIT UNSIGNED only: a BIT
  // is not sent as a number.
  if (c.is_year) flags |= protocol::kZerofillFlag;
  if (c.bit_width == 0 &&
      (storage::is_integer(c.storage.type) || c.storage.type == storage::ColumnType::kDecimal ||
       c.storage.type == storage::ColumnType::kFloat ||
       c.storage.type == storage::ColumnType::kDouble)) {
    flags |= protocol::kNumFlag;
  }
  for (size_t i = 1; i < table.indexes.size(); ++i) {
    if (table.indexes[i].columns.front() == column) {
      flags |= table.indexes[i].kind == SqlIndexKind::kUnique ? protocol::kUniqueKeyFlag
                                                              : protocol::kMultipleKeyFlag;
    }
  }
  return flags;
}

uint32_t display_length(const SqlColumn& column) {
  const storage::ColumnDef& def = column.storage;
  if (column.is_year) return 4;
  if (column.bit_width > 0) return column.bit_width;
  switch (def.type) {
    case storage::ColumnType::kTinyInt:
      return 4;
    case storage::ColumnType::kSmallInt:
      return 6;
    case storage::ColumnType::kMediumInt:
      return 9;
    case storage::ColumnType::kInt:
      return 11;
    case storage::ColumnType::kBigInt:
      return 20;
    case storage::ColumnType::kFloat:
      return 12;
    case storage::ColumnType::kDouble:
      return 22;
    case storage::ColumnType::kDecimal:
      return def.precision + 2u;
    case storage::ColumnType::kDate:
      return 10;
    case storage::ColumnType::kTime:
      return 10 + (def.scale ? def.scale + 1u : 0u);
    case storage::ColumnType::kDatetime:
    case storage::ColumnType::kTimestamp:
      return 19 + (def.scale ? def.scale + 1u : 0u);
    case storage::ColumnType::kBlob:
    case storage::ColumnType::kText:
      // MySQL: the size class's bytes (TEXT's times the utf8mb4 maximum, up to 4G-1).
      if (def.type == storage::ColumnType::kText && !column.is_json) {
        return static_cast<uint32_t>(
            std::min<uint64_t>(column.blob_bytes_max * kUtf8mb4BytesMax, kLongBlobBytesMax));
      }
      return static_cast<uint32_t>(column.blob_bytes_max);
    default:
      return def.length;
  }
}

}  // namespace duo::sql::catalog
