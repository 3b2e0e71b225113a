#include "mgmd/protocol/mgm_protocol.h"

#include "ndb-kernel/common/config/config_parser.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace duo::mgm {
namespace {

constexpr std::string_view kContentLength = "Content-Length";

// Requests are ASCII: printable bytes and tab. Anything else (NUL, escape sequences,
// bytes >= 0x80) means the peer is not speaking this protocol.
bool is_request_byte(unsigned char c) {
  return c == '\t' || (c >= 0x20 && c < 0x7f);
}
// Replies may carry UTF-8 (host names, paths); only control bytes are refused.
bool is_reply_byte(unsigned char c) {
  return c == '\t' || (c >= 0x20 && c != 0x7f);
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

void append_sanitized(std::string* out, std::string_view text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out->push_back(u < 0x20 || u == 0x7f ? ' ' : c);
  }
}

// Splits "name: value"; nullopt when there is no ':' or the name is empty.
std::optional<std::pair<std::string_view, std::string_view>> split_arg(std::string_view line) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view name = trim(line.substr(0, colon));
  if (name.empty()) return std::nullopt;
  return std::make_pair(name, trim(line.substr(colon + 1)));
}

}  // namespace

const std::string* Message::find(std::string_view name) const {
  for (const auto& [n, v] : args) {
    if (n == name) return &v;
  }
  return nullptr;
}

Message& Message::add(std::string name, std::string value) {
  args.emplace_back(std::move(name), std::move(value));
  return *this;
}

Message& Message::add(std::string name, uint64_t value) {
  return add(std::move(name), std::to_string(value));
}

std::string encode_message(const Message& message) {
  std::string out;
  out.reserve(64 + message.body.size());
  append_sanitized(&out, message.head);
  out.push_back('\n');
  for (const auto& [name, value] : message.args) {
    if (!message.body.empty() && name == kContentLength) continue;
    append_sanitized(&out, name);
    out += ": ";
    append_sanitized(&out, value);
    out.push_back('\n');
  }
  if (!message.body.empty()) {
    out += kContentLength;
    out += ": ";
    out += std::to_string(message.body.size());
    out.push_back('\n');
  }
  out.push_back('\n');
  out += message.body;
  return out;
}

std::string reply_head(std::string_view command) {
  std::string head(command);
  head += " reply";
  return head;
}

std::optional<uint64_t> parse_uint_arg(std::string_view text, uint64_t max_value) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value > max_value) {
    return std::nullopt;
  }
  return value;
}

// ---- RequestParser ------------------------------------------------------------------

Status RequestParser::feed(std::string_view bytes, std::vector<Parsed>* out) {
  if (failed_) return Status(ErrorCode::kInvalidArgument, "session is closing after an error");
  for (char c : bytes) {
    if (c == '\n') {
      std::string_view line = line_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      Status status = take_line(line, out);
      line_.clear();
      if (!status.ok()) {
        failed_ = true;
        return status;
      }
      continue;
    }
    const auto u = static_cast<unsigned char>(c);
    // '\r' is kept only so that "\r\n" can be recognised; a lone one fails below.
    if (!is_request_byte(u) && c != '\r') {
      failed_ = true;
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", u);
      return Status(ErrorCode::kInvalidArgument,
                    std::string("malformed request: byte ") + hex + " is not allowed");
    }
    if (line_.size() >= kRequestLineBytesMax) {
      failed_ = true;
      return Status(
          ErrorCode::kInvalidArgument,
          "malformed request: line longer than " + std::to_string(kRequestLineBytesMax) + " bytes");
    }
    line_.push_back(c);
  }
  return Status::OK();
}

Status RequestParser::take_line(std::string_view line, std::vector<Parsed>* out) {
  if (line.find('\r') != std::string_view::npos) {
    return Status(ErrorCode::kInvalidArgument, "malformed request: byte 0x0d is not allowed");
  }
  if (!in_request_) {
    // Blank lines between requests are allowed: they are a cheap keepalive.
    if (trim(line).empty()) return Status::OK();
    current_ = Parsed{};
    arg_lines_ = 0;
    current_.request.head = to_lower(trim(line));
    in_request_ = true;
    return Status::OK();
  }
  if (line.empty()) {
    out->push_back(std::move(current_));
    current_ = Parsed{};
    in_request_ = false;
    return Status::OK();
  }
  if (++arg_lines_ > kRequestArgsMax) {
    return Status(
        ErrorCode::kInvalidArgument,
        "malformed request: more than " + std::to_string(kRequestArgsMax) + " argument lines");
  }
  if (current_.error) return Status::OK();  // already malformed: skip to its end
  auto arg = split_arg(line);
  if (!arg) {
    current_.error = "malformed argument line '" + std::string(line) + "': expected 'name: value'";
    return Status::OK();
  }
  std::string name = to_lower(arg->first);
  if (current_.request.find(name) != nullptr) {
    current_.error = "argument '" + name + "' given twice";
    return Status::OK();
  }
  current_.request.args.emplace_back(std::move(name), std::string(arg->second));
  return Status::OK();
}

