// The management protocol codec: framing, parsing and encoding of the line-oriented
// text messages that duo_mgmd and its clients (duo_mgm, later data and API nodes, or a
// script with `nc`) exchange over TCP. The wire format is docs/formats/mgm-protocol.md.
//
// A message is a head line (the command of a request, "<command> reply" for a reply),
// then `name: value` lines, then an empty line; a reply may carry a body of exactly
// `Content-Length` bytes after the empty line. Lines end in "\n"; a "\r" before it is
// dropped so that `nc -C` (CRLF) works too. This mirrors NDB's mgmapi protocol.
//
// The parsers are incremental (feed() whatever recv() returned) and enforce the limits
// below, so a peer sending garbage or an endless line costs a bounded amount of memory
// and gets an error instead of an allocation failure. The codec holds no sockets and
// no clock: it is plain data in, plain data out, which keeps it unit-testable.
//
// Thread-safety: a parser object is thread-compatible (one owner at a time); the free
// functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ndb-kernel/common/status.h"

namespace duo::mgm {

// Limits of a request, enforced by RequestParser. A line longer than this is an
// attack or a wrong client (NDB's own lines are < 100 bytes); 1 KiB leaves room for
// long host names and paths.
inline constexpr size_t kRequestLineBytesMax = 1024;
// Argument lines per request; the largest command (`get nodeid`) takes 9.
inline constexpr size_t kRequestArgsMax = 32;
// Limits of a reply, enforced by ReplyParser: lines may carry long messages, and the
// body is a config.ini (bounded by the config parser's own 16 MiB file limit).
inline constexpr size_t kReplyLineBytesMax = 64 * 1024;
inline constexpr size_t kReplyArgsMax = 4096;
inline constexpr size_t kReplyBodyBytesMax = 16 * 1024 * 1024;

// A request or a reply. Argument names are kept as sent for replies and lower-cased
// for requests (request names are case-insensitive); order is preserved.
struct Message {
  std::string head;
  std::vector<std::pair<std::string, std::string>> args;
  std::string body;  // replies only; its length is sent as Content-Length

  // The value of the first argument named `name` (exact match), or nullptr.
  const std::string* find(std::string_view name) const;
  // Appends an argument; returns *this so replies read as one expression.
  Message& add(std::string name, std::string value);
  Message& add(std::string name, uint64_t value);
};

// Encodes `message` to wire bytes. Newlines and other control bytes inside the head or
// values become spaces, because a newline there would split the message and let
// a quoted piece of user input forge an argument. A non-empty body gets a
// Content-Length argument (replacing any given one).
std::string encode_message(const Message& message);

// A reply header for `command`: "get nodeid" -> "get nodeid reply".
std::string reply_head(std::string_view command);

// Parses requests from a byte stream (the mgmd side).
class RequestParser {
 public:
  // What feed() produced for one request.
  struct Parsed {
    Message request;
    // Set when the request was complete but malformed (argument without ':', empty or
    // duplicate name): answer it with this error and keep the session.
    std::optional<std::string> error;
  };

  // Consumes `bytes`, appending each complete request to `out`. Returns a non-OK
  // Status (kInvalidArgument, with a message for the peer) on a fatal framing error —
  // a line over kRequestLineBytesMax, a NUL or other control byte, more than
  // kRequestArgsMax arguments — after which the session must be closed: resyncing a
  // stream of garbage is guesswork. Requests completed before the error are in `out`.
  Status feed(std::string_view bytes, std::vector<Parsed>* out);

  // True if a request has started but not finished (for "peer closed mid-request").
  bool in_request() const { return in_request_ || !line_.empty(); }

 private:
  Status take_line(std::string_view line, std::vector<Parsed>* out);

  std::string line_;  // the unfinished line; never longer than kRequestLineBytesMax
  bool in_request_ = false;
  Parsed current_;
  size_t arg_lines_ = 0;  // argument lines of current_, malformed ones included
  bool failed_ = false;   // a fatal error happened; further input is refused
};

// Parses one reply at a time from a byte stream (the client side).
class ReplyParser {
 public:
  // Consumes bytes until one reply is complete. Returns the number of bytes of `bytes`
  // consumed (the rest belongs to the next reply) and sets `*done` when `reply()` is
  // ready. Errors (over-long line, control byte, bad Content-Length) are
  // kInvalidArgument; the connection is then unusable.
  Result<size_t> feed(std::string_view bytes, bool* done);
  const Message& reply() const { return reply_; }
  // Forgets the finished reply so the parser can read the next one.
  void reset();

 private:
  enum class State { kHead, kArgs, kBody, kDone };
  Status take_line(std::string_view line);

  State state_ = State::kHead;
  std::string line_;
  Message reply_;
  size_t body_bytes_ = 0;
};

// Parses a decimal unsigned integer argument ("12"), rejecting signs, spaces inside,
// hex and overflow beyond `max_value`.
std::optional<uint64_t> parse_uint_arg(std::string_view text, uint64_t max_value);

// The transporter ports data nodes reported, from a `get status` reply: node id -> port,
// only for running data nodes that reported a port (data nodes and API nodes use it to
// find the data nodes' dynamic ports). kInvalidArgument for a reply that is not a
// successful `get status` reply, or a malformed port line.
Result<std::map<uint16_t, uint16_t>> reported_ports(const Message& status_reply);

}  // namespace duo::mgm
