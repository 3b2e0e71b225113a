#include "ndb-kernel/fs/fs_messages.h"

#include <utility>

namespace duo::fs {

namespace {

using protocol::kFsAllocConf;
using protocol::kFsAllocReq;
using protocol::kFsCloseReq;
using protocol::kFsListConf;
using protocol::kFsListReq;
using protocol::kFsOpenConf;
using protocol::kFsOpenReq;
using protocol::kFsReadConf;
using protocol::kFsReadReq;
using protocol::kFsRef;
using protocol::kFsRemoveReq;
using protocol::kFsSyncReq;
using protocol::kFsWriteConf;
using protocol::kFsWriteReq;

void set_u64(Signal* signal, size_t index, uint64_t value) {
  signal->set_word(index, static_cast<uint32_t>(value));
  signal->set_word(index + 1, static_cast<uint32_t>(value >> 32));
}

uint64_t get_u64(const Signal& signal, size_t index) {
  return uint64_t{signal.word(index)} | (uint64_t{signal.word(index + 1)} << 32);
}

Status malformed(const Signal& signal, std::string_view why) {
  return Status(ErrorCode::kInvalidArgument,
                "malformed " + signal.describe() + ": " + std::string(why));
}

// A signal of the wrong id handed to from_signal is a caller bug, but one that must not
// be mistaken for a valid message.
Status check_id(const Signal& signal, kernel::SignalId id) {
  if (signal.id() == id) return Status::OK();
  return malformed(signal, "expected " + kernel::signal_name(id));
}

std::string section_text(const Signal& signal) {
  return std::string(signal.section().begin(), signal.section().end());
}

Bytes text_section(std::string_view text) {
  return Bytes(text.begin(), text.end());
}

}  // namespace

Status check_fs_path(std::string_view path, bool allow_root) {
  if (path.empty()) {
    if (allow_root) return Status::OK();
    return Status(ErrorCode::kInvalidArgument, "empty file system path");
  }
  const auto refuse = [&](std::string_view why) {
    // The path may hold a NUL or be long: quote a bounded, printable prefix.
    std::string shown;
    for (char c : path.substr(0, 80)) shown.push_back(c == '\0' ? '?' : c);
    return Status(ErrorCode::kInvalidArgument,
                  "bad file system path '" + shown + "': " + std::string(why));
  };
  if (path.size() > kFsPathBytesMax) return refuse("longer than 1024 bytes");
  if (path.find('\0') != std::string_view::npos) return refuse("contains a NUL byte");
  if (path.front() == '/') return refuse("absolute (paths are relative to the node's directory)");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view component = path.substr(start, end - start);
    if (component.empty()) return refuse("empty component");
    if (component == "." || component == "..") return refuse("'.' or '..' component");
    start = end + 1;
  }
  return Status::OK();
}

// ---- FS_OPENREQ / FS_OPENCONF ----

Signal FsOpenReq::to_signal() && {
  Signal signal(kFsOpenReq, {user_ref, flags});
  signal.set_section(text_section(path));
  return signal;
}

Result<FsOpenReq> FsOpenReq::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsOpenReq));
  FsOpenReq req;
  req.user_ref = signal.word(0);
  req.flags = signal.word(1);
  if ((req.flags & ~kFsOpenFlagsAll) != 0) return malformed(signal, "unknown open flags");
  if ((req.flags & (kFsRead | kFsWrite)) == 0) {
    return malformed(signal, "open needs kFsRead or kFsWrite");
  }
  if ((req.flags & kFsTruncate) != 0 && (req.flags & kFsWrite) == 0) {
    return malformed(signal, "kFsTruncate needs kFsWrite");
  }
  req.path = section_text(signal);
  DUO_RETURN_IF_ERROR(check_fs_path(req.path, /*allow_root=*/false));
  return req;
}

Signal FsOpenConf::to_signal() && {
  Signal signal(kFsOpenConf, {user_ref, handle});
  set_u64(&signal, 2, size_bytes);
  signal.set_word(4, static_cast<uint32_t>(page_io));
  return signal;
}

Result<FsOpenConf> FsOpenConf::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsOpenConf));
  if (signal.word(4) > static_cast<uint32_t>(FsPageIoPath::kDirectAio)) {
    return malformed(signal, "unknown page IO path");
  }
  return FsOpenConf{signal.word(0), signal.word(1), get_u64(signal, 2),
                    static_cast<FsPageIoPath>(signal.word(4))};
}

const char* fs_page_io_path_name(FsPageIoPath path) {
  switch (path) {
    case FsPageIoPath::kBuffered: return "buffered IO on the IO threads";
    case FsPageIoPath::kDirectThreads: return "O_DIRECT on the IO threads";
    case FsPageIoPath::kDirectAio: return "O_DIRECT with libaio";
  }
  return "unknown";
}

// ---- FS_PAGE_READREQ / FS_PAGE_WRITEREQ / FS_PAGE_CONF ----

