// LocalQueryBlock: the redo log's IO — commits feed the buffer (redo_log.h), chunks are
// written to redo/part<P>/<seq>.redo as soon as they are sealed (a few writes in
// flight), and GCP_SAVEREQ makes everything buffered durable before it is answered.
// The redo space check of write operations (NDB error 410, redo_log.h says what is
// counted) and its log lines; checkpoints free the space (local_query_checkpoint.cc).
// Also the plumbing every durable path of the block uses: requests to the node's file
// system block matched to their answers by user_ref.
#include <algorithm>
#include <utility>

#include "ndb-kernel/fs/fs_messages.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::local_query {

using kernel::Signal;
using storage::Fragment;

namespace {

// Redo writes in flight at once: enough to keep a disk busy, few enough that the
// buffer, not the file system's queue, absorbs a burst.
constexpr uint32_t kRedoWritesInFlightMax = 4;

}  // namespace

// ---------------------------------------------------------------------------------------
// File system requests.

void LocalQueryBlock::fs_request(Signal request, FsDone done) {
  const uint32_t user_ref = next_fs_ref_++;
  if (next_fs_ref_ == 0) next_fs_ref_ = 1;
  request.set_word(0, user_ref);
  Status sent = send(local_address(protocol::kFileSystemBlock, 0), std::move(request));
  if (!sent.ok()) {
    Signal ref = fs::FsRef::of(user_ref, sent).to_signal();
    done(ref);
    return;
  }
  fs_waits_.emplace(user_ref, std::move(done));
}

void LocalQueryBlock::on_fs_answer(Signal& signal) {
  auto it = fs_waits_.find(fs::fs_user_ref(signal));
  if (it == fs_waits_.end() || signal.sender().block != protocol::kFileSystemBlock) {
    return log_malformed(signal,
                         Status(ErrorCode::kInvalidArgument, "unexpected file system answer"));
  }
  FsDone done = std::move(it->second);
  fs_waits_.erase(it);
  done(signal);
}

Status LocalQueryBlock::fs_status(Signal& answer) {
  if (answer.id() != protocol::kFsRef) return Status::OK();
  auto ref = fs::FsRef::from_signal(answer);
  if (!ref.ok()) return ref.take_status();
  return ref->to_status();
}

// ---------------------------------------------------------------------------------------
// Commits feed the redo buffer.

Status LocalQueryBlock::commit_fragment(Fragment* fragment, const FragmentTx& ftx, uint32_t gci) {
  Table* table = find_table(ftx.table_id);
  fragment->set_commit_gci(gci);
  RedoChangeSink sink(&redo_, gci, ftx.table_id, table->def.version, ftx.fragment_id);
  // Partial checkpoints record deletes by key: a partial file holds changed rows only,
  // so a row gone since the last checkpoint must be named to go at restore.
  LcpDeleteRecorder recorder(
      &sink, options_.lcp_parts > 1 ? &table->lcp_deleted[ftx.fragment_id] : nullptr, gci);
  fragment->set_change_sink(&recorder);
  Status committed = fragment->commit(ftx.tx);
  fragment->set_change_sink(nullptr);
  if (sink.failures() > 0) {
    DUO_BLOCK_LOG(ERROR) << sink.failures() << " changes of table " << ftx.table_id << " fragment "
                         << ftx.fragment_id << " could not be logged";
  }
  highest_commit_gci_ = std::max(highest_commit_gci_, gci);
  // A commit of an older GCI arriving while a checkpoint scans may have changed a row
  // the scan already passed: redo from its GCI on must then complete the checkpoint.
  if (lcp_ != nullptr && !lcp_->after_restore && gci > 0) {
    lcp_->start_gci = std::min(lcp_->start_gci, gci);
  }
  return committed;
}

// ---------------------------------------------------------------------------------------
// Writing the buffer out.

