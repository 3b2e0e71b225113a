// The typed table of config.ini parameters: for each NDB parameter DuoDB understands,
// the section types it may appear in, its type, default, range and whether it is
// mandatory; plus the value syntax (K/M/G units, NDB booleans) shared by the config.ini
// parser and by anything that sets parameters at runtime.
//
// Names are the NDB Cluster names with NDB's defaults and ranges, so an operator's
// existing config.ini mostly carries over; the few DuoDB-only names are marked in the
// table (config_params.cc). Lookup is case-insensitive because NDB treats parameter
// names that way. A parameter may have one entry per section type when NDB gives it a
// different range or default there (NodeId is 1..144 for data nodes, 1..255 otherwise;
// ArbitrationRank defaults to 1 for management nodes, 0 for API nodes).
//
// Thread-safety: the table is immutable static data; every function is pure and safe
// to call from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ndb-kernel/common/status.h"

namespace duo::config {

// The kinds of sections in config.ini. [mysqld] is an API node, as in NDB.
enum class SectionType : uint8_t {
  kDataNode = 0,        // [ndbd], [DB]
  kManagementNode = 1,  // [ndb_mgmd], [MGM]
  kApiNode = 2,         // [api], [mysqld], [API]
  kTcp = 3,             // [tcp], [TCP]: a link between two nodes
};
inline constexpr size_t kSectionTypeCount = 4;

// Canonical section name: "ndbd", "ndb_mgmd", "api", "tcp".
std::string_view section_type_name(SectionType type);
inline constexpr bool is_node_section(SectionType type) {
  return type != SectionType::kTcp;
}

// Parses the text between brackets of a section header, case-insensitively and with
// inner whitespace collapsed: "ndbd", "DB", "ndbd default", "DB DEFAULT", "mysqld" ...
// Returns nullopt for an unknown section type.
struct SectionName {
  SectionType type;
  bool is_default;  // a "[... default]" section, whose values apply to all of the type
};
std::optional<SectionName> parse_section_name(std::string_view text);

inline constexpr uint32_t section_bit(SectionType type) {
  return uint32_t{1} << static_cast<uint32_t>(type);
}

enum class ParamType : uint8_t { kUint64, kBool, kString };
// "integer", "bool", "string": for error messages.
std::string_view param_type_name(ParamType type);

struct ParamSpec {
  std::string_view name;  // canonical NDB spelling, e.g. "DataMemory"
  uint32_t section_mask;  // section_bit()s of the section types it belongs to
  ParamType type;
  bool mandatory;                   // must be set (in the section or its default section)
  bool has_default;                 // false: unset unless given (or derived, see parser)
  uint64_t default_uint;            // kUint64, and kBool as 0/1
  std::string_view default_string;  // kString
  uint64_t min_value;               // kUint64 only; inclusive
  uint64_t max_value;               // kUint64 only; inclusive
  std::string_view unit;            // "bytes", "ms", ... for documentation; may be empty
  std::string_view comment;         // one line for operators (and `duo_mgm` help)
};

// Every entry of the table, in documentation order.
std::span<const ParamSpec> all_param_specs();

// The spec for `name` (case-insensitive; deprecated NDB aliases such as "Id" resolve to
// their canonical name) in a section of `type`, or nullptr if `type` has no such
// parameter.
const ParamSpec* find_param_spec(SectionType type, std::string_view name);
// Any spec named `name` in any section type, or nullptr: tells "unknown parameter"
// apart from "parameter of another section type" in error messages.
const ParamSpec* find_param_spec_any_section(std::string_view name);

// ASCII case-insensitive equality, as NDB compares parameter and section names.
bool iequals(std::string_view a, std::string_view b);

// Value syntax. Errors are kConfigError with a message that names the problem but not
// the file or parameter; callers add those.
//
// Unsigned decimal integer with an optional unit suffix K, M or G (case-insensitive,
// ×1024 each, as in NDB): "80M" == 83886080. Rejects signs, spaces inside, other units
// and overflow of 64 bits.
Result<uint64_t> parse_uint_value(std::string_view text);
// true/false, yes/no, 1/0, y/n (case-insensitive).
Result<bool> parse_bool_value(std::string_view text);

}  // namespace duo::config