Signal FsPageReq::to_signal() && {
  Signal signal(id, {user_ref, handle});
  set_u64(&signal, 2, offset);
  set_u64(&signal, 4, reinterpret_cast<uintptr_t>(frame));
  signal.set_word(6, length);
  signal.set_word(7, flags);
  return signal;
}

Result<FsPageReq> FsPageReq::from_signal(Signal& signal) {
  if (signal.id() != protocol::kFsPageReadReq && signal.id() != protocol::kFsPageWriteReq) {
    return malformed(signal, "expected FS_PAGE_READREQ or FS_PAGE_WRITEREQ");
  }
  FsPageReq req;
  req.id = signal.id();
  req.user_ref = signal.word(0);
  req.handle = signal.word(1);
  req.offset = get_u64(signal, 2);
  const uint64_t address = get_u64(signal, 4);
  req.frame = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(address));
  req.length = signal.word(6);
  req.flags = signal.word(7);
  if (address == 0 || address % kFsPageAlign != 0) {
    return malformed(signal, "page frame address not a multiple of 4096");
  }
  if (req.offset % kFsPageAlign != 0) return malformed(signal, "page offset not a multiple of 4096");
  if (req.length == 0 || req.length > kFsPageIoBytesMax || req.length % kFsPageAlign != 0) {
    return malformed(signal, "page length not a multiple of 4096 within 256 KiB");
  }
  if ((req.flags & ~kFsSyncAfter) != 0) return malformed(signal, "unknown page IO flags");
  if (!req.is_write() && req.flags != 0) return malformed(signal, "kFsSyncAfter on a page read");
  return req;
}

Signal FsPageConf::to_signal() && {
  return Signal(protocol::kFsPageConf, {user_ref, bytes});
}

Result<FsPageConf> FsPageConf::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, protocol::kFsPageConf));
  return FsPageConf{signal.word(0), signal.word(1)};
}

// ---- FS_REF ----

FsRef FsRef::of(uint32_t user_ref, const Status& status, uint32_t os_errno) {
  return FsRef{user_ref, status.ok() ? ErrorCode::kInternal : status.code(), os_errno,
               status.ok() ? "FS_REF built from an OK status" : status.message()};
}

Signal FsRef::to_signal() && {
  Signal signal(kFsRef, {user_ref, static_cast<uint32_t>(error), os_errno});
  signal.set_section(text_section(message));
  return signal;
}

Result<FsRef> FsRef::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsRef));
  const uint32_t code = signal.word(1);
  if (code == 0 || code > static_cast<uint32_t>(ErrorCode::kInternal)) {
    return malformed(signal, "bad error code");
  }
  return FsRef{signal.word(0), static_cast<ErrorCode>(code), signal.word(2), section_text(signal)};
}

// ---- FS_WRITEREQ / FS_WRITECONF ----

Signal FsWriteReq::to_signal() && {
  Signal signal(kFsWriteReq, {user_ref, handle});
  set_u64(&signal, 2, offset);
  signal.set_word(4, flags);
  signal.set_section(std::move(data));
  return signal;
}

Result<FsWriteReq> FsWriteReq::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsWriteReq));
  FsWriteReq req;
  req.user_ref = signal.word(0);
  req.handle = signal.word(1);
  req.offset = get_u64(signal, 2);
  req.flags = signal.word(4);
  if ((req.flags & ~kFsSyncAfter) != 0) return malformed(signal, "unknown write flags");
  if (signal.section().empty()) return malformed(signal, "empty write");
  if (req.offset + signal.section().size() < req.offset) {
    return malformed(signal, "write past the largest offset");
  }
  req.data = signal.take_section();
  return req;
}

Signal FsWriteConf::to_signal() && {
  return Signal(kFsWriteConf, {user_ref, bytes_written});
}

Result<FsWriteConf> FsWriteConf::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsWriteConf));
  return FsWriteConf{signal.word(0), signal.word(1)};
}

// ---- FS_READREQ / FS_READCONF ----

Signal FsReadReq::to_signal() && {
  Signal signal(kFsReadReq, {user_ref, handle});
  set_u64(&signal, 2, offset);
  signal.set_word(4, length);
  return signal;
}

Result<FsReadReq> FsReadReq::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsReadReq));
  FsReadReq req{signal.word(0), signal.word(1), get_u64(signal, 2), signal.word(4)};
  if (req.length == 0 || req.length > kFsReadBytesMax) {
    return malformed(signal, "read length must be 1..61440 bytes");
  }
  return req;
}

Signal FsReadConf::to_signal() && {
  Signal signal(kFsReadConf, {user_ref, static_cast<uint32_t>(data.size())});
  signal.set_section(std::move(data));
  return signal;
}

Result<FsReadConf> FsReadConf::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsReadConf));
  if (signal.word(1) != signal.section().size()) {
    return malformed(signal, "byte count does not match the section");
  }
  return FsReadConf{signal.word(0), signal.take_section()};
}

// ---- FS_SYNCREQ / FS_CLOSEREQ ----

