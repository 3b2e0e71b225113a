// Helpers every DuoDB daemon and command-line tool shares: pid-file locking, detaching
// from the terminal, stop-signal handling, and splitting command-line arguments of the forms
// `--name=value`,
// `--name value` and `-c value`. Not thread-safe: call from main() before threads start.
#pragma once

#include <cstdint>
#include <string>

#include "ndb-kernel/common/status.h"

namespace duo {

// Opens and exclusively locks `path` (created if missing); the lock lives as long as the
// returned descriptor. `holder` names who holds it in the error ("another duo_mgmd uses
// this --configdir").
Result<int> lock_pid_file(const std::string& path, const std::string& holder);
// Replaces the locked pid file's contents with this process's pid.
void write_pid(int fd);
// Detaches from the terminal: forks (the parent exits 0), starts a new session, points
// stdin at /dev/null and stdout/stderr at `out_log`. Must run before any thread exists.
// False when fork fails.
bool daemonize(const std::string& out_log);

// A daemon's signal set-up: SIGTERM and SIGINT call `on_stop` (async-signal-safe code
// only), SIGPIPE is ignored (a peer that went away is an error return, not a death), and
// SIGHUP too unless the process stays in the foreground (its terminal may go away).
void install_stop_handler(void (*on_stop)(int), bool foreground);
// The same with a built-in handler that only records the request: stop_requested() is
// true from the first SIGTERM/SIGINT on. Safe to read from any thread.
void install_stop_flag(bool foreground);
bool stop_requested();

// Walks argv: for (ArgCursor args(argc, argv); args.next();) { args.name() ... }
class ArgCursor {
 public:
  ArgCursor(int argc, char** argv) : argc_(argc), argv_(argv) {}
  // Moves to the next argument; false when there is none.
  bool next();
  // The argument without an inline "=value" ("--config-file", "-c", "show").
  const std::string& name() const { return name_; }
  // The argument's value: the inline "=value", else the next argv element (consumed).
  // False when there is none.
  bool take_value(std::string* value);
  // The value as a non-negative decimal integer; false when missing or not one.
  bool take_count(int64_t* value);

 private:
  int argc_;
  char** argv_;
  int index_ = 0;
  std::string name_;
  std::string inline_value_;
  bool has_inline_value_ = false;
};

}  // namespace duo
