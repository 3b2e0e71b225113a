// The C API (duo_api_c.h) over Cluster / Session / Transaction. Each handle owns its C++
// object; errors are kept per thread for duo_last_errno() / duo_last_error().
#include "ndb-kernel/api/duo_api_c.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ndb-kernel/api/cluster_connection.h"
#include "ndb-kernel/api/text_values.h"

using duo::ErrorCode;
using duo::Status;
using duo::api::TextValue;

struct duo_cluster {
  std::unique_ptr<duo::api::Cluster> cluster;
};

struct duo_table {
  duo::api::TablePtr table;
};

struct duo_txn {
  std::unique_ptr<duo::api::Session> session;
  std::unique_ptr<duo::api::Transaction> tx;
};

struct duo_row {
  std::vector<TextValue> columns;
};

namespace {

struct LastError {
  ErrorCode code = ErrorCode::kOk;
  int mysql_errno = 0;
  std::string message;
};
thread_local LastError t_last_error;

// Records `status` as the thread's last error; returns -1 for failures, 0 for OK.
int fail_with(const Status& status) {
  if (status.ok()) return 0;
  t_last_error.code = status.code();
  t_last_error.mysql_errno = duo::error_info(status.code()).mysql_errno;
  t_last_error.message = status.message();
  return -1;
}

int fail_invalid(const std::string& message) {
  return fail_with(Status(ErrorCode::kInvalidArgument, message));
}

void clear_error() {
  t_last_error.code = ErrorCode::kOk;
  t_last_error.mysql_errno = 0;
  t_last_error.message.clear();
}

std::vector<TextValue> text_pairs(const char* const* names, const char* const* values, int n) {
  std::vector<TextValue> pairs;
  for (int i = 0; i < n; ++i) {
    TextValue item;
    item.column = names[i] != nullptr ? names[i] : "";
    if (values[i] != nullptr) item.value = values[i];
    pairs.push_back(std::move(item));
  }
  return pairs;
}

bool valid_args(duo_txn* txn, const duo_table* table, const char* const* names,
                const char* const* values, int n) {
  if (txn == nullptr || table == nullptr || n < 0 ||
      (n > 0 && (names == nullptr || values == nullptr))) {
    fail_invalid("null handle or bad column arrays");
    return false;
  }
  if (txn->tx == nullptr) {
    fail_with(Status(ErrorCode::kTransactionState, "transaction already ended"));
    return false;
  }
  return true;
}

// Defines one operation with `define` and executes it at once (NoCommit). Returns the
// operation's result status, or -1 with the transaction's error.
int run_operation(duo_txn* txn,
                  const std::function<duo::Result<uint32_t>(duo::api::Transaction&)>& define,
                  duo::api::OpResult* out) {
  duo::Result<uint32_t> op = define(*txn->tx);
  if (!op.ok()) return fail_with(op.status());
  Status executed = txn->tx->execute(duo::api::ExecType::kNoCommit);
  const bool executed_ok = executed.ok();
  duo::Result<duo::api::OpResult> result = txn->tx->result(*op);
  if (!result.ok()) return fail_with(result.status());
  if (!result->status.ok()) return fail_with(result->status);
  if (!executed_ok) return fail_with(executed);
  if (out != nullptr) *out = std::move(*result);
  clear_error();
  return 0;
}

}  // namespace

extern "C" {

duo_cluster* duo_connect(const char* connect_string, int timeout_ms) {
  if (connect_string == nullptr || timeout_ms < 0) {
    fail_invalid("null connect string or negative timeout");
    return nullptr;
  }
  duo::api::ClusterOptions options;
  options.connect_string = connect_string;
  options.name = "duo_api_c";
  options.mgm_timeout_ms = static_cast<uint64_t>(timeout_ms);
  duo::Result<std::unique_ptr<duo::api::Cluster>> cluster = duo::api::Cluster::connect(options);
  if (!cluster.ok()) {
    fail_with(cluster.status());
    return nullptr;
  }
  duo::Result<size_t> ready = (*cluster)->wait_until_ready(static_cast<uint64_t>(timeout_ms));
  if (!ready.ok()) {
    fail_with(ready.status());
    return nullptr;
  }
  clear_error();
  return new duo_cluster{std::move(*cluster)};
}

void duo_disconnect(duo_cluster* cluster) {
  delete cluster;
}

duo_table* duo_get_table(duo_cluster* cluster, const char* name) {
  if (cluster == nullptr || name == nullptr) {
    fail_invalid("null cluster or table name");
    return nullptr;
  }
  duo::Result<duo::api::TablePtr> table = cluster->cluster->get_table(name);
  if (!table.ok()) {
    fail_with(table.status());
    return nullptr;
  }
  clear_error();
  return new duo_table{*table};
}

void duo_table_free(duo_table* table) {
  delete table;
}

duo_txn* duo_begin(duo_cluster* cluster) {
  if (cluster == nullptr) {
    fail_invalid("null cluster");
    return nullptr;
  }
  auto txn = std::make_unique<duo_txn>();
  txn->session = cluster->cluster->new_session();
  duo::Result<std::unique_ptr<duo::api::Transaction>> tx = txn->session->begin();
  if (!tx.ok()) {
    fail_with(tx.status());
    return nullptr;
  }
  txn->tx = std::move(*tx);
  clear_error();
  return txn.release();
}

int duo_insert(duo_txn* txn, const duo_table* table, const char* const* names,
               const char* const* values, int n) {
  if (!valid_args(txn, table, names, values, n)) return -1;
  duo::storage::AttrValues key, rest;
  Status parsed =
      duo::api::values_from_text(*table->table, text_pairs(names, values, n), &key, &rest);
  if (!parsed.ok()) return fail_with(parsed);
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest.entry(i).is_null) {
      key.add_null(rest.entry(i).column);
    } else {
      key.add(rest.entry(i).column, rest.value(i));
    }
  }
  return run_operation(
      txn, [&](duo::api::Transaction& tx) { return tx.insert(*table->table, std::move(key)); },
      nullptr);
}

