// Transaction's BLOB/TEXT parts handling (NDB's NdbBlob, on the layout of blob_parts.h):
// writes split a whole value into the row's head and parts rows in the same
// transaction; reads put the value back together before the caller sees it.
//
// Consistency: every change of a value with parts takes the head's exclusive lock
// first (an insert creates the row; update/write/remove read the head with an
// exclusive lock, which also tells how many parts the old value has, so the surplus is
// removed). Readers lock the head shared, then read the parts under shared locks, so a
// value is never seen torn; all of it is one transaction, so an abort leaves no parts
// behind and no head without its parts. Parts go out in batches of kBlobBatchBytesMax.
//
// Thread-safety: as Transaction (one thread at a time); the session's mutex is taken
// only around core calls.
#include <algorithm>

#include "ndb-kernel/api/cluster_connection.h"

namespace duo::api {

namespace {

bool missing_table(const Status& status) {
  return status.is(ErrorCode::kNoSuchTable) || status.is(ErrorCode::kNotFound);
}

// The key columns of `table` taken from `values`.
storage::AttrValues key_of(const TableDef& table, const storage::AttrValues& values) {
  storage::AttrValues key;
  for (uint16_t column : table.schema.primary_key) {
    const int at = values.find(column);
    if (at >= 0) key.add(column, values.value(static_cast<size_t>(at)));
  }
  return key;
}

}  // namespace

Result<std::vector<Transaction::BlobColumn>> Transaction::blob_columns(const TableDef& table) {
  std::vector<BlobColumn> out;
  for (uint16_t column : blob_parts_columns(table)) {
    Result<TablePtr> parts = session_->cluster_->get_table(
        blob_parts_table_name(table.schema.name, table.schema.table_id, column));
    if (!parts.ok()) {
      // A table made without parts tables keeps its values inline (longer ones are
      // refused by the data node as too long).
      if (missing_table(parts.status())) continue;
      return parts.status();
    }
    out.push_back(BlobColumn{column, table.schema.columns[column].length,
                             blob_part_bytes(**parts), *parts});
  }
  return out;
}

Result<std::optional<std::vector<uint64_t>>> Transaction::lock_blob_heads(
    const TableDef& table, const storage::AttrValues& key, const std::vector<BlobColumn>& columns) {
  std::vector<uint16_t> ids;
  for (const BlobColumn& column : columns) ids.push_back(column.column);
  uint32_t op = 0;
  {
    std::lock_guard<std::mutex> lock(session_->mutex_);
    DUO_ASSIGN_OR_RETURN(op, session_->core_.read(api_tx_, table, key, ids, LockMode::kExclusive,
                                                  OpOptions{.ignore_error = true}));
  }
  DUO_RETURN_IF_ERROR(execute_batch(ExecType::kNoCommit));
  DUO_ASSIGN_OR_RETURN(OpResult read, raw_result(op));
  if (read.status.is(ErrorCode::kNotFound)) return std::optional<std::vector<uint64_t>>();
  DUO_RETURN_IF_ERROR(read.status);
  std::vector<uint64_t> totals;
  for (const BlobColumn& column : columns) {
    const int at = read.values.find(column.column);
    const bool null = at < 0 || read.values.entry(static_cast<size_t>(at)).is_null;
    totals.push_back(null ? 0 : blob_total_bytes(read.values.value(static_cast<size_t>(at))));
  }
  return std::optional<std::vector<uint64_t>>(std::move(totals));
}

storage::AttrValues Transaction::with_blob_heads(const storage::AttrValues& row,
                                                 const std::vector<BlobColumn>& columns) {
  storage::AttrValues out;
  for (size_t k = 0; k < row.size(); ++k) {
    const storage::AttrValues::Entry& entry = row.entry(k);
    if (entry.is_null) {
      out.add_null(entry.column);
      continue;
    }
    const auto blob = std::find_if(columns.begin(), columns.end(),
                                   [&](const BlobColumn& c) { return c.column == entry.column; });
    out.add(entry.column, blob == columns.end() ? row.value(k)
                                                : std::string_view(blob_head(row.value(k),
                                                                             blob->inline_bytes)));
  }
  return out;
}

Status Transaction::define_blob_parts(const TableDef& table, const storage::AttrValues& key_source,
                                      const BlobColumn& column, std::string_view whole,
                                      uint64_t old_count, bool fresh_row) {
  const uint64_t count =
      whole.empty() ? 0
                    : blob_part_count(blob_total_bytes(whole), column.inline_bytes, column.part_bytes);
  for (uint64_t part = 0; part < count; ++part) {
    const std::string_view data = blob_part_data(whole, column.inline_bytes, column.part_bytes, part);
    DUO_ASSIGN_OR_RETURN(storage::AttrValues row, blob_part_row(table, key_source, part, data));
    {
      std::lock_guard<std::mutex> lock(session_->mutex_);
      // A part the old value did not have is new: insert (a stray row there would be a
      // bug, and fails the transaction instead of being overwritten).
      if (fresh_row || part >= old_count) {
        DUO_RETURN_IF_ERROR(session_->core_.insert(api_tx_, *column.parts, std::move(row)).status());
      } else {
        DUO_RETURN_IF_ERROR(session_->core_.write(api_tx_, *column.parts, std::move(row)).status());
      }
    }
    blob_batch_bytes_ += data.size();
    if (blob_batch_bytes_ >= kBlobBatchBytesMax) {
      DUO_RETURN_IF_ERROR(execute_batch(ExecType::kNoCommit));
    }
  }
  for (uint64_t part = count; part < old_count; ++part) {
    DUO_ASSIGN_OR_RETURN(storage::AttrValues key, blob_part_key(table, key_source, part));
    std::lock_guard<std::mutex> lock(session_->mutex_);
    DUO_RETURN_IF_ERROR(session_->core_.remove(api_tx_, *column.parts, std::move(key)).status());
  }
  return Status::OK();
}

Result<uint32_t> Transaction::insert_with_blobs(const TableDef& table, storage::AttrValues row,
                                                OpOptions options,
                                                const std::vector<BlobColumn>& columns) {
  uint32_t op = 0;
  {
    std::lock_guard<std::mutex> lock(session_->mutex_);
    DUO_ASSIGN_OR_RETURN(op, session_->core_.insert(api_tx_, table, with_blob_heads(row, columns),
                                                    options));
  }
  bool has_parts = false;
  for (const BlobColumn& column : columns) {
    const int at = row.find(column.column);
    has_parts = has_parts || (at >= 0 && !row.entry(static_cast<size_t>(at)).is_null &&
                              !blob_head_is_whole(blob_head(row.value(static_cast<size_t>(at)),
                                                            column.inline_bytes)));
  }
  if (!has_parts) return op;
  if (options.ignore_error) {
    // The row may exist (INSERT IGNORE): only a row this insert made gets parts.
    DUO_RETURN_IF_ERROR(execute_batch(ExecType::kNoCommit));
    DUO_ASSIGN_OR_RETURN(OpResult inserted, raw_result(op));
    if (!inserted.status.ok()) return op;
  }
  for (const BlobColumn& column : columns) {
    const int at = row.find(column.column);
    if (at < 0 || row.entry(static_cast<size_t>(at)).is_null) continue;
    DUO_RETURN_IF_ERROR(define_blob_parts(table, row, column, row.value(static_cast<size_t>(at)),
                                          0, /*fresh_row=*/true));
  }
  return op;
}

Result<uint32_t> Transaction::change_with_blobs(OpType kind, const TableDef& table,
                                                storage::AttrValues key, storage::AttrValues values,
                                                OpOptions options,
                                                const std::vector<BlobColumn>& columns) {
  if (kind == OpType::kWrite) key = key_of(table, values);
  DUO_ASSIGN_OR_RETURN(std::optional<std::vector<uint64_t>> old_totals,
                       lock_blob_heads(table, key, columns));
  uint32_t op = 0;
  {
    std::lock_guard<std::mutex> lock(session_->mutex_);
    storage::AttrValues heads = with_blob_heads(values, columns);
    Result<uint32_t> defined = uint32_t{0};
    if (kind == OpType::kUpdate) {
      defined = session_->core_.update(api_tx_, table, key, std::move(heads), options);
    } else if (kind == OpType::kWrite && !old_totals) {
      // No row to lock: an insert, so that a row made meanwhile by another transaction
      // fails this one instead of getting our parts beside its own.
      defined = session_->core_.insert(api_tx_, table, std::move(heads), options);
    } else if (kind == OpType::kWrite) {
      defined = session_->core_.write(api_tx_, table, std::move(heads), options);
    } else {
      defined = session_->core_.remove(api_tx_, table, key, options);
    }
    DUO_ASSIGN_OR_RETURN(op, std::move(defined));
  }
  if (!old_totals) {
    // No such row: the operation fails as it would without blobs (or, for a write that
    // became an insert, must succeed before parts are added under its lock).
    if (kind != OpType::kWrite) return op;
    DUO_RETURN_IF_ERROR(execute_batch(ExecType::kNoCommit));
    DUO_ASSIGN_OR_RETURN(OpResult inserted, raw_result(op));
    if (!inserted.status.ok()) return op;
  }
  for (size_t k = 0; k < columns.size(); ++k) {
    const BlobColumn& column = columns[k];
    const uint64_t old_count =
        old_totals ? blob_part_count((*old_totals)[k], column.inline_bytes, column.part_bytes) : 0;
    const int at = values.find(column.column);
    const std::string_view whole = (kind == OpType::kDelete || at < 0 ||
                                    values.entry(static_cast<size_t>(at)).is_null)
                                       ? std::string_view()
                                       : values.value(static_cast<size_t>(at));
    DUO_RETURN_IF_ERROR(
        define_blob_parts(table, key, column, whole, old_count, /*fresh_row=*/!old_totals));
  }
  return op;
}

Status Transaction::fetch_blob_values(const TableDef& table, const std::vector<BlobColumn>& columns,
                                      const storage::AttrValues& key_source,
                                      storage::AttrValues* values) {
  std::vector<const BlobColumn*> partial;
  for (const BlobColumn& column : columns) {
    const int at = values->find(column.column);
    if (at >= 0 && !values->entry(static_cast<size_t>(at)).is_null &&
        !blob_head_is_whole(values->value(static_cast<size_t>(at)))) {
      partial.push_back(&column);
    }
  }
  if (partial.empty()) return Status::OK();
  // The head as read may be older than the parts now: read it again under a shared
  // lock, which keeps writers of the value (they lock the head) away until we commit.
  const storage::AttrValues key = key_of(table, key_source);
  std::vector<uint16_t> ids;
  for (const BlobColumn* column : partial) ids.push_back(column->column);
  uint32_t head_op = 0;
  {
    std::lock_guard<std::mutex> lock(session_->mutex_);
    DUO_ASSIGN_OR_RETURN(head_op,
                         session_->core_.read(api_tx_, table, key, ids, LockMode::kShared));
  }
  DUO_RETURN_IF_ERROR(execute_batch(ExecType::kNoCommit));
  DUO_ASSIGN_OR_RETURN(OpResult heads, raw_result(head_op));
  DUO_RETURN_IF_ERROR(heads.status);
  std::map<uint16_t, std::string> whole_values;
  for (const BlobColumn* column : partial) {
    const int at = heads.values.find(column->column);
    if (at < 0 || heads.values.entry(static_cast<size_t>(at)).is_null) continue;  // now NULL
    const std::string head(heads.values.value(static_cast<size_t>(at)));
    const uint64_t count =
        blob_part_count(blob_total_bytes(head), column->inline_bytes, column->part_bytes);
    std::vector<uint32_t> ops;
    std::vector<std::string> parts;
    const auto collect = [&]() -> Status {
      DUO_RETURN_IF_ERROR(execute_batch(ExecType::kNoCommit));
      for (uint32_t op : ops) {
        DUO_ASSIGN_OR_RETURN(OpResult part, raw_result(op));
        if (part.status.is(ErrorCode::kNotFound)) {
          return Status(ErrorCode::kCorruption, "blob part " + std::to_string(parts.size()) +
                                                    " of '" + table.schema.name + "' is missing");
        }
        DUO_RETURN_IF_ERROR(part.status);
        if (part.values.size() != 1) {
          return Status(ErrorCode::kCorruption, "blob part row without its data");
        }
        parts.emplace_back(part.values.value(0));
      }
      ops.clear();
      return Status::OK();
    };
    const uint16_t data_column = static_cast<uint16_t>(table.schema.primary_key.size() + 1);
    size_t batch_bytes = 0;
    for (uint64_t part = 0; part < count; ++part) {
      DUO_ASSIGN_OR_RETURN(storage::AttrValues part_key, blob_part_key(table, key_source, part));
      {
        std::lock_guard<std::mutex> lock(session_->mutex_);
        DUO_ASSIGN_OR_RETURN(const uint32_t op,
                             session_->core_.read(api_tx_, *column->parts, std::move(part_key),
                                                  {data_column}, LockMode::kShared,
                                                  OpOptions{.ignore_error = true}));
        ops.push_back(op);
      }
      batch_bytes += column->part_bytes;
      if (batch_bytes >= kBlobBatchBytesMax) {
        DUO_RETURN_IF_ERROR(collect());
        batch_bytes = 0;
      }
    }
    if (!ops.empty()) DUO_RETURN_IF_ERROR(collect());
    DUO_ASSIGN_OR_RETURN(std::string whole, blob_assemble(head, parts));
    whole_values.emplace(column->column, std::move(whole));
  }
  storage::AttrValues out;
  for (size_t k = 0; k < values->size(); ++k) {
    const storage::AttrValues::Entry& entry = values->entry(k);
    const auto whole = whole_values.find(entry.column);
    if (whole != whole_values.end()) {
      out.add(entry.column, whole->second);
    } else if (entry.is_null ||
               std::any_of(partial.begin(), partial.end(),
                           [&](const BlobColumn* c) { return c->column == entry.column; })) {
      out.add_null(entry.column);  // NULL, or became NULL before the head was locked
    } else {
      out.add(entry.column, values->value(k));
    }
  }
  *values = std::move(out);
  return Status::OK();
}

Status Transaction::complete_blob_reads() {
  std::vector<BlobRead> reads = std::move(blob_reads_);
  blob_reads_.clear();
  for (BlobRead& read : reads) {
    DUO_ASSIGN_OR_RETURN(OpResult result, raw_result(read.op));
    if (!result.status.ok()) continue;  // the caller sees the read's own error
    DUO_ASSIGN_OR_RETURN(std::vector<BlobColumn> columns, blob_columns(read.table));
    storage::AttrValues values = result.values;
    storage::AttrValues key_source = read.key;
    for (size_t k = 0; k < values.size(); ++k) {
      if (key_source.find(values.entry(k).column) < 0 && !values.entry(k).is_null) {
        key_source.add(values.entry(k).column, values.value(k));
      }
    }
    DUO_RETURN_IF_ERROR(fetch_blob_values(read.table, columns, key_source, &values));
    blob_results_[read.op] = std::move(values);
  }
  return Status::OK();
}

}  // namespace duo::api
