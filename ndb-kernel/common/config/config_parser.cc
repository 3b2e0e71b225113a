// config.ini parser: reads sections line by line (pass 1), folds default sections and
// built-in defaults into each node section (pass 2), then derives NodeIds, node groups
// and paths and validates the cluster as a whole (pass 3).
#include "ndb-kernel/common/config/config_parser.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <set>
#include <system_error>
#include <utility>

namespace duo::config {

std::string_view value_source_name(ValueSource source) {
  switch (source) {
    case ValueSource::kSection:
      return "section";
    case ValueSource::kDefaultSection:
      return "default section";
    case ValueSource::kBuiltinDefault:
      return "built-in default";
    case ValueSource::kDerived:
      return "derived";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------------------
// ConfigSection / ClusterConfig

const ConfigValue* ConfigSection::find(std::string_view name) const {
  const ParamSpec* spec = find_param_spec(type_, name);
  if (spec == nullptr) return nullptr;
  auto it = values_.find(spec->name);
  return it == values_.end() ? nullptr : &it->second;
}

void ConfigSection::set_value(ConfigValue value) {
  const std::string_view key = value.spec->name;
  values_.insert_or_assign(key, std::move(value));
}

Status ConfigSection::check_type(std::string_view name, ParamType wanted,
                                 const ConfigValue** out) const {
  const ParamSpec* spec = find_param_spec(type_, name);
  if (spec == nullptr) {
    return Status(ErrorCode::kInvalidArgument, "no parameter '" + std::string(name) +
                                                   "' in sections of type [" +
                                                   std::string(section_type_name(type_)) + "]");
  }
  if (spec->type != wanted) {
    return Status(ErrorCode::kInvalidArgument, "parameter '" + std::string(spec->name) +
                                                   "' is of type " +
                                                   std::string(param_type_name(spec->type)) +
                                                   ", not " + std::string(param_type_name(wanted)));
  }
  auto it = values_.find(spec->name);
  if (it == values_.end()) {
    return Status(ErrorCode::kNotFound, "parameter '" + std::string(spec->name) +
                                            "' is not set in section " + header_ + " at line " +
                                            std::to_string(line_));
  }
  *out = &it->second;
  return Status::OK();
}

Result<uint64_t> ConfigSection::get_uint(std::string_view name) const {
  const ConfigValue* value = nullptr;
  DUO_RETURN_IF_ERROR(check_type(name, ParamType::kUint64, &value));
  return value->uint_value;
}

Result<bool> ConfigSection::get_bool(std::string_view name) const {
  const ConfigValue* value = nullptr;
  DUO_RETURN_IF_ERROR(check_type(name, ParamType::kBool, &value));
  return value->uint_value != 0;
}

Result<std::string> ConfigSection::get_string(std::string_view name) const {
  const ConfigValue* value = nullptr;
  DUO_RETURN_IF_ERROR(check_type(name, ParamType::kString, &value));
  return value->string_value;
}

std::vector<const ConfigSection*> ClusterConfig::sections_of(SectionType type) const {
  std::vector<const ConfigSection*> result;
  for (const ConfigSection& section : sections_) {
    if (section.type() == type) result.push_back(&section);
  }
  return result;
}

const ConfigSection* ClusterConfig::find_node(uint32_t node_id) const {
  for (const ConfigSection& section : sections_) {
    if (is_node_section(section.type()) && section.node_id() == node_id) return &section;
  }
  return nullptr;
}

std::vector<uint32_t> ClusterConfig::node_ids(SectionType type) const {
  std::vector<uint32_t> ids;
  for (const ConfigSection& section : sections_) {
    if (section.type() == type && is_node_section(type)) ids.push_back(section.node_id());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// ---------------------------------------------------------------------------------------
// ConfigParser

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

// Quotes a value for messages, shortening long ones so messages stay one readable line.
std::string quoted(std::string_view text) {
  constexpr size_t kShownBytesMax = 80;
  if (text.size() <= kShownBytesMax) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kShownBytesMax)) + "...'";
}

std::string section_types_with_param(std::string_view name) {
  std::string owners;
  for (size_t i = 0; i < kSectionTypeCount; ++i) {
    const auto type = static_cast<SectionType>(i);
    if (find_param_spec(type, name) == nullptr) continue;
    if (!owners.empty()) owners += ", ";
    owners += "[" + std::string(section_type_name(type)) + "]";
  }
  return owners;
}

}  // namespace

class ConfigParser {
 public:
  ConfigParser(std::string_view text, std::string_view file_name)
      : text_(text), file_name_(file_name) {}

  Result<ClusterConfig> parse() {
    if (text_.size() > kConfigFileBytesMax) {
      return error("file is larger than " + std::to_string(kConfigFileBytesMax) + " bytes");
    }
    DUO_RETURN_IF_ERROR(read_sections());
    DUO_RETURN_IF_ERROR(build_sections());
    DUO_RETURN_IF_ERROR(check_explicit_node_ids());
    DUO_RETURN_IF_ERROR(assign_node_ids());
    DUO_RETURN_IF_ERROR(check_node_counts());
    DUO_RETURN_IF_ERROR(check_replicas());
    DUO_RETURN_IF_ERROR(assign_node_groups());
    derive_paths();
    DUO_RETURN_IF_ERROR(check_links());
    config_.file_name_ = std::string(file_name_);
    return std::move(config_);
  }

 private:
  // One name=value line as read.
  struct Entry {
    const ParamSpec* spec;
    uint64_t uint_value;
    std::string string_value;
    uint32_t line;
  };
  struct RawSection {
    SectionName name;
    std::string header;
    uint32_t line;
    std::vector<Entry> entries;
  };

  Status error_at(uint32_t line, const std::string& message) const {
    return Status(ErrorCode::kConfigError,
                  std::string(file_name_) + ":" + std::to_string(line) + ": " + message);
  }
  Status error(const std::string& message) const {
    return Status(ErrorCode::kConfigError, std::string(file_name_) + ": " + message);
  }

  // --- Pass 1: lines into raw sections ------------------------------------------------

  Status read_sections() {
    uint32_t line_number = 0;
    size_t start = 0;
    while (start <= text_.size()) {
      size_t end = text_.find('\n', start);
      if (end == std::string_view::npos) end = text_.size();
      ++line_number;
      const std::string_view line = text_.substr(start, end - start);
      if (line.size() > kConfigLineBytesMax) {
        return error_at(line_number,
                        "line longer than " + std::to_string(kConfigLineBytesMax) + " bytes");
      }
      DUO_RETURN_IF_ERROR(read_line(line, line_number));
      start = end + 1;
    }
    return Status::OK();
  }

  Status read_line(std::string_view line, uint32_t line_number) {
    line = trim(line);
    if (line.empty() || line.front() == '#' || line.front() == ';') return Status::OK();
    // A '#' anywhere starts a comment (NDB's rule too), so values cannot contain '#'.
    const size_t comment = line.find('#');
    if (comment != std::string_view::npos) line = trim(line.substr(0, comment));
    if (line.front() == '[') return read_header(line, line_number);
    return read_assignment(line, line_number);
  }

  Status read_header(std::string_view line, uint32_t line_number) {
    const size_t close = line.find(']');
    if (close == std::string_view::npos) {
      return error_at(line_number, "malformed section header " + quoted(line) + " (missing ']')");
    }
    if (close + 1 != line.size()) {
      return error_at(line_number,
                      "unexpected text after section header " + quoted(line.substr(close + 1)));
    }
    const std::string_view inner = trim(line.substr(1, close - 1));
    const std::optional<SectionName> name = parse_section_name(inner);
    if (!name) {
      return error_at(line_number,
                      "unknown section type [" + std::string(inner) +
                          "] (expected ndbd, ndb_mgmd, mysqld, api, tcp, their aliases DB, "
                          "MGM, API, TCP, or one of these followed by DEFAULT)");
    }
    if (sections_.size() >= kConfigSectionsMax) {
      return error_at(line_number, "more than " + std::to_string(kConfigSectionsMax) + " sections");
    }
    sections_.push_back(RawSection{*name, "[" + std::string(inner) + "]", line_number, {}});
    return Status::OK();
  }

  Status read_assignment(std::string_view line, uint32_t line_number) {
    const size_t separator = line.find_first_of("=:");
    if (separator == std::string_view::npos || trim(line.substr(0, separator)).empty()) {
      return error_at(line_number, "malformed line " + quoted(line) +
                                       " (expected name=value, name: value or [section])");
    }
    const std::string_view name = trim(line.substr(0, separator));
    const std::string_view value_text = trim(line.substr(separator + 1));
    if (sections_.empty()) {
      return error_at(line_number, "parameter " + quoted(name) + " outside of any section");
    }
    RawSection& section = sections_.back();
    const ParamSpec* spec = find_param_spec(section.name.type, name);
    if (spec == nullptr) {
      std::string message = "unknown parameter " + quoted(name) + " in section " + section.header;
      const std::string owners = section_types_with_param(name);
      if (!owners.empty()) message += " (it is a parameter of " + owners + ")";
      return error_at(line_number, message);
    }
    const std::string param = "'" + std::string(spec->name) + "'";
    if (section.name.is_default && spec->name == "NodeId") {
      return error_at(line_number, "parameter " + param + " cannot be set in a default section " +
                                       section.header + "; set it in each node's own section");
    }
    if (value_text.empty()) {
      return error_at(line_number,
                      "missing value for parameter " + param + " in section " + section.header);
    }
    DUO_RETURN_IF_ERROR(check_duplicate(section, spec, line_number));

    Entry entry{spec, 0, {}, line_number};
    switch (spec->type) {
      case ParamType::kUint64: {
        Result<uint64_t> value = parse_uint_value(value_text);
        if (!value.ok()) {
          return error_at(line_number, "invalid value " + quoted(value_text) + " for parameter " +
                                           param + " in section " + section.header + ": " +
                                           value.status().message());
        }
        if (*value < spec->min_value || *value > spec->max_value) {
          return error_at(line_number, "value " + quoted(value_text) + " for parameter " + param +
                                           " in section " + section.header + " is out of range " +
                                           std::to_string(spec->min_value) + ".." +
                                           std::to_string(spec->max_value));
        }
        entry.uint_value = *value;
        break;
      }
      case ParamType::kBool: {
        Result<bool> value = parse_bool_value(value_text);
        if (!value.ok()) {
          return error_at(line_number, "invalid value " + quoted(value_text) + " for parameter " +
                                           param + " in section " + section.header + ": " +
                                           value.status().message());
        }
        entry.uint_value = *value ? 1 : 0;
        break;
      }
      case ParamType::kString:
        entry.string_value = std::string(value_text);
        break;
    }
    section.entries.push_back(std::move(entry));
    return Status::OK();
  }

  // A parameter may be given once per node section, and once per section type across
  // all its default sections (several [ndbd default] sections act as one).
  Status check_duplicate(const RawSection& section, const ParamSpec* spec,
                         uint32_t line_number) const {
    auto find_in = [spec](const RawSection& raw) -> const Entry* {
      for (const Entry& entry : raw.entries) {
        if (entry.spec == spec) return &entry;
      }
      return nullptr;
    };
    const Entry* previous = nullptr;
    if (section.name.is_default) {
      for (const RawSection& raw : sections_) {
        if (raw.name.is_default && raw.name.type == section.name.type) {
          previous = find_in(raw);
          if (previous != nullptr) break;
        }
      }
    } else {
      previous = find_in(section);
    }
    if (previous == nullptr) return Status::OK();
    return error_at(line_number, "parameter '" + std::string(spec->name) +
                                     "' already set at line " + std::to_string(previous->line));
  }

  // --- Pass 2: fold defaults into node sections ---------------------------------------

  Status build_sections() {
    // Defaults apply wherever the default section appears in the file (NDB's rule), so
    // collect them all before building any node section.
    std::map<const ParamSpec*, const Entry*> defaults;
    for (const RawSection& raw : sections_) {
      if (!raw.name.is_default) continue;
      for (const Entry& entry : raw.entries) defaults.emplace(entry.spec, &entry);
    }
    for (const RawSection& raw : sections_) {
      if (raw.name.is_default) continue;
      ConfigSection section(raw.name.type, raw.header, raw.line);
      for (const ParamSpec& spec : all_param_specs()) {
        if ((spec.section_mask & section_bit(raw.name.type)) == 0) continue;
        const Entry* given = nullptr;
        for (const Entry& entry : raw.entries) {
          if (entry.spec == &spec) given = &entry;
        }
        ConfigValue value;
        value.spec = &spec;
        if (given != nullptr) {
          value.uint_value = given->uint_value;
          value.string_value = given->string_value;
          value.line = given->line;
          value.source = ValueSource::kSection;
        } else if (auto it = defaults.find(&spec); it != defaults.end()) {
          value.uint_value = it->second->uint_value;
          value.string_value = it->second->string_value;
          value.line = it->second->line;
          value.source = ValueSource::kDefaultSection;
        } else if (spec.has_default) {
          value.uint_value = spec.default_uint;
          value.string_value = std::string(spec.default_string);
          value.source = ValueSource::kBuiltinDefault;
        } else if (spec.mandatory) {
          return error_at(raw.line, "mandatory parameter '" + std::string(spec.name) +
                                        "' missing in section " + raw.header);
        } else {
          continue;  // optional and unset
        }
        section.set_value(std::move(value));
      }
      if (const ConfigValue* node_id = section.find("NodeId")) {
        section.set_node_id(static_cast<uint32_t>(node_id->uint_value));
      }
      config_.sections_.push_back(std::move(section));
    }
    return Status::OK();
  }

  // --- Pass 3: derive and validate ----------------------------------------------------

  Status check_explicit_node_ids() {
    std::map<uint32_t, const ConfigSection*> owner_of;
    for (const ConfigSection& section : config_.sections_) {
      if (section.node_id() == 0) continue;
      auto [it, inserted] = owner_of.emplace(section.node_id(), &section);
      if (!inserted) {
        const ConfigSection& first = *it->second;
        return error_at(section.find("NodeId")->line,
                        "NodeId " + std::to_string(section.node_id()) + " in section " +
                            section.header() + " is already used by section " + first.header() +
                            " at line " + std::to_string(first.line()));
      }
    }
    return Status::OK();
  }

  Status assign_node_ids() {
    std::set<uint32_t> used;
    for (const ConfigSection& section : config_.sections_) {
      if (section.node_id() != 0) used.insert(section.node_id());
    }
    for (ConfigSection& section : config_.sections_) {
      if (!is_node_section(section.type()) || section.node_id() != 0) continue;
      const uint32_t id_max =
          section.type() == SectionType::kDataNode ? kDataNodeIdMax : kNodeIdMax;
      uint32_t id = 1;
      while (id <= id_max && used.count(id) != 0) ++id;
      if (id > id_max) {
        return error_at(section.line(), "no free NodeId (1.." + std::to_string(id_max) +
                                            ") left for section " + section.header());
      }
      used.insert(id);
      section.set_node_id(id);
      ConfigValue value;
      value.spec = find_param_spec(section.type(), "NodeId");
      value.uint_value = id;
      value.source = ValueSource::kDerived;
      section.set_value(std::move(value));
    }
    return Status::OK();
  }

  Status check_node_counts() const {
    if (config_.sections_of(SectionType::kManagementNode).empty()) {
      return error("no [ndb_mgmd] section: a cluster needs at least one management node");
    }
    if (config_.sections_of(SectionType::kDataNode).empty()) {
      return error("no [ndbd] section: a cluster needs at least one data node");
    }
    return Status::OK();
  }

  static uint32_t value_line(const ConfigSection& section, std::string_view name) {
    const ConfigValue* value = section.find(name);
    return value != nullptr && value->line != 0 ? value->line : section.line();
  }

  // Parameters every data node must agree on: NoOfReplicas (node groups are built from
  // it), NoOfFragmentLogParts (a fragment's log part is the same on every replica), and
  // PartitionsPerNode and ClassicFragmentation (every node and client computes a new
  // table's default fragment count alike).
  Status check_same_on_every_data_node(std::string_view name, uint64_t* agreed) {
    const ConfigSection* first = nullptr;
    for (const ConfigSection* section : config_.sections_of(SectionType::kDataNode)) {
      const uint64_t value = section->find(name)->uint_value;
      if (first == nullptr) {
        first = section;
        *agreed = value;
        continue;
      }
      if (value != *agreed) {
        const std::string param(name);
        return error_at(value_line(*section, name),
                        param + "=" + std::to_string(value) + " of data node " +
                            std::to_string(section->node_id()) + " differs from " + param + "=" +
                            std::to_string(*agreed) + " of data node " +
                            std::to_string(first->node_id()) + " (line " +
                            std::to_string(value_line(*first, name)) +
                            "); all data nodes must have the same " + param);
      }
    }
    return Status::OK();
  }

  Status check_replicas() {
    uint64_t replicas = 0;
    DUO_RETURN_IF_ERROR(check_same_on_every_data_node("NoOfReplicas", &replicas));
    uint64_t agreed = 0;
    for (std::string_view name :
         {"NoOfFragmentLogParts", "PartitionsPerNode", "ClassicFragmentation"}) {
      DUO_RETURN_IF_ERROR(check_same_on_every_data_node(name, &agreed));
    }
    config_.no_of_replicas_ = static_cast<uint32_t>(replicas);
    return Status::OK();
  }

  Status assign_node_groups() {
    const uint64_t replicas = config_.no_of_replicas_;
    std::vector<ConfigSection*> data_nodes;
    for (ConfigSection& section : config_.sections_) {
      if (section.type() == SectionType::kDataNode) data_nodes.push_back(&section);
    }
    std::sort(
        data_nodes.begin(), data_nodes.end(),
        [](const ConfigSection* a, const ConfigSection* b) { return a->node_id() < b->node_id(); });
    uint64_t grouped = 0;                  // data nodes that are (or will be) in a node group
    std::map<uint64_t, uint64_t> members;  // node group -> explicit member count
    for (const ConfigSection* node : data_nodes) {
      const ConfigValue* group = node->find("Nodegroup");
      if (group != nullptr && group->uint_value == kNoNodegroup) continue;
      ++grouped;
      if (group == nullptr) continue;
      if (++members[group->uint_value] > replicas) {
        return error_at(group->line, "node group " + std::to_string(group->uint_value) +
                                         " has more than NoOfReplicas=" + std::to_string(replicas) +
                                         " data nodes");
      }
    }
    if (grouped % replicas != 0) {
      return error(std::to_string(grouped) + " data nodes cannot form node groups of " +
                   "NoOfReplicas=" + std::to_string(replicas) +
                   " (the number of data nodes must be a multiple of NoOfReplicas)");
    }
    for (ConfigSection* node : data_nodes) {
      if (node->find("Nodegroup") != nullptr) continue;
      uint64_t group = 0;
      while (members[group] >= replicas) ++group;
      ++members[group];
      ConfigValue value;
      value.spec = find_param_spec(SectionType::kDataNode, "Nodegroup");
      value.uint_value = group;
      value.source = ValueSource::kDerived;
      node->set_value(std::move(value));
    }
    for (const auto& [group, count] : members) {
      if (count != replicas) {
        return error(
            "node group " + std::to_string(group) + " has " + std::to_string(count) +
            " data node(s); each node group needs NoOfReplicas=" + std::to_string(replicas));
      }
    }
    return Status::OK();
  }

  void derive_paths() {
    for (ConfigSection& section : config_.sections_) {
      if (section.type() != SectionType::kDataNode) continue;
      derive_from(section, "FileSystemPath", "DataDir");
      derive_from(section, "BackupDataDir", "FileSystemPath");
    }
  }

  static void derive_from(ConfigSection& section, std::string_view target,
                          std::string_view source_name) {
    if (section.has(target)) return;
    const ConfigValue* source = section.find(source_name);
    ConfigValue value;
    value.spec = find_param_spec(section.type(), target);
    value.string_value = source->string_value;
    value.line = source->line;  // the line that actually decided the value
    value.source = ValueSource::kDerived;
    section.set_value(std::move(value));
  }

  Status check_links() const {
    std::map<std::pair<uint64_t, uint64_t>, uint32_t> line_of_link;
    for (const ConfigSection* link : config_.sections_of(SectionType::kTcp)) {
      const ConfigValue* ends[2] = {link->find("NodeId1"), link->find("NodeId2")};
      for (const ConfigValue* end : ends) {
        if (config_.find_node(static_cast<uint32_t>(end->uint_value)) == nullptr) {
          return error_at(end->line, std::string(end->spec->name) + "=" +
                                         std::to_string(end->uint_value) + " in section " +
                                         link->header() + " is not a configured node");
        }
      }
      const uint64_t low = std::min(ends[0]->uint_value, ends[1]->uint_value);
      const uint64_t high = std::max(ends[0]->uint_value, ends[1]->uint_value);
      if (low == high) {
        return error_at(ends[1]->line, "section " + link->header() + " links node " +
                                           std::to_string(low) + " to itself");
      }
      auto [it, inserted] = line_of_link.emplace(std::make_pair(low, high), link->line());
      if (!inserted) {
        return error_at(link->line(), "link between nodes " + std::to_string(low) + " and " +
                                          std::to_string(high) + " already defined at line " +
                                          std::to_string(it->second));
      }
    }
    return Status::OK();
  }

  // Constant after construction.
  const std::string_view text_;
  const std::string_view file_name_;

  std::vector<RawSection> sections_;  // pass 1 output, file order
  ClusterConfig config_;              // pass 2 and 3 output
};

Result<ClusterConfig> parse_config_string(std::string_view text, std::string_view file_name) {
  ConfigParser parser(text, file_name);
  return parser.parse();
}

Result<ClusterConfig> parse_config_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) {
    return Status(ErrorCode::kIoError, "cannot open config file '" + path +
                                           "': " + std::generic_category().message(errno));
  }
  std::string text;
  char buffer[64 * 1024];
  while (true) {
    const size_t read = std::fread(buffer, 1, sizeof(buffer), file.get());
    text.append(buffer, read);
    if (text.size() > kConfigFileBytesMax) {
      return Status(ErrorCode::kConfigError, path + ": file is larger than " +
                                                 std::to_string(kConfigFileBytesMax) + " bytes");
    }
    if (read < sizeof(buffer)) break;
  }
  if (std::ferror(file.get())) {
    return Status(ErrorCode::kIoError, "cannot read config file '" + path +
                                           "': " + std::generic_category().message(errno));
  }
  return parse_config_string(text, path);
}

}  // namespace duo::config
