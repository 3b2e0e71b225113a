// MySQL 8.0's 1062 text names the key with its table ("Duplicate entry '1' for key
// 't.PRIMARY'"); the data nodes name the index alone. The writers rethrow through here.
//
// Thread-safety: pure function.
#pragma once

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/catalog/sql_table.h"

namespace duo::sql::executor {

// Throws `e`, its 1062 message's key qualified with `table`'s name.
[[noreturn]] void rethrow_with_table(const SqlException& e, const catalog::SqlTable& table);

}  // namespace duo::sql::executor
