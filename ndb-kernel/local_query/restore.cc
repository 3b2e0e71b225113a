// LocalQueryBlock: restore of a log part at system restart (LQH_RESTOREREQ, w0 = GCI g).
// The dictionary has re-created the tables (TABLE_ADDREQ) before. The part loads the
// checkpoint its control record names — each fragment's chain of data files oldest
// first, each file's deleted keys before its rows (checkpoint.h argues why that is
// exact) — replays redo of GCIs start_gci..g over it, then
// takes a fresh checkpoint so the crashed life's redo (which may hold GCIs > g) can be
// removed, and only then answers LQH_RESTORECONF (w0 g, w1 rows, w2 ErrorCode; on an
// error the section holds the message). Work goes in slices: one file read (at most
// 60 KiB) per LQH_CONTINUE. docs/formats/redo-and-lcp.md describes the files.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <utility>

#include "ndb-kernel/fs/fs_messages.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::local_query {

using kernel::Signal;
using protocol::as_view;
using storage::AttrValues;
using storage::Fragment;

namespace {

// A control record lists at most a few thousand fragments; anything larger is not one.
constexpr uint64_t kControlBytesMax = 4u << 20;
// Progress is logged at most this often (block clock), and at the end.
constexpr uint64_t kProgressLogIntervalNs = 3 * kNanosPerSecond;

struct WholeFileRead {
  std::string path;
  uint32_t handle = 0;
  uint64_t size = 0;
  Bytes data;
};

void copy_row(const storage::RowBatch::Row& row, AttrValues* out) {
  out->clear();
  for (size_t k = 0; k < row.size(); ++k) {
    if (row.is_null(k)) {
      out->add_null(row.column(k));
    } else {
      out->add(row.column(k), row.value(k));
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Reading a whole small file (the control records).

void LocalQueryBlock::read_whole_file(std::string path, uint64_t size_max, WholeFileDone done) {
  auto state = std::make_shared<WholeFileRead>();
  state->path = std::move(path);
  auto finish = std::make_shared<WholeFileDone>(std::move(done));
  auto close_then = [this, state, finish](Result<std::optional<Bytes>> result) {
    fs::FsCloseReq close_file;
    close_file.handle = state->handle;
    fs_request(std::move(close_file).to_signal(), [](Signal&) {});
    (*finish)(std::move(result));
  };
  // Reads the next piece, or closes and hands over the bytes. Only the request in
  // flight holds the step (weak self-reference: no cycle).
  auto step = std::make_shared<std::function<void()>>();
  std::weak_ptr<std::function<void()>> weak_step = step;
  *step = [this, state, close_then, weak_step] {
    if (state->data.size() >= state->size) return close_then(std::optional<Bytes>(state->data));
    fs::FsReadReq read;
    read.handle = state->handle;
    read.offset = state->data.size();
    read.length = static_cast<uint32_t>(
        std::min<uint64_t>(fs::kFsReadBytesMax, state->size - state->data.size()));
    fs_request(std::move(read).to_signal(),
               [state, close_then, next = weak_step.lock()](Signal& answer) {
                 Status status = fs_status(answer);
                 if (!status.ok()) return close_then(status);
                 auto conf = fs::FsReadConf::from_signal(answer);
                 if (!conf.ok()) return close_then(conf.status());
                 // A file that shrank under us ends where the data ends.
                 if (conf->data.empty()) state->size = state->data.size();
                 state->data.insert(state->data.end(), conf->data.begin(), conf->data.end());
                 (*next)();
               });
  };
  fs::FsOpenReq open_file;
  open_file.flags = fs::kFsRead;
  open_file.path = state->path;
  fs_request(std::move(open_file).to_signal(), [state, finish, step, close_then,
                                                size_max](Signal& answer) {
    Status opened = fs_status(answer);
    auto conf = opened.ok() ? fs::FsOpenConf::from_signal(answer) : Result<fs::FsOpenConf>(opened);
    if (!conf.ok()) {
      if (conf.status().is(ErrorCode::kNotFound)) return (*finish)(std::optional<Bytes>());
      return (*finish)(conf.status());
    }
    state->handle = conf->handle;
    state->size = conf->size_bytes;
    if (state->size > size_max) {
      return close_then(Status(ErrorCode::kCorruption,
                               state->path + " is " + std::to_string(state->size) + " bytes"));
    }
    (*step)();
  });
}

// ---------------------------------------------------------------------------------------
// The restore.

void LocalQueryBlock::on_restore_request(Signal& signal) {
  const uint32_t gci = signal.word(0);
  auto refuse_restore = [&](std::string message) {
    DUO_BLOCK_LOG(ERROR) << "restore refused: " << message;
    Signal conf(protocol::kLqhRestoreConf,
                {gci, 0, static_cast<uint32_t>(ErrorCode::kTransactionState)});
    conf.set_section(Bytes(message.begin(), message.end()));
    send_or_log(signal.sender(), std::move(conf));
  };
  if (restore_ != nullptr || lcp_ != nullptr) return refuse_restore("a restore or LCP is running");
  // A restore rebuilds the part from disk; anything this life already logged would be
  // overwritten by it.
  if (redo_.appended_lsn() != 0) return refuse_restore("this log part has logged commits");
  restore_ = std::make_unique<RestoreRun>();
  restore_->gci = gci;
  restore_->for_node_restart = signal.word(1) == protocol::kRestoreForNodeRestart;
  restore_->requester = signal.sender();
  restore_->generation = ++continue_generation_;
  restore_->start_ns = clock().now_ns();
  restore_->last_log_ns = restore_->start_ns;
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": log part " << address().instance
                      << ": restore to GCI " << gci << " started";
  restore_read_control(0);
}

void LocalQueryBlock::restore_read_control(uint32_t slot) {
  const uint32_t generation = restore_->generation;
  read_whole_file(lcp_control_path(address().instance, slot), kControlBytesMax,
                  [this, generation, slot](Result<std::optional<Bytes>> read) {
                    if (restore_ == nullptr || restore_->generation != generation) return;
                    if (!read.ok()) {
                      // An IO error (not a corrupt record): nothing safe to fall back on.
                      if (!read.status().is(ErrorCode::kCorruption)) {
                        return restore_finished(read.status());
                      }
                      restore_->slots[slot] = Result<LcpControl>(read.status());
                    } else if (read->has_value() && !(*read)->empty()) {
                      // (An empty slot is one a crash cut right after its truncating
                      // open: it held nothing newer than the other slot, so it counts
                      // as absent.)
                      const Bytes& bytes = **read;
                      Result<LcpControl> control = decode_lcp_control(as_view(bytes));
                      if (!control.ok()) {
                        control = Status(ErrorCode::kCorruption,
                                         lcp_control_path(address().instance, slot) + ": " +
                                             control.status().message());
                      }
                      restore_->slots[slot] = std::move(control);
                    }
                    if (slot == 0) return restore_read_control(1);
                    restore_list_redo();
                  });
}

void LocalQueryBlock::restore_list_redo() {
  RestoreRun& run = *restore_;
  auto chosen = choose_lcp_control(run.slots[0], run.slots[1], run.gci);
  if (!chosen.ok()) return restore_finished(chosen.status());
  run.control = std::move(chosen).value();
  run.start_gci = run.control ? run.control->start_gci : 0;
  if (run.control) {
    for (const LcpFragmentInfo& info : run.control->fragments) {
      const Table* table = find_table(info.table_id);
      // Tables dropped since the checkpoint are not restored. A table keeps its rows'
      // format across versions (ALTER_TABLEREQ changes indexes and names only, and
      // indexes are rebuilt from the rows as they load), so an older version restores.
      if (table == nullptr || info.table_version > table->def.version ||
          !table->fragments.contains(info.fragment_id)) {
        continue;
      }
      for (const LcpDataFile& file : info.files) {
        run.lcp_files.push_back(RestoreRun::LcpFile{info.table_id, info.fragment_id, file});
        run.total_bytes += file.data_bytes;
      }
    }
  }
  fs::FsListReq list;
  list.path = redo_part_dir(address().instance);
  const uint32_t generation = run.generation;
  fs_request(std::move(list).to_signal(), [this, generation](Signal& answer) {
    if (restore_ == nullptr || restore_->generation != generation) return;
    Status listed = fs_status(answer);
    if (!listed.ok()) return restore_finished(listed);
    auto conf = fs::FsListConf::from_signal(answer);
    if (!conf.ok()) return restore_finished(conf.status());
    for (const std::string& name : conf->names) {
      if (const uint32_t seq = parse_redo_file_name(name)) restore_->redo_files.push_back(seq);
    }
    std::sort(restore_->redo_files.begin(), restore_->redo_files.end());
    // Sizes are learned at open; until then a file counts as full for the percentage.
    restore_->total_bytes += restore_->redo_files.size() * options_.redo_file_bytes;
    restore_next_file();
  });
}

void LocalQueryBlock::restore_next_file() {
  RestoreRun& run = *restore_;
  std::string path;
  if (!run.redo_phase) {
    if (run.lcp_file_index < run.lcp_files.size()) {
      const RestoreRun::LcpFile& lcp_file = run.lcp_files[run.lcp_file_index];
      path = lcp_data_path(address().instance, lcp_file.file.lcp_id, lcp_file.table_id,
                           lcp_file.fragment_id);
      run.file_limit = lcp_file.file.data_bytes;
    } else {
      run.redo_phase = true;
    }
  }
  if (run.redo_phase) {
    if (run.redo_index >= run.redo_files.size()) return restore_loaded();
    path = redo_path(address().instance, run.redo_files[run.redo_index]);
    run.file_max_gci = 0;
    run.file_torn = false;
  }
  run.file = RestoreFile{};
  run.file.path = path;
  run.pending_offset = 0;
  fs::FsOpenReq open_file;
  open_file.flags = fs::kFsRead;
  open_file.path = path;
  const uint32_t generation = run.generation;
  fs_request(std::move(open_file).to_signal(), [this, generation](Signal& answer) {
    if (restore_ == nullptr || restore_->generation != generation) return;
    RestoreRun& r = *restore_;
    Status opened = fs_status(answer);
    if (!opened.ok()) {
      // A data file the control record names must be there.
      if (!r.redo_phase && opened.is(ErrorCode::kNotFound)) {
        return restore_finished(Status(
            ErrorCode::kCorruption, r.file.path + " named by the LCP control record is missing"));
      }
      return restore_finished(opened);
    }
    auto conf = fs::FsOpenConf::from_signal(answer);
    if (!conf.ok()) return restore_finished(conf.status());
    r.file.handle = conf->handle;
    r.file.size = conf->size_bytes;
    if (!r.redo_phase && r.file.size < r.file_limit) {
      return restore_finished(
          Status(ErrorCode::kCorruption, r.file.path + " is " + std::to_string(r.file.size) +
                                             " bytes, the LCP control record says " +
                                             std::to_string(r.file_limit)));
    }
    if (r.redo_phase) {
      r.file_limit = r.file.size;
      r.total_bytes =
          r.total_bytes - std::min<uint64_t>(r.total_bytes, options_.redo_file_bytes) + r.file.size;
    }
    restore_read_more();
  });
}

void LocalQueryBlock::restore_read_more() {
  RestoreRun& run = *restore_;
  if (run.file.offset >= run.file_limit) return restore_file_done();
  fs::FsReadReq read;
  read.handle = run.file.handle;
  read.offset = run.file.offset;
  read.length = static_cast<uint32_t>(
      std::min<uint64_t>(fs::kFsReadBytesMax, run.file_limit - run.file.offset));
  const uint32_t generation = run.generation;
  fs_request(std::move(read).to_signal(), [this, generation](Signal& answer) {
    if (restore_ == nullptr || restore_->generation != generation) return;
    RestoreRun& r = *restore_;
    Status status = fs_status(answer);
    if (!status.ok()) return restore_finished(status);
    auto conf = fs::FsReadConf::from_signal(answer);
    if (!conf.ok()) return restore_finished(conf.status());
    if (conf->data.empty()) {
      r.file_limit = r.file.offset;  // the file ended early
    } else {
      r.file.offset += conf->data.size();
      (r.redo_phase ? r.redo_bytes : r.lcp_bytes) += conf->data.size();
      r.file.pending.insert(r.file.pending.end(), conf->data.begin(), conf->data.end());
    }
    restore_consume();
  });
}

void LocalQueryBlock::restore_consume() {
  RestoreRun& run = *restore_;
  const std::string_view pending = as_view(run.file.pending);
  size_t used = 0;
  if (!run.redo_phase) {
    const RestoreRun::LcpFile& lcp_file = run.lcp_files[run.lcp_file_index];
    storage::RowBatch batch;
    for (;;) {
      auto decoded = decode_lcp_chunk(pending.substr(used), &batch);
      if (!decoded.ok()) {
        return restore_finished(
            Status(ErrorCode::kCorruption, run.file.path + " offset " +
                                               std::to_string(run.pending_offset + used) + ": " +
                                               decoded.status().message()));
      }
      if (*decoded == 0) break;
      // Deleted keys lead the file, whole chunks of them.
      const bool deletes = run.pending_offset + used < lcp_file.file.delete_bytes;
      Status applied = restore_apply_chunk(batch, lcp_file, deletes);
      if (!applied.ok()) return restore_finished(applied);
      used += *decoded;
    }
  } else {
    std::deque<RedoRecord> records;
    for (;;) {
      RedoRecord record;
      size_t length = 0;
      const RedoDecode result = decode_redo_record(pending.substr(used), &record, &length);
      if (result == RedoDecode::kNeedMore) break;
      if (result == RedoDecode::kBad) {
        // The torn tail of this file: the crash cut its last writes. Later files still
        // count (a file is only switched away from once its writes were issued).
        run.file_torn = true;
        DUO_BLOCK_LOG(INFO) << run.file.path << ": log ends at offset "
                            << run.pending_offset + used;
        break;
      }
      run.file_max_gci = std::max(run.file_max_gci, record.header.gci);
      records.push_back(std::move(record));
      used += length;
    }
    Status applied = restore_apply_records(&records);
    if (!applied.ok()) return restore_finished(applied);
  }
  run.file.pending.erase(run.file.pending.begin(),
                         run.file.pending.begin() + static_cast<ptrdiff_t>(used));
  run.pending_offset += used;
  if (clock().now_ns() - run.last_log_ns >= kProgressLogIntervalNs) restore_log_progress(false);
  if (run.file_torn || run.file.offset >= run.file_limit) return restore_file_done();
  send_or_log(address(), Signal(protocol::kLqhContinue, {kContinueRestore, run.generation}));
}

void LocalQueryBlock::restore_file_done() {
  RestoreRun& run = *restore_;
  if (!run.redo_phase && !run.file.pending.empty()) {
    return restore_finished(Status(ErrorCode::kCorruption,
                                   run.file.path + " offset " + std::to_string(run.pending_offset) +
                                       ": chunk cut short at the end of the data"));
  }
  if (run.redo_phase && !run.file_torn && !run.file.pending.empty()) {
    DUO_BLOCK_LOG(INFO) << run.file.path << ": log ends at offset " << run.pending_offset
                        << " (a record cut short)";
  }
  fs::FsCloseReq close_file;
  close_file.handle = run.file.handle;
  fs_request(std::move(close_file).to_signal(), [](Signal&) {});
  if (run.redo_phase) {
    run.old_files.emplace_back(run.redo_files[run.redo_index],
                               RedoFileInfo{run.file.size, run.file_max_gci});
    ++run.redo_index;
  } else {
    ++run.lcp_file_index;
  }
  restore_next_file();
}

Status LocalQueryBlock::restore_apply_chunk(const storage::RowBatch& batch,
                                            const RestoreRun::LcpFile& file, bool deletes) {
  Fragment* fragment = find_fragment(file.table_id, file.fragment_id);
  fragment->set_enforce_unique(false);  // on again in restore_loaded()
  DUO_ASSIGN_OR_RETURN(storage::TxId tx, fragment->begin());
  AttrValues row;
  for (size_t i = 0; i < batch.rows(); ++i) {
    copy_row(batch.row(i), &row);
    // Write, not insert: a row moved during the checkpoint's scan may be in it twice,
    // and an older file of the chain may hold it; the later image is the newer one.
    // A deleted key may be absent (deleted before the oldest file, or twice).
    storage::OpResult result = deletes ? fragment->remove(tx, row) : fragment->write(tx, row);
    if (deletes && result.status.is(ErrorCode::kNotFound)) continue;
    if (!result.status.ok()) {
      fragment->abort(tx).ignore_error();
      return Status(result.status.code(),
                    "restoring " + restore_->file.path + ": " + result.status.message());
    }
  }
  fragment->set_commit_gci(restore_->control->max_gci);
  DUO_RETURN_IF_ERROR(fragment->commit(tx));
  (deletes ? restore_->lcp_deletes : restore_->lcp_rows) += batch.rows();
  return Status::OK();
}

Status LocalQueryBlock::restore_apply_records(std::deque<RedoRecord>* records) {
  RestoreRun& run = *restore_;
  for (const RedoRecord& record : *records) {
    const RedoHeader& h = record.header;
    if (h.gci < run.start_gci || h.gci > run.gci) continue;
    const Table* table = find_table(h.table_id);
    if (table == nullptr || h.table_version > table->def.version) continue;
    Fragment* fragment = find_fragment(h.table_id, h.fragment_id);
    if (fragment == nullptr) continue;
    fragment->set_enforce_unique(false);  // on again in restore_loaded()
    DUO_ASSIGN_OR_RETURN(storage::TxId tx, fragment->begin());
    storage::OpResult result = h.kind == RedoKind::kWriteRow ? fragment->write(tx, record.values)
                                                             : fragment->remove(tx, record.values);
    // Redo is idempotent: deleting a row that is not there is fine.
    if (!result.status.ok() && !result.status.is(ErrorCode::kNotFound)) {
      fragment->abort(tx).ignore_error();
      return Status(result.status.code(),
                    "applying redo of " + run.file.path + ": " + result.status.message());
    }
    fragment->set_commit_gci(h.gci);
    DUO_RETURN_IF_ERROR(fragment->commit(tx));
    ++run.redo_records;
  }
  return Status::OK();
}

void LocalQueryBlock::restore_log_progress(bool final) {
  RestoreRun& run = *restore_;
  const uint64_t now_ns = clock().now_ns();
  run.last_log_ns = now_ns;
  const double seconds = static_cast<double>(now_ns - run.start_ns) / 1e9;
  const double mb = static_cast<double>(run.lcp_bytes) / 1e6;
  const double done = static_cast<double>(run.lcp_bytes + run.redo_bytes);
  const uint64_t percent =
      final ? 100
            : static_cast<uint64_t>(100 * done /
                                    std::max<double>(1, static_cast<double>(run.total_bytes)));
  char text[256];
  std::snprintf(text, sizeof(text),
                "Node %u: log part %u: restored %llu rows from LCP %u (%zu files, %llu keys "
                "deleted, %.1f MB, %.1f MB/s), applied %llu redo records up to GCI %u (%llu%%)",
                unsigned{node_id()}, unsigned{address().instance},
                static_cast<unsigned long long>(run.lcp_rows),
                run.control ? run.control->lcp_id : 0u, run.lcp_files.size(),
                static_cast<unsigned long long>(run.lcp_deletes), mb,
                seconds > 0 ? mb / seconds : 0.0, static_cast<unsigned long long>(run.redo_records),
                run.gci, static_cast<unsigned long long>(std::min<uint64_t>(percent, 100)));
  DUO_BLOCK_LOG(INFO) << text;
}

void LocalQueryBlock::restore_loaded() {
  RestoreRun& run = *restore_;
  restore_log_progress(true);
  if (run.for_node_restart) {
    // A node restart discards these files next (NODE_RESTART_INITREQ), so no
    // checkpoint; unique indexes stay unenforced until the copy has made the rows
    // those of the live replica (NODE_STARTEDREP).
    for (auto& [table_id, table] : tables_) table->restored = true;
    highest_commit_gci_ = std::max(highest_commit_gci_, run.gci);
    return restore_finished(Status::OK());
  }
  for (auto& [table_id, table] : tables_) {
    for (auto& [fragment_id, fragment] : table->fragments) {
      fragment->set_enforce_unique(true);
      // Every delete from here on commits above the restored GCI: the delete log is
      // complete above it, so a later node restart of a peer can copy deletes by key.
      fragment->restart_delete_log(run.gci);
    }
  }
  // The new life logs into new files after every old one; the restore's checkpoint
  // removes the old ones.
  const uint32_t last_old_seq = run.redo_files.empty() ? 0 : run.redo_files.back();
  first_file_seq_of_life_ = last_old_seq + 1;
  redo_.restart_at(first_file_seq_of_life_);
  for (const auto& [seq, info] : run.old_files) redo_.add_old_file(seq, info);
  if (run.control) {
    last_lcp_id_ = run.control->lcp_id;
    control_sequence_ = run.control->sequence;
    // The restore's checkpoint removes the files of this record it does not keep.
    last_control_ = *run.control;
    // The restore point is the empty record itself: it need not be written again.
    empty_control_written_ = run.control->lcp_id == 0;
  }
  highest_commit_gci_ = std::max(highest_commit_gci_, run.gci);
  start_lcp({}, run.gci);
}

void LocalQueryBlock::restore_finished(Status status) {
  const std::unique_ptr<RestoreRun> run = std::move(restore_);
  // A slot's error is reported through the chosen outcome (or moot after an IO error).
  for (const auto& slot : run->slots) {
    if (slot) slot->status().ignore_error();
  }
  if (run->file.handle != 0 && !status.ok()) {
    fs::FsCloseReq close_file;
    close_file.handle = run->file.handle;
    fs_request(std::move(close_file).to_signal(), [](Signal&) {});
  }
  const size_t rows = fragment_stats().rows;
  Signal conf(protocol::kLqhRestoreConf, {run->gci, static_cast<uint32_t>(status.ok() ? rows : 0),
                                          static_cast<uint32_t>(status.code())});
  if (status.ok()) {
    DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": log part " << address().instance
                        << ": restored to GCI " << run->gci << ", " << rows << " rows";
  } else {
    DUO_BLOCK_LOG(ERROR) << "Node " << node_id() << ": log part " << address().instance
                         << ": restore to GCI " << run->gci << " failed: " << status.to_string();
    conf.set_section(Bytes(status.message().begin(), status.message().end()));
  }
  send_or_log(run->requester, std::move(conf));
}

}  // namespace duo::local_query