// ---- ReplyParser --------------------------------------------------------------------

void ReplyParser::reset() {
  state_ = State::kHead;
  line_.clear();
  reply_ = Message{};
  body_bytes_ = 0;
}

Result<size_t> ReplyParser::feed(std::string_view bytes, bool* done) {
  *done = state_ == State::kDone;
  size_t used = 0;
  while (used < bytes.size() && state_ != State::kDone) {
    if (state_ == State::kBody) {
      const size_t take = std::min(bytes.size() - used, body_bytes_ - reply_.body.size());
      reply_.body.append(bytes.substr(used, take));
      used += take;
      if (reply_.body.size() == body_bytes_) state_ = State::kDone;
      continue;
    }
    const char c = bytes[used++];
    if (c == '\n') {
      std::string_view line = line_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      Status status = take_line(line);
      line_.clear();
      DUO_RETURN_IF_ERROR(std::move(status));
      continue;
    }
    if (!is_reply_byte(static_cast<unsigned char>(c)) && c != '\r') {
      return Status(ErrorCode::kInvalidArgument, "malformed reply: control byte in a line");
    }
    if (line_.size() >= kReplyLineBytesMax) {
      return Status(ErrorCode::kInvalidArgument, "malformed reply: line too long");
    }
    line_.push_back(c);
  }
  *done = state_ == State::kDone;
  return used;
}

Status ReplyParser::take_line(std::string_view line) {
  if (state_ == State::kHead) {
    if (trim(line).empty()) return Status::OK();
    reply_.head = std::string(trim(line));
    state_ = State::kArgs;
    return Status::OK();
  }
  if (!line.empty()) {
    if (reply_.args.size() >= kReplyArgsMax) {
      return Status(ErrorCode::kInvalidArgument, "malformed reply: too many lines");
    }
    auto arg = split_arg(line);
    if (!arg) return Status(ErrorCode::kInvalidArgument, "malformed reply line");
    reply_.args.emplace_back(std::string(arg->first), std::string(arg->second));
    return Status::OK();
  }
  const std::string* length = reply_.find(kContentLength);
  if (length == nullptr) {
    state_ = State::kDone;
    return Status::OK();
  }
  auto bytes = parse_uint_arg(*length, kReplyBodyBytesMax);
  if (!bytes) return Status(ErrorCode::kInvalidArgument, "malformed reply: bad Content-Length");
  body_bytes_ = *bytes;
  state_ = body_bytes_ == 0 ? State::kDone : State::kBody;
  return Status::OK();
}

Result<std::map<uint16_t, uint16_t>> reported_ports(const Message& status_reply) {
  const std::string* result = status_reply.find("result");
  if (status_reply.head != "get status reply" || result == nullptr || *result != "Ok") {
    return Status(ErrorCode::kInvalidArgument,
                  "not a successful get status reply: '" + status_reply.head + "'");
  }
  std::map<uint16_t, uint16_t> ports;
  for (const auto& [name, value] : status_reply.args) {
    // node.<id>.port
    if (name.rfind("node.", 0) != 0 || name.size() < 10 ||
        name.compare(name.size() - 5, 5, ".port") != 0) {
      continue;
    }
    auto id = parse_uint_arg(std::string_view(name).substr(5, name.size() - 10),
                                  config::kDataNodeIdMax);
    auto port = parse_uint_arg(value, 65535);
    if (!id || *id == 0 || !port || *port == 0) {
      return Status(ErrorCode::kInvalidArgument,
                    "malformed status line '" + name + ": " + value + "'");
    }
    ports[static_cast<uint16_t>(*id)] = static_cast<uint16_t>(*port);
  }
  return ports;
}

}  // namespace duo::mgm
