#include "mgmd/protocol/mgm_protocol.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace duo::mgm {
namespace {

using Parsed = RequestParser::Parsed;

std::vector<Parsed> parse_all(std::string_view bytes, Status* status = nullptr) {
  RequestParser parser;
  std::vector<Parsed> out;
  Status s = parser.feed(bytes, &out);
  if (status != nullptr) {
    *status = std::move(s);
  } else {
    EXPECT_TRUE(s.ok()) << s.to_string();
  }
  return out;
}

TEST(RequestParser, ParsesCommandArgumentsAndEmptyLine) {
  auto out = parse_all("get nodeid\nnodetype: api\nnodeid: 0\nname:  my app \n\n");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].error);
  EXPECT_EQ(out[0].request.head, "get nodeid");
  ASSERT_EQ(out[0].request.args.size(), 3u);
  EXPECT_EQ(*out[0].request.find("nodetype"), "api");
  EXPECT_EQ(*out[0].request.find("nodeid"), "0");
  EXPECT_EQ(*out[0].request.find("name"), "my app");  // trimmed both sides
}

TEST(RequestParser, CommandAndNamesAreCaseInsensitiveValuesAreNot) {
  auto out = parse_all("GET Status\nNodeType: API\n\n");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].request.head, "get status");
  ASSERT_NE(out[0].request.find("nodetype"), nullptr);
  EXPECT_EQ(*out[0].request.find("nodetype"), "API");
}

TEST(RequestParser, AcceptsCrlfAndBlankLinesBetweenRequests) {
  auto out = parse_all("\r\n\nget version\r\n\r\n\n\nbye\n\n");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].request.head, "get version");
  EXPECT_EQ(out[1].request.head, "bye");
}

TEST(RequestParser, ByteAtATimeGivesTheSameResult) {
  const std::string bytes = "get nodeid\nnodetype: ndbd\nnodeid: 3\n\nshow\n\n";
  RequestParser parser;
  std::vector<Parsed> out;
  for (char c : bytes) ASSERT_TRUE(parser.feed(std::string_view(&c, 1), &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(*out[0].request.find("nodeid"), "3");
  EXPECT_EQ(out[1].request.head, "show");
  EXPECT_FALSE(parser.in_request());
}

TEST(RequestParser, InRequestWhileUnfinished) {
  RequestParser parser;
  std::vector<Parsed> out;
  ASSERT_TRUE(parser.feed("get sta", &out).ok());
  EXPECT_TRUE(parser.in_request());
  ASSERT_TRUE(parser.feed("tus\n", &out).ok());
  EXPECT_TRUE(parser.in_request());
  ASSERT_TRUE(parser.feed("\n", &out).ok());
  EXPECT_FALSE(parser.in_request());
  EXPECT_EQ(out.size(), 1u);
}

TEST(RequestParser, MalformedArgumentsAreRecoverableErrors) {
  auto out = parse_all(
      "get nodeid\nthis has no colon\nnodetype: api\n\n"
      "get nodeid\n: empty name\n\n"
      "get nodeid\nnodeid: 1\nNODEID: 2\n\n"
      "get version\n\n");
  ASSERT_EQ(out.size(), 4u);
  ASSERT_TRUE(out[0].error);
  EXPECT_NE(out[0].error->find("expected 'name: value'"), std::string::npos);
  ASSERT_TRUE(out[1].error);
  ASSERT_TRUE(out[2].error);
  EXPECT_NE(out[2].error->find("given twice"), std::string::npos);
  EXPECT_FALSE(out[3].error);  // the session carries on after each of them
}

TEST(RequestParser, LineLengthLimitIsExact) {
  const std::string ok_line(kRequestLineBytesMax, 'a');
  auto out = parse_all(ok_line + "\n\n");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].request.head.size(), kRequestLineBytesMax);

  // The '\r' of a CRLF counts towards the limit only as a stored byte.
  const std::string long_line(kRequestLineBytesMax + 1, 'a');
  Status status;
  out = parse_all(long_line + "\n\n", &status);
  EXPECT_TRUE(status.is(ErrorCode::kInvalidArgument));
  EXPECT_NE(status.message().find("line longer than 1024 bytes"), std::string::npos);
  EXPECT_TRUE(out.empty());
}