void LocalQueryBlock::pump_redo() {
  if (!redo_failure_.ok()) return;
  const std::deque<RedoChunk>& chunks = redo_.chunks();
  for (size_t i = 0; i < chunks.size(); ++i) {
    const RedoChunk& chunk = chunks[i];
    if (!chunk.sealed) break;
    if (chunk.in_flight || chunk.written) continue;
    if (redo_writes_in_flight_ >= kRedoWritesInFlightMax) break;
    const uint32_t seq = chunk.file_seq;
    auto [file_it, created] = redo_files_.try_emplace(seq);
    if (created) {
      // A new file: created (or cut, if a crashed life left one of that name) here.
      fs::FsOpenReq open_file;
      open_file.flags = fs::kFsWrite | fs::kFsCreate | fs::kFsTruncate;
      open_file.path = redo_path(address().instance, seq);
      fs_request(std::move(open_file).to_signal(), [this, seq](Signal& answer) {
        Status opened = fs_status(answer);
        if (!opened.ok()) return fail_redo(opened);
        auto conf = fs::FsOpenConf::from_signal(answer);
        if (!conf.ok()) return fail_redo(conf.status());
        redo_files_[seq].handle = conf->handle;
        pump_redo();
      });
    }
    if (file_it->second.handle == 0) break;  // still opening: later chunks wait in order
    const uint64_t id = redo_.first_chunk_id() + i;
    fs::FsWriteReq write;
    write.handle = file_it->second.handle;
    write.offset = chunk.offset;
    write.data = chunk.bytes;  // the buffer keeps its copy until the write is confirmed
    redo_.mark_in_flight(id);
    ++redo_writes_in_flight_;
    ++file_it->second.writes_in_flight;
    file_it->second.dirty = true;
    fs_request(std::move(write).to_signal(),
               [this, id, seq](Signal& answer) { on_redo_write_done(id, seq, answer); });
  }
}

void LocalQueryBlock::on_redo_write_done(uint64_t chunk_id, uint32_t file_seq, Signal& answer) {
  --redo_writes_in_flight_;
  auto file = redo_files_.find(file_seq);
  if (file != redo_files_.end()) --file->second.writes_in_flight;
  Status written = fs_status(answer);
  if (!written.ok()) return fail_redo(written);
  redo_.mark_written(chunk_id);
  pump_redo();
  pump_saves();
}

void LocalQueryBlock::fail_redo(const Status& status) {
  if (!redo_failure_.ok()) return;
  // Without its redo this part cannot make a GCI durable: saves stay unanswered, so the
  // distribution's GCP stalls rather than record a GCI this node does not hold.
  redo_failure_ = status;
  DUO_BLOCK_LOG(ERROR) << "redo log of part " << address().instance
                       << " failed, GCI saves stop: " << status.to_string();
}

// ---------------------------------------------------------------------------------------
// Redo space (NDB error 410).

bool LocalQueryBlock::redo_space_accepts_writes() {
  if (redo_.space_accepting_writes()) return true;
  ++redo_space_refusals_;
  if (!redo_space_refusing_) {
    redo_space_refusing_ = true;
    DUO_BLOCK_LOG(WARNING) << "Node " << node_id() << ": log part " << address().instance
                           << ": redo log files overloaded, " << (redo_.held_space_bytes() >> 10)
                           << " of " << (redo_.space_bytes() >> 10)
                           << " KiB held: write operations refused until a checkpoint "
                              "frees files (NDB error 410)";
  }
  // The checkpoint that frees files may not have started yet (none since the last one).
  maybe_start_lcp();
  return false;
}

void LocalQueryBlock::note_redo_space_freed() {
  if (!redo_space_refusing_ || !redo_.space_accepting_writes()) return;
  redo_space_refusing_ = false;
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": log part " << address().instance
                      << ": redo log files no longer overloaded, "
                      << (redo_.held_space_bytes() >> 10) << " of " << (redo_.space_bytes() >> 10)
                      << " KiB held; " << redo_space_refusals_
                      << " write operations refused so far";
}

