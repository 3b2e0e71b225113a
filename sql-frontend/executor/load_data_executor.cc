// LOAD DATA [LOCAL] INFILE: the file's records (load_data_format.h) become rows of
// INSERT statements run in batches through execute_insert. Inside a transaction (BEGIN,
// autocommit=0) they are part of it; in autocommit each batch commits on its own, as
// NDB's mysqld loads with ndb_use_transactions=OFF, so a file of any size loads (one
// transaction is bounded by the data nodes' operation records) — and a failure leaves
// the batches before it loaded, which the error's statement cannot undo.
//
// MySQL's rules: LOCAL needs local_infile=ON on the server (MySQL 8.0's default is OFF:
// SET GLOBAL local_infile = 1) and a client that enabled it, else 3948; with LOCAL,
// duplicate keys and bad values are warnings (as IGNORE) unless REPLACE; a record with
// fewer fields than targets sets the rest to their defaults (1261), one with more drops
// the extra (1262); `(col, @var, ...)` maps fields to columns or user variables and
// `SET col = expr` computes columns from them. The server-side form (no LOCAL) reads the
// sqld host's files, which secure_file_priv governs in MySQL: DuoDB has it NULL (off),
// so that form is refused with MySQL's 1290.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/expression.h"
#include "sql-frontend/executor/load_data_format.h"
#include "sql-frontend/executor/sql_value.h"
#include "sql-frontend/executor/statement_context.h"
#include "sql-frontend/executor/system_variables.h"
#include "sql-frontend/executor/temporary_tables.h"

namespace duo::sql::executor {

namespace {

// Rows per INSERT batch, and bytes: one batch is one round of writes to the data nodes.
constexpr size_t kBatchRowsMax = 1000;
constexpr size_t kBatchBytesMax = 4 * 1024 * 1024;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

ExprPtr literal(const std::optional<std::string>& value) {
  auto e = std::make_unique<LiteralExpr>(SourcePos{});
  if (value) {
    e->literal_kind = LiteralKind::kString;
    e->value = *value;
  }
  return e;
}

// Reads the client's file to its end, whatever the statement decided: the protocol
// needs the empty packet read before the result goes out.
class FileDrain {
 public:
  explicit FileDrain(server::LocalFileSource* source) : source_(source) {}
  ~FileDrain() {
    std::string chunk;
    while (source_ != nullptr && source_->next_chunk(&chunk)) {
    }
  }

