// UnixSocketListener: the listening Unix-domain socket of duo_sqld (MySQL's --socket),
// where clients that name no host connect (`mysql -uroot` uses /run/mysqld/mysqld.sock,
// or whatever --socket says).
//
// Taking the path over, as mysqld does: the directory is created if missing; a file
// already there is removed only if nothing accepts on it (a socket left behind by a
// server that died), never when another server is listening — then open() fails and
// the caller serves TCP only. close() removes the socket file only while it is still
// the one this listener created (same inode), so a server that lost the path to a newer
// one never removes the newer one's socket.
//
// Thread-safety: open()/close() from one controlling thread; fd() is constant between
// them.
#pragma once

#include <sys/types.h>

#include <string>

#include "ndb-kernel/common/status.h"

namespace duo::sql::server {

class UnixSocketListener {
 public:
  UnixSocketListener() = default;
  ~UnixSocketListener() { close(); }
  UnixSocketListener(const UnixSocketListener&) = delete;
  UnixSocketListener& operator=(const UnixSocketListener&) = delete;

  // Binds and listens on `path`; an error says why the path cannot be used.
  Status open(const std::string& path, int backlog);
  // Stops listening and removes the socket file if it is still ours. Idempotent.
  void close();

  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
  ino_t inode_ = 0;
};

// True if a server accepts connections on the Unix socket at `path`.
bool unix_socket_in_use(const std::string& path);

}  // namespace duo::sql::server
