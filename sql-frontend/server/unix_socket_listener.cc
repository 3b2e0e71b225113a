// The Unix-domain listening socket; see unix_socket_listener.h.
#include "sql-frontend/server/unix_socket_listener.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace duo::sql::server {

namespace {

// sun_path holds 108 bytes with the terminating NUL on Linux.
bool fill_address(const std::string& path, sockaddr_un* address) {
  *address = sockaddr_un{};
  address->sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof address->sun_path) return false;
  std::memcpy(address->sun_path, path.data(), path.size());
  return true;
}

Status io_error(const std::string& what, int error) {
  return Status(ErrorCode::kIoError, what + ": " + std::strerror(error));
}

}  // namespace

bool unix_socket_in_use(const std::string& path) {
  sockaddr_un address;
  if (!fill_address(path, &address)) return false;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool accepted = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return accepted;
}

Status UnixSocketListener::open(const std::string& path, int backlog) {
  close();
  sockaddr_un address;
  if (!fill_address(path, &address)) {
    return Status(ErrorCode::kConfigError, "the path is empty or longer than " +
                                               std::to_string(sizeof address.sun_path - 1) +
                                               " bytes");
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec)
      return Status(ErrorCode::kIoError, "cannot create " + parent.string() + ": " + ec.message());
  }
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0) {
    if (!S_ISSOCK(existing.st_mode)) {
      return Status(ErrorCode::kIoError, "a file that is no socket is in the way");
    }
    if (unix_socket_in_use(path)) {
      return Status(ErrorCode::kIoError, "another server is listening on it");
    }
    ::unlink(path.c_str());  // left behind by a server that is gone
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return io_error("socket", errno);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    ::close(fd);
    return io_error("bind", error);
  }
  // Any local user may connect, as with mysqld's socket; the accounts decide the rest.
  ::chmod(path.c_str(), 0777);
  struct stat bound {};
  if (::listen(fd, backlog) != 0 || ::stat(path.c_str(), &bound) != 0) {
    const int error = errno;
    ::close(fd);
    ::unlink(path.c_str());
    return io_error("listen", error);
  }
  fd_ = fd;
  path_ = path;
  inode_ = bound.st_ino;
  return Status::OK();
}

void UnixSocketListener::close() {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  struct stat current {};
  if (::stat(path_.c_str(), &current) == 0 && current.st_ino == inode_) ::unlink(path_.c_str());
  path_.clear();
  inode_ = 0;
}

}  // namespace duo::sql::server
