// Disk-data schema objects as the dictionary keeps and distributes them (NDB's
// filegroups and files): a logfile group with its undo files, a tablespace with its data
// files. Each filegroup has an id and a version like a table; each file has an id
// unique in the cluster. Also the messages of the filegroup schema transactions and
// their byte codecs (docs/formats/kernel-protocol.md "Disk-data objects").
//
// Decoders take untrusted bytes: malformed input is kInvalidArgument, never a crash.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/protocol/wire_codec.h"
#include "ndb-kernel/runtime/signal.h"

namespace duo::protocol {

enum class FilegroupKind : uint8_t { kLogfileGroup = 1, kTablespace = 2 };
enum class DiskFileKind : uint8_t { kUndoFile = 1, kDataFile = 2 };

struct DiskFileDef {
  uint32_t file_id = 0;
  DiskFileKind kind = DiskFileKind::kDataFile;
  std::string name;  // as given: relative to the node's file system directory
  uint64_t size_bytes = 0;
};

struct FilegroupDef {
  uint32_t id = 0;
  uint32_t version = 0;
  FilegroupKind kind = FilegroupKind::kTablespace;
  std::string name;
  uint64_t undo_buffer_bytes = 0;  // logfile group
  uint32_t logfile_group_id = 0;   // tablespace: the logfile group it uses
  uint64_t extent_bytes = 0;       // tablespace
  uint64_t autoextend_bytes = 0;   // tablespace (recorded; files do not grow yet)
  std::vector<DiskFileDef> files;

  bool is_tablespace() const { return kind == FilegroupKind::kTablespace; }
};

// Limits, so that a filegroup list fits one section (kSectionBytesMax).
inline constexpr uint32_t kFilegroupsMax = 64;
inline constexpr uint32_t kFilesPerFilegroupMax = 64;
inline constexpr size_t kDiskFileNameBytesMax = 255;

Status encode_filegroup(const FilegroupDef& filegroup, Bytes* out);
bool decode_filegroup(ByteReader* in, FilegroupDef* out);
Result<Bytes> encode_filegroup_list(const std::vector<FilegroupDef>& filegroups);
Result<std::vector<FilegroupDef>> decode_filegroup_list(std::string_view bytes);

// What a FILEGROUP_REQ asks for.
enum class FilegroupOp : uint32_t {
  kCreate = 1,    // `filegroup` (kind, name, options and its one first file)
  kAddFile = 2,   // `file` to the filegroup named `name`
  kDropFile = 3,  // the file named `file.name` of the filegroup named `name`
  kDrop = 4,      // the filegroup named `name` (of kind `kind`)
};

// FILEGROUP_REQ (client -> master dictionary) and FILEGROUP_PREPAREREQ (master -> every
// dictionary, with ids assigned): w0 request id / schema transaction, w1 op; section =
// this change encoded.
struct FilegroupChange {
  FilegroupOp op = FilegroupOp::kCreate;
  FilegroupKind kind = FilegroupKind::kTablespace;
  std::string name;           // the filegroup
  std::string logfile_group;  // kCreate of a tablespace: USE LOGFILE GROUP
  FilegroupDef filegroup;     // kCreate: the new filegroup (id, version set by the master)
  DiskFileDef file;           // kAddFile / kDropFile (file_id set by the master)

  Result<kernel::Signal> to_signal(kernel::SignalId id, uint32_t word0) const;
  static Result<FilegroupChange> from_signal(const kernel::Signal& signal);
};

// NDB error codes a filegroup request is refused with (FILEGROUP_REF w2), as NDB's
// DBDICT gives them; the SQL layer shows them as MySQL does (SHOW WARNINGS).
inline constexpr uint32_t kNdbSchemaObjectExists =
    721;                                           // "Schema object with given name already exists"
inline constexpr uint32_t kNdbNoSuchObject = 723;  // "No such table existed"
inline constexpr uint32_t kNdbFileExists = 760;    // "File already exists"
inline constexpr uint32_t kNdbNoSuchFile = 766;    // "Cant drop file, no such file"
inline constexpr uint32_t kNdbFilegroupInUse = 768;  // "Cant drop filegroup, filegroup is used"
inline constexpr uint32_t kNdbFileInUse = 770;       // "Cant drop file, file is used"
inline constexpr uint32_t kNdbLogfileGroupNotFound = 789;  // "Logfile group not found"
inline constexpr uint32_t kNdbFileSystemError =
    1509;  // "File system error, check if path,permissions etc"
inline constexpr uint32_t kNdbOneLogfileGroup =
    1514;  // "Currently there is a limit of one logfile group"
inline constexpr uint32_t kNdbFileTooSmall = 1516;           // "File too small"
inline constexpr uint32_t kNdbOutOfFilegroupRecords = 1503;  // "Out of filegroup records"
inline constexpr uint32_t kNdbOutOfFileRecords = 1508;       // "Out of file records"
// NDB's message for one of the codes above ("" for another).
const char* ndb_filegroup_error_text(uint32_t ndb_code);

}  // namespace duo::protocol