TEST(RequestParser, EndlessLineWithoutNewlineFailsWithoutBuffering) {
  RequestParser parser;
  std::vector<Parsed> out;
  const std::string chunk(4096, 'x');
  Status status = parser.feed(chunk, &out);
  EXPECT_FALSE(status.ok());
  // Once failed, the parser refuses everything: the session is closing.
  EXPECT_FALSE(parser.feed("get version\n\n", &out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(RequestParser, ControlAndHighBytesAreFatal) {
  for (unsigned char bad : {0x00, 0x01, 0x1b, 0x7f, 0x80, 0xff}) {
    std::string bytes = "get ver";
    bytes.push_back(static_cast<char>(bad));
    bytes += "sion\n\n";
    Status status;
    auto out = parse_all(bytes, &status);
    EXPECT_FALSE(status.ok()) << int{bad};
    EXPECT_NE(status.message().find("is not allowed"), std::string::npos);
    EXPECT_TRUE(out.empty());
  }
  Status status;
  parse_all("get\rversion\n\n", &status);  // a lone CR
  EXPECT_FALSE(status.ok());
}

TEST(RequestParser, RequestsBeforeAFatalErrorAreKept) {
  Status status;
  auto out = parse_all(std::string("get version\n\n\x01garbage"), &status);
  EXPECT_FALSE(status.ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].request.head, "get version");
}

TEST(RequestParser, ArgumentCountLimitIsExact) {
  std::string bytes = "get nodeid\n";
  for (size_t i = 0; i < kRequestArgsMax; ++i) bytes += "a" + std::to_string(i) + ": v\n";
  auto out = parse_all(bytes + "\n");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].request.args.size(), kRequestArgsMax);

  Status status;
  parse_all(bytes + "one: more\n\n", &status);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("argument lines"), std::string::npos);

  // Malformed argument lines count too, so garbage lines cannot go on forever.
  std::string junk = "get nodeid\n";
  for (size_t i = 0; i <= kRequestArgsMax; ++i) junk += "no colon here\n";
  parse_all(junk, &status);
  EXPECT_FALSE(status.ok());
}

TEST(RequestParser, RandomGarbageNeverCrashesAndFailsOrParses) {
  std::mt19937_64 random(42);
  for (int round = 0; round < 2000; ++round) {
    const size_t size = random() % 3000;
    std::string bytes(size, '\0');
    const bool printable = round % 2 == 0;
    for (char& c : bytes) {
      c = printable ? static_cast<char>(" \n:abc\r\t"[random() % 8]) : static_cast<char>(random());
    }
    RequestParser parser;
    std::vector<Parsed> out;
    Status status = parser.feed(bytes, &out);
    for (const Parsed& p : out) {
      EXPECT_LE(p.request.head.size(), kRequestLineBytesMax);
      EXPECT_LE(p.request.args.size(), kRequestArgsMax);
    }
    status.ignore_error();
  }
}

TEST(EncodeMessage, RoundTripsThroughTheParsers) {
  Message request;
  request.head = "get nodeid";
  request.add("nodetype", "api").add("nodeid", uint64_t{7});
  const std::string bytes = encode_message(request);
  EXPECT_EQ(bytes, "get nodeid\nnodetype: api\nnodeid: 7\n\n");
  auto out = parse_all(bytes);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].request.args, request.args);
}

TEST(EncodeMessage, NewlinesInValuesCannotForgeLines) {
  Message reply;
  reply.head = "x reply";
  reply.add("result", "Unknown command, 'a\nresult: Ok'");
  const std::string bytes = encode_message(reply);
  EXPECT_EQ(bytes, "x reply\nresult: Unknown command, 'a result: Ok'\n\n");
}

TEST(ReplyParser, ParsesHeaderArgumentsAndBody) {
  Message reply;
  reply.head = "get config reply";
  reply.add("result", "Ok").add("Content-Length", "999");  // replaced by the real length
  reply.body = "[ndbd]\nNodeId=1\n\n\n";                   // blank lines inside the body
  const std::string bytes = encode_message(reply) + "get version reply\nresult: Ok\n\n";

  ReplyParser parser;
  bool done = false;
  Result<size_t> used = parser.feed(bytes, &done);
  ASSERT_TRUE(used.ok());
  ASSERT_TRUE(done);
  EXPECT_EQ(parser.reply().head, "get config reply");
  EXPECT_EQ(parser.reply().body, reply.body);
  EXPECT_EQ(*parser.reply().find("Content-Length"), std::to_string(reply.body.size()));

  parser.reset();
  Result<size_t> rest = parser.feed(std::string_view(bytes).substr(*used), &done);
  ASSERT_TRUE(rest.ok());
  ASSERT_TRUE(done);
  EXPECT_EQ(parser.reply().head, "get version reply");
}

