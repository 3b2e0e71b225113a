// The file system block's signals as typed messages, and the one contract that both
// implementations keep: the real FileSystemBlock (fs/file_system_block.h, IO threads
// over POSIX files) and the simulated SimFileSystem (sim/sim_file_system.h, a SimDisk in
// memory). Kernel blocks may not touch files (runtime/kernel_tidy.py), so every file
// operation is a request to the node's file system block at
// {node, protocol::kFileSystemBlock, 0}, answered to the request's sender — NDB's NDBFS.
//
// Contract (both implementations; fs/testing/fs_contract.h tests it against each):
//   - Every request gets exactly one answer: its CONF, or FS_REF. Every answer echoes
//     the request's word 0 (user_ref), so a requester can match answers to requests.
//   - Paths are relative to the node's file system directory and use '/' between
//     components. A leading '/', an empty component ("a//b", "a/", ""), "." or "..",
//     a NUL byte or more than kFsPathBytesMax bytes is refused with kInvalidArgument
//     (errno 0). Only FS_LISTREQ accepts "" (the file system directory itself).
//   - Requests on one handle execute in the order they were received and are answered
//     in that order (a write then a sync is never reordered); requests on different
//     handles, and path requests (open, remove, list), may run in parallel. A request
//     refused at admission (kTemporary, kInvalidArgument) is answered at once and may
//     overtake the answers of earlier requests still executing.
//   - A handle is a small non-zero integer, valid from its FS_OPENCONF until its
//     FS_CLOSEREQ is received; any block of the node may use it. A request naming a
//     handle that is not open is refused with kInvalidArgument. Handles die with the
//     node: after a restart no old handle is open.
//   - At most open_files_max files are open at once (default kFsOpenFilesDefault); an
//     FS_OPENREQ beyond it is refused with kTemporary (close something and retry).
//   - OS failures are kIoError with the errno in FS_REF w2, except a missing file or
//     parent directory opened without kFsCreate, which is kNotFound (ENOENT). Opening a
//     directory as a file is kIoError (EISDIR); writing on a handle opened without
//     kFsWrite, or reading on one opened without kFsRead, is kIoError (EBADF); a full
//     disk is kIoError (ENOSPC).
//   - Durability: data is durable once an FS_SYNCREQ, or an FS_WRITEREQ with
//     kFsSyncAfter, on its handle is answered; data written since may be lost or torn
//     (a prefix of its 512-byte sectors kept) by a crash. Creating a file or directory
//     and removing one are durable when answered.
//   - Page IO (FS_PAGE_READREQ / FS_PAGE_WRITEREQ, for the page cache): the request
//     names memory of the requester's process (a page-cache frame) by address; the
//     bytes go straight between the file and that memory, which the requester must not
//     touch (nor free) until the answer. Offset, length and address are multiples of
//     kFsPageAlign (O_DIRECT's rule). Page requests are NOT ordered with each other or
//     with the handle's other requests: many run at once on one file, answered as they
//     complete (the requester keeps at most one in flight per page). An FS_SYNCREQ
//     covers the page writes answered before it was sent; an FS_CLOSEREQ waits until
//     the handle's page requests are answered. A handle opened with kFsDirectIo uses
//     O_DIRECT and libaio where the file system and kernel allow, else the IO threads
//     (FS_OPENCONF w4 says which: FsPageIoPath); the answers are the same either way.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/runtime/signal.h"