 private:
  server::LocalFileSource* source_;
};

// One INSERT statement of the batch being built.
struct Batch {
  std::unique_ptr<InsertStatement> insert;
  size_t bytes = 0;
};

}  // namespace

server::StatementResult execute_load_data(StatementContext& context,
                                          const LoadDataStatement& statement) {
  if (!statement.local) {
    throw SqlException(1290, "HY000",
                       "The MySQL server is running with the --secure-file-priv option so it "
                       "cannot execute this statement");
  }
  server::LocalFileSource* files = context.session.local_files;
  if (system_variable("local_infile", &context.session, VariableScope::kGlobal).to_int() == 0 ||
      files == nullptr || !files->client_can_send_files()) {
    throw SqlException(3948, "42000",
                       "Loading local data is disabled; this must be enabled on both the client "
                       "and server sides");
  }
  if (statement.fields_terminated.empty() && statement.fields_enclosed.empty()) {
    throw_not_supported("LOAD DATA with fixed-width rows (empty FIELDS TERMINATED BY and "
                        "ENCLOSED BY)");
  }
  if (statement.charset) {
    const std::string cs = lower(*statement.charset);
    if (cs != "utf8mb4" && cs != "utf8mb3" && cs != "utf8" && cs != "binary" && cs != "ascii") {
      throw_not_supported("LOAD DATA CHARACTER SET " + *statement.charset);
    }
  }
  // Targets: columns of the table or user variables.
  const std::string db = context.database_of(statement.table);
  if (context.temporary_tables != nullptr &&
      context.temporary_tables->find(db, statement.table.name.name) != nullptr) {
    throw_not_supported("LOAD DATA into a temporary table");
  }
  const catalog::BoundTable bound = context.catalog.get_table(db, statement.table.name.name);
  const catalog::SqlTable& table = bound.sql;
  std::vector<std::string> targets = statement.targets;
  if (targets.empty()) {
    for (const catalog::SqlColumn& column : table.columns) targets.push_back(column.name);
  }
  // The INSERT's columns: those fields go to, then those only SET gives; a SET of a
  // column a field also names replaces the field's value (MySQL evaluates SET last).
  std::vector<Identifier> insert_columns;
  std::vector<int> slot_column;                        // insert column -> table column
  std::vector<int> field_slot(targets.size(), -1);     // target -> insert column
  std::vector<int> field_column(targets.size(), -1);   // target -> table column
  auto slot_of = [&](int column) {
    const auto at = std::find(slot_column.begin(), slot_column.end(), column);
    if (at != slot_column.end()) return static_cast<int>(at - slot_column.begin());
    insert_columns.push_back(Identifier{table.columns[column].name, false, {}});
    slot_column.push_back(column);
    return static_cast<int>(insert_columns.size() - 1);
  };
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i].starts_with("@")) continue;
    field_column[i] = table.find_column(targets[i]);
    if (field_column[i] < 0) throw_unknown_column(targets[i], "field list");
    field_slot[i] = slot_of(field_column[i]);
  }
  std::vector<int> set_slot;
  for (const Assignment& a : statement.set) {
    const int column = table.find_column(a.column->column.name);
    if (column < 0) throw_unknown_column(a.column->column.name, "field list");
    set_slot.push_back(slot_of(column));
  }
  if (insert_columns.empty()) throw_not_supported("LOAD DATA that loads no column");
  // A NOT NULL column without a DEFAULT that nothing loads gets its implicit default
  // (1364 is a warning: LOCAL is not strict).
  std::vector<int> unloaded_slot;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    const catalog::SqlColumn& def = table.columns[c];
    const bool loaded =
        std::find(slot_column.begin(), slot_column.end(), static_cast<int>(c)) != slot_column.end();
    if (!loaded && !def.has_default && !def.nullable && !def.auto_increment) {
      unloaded_slot.push_back(slot_of(static_cast<int>(c)));
    }
  }
  // Insert columns SET gives a value (a field's value for them is not used).
  std::vector<bool> set_by_set(insert_columns.size(), false);
  for (int slot : set_slot) set_by_set[slot] = true;

  // Asked for only now: every refusal above happens before the client sends anything.
  files->request(statement.file);
  FileDrain drain(files);

  LoadDataReader reader(LoadDataFormat{statement.fields_terminated, statement.fields_enclosed,
                                       statement.fields_escaped, statement.lines_starting,
                                       statement.lines_terminated});
  const EvalContext eval = context.eval();
  uint64_t records = 0;
  uint64_t affected = 0;
  uint64_t first_insert_id = 0;
  uint64_t skipped_lines = 0;
  Batch batch;
  auto new_batch = [&] {
    batch.insert = std::make_unique<InsertStatement>(SourcePos{});
    batch.insert->table = statement.table;
    batch.insert->columns = insert_columns;
    batch.insert->replace = statement.replace;
    // LOCAL: the file is already sent, so MySQL cannot stop the transfer and treats
    // duplicates and bad values as IGNORE does, unless REPLACE.
    batch.insert->ignore = statement.ignore || !statement.replace;
    batch.bytes = 0;
  };
  auto run_batch = [&] {
    if (batch.insert == nullptr || batch.insert->rows.empty()) return;
    if (context.session.interrupted()) throw SqlException(1317, "70100", "Query execution was interrupted");
    const server::StatementResult result = execute_insert(context, *batch.insert);
    if (context.open_transaction == nullptr) context.start_next_part();  // it committed
    if (const auto* ok = std::get_if<server::OkResult>(&result)) {
      affected += ok->affected_rows;
      if (first_insert_id == 0) first_insert_id = ok->last_insert_id;
    }
    new_batch();
  };
  new_batch();
  // NULL for a NOT NULL column: its implicit default and warning 1263 (LOCAL is not
  // strict), except AUTO_INCREMENT, where NULL asks for the next value.
  auto value_for = [&](int column, const std::optional<std::string>& value) -> ExprPtr {
    const catalog::SqlColumn& def = table.columns[column];
    if (value || def.nullable || def.auto_increment) return literal(value);
    context.add_warning(1263, "Column set to default value; NULL supplied to NOT NULL column '" +
                                  def.name + "' at row " + std::to_string(records));
    return literal(implicit_default(def).to_text());
  };
  // What a SET expression reads for a column a field loaded: the value as the column
  // holds it (MySQL evaluates SET after storing the fields), or the text if it does not
  // convert (the INSERT then reports that).
  auto typed = [&](int column, const SqlValue& text) -> SqlValue {
    if (text.is_null()) return text;
    try {
      return from_storage(table.columns[column], to_storage(table.columns[column], text, records));
    } catch (const SqlException&) {
      return text;
    }
  };
  // A field the record lacks: the column's default, or its implicit one.
  auto missing_value = [&](int column) -> ExprPtr {
    const catalog::SqlColumn& def = table.columns[column];
    if (def.has_default || def.nullable || def.auto_increment) {
      return std::make_unique<DefaultExpr>(SourcePos{});
    }
    return literal(implicit_default(def).to_text());
  };
  LoadDataRecord record;
  std::string chunk;
  bool at_eof = false;
  for (;;) {
    const LoadDataReader::Next next = reader.next(&record, at_eof);
    if (next == LoadDataReader::Next::kEnd) break;
    if (next == LoadDataReader::Next::kNeedMore) {
      if (files->next_chunk(&chunk)) {
        reader.feed(chunk);
      } else {
        if (files->broken()) {
          throw SqlException(1158, "08S01", "Got an error reading communication packets");
        }
        at_eof = true;
      }
      continue;
    }
    if (skipped_lines < statement.ignore_lines) {
      ++skipped_lines;
      continue;
    }
    ++records;
    std::vector<ExprPtr> row(insert_columns.size());
    std::vector<SqlValue> row_values(statement.set.empty() ? 0 : table.columns.size());
    size_t bytes = 0;
    for (size_t i = 0; i < targets.size(); ++i) {
      const std::optional<std::string>* field = i < record.size() ? &record[i] : nullptr;
      if (field != nullptr && *field) bytes += (*field)->size();
      auto value = [&] {
        return field != nullptr && *field ? SqlValue::of_string(**field) : SqlValue::null();
      };
      if (field_column[i] < 0) {  // @var
        if (context.user_variables != nullptr) {
          (*context.user_variables)[lower(targets[i].substr(1))] = value();
        }
        continue;
      }
      // Converted only for SET to read: a plain load converts once, in the INSERT.
      if (!statement.set.empty()) row_values[field_column[i]] = typed(field_column[i], value());
      if (set_by_set[field_slot[i]]) continue;  // SET gives this column its value
      row[field_slot[i]] = field == nullptr ? missing_value(field_column[i])
                                            : value_for(field_column[i], *field);
    }
    if (record.size() < targets.size()) {
      context.add_warning(1261, "Row " + std::to_string(records) +
                                    " doesn't contain data for all columns");
    } else if (record.size() > targets.size()) {
      context.add_warning(1262, "Row " + std::to_string(records) +
                                    " was truncated; it contained more data than there were "
                                    "input columns");
    }
    EvalContext row_eval = eval;
    row_eval.table = &table;
    row_eval.row = &row_values;
    for (size_t k = 0; k < statement.set.size(); ++k) {
      const SqlValue value = evaluate(*statement.set[k].value, row_eval);
      row[set_slot[k]] =
          value_for(slot_column[set_slot[k]],
                    value.is_null() ? std::nullopt : std::optional<std::string>(value.to_text()));
    }
    for (int slot : unloaded_slot) {
      const catalog::SqlColumn& def = table.columns[slot_column[slot]];
      context.add_warning(1364, "Field '" + def.name + "' doesn't have a default value");
      row[slot] = literal(implicit_default(def).to_text());
    }
    batch.insert->rows.push_back(std::move(row));
    batch.bytes += bytes;
    if (batch.insert->rows.size() >= kBatchRowsMax || batch.bytes >= kBatchBytesMax) run_batch();
  }
  run_batch();
  server::OkResult ok;
  ok.affected_rows = affected;
  ok.last_insert_id = first_insert_id;
  if (first_insert_id != 0) context.last_insert_id = first_insert_id;
  const uint64_t deleted = statement.replace && affected > records ? affected - records : 0;
  const uint64_t skipped = !statement.replace && records > affected ? records - affected : 0;
  ok.info = "Records: " + std::to_string(records) + "  Deleted: " + std::to_string(deleted) +
            "  Skipped: " + std::to_string(skipped) +
            "  Warnings: " + std::to_string(context.warning_count);
  return ok;
}

}  // namespace duo::sql::executor
