#include "ndb-kernel/datad/initial_disk_objects.h"

#include <cctype>
#include <optional>

namespace duo::datad {

namespace {

using protocol::DiskFileKind;
using protocol::FilegroupChange;
using protocol::FilegroupKind;
using protocol::FilegroupOp;

constexpr uint64_t kMiB = 1024 * 1024;

std::string trim(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

std::optional<uint64_t> parse_size(const std::string& text) {
  uint64_t value = 0;
  size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (value > (uint64_t{1} << 40)) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  if (i == 0) return std::nullopt;
  if (i == text.size()) return value;
  if (i + 1 != text.size()) return std::nullopt;
  switch (std::toupper(static_cast<unsigned char>(text[i]))) {
    case 'K':
      return value << 10;
    case 'M':
      return value << 20;
    case 'G':
      return value << 30;
    default:
      return std::nullopt;
  }
}

// One parameter's text as changes of filegroup `kind`.
Status parse_one(const std::string& parameter, const std::string& text, FilegroupKind kind,
                 const std::string& logfile_group, std::vector<FilegroupChange>* out,
                 std::string* name_out) {
  const auto bad = [&](const std::string& why) {
    return Status(ErrorCode::kConfigError, parameter + ": " + why + " in '" + text + "'");
  };
  const bool group = kind == FilegroupKind::kLogfileGroup;
  std::string name = group ? "DEFAULT-LG" : "DEFAULT-TS";
  uint64_t option = group ? 64 * kMiB : kMiB;  // undo buffer / extent size
  std::vector<protocol::DiskFileDef> files;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = trim(text.substr(start, end - start));
    start = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq != std::string::npos) {
      const std::string key = trim(item.substr(0, eq));
      const std::string value = trim(item.substr(eq + 1));
      if (key == "name") {
        if (value.empty()) return bad("empty name");
        name = value;
      } else if (key == (group ? "undo_buffer_size" : "extent_size")) {
        std::optional<uint64_t> size = parse_size(value);
        if (!size || *size == 0) return bad("bad size '" + value + "'");
        option = *size;
      } else {
        return bad("unknown option '" + key + "'");
      }
      continue;
    }
    const size_t colon = item.rfind(':');
    if (colon == std::string::npos) return bad("'" + item + "' is not FILE:SIZE");
    std::optional<uint64_t> size = parse_size(trim(item.substr(colon + 1)));
    const std::string file = trim(item.substr(0, colon));
    if (file.empty() || !size) return bad("'" + item + "' is not FILE:SIZE");
    files.push_back({0, group ? DiskFileKind::kUndoFile : DiskFileKind::kDataFile, file, *size});
  }
  if (files.empty()) return bad("no file");
  FilegroupChange create;
  create.op = FilegroupOp::kCreate;
  create.kind = kind;
  create.name = name;
  create.logfile_group = logfile_group;
  if (group) {
    create.filegroup.undo_buffer_bytes = option;
  } else {
    create.filegroup.extent_bytes = option;
  }
  create.filegroup.files.push_back(files.front());
  out->push_back(std::move(create));
  for (size_t i = 1; i < files.size(); ++i) {
    FilegroupChange add;
    add.op = FilegroupOp::kAddFile;
    add.kind = kind;
    add.name = name;
    add.file = files[i];
    out->push_back(std::move(add));
  }
  *name_out = name;
  return Status::OK();
}

}  // namespace

Result<std::vector<FilegroupChange>> parse_initial_disk_objects(const std::string& logfile_group,
                                                                const std::string& tablespace) {
  std::vector<FilegroupChange> changes;
  std::string group_name;
  if (!trim(logfile_group).empty()) {
    DUO_RETURN_IF_ERROR(parse_one("InitialLogFileGroup", logfile_group,
                                  FilegroupKind::kLogfileGroup, "", &changes, &group_name));
  }
  if (!trim(tablespace).empty()) {
    if (group_name.empty()) {
      return Status(ErrorCode::kConfigError,
                    "InitialTablespace needs InitialLogFileGroup (its undo log)");
    }
    std::string ignored;
    DUO_RETURN_IF_ERROR(parse_one("InitialTablespace", tablespace, FilegroupKind::kTablespace,
                                  group_name, &changes, &ignored));
  }
  return changes;
}

}  // namespace duo::datad
