#include "sql-frontend/executor/global_variables.h"

namespace duo::sql::executor {

GlobalVariables& GlobalVariables::instance() {
  static GlobalVariables variables;
  return variables;
}

}  // namespace duo::sql::executor
