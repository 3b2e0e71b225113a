// Table-shape changes and SHOW CREATE TABLE; see table_alter.h.
#include "sql-frontend/catalog/table_alter.h"

#include <algorithm>
#include <cctype>

#include "sql-frontend/catalog/ndb_table_options.h"
#include "sql-frontend/catalog/sql_exception.h"

namespace duo::sql::catalog {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

[[noreturn]] void throw_cant_drop(const std::string& name) {
  throw SqlException(1091, "42000", "Can't DROP '" + name + "'; check that column/key exists");
}

int find_index(const SqlTable& table, std::string_view name) {
  for (size_t i = 0; i < table.indexes.size(); ++i) {
    if (iequals(table.indexes[i].name, name)) return static_cast<int>(i);
  }
  return -1;
}

// MySQL's identifier quoting: backticks, a backtick doubled.
std::string quote_name(const std::string& name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  return out + "`";
}

std::string quote_value(const std::string& value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') out += '\'';
    if (c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// Inserts column `column` at position `at`, renumbering the index columns after it.
void insert_column(TableChange* change, size_t at, SqlColumn column, int origin) {
  SqlTable& table = change->table;
  table.columns.insert(table.columns.begin() + static_cast<std::ptrdiff_t>(at), std::move(column));
  change->origin.insert(change->origin.begin() + static_cast<std::ptrdiff_t>(at), origin);
  for (SqlIndex& index : table.indexes) {
    for (uint16_t& id : index.columns) {
      if (id >= at) ++id;
    }
  }
}

// Moves column `from` to position `to` (an index into the columns without it),
// renumbering the index columns.
void move_column(TableChange* change, size_t from, size_t to) {
  SqlTable& table = change->table;
  std::vector<size_t> order;  // order[new position] = old position
  for (size_t i = 0; i < table.columns.size(); ++i) {
    if (i != from) order.push_back(i);
  }
  order.insert(order.begin() + static_cast<std::ptrdiff_t>(to), from);
  std::vector<uint16_t> new_position(order.size());
  std::vector<SqlColumn> columns;
  std::vector<int> origin;
  for (size_t i = 0; i < order.size(); ++i) {
    new_position[order[i]] = static_cast<uint16_t>(i);
    columns.push_back(std::move(table.columns[order[i]]));
    origin.push_back(change->origin[order[i]]);
  }
  table.columns = std::move(columns);
  change->origin = std::move(origin);
  for (SqlIndex& index : table.indexes) {
    for (uint16_t& id : index.columns) id = new_position[id];
  }
}

}  // namespace

TableChange::TableChange(SqlTable old) : table(std::move(old)) {
  for (size_t i = 0; i < table.columns.size(); ++i) origin.push_back(static_cast<int>(i));
}

void add_index(TableChange* change, const IndexDef& def) {
  SqlTable& table = change->table;
  std::vector<uint16_t> columns;
  for (const IndexColumn& ic : def.columns) {
    const int id = table.find_column(ic.name.name);
    if (id < 0) {
      throw SqlException(1072, "42000", "Key column '" + ic.name.name + "' doesn't exist in table");
    }
    if (ic.prefix_length) throw_not_supported("index prefix lengths");
    const SqlColumn& column = table.columns[static_cast<size_t>(id)];
    if (column.is_json) {
      throw SqlException(3152, "42000",
                         "JSON column '" + column.name +
                             "' supports indexing only via generated columns on a specified "
                             "JSON path.");
    }
    if (column.blob_bytes_max > 0) {
      throw SqlException(1170, "42000",
                         "BLOB/TEXT column '" + column.name +
                             "' used in key specification without a key length");
    }
    columns.push_back(static_cast<uint16_t>(id));
  }
  if (def.kind == IndexKind::kPrimary) {
    throw SqlException(1068, "42000", "Multiple primary key defined");
  }
  if (def.name &&
      (iequals(def.name->name, "PRIMARY") || iequals(def.name->name, kPrimaryOrderedIndex))) {
    throw SqlException(1280, "42000", "Incorrect index name '" + def.name->name + "'");
  }
  if (table.indexes.size() - 1 >= kSecondaryIndexesMax) {
    throw SqlException(1069, "42000", "Too many keys specified; max 64 keys allowed");
  }
  const std::string name = def.name ? def.name->name : table.columns[columns.front()].name;
  // MySQL names an unnamed index after its first column, then _2, _3 ...
  std::string unique_name = name;
  for (int n = 2; find_index(table, unique_name) >= 0; ++n) {
    if (def.name) throw SqlException(1061, "42000", "Duplicate key name '" + name + "'");
    unique_name = name + "_" + std::to_string(n);
  }
  table.indexes.push_back(
      SqlIndex{def.kind == IndexKind::kUnique ? SqlIndexKind::kUnique : SqlIndexKind::kKey,
               unique_name, std::move(columns)});
}

void drop_index(TableChange* change, const std::string& name) {
  SqlTable& table = change->table;
  const int at = find_index(table, name);
  if (at < 0) throw_cant_drop(name);
  if (table.indexes[at].kind == SqlIndexKind::kPrimary) {
    throw_not_supported("dropping the PRIMARY KEY");
  }
  table.indexes.erase(table.indexes.begin() + at);
}

void add_column(TableChange* change, const AlterAction& action) {
  SqlTable& table = change->table;
  const ColumnDef& def = action.column;
  if (table.find_column(def.name.name) >= 0) {
    throw SqlException(1060, "42S21", "Duplicate column name '" + def.name.name + "'");
  }
  if (def.primary_key) throw SqlException(1068, "42000", "Multiple primary key defined");
  if (def.auto_increment) throw_not_supported("ALTER TABLE ADD COLUMN ... AUTO_INCREMENT");
  SqlColumn column = column_from_def(def);
  size_t at = table.columns.size();
  if (action.position == ColumnPosition::kFirst) {
    at = 0;
  } else if (action.position == ColumnPosition::kAfter) {
    const int after = action.after ? table.find_column(action.after->name) : -1;
    if (after < 0) {
      throw_unknown_column(action.after ? action.after->name : std::string(), table.name);
    }
    at = static_cast<size_t>(after) + 1;
  }
  insert_column(change, at, std::move(column), -1);
  change->copy_rows = true;
  if (def.unique) {
    IndexDef unique;
    unique.kind = IndexKind::kUnique;
    unique.columns.push_back(IndexColumn{def.name, std::nullopt, false});
    add_index(change, unique);
  }
}

void drop_column(TableChange* change, const std::string& name) {
  SqlTable& table = change->table;
  const int found = table.find_column(name);
  if (found < 0) throw_cant_drop(name);
  const uint16_t id = static_cast<uint16_t>(found);
  if (table.columns.size() == 1) {
    throw SqlException(1090, "42000",
                       "You can't delete all columns with ALTER TABLE; use DROP TABLE instead");
  }
  if (table.is_key_column(id)) throw_not_supported("dropping a PRIMARY KEY column");
  for (SqlIndex& index : table.indexes) {
    std::erase(index.columns, id);
    for (uint16_t& c : index.columns) {
      if (c > id) --c;
    }
  }
  std::erase_if(table.indexes, [](const SqlIndex& index) { return index.columns.empty(); });
  table.columns.erase(table.columns.begin() + id);
  change->origin.erase(change->origin.begin() + id);
  change->copy_rows = true;
}

void modify_column(TableChange* change, const AlterAction& action) {
  SqlTable& table = change->table;
  const ColumnDef& def = action.column;
  const std::string& old_name =
      action.kind == AlterActionKind::kChangeColumn ? action.name.name : def.name.name;
  const int found = table.find_column(old_name);
  if (found < 0) throw_unknown_column(old_name, table.name);
  const uint16_t id = static_cast<uint16_t>(found);
  const int taken = table.find_column(def.name.name);
  if (taken >= 0 && taken != found) {
    throw SqlException(1060, "42S21", "Duplicate column name '" + def.name.name + "'");
  }
  if (def.primary_key) throw SqlException(1068, "42000", "Multiple primary key defined");
  SqlColumn column = column_from_def(def);
  if (table.is_key_column(id)) {
    // MySQL makes a key column NOT NULL unless NULL is asked for explicitly.
    if (def.nullable == true) {
      throw SqlException(1171, "42000",
                         "All parts of a PRIMARY KEY must be NOT NULL; if you need NULL in a "
                         "key, use UNIQUE instead");
    }
    column.nullable = false;
    column.storage.nullable = false;
  }
  if (column.auto_increment && !table.columns[id].auto_increment) {
    throw_not_supported("ALTER TABLE MODIFY/CHANGE to AUTO_INCREMENT");
  }
  table.columns[id] = std::move(column);
  change->copy_rows = true;
  if (action.position != ColumnPosition::kDefault) {
    size_t to = 0;
    if (action.position == ColumnPosition::kAfter) {
      // Looked up among the other columns: AFTER itself is an unknown column in MySQL.
      int after = action.after ? table.find_column(action.after->name) : -1;
      if (after == found) after = -1;
      if (after < 0) {
        throw_unknown_column(action.after ? action.after->name : std::string(), table.name);
      }
      to = static_cast<size_t>(after) + (after < found ? 1 : 0);
    }
    move_column(change, id, to);
  }
  if (def.unique) {
    IndexDef unique;
    unique.kind = IndexKind::kUnique;
    unique.columns.push_back(IndexColumn{def.name, std::nullopt, false});
    add_index(change, unique);
  }
}

void set_column_default(TableChange* change, const AlterAction& action) {
  SqlTable& table = change->table;
  const int found = table.find_column(action.name.name);
  if (found < 0) throw_unknown_column(action.name.name, table.name);
  SqlColumn& column = table.columns[static_cast<size_t>(found)];
  if (action.kind == AlterActionKind::kDropDefault) {
    column.has_default = false;
    column.default_value.reset();
    return;
  }
  set_default(&column, *action.default_value);
}

void set_table_comment(TableChange* change, const std::string& comment) {
  SqlTable& table = change->table;
  std::vector<std::string> ignored;  // CREATE TABLE's warnings; ALTER keeps quiet
  // READ_BACKUP changes in place too: the dictionary's ALTER_TABLEREQ takes the flag.
  apply_table_comment(&table, comment, table.read_backup, &ignored);
}

TableChange plan_alter(const SqlTable& table, const AlterTableStatement& statement) {
  TableChange change(table);
  for (const AlterAction& action : statement.actions) {
    switch (action.kind) {
      case AlterActionKind::kAddColumn:
        add_column(&change, action);
        break;
      case AlterActionKind::kDropColumn:
        drop_column(&change, action.name.name);
        break;
      case AlterActionKind::kAddIndex:
        add_index(&change, action.index);
        break;
      case AlterActionKind::kDropIndex:
        drop_index(&change, action.name.name);
        break;
      case AlterActionKind::kDropPrimaryKey:
        throw_not_supported("dropping the PRIMARY KEY");
      case AlterActionKind::kModifyColumn:
      case AlterActionKind::kChangeColumn:
        modify_column(&change, action);
        break;
      case AlterActionKind::kSetDefault:
      case AlterActionKind::kDropDefault:
        set_column_default(&change, action);
        break;
      case AlterActionKind::kRenameTable:
        change.new_name = *action.new_name;
        break;
      case AlterActionKind::kTableOptions:
        // ENGINE= was checked by the executor (engine_substitution.h): always ndbcluster.
        if (action.options.comment) set_table_comment(&change, *action.options.comment);
        // TABLESPACE / STORAGE: where the columns go follows in the executor
        // (apply_disk_storage; a column moving copies the rows).
        if (action.options.tablespace) change.table.tablespace = *action.options.tablespace;
        if (action.options.storage != ColumnStorage::kDefault) {
          change.table.storage = action.options.storage;
        }
        break;
    }
  }
  return change;
}

std::string show_create_table_text(const SqlTable& table, std::optional<uint64_t> auto_increment) {
  std::string out = "CREATE TABLE " + quote_name(table.name) + " (\n";
  std::vector<std::string> lines;
  for (const SqlColumn& column : table.columns) {
    std::string type = column.declared_type;
    std::string collate;
    if (type.ends_with(" binary")) {
      type.resize(type.size() - 7);
      collate = " COLLATE utf8mb4_bin";
    }
    std::string line = "  " + quote_name(column.name) + " " + type + collate;
    const bool blob = column.blob_bytes_max > 0;  // BLOB, TEXT, JSON: no DEFAULT NULL shown
    const bool timestamp = type.starts_with("timestamp");
    if (!column.nullable) {
      line += " NOT NULL";
    } else if (timestamp) {
      line += " NULL";
    }
    // As declared (NDB's mysqld shows the column's own STORAGE, not the table's).
    if (column.declared_storage == ColumnStorage::kDisk) line += " /*!50606 STORAGE DISK */";
    if (column.declared_storage == ColumnStorage::kMemory) line += " /*!50606 STORAGE MEMORY */";
    if (column.has_default) {
      if (!column.default_value) {
        line += " DEFAULT NULL";
      } else if (column.bit_width > 0) {
        line += " DEFAULT " + *shown_default(column);  // b'101', unquoted as MySQL shows it
      } else {
        line += " DEFAULT " + quote_value(*column.default_value);
      }
    } else if (column.nullable && !blob) {
      line += " DEFAULT NULL";
    }
    if (column.auto_increment) line += " AUTO_INCREMENT";
    lines.push_back(std::move(line));
  }
  // MySQL lists keys sorted: the primary key, unique keys without nullable columns,
  // other unique keys, then the rest; in definition order within each group.
  std::vector<const SqlIndex*> keys;
  for (const SqlIndex& index : table.indexes) keys.push_back(&index);
  const auto rank = [&](const SqlIndex* index) {
    if (index->kind == SqlIndexKind::kPrimary) return 0;
    if (index->kind == SqlIndexKind::kKey) return 3;
    for (uint16_t id : index->columns) {
      if (table.columns[id].nullable) return 2;
    }
    return 1;
  };
  std::stable_sort(keys.begin(), keys.end(),
                   [&](const SqlIndex* a, const SqlIndex* b) { return rank(a) < rank(b); });
  for (const SqlIndex* key : keys) {
    const SqlIndex& index = *key;
    std::string columns;
    for (uint16_t id : index.columns) {
      if (!columns.empty()) columns += ",";
      columns += quote_name(table.columns[id].name);
    }
    switch (index.kind) {
      case SqlIndexKind::kPrimary:
        lines.push_back("  PRIMARY KEY (" + columns + ")");
        break;
      case SqlIndexKind::kUnique:
        lines.push_back("  UNIQUE KEY " + quote_name(index.name) + " (" + columns + ")");
        break;
      case SqlIndexKind::kKey:
        lines.push_back("  KEY " + quote_name(index.name) + " (" + columns + ")");
        break;
    }
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    out += lines[i];
    out += i + 1 < lines.size() ? ",\n" : "\n";
  }
  out += ")";
  if (!table.tablespace.empty() || table.storage != ColumnStorage::kDefault) {
    out += " /*!50100";
    if (!table.tablespace.empty()) out += " TABLESPACE " + quote_name(table.tablespace);
    if (table.storage == ColumnStorage::kDisk) out += " STORAGE DISK";
    if (table.storage == ColumnStorage::kMemory) out += " STORAGE MEMORY";
    out += " */";
  }
  out += " ENGINE=ndbcluster";
  if (auto_increment && *auto_increment > 1) {
    out += " AUTO_INCREMENT=" + std::to_string(*auto_increment);
  }
  out += " DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci";
  // As written: NDB shows READ_BACKUP only when the comment says it (a table that got
  // it from ndb_read_backup shows no comment).
  if (!table.comment.empty()) out += " COMMENT=" + quote_value(table.comment);
  // As NDB shows a table created with PARTITION BY KEY () (the others show nothing).
  if (table.partition_by_key) {
    out += "\n/*!50100 PARTITION BY KEY ()";
    if (table.partitions != 0) out += "\nPARTITIONS " + std::to_string(table.partitions);
    out += " */";
  }
  return out;
}

}  // namespace duo::sql::catalog
