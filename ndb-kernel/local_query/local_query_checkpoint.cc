// LocalQueryBlock: local checkpoints (LCP) of a log part, full or partial (checkpoint.h
// says what a partial file holds and why its chain restores exactly). Each fragment's
// file — its deleted keys first, then its committed rows (all, or the changed ones and
// one row-ref part) scanned in slices (one per LQH_CONTINUE, so key operations are
// served in between) — goes to lcp/part<P>/<id>/T<t>F<f>.data, each file synced; then
// the control record naming every fragment's chain is written and synced, and only
// then are the files no chain needs any more and the redo files the checkpoint made
// useless removed (docs/formats/redo-and-lcp.md). Chunk writes are held to the
// instance's share of the node's checkpoint write rate (MaxDiskWriteSpeed and family,
// checkpoint_rate.h): a slice over the 100 ms budget comes back as a delayed signal.
#include <algorithm>
#include <functional>
#include <iomanip>
#include <memory>
#include <sstream>
#include <utility>

#include "ndb-kernel/fs/fs_messages.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "storage/row/column.h"

namespace duo::local_query {

using kernel::BlockAddress;
using kernel::Signal;
using storage::Fragment;

namespace {

// Bound on the encoded size of one whole row in a RowBatch: its start index, every
// value's framing and largest size, never more than a row can hold. A chunk is filled
// in steps that cannot pass kLcpChunkFillBytes by more than one row.
size_t full_row_bytes_max(const storage::TableSchema& schema) {
  size_t framing = 4;
  size_t data = 0;
  for (const storage::ColumnDef& column : schema.columns) {
    framing += 4;
    data += storage::column_max_size(column);
  }
  return framing + std::min<size_t>(data, storage::kMaxRowSizeBytes);
}

size_t encoded_values_bytes(const storage::AttrValues& values, size_t first) {
  size_t bytes = 0;
  for (size_t i = first; i < values.size(); ++i) {
    const storage::AttrValues::Entry& entry = values.entry(i);
    bytes += entry.is_null ? 2 : 4 + entry.size;
  }
  return bytes;
}

// Fill of the redo space (redo_log.h) from which a checkpoint starts by itself and
// writes unthrottled: half way to the 3/4 at which writes are refused (NDB error 410).
constexpr double kRedoSpaceLcpFill = 0.5;

}  // namespace

void LocalQueryBlock::on_lcp_start(Signal& signal) {
  // One checkpoint at a time. A request during one (or during a restore) gets the next
  // one, which starts after it: "checkpoint now" must cover what it saw committed.
  if (lcp_ != nullptr || restore_ != nullptr || !lcp_may_start()) {
    lcp_requesters_.push_back(signal.sender());
    return;
  }
  start_lcp({signal.sender()}, std::nullopt);
}

bool LocalQueryBlock::lcp_may_start() const {
  // After a node restart, every commit of the GCIs the copy ran in must be in memory
  // first: the checkpoint then needs no redo of them (see lcp_min_start_gci_).
  return lcp_min_start_gci_ == 0 || saved_gci_ + 1 >= lcp_min_start_gci_;
}

void LocalQueryBlock::on_continue(Signal& signal) {
  if (signal.sender() != address()) {
    return log_malformed(signal, Status(ErrorCode::kInvalidArgument, "not this block's own slice"));
  }
  const uint32_t kind = signal.word(0);
  const uint32_t generation = signal.word(1);
  if (kind == kContinueLcp && lcp_ != nullptr && lcp_->generation == generation) return lcp_slice();
  if (kind == kContinueRestore && restore_ != nullptr && restore_->generation == generation) {
    return restore_read_more();
  }
  if (kind == kContinueAlter) return on_alter_wait_over(generation);
  if (kind == kContinueCopy) {
    if (copy_ != nullptr && copy_->generation == generation && !copy_->batch_in_flight) {
      copy_slice();
    }
    return;
  }
  if (kind == kContinueCopyWrite) {
    for (const auto& [source_node, write] : copy_writes_) {
      if (write.generation == generation) return copy_write(source_node);
    }
    return;
  }
  // A slice of a run that ended (failed) meanwhile: nothing to do.
}

void LocalQueryBlock::maybe_start_lcp() {
  // A copying part's checkpoint would hold a partial copy: the one after the node
  // restart (LCP_STARTREQ) is the first that counts.
  if (lcp_ != nullptr || restore_ != nullptr || copying_ || !lcp_may_start()) return;
  const uint64_t redo_since_start = redo_.appended_lsn() - lcp_start_lsn_;
  const bool redo_enough =
      options_.lcp_redo_bytes != 0 && redo_since_start >= options_.lcp_redo_bytes;
  // The redo files half full (writes are refused at 3/4): a checkpoint now frees the
  // files before then, whatever lcp_redo_bytes says. Only with redo logged since the
  // last one started: without, another one could free nothing more.
  const bool space_filling = redo_.space_fill() >= kRedoSpaceLcpFill && redo_since_start > 0;
  if (!redo_enough && !space_filling) return;
  start_lcp({}, std::nullopt);
}

void LocalQueryBlock::start_lcp(std::vector<BlockAddress> requesters,
                                std::optional<uint32_t> restore_gci) {
  lcp_ = std::make_unique<LcpRun>();
  LcpRun& run = *lcp_;
  run.lcp_id = last_lcp_id_ + 1;
  run.generation = ++continue_generation_;
  run.requesters = std::move(requesters);
  // Full for every fragment: without partial checkpoints or a chain to continue, for
  // the restore's own checkpoint (its rows carry the restore point's GCI, and the
  // crashed life's files go), and during or right after a node restart's copy (copied
  // rows were written without redo and keep their source's GCI).
  run.all_full = options_.lcp_parts <= 1 || restore_gci.has_value() || last_control() == nullptr ||
                 copying_ || lcp_after_copy_full_;
  // Only a full checkpoint started after the copy holds every copied row: rows the copy
  // wrote behind a scan running during it are in no checkpoint and no redo.
  run.full_after_copy = !copying_ && run.all_full;
  // The node is not recoverable on its own until this checkpoint completes: it goes at
  // the restart's write rate (MaxDiskWriteSpeedOwnRestart).
  run.own_restart = restore_gci.has_value() || copying_ || lcp_after_copy_full_;
  if (copying_) lcp_after_copy_full_ = true;
  if (restore_gci) {
    // Nothing commits during a restore: the checkpoint holds exactly GCIs <= g, and the
    // new life's redo (GCIs > g) completes it.
    run.after_restore = true;
    run.start_gci = *restore_gci + 1;
    run.max_gci = *restore_gci;
  } else {
    // Every commit of a GCI this part saved arrived before its GCP_SAVEREQ (the GCP's
    // commit phase waited for all of them), so it is in this scan: redo from the GCI
    // after the saved one completes the checkpoint too. Without that a GCI whose redo
    // alone fills the redo files would keep them full while writes are refused and
    // nothing commits in a newer GCI (NDB error 410 for good).
    run.start_gci =
        std::max<uint32_t>({highest_commit_gci_, saved_gci_ + 1, 1, lcp_min_start_gci_});
  }
  for (const auto& [table_id, table] : tables_) {
    if (table->lcp_serial == 0) table->lcp_serial = ++lcp_serial_;
    for (const auto& [fragment_id, fragment] : table->fragments) {
      run.todo.emplace_back(table_id, fragment_id);
    }
  }
  lcp_start_lsn_ = redo_.appended_lsn();
  run.start_ns = clock().now_ns();
  run.write.lcp_id = run.lcp_id;
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": log part " << address().instance << ": LCP "
                      << run.lcp_id << " started, " << run.todo.size() << " fragments, GCI "
                      << run.start_gci
                      << (run.all_full ? ", full" : ", partial where a chain goes on");
  lcp_next_fragment();
}

const LcpControl* LocalQueryBlock::last_control() const {
  // A node restart starts the part's checkpoints over (lcp id and sequence 0): the
  // record kept from before names files that are gone.
  if (last_lcp_id_ == 0 || last_control_.lcp_id != last_lcp_id_ ||
      last_control_.sequence != control_sequence_) {
    return nullptr;
  }
  return &last_control_;
}

std::vector<LcpDataFile> LocalQueryBlock::lcp_chain_to_continue(const Table& table,
                                                                uint32_t fragment_id) const {
  const LcpControl* previous = last_control();
  if (lcp_->all_full || previous == nullptr || !table.lcp_in_last.contains(fragment_id)) return {};
  // The partial file needs every key deleted since the previous checkpoint started.
  auto deleted = table.lcp_deleted.find(fragment_id);
  if (deleted != table.lcp_deleted.end() &&
      !deleted->second.complete_since(std::max<uint32_t>(previous->start_gci, 1))) {
    return {};
  }
  for (const LcpFragmentInfo& info : previous->fragments) {
    if (info.table_id != table.def.schema.table_id || info.fragment_id != fragment_id) continue;
    if (info.table_version != table.def.version) return {};
    // A changed part count starts over with a full file.
    for (const LcpDataFile& file : info.files) {
      if (!file.full() && file.parts != options_.lcp_parts) return {};
    }
    return info.files;
  }
  return {};
}

void LocalQueryBlock::lcp_next_fragment() {
  LcpRun& run = *lcp_;
  while (run.next < run.todo.size()) {
    const auto [table_id, fragment_id] = run.todo[run.next++];
    Table* table = find_table(table_id);
    Fragment* fragment = find_fragment(table_id, fragment_id);
    if (fragment == nullptr) continue;  // dropped since the checkpoint started
    run.current = LcpFragmentInfo{table_id, table->def.version, fragment_id,
                                  lcp_chain_to_continue(*table, fragment_id)};
    run.written_serials[{table_id, fragment_id}] = table->lcp_serial;
    run.current_dropped = false;
    run.file = LcpDataFile{};
    run.file.lcp_id = run.lcp_id;
    run.delete_chunks.clear();
    Fragment::ScanSpec spec;
    if (!run.current.files.empty()) {
      // Partial: the keys deleted since the previous checkpoint started (every one
      // deleted later commits in a GCI >= this checkpoint's start GCI: redo has it),
      // then the rows changed since, and every row of this checkpoint's part.
      run.file.parts = options_.lcp_parts;
      run.file.all_part = run.lcp_id % options_.lcp_parts;
      spec.min_gci = std::max<uint32_t>(last_control()->start_gci, 1);
      spec.parts = run.file.parts;
      spec.always_part = run.file.all_part;
      auto deleted = table->lcp_deleted.find(fragment_id);
      if (deleted != table->lcp_deleted.end()) {
        for (const storage::RowBatch& keys : deleted->second.batches_since(spec.min_gci)) {
          Bytes chunk;
          Status encoded = encode_lcp_chunk(keys, options_.compress_lcp, &chunk);
          if (!encoded.ok()) return fail_lcp(encoded);
          run.file.deleted_keys += keys.rows();
          run.delete_chunks.push_back(std::move(chunk));
        }
      }
    } else if (options_.lcp_parts > 1) {
      // A full file needs no delete records: keys dropped so far go with it.
      table->lcp_deleted[fragment_id].full_file_started();
    }
    auto scan = fragment->open_scan(std::move(spec));
    if (!scan.ok()) return fail_lcp(scan.status());
    run.scan = std::move(scan).value();
    fs::FsOpenReq open_file;
    open_file.flags = fs::kFsWrite | fs::kFsCreate | fs::kFsTruncate;
    open_file.path = lcp_data_path(address().instance, run.lcp_id, table_id, fragment_id);
    const uint32_t generation = run.generation;
    fs_request(std::move(open_file).to_signal(), [this, generation](Signal& answer) {
      if (lcp_ == nullptr || lcp_->generation != generation) return;
      Status opened = fs_status(answer);
      if (!opened.ok()) return fail_lcp(opened);
      auto conf = fs::FsOpenConf::from_signal(answer);
      if (!conf.ok()) return fail_lcp(conf.status());
      lcp_->handle = conf->handle;
      lcp_slice();
    });
    return;
  }
  run.write.write_ns = clock().now_ns() - run.start_ns;
  // Every fragment is written. The rows scanned carry GCIs up to max_gci, so the
  // checkpoint can only serve a restart to max_gci or later. It becomes the restore
  // point (and the previous one goes) only once this part answered a GCP_SAVEREQ of
  // max_gci + 2 or later: the master saves a GCI only after the round before it is
  // complete on every node, so max_gci's round completed (and was recorded by every
  // node) a whole round earlier — a GCI the cluster can restart to.
  if (!run.after_restore) {
    run.max_gci = highest_commit_gci_;
    if (run.max_gci > 0 && saved_gci_ < run.max_gci + 2) {
      run.waiting_for_gcp = true;
      return;
    }
  }
  lcp_write_control();
}

void LocalQueryBlock::lcp_slice() {
  LcpRun& run = *lcp_;
  if (run.current_dropped) {
    // The table went while its file was written: the file goes with it.
    fs::FsCloseReq close_file;
    close_file.handle = run.handle;
    close_file.flags = fs::kFsRemoveAfter;
    run.handle = 0;
    fs_request(std::move(close_file).to_signal(), [](Signal&) {});
    return lcp_next_fragment();
  }
  if (lcp_wait_for_budget()) return;
  const uint64_t offset = run.file.data_bytes;
  if (!run.delete_chunks.empty()) {
    // The deleted keys lead the file: a restore applies them before the rows.
    Bytes chunk = std::move(run.delete_chunks.front());
    run.delete_chunks.pop_front();
    run.file.delete_bytes += chunk.size();
    run.file.data_bytes += chunk.size();
    return lcp_write_chunk(offset, std::move(chunk));
  }
  const Fragment* fragment = find_fragment(run.current.table_id, run.current.fragment_id);
  const size_t row_max = full_row_bytes_max(fragment->schema());
  storage::RowBatch batch;
  size_t bytes = 8;
  while (batch.rows() < options_.lcp_slice_rows && !run.scan->done() &&
         bytes < kLcpChunkFillBytes) {
    const size_t room = (kLcpChunkFillBytes - bytes) / row_max;
    const size_t step = std::clamp<size_t>(room, 1, options_.lcp_slice_rows - batch.rows());
    const size_t first_value = batch.values().size();
    auto produced = run.scan->next(step, &batch);
    if (!produced.ok()) return fail_lcp(produced.status());
    bytes += 4 * *produced + encoded_values_bytes(batch.values(), first_value);
    if (*produced == 0) break;
  }
  if (batch.rows() == 0) return lcp_fragment_written();
  Bytes chunk;
  Status encoded = encode_lcp_chunk(batch, options_.compress_lcp, &chunk);
  if (!encoded.ok()) return fail_lcp(encoded);
  run.file.data_bytes += chunk.size();
  run.file.rows += batch.rows();
  lcp_write_chunk(offset, std::move(chunk));
}

LcpSpeed LocalQueryBlock::lcp_write_speed() const {
  // The redo files half full: until this checkpoint frees some, writes are about to be
  // refused (NDB error 410), which costs more than any disk bandwidth it takes.
  if (options_.lcp_write_speeds.limited() && redo_.space_fill() >= kRedoSpaceLcpFill) {
    return LcpSpeed{0, LcpSpeedReason::kRedoOverflowing};
  }
  LcpSpeedInputs inputs;
  inputs.own_restart = copying_ || (lcp_ != nullptr && lcp_->own_restart);
  inputs.other_node_restart = std::any_of(starting_nodes_.begin(), starting_nodes_.end(),
                                          [this](uint16_t node) { return node != node_id(); });
  // Redo writes lagging behind (the buffer half full, refusals start at 3/4): the disk
  // is busy with what every commit waits for.
  inputs.redo_backlog = redo_.buffered_bytes() * 2 > options_.redo_buffer_bytes;
  inputs.redo_bytes_since_start = redo_.appended_lsn() - lcp_start_lsn_;
  return choose_lcp_write_speed(options_.lcp_write_speeds, inputs);
}

bool LocalQueryBlock::lcp_wait_for_budget() {
  LcpRun& run = *lcp_;
  const LcpSpeed speed = lcp_write_speed();
  run.write.last_speed = speed;
  run.write.strongest_reason = std::max(run.write.strongest_reason, speed.reason);
  const uint64_t now_ns = clock().now_ns();
  const uint64_t wait_ns = lcp_budget_.wait_ns(now_ns, speed.bytes_per_s);
  if (wait_ns == 0) return false;
  // The budget is per slice of the clock: wake up at (or just after) the slice whose
  // budget the carried excess leaves room in.
  const uint64_t wait_ms = (wait_ns + kNanosPerMilli - 1) / kNanosPerMilli;
  run.write.waited_ns += wait_ms * kNanosPerMilli;
  Status sent = send_delayed(
      address(), Signal(protocol::kLqhContinue, {kContinueLcp, run.generation}), wait_ms);
  if (!sent.ok()) fail_lcp(sent);
  return true;
}

void LocalQueryBlock::lcp_write_chunk(uint64_t offset, Bytes chunk) {
  lcp_budget_.charge(chunk.size());
  lcp_->write.bytes += chunk.size();
  fs::FsWriteReq write;
  write.handle = lcp_->handle;
  write.offset = offset;
  write.data = std::move(chunk);
  const uint32_t generation = lcp_->generation;
  fs_request(std::move(write).to_signal(), [this, generation](Signal& answer) {
    if (lcp_ == nullptr || lcp_->generation != generation) return;
    Status written = fs_status(answer);
    if (!written.ok()) return fail_lcp(written);
    if (lcp_->current_dropped || !lcp_->scan->done()) {
      // The next slice comes as a signal of its own, behind whatever queued meanwhile.
      send_or_log(address(), Signal(protocol::kLqhContinue, {kContinueLcp, generation}));
      return;
    }
    lcp_fragment_written();
  });
}

void LocalQueryBlock::lcp_fragment_written() {
  LcpRun& run = *lcp_;
  run.scan.reset();
  const uint32_t generation = run.generation;
  fs::FsSyncReq sync;
  sync.handle = run.handle;
  fs_request(std::move(sync).to_signal(), [this, generation](Signal& answer) {
    if (lcp_ == nullptr || lcp_->generation != generation) return;
    Status synced = fs_status(answer);
    if (!synced.ok()) return fail_lcp(synced);
    fs::FsCloseReq close_file;
    close_file.handle = lcp_->handle;
    lcp_->handle = 0;
    fs_request(std::move(close_file).to_signal(), [](Signal&) {});
    LcpRun& r = *lcp_;
    r.current.files.push_back(r.file);
    trim_lcp_chain(&r.current.files);
    r.done.push_back(std::move(r.current));
    r.rows += r.file.rows;
    if (!r.file.full()) ++r.partial_files;
    lcp_next_fragment();
  });
}

void LocalQueryBlock::lcp_write_control() {
  LcpRun& run = *lcp_;
  LcpControl control;
  control.sequence = control_sequence_ + 1;
  control.lcp_id = run.lcp_id;
  control.start_gci = run.start_gci;
  control.max_gci = run.max_gci;
  control.fragments = run.done;
  const uint32_t generation = run.generation;
  auto written = [this, generation, kept = control](Status status) mutable {
    if (lcp_ == nullptr || lcp_->generation != generation) return;
    if (!status.ok()) return fail_lcp(status);
    // The checkpoint is the restore point from here on.
    std::optional<LcpControl> replaced;
    if (const LcpControl* previous = last_control()) replaced = *previous;
    control_sequence_ = kept.sequence;
    lcp_remove_old_files(std::move(replaced), std::move(kept));
  };
  if (control_sequence_ != 0 || empty_control_written_) {
    return write_control_record(std::move(control), std::move(written));
  }
  // The part's first checkpoint: a crash while its record is written must leave a valid
  // slot saying "no checkpoint, all redo" (which is still true then), or the torn record
  // would be the only one. The empty record is one sector: it is never torn itself.
  write_control_record(LcpControl{}, [this, generation, control = std::move(control),
                                      written = std::move(written)](Status status) mutable {
    if (lcp_ == nullptr || lcp_->generation != generation) return;
    if (!status.ok()) return fail_lcp(status);
    empty_control_written_ = true;
    write_control_record(std::move(control), std::move(written));
  });
}

void LocalQueryBlock::write_control_record(LcpControl control, std::function<void(Status)> done) {
  Bytes bytes = encode_lcp_control(control);
  fs::FsOpenReq open_file;
  // Truncating this slot is safe: the other one, the restore point until this one is
  // synced, stays intact, and a torn write here fails its crc at restore.
  open_file.flags = fs::kFsWrite | fs::kFsCreate | fs::kFsTruncate;
  open_file.path = lcp_control_path(address().instance, control.sequence);
  auto finish = std::make_shared<std::function<void(Status)>>(std::move(done));
  fs_request(std::move(open_file).to_signal(), [this, finish,
                                                bytes = std::move(bytes)](Signal& answer) {
    Status opened = fs_status(answer);
    auto conf = opened.ok() ? fs::FsOpenConf::from_signal(answer) : Result<fs::FsOpenConf>(opened);
    if (!conf.ok()) return (*finish)(conf.status());
    const uint32_t handle = conf->handle;
    // Writes and the sync on one handle run in order: the sync's answer comes last.
    auto write_error = std::make_shared<Status>();
    for (size_t at = 0; at < bytes.size(); at += fs::kFsReadBytesMax) {
      fs::FsWriteReq write;
      write.handle = handle;
      write.offset = at;
      const size_t end = std::min<size_t>(bytes.size(), at + fs::kFsReadBytesMax);
      write.data.assign(bytes.begin() + static_cast<ptrdiff_t>(at),
                        bytes.begin() + static_cast<ptrdiff_t>(end));
      fs_request(std::move(write).to_signal(), [write_error](Signal& written) {
        Status status = fs_status(written);
        if (!status.ok() && write_error->ok()) *write_error = status;
      });
    }
    fs::FsSyncReq sync;
    sync.handle = handle;
    fs_request(std::move(sync).to_signal(), [this, finish, handle, write_error](Signal& synced) {
      fs::FsCloseReq close_file;
      close_file.handle = handle;
      fs_request(std::move(close_file).to_signal(), [](Signal&) {});
      Status status = fs_status(synced);
      if (!write_error->ok()) return (*finish)(*write_error);
      (*finish)(status);
    });
  });
}

void LocalQueryBlock::lcp_remove_old_files(std::optional<LcpControl> replaced, LcpControl control) {
  LcpRun& run = *lcp_;
  const uint32_t previous_lcp_id = last_lcp_id_;
  last_lcp_id_ = run.lcp_id;
  // What the next partial checkpoint builds on: this record, each fragment's deleted
  // keys from this checkpoint's start GCI on, and which fragments it holds.
  for (auto& [table_id, table] : tables_) {
    table->lcp_in_last.clear();
    for (auto& [fragment_id, deleted] : table->lcp_deleted) deleted.forget_before(run.start_gci);
  }
  std::set<uint32_t> kept_dirs;
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> kept_files;  // (lcp id, table, fragment)
  for (const LcpFragmentInfo& info : control.fragments) {
    Table* table = find_table(info.table_id);
    if (table != nullptr && table->lcp_serial != 0 &&
        run.written_serials[{info.table_id, info.fragment_id}] == table->lcp_serial) {
      table->lcp_in_last.insert(info.fragment_id);
    }
    for (const LcpDataFile& file : info.files) {
      kept_dirs.insert(file.lcp_id);
      kept_files.emplace(file.lcp_id, info.table_id, info.fragment_id);
    }
  }
  if (run.full_after_copy) lcp_after_copy_full_ = false;
  last_control_ = std::move(control);
  // The files of the replaced record no chain names any more: whole directories where
  // none of their files is kept, single files otherwise.
  std::vector<std::string> paths;
  std::set<uint32_t> old_dirs;
  if (previous_lcp_id != 0) old_dirs.insert(previous_lcp_id);
  if (replaced) {
    for (const LcpFragmentInfo& info : replaced->fragments) {
      for (const LcpDataFile& file : info.files) {
        old_dirs.insert(file.lcp_id);
        if (kept_dirs.contains(file.lcp_id) &&
            !kept_files.contains({file.lcp_id, info.table_id, info.fragment_id})) {
          paths.push_back(
              lcp_data_path(address().instance, file.lcp_id, info.table_id, info.fragment_id));
        }
      }
    }
  }
  for (uint32_t lcp_id : old_dirs) {
    if (!kept_dirs.contains(lcp_id) && lcp_id != run.lcp_id) {
      paths.push_back(lcp_dir(address().instance, lcp_id));
    }
  }
  // After the first checkpoint the empty record ("all redo") in slot 0 turns false as
  // soon as redo goes: remove it, so a damaged slot 1 is reported, never silently
  // replaced by a restore from partial redo.
  if (control_sequence_ == 1) paths.push_back(lcp_control_path(address().instance, 0));
  // Redo the checkpoint made useless: every record older than its start GCI (after a
  // restore: the whole crashed life). A file still open or buffered is never removed.
  std::vector<uint32_t> removed_seqs;
  for (const auto& [seq, info] : redo_.files()) {
    if (seq == redo_.current_file_seq() || redo_files_.contains(seq)) continue;
    const bool buffered = std::any_of(redo_.chunks().begin(), redo_.chunks().end(),
                                      [&](const RedoChunk& c) { return c.file_seq == seq; });
    if (buffered) continue;
    const bool old_life = seq < first_file_seq_of_life_;
    if (run.after_restore ? old_life : info.max_gci < run.start_gci) removed_seqs.push_back(seq);
  }
  // A redo file's space (the 410 bound, redo_log.h) is free once it is gone from the
  // disk, not before: the log forgets it when its removal is confirmed.
  std::vector<uint32_t> redo_seq_of_path(paths.size(), 0);
  for (uint32_t seq : removed_seqs) {
    paths.push_back(redo_path(address().instance, seq));
    redo_seq_of_path.push_back(seq);
  }
  if (paths.empty()) return lcp_finished();
  run.removals_pending = static_cast<uint32_t>(paths.size());
  const uint32_t generation = run.generation;
  for (size_t i = 0; i < paths.size(); ++i) {
    fs::FsRemoveReq remove_path;
    remove_path.flags = fs::kFsRecursive;
    remove_path.path = std::move(paths[i]);
    const uint32_t redo_seq = redo_seq_of_path[i];
    const uint32_t redo_life = redo_.life();
    fs_request(std::move(remove_path).to_signal(),
               [this, generation, redo_seq, redo_life](Signal& answer) {
                 Status removed = fs_status(answer);
                 // A file left behind costs only space; the next checkpoint tries again.
                 if (!removed.ok()) {
                   DUO_BLOCK_LOG(WARNING) << "LCP cleanup: " << removed.to_string();
                 } else if (redo_seq != 0 && redo_.life() == redo_life) {
                   redo_.forget_file(redo_seq);
                 }
                 if (lcp_ == nullptr || lcp_->generation != generation) return;
                 if (--lcp_->removals_pending == 0) lcp_finished();
               });
  }
}

void LocalQueryBlock::lcp_finished() {
  const std::unique_ptr<LcpRun> run = std::move(lcp_);
  last_lcp_write_ = run->write;
  const LcpWriteStats& write = run->write;
  std::ostringstream rate;
  rate << std::fixed << std::setprecision(1) << static_cast<double>(write.bytes) / 1e6 << " MB in "
       << std::setprecision(2) << static_cast<double>(write.write_ns) / 1e9 << " s, "
       << std::setprecision(1) << write.achieved_mb_per_s() << " MB/s, limit ";
  if (write.last_speed.bytes_per_s == 0) {
    rate << "none";
  } else {
    rate << static_cast<double>(write.last_speed.bytes_per_s) / 1e6 << " MB/s";
  }
  rate << " (" << lcp_speed_reason_name(write.last_speed.reason);
  if (write.strongest_reason != write.last_speed.reason) {
    rate << ", " << lcp_speed_reason_name(write.strongest_reason) << " at times";
  }
  rate << "), waited " << std::setprecision(2) << static_cast<double>(write.waited_ns) / 1e9
       << " s";
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": log part " << address().instance << ": LCP "
                      << run->lcp_id << " complete, " << run->rows << " rows in "
                      << run->done.size() << " fragments (" << run->partial_files
                      << " partial), redo kept from GCI " << run->start_gci << ", " << rate.str();
  for (const BlockAddress& requester : run->requesters) {
    send_or_log(requester, Signal(protocol::kLcpStartConf,
                                  {run->lcp_id, static_cast<uint32_t>(run->rows), 0}));
  }
  if (run->after_restore) restore_finished(Status::OK());
  note_redo_space_freed();
  if (!lcp_requesters_.empty() && lcp_ == nullptr && restore_ == nullptr && lcp_may_start()) {
    start_lcp(std::exchange(lcp_requesters_, {}), std::nullopt);
  }
  // Redo logged during this one may already fill the files again.
  maybe_start_lcp();
}

void LocalQueryBlock::fail_lcp(const Status& status) {
  const std::unique_ptr<LcpRun> run = std::move(lcp_);
  DUO_BLOCK_LOG(ERROR) << "Node " << node_id() << ": log part " << address().instance << ": LCP "
                       << run->lcp_id << " failed: " << status.to_string();
  if (run->handle != 0) {
    fs::FsCloseReq close_file;
    close_file.handle = run->handle;
    fs_request(std::move(close_file).to_signal(), [](Signal&) {});
  }
  for (const BlockAddress& requester : run->requesters) {
    send_or_log(requester, Signal(protocol::kLcpStartConf,
                                  {run->lcp_id, 0, static_cast<uint32_t>(status.code())}));
  }
  if (run->after_restore) restore_finished(status);
}

}  // namespace duo::local_query