int duo_update(duo_txn* txn, const duo_table* table, const char* const* names,
               const char* const* values, int n) {
  if (!valid_args(txn, table, names, values, n)) return -1;
  duo::storage::AttrValues key, rest;
  Status parsed =
      duo::api::values_from_text(*table->table, text_pairs(names, values, n), &key, &rest);
  if (!parsed.ok()) return fail_with(parsed);
  return run_operation(
      txn,
      [&](duo::api::Transaction& tx) {
        return tx.update(*table->table, std::move(key), std::move(rest));
      },
      nullptr);
}

int duo_delete(duo_txn* txn, const duo_table* table, const char* const* names,
               const char* const* values, int n) {
  if (!valid_args(txn, table, names, values, n)) return -1;
  duo::storage::AttrValues key;
  Status parsed =
      duo::api::values_from_text(*table->table, text_pairs(names, values, n), &key, nullptr);
  if (!parsed.ok()) return fail_with(parsed);
  return run_operation(
      txn, [&](duo::api::Transaction& tx) { return tx.remove(*table->table, std::move(key)); },
      nullptr);
}

int duo_read(duo_txn* txn, const duo_table* table, const char* const* names,
             const char* const* values, int n, duo_row** row) {
  if (row == nullptr) return fail_invalid("null row pointer");
  *row = nullptr;
  if (!valid_args(txn, table, names, values, n)) return -1;
  duo::storage::AttrValues key;
  Status parsed =
      duo::api::values_from_text(*table->table, text_pairs(names, values, n), &key, nullptr);
  if (!parsed.ok()) return fail_with(parsed);
  duo::api::OpResult result;
  // A missing row is an answer, not a failure of the transaction.
  const int rc = run_operation(
      txn,
      [&](duo::api::Transaction& tx) {
        return tx.read(*table->table, std::move(key), {}, duo::storage::LockMode::kCommittedRead,
                       duo::api::OpOptions{true});
      },
      &result);
  if (rc != 0) {
    if (t_last_error.code == ErrorCode::kNotFound) {
      clear_error();
      return 1;
    }
    return rc;
  }
  *row = new duo_row{duo::api::values_to_text(*table->table, result.values)};
  return 0;
}

int duo_commit(duo_txn* txn) {
  if (txn == nullptr) return fail_invalid("null transaction");
  if (txn->tx == nullptr) {
    return fail_with(Status(ErrorCode::kTransactionState, "transaction already ended"));
  }
  Status committed = txn->tx->execute(duo::api::ExecType::kCommit);
  txn->tx.reset();
  if (!committed.ok()) return fail_with(committed);
  clear_error();
  return 0;
}

int duo_rollback(duo_txn* txn) {
  if (txn == nullptr) return fail_invalid("null transaction");
  if (txn->tx == nullptr) return 0;
  Status rolled_back = txn->tx->execute(duo::api::ExecType::kRollback);
  txn->tx.reset();
  if (!rolled_back.ok() && !rolled_back.is(ErrorCode::kTransactionState)) {
    return fail_with(rolled_back);
  }
  clear_error();
  return 0;
}

void duo_txn_free(duo_txn* txn) {
  delete txn;
}

int duo_row_column_count(const duo_row* row) {
  return row == nullptr ? 0 : static_cast<int>(row->columns.size());
}

const char* duo_row_column_name(const duo_row* row, int i) {
  if (row == nullptr || i < 0 || static_cast<size_t>(i) >= row->columns.size()) return nullptr;
  return row->columns[static_cast<size_t>(i)].column.c_str();
}

const char* duo_row_value(const duo_row* row, int i) {
  if (row == nullptr || i < 0 || static_cast<size_t>(i) >= row->columns.size()) return nullptr;
  const std::optional<std::string>& value = row->columns[static_cast<size_t>(i)].value;
  return value ? value->c_str() : nullptr;
}

void duo_row_free(duo_row* row) {
  delete row;
}

int duo_last_errno(void) {
  return t_last_error.mysql_errno;
}

const char* duo_last_error(void) {
  return t_last_error.message.c_str();
}

}  // extern "C"