Signal FsSyncReq::to_signal() && {
  return Signal(kFsSyncReq, {user_ref, handle});
}

Result<FsSyncReq> FsSyncReq::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsSyncReq));
  return FsSyncReq{signal.word(0), signal.word(1)};
}

Signal FsCloseReq::to_signal() && {
  return Signal(kFsCloseReq, {user_ref, handle, flags});
}

Result<FsCloseReq> FsCloseReq::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsCloseReq));
  FsCloseReq req{signal.word(0), signal.word(1), signal.word(2)};
  if ((req.flags & ~kFsRemoveAfter) != 0) return malformed(signal, "unknown close flags");
  return req;
}

// ---- FS_REMOVEREQ ----

Signal FsRemoveReq::to_signal() && {
  Signal signal(kFsRemoveReq, {user_ref, flags});
  signal.set_section(text_section(path));
  return signal;
}

Result<FsRemoveReq> FsRemoveReq::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsRemoveReq));
  FsRemoveReq req{signal.word(0), signal.word(1), section_text(signal)};
  if ((req.flags & ~kFsRemoveFlagsAll) != 0 ||
      (req.flags & (kFsInDataFiles | kFsInUndoFiles)) == (kFsInDataFiles | kFsInUndoFiles)) {
    return malformed(signal, "unknown remove flags");
  }
  DUO_RETURN_IF_ERROR(check_fs_path(req.path, /*allow_root=*/false));
  return req;
}

// ---- FS_ALLOCREQ / FS_ALLOCCONF ----

Signal FsAllocReq::to_signal() && {
  Signal signal(kFsAllocReq, {user_ref, static_cast<uint32_t>(size_bytes),
                              static_cast<uint32_t>(size_bytes >> 32),
                              static_cast<uint32_t>(base)});
  signal.set_section(text_section(path));
  return signal;
}

Result<FsAllocReq> FsAllocReq::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsAllocReq));
  FsAllocReq req{signal.word(0), signal.word(1) | (uint64_t{signal.word(2)} << 32),
                 section_text(signal), static_cast<FsBase>(signal.word(3))};
  if (signal.word(3) > static_cast<uint32_t>(FsBase::kUndoFiles)) {
    return malformed(signal, "unknown base directory");
  }
  DUO_RETURN_IF_ERROR(check_fs_path(req.path, /*allow_root=*/false));
  return req;
}

Signal FsAllocConf::to_signal() && {
  return Signal(kFsAllocConf, {user_ref, static_cast<uint32_t>(size_bytes),
                               static_cast<uint32_t>(size_bytes >> 32)});
}

Result<FsAllocConf> FsAllocConf::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsAllocConf));
  return FsAllocConf{signal.word(0), signal.word(1) | (uint64_t{signal.word(2)} << 32)};
}

// ---- FS_LISTREQ / FS_LISTCONF ----

Signal FsListReq::to_signal() && {
  Signal signal(kFsListReq, {user_ref});
  signal.set_section(text_section(path));
  return signal;
}

Result<FsListReq> FsListReq::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsListReq));
  FsListReq req{signal.word(0), section_text(signal)};
  DUO_RETURN_IF_ERROR(check_fs_path(req.path, /*allow_root=*/true));
  return req;
}

size_t FsListConf::encoded_size(const std::vector<std::string>& names) {
  size_t bytes = 0;
  for (const std::string& name : names) bytes += 2 + name.size();
  return bytes;
}

Signal FsListConf::to_signal() && {
  Signal signal(kFsListConf, {user_ref, static_cast<uint32_t>(names.size())});
  Bytes& out = signal.mutable_section();
  out.reserve(encoded_size(names));
  for (const std::string& name : names) {
    // Names are path components (at most kFsPathBytesMax bytes), so u16 lengths suffice.
    out.push_back(static_cast<uint8_t>(name.size()));
    out.push_back(static_cast<uint8_t>(name.size() >> 8));
    out.insert(out.end(), name.begin(), name.end());
  }
  return signal;
}

Result<FsListConf> FsListConf::from_signal(Signal& signal) {
  DUO_RETURN_IF_ERROR(check_id(signal, kFsListConf));
  FsListConf conf;
  conf.user_ref = signal.word(0);
  const uint32_t count = signal.word(1);
  const Bytes& in = signal.section();
  size_t at = 0;
  for (uint32_t i = 0; i < count; ++i) {
    if (in.size() - at < 2) return malformed(signal, "truncated name length");
    const size_t length = size_t{in[at]} | (size_t{in[at + 1]} << 8);
    at += 2;
    if (in.size() - at < length) return malformed(signal, "truncated name");
    conf.names.emplace_back(in.begin() + static_cast<ptrdiff_t>(at),
                            in.begin() + static_cast<ptrdiff_t>(at + length));
    at += length;
  }
  if (at != in.size()) return malformed(signal, "bytes after the last name");
  return conf;
}

Signal fs_done_signal(kernel::SignalId id, uint32_t user_ref) {
  return Signal(id, {user_ref});
}

}  // namespace duo::fs
