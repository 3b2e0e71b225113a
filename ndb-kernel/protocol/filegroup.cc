#include "ndb-kernel/protocol/filegroup.h"

namespace duo::protocol {

namespace {
Status malformed() {
  return Status(ErrorCode::kInvalidArgument, "malformed filegroup message");
}
}  // namespace

// Filegroup: u32 id, u32 version, u8 kind, string name, u64 undo buffer, u32 logfile
// group id, u64 extent size, u64 autoextend size, u16 file count, then per file u32 id,
// u8 kind, string name, u64 size.
Status encode_filegroup(const FilegroupDef& filegroup, Bytes* out) {
  put_u32(out, filegroup.id);
  put_u32(out, filegroup.version);
  put_u8(out, static_cast<uint8_t>(filegroup.kind));
  DUO_RETURN_IF_ERROR(put_string(out, filegroup.name));
  put_u64(out, filegroup.undo_buffer_bytes);
  put_u32(out, filegroup.logfile_group_id);
  put_u64(out, filegroup.extent_bytes);
  put_u64(out, filegroup.autoextend_bytes);
  if (filegroup.files.size() > kFilesPerFilegroupMax) {
    return Status(ErrorCode::kInvalidArgument, "too many files in filegroup");
  }
  put_u16(out, static_cast<uint16_t>(filegroup.files.size()));
  for (const DiskFileDef& file : filegroup.files) {
    put_u32(out, file.file_id);
    put_u8(out, static_cast<uint8_t>(file.kind));
    DUO_RETURN_IF_ERROR(put_string(out, file.name));
    put_u64(out, file.size_bytes);
  }
  return Status::OK();
}

bool decode_filegroup(ByteReader* in, FilegroupDef* out) {
  uint8_t kind = 0;
  uint16_t files = 0;
  if (!in->u32(&out->id) || !in->u32(&out->version) || !in->u8(&kind) ||
      !get_string(in, &out->name) || !in->u64(&out->undo_buffer_bytes) ||
      !in->u32(&out->logfile_group_id) || !in->u64(&out->extent_bytes) ||
      !in->u64(&out->autoextend_bytes) || !in->u16(&files)) {
    return false;
  }
  if (kind < 1 || kind > 2 || files > kFilesPerFilegroupMax) return false;
  out->kind = static_cast<FilegroupKind>(kind);
  out->files.assign(files, DiskFileDef{});
  for (DiskFileDef& file : out->files) {
    uint8_t file_kind = 0;
    if (!in->u32(&file.file_id) || !in->u8(&file_kind) || !get_string(in, &file.name) ||
        !in->u64(&file.size_bytes) || file_kind < 1 || file_kind > 2) {
      return false;
    }
    file.kind = static_cast<DiskFileKind>(file_kind);
  }
  return true;
}

Result<Bytes> encode_filegroup_list(const std::vector<FilegroupDef>& filegroups) {
  Bytes out;
  put_u32(&out, static_cast<uint32_t>(filegroups.size()));
  for (const FilegroupDef& filegroup : filegroups) {
    DUO_RETURN_IF_ERROR(encode_filegroup(filegroup, &out));
  }
  if (out.size() > kernel::kSectionBytesMax) {
    return Status(ErrorCode::kNotSupported, "filegroup list does not fit one section");
  }
  return out;
}

Result<std::vector<FilegroupDef>> decode_filegroup_list(std::string_view bytes) {
  ByteReader in(bytes);
  uint32_t count = 0;
  if (!in.u32(&count) || count > kFilegroupsMax) return malformed();
  std::vector<FilegroupDef> filegroups(count);
  for (FilegroupDef& filegroup : filegroups) {
    if (!decode_filegroup(&in, &filegroup)) return malformed();
  }
  if (!in.done()) return malformed();
  return filegroups;
}

// Section: u8 kind, string name, string logfile group, filegroup, file (u32 id, u8 kind,
// string name, u64 size).
Result<kernel::Signal> FilegroupChange::to_signal(kernel::SignalId id, uint32_t word0) const {
  kernel::Signal signal(id, {word0, static_cast<uint32_t>(op)});
  Bytes section;
  put_u8(&section, static_cast<uint8_t>(kind));
  DUO_RETURN_IF_ERROR(put_string(&section, name));
  DUO_RETURN_IF_ERROR(put_string(&section, logfile_group));
  DUO_RETURN_IF_ERROR(encode_filegroup(filegroup, &section));
  put_u32(&section, file.file_id);
  put_u8(&section, static_cast<uint8_t>(file.kind));
  DUO_RETURN_IF_ERROR(put_string(&section, file.name));
  put_u64(&section, file.size_bytes);
  signal.set_section(std::move(section));
  return signal;
}

Result<FilegroupChange> FilegroupChange::from_signal(const kernel::Signal& signal) {
  FilegroupChange change;
  const uint32_t op = signal.word(1);
  if (op < 1 || op > 4) return malformed();
  change.op = static_cast<FilegroupOp>(op);
  ByteReader in(as_view(signal.section()));
  uint8_t kind = 0, file_kind = 0;
  if (!in.u8(&kind) || kind < 1 || kind > 2 || !get_string(&in, &change.name) ||
      !get_string(&in, &change.logfile_group) || !decode_filegroup(&in, &change.filegroup) ||
      !in.u32(&change.file.file_id) || !in.u8(&file_kind) || file_kind < 1 || file_kind > 2 ||
      !get_string(&in, &change.file.name) || !in.u64(&change.file.size_bytes) || !in.done()) {
    return malformed();
  }
  change.kind = static_cast<FilegroupKind>(kind);
  change.file.kind = static_cast<DiskFileKind>(file_kind);
  return change;
}

const char* ndb_filegroup_error_text(uint32_t ndb_code) {
  switch (ndb_code) {
    case kNdbSchemaObjectExists:
      return "Schema object with given name already exists";
    case kNdbNoSuchObject:
      return "No such table existed";
    case kNdbFileExists:
      return "File already exists";
    case kNdbNoSuchFile:
      return "Cant drop file, no such file";
    case kNdbFilegroupInUse:
      return "Cant drop filegroup, filegroup is used";
    case kNdbFileInUse:
      return "Cant drop file, file is used";
    case kNdbLogfileGroupNotFound:
      return "Logfile group not found";
    case kNdbFileSystemError:
      return "File system error, check if path,permissions etc";
    case kNdbOneLogfileGroup:
      return "Currently there is a limit of one logfile group";
    case kNdbFileTooSmall:
      return "File too small";
    case kNdbOutOfFilegroupRecords:
      return "Out of filegroup records";
    case kNdbOutOfFileRecords:
      return "Out of file records";
    default:
      return "";
  }
}

}  // namespace duo::protocol
