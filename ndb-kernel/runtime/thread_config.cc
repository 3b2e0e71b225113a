// parse_thread_config(); see thread_config.h.
#include "ndb-kernel/runtime/thread_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>

namespace duo::kernel {
namespace {

struct TypeLimits {
  uint32_t count_default;
  uint32_t count_min;
  uint32_t count_max;
  bool has_threads;  // false: accepted, but DuoDB runs no such thread
};

const std::map<std::string, TypeLimits, std::less<>>& thread_types() {
  static const auto* types = new std::map<std::string, TypeLimits, std::less<>>{
      {"main", {1, 0, 1, true}},     {"rep", {1, 0, 1, true}},
      {"recv", {1, 1, kRecvThreadsMax, true}}, {"ldm", {1, 0, kLdmThreadsMax, true}},
      {"tc", {0, 0, 1, true}},       {"send", {0, 0, kSendThreadsMax, true}},
      {"io", {1, 0, 64, false}},     {"wd", {1, 0, 1, false}},
      {"watchdog", {1, 0, 1, false}}, {"idxbld", {0, 0, 64, false}},
  };
  return *types;
}

Status error(std::string_view what) {
  return Status(ErrorCode::kConfigError, "ThreadConfig: " + std::string(what));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<uint32_t> parse_number(std::string_view s) {
  s = trim(s);
  uint32_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

// Appends the CPUs of one list item ("5" or "5-7") to *cpus.
Status add_cpus(std::string_view item, std::vector<uint32_t>* cpus) {
  constexpr uint32_t kCpuIdMax = 4095;
  const size_t dash = item.find('-');
  const std::optional<uint32_t> first = parse_number(item.substr(0, dash));
  const std::optional<uint32_t> last =
      dash == std::string_view::npos ? first : parse_number(item.substr(dash + 1));
  if (!first || !last || *first > *last || *last > kCpuIdMax) {
    return error("bad CPU list item '" + std::string(trim(item)) + "'");
  }
  for (uint32_t cpu = *first; cpu <= *last; ++cpu) cpus->push_back(cpu);
  return Status::OK();
}

// Splits on commas outside braces.
std::vector<std::string_view> split_top_level(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    } else if (text[i] == '{') {
      ++depth;
    } else if (text[i] == '}') {
      --depth;
    }
  }
  return parts;
}

struct Entry {
  uint32_t count = 0;
  std::vector<uint32_t> bind;  // cpubind: one CPU per thread
  std::vector<uint32_t> set;   // cpuset: any of them, for every thread
};

}  // namespace

Result<ThreadConfig> parse_thread_config(std::string_view text) {
  std::map<std::string, Entry, std::less<>> entries;
  ThreadConfig out;
  int depth = 0;
  for (char c : text) {
    depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (depth < 0 || depth > 1) return error("unbalanced braces in '" + std::string(text) + "'");
  }
  if (depth != 0) return error("unbalanced braces in '" + std::string(text) + "'");
  for (std::string_view raw : split_top_level(text)) {
    const std::string_view part = trim(raw);
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    std::string name(trim(part.substr(0, eq)));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    auto type = thread_types().find(name);
    if (type == thread_types().end()) {
      if (name == "query" || name == "recover") {
        return error("thread type '" + name + "' is not supported by DuoDB");
      }
      return error("unknown thread type '" + name + "'");
    }
    if (entries.count(name) != 0) return error("thread type '" + name + "' given twice");
    Entry entry;
    // A bare name asks for one thread of the type (NDB: "main,ldm,recv").
    entry.count = eq == std::string_view::npos ? 1 : type->second.count_default;
    if (eq != std::string_view::npos) {
      std::string_view body = trim(part.substr(eq + 1));
      if (body.size() < 2 || body.front() != '{' || body.back() != '}') {
        return error("expected " + name + "={...}, not '" + std::string(part) + "'");
      }
      body = body.substr(1, body.size() - 2);
      std::vector<uint32_t>* list = nullptr;  // the CPU list a bare number continues
      size_t start = 0;
      for (size_t i = 0; i <= body.size(); ++i) {
        if (i < body.size() && body[i] != ',') continue;
        const std::string_view item = trim(body.substr(start, i - start));
        start = i + 1;
        if (item.empty()) continue;
        const size_t item_eq = item.find('=');
        if (item_eq == std::string_view::npos) {
          if (list == nullptr) return error("'" + std::string(item) + "' in " + name + " is not key=value");
          DUO_RETURN_IF_ERROR(add_cpus(item, list));
          continue;
        }
        std::string key(trim(item.substr(0, item_eq)));
        std::transform(key.begin(), key.end(), key.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        const std::string_view value = item.substr(item_eq + 1);
        list = nullptr;
        if (key == "count") {
          const std::optional<uint32_t> count = parse_number(value);
          if (!count) return error("bad count '" + std::string(trim(value)) + "' of " + name);
          entry.count = *count;
        } else if (key == "cpubind" || key == "cpubind_exclusive") {
          list = &entry.bind;
          DUO_RETURN_IF_ERROR(add_cpus(value, list));
        } else if (key == "cpuset" || key == "cpuset_exclusive") {
          list = &entry.set;
          DUO_RETURN_IF_ERROR(add_cpus(value, list));
        } else if (key == "spintime" || key == "realtime" || key == "thread_prio" ||
                   key == "nosend") {
          out.ignored.push_back(key + " of " + name);
        } else {
          return error("unknown property '" + key + "' of " + name);
        }
      }
    }
    const TypeLimits& limits = type->second;
    if (entry.count < limits.count_min || entry.count > limits.count_max) {
      return error("count of " + name + " must be " + std::to_string(limits.count_min) + ".." +
                   std::to_string(limits.count_max) + ", not " + std::to_string(entry.count));
    }
    if (!entry.bind.empty() && !entry.set.empty()) {
      return error(name + " has both cpubind and cpuset");
    }
    if (limits.has_threads && !entry.bind.empty() && entry.bind.size() < entry.count) {
      return error("cpubind of " + name + " lists " + std::to_string(entry.bind.size()) +
                   " CPUs for " + std::to_string(entry.count) + " threads");
    }
    if (!limits.has_threads && (!entry.bind.empty() || !entry.set.empty())) {
      out.ignored.push_back("CPUs of " + name);
    }
    entries.emplace(std::move(name), std::move(entry));
  }
  auto count_of = [&](std::string_view name) {
    auto it = entries.find(name);
    return it != entries.end() ? it->second.count : thread_types().at(std::string(name)).count_default;
  };
  const uint32_t main = std::max(count_of("main"), count_of("rep"));
  ThreadLayout& layout = out.layout;
  layout.recv_threads = count_of("recv");
  layout.ldm_threads = count_of("ldm");
  layout.tc_threads = count_of("tc");
  layout.send_threads = count_of("send");
  // NDB: with neither main nor rep thread, the receive thread does their work.
  layout.main_runs_recv = main == 0;
  if (layout.main_runs_recv && layout.recv_threads != 1) {
    return error("main={count=0},rep={count=0} needs exactly one recv thread (it does the main work)");
  }
  if (const std::string invalid = layout.validate(); !invalid.empty()) return error(invalid);

  // CPUs per thread, in the layout's numbering.
  out.cpus.assign(layout.thread_count(), {});
  auto place = [&](std::string_view name, uint32_t count, auto index_of) {
    auto it = entries.find(name);
    if (it == entries.end()) return;
    for (uint32_t i = 0; i < count; ++i) {
      std::vector<uint32_t>& cpus = out.cpus[index_of(i)];
      if (!it->second.bind.empty()) cpus = {it->second.bind[i]};
      if (!it->second.set.empty()) cpus = it->second.set;
    }
  };
  place(layout.main_runs_recv ? "recv" : "main", 1, [&](uint32_t) { return layout.main_thread(); });
  if (!layout.main_runs_recv) {
    place("recv", layout.recv_threads, [&](uint32_t i) { return layout.recv_thread(i); });
  }
  place("send", layout.send_threads, [&](uint32_t i) { return layout.send_thread(i); });
  place("tc", layout.tc_threads, [&](uint32_t) { return layout.tc_thread(); });
  place("ldm", layout.ldm_threads, [&](uint32_t i) { return layout.ldm_thread(i); });
  return out;
}

}  // namespace duo::kernel
