// The dictionary's disk-data objects: logfile groups, tablespaces and their files (NDB's
// filegroups). See dictionary_block.h for the protocol; NDB's rules and error codes:
// one logfile group (1514), names unique among filegroups (721), file names unique
// (760), a filegroup in use is not dropped (768: a tablespace named by a table or
// holding data files, a logfile group used by a tablespace), a data file of a tablespace
// that tables use is not dropped (770: its extents may hold their rows).
#include <algorithm>
#include <cerrno>
#include <utility>

#include "ndb-kernel/dictionary/dictionary_block.h"
#include "ndb-kernel/fs/fs_messages.h"
#include "ndb-kernel/protocol/block_numbers.h"

namespace duo::dictionary {

using kernel::BlockAddress;
using kernel::Signal;
using protocol::DictMsg;
using protocol::FilegroupChange;
using protocol::FilegroupDef;
using protocol::FilegroupKind;
using protocol::FilegroupOp;

namespace {
constexpr uint32_t kCommit = 0;
constexpr uint32_t kAbort = 1;
// FS user_refs of disk-data file requests carry this tag in their top half (the schema
// file's DualCopyFile uses tag 1).
constexpr uint32_t kFilegroupFsTag = 2;
// FILEGROUP_REF c: why a filegroup drop was refused with 768.
constexpr uint32_t kInUseByTable = 1;
constexpr uint32_t kInUseByFiles = 2;
// A file's directory: data files and undo files each have theirs (FileSystemPathDD ...).
fs::FsBase base_of(protocol::DiskFileKind kind) {
  return kind == protocol::DiskFileKind::kDataFile ? fs::FsBase::kDataFiles
                                                   : fs::FsBase::kUndoFiles;
}
uint32_t remove_flags_of(protocol::DiskFileKind kind) {
  return kind == protocol::DiskFileKind::kDataFile ? fs::kFsInDataFiles : fs::kFsInUndoFiles;
}

// Files smaller than this are refused (NDB 1516 "File too small": less than one page
// of 32 KiB after rounding).
constexpr uint64_t kFileBytesMin = 32 * 1024;

Status refusal(uint32_t ndb_error, std::string message, uint32_t* ndb_out) {
  *ndb_out = ndb_error;
  return Status(ErrorCode::kInvalidArgument, message);
}

const char* kind_name(FilegroupKind kind) {
  return kind == FilegroupKind::kLogfileGroup ? "logfile group" : "tablespace";
}
}  // namespace

const FilegroupDef* DictionaryBlock::find_filegroup(const std::string& name) const {
  for (const auto& [id, filegroup] : filegroups_) {
    if (filegroup.name == name) return &filegroup;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// Client requests

void DictionaryBlock::on_filegroup_req(Signal& signal) {
  const uint32_t request_id = signal.word(0);
  const auto refuse = [&](ErrorCode error, std::string message) {
    answer(signal.sender(), protocol::kFilegroupRef,
           DictMsg{request_id, static_cast<uint32_t>(error), 0, 0, std::move(message)});
  };
  Result<FilegroupChange> change = FilegroupChange::from_signal(signal);
  if (!change.ok()) return refuse(ErrorCode::kInvalidArgument, change.status().message());
  if (!is_master()) {
    return refuse(
        ErrorCode::kTemporary,
        "not the master dictionary; send schema changes to data node " + std::to_string(master_));
  }
  if (refuse_if_locked(signal.sender(), request_id, protocol::kFilegroupRef)) return;
  FilegroupRun run;
  run.client = signal.sender();
  run.request_id = request_id;
  run.change = std::move(change).value();
  filegroup_queue_.push_back(std::move(run));
  start_next_filegroup();
}

void DictionaryBlock::on_list_filegroups_req(Signal& signal) {
  std::vector<FilegroupDef> list;
  for (const auto& [id, filegroup] : filegroups_) list.push_back(filegroup);
  Result<protocol::Bytes> bytes = protocol::encode_filegroup_list(list);
  if (!bytes.ok()) {
    DUO_BLOCK_LOG(WARNING) << "cannot list filegroups: " << bytes.status().message();
    return;
  }
  Signal conf(protocol::kListFilegroupsConf, {signal.word(0)});
  conf.set_section(std::move(bytes).value());
  conf.set_receiver(signal.sender());
  send(signal.sender(), std::move(conf)).ignore_error();
}

// ---------------------------------------------------------------------------------------
// Master

Status DictionaryBlock::complete_filegroup_change(FilegroupChange* change, uint32_t* ndb_error,
                                                  uint32_t* detail) {
  const auto file_name_taken = [this](const std::string& name) {
    for (const auto& [id, filegroup] : filegroups_) {
      for (const protocol::DiskFileDef& file : filegroup.files) {
        if (file.name == name) return true;
      }
    }
    return false;
  };
  const auto check_new_file = [&](const protocol::DiskFileDef& file) -> Status {
    if (file.name.empty() || file.name.size() > protocol::kDiskFileNameBytesMax ||
        !fs::check_fs_path(file.name, false).ok()) {
      return refusal(protocol::kNdbFileSystemError,
                     "invalid file name '" + file.name +
                         "': a relative path without '..' inside the node's file system",
                     ndb_error);
    }
    if (file_name_taken(file.name)) {
      return refusal(protocol::kNdbFileExists, "File '" + file.name + "' already exists",
                     ndb_error);
    }
    if (file.size_bytes < kFileBytesMin) {
      return refusal(protocol::kNdbFileTooSmall, "File '" + file.name + "' too small", ndb_error);
    }
    return Status::OK();
  };
  FilegroupDef* existing = nullptr;
  for (auto& [id, filegroup] : filegroups_) {
    if (filegroup.name == change->name) existing = &filegroup;
  }
  switch (change->op) {
    case FilegroupOp::kCreate: {
      FilegroupDef& filegroup = change->filegroup;
      filegroup.name = change->name;
      filegroup.kind = change->kind;
      if (existing != nullptr) {
        return refusal(protocol::kNdbSchemaObjectExists,
                       "Schema object '" + change->name + "' already exists", ndb_error);
      }
      if (filegroup.kind == FilegroupKind::kLogfileGroup) {
        for (const auto& [id, other] : filegroups_) {
          if (other.kind == FilegroupKind::kLogfileGroup) {
            return refusal(protocol::kNdbOneLogfileGroup,
                           "Currently there is a limit of one logfile group", ndb_error);
          }
        }
      } else {
        const FilegroupDef* group = find_filegroup(change->logfile_group);
        if (group == nullptr || group->kind != FilegroupKind::kLogfileGroup) {
          return refusal(protocol::kNdbLogfileGroupNotFound,
                         "Logfile group '" + change->logfile_group + "' not found", ndb_error);
        }
        filegroup.logfile_group_id = group->id;
      }
      if (filegroups_.size() >= protocol::kFilegroupsMax) {
        return refusal(protocol::kNdbOutOfFilegroupRecords, "Out of filegroup records", ndb_error);
      }
      if (filegroup.files.size() != 1) {
        return Status(ErrorCode::kInvalidArgument, "a new filegroup has exactly one file");
      }
      DUO_RETURN_IF_ERROR(check_new_file(filegroup.files[0]));
      filegroup.id = next_filegroup_id_;
      filegroup.version = 1;
      filegroup.files[0].file_id = next_file_id_;
      return Status::OK();
    }
    case FilegroupOp::kAddFile:
    case FilegroupOp::kDropFile:
    case FilegroupOp::kDrop:
      break;
  }
  if (existing == nullptr || existing->kind != change->kind) {
    return refusal(protocol::kNdbNoSuchObject,
                   std::string(kind_name(change->kind)) + " '" + change->name + "' does not exist",
                   ndb_error);
  }
  const auto used_by_table = [&](uint32_t tablespace_id) {
    for (const auto& [id, table] : tables_) {
      if (table.tablespace_id == tablespace_id) return true;
    }
    return false;
  };
  change->filegroup = *existing;
  change->filegroup.version = existing->version + 1;
  if (change->op == FilegroupOp::kAddFile) {
    if (existing->files.size() >= protocol::kFilesPerFilegroupMax) {
      return refusal(protocol::kNdbOutOfFileRecords, "Out of file records", ndb_error);
    }
    change->file.kind = existing->is_tablespace() ? protocol::DiskFileKind::kDataFile
                                                  : protocol::DiskFileKind::kUndoFile;
    DUO_RETURN_IF_ERROR(check_new_file(change->file));
    change->file.file_id = next_file_id_;
    change->filegroup.files.push_back(change->file);
    return Status::OK();
  }
  if (change->op == FilegroupOp::kDropFile) {
    auto file =
        std::find_if(existing->files.begin(), existing->files.end(),
                     [&](const protocol::DiskFileDef& f) { return f.name == change->file.name; });
    if (file == existing->files.end()) {
      return refusal(protocol::kNdbNoSuchFile,
                     "Tablespace '" + change->name + "' does not have a file named '" +
                         change->file.name + "'",
                     ndb_error);
    }
    // No extents are handed out yet (rows stay in memory this version): a data file is
    // counted as used whenever a table uses its tablespace, as its extents would be.
    if (used_by_table(existing->id)) {
      return refusal(protocol::kNdbFileInUse, "Cant drop file, file is used", ndb_error);
    }
    change->file = *file;
    change->filegroup.files.erase(change->filegroup.files.begin() +
                                  (file - existing->files.begin()));
    return Status::OK();
  }
  // kDrop.
  if (existing->is_tablespace()) {
    if (used_by_table(existing->id)) {
      *detail = kInUseByTable;
      return refusal(protocol::kNdbFilegroupInUse,
                     "Tablespace `" + change->name + "` is not empty.", ndb_error);
    }
    if (!existing->files.empty()) {
      *detail = kInUseByFiles;
      return refusal(protocol::kNdbFilegroupInUse, "Cant drop filegroup, filegroup is used",
                     ndb_error);
    }
  } else {
    for (const auto& [id, other] : filegroups_) {
      if (other.is_tablespace() && other.logfile_group_id == existing->id) {
        return refusal(protocol::kNdbFilegroupInUse, "Cant drop filegroup, filegroup is used",
                       ndb_error);
      }
    }
  }
  return Status::OK();
}

void DictionaryBlock::start_next_filegroup() {
  while (!running_ && !takeover_ && !filegroup_running_ && !filegroup_queue_.empty()) {
    auto run = std::make_unique<FilegroupRun>(std::move(filegroup_queue_.front()));
    filegroup_queue_.pop_front();
    const auto refuse = [&](ErrorCode error, uint32_t ndb_error, uint32_t detail,
                            std::string message) {
      if (run->client.node_id == 0) {
        DUO_BLOCK_LOG(ERROR) << kind_name(run->change.kind) << " '" << run->change.name
                             << "' not created: NDB error " << ndb_error << ": " << message;
      }
      answer(run->client, protocol::kFilegroupRef,
             DictMsg{run->request_id, static_cast<uint32_t>(error), ndb_error, detail,
                     std::move(message)});
    };
    if (schema_locked()) {
      refuse(ErrorCode::kTemporary, 0, 0, kNodeRestartBusyMessage);
      continue;
    }
    uint32_t ndb_error = 0, detail = 0;
    if (Status valid = complete_filegroup_change(&run->change, &ndb_error, &detail);
        !valid.ok()) {
      refuse(valid.code(), ndb_error, detail, valid.message());
      continue;
    }
    run->schema_tx = (uint32_t{node_id()} << 24) | (next_schema_tx_++ & 0xFFFFFF);
    Result<Signal> prepare = run->change.to_signal(protocol::kFilegroupPrepareReq, run->schema_tx);
    if (!prepare.ok()) {
      refuse(prepare.status().code(), 0, 0, prepare.status().message());
      continue;
    }
    filegroup_running_ = std::move(run);
    filegroup_running_->awaiting = send_to_every_dictionary(std::move(prepare).value());
    if (filegroup_running_->awaiting.empty()) filegroup_phase_done();
  }
}

void DictionaryBlock::on_filegroup_prepare_answer(Signal& signal) {
  const DictMsg msg = DictMsg::from_signal(signal);
  FilegroupRun* run = filegroup_running_.get();
  if (run == nullptr || run->schema_tx != msg.request_id || run->committing) return;
  if (run->awaiting.erase(signal.sender().node_id) == 0) return;
  if (signal.id() == protocol::kFilegroupPrepareRef && run->error == ErrorCode::kOk) {
    run->error = static_cast<ErrorCode>(msg.a);
    run->ndb_error = msg.b;
    run->message = msg.text;
  }
  if (run->awaiting.empty()) filegroup_phase_done();
}

void DictionaryBlock::filegroup_phase_done() {
  FilegroupRun& run = *filegroup_running_;
  if (run.committing) return finish_filegroup();
  run.committing = true;
  const uint32_t decision = run.error == ErrorCode::kOk ? kCommit : kAbort;
  run.awaiting =
      send_to_every_dictionary(Signal(protocol::kFilegroupCommitReq, {run.schema_tx, decision}));
  if (run.awaiting.empty()) finish_filegroup();
}

void DictionaryBlock::on_filegroup_commit_conf(Signal& signal) {
  FilegroupRun* run = filegroup_running_.get();
  if (run == nullptr || run->schema_tx != signal.word(0) || !run->committing) return;
  if (run->awaiting.erase(signal.sender().node_id) == 0) return;
  if (run->awaiting.empty()) finish_filegroup();
}

void DictionaryBlock::finish_filegroup() {
  std::unique_ptr<FilegroupRun> done = std::move(filegroup_running_);
  if (done->error == ErrorCode::kOk) {
    DUO_BLOCK_LOG(INFO) << kind_name(done->change.kind) << " '" << done->change.name << "': change "
                        << static_cast<uint32_t>(done->change.op) << " committed (version "
                        << done->change.filegroup.version << ")";
    answer(done->client, protocol::kFilegroupConf,
           DictMsg{done->request_id, done->change.filegroup.id, done->change.filegroup.version, 0,
                   ""});
  } else {
    if (done->client.node_id == 0) {
      DUO_BLOCK_LOG(ERROR) << kind_name(done->change.kind) << " '" << done->change.name
                           << "' not created: NDB error " << done->ndb_error << ": "
                           << done->message;
    }
    answer(done->client, protocol::kFilegroupRef,
           DictMsg{done->request_id, static_cast<uint32_t>(done->error), done->ndb_error, 0,
                   done->message});
  }
  start_next();
}

void DictionaryBlock::filegroup_node_failed(uint16_t node) {
  if (filegroup_running_ && filegroup_running_->awaiting.erase(node) != 0 &&
      filegroup_running_->awaiting.empty()) {
    filegroup_phase_done();
  }
  // A change prepared here whose master died before its commit arrived is aborted here
  // (its file removed), so nothing holds the schema back. NDB's new master would finish
  // it everywhere; here a master dying between its commits can leave the nodes
  // disagreeing about that one change (dictionary_block.h, not yet done).
  std::vector<uint32_t> orphans;
  for (const auto& [schema_tx, prepared] : filegroup_prepared_) {
    if ((schema_tx >> 24) == node && !prepared.committing) orphans.push_back(schema_tx);
  }
  for (uint32_t schema_tx : orphans) {
    FilegroupPrepared& prepared = filegroup_prepared_.at(schema_tx);
    DUO_BLOCK_LOG(WARNING) << "master node " << node << " died with filegroup change " << schema_tx
                           << " prepared here: aborted here";
    prepared.committing = true;
    prepared.master = BlockAddress{};  // nobody to answer
    if (prepared.allocating) {
      // Its file is being made: removed once the allocation is answered.
      prepared.abort_when_allocated = true;
      continue;
    }
    std::vector<protocol::DiskFileDef> created;
    if (!prepared.created_file.name.empty()) created.push_back(prepared.created_file);
    remove_files_then_confirm(schema_tx, created);
  }
}

void DictionaryBlock::on_cluster_started_rep(Signal& /*signal*/) {
  if (!is_master() || !restored_empty_ || initial_disk_objects_.empty()) return;
  restored_empty_ = false;
  DUO_BLOCK_LOG(INFO) << "initial start: creating " << initial_disk_objects_.size()
                      << " disk-data object change(s) (InitialLogFileGroup / InitialTablespace)";
  for (FilegroupChange& change : initial_disk_objects_) {
    FilegroupRun run;  // no client: the outcome is logged
    run.change = std::move(change);
    filegroup_queue_.push_back(std::move(run));
  }
  initial_disk_objects_.clear();
  start_next_filegroup();
}

void DictionaryBlock::filegroup_api_failed(uint16_t node) {
  std::erase_if(filegroup_queue_,
                [node](const FilegroupRun& run) { return run.client.node_id == node; });
  if (filegroup_running_ && filegroup_running_->client.node_id == node) {
    filegroup_running_->client.node_id = 0;  // finishes, but nobody is told
  }
}

// ---------------------------------------------------------------------------------------
// Every dictionary: prepare (create the new file) and commit

void DictionaryBlock::on_filegroup_prepare_req(Signal& signal) {
  const uint32_t schema_tx = signal.word(0);
  Result<FilegroupChange> change = FilegroupChange::from_signal(signal);
  if (!change.ok()) {
    return answer(signal.sender(), protocol::kFilegroupPrepareRef,
                  DictMsg{schema_tx, static_cast<uint32_t>(ErrorCode::kInvalidArgument), 0, 0,
                          change.status().message()});
  }
  FilegroupPrepared& prepared = filegroup_prepared_[schema_tx];
  prepared.change = std::move(change).value();
  prepared.master = signal.sender();
  const FilegroupChange& c = prepared.change;
  const protocol::DiskFileDef* new_file = nullptr;
  if (c.op == FilegroupOp::kCreate && !c.filegroup.files.empty()) {
    new_file = &c.filegroup.files.front();
  } else if (c.op == FilegroupOp::kAddFile) {
    new_file = &c.file;
  }
  if (new_file == nullptr) {
    return answer_filegroup_prepare(schema_tx, 0, 0, "");
  }
  const uint32_t user_ref = (kFilegroupFsTag << 16) | (++next_filegroup_fs_ref_ & 0xFFFF);
  filegroup_fs_requests_[user_ref] = {schema_tx, false};
  prepared.created_file = *new_file;
  prepared.allocating = true;
  const BlockAddress fs{node_id(), protocol::kFileSystemBlock, 0};
  Signal alloc =
      fs::FsAllocReq{user_ref, new_file->size_bytes, new_file->name, base_of(new_file->kind)}
          .to_signal();
  alloc.set_receiver(fs);
  if (Status sent = send(fs, std::move(alloc)); !sent.ok()) {
    filegroup_fs_requests_.erase(user_ref);
    prepared.created_file.name.clear();
    prepared.allocating = false;
    answer_filegroup_prepare(schema_tx, static_cast<uint32_t>(sent.code()),
                             protocol::kNdbFileSystemError, sent.message());
  }
}

void DictionaryBlock::answer_filegroup_prepare(uint32_t schema_tx, uint32_t error,
                                               uint32_t ndb_error, std::string message) {
  auto it = filegroup_prepared_.find(schema_tx);
  if (it == filegroup_prepared_.end()) return;
  answer(
      it->second.master,
      error == 0 ? protocol::kFilegroupPrepareConf : protocol::kFilegroupPrepareRef,
      DictMsg{schema_tx, error, ndb_error, 0,
              error == 0 ? std::string() : "node " + std::to_string(node_id()) + ": " + message});
}

bool DictionaryBlock::on_filegroup_fs_answer(Signal& signal) {
  const uint32_t user_ref = fs::fs_user_ref(signal);
  if ((user_ref >> 16) != kFilegroupFsTag) return false;
  auto request = filegroup_fs_requests_.find(user_ref);
  if (request == filegroup_fs_requests_.end()) return true;
  const uint32_t schema_tx = request->second.schema_tx;
  const bool remove = request->second.remove;
  filegroup_fs_requests_.erase(request);
  Status outcome = Status::OK();
  uint32_t os_errno = 0;
  if (signal.id() == protocol::kFsRef) {
    Result<fs::FsRef> ref = fs::FsRef::from_signal(signal);
    outcome = ref.ok() ? ref->to_status() : ref.status();
    if (ref.ok()) os_errno = ref->os_errno;
  }
  if (schema_tx == 0) {
    // A file made at a restart (ensure_filegroup_files): an existing one is fine.
    if (!outcome.ok() && os_errno != EEXIST) {
      DUO_BLOCK_LOG(ERROR) << "cannot create a disk-data file: " << outcome.message();
    }
    return true;
  }
  auto it = filegroup_prepared_.find(schema_tx);
  if (it == filegroup_prepared_.end()) return true;
  FilegroupPrepared& prepared = it->second;
  if (remove) {
    // A remove of a commit or an abort.
    if (!outcome.ok()) {
      DUO_BLOCK_LOG(WARNING) << "cannot remove a disk-data file: " << outcome.message();
    }
    if (prepared.awaiting_removes > 0 && --prepared.awaiting_removes == 0) {
      const BlockAddress master = prepared.master;
      filegroup_prepared_.erase(it);
      answer(master, protocol::kFilegroupCommitConf, DictMsg{schema_tx, 0, 0, 0, ""});
    }
    return true;
  }
  prepared.allocating = false;
  // Nothing was created here when it failed (FS_ALLOCREQ leaves nothing behind).
  if (!outcome.ok()) prepared.created_file.name.clear();
  if (prepared.abort_when_allocated) {
    std::vector<protocol::DiskFileDef> created;
    if (!prepared.created_file.name.empty()) created.push_back(prepared.created_file);
    remove_files_then_confirm(schema_tx, created);
    return true;
  }
  if (outcome.ok()) {
    answer_filegroup_prepare(schema_tx, 0, 0, "");
    return true;
  }
  const uint32_t ndb_error =
      os_errno == EEXIST ? protocol::kNdbFileExists : protocol::kNdbFileSystemError;
  DUO_BLOCK_LOG(WARNING) << "cannot create disk-data file: " << outcome.message();
  answer_filegroup_prepare(schema_tx, static_cast<uint32_t>(outcome.code()), ndb_error,
                           outcome.message());
  return true;
}

void DictionaryBlock::on_filegroup_commit_req(Signal& signal) {
  const uint32_t schema_tx = signal.word(0);
  auto it = filegroup_prepared_.find(schema_tx);
  if (it == filegroup_prepared_.end()) {
    answer(signal.sender(), protocol::kFilegroupCommitConf, DictMsg{schema_tx, 0, 0, 0, ""});
    return;
  }
  FilegroupPrepared& prepared = it->second;
  prepared.master = signal.sender();
  if (prepared.committing) return;  // a repeat: the commit under way answers
  prepared.committing = true;
  if (signal.word(1) == kAbort) {
    // Take back the file this prepare created.
    std::vector<protocol::DiskFileDef> created;
    if (!prepared.created_file.name.empty()) created.push_back(prepared.created_file);
    return remove_files_then_confirm(schema_tx, created);
  }
  const FilegroupChange& change = prepared.change;
  const FilegroupDef& filegroup = change.filegroup;
  switch (change.op) {
    case FilegroupOp::kCreate:
    case FilegroupOp::kAddFile:
    case FilegroupOp::kDropFile:
      filegroups_[filegroup.id] = filegroup;
      break;
    case FilegroupOp::kDrop:
      filegroups_.erase(filegroup.id);
      break;
  }
  next_filegroup_id_ = std::max(next_filegroup_id_, filegroup.id + 1);
  for (const protocol::DiskFileDef& file : filegroup.files) {
    next_file_id_ = std::max(next_file_id_, file.file_id + 1);
  }
  Result<fs_client::Bytes> schema = encode_schema();
  if (!schema.ok()) return filegroup_committed(schema_tx, schema.status());
  schema_file_->write(std::move(schema).value(), [this, schema_tx](Status written) {
    filegroup_committed(schema_tx, std::move(written));
  });
}

void DictionaryBlock::filegroup_committed(uint32_t schema_tx, Status persisted) {
  auto it = filegroup_prepared_.find(schema_tx);
  if (it == filegroup_prepared_.end()) return;
  if (!persisted.ok()) {
    DUO_BLOCK_LOG(ERROR) << "cannot write the schema file: " << persisted.message();
  }
  // Files go only once the schema file no longer names them: a crash in between leaves
  // an unused file behind, never a filegroup whose file is missing.
  const FilegroupChange& change = it->second.change;
  std::vector<protocol::DiskFileDef> removed;
  if (change.op == FilegroupOp::kDropFile) removed.push_back(change.file);
  if (change.op == FilegroupOp::kDrop) removed = change.filegroup.files;
  remove_files_then_confirm(schema_tx, removed);
}

void DictionaryBlock::remove_files_then_confirm(uint32_t schema_tx,
                                                const std::vector<protocol::DiskFileDef>& files) {
  auto it = filegroup_prepared_.find(schema_tx);
  if (it == filegroup_prepared_.end()) return;
  FilegroupPrepared& prepared = it->second;
  prepared.awaiting_removes = 0;
  const BlockAddress fs{node_id(), protocol::kFileSystemBlock, 0};
  for (const protocol::DiskFileDef& file : files) {
    const uint32_t user_ref = (kFilegroupFsTag << 16) | (++next_filegroup_fs_ref_ & 0xFFFF);
    Signal remove = fs::FsRemoveReq{user_ref, remove_flags_of(file.kind), file.name}.to_signal();
    remove.set_receiver(fs);
    if (send(fs, std::move(remove)).ok()) {
      filegroup_fs_requests_[user_ref] = {schema_tx, true};
      ++prepared.awaiting_removes;
    }
  }
  if (prepared.awaiting_removes == 0) {
    const BlockAddress master = prepared.master;
    filegroup_prepared_.erase(it);
    answer(master, protocol::kFilegroupCommitConf, DictMsg{schema_tx, 0, 0, 0, ""});
  }
}

void DictionaryBlock::ensure_filegroup_files() {
  const BlockAddress fs{node_id(), protocol::kFileSystemBlock, 0};
  for (const auto& [id, filegroup] : filegroups_) {
    for (const protocol::DiskFileDef& file : filegroup.files) {
      const uint32_t user_ref = (kFilegroupFsTag << 16) | (++next_filegroup_fs_ref_ & 0xFFFF);
      Signal alloc =
          fs::FsAllocReq{user_ref, file.size_bytes, file.name, base_of(file.kind)}.to_signal();
      alloc.set_receiver(fs);
      if (send(fs, std::move(alloc)).ok()) filegroup_fs_requests_[user_ref] = {0, false};
    }
  }
}

// ---------------------------------------------------------------------------------------
// Persistence: after the tables in the schema file (and at the end of a schema copy):
// u32 next filegroup id, u32 next file id, then the filegroup list.

void DictionaryBlock::encode_filegroups(fs_client::Bytes* out) const {
  protocol::put_u32(out, next_filegroup_id_);
  protocol::put_u32(out, next_file_id_);
  std::vector<FilegroupDef> list;
  for (const auto& [id, filegroup] : filegroups_) list.push_back(filegroup);
  Result<protocol::Bytes> bytes = protocol::encode_filegroup_list(list);
  // Bounded by kFilegroupsMax x kFilesPerFilegroupMax, checked when each was created.
  if (!bytes.ok()) {
    DUO_BLOCK_LOG(ERROR) << "cannot encode the filegroups: " << bytes.status().message();
    protocol::put_u32(out, 0);
    return;
  }
  out->insert(out->end(), bytes->begin(), bytes->end());
}

Status DictionaryBlock::decode_filegroups(protocol::ByteReader* in) {
  uint32_t next_filegroup = 0, next_file = 0;
  if (!in->u32(&next_filegroup) || !in->u32(&next_file)) {
    return Status(ErrorCode::kCorruption, "truncated filegroup header");
  }
  std::string_view rest;
  if (!in->take(in->remaining(), &rest)) {
    return Status(ErrorCode::kCorruption, "truncated filegroups");
  }
  Result<std::vector<FilegroupDef>> list = protocol::decode_filegroup_list(rest);
  if (!list.ok()) return Status(ErrorCode::kCorruption, list.status().message());
  filegroups_.clear();
  for (FilegroupDef& filegroup : *list) filegroups_[filegroup.id] = std::move(filegroup);
  next_filegroup_id_ = std::max(next_filegroup, 1u);
  next_file_id_ = std::max(next_file, 1u);
  return Status::OK();
}

}  // namespace duo::dictionary