namespace duo::fs {

using kernel::Signal;
using Bytes = std::vector<uint8_t>;

// FS_OPENREQ flags. At least one of kFsRead / kFsWrite.
inline constexpr uint32_t kFsRead = 1;
inline constexpr uint32_t kFsWrite = 2;
inline constexpr uint32_t kFsCreate = 4;    // create the file (and missing parents) if absent
inline constexpr uint32_t kFsTruncate = 8;  // with kFsWrite: cut the file to 0 bytes
inline constexpr uint32_t kFsDirectIo = 16;  // page IO: O_DIRECT (+ libaio) when allowed
inline constexpr uint32_t kFsOpenFlagsAll =
    kFsRead | kFsWrite | kFsCreate | kFsTruncate | kFsDirectIo;
// FS_WRITEREQ flags.
inline constexpr uint32_t kFsSyncAfter = 1;  // make the file durable before answering
// FS_CLOSEREQ flags.
inline constexpr uint32_t kFsRemoveAfter = 1;  // remove the file once closed
// FS_REMOVEREQ flags.
inline constexpr uint32_t kFsRecursive = 1;  // remove a directory and everything in it
// The path is in the disk-data files' directory (FsBase below) instead.
inline constexpr uint32_t kFsInDataFiles = 2;
inline constexpr uint32_t kFsInUndoFiles = 4;
inline constexpr uint32_t kFsRemoveFlagsAll = kFsRecursive | kFsInDataFiles | kFsInUndoFiles;
// Where a disk-data file's path is relative to (NDB's FileSystemPathDataFiles /
// FileSystemPathUndoFiles, both defaulting to FileSystemPathDD, which defaults to the
// node's file system directory). The simulated file system has one directory for all.
enum class FsBase : uint32_t { kNode = 0, kDataFiles = 1, kUndoFiles = 2 };

// Limits. A write carries its bytes in the section (at most kSectionBytesMax); a read
// answer carries them too, and 60 KiB leaves the section headroom and keeps reads a
// whole number of 4 KiB pages.
inline constexpr size_t kFsWriteBytesMax = kernel::kSectionBytesMax;
inline constexpr uint32_t kFsReadBytesMax = 60 * 1024;
inline constexpr size_t kFsPathBytesMax = 1024;
inline constexpr uint32_t kFsOpenFilesDefault = 1024;
// The sector of the crash model: a torn write keeps a prefix of its sectors.
inline constexpr uint64_t kFsSectorBytes = 512;
// Page IO: alignment of offset, length and memory (O_DIRECT), and the largest request
// (a few pages of read-ahead at once).
inline constexpr uint64_t kFsPageAlign = 4096;
inline constexpr uint32_t kFsPageIoBytesMax = 256 * 1024;

// How a handle does page IO (FS_OPENCONF w4).
enum class FsPageIoPath : uint32_t {
  kBuffered = 0,       // the IO threads, through the OS page cache (O_DIRECT refused or off)
  kDirectThreads = 1,  // O_DIRECT on the IO threads (libaio unavailable or off)
  kDirectAio = 2,      // O_DIRECT with libaio (io_submit / io_getevents)
};
const char* fs_page_io_path_name(FsPageIoPath path);

// OK if `path` is a valid relative path (see the contract above); `allow_root` also
// accepts "" (the file system directory itself, for FS_LISTREQ).
Status check_fs_path(std::string_view path, bool allow_root);

// Word 0 of every FS request and answer.
inline uint32_t fs_user_ref(const Signal& signal) {
  return signal.word(0);
}

// FS_OPENREQ: w0 user_ref, w1 flags (kFs{Read,Write,Create,Truncate}); section = path.
// → FS_OPENCONF, or FS_REF (kNotFound, kIoError, kTemporary: too many open files).
struct FsOpenReq {
  uint32_t user_ref = 0;
  uint32_t flags = 0;
  std::string path;

  Signal to_signal() &&;
  // Refuses (kInvalidArgument) unknown flags, neither kFsRead nor kFsWrite, kFsTruncate
  // without kFsWrite, and a bad path.
  static Result<FsOpenReq> from_signal(Signal& signal);
};

// FS_OPENCONF: w0 user_ref, w1 handle, w2-3 file size in bytes (low word first), w4 the
// handle's FsPageIoPath (kBuffered when opened without kFsDirectIo).
struct FsOpenConf {
  uint32_t user_ref = 0;
  uint32_t handle = 0;
  uint64_t size_bytes = 0;
  FsPageIoPath page_io = FsPageIoPath::kBuffered;

  Signal to_signal() &&;
  static Result<FsOpenConf> from_signal(Signal& signal);
};

// FS_REF: w0 user_ref, w1 ErrorCode, w2 errno (0 if no OS error); section = message
// naming the path and the OS error text.
struct FsRef {
  uint32_t user_ref = 0;
  ErrorCode error = ErrorCode::kInternal;
  uint32_t os_errno = 0;
  std::string message;

  // The FS_REF answering `user_ref` with `status` (which must be an error).
  static FsRef of(uint32_t user_ref, const Status& status, uint32_t os_errno = 0);
  Status to_status() const { return Status(error, message); }
  Signal to_signal() &&;
  static Result<FsRef> from_signal(Signal& signal);
};

// FS_WRITEREQ: w0 user_ref, w1 handle, w2-3 offset, w4 flags (kFsSyncAfter); section =
// the bytes (1 .. kFsWriteBytesMax). → FS_WRITECONF.
struct FsWriteReq {
  uint32_t user_ref = 0;
  uint32_t handle = 0;
  uint64_t offset = 0;
  uint32_t flags = 0;
  Bytes data;

  Signal to_signal() &&;
  static Result<FsWriteReq> from_signal(Signal& signal);
};

// FS_WRITECONF: w0 user_ref, w1 bytes written (always all of them).
struct FsWriteConf {
  uint32_t user_ref = 0;
  uint32_t bytes_written = 0;

  Signal to_signal() &&;
  static Result<FsWriteConf> from_signal(Signal& signal);
};

// FS_READREQ: w0 user_ref, w1 handle, w2-3 offset, w4 length (1 .. kFsReadBytesMax).
// → FS_READCONF.
struct FsReadReq {
  uint32_t user_ref = 0;
  uint32_t handle = 0;
  uint64_t offset = 0;
  uint32_t length = 0;

  Signal to_signal() &&;
  static Result<FsReadReq> from_signal(Signal& signal);
};

// FS_READCONF: w0 user_ref, w1 bytes read (fewer than asked only at end of file; 0 at or
// past it); section = the bytes.
struct FsReadConf {
  uint32_t user_ref = 0;
  Bytes data;

