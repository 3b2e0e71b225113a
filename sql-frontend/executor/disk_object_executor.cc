// NDB's disk-data DDL: CREATE/ALTER/DROP LOGFILE GROUP and CREATE/ALTER/DROP
// TABLESPACE. Sizes, defaults and rounding are NDB's (CREATE LOGFILE GROUP: undo file
// 128M, undo buffer 8M; CREATE TABLESPACE: extent 1M, data file 128M); the change is a
// schema transaction of the master dictionary, which creates the files on every data
// node (api::Cluster::change_filegroup). A refusal is reported as NDB's mysqld reports
// it: MySQL's error (1528 / 1529 / 1533, or the data dictionary's 1813 / 3120 / 3510 /
// 3629) with "Got error N '...' from NDB" warnings (1296) in SHOW WARNINGS.
//
// Thread-safety: one session thread (the StatementContext's).
#include <algorithm>
#include <string>

#include "ndb-kernel/protocol/filegroup.h"
#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

namespace {

using ::duo::protocol::FilegroupChange;
using ::duo::protocol::FilegroupKind;
using ::duo::protocol::FilegroupOp;

constexpr uint64_t kMiB = 1024 * 1024;
// NDB's defaults (MySQL reference manual, CREATE LOGFILE GROUP / CREATE TABLESPACE).
constexpr uint64_t kDefaultUndoFileBytes = 128 * kMiB;
constexpr uint64_t kDefaultUndoBufferBytes = 8 * kMiB;
constexpr uint64_t kDefaultExtentBytes = 1 * kMiB;
constexpr uint64_t kDefaultDataFileBytes = 128 * kMiB;
// The largest undo buffer NDB accepts (600M), else error 779.
constexpr uint64_t kUndoBufferBytesMax = 600 * kMiB;
// NDB's disk page: undo files are whole pages, extents whole pages.
constexpr uint64_t kDiskPageBytes = 32 * 1024;
// MySQL refuses a size whose digit part exceeds this (ER_SIZE_OVERFLOW_ERROR).
constexpr uint64_t kSizeDigitsMax = 2'000'000'000;
constexpr uint16_t kNdbWarning = 1296;  // ER_GET_ERRMSG: "Got error %d '%s' from NDB"

// A size as MySQL's grammar takes it: digits and an optional one-letter K/M/G.
uint64_t parse_size(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string suffix = text.substr(digits);
  uint64_t multiplier = 1;
  if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'k':
      case 'K':
        multiplier = 1024;
        break;
      case 'm':
      case 'M':
        multiplier = 1024 * 1024;
        break;
      case 'g':
      case 'G':
        multiplier = 1024 * 1024 * 1024;
        break;
      default:
        multiplier = 0;
    }
  }
  if (digits == 0 || suffix.size() > 1 || multiplier == 0) {
    throw SqlException(
        1531, "HY000",
        "A size parameter was incorrectly specified, either number or on the form 10M");
  }
  if (digits > 10 || std::stoull(text.substr(0, digits)) > kSizeDigitsMax) {
    throw SqlException(1532, "HY000",
                       "The size number was correct but we don't allow the digit part to be more "
                       "than 2 billion");
  }
  return std::stoull(text.substr(0, digits)) * multiplier;
}

uint64_t size_or(const std::optional<std::string>& text, uint64_t fallback) {
  return text ? parse_size(*text) : fallback;
}

std::string upper(std::string text) {
  for (char& c : text) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return text;
}

// ENGINE must be NDB (or absent: NDB is the default engine of duo_sqld).
void check_engine(const std::optional<std::string>& engine, const char* option) {
  if (!engine) return;
  const std::string name = upper(*engine);
  if (name == "NDB" || name == "NDBCLUSTER") return;
  const char* known = name == "INNODB"   ? "InnoDB"
                      : name == "MYISAM" ? "MyISAM"
                      : name == "MEMORY" ? "MEMORY"
                                         : nullptr;
  if (known == nullptr)
    throw SqlException(1286, "42000", "Unknown storage engine '" + *engine + "'");
  throw SqlException(1478, "HY000",
                     std::string("Table storage engine '") + known +
                         "' does not support the create option '" + option + "'");
}

