// Result-set column metadata; see statement_context.h.
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

protocol::FieldType infer_type(const std::vector<std::vector<SqlValue>>& rows, size_t column) {
  protocol::FieldType type = protocol::FieldType::kNull;
  for (const auto& row : rows) {
    switch (row[column].kind) {
      case SqlValue::Kind::kNull:
        continue;
      case SqlValue::Kind::kInt:
      case SqlValue::Kind::kUInt:
        if (type == protocol::FieldType::kNull) type = protocol::FieldType::kLongLong;
        break;
      case SqlValue::Kind::kDouble:
        if (type != protocol::FieldType::kVarString) type = protocol::FieldType::kDouble;
        break;
      case SqlValue::Kind::kDecimal:
        if (type == protocol::FieldType::kNull || type == protocol::FieldType::kLongLong) {
          type = protocol::FieldType::kNewDecimal;
        }
        break;
      case SqlValue::Kind::kString:
        type = protocol::FieldType::kVarString;
        break;
    }
  }
  return type;
}

server::ColumnDefinition41 table_column_definition(const catalog::SqlTable& table, uint16_t column,
                                                   const std::string& label) {
  const catalog::SqlColumn& c = table.columns[column];
  server::ColumnDefinition41 def;
  def.schema = table.db;
  def.table = table.name;
  def.org_table = table.name;
  def.name = label;
  def.org_name = c.name;
  def.type = catalog::field_type(c);
  def.flags = catalog::column_flags(table, column);
  def.column_length = catalog::display_length(c);
  if (c.storage.collation == storage::Collation::kBinary) def.character_set = 63;
  if (c.storage.type == storage::ColumnType::kChar ||
      c.storage.type == storage::ColumnType::kVarchar) {
    def.column_length = c.char_length * 4;
  }
  def.decimals = c.storage.type == storage::ColumnType::kDecimal ? c.storage.scale
                 : (c.storage.type == storage::ColumnType::kFloat ||
                    c.storage.type == storage::ColumnType::kDouble)
                     ? 31
                     : c.storage.scale;
  return def;
}

server::ColumnDefinition41 computed_column_definition(const std::string& label,
                                                      protocol::FieldType type) {
  server::ColumnDefinition41 def;
  def.name = label;
  def.type = type;
  switch (type) {
    case protocol::FieldType::kLongLong:
      def.column_length = 21;
      def.character_set = 63;
      def.flags = protocol::kNumFlag | protocol::kBinaryFlag;
      break;
    case protocol::FieldType::kDouble:
      def.column_length = 22;
      def.decimals = 31;
      def.character_set = 63;
      def.flags = protocol::kNumFlag | protocol::kBinaryFlag;
      break;
    case protocol::FieldType::kNewDecimal:
      def.column_length = 67;
      def.decimals = 30;
      def.character_set = 63;
      def.flags = protocol::kNumFlag | protocol::kBinaryFlag;
      break;
    case protocol::FieldType::kNull:
      def.character_set = 63;
      def.flags = protocol::kBinaryFlag;
      break;
    case protocol::FieldType::kTime:
    case protocol::FieldType::kDateTime:
    case protocol::FieldType::kTimestamp:
      // NOW(6), CAST(x AS TIME(3)) ...: the value's own fractional digits.
      def.decimals = protocol::kDecimalsNotFixed;
      def.column_length = 1024;
      break;
    default:
      def.column_length = 1024;
      break;
  }
  return def;
}
}  // namespace duo::sql::executor
