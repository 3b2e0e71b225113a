// ENGINE= substitution; see engine_substitution.h.
#include "sql-frontend/executor/engine_substitution.h"

#include <algorithm>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/system_variables.h"
#include "sql-frontend/parser/ascii_case.h"

namespace duo::sql::executor {

namespace {

// Engines of MySQL and MariaDB servers (and their aliases), lower case: a dump or a
// schema written for one of them names these.
constexpr const char* kKnownEngines[] = {
    "innodb",    "myisam",     "memory",    "heap",        "csv",     "archive",
    "blackhole", "mrg_myisam", "merge",     "federated",   "example", "aria",
    "tokudb",    "rocksdb",    "temptable", "columnstore", "spider",  "connect",
    "sequence",  "s3",         "mroonga",   "oqgraph",     "ndbinfo", "performance_schema"};

}  // namespace

void check_table_engine(StatementContext& context, const std::string& engine,
                        const std::string& table) {
  const std::string name = ascii_lower(engine);
  if (name == "ndb" || name == "ndbcluster") return;
  const bool known = std::any_of(std::begin(kKnownEngines), std::end(kKnownEngines),
                                 [&](const char* e) { return name == e; });
  if (sql_mode_has(context.session, "NO_ENGINE_SUBSTITUTION")) {
    throw SqlException(1286, "42000", "Unknown storage engine '" + engine + "'");
  }
  if (known) {
    context.add_warning(1266, "Using storage engine ndbcluster for table '" + table + "'");
  } else {
    context.add_warning(1286, "Unknown storage engine '" + engine + "'");
  }
}

}  // namespace duo::sql::executor