TEST(ReplyParser, ByteAtATimeAndBoundaryBodySizes) {
  for (size_t body_bytes :
       {size_t{0}, size_t{1}, size_t{127}, size_t{128}, size_t{255}, size_t{65536}}) {
    Message reply;
    reply.head = "get config reply";
    reply.add("result", "Ok");
    reply.body = std::string(body_bytes, 'q');
    const std::string bytes = encode_message(reply);
    ReplyParser parser;
    bool done = false;
    size_t fed = 0;
    while (!done && fed < bytes.size()) {
      const size_t step = body_bytes > 1000 ? 777 : 1;
      Result<size_t> used = parser.feed(std::string_view(bytes).substr(fed, step), &done);
      ASSERT_TRUE(used.ok());
      fed += *used;
    }
    ASSERT_TRUE(done) << body_bytes;
    EXPECT_EQ(fed, bytes.size());
    EXPECT_EQ(parser.reply().body.size(), body_bytes);
  }
}

TEST(ReplyParser, RejectsBadContentLengthAndControlBytes) {
  ReplyParser parser;
  bool done = false;
  EXPECT_FALSE(parser.feed("x reply\nContent-Length: -1\n\n", &done).ok());
  parser.reset();
  EXPECT_FALSE(parser.feed("x reply\nContent-Length: 99999999999\n\n", &done).ok());
  parser.reset();
  EXPECT_FALSE(parser.feed(std::string("x reply\nresult: \x01\n\n"), &done).ok());
  parser.reset();
  EXPECT_FALSE(parser.feed(std::string(kReplyLineBytesMax + 1, 'a'), &done).ok());
}

TEST(ParseUintArg, AcceptsOnlyPlainDecimalsInRange) {
  EXPECT_EQ(parse_uint_arg("0", 10), 0u);
  EXPECT_EQ(parse_uint_arg("10", 10), 10u);
  EXPECT_FALSE(parse_uint_arg("11", 10));
  EXPECT_FALSE(parse_uint_arg("", 10));
  EXPECT_FALSE(parse_uint_arg("-1", 10));
  EXPECT_FALSE(parse_uint_arg("+1", 10));
  EXPECT_FALSE(parse_uint_arg("1 ", 10));
  EXPECT_FALSE(parse_uint_arg("0x1", 10));
  EXPECT_FALSE(parse_uint_arg("99999999999999999999999", UINT64_MAX));
}

Message status_reply() {
  Message reply;
  reply.head = "get status reply";
  reply.add("result", "Ok");
  reply.add("nodes", "3");
  reply.add("node.1.type", "NDB");
  reply.add("node.1.status", "STARTED");
  reply.add("node.1.port", "40001");
  reply.add("node.2.type", "NDB");
  reply.add("node.2.status", "NO_CONTACT");
  reply.add("node.49.type", "MGM");
  return reply;
}

TEST(MgmProtocol, ReportedPorts) {
  Result<std::map<uint16_t, uint16_t>> ports = reported_ports(status_reply());
  ASSERT_TRUE(ports.ok()) << ports.status().message();
  EXPECT_EQ(*ports, (std::map<uint16_t, uint16_t>{{1, 40001}}));

  Message bad = status_reply();
  bad.add("node.x.port", "1");
  EXPECT_FALSE(reported_ports(bad).ok());
  Message zero = status_reply();
  zero.add("node.3.port", "0");
  EXPECT_FALSE(reported_ports(zero).ok());
  Message big = status_reply();
  big.add("node.3.port", "65536");
  EXPECT_FALSE(reported_ports(big).ok());
  Message failed;
  failed.head = "get status reply";
  failed.add("result", "Unknown command");
  EXPECT_FALSE(reported_ports(failed).ok());
  Message other;
  other.head = "node stop";
  EXPECT_FALSE(reported_ports(other).ok());
}

}  // namespace

}  // namespace duo::mgm