std::string got_error(uint32_t ndb_error) {
  return "Got error " + std::to_string(ndb_error) + " '" +
         ::duo::protocol::ndb_filegroup_error_text(ndb_error) + "' from NDB";
}

// The error of a refused change: `code` / `message` is MySQL's, the NDB error and
// the data node's own message come first as warnings.
[[noreturn]] void throw_refusal(const StatementContext& context,
                                const api::FilegroupOutcome& outcome, uint16_t code,
                                const std::string& message, const std::string& ndb_context) {
  if (outcome.ndb_error == 0) throw_status(outcome.status);
  SqlException error(code, "HY000", message);
  // The statement's own warnings (a size rounded) come first, as in NDB's mysqld.
  for (const StatementContext::Warning& warning : context.warnings) {
    error.with_warning(warning.code, warning.message);
  }
  error.with_warning(kNdbWarning, got_error(outcome.ndb_error));
  if (outcome.ndb_error == ::duo::protocol::kNdbFileSystemError) {
    // The data node's own words: which node, which file, which OS error.
    error.with_warning(kNdbWarning, outcome.status.message());
  }
  error.with_warning(kNdbWarning, ndb_context);
  throw error;
}

const char* kCommitFailed = "Failed to commit NDB schema transaction";

}  // namespace

server::StatementResult execute_disk_object(StatementContext& context,
                                            const DiskObjectStatement& statement) {
  using Action = DiskObjectAction;
  const std::string& name = statement.name.name;
  FilegroupChange change;
  change.name = name;
  const bool group = statement.action == Action::kCreateLogfileGroup ||
                     statement.action == Action::kAddUndofile ||
                     statement.action == Action::kDropLogfileGroup;
  change.kind = group ? FilegroupKind::kLogfileGroup : FilegroupKind::kTablespace;
  check_engine(statement.engine, group ? "CREATE/ALTER/DROP LOGFILE GROUP" : "CREATE TABLESPACE");
  change.file.name = statement.file;
  change.file.kind =
      group ? ::duo::protocol::DiskFileKind::kUndoFile : ::duo::protocol::DiskFileKind::kDataFile;

  // An undo file is whole pages; a data file whole extents.
  const auto undo_file_bytes = [&]() {
    const uint64_t asked = size_or(statement.initial_size, kDefaultUndoFileBytes);
    const uint64_t rounded = asked / kDiskPageBytes * kDiskPageBytes;
    if (rounded != asked)
      context.add_warning(kNdbWarning, "Undofile size rounded down to kernel page size");
    return rounded;
  };
  const auto data_file_bytes = [&](uint64_t extent_bytes) {
    const uint64_t asked = size_or(statement.initial_size, kDefaultDataFileBytes);
    const uint64_t rounded = (asked + extent_bytes - 1) / extent_bytes * extent_bytes;
    if (rounded != asked)
      context.add_warning(kNdbWarning, "Datafile size rounded up to extent size");
    return rounded;
  };

  switch (statement.action) {
    case Action::kCreateLogfileGroup: {
      change.op = FilegroupOp::kCreate;
      change.filegroup.undo_buffer_bytes =
          size_or(statement.undo_buffer_size, kDefaultUndoBufferBytes);
      change.file.size_bytes = undo_file_bytes();
      if (change.filegroup.undo_buffer_bytes > kUndoBufferBytesMax) {
        SqlException error(1528, "HY000", "Failed to create LOGFILE GROUP");
        error.with_warning(kNdbWarning, "Got error 779 'Invalid undo buffer size' from NDB");
        throw error;
      }
      change.filegroup.files.push_back(change.file);
      break;
    }
    case Action::kCreateTablespace: {
      change.op = FilegroupOp::kCreate;
      if (!statement.logfile_group) {
        throw SqlException(1528, "HY000", "Failed to create TABLESPACE")
            .with_warning(kNdbWarning, "TABLESPACE must have a LOGFILE GROUP (USE LOGFILE GROUP)");
      }
      change.logfile_group = statement.logfile_group->name;
      const uint64_t extent = size_or(statement.extent_size, kDefaultExtentBytes);
      change.filegroup.extent_bytes = std::max<uint64_t>(
          kDiskPageBytes, (extent + kDiskPageBytes - 1) / kDiskPageBytes * kDiskPageBytes);
      change.filegroup.autoextend_bytes = size_or(statement.autoextend_size, 0);
      change.file.size_bytes = data_file_bytes(change.filegroup.extent_bytes);
      change.filegroup.files.push_back(change.file);
      break;
    }
    case Action::kAddUndofile:
      change.op = FilegroupOp::kAddFile;
      change.file.size_bytes = undo_file_bytes();
      break;
    case Action::kAddDatafile: {
      change.op = FilegroupOp::kAddFile;
      // The file is whole extents of its tablespace.
      uint64_t extent = kDefaultExtentBytes;
      for (const ::duo::protocol::FilegroupDef& fg :
           check(context.catalog.cluster().list_filegroups())) {
        if (fg.name == name && fg.is_tablespace()) extent = fg.extent_bytes;
      }
      change.file.size_bytes = data_file_bytes(extent);
      break;
    }
    case Action::kDropDatafile:
      change.op = FilegroupOp::kDropFile;
      break;
    case Action::kDropLogfileGroup:
    case Action::kDropTablespace:
      change.op = FilegroupOp::kDrop;
      break;
  }

  const api::FilegroupOutcome outcome = context.catalog.cluster().change_filegroup(change);
  if (outcome.status.ok()) return server::OkResult{};
  const uint32_t ndb = outcome.ndb_error;
  const std::string file = statement.file;
  switch (statement.action) {
    case Action::kCreateLogfileGroup:
      throw_refusal(context, outcome, 1528, "Failed to create LOGFILE GROUP",
                    ndb == ::duo::protocol::kNdbSchemaObjectExists
                        ? "Failed to create logfile group '" + name + "' in NDB"
                        : kCommitFailed);
    case Action::kCreateTablespace:
      if (ndb == ::duo::protocol::kNdbSchemaObjectExists) {
        throw SqlException(1813, "HY000", "Tablespace '" + name + "' exists.");
      }
      throw_refusal(context, outcome, 1528, "Failed to create TABLESPACE", kCommitFailed);
    case Action::kAddUndofile:
      throw_refusal(context, outcome, 1533, "Failed to alter: CREATE UNDOFILE FAILED",
                    "Failed to create undofile '" + file + "' in NDB");
    case Action::kAddDatafile:
      if (ndb == ::duo::protocol::kNdbNoSuchObject) {
        throw SqlException(3510, "HY000", "Tablespace " + name + " doesn't exist.");
      }
      throw_refusal(context, outcome, 1533, "Failed to alter: CREATE DATAFILE FAILED",
                    "Failed to create datafile '" + file + "' in NDB");
    case Action::kDropDatafile:
      if (ndb == ::duo::protocol::kNdbNoSuchObject) {
        throw SqlException(3510, "HY000", "Tablespace " + name + " doesn't exist.");
      }
      if (ndb == ::duo::protocol::kNdbNoSuchFile) {
        throw SqlException(3629, "HY000",
                           "Tablespace '" + name + "' does not have a file named '" + file + "'");
      }
      throw_refusal(context, outcome, 1533, "Failed to alter: DROP DATAFILE FAILED", kCommitFailed);
    case Action::kDropTablespace:
      if (ndb == ::duo::protocol::kNdbNoSuchObject) {
        throw SqlException(3510, "HY000", "Tablespace " + name + " doesn't exist.");
      }
      if (ndb == ::duo::protocol::kNdbFilegroupInUse && outcome.detail == 1) {
        // Tables use it: MySQL's data dictionary refuses before NDB is asked.
        throw SqlException(3120, "HY000", "Tablespace `" + name + "` is not empty.");
      }
      throw_refusal(context, outcome, 1529, "Failed to drop TABLESPACE", kCommitFailed);
    case Action::kDropLogfileGroup:
      throw_refusal(context, outcome, 1529, "Failed to drop LOGFILE GROUP",
                    ndb == ::duo::protocol::kNdbNoSuchObject
                        ? "Failed to get logfile group '" + name + "' from NDB"
                        : kCommitFailed);
  }
  throw_status(outcome.status);
}

}  // namespace duo::sql::executor