  Signal to_signal() &&;
  static Result<FsReadConf> from_signal(Signal& signal);
};

// FS_SYNCREQ: w0 user_ref, w1 handle. → FS_SYNCCONF (w0 user_ref).
struct FsSyncReq {
  uint32_t user_ref = 0;
  uint32_t handle = 0;

  Signal to_signal() &&;
  static Result<FsSyncReq> from_signal(Signal& signal);
};

// FS_CLOSEREQ: w0 user_ref, w1 handle, w2 flags (kFsRemoveAfter). → FS_CLOSECONF (w0
// user_ref). The handle is invalid from this request on, whatever its answer.
struct FsCloseReq {
  uint32_t user_ref = 0;
  uint32_t handle = 0;
  uint32_t flags = 0;

  Signal to_signal() &&;
  static Result<FsCloseReq> from_signal(Signal& signal);
};

// FS_REMOVEREQ: w0 user_ref, w1 flags (kFsRecursive); section = path of a file or a
// directory (without kFsRecursive a directory must be empty: else kIoError ENOTEMPTY).
// → FS_REMOVECONF (w0 user_ref). Removing a missing path succeeds (idempotent).
struct FsRemoveReq {
  uint32_t user_ref = 0;
  uint32_t flags = 0;
  std::string path;

  Signal to_signal() &&;
  static Result<FsRemoveReq> from_signal(Signal& signal);
};

// FS_LISTREQ: w0 user_ref; section = directory path ("" = the file system directory).
// → FS_LISTCONF. A missing directory lists as empty; a listing that does not fit one
// section (kSectionBytesMax) is refused with kNotSupported.
struct FsListReq {
  uint32_t user_ref = 0;
  std::string path;

  Signal to_signal() &&;
  static Result<FsListReq> from_signal(Signal& signal);
};

// FS_LISTCONF: w0 user_ref, w1 count; section = the names sorted ascending (bytewise),
// each a u16 length (little-endian) and its bytes. Directories end in '/'.
struct FsListConf {
  uint32_t user_ref = 0;
  std::vector<std::string> names;

  // Section bytes the names take, to check against kSectionBytesMax before sending.
  static size_t encoded_size(const std::vector<std::string>& names);
  Signal to_signal() &&;
  static Result<FsListConf> from_signal(Signal& signal);
};

// FS_PAGE_READREQ / FS_PAGE_WRITEREQ: w0 user_ref, w1 handle, w2-3 file offset, w4-5
// the frame's address in the requester's process, w6 length in bytes, w7 flags
// (kFsSyncAfter, writes only). Offset, address and length are multiples of
// kFsPageAlign; length is 1 .. kFsPageIoBytesMax. → FS_PAGE_CONF, or FS_REF.
struct FsPageReq {
  kernel::SignalId id = protocol::kFsPageReadReq;  // or kFsPageWriteReq
  uint32_t user_ref = 0;
  uint32_t handle = 0;
  uint64_t offset = 0;
  uint8_t* frame = nullptr;
  uint32_t length = 0;
  uint32_t flags = 0;

  bool is_write() const { return id == protocol::kFsPageWriteReq; }
  Signal to_signal() &&;
  // Refuses (kInvalidArgument) misaligned offset, address or length, a length out of
  // range, unknown flags and kFsSyncAfter on a read.
  static Result<FsPageReq> from_signal(Signal& signal);
};

// FS_PAGE_CONF: w0 user_ref, w1 bytes transferred. A read past the end of the file
// zero-fills the rest of the frame and answers the bytes that came from the file.
struct FsPageConf {
  uint32_t user_ref = 0;
  uint32_t bytes = 0;

  Signal to_signal() &&;
  static Result<FsPageConf> from_signal(Signal& signal);
};

// FS_ALLOCREQ: w0 user_ref, w1-2 size in bytes (low word first), w3 FsBase; section = path of a
// file that must not exist yet. Creates it (and missing parents), allocates `size` bytes
// for real (posix_fallocate: zero-filled, the blocks reserved, so a full disk fails now
// and not at a later write), syncs it and its directory, closes it. → FS_ALLOCCONF (w0
// user_ref, w1-2 size). An existing path is kIoError EEXIST; a full disk kIoError ENOSPC;
// on any failure nothing is left behind (the partial file is removed). Disk-data files
// (undo and data files) are made this way.
struct FsAllocReq {
  uint32_t user_ref = 0;
  uint64_t size_bytes = 0;
  std::string path;
  FsBase base = FsBase::kNode;  // w3

  Signal to_signal() &&;
  static Result<FsAllocReq> from_signal(Signal& signal);
};

struct FsAllocConf {
  uint32_t user_ref = 0;
  uint64_t size_bytes = 0;

  Signal to_signal() &&;
  static Result<FsAllocConf> from_signal(Signal& signal);
};

// FS_SYNCCONF / FS_CLOSECONF / FS_REMOVECONF: w0 user_ref is the whole payload.
Signal fs_done_signal(kernel::SignalId id, uint32_t user_ref);

}  // namespace duo::fs
