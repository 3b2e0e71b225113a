// Engine substitution: what ENGINE= in CREATE TABLE and ALTER TABLE does. Every table of
// DuoDB is a cluster table (ndbcluster). As MySQL does for an engine it has but cannot
// use, a known MySQL engine (InnoDB, MyISAM, MEMORY, Aria, ...) is replaced by
// ndbcluster with warning 1266 "Using storage engine ndbcluster for table 't'", and a
// name no server knows gets warning 1286 "Unknown storage engine 'x'" (MySQL's
// behaviour without NO_ENGINE_SUBSTITUTION); with NO_ENGINE_SUBSTITUTION in sql_mode
// both are error 1286. NDB and NDBCLUSTER are the engine itself.
//
// Thread-safety: one session thread (the StatementContext's).
#pragma once

#include <string>

#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

// Checks ENGINE=`engine` for table `table`: adds the warning or throws 1286.
void check_table_engine(StatementContext& context, const std::string& engine,
                        const std::string& table);

}  // namespace duo::sql::executor
