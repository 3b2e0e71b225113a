// duo_mgm: the DuoDB management client (ndb_mgm). Interactive with a `duo_mgm> `
// prompt on stdin, or one command with -e/--execute. Commands: mgm_commands.h / HELP.
//
// Exit codes (for scripts): 0 success; 1 the command failed (e.g. "node 1 is not
// connected"); 2 the management server could not be reached; 64 usage error.
//
// Thread-safety: single-threaded program.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "mgmd/client/mgm_commands.h"
#include "mgmd/client/mgm_connection.h"
#include "ndb-kernel/common/process.h"

namespace duo::mgm {
namespace {

constexpr int kExitCommandFailed = 1;
constexpr int kExitUnreachable = 2;
constexpr int kExitUsage = 64;

void print_usage() {
  std::printf(
      "Usage: duo_mgm [options] [connect string]\n"
      "  -c, --ndb-connectstring=HOST[:PORT]  management server (default localhost:1186)\n"
      "  -e, --execute=COMMAND                run one command and exit\n"
      "  -t, --timeout-ms=N                   connect and reply timeout (default 10000)\n"
      "  -V, --version, -h, --help\n");
}

int run(int argc, char** argv) {
  std::string connect_string = "localhost:1186";
  std::string execute;
  bool has_execute = false;
  uint64_t timeout_ms = 10000;
  for (ArgCursor args(argc, argv); args.next();) {
    const std::string arg = args.name();
    std::string value;
    auto take_value = [&]() { return args.take_value(&value); };
    if (arg == "-h" || arg == "--help") {
      print_usage();
      return 0;
    } else if (arg == "-V" || arg == "--version") {
      std::printf("duo_mgm DuoDB\n");
      return 0;
    } else if (arg == "-c" || arg == "--ndb-connectstring" || arg == "--connect-string") {
      if (!take_value()) return kExitUsage;
      connect_string = value;
    } else if (arg == "-e" || arg == "--execute") {
      if (!take_value()) return kExitUsage;
      execute = value;
      has_execute = true;
    } else if (arg == "-t" || arg == "--timeout-ms") {
      auto n = take_value() ? parse_uint_arg(value, 3600 * 1000) : std::nullopt;
      if (!n || *n == 0) {
        std::fprintf(stderr, "duo_mgm: bad --timeout-ms\n");
        return kExitUsage;
      }
      timeout_ms = *n;
    } else if (!arg.empty() && arg[0] != '-') {
      connect_string = arg;  // ndb_mgm takes the connect string as a plain argument too
    } else {
      std::fprintf(stderr, "duo_mgm: unknown option '%s' (see --help)\n", arg.c_str());
      return kExitUsage;
    }
  }
  Result<ConnectString> target = parse_connect_string(connect_string);
  if (!target.ok()) {
    std::fprintf(stderr, "duo_mgm: %s\n", target.status().message().c_str());
    return kExitUsage;
  }
  CommandRunner runner(*target, timeout_ms);
  if (Status connected = runner.connect(); !connected.ok()) {
    std::fprintf(stderr, "Unable to connect with connect string: nodeid=0,%s\n%s\n",
                 runner.target_text().c_str(), connected.message().c_str());
    return kExitUnreachable;
  }

  // Returns the exit code of one command line.
  auto execute_line = [&](const std::string& line, bool* quit) {
    Result<Command> command = parse_command(line);
    if (!command.ok()) {
      std::printf("%s\n", command.status().message().c_str());
      return kExitCommandFailed;
    }
    if (command->kind == Command::Kind::kQuit) {
      *quit = true;
      return 0;
    }
    std::string out;
    Status status = runner.run(*command, &out);
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
    if (status.ok()) return 0;
    return status.is(ErrorCode::kIoError) ? kExitUnreachable : kExitCommandFailed;
  };

  bool quit = false;
  if (has_execute) return execute_line(execute, &quit);

  std::printf("-- DuoDB -- Management Client --\n");
  int last = 0;
  std::string line;
  while (!quit) {
    std::printf("duo_mgm> ");
    std::fflush(stdout);
    if (!std::getline(std::cin, line)) {
      std::printf("\n");
      break;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    last = execute_line(line, &quit);
  }
  return last == kExitUnreachable ? kExitUnreachable : 0;
}

}  // namespace
}  // namespace duo::mgm

int main(int argc, char** argv) {
  return duo::mgm::run(argc, argv);
}
