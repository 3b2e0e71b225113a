#include "sql-frontend/catalog/ndb_table_options.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "sql-frontend/catalog/sql_exception.h"

namespace duo::sql::catalog {

namespace {

constexpr std::string_view kPrefix = "NDB_TABLE=";

constexpr std::array<std::string_view, 7> kPartitionBalances = {
    "FOR_RP_BY_NODE",    "FOR_RA_BY_NODE",    "FOR_RP_BY_LDM",    "FOR_RA_BY_LDM",
    "FOR_RA_BY_LDM_X_2", "FOR_RA_BY_LDM_X_3", "FOR_RA_BY_LDM_X_4"};

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

Status syntax_error(std::string detail) {
  return Status(ErrorCode::kInvalidArgument, std::string(kPrefix) + " : " + std::move(detail));
}

}  // namespace

Result<NdbTableOptions> parse_ndb_table_options(std::string_view comment) {
  NdbTableOptions options;
  const size_t at = comment.find(kPrefix);
  if (at == std::string_view::npos) return options;
  // The modifier list ends at the first space (the rest is ordinary comment text).
  std::string_view list = comment.substr(at + kPrefix.size());
  list = list.substr(0, std::min(list.find(' '), list.size()));
  size_t pos = 0;
  while (pos < list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string_view item = list.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t equals = item.find('=');
    const std::string name = upper(item.substr(0, equals));
    const std::optional<std::string_view> value =
        equals == std::string_view::npos ? std::nullopt
                                         : std::optional<std::string_view>(item.substr(equals + 1));
    auto flag = [&](std::optional<bool>* out) -> Status {
      if (out->has_value()) return syntax_error("modifier " + name + " specified twice");
      if (!value || *value == "1") {
        *out = true;
      } else if (*value == "0") {
        *out = false;
      } else {
        return syntax_error("invalid value '" + std::string(*value) + "' for " + name);
      }
      return Status::OK();
    };
    if (name == "NOLOGGING") {
      DUO_RETURN_IF_ERROR(flag(&options.nologging));
    } else if (name == "READ_BACKUP") {
      DUO_RETURN_IF_ERROR(flag(&options.read_backup));
    } else if (name == "FULLY_REPLICATED") {
      DUO_RETURN_IF_ERROR(flag(&options.fully_replicated));
    } else if (name == "PARTITION_BALANCE") {
      if (options.partition_balance) return syntax_error("modifier " + name + " specified twice");
      const std::string balance = upper(value.value_or(""));
      if (std::find(kPartitionBalances.begin(), kPartitionBalances.end(), balance) ==
          kPartitionBalances.end()) {
        return syntax_error("invalid value '" + std::string(value.value_or("")) + "' for " + name);
      }
      options.partition_balance = balance;
    } else {
      return syntax_error("unknown modifier: " + std::string(item));
    }
  }
  return options;
}

void throw_illegal_create_option(const std::string& option) {
  throw SqlException(
      1478, "HY000",
      "Table storage engine 'ndbcluster' does not support the create option '" + option + "'");
}

void apply_table_comment(SqlTable* table, const std::optional<std::string>& comment,
                         bool read_backup_default, std::vector<std::string>* warnings) {
  table->comment = comment.value_or("");
  table->read_backup = read_backup_default;
  if (!comment) return;
  Result<NdbTableOptions> options = parse_ndb_table_options(*comment);
  if (!options.ok()) {
    warnings->push_back(options.status().message());
    throw_illegal_create_option("Syntax error in COMMENT modifier");
  }
  if (options->fully_replicated.value_or(false)) {
    throw_illegal_create_option("FULLY_REPLICATED=1");
  }
  if (options->partition_balance) {
    warnings->push_back("PARTITION_BALANCE=" + *options->partition_balance +
                        " is ignored: the number of fragments is fixed by the cluster");
  }
  if (options->read_backup) table->read_backup = *options->read_backup;
}

}  // namespace duo::sql::catalog