// ---------------------------------------------------------------------------------------
// Global checkpoint saves.

void LocalQueryBlock::on_gcp_save(Signal& signal) {
  GcpSave save;
  save.gci = signal.word(0);
  save.requester = signal.sender();
  // Every record of this GCI is in the buffer already (the coordinator committed the
  // GCI before the distribution asked), so the current end of the log covers it.
  save.lsn = redo_.appended_lsn();
  saves_.push_back(save);
  // Every participant of a transaction of this GCI has committed it by now (the GCP's
  // commit phase waited for them, and for any takeover): no takeover will ask.
  forget_commits(save.gci);
  redo_.seal_open_chunk();
  pump_redo();
  pump_saves();
  // While writes are refused for redo space no commit asks for the checkpoint that
  // frees files; a new GCI may let one free more.
  maybe_start_lcp();
}

void LocalQueryBlock::pump_saves() {
  for (;;) {
    if (sync_round_pending_ > 0) return;
    // Answer, in order, every save the rounds so far made durable.
    while (!saves_.empty() && saves_.front().lsn <= synced_lsn_) {
      const GcpSave save = saves_.front();
      saves_.pop_front();
      saved_gci_ = std::max(saved_gci_, save.gci);
      send_or_log(save.requester, Signal(protocol::kGcpSaveConf, {save.gci}));
    }
    if (!lcp_requesters_.empty() && lcp_ == nullptr && restore_ == nullptr && lcp_may_start()) {
      // The first checkpoint after a node restart waited for this save.
      start_lcp(std::exchange(lcp_requesters_, {}), std::nullopt);
    }
    if (lcp_ != nullptr && lcp_->waiting_for_gcp && saved_gci_ >= lcp_->max_gci + 2) {
      lcp_->waiting_for_gcp = false;
      lcp_write_control();
    }
    if (saves_.empty() || !redo_failure_.ok() || redo_.written_lsn() < saves_.front().lsn) return;
    // A sync round: everything written so far becomes durable once every file written
    // since its last sync is synced (requests on one handle run in order, so each sync
    // covers the writes confirmed before it).
    sync_round_lsn_ = redo_.written_lsn();
    for (auto& [seq, file] : redo_files_) {
      if (file.handle == 0 || !file.dirty) continue;
      file.dirty = false;
      ++sync_round_pending_;
      fs::FsSyncReq sync;
      sync.handle = file.handle;
      fs_request(std::move(sync).to_signal(),
                 [this](Signal& answer) { on_redo_sync_done(answer); });
    }
    if (sync_round_pending_ > 0) return;
    synced_lsn_ = std::max(synced_lsn_, sync_round_lsn_);
  }
}

void LocalQueryBlock::on_redo_sync_done(Signal& answer) {
  --sync_round_pending_;
  Status synced = fs_status(answer);
  if (!synced.ok()) return fail_redo(synced);
  if (sync_round_pending_ > 0) return;
  synced_lsn_ = std::max(synced_lsn_, sync_round_lsn_);
  // Files switched away from are complete once synced with nothing left to write.
  for (auto it = redo_files_.begin(); it != redo_files_.end();) {
    const uint32_t seq = it->first;
    const RedoFileIo& file = it->second;
    const bool pending = std::any_of(redo_.chunks().begin(), redo_.chunks().end(),
                                     [&](const RedoChunk& c) { return c.file_seq == seq; });
    if (seq == redo_.current_file_seq() || file.handle == 0 || file.dirty ||
        file.writes_in_flight > 0 || pending) {
      ++it;
      continue;
    }
    fs::FsCloseReq close_file;
    close_file.handle = file.handle;
    fs_request(std::move(close_file).to_signal(), [this](Signal& closed) {
      Status status = fs_status(closed);
      if (!status.ok()) {
        DUO_BLOCK_LOG(WARNING) << "closing a redo file: " << status.to_string();
      }
    });
    it = redo_files_.erase(it);
  }
  pump_saves();
}

}  // namespace duo::local_query
