// Unique indexes as hidden tables (NDB's unique hash indexes): for every UNIQUE ordered
// index of a table the kernel keeps a hidden table whose primary key is the index's
// columns and whose other columns are the base row's primary key. The hidden table is
// distributed like any table — by the hash of its key, i.e. of the unique value — so two
// rows with one value meet at one fragment wherever the rows live: a unique check is one
// key insert there, cluster-wide, inside the writing transaction (NDB keeps its unique
// indexes the same way).
//
// Nothing about a hidden table is stored: every block derives it from the base table's
// definition with unique_index_tables(), so it is created, altered, dropped, restored and
// copied to a starting node together with its base table. Its id is the base id with
// kUniqueIndexTableBit and a slot derived from the index's NAME (unique_index_table_id),
// not from its place among the indexes: dropping or adding another index must not
// change the id, which the redo log and checkpoints carry. Two unique indexes of one
// table whose names fall in one slot are refused (kInvalidArgument, "rename the
// index"); with 2047 slots that is rare. Its version is the base table's.
//
// Maintenance (local_query at the primary, the coordinator; docs/formats/
// kernel-protocol.md "Unique indexes"): a write on a base table with unique indexes,
// executed at the primary replica, yields IndexChanges — delete the old value's entry,
// insert the new value's entry — for every unique index whose value the write changed
// (a NULL in any index column means no entry, as NULLs never conflict). They travel with
// the operation down the chain to the coordinator, which runs them as operations of the
// same transaction before it reports the base operation done; a duplicate there fails
// the transaction with kDuplicateKey (NDB error 893, MySQL 1062).
//
// Thread-safety: pure functions and values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/protocol/wire_codec.h"

namespace duo::protocol {

inline constexpr uint32_t kUniqueIndexTableBit = 0x80000000u;
// Base table ids stay below this (the dictionary's ids are dense from 1).
inline constexpr uint32_t kMaxBaseTableId = (1u << 20) - 1;

inline bool is_unique_index_table(uint32_t table_id) {
  return (table_id & kUniqueIndexTableBit) != 0;
}
uint32_t unique_index_table_id(uint32_t base_table_id, std::string_view index_name);
inline uint32_t base_of_unique_index_table(uint32_t table_id) {
  return table_id & kMaxBaseTableId;
}

struct UniqueIndexTable {
  uint32_t ordinal = 0;  // the index's place in base schema.ordered_indexes
  std::string index_name;
  TableDef def;  // the hidden table
  // Hidden column i holds base column base_columns[i]: the index columns (its primary
  // key, key_columns of them), then the base primary key.
  std::vector<uint16_t> base_columns;
  uint32_t key_columns = 0;
};

// The hidden tables of `base`, one per UNIQUE ordered index, in index order (none for a
// hidden table itself). kInvalidArgument for a base id above kMaxBaseTableId or two
// indexes in one slot.
Result<std::vector<UniqueIndexTable>> unique_index_tables(const TableDef& base);

// One change to a hidden table: delete the entry with key `values` (the index columns),
// or insert the entry `values` (every hidden column).
struct IndexChange {
  uint32_t index_table = 0;
  bool insert = false;
  storage::AttrValues values;
};

// The entry of `row` (base column values, holding at least the index and primary-key
// columns) in `index`; false when an index column is NULL or missing (no entry).
bool index_entry_of(const UniqueIndexTable& index, const storage::AttrValues& row,
                    storage::AttrValues* entry);

// The changes a write makes to `index`: `before` / `after` are the row before and after
// the write (nullptr: no row), each holding at least the index and key columns.
void index_changes(const UniqueIndexTable& index, const storage::AttrValues* before,
                   const storage::AttrValues* after, std::vector<IndexChange>* out);

// Wire form (LQH_KEYREQ / LQH_KEYCONF trailer): per change u32 index table, u8 kind
// (1 delete, 2 insert), AttrValues.
Status encode_index_changes(const std::vector<IndexChange>& changes, Bytes* out);
bool decode_index_changes(std::string_view bytes, std::vector<IndexChange>* out);

}  // namespace duo::protocol
