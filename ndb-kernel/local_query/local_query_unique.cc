// LocalQueryBlock: unique indexes as hidden tables (protocol/unique_index.h).
//
// Every base table with UNIQUE indexes brings its hidden tables along: they are added,
// altered (version) and dropped with it here, so checkpoints, redo, restore and the
// node-restart copy treat them as the ordinary tables they are.
//
// At the primary replica (position 0) a write on such a table yields the IndexChanges
// the coordinator must run: the row's index values are read just before the write
// (the newest version the transaction sees, without a lock) and just after it. No other
// transaction can change the row in between: the block runs one event at a time, and a
// write that had to wait for a row lock reads its "before" again when it resumes
// (resume_ready), right before the fragment re-executes it. The changes travel in the
// operation down the chain and back to the coordinator in LQH_KEYCONF.
//
// A new unique index on a table that has rows here (ALTER TABLE ... ADD UNIQUE) is not
// built: its entries belong to fragments on other log parts and node groups, which a
// local build cannot fill. The ALTER is refused (kNotSupported) and undone everywhere;
// on an empty table the hidden table starts empty and correct.
//
// Thread-safety: the block's thread only (runtime/block.h).
#include "ndb-kernel/local_query/local_query_block.h"

namespace duo::local_query {

using protocol::LqhKeyReq;
using storage::AttrValues;
using storage::Fragment;
using storage::TxId;

namespace {

// The base columns a write's before / after images need: every index column and the
// primary key, once each.
std::vector<uint16_t> image_columns(const std::vector<protocol::UniqueIndexTable>& indexes) {
  std::vector<uint16_t> columns;
  for (const protocol::UniqueIndexTable& index : indexes) {
    for (uint16_t column : index.base_columns) {
      if (std::find(columns.begin(), columns.end(), column) == columns.end()) {
        columns.push_back(column);
      }
    }
  }
  return columns;
}

}  // namespace

Status LocalQueryBlock::add_unique_index_tables(Table* base) {
  DUO_ASSIGN_OR_RETURN(std::vector<protocol::UniqueIndexTable> indexes,
                       protocol::unique_index_tables(base->def));
  for (const protocol::UniqueIndexTable& index : indexes) {
    DUO_RETURN_IF_ERROR(add_table(index.def));
  }
  base->unique_image_columns = image_columns(indexes);
  base->unique_indexes = std::move(indexes);
  return Status::OK();
}

void LocalQueryBlock::drop_unique_index_tables(const Table& base) {
  for (const protocol::UniqueIndexTable& index : base.unique_indexes) {
    if (find_table(index.def.schema.table_id) != nullptr) drop_table(index.def.schema.table_id);
  }
}

Status LocalQueryBlock::check_new_unique_indexes(const Table& base,
                                                 const protocol::TableDef& def) const {
  DUO_ASSIGN_OR_RETURN(std::vector<protocol::UniqueIndexTable> indexes,
                       protocol::unique_index_tables(def));
  size_t rows = 0;
  for (const auto& [fragment_id, fragment] : base.fragments) rows += fragment->row_count();
  if (rows == 0) return Status::OK();
  for (const protocol::UniqueIndexTable& index : indexes) {
    const bool known = std::any_of(
        base.unique_indexes.begin(), base.unique_indexes.end(), [&](const auto& old_index) {
          return old_index.def.schema.table_id == index.def.schema.table_id &&
                 old_index.base_columns == index.base_columns;
        });
    if (!known) {
      return Status(ErrorCode::kNotSupported,
                    "This version of DuoDB doesn't yet support 'ADD UNIQUE INDEX " +
                        index.index_name + " on a table with rows'");
    }
  }
  return Status::OK();
}

Status LocalQueryBlock::sync_unique_index_tables(Table* base) {
  DUO_ASSIGN_OR_RETURN(std::vector<protocol::UniqueIndexTable> indexes,
                       protocol::unique_index_tables(base->def));
  // Gone, or redefined under the same name: dropped. Kept: the new version, in place
  // (its fragments point at def.schema). New: added, empty.
  for (const protocol::UniqueIndexTable& old_index : base->unique_indexes) {
    const uint32_t id = old_index.def.schema.table_id;
    const bool kept = std::any_of(indexes.begin(), indexes.end(), [&](const auto& index) {
      return index.def.schema.table_id == id && index.base_columns == old_index.base_columns;
    });
    if (!kept && find_table(id) != nullptr) drop_table(id);
  }
  for (const protocol::UniqueIndexTable& index : indexes) {
    if (Table* hidden = find_table(index.def.schema.table_id)) {
      hidden->def.version = index.def.version;
      hidden->def.flags = index.def.flags;
      hidden->def.schema.name = index.def.schema.name;
    } else {
      DUO_RETURN_IF_ERROR(add_table(index.def));
    }
  }
  base->unique_image_columns = image_columns(indexes);
  base->unique_indexes = std::move(indexes);
  return Status::OK();
}

bool LocalQueryBlock::maintains_unique_indexes(const Table& table, const LqhKeyReq& request) {
  return request.position == 0 && request.type != storage::OpType::kRead &&
         !table.unique_indexes.empty();
}

std::optional<AttrValues> LocalQueryBlock::unique_image(const Table& table, Fragment* fragment,
                                                        TxId tx, const AttrValues& key) {
  AttrValues image;
  const storage::OpResult read = fragment->read(tx, key, storage::LockMode::kCommittedRead,
                                                table.unique_image_columns, &image);
  if (!read.status.ok()) return std::nullopt;  // no row (kNotFound)
  return image;
}

void LocalQueryBlock::note_index_changes(const Table& table, Fragment* fragment, TxId tx,
                                         const AttrValues& key,
                                         const std::optional<AttrValues>& before,
                                         storage::OpResult* result, LqhKeyReq* request) {
  if (!result->status.ok() || result->waiting || result->filtered) return;
  Status attached = attach_index_changes(table, fragment, tx, key, before, request);
  if (attached.ok()) return;
  // Without its index changes the write must not stand: undo it here and fail it.
  fragment->abort_operation(result->op).ignore_error();
  result->status = std::move(attached);
}

Status LocalQueryBlock::attach_index_changes(const Table& table, Fragment* fragment, TxId tx,
                                             const AttrValues& key,
                                             const std::optional<AttrValues>& before,
                                             LqhKeyReq* request) {
  const std::optional<AttrValues> after = unique_image(table, fragment, tx, key);
  std::vector<protocol::IndexChange> changes;
  for (const protocol::UniqueIndexTable& index : table.unique_indexes) {
    protocol::index_changes(index, before ? &*before : nullptr, after ? &*after : nullptr,
                            &changes);
  }
  request->index_changes.clear();
  return protocol::encode_index_changes(changes, &request->index_changes);
}

}  // namespace duo::local_query
