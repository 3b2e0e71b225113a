// config.ini parsing into a validated ClusterConfig: the cluster description that
// duo_mgmd reads at start and hands out to every node.
//
// Syntax (NDB's): `[section]` headers, `name=value` or `name: value` lines, `#` or `;`
// comment lines, trailing `# comments`, blank lines; names and section types are
// case-insensitive; integers take K/M/G units. `[X default]` sections give values to
// every `[X]` section wherever they appear in the file. Precedence for a value: the
// node's own section, then its type's default sections, then the built-in default.
//
// Everything the parser rejects is a Status(kConfigError) whose message starts with
// "file:line: " and names the parameter, e.g.
//   config.ini:12: unknown parameter 'DataMemroy' in section [ndbd]
// Only the first error is reported.
//
// After the sections are read the parser fills in what NDB derives, then validates the
// cluster as a whole (see parse_config_string). Thread-safety: parsing is a pure
// function; a ClusterConfig is immutable after parsing and safe to share read-only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/config/config_params.h"
#include "ndb-kernel/common/status.h"

namespace duo::config {

// Limits on input, so a wrong file (a core dump passed as config.ini) fails fast with a
// clear message instead of using unbounded memory.
inline constexpr size_t kConfigFileBytesMax = 16 * 1024 * 1024;
inline constexpr size_t kConfigLineBytesMax = 4096;
inline constexpr size_t kConfigSectionsMax = 16 * 1024;
// A data node NodeId must not exceed this (NDB's MAX_NDB_NODES); other nodes use up
// to kNodeIdMax.
inline constexpr uint32_t kDataNodeIdMax = 144;
inline constexpr uint32_t kNodeIdMax = 255;
// Nodegroup value meaning "not in a node group yet" (NDB's NDB_NO_NODEGROUP).
inline constexpr uint64_t kNoNodegroup = 65536;

// Where a value came from.
enum class ValueSource : uint8_t {
  kSection,         // the node's own section
  kDefaultSection,  // a [... default] section of its type
  kBuiltinDefault,  // the parameter table
  kDerived,         // computed by the parser: assigned NodeId, Nodegroup, paths
};
std::string_view value_source_name(ValueSource source);

struct ConfigValue {
  const ParamSpec* spec = nullptr;
  uint64_t uint_value = 0;   // kUint64; kBool as 0/1
  std::string string_value;  // kString
  uint32_t line = 0;         // line in the file it came from; 0 for built-in defaults
  ValueSource source = ValueSource::kBuiltinDefault;
};

// One [ndbd], [ndb_mgmd], [api]/[mysqld] or [tcp] section with every parameter of its
// type that has a value (explicit, inherited, built-in or derived). Parameters without
// a default that were not given (e.g. ServerPort) are absent.
class ConfigSection {
 public:
  ConfigSection(SectionType type, std::string header, uint32_t line)
      : type_(type), header_(std::move(header)), line_(line) {}

  SectionType type() const { return type_; }
  // The header as written, e.g. "[DB]" or "[mysqld]", for messages.
  const std::string& header() const { return header_; }
  // Line of the section header.
  uint32_t line() const { return line_; }
  // NodeId of a node section (always set after parsing); 0 for [tcp].
  uint32_t node_id() const { return node_id_; }

  // Typed getters; `name` is case-insensitive. Errors: kInvalidArgument if the section
  // type has no such parameter or it has another type, kNotFound if it has no value.
  Result<uint64_t> get_uint(std::string_view name) const;
  Result<bool> get_bool(std::string_view name) const;
  Result<std::string> get_string(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }
  // The value with its origin, or nullptr.
  const ConfigValue* find(std::string_view name) const;
  // Values keyed by canonical parameter name.
  const std::map<std::string_view, ConfigValue>& values() const { return values_; }

  // For the parser.
  void set_value(ConfigValue value);
  void set_node_id(uint32_t node_id) { node_id_ = node_id; }

 private:
  Status check_type(std::string_view name, ParamType wanted, const ConfigValue** out) const;

  SectionType type_;
  std::string header_;
  uint32_t line_;
  uint32_t node_id_ = 0;
  std::map<std::string_view, ConfigValue> values_;  // keys point into the static table
};

class ClusterConfig {
 public:
  // File name used in messages ("config.ini" or the path read).
  const std::string& file_name() const { return file_name_; }
  // Node and link sections in file order; default sections are folded into these.
  const std::vector<ConfigSection>& sections() const { return sections_; }
  std::vector<const ConfigSection*> sections_of(SectionType type) const;
  // The node section with `node_id`, or nullptr.
  const ConfigSection* find_node(uint32_t node_id) const;
  // Sorted node ids of one section type.
  std::vector<uint32_t> node_ids(SectionType type) const;
  // NoOfReplicas shared by all data nodes (validated equal).
  uint32_t no_of_replicas() const { return no_of_replicas_; }

 private:
  friend class ConfigParser;
  std::string file_name_;
  std::vector<ConfigSection> sections_;
  uint32_t no_of_replicas_ = 0;
};

// Parses config.ini text; `file_name` is used only in messages. Beyond the syntax and
// per-parameter checks, this:
//  - assigns NodeIds that were not given: in file order, each such node gets the
//    lowest id not given explicitly anywhere in the file and not assigned before it
//    (data nodes from 1..144, other nodes from 1..255). So with no ids at all, ids
//    follow file order: the usual "mgmd first" file gives the mgmd id 1;
//  - assigns Nodegroups that were not given: data nodes in NodeId order join the lowest
//    node group that has fewer than NoOfReplicas members;
//  - derives FileSystemPath from DataDir and BackupDataDir from FileSystemPath;
//  - checks: mandatory parameters present; NodeIds unique; at least one [ndb_mgmd] and
//    one [ndbd]; NoOfReplicas the same on all data nodes; the data nodes in node
//    groups divide into groups of exactly NoOfReplicas; [tcp] links join two distinct
//    configured nodes, at most one link per pair.
Result<ClusterConfig> parse_config_string(std::string_view text,
                                          std::string_view file_name = "config.ini");
// Reads and parses a file; I/O problems are kIoError, content problems kConfigError
// with `path` as the file name in messages.
Result<ClusterConfig> parse_config_file(const std::string& path);

}  // namespace duo::config
