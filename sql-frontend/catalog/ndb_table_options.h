// NDB_TABLE options in a table's COMMENT (CREATE TABLE ... COMMENT='NDB_TABLE=
// READ_BACKUP=1'), parsed as NDB's NDB_Modifiers parses them, and what DuoDB does with
// them: READ_BACKUP sets protocol::kTableReadBackup in the cluster table's flags (the
// dictionary keeps it); its default for a new table is the server variable
// ndb_read_backup (ON, as NDB 8.0.19 and later).
//
// Syntax (NDB 8.0): the comment contains "NDB_TABLE=" (case-sensitive, anywhere; text
// before and after is an ordinary comment), followed by name[=value] items separated
// by commas, up to the first space or the end. Names are case-insensitive:
//   NOLOGGING[={0|1}]  READ_BACKUP[={0|1}]  FULLY_REPLICATED[={0|1}]
//   PARTITION_BALANCE=FOR_RP_BY_NODE|FOR_RA_BY_NODE|FOR_RP_BY_LDM|FOR_RA_BY_LDM|
//                     FOR_RA_BY_LDM_X_2|FOR_RA_BY_LDM_X_3|FOR_RA_BY_LDM_X_4
// A bare boolean name means 1. An unknown name, a bad value or a name given twice is
// a syntax error (NDB: 1478 "Syntax error in COMMENT modifier", with the detail as a
// warning).
//
// What DuoDB supports: READ_BACKUP (both values); NOLOGGING is accepted and has no
// effect (as in NDB, where it is a placeholder); PARTITION_BALANCE is accepted with a
// warning (the fragment count is fixed by the cluster's topology); FULLY_REPLICATED=1
// is refused (1478: no fully replicated tables), FULLY_REPLICATED=0 accepted.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "sql-frontend/catalog/sql_table.h"

namespace duo::sql::catalog {

struct NdbTableOptions {
  std::optional<bool> nologging;
  std::optional<bool> read_backup;
  std::optional<bool> fully_replicated;
  std::optional<std::string> partition_balance;  // upper case, one of the listed values
};

// The NDB_TABLE options in `comment` (all unset when it has none). kInvalidArgument
// with NDB's detail text ("NDB_TABLE= : unknown modifier: X", "NDB_TABLE= : invalid
// value 'X' for READ_BACKUP", "NDB_TABLE= : modifier READ_BACKUP specified twice").
Result<NdbTableOptions> parse_ndb_table_options(std::string_view comment);

// CREATE TABLE's COMMENT (or none) applied to `table`: the comment kept verbatim (SHOW
// CREATE TABLE shows it as written) and read_backup from READ_BACKUP, else
// `read_backup_default`. Throws SqlException 1478 as NDB does for a syntax error (the
// detail is appended to *warnings first) and for FULLY_REPLICATED=1; appends to
// *warnings the text of each accepted-but-ignored option.
void apply_table_comment(SqlTable* table, const std::optional<std::string>& comment,
                         bool read_backup_default, std::vector<std::string>* warnings);

// The 1478 error (ER_ILLEGAL_HA_CREATE_OPTION) NDB raises for `option`.
[[noreturn]] void throw_illegal_create_option(const std::string& option);

}  // namespace duo::sql::catalog
