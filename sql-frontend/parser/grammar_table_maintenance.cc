// ANALYZE / OPTIMIZE / CHECK TABLE (MySQL 8.0's forms). Kept apart from the other
// grammar files so table-maintenance changes merge easily.
#include "sql-frontend/parser/grammar.h"

namespace duo::sql {

StatementPtr Parser::parse_table_maintenance() {
  auto stmt = std::make_unique<TableMaintenanceStatement>(here());
  if (accept(Keyword::kAnalyze)) {
    stmt->operation = TableMaintenance::kAnalyze;
  } else if (accept(Keyword::kCheck)) {
    stmt->operation = TableMaintenance::kCheck;
  } else if (accept_word("OPTIMIZE")) {
    stmt->operation = TableMaintenance::kOptimize;
  } else {
    fail();
  }
  if (stmt->operation != TableMaintenance::kCheck) {
    if (!accept_word("NO_WRITE_TO_BINLOG")) accept(Keyword::kLocal);
  }
  if (!accept(Keyword::kTable)) expect(Keyword::kTables);
  do {
    stmt->tables.push_back(parse_object_name());
  } while (accept(TokenKind::kComma));
  if (stmt->operation == TableMaintenance::kCheck) {
    // The options change nothing here: every check reads every row.
    for (;;) {
      if (peek().is(Keyword::kFor)) {
        take();
        if (!accept_word("UPGRADE")) fail();
      } else if (!accept_word("QUICK") && !accept_word("FAST") && !accept_word("MEDIUM") &&
                 !accept_word("EXTENDED") && !accept_word("CHANGED")) {
        break;
      }
    }
  }
  return stmt;
}

}  // namespace duo::sql
