// LocalQueryBlock: node restart (NDB's DBLQH part of a node restart; the protocol is in
// docs/formats/kernel-protocol.md "Node restart").
//
// On the starting node S: NODE_RESTART_INITREQ ends the old life's files (the checkpoint
// and redo of this part) and puts the part in copying state. Without kNodeRestartKeep-
// Restored (an initial node restart, or a disk that is no full replica) it also drops
// every table: the schema then arrives (TABLE_ADDREQ) and every row is copied. With it,
// the rows S restored from its own disk to GCI G just before (LQH_RESTOREREQ with
// kRestoreForNodeRestart, restore.cc) stay, and the answer names the tables they belong
// to (those the schema copy kept: same id and version as the cluster's). Every write of
// S's fragments comes down the chain to S last. While copying, an operation on a row S
// does not have yet is lenient, and COPY_ROWSREQ batches from the live replica are
// written (insert-or-overwrite, committed at once, no redo: the checkpoint S takes after
// NODE_STARTEDREP covers them).
//
// On a live replica: COPY_NODEREQ{S, G, restored tables} copies every fragment whose
// live chain starts here and holds S. For a fragment of a table S restored, whose delete
// log (storage::Fragment) reaches back to G, the copy sends only what changed since G:
// a committed scan with min_gci G + 1 finds the rows whose GCI is above G (unchanged
// rows are skipped in the slot walk, not even read by key), each is taken again by key
// under a shared lock in a copy storage transaction and goes whole with its GCI; a row a
// writer holds is retried a little later (the copy never waits, so it cannot deadlock
// with writers). A batch's locks are released once S confirmed it. Then the keys the log
// holds as deleted with a GCI above G (taken when the fragment's copy started) go in
// kCopyRowsDeletedKeys batches, and an end batch (kCopyRowsFragmentEnd |
// kCopyRowsDeletesSent) ends the fragment. When the log does not reach back to G (this
// node restored or copied the fragment itself since, or more was deleted than the log
// holds), every row is scanned instead: a row whose GCI is at most G goes as its key
// alone ("unchanged, keep it", without a lock) and S sweeps at the end batch. A table S
// did not restore (an initial restart, or re-created since) is copied whole.
//
// On S, a whole row is written and keeps the source's GCI; a whole row or a key marks
// the row seen (a key of a row S lacks is ignored: a delete down the chain came first).
// A deleted key deletes S's row if its GCI is at most G (a row with a newer GCI was
// written since, by the copy or down the chain: the live replica's current row). A
// sweep deletes every row not seen whose GCI is at most G. Either way a candidate a
// transaction holds makes the batch run again 2 ms later (its commit gives it a GCI
// above G: kept; its abort leaves the old row: deleted), so the batch is answered only
// once it is done; the end clears the marks.
//
// Why S ends with exactly the live replica's rows. (1) S restored the committed state as
// of G: every transaction commits in one GCI on every replica, and S was a replica
// through G. (2) A row's GCI is never below its last change: commits write the commit's
// GCI, a restore gives checkpoint rows the checkpoint's max GCI and redo rows their
// record's, a copied row keeps its source's. So a row with GCI <= G at the live replica
// is unchanged since G, and S's row (restored, or changed since only by writes that also
// ran here, onto the same row) equals it: nothing, or its key, suffices. (3) The copy is
// asked for only once every node routes writes to S and starts only once the
// transactions that held writes here before have ended, so every write after G is
// either in a row this scan reads (GCI > G: sent whole, under a shared lock a later
// writer waits for) or reaches S down the chain (committing there with a GCI > G).
// (4) Rows S must delete: a row S holds with GCI <= G after the whole rows came is one
// it restored (copies and chain writes give GCIs above G), so it existed here at G too;
// if it is gone here now, it was deleted here in a GCI above G. Delete log: every delete
// this fragment committed above the log's floor <= G is in it (the log is emptied and
// unusable while a restore or copy fills the fragment, and restarts at the GCI its node
// starts committing from; trimming raises the floor to the trimmed GCI), so the key was
// either in the snapshot taken at the fragment's start, or deleted after it, which came
// down the chain to S. Conversely a deleted key whose row S holds with GCI <= G names a
// row gone here (re-inserted since: S's row would carry that GCI > G, see (3)), so
// deleting it is right; a key listed twice or deleted by the chain too is skipped.
// Sweep: every row that exists here throughout the scan is visited (the scan walks
// slots; rows do not move), so S marks it; a row S holds that is not marked and has GCI
// <= G was neither visited nor written since G through the chain: the live replica
// deleted it after G (or it was deleted and re-inserted behind the scan, which went down
// the chain and carries GCI > G). A partial local checkpoint changes none of this: what
// S restored is the state at G whatever files it came from, and the live replica's
// checkpoints do not touch its delete log. Writes a restored row got down the chain
// before the copy made it current may have logged a stale image in S's redo; the copy
// then replaces it in memory without redo, so S's first checkpoint starts only once
// the GCI it started in is saved and keeps redo from the next GCI on
// (lcp_min_start_gci_): no restore ever replays those records.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <utility>

#include "ndb-kernel/fs/fs_messages.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/protocol/wire_codec.h"

namespace duo::local_query {

using kernel::BlockAddress;
using kernel::Signal;
using protocol::LqhKeyReq;
using storage::AttrValues;
using storage::Fragment;
using storage::OpResult;
using storage::OpType;

namespace {

// A copy batch stops once its encoded size passes kCopyBatchBytes (a row is at most
// kMaxRowSizeBytes, so a batch stays under the 64 KiB section limit), or at
// LocalQueryOptions::copy_batch_rows.
constexpr size_t kCopyBatchBytes = 32 * 1024;
// Rows examined per slice at most, in batches (rows gone meanwhile are skipped, not sent).
constexpr size_t kCopyExaminedBatches = 4;
// Records per batch at most, in batches of whole rows: keys of unchanged rows hold no
// lock, so many of them may share a signal (the 32 KiB bound applies too).
constexpr size_t kCopyKeyRowsPerBatchFactor = 16;
// Keys fetched from the scan at once.
constexpr size_t kCopyKeysPerFetch = 64;
// How long the copy waits before it retries a row a writer holds, or checks again for
// the transactions that predate it.
constexpr uint64_t kCopyRetryMs = 2;
constexpr uint64_t kCopyOlderTransactionsPollMs = 10;
// The starting node retries a row a committing transaction holds this often, for at
// most the lock wait timeout.
constexpr uint64_t kCopyWriteRetryMs = 1;
// A batch that cannot be sent because the starting node's link is not up yet (the
// survivors learn its new port from mgmd) is sent again this often, for this long.
constexpr uint64_t kCopyLinkRetryMs = 100;
constexpr uint64_t kCopyLinkWaitNs = 30 * kNanosPerSecond;
// Progress is logged at most this often (block clock), and at the end.
constexpr uint64_t kCopyProgressIntervalNs = 3 * kNanosPerSecond;

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

// Bound on the encoded size of `values` in a RowBatch (entry framing included).
size_t encoded_bytes(const AttrValues& values) {
  size_t bytes = 4;  // the row's start index
  for (size_t i = 0; i < values.size(); ++i) bytes += 8 + values.entry(i).size;
  return bytes;
}

bool listed(const std::vector<uint16_t>& nodes, uint16_t node) {
  return std::binary_search(nodes.begin(), nodes.end(), node);
}

void insert_sorted(std::vector<uint16_t>* nodes, uint16_t node) {
  if (listed(*nodes, node)) return;
  nodes->insert(std::upper_bound(nodes->begin(), nodes->end(), node), node);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// The starting node: a fresh life.

void LocalQueryBlock::on_node_restart_init(Signal& signal) {
  const BlockAddress requester = signal.sender();
  const uint16_t part = address().instance;
  const bool keep_restored = signal.word(0) == protocol::kNodeRestartKeepRestored;
  // With the restored rows kept: the tables whose rows are this node's own (restored,
  // and not replaced by the schema copy since) go back in the answer.
  Bytes restored_tables;
  if (keep_restored) {
    for (const auto& [table_id, table] : tables_) {
      if (!table->restored) continue;
      protocol::put_u32(&restored_tables, table_id);
      protocol::put_u32(&restored_tables, table->def.version);
    }
  }
  auto answer = [this, requester, part,
                 restored_tables = std::move(restored_tables)](const Status& status) {
    Signal conf(protocol::kNodeRestartInitConf, {part, static_cast<uint32_t>(status.code())});
    if (!status.ok()) {
      DUO_BLOCK_LOG(ERROR) << "node restart: log part " << part
                           << " cannot start a new life: " << status.to_string();
      conf.set_section(Bytes(status.message().begin(), status.message().end()));
    } else {
      conf.set_section(restored_tables);
    }
    send_or_log(requester, std::move(conf));
  };
  // The part must be fresh (a restarted process): anything it logged or is writing
  // would belong to neither life.
  if (lcp_ != nullptr || restore_ != nullptr || copy_ != nullptr || !transactions_.empty() ||
      redo_.appended_lsn() != 0) {
    return answer(
        Status(ErrorCode::kTransactionState, "log part " + std::to_string(part) + " is in use"));
  }
  if (keep_restored) {
    // The rows restored to the node's GCI stay; the copy brings what changed since.
    for (auto& [table_id, table] : tables_) {
      for (auto& [fragment_id, fragment] : table->fragments) fragment->set_enforce_unique(false);
    }
  } else {
    std::vector<uint32_t> table_ids;
    for (const auto& [table_id, table] : tables_) table_ids.push_back(table_id);
    for (uint32_t table_id : table_ids) drop_table(table_id);
  }
  copying_ = true;
  copy_writes_.clear();
  committed_.clear();
  // The old checkpoint and redo can never be restored again: the directories go, and
  // this life's checkpoints and redo start from scratch (redo file 1, the empty control
  // record before the first checkpoint's).
  last_lcp_id_ = 0;
  control_sequence_ = 0;
  empty_control_written_ = false;
  lcp_start_lsn_ = 0;
  first_file_seq_of_life_ = 1;
  redo_.restart_at(1);
  auto pending = std::make_shared<int>(2);
  auto failure = std::make_shared<Status>();
  for (std::string path : {lcp_part_dir(part), redo_part_dir(part)}) {
    fs::FsRemoveReq remove_path;
    remove_path.flags = fs::kFsRecursive;
    remove_path.path = std::move(path);
    fs_request(std::move(remove_path).to_signal(), [pending, failure, answer](Signal& done) {
      Status removed = fs_status(done);
      if (!removed.ok() && failure->ok()) *failure = removed;
      if (--*pending == 0) answer(*failure);
    });
  }
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": log part " << part
                      << (keep_restored ? ": node restart, restored rows kept, old checkpoint "
                                          "and redo discarded, copying changed rows"
                                        : ": node restart, old checkpoint and redo discarded, "
                                          "copying");
}

std::optional<OpResult> LocalQueryBlock::copying_outcome(const LqhKeyReq& request,
                                                         const OpResult& result) {
  const bool changes_existing = request.type == OpType::kUpdate ||
                                request.type == OpType::kDelete ||
                                request.type == OpType::kInterpretedUpdate;
  // A replica upstream (the chain's live ones) executed it on the row, so a missing row
  // here is one the copy has not brought yet: the copy brings its committed result.
  if (changes_existing && result.status.is(ErrorCode::kNotFound)) {
    OpResult lenient;
    lenient.op = result.op;
    return lenient;
  }
  // The row upstream did not exist, so the one here is a copy of an older life of the
  // key (the copy of a row deleted since): the insert overwrites it.
  if (request.type == OpType::kInsert && result.status.is(ErrorCode::kDuplicateKey)) {
    Fragment* fragment = find_fragment(request.table_id, request.fragment);
    const storage::TxId tx = find_fragment_tx(request.transid, request.table_id, request.fragment);
    auto body = protocol::OpBody::decode(protocol::as_view(request.body));
    if (fragment == nullptr || tx == storage::kNullId || !body.ok()) {
      if (!body.ok()) body.status().ignore_error();
      return std::nullopt;
    }
    return fragment->write(tx, body->key_or_row);
  }
  return std::nullopt;
}

void LocalQueryBlock::on_node_starting(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  // Writes of its fragments go down the chain to it from now on (it is last there), so
  // it must no longer be skipped as dead.
  std::erase(dead_nodes_, node);
  insert_sorted(&starting_nodes_, node);
  DUO_BLOCK_LOG(INFO) << "data node " << node << " is starting: writes reach it";
  send_or_log(signal.sender(), Signal(protocol::kNodeStartingConf, {node}));
}

void LocalQueryBlock::on_node_started(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  std::erase(starting_nodes_, node);
  if (node == node_id() && copying_) {
    // Every fragment holds what its live replica holds: an ordinary replica again.
    copying_ = false;
    lcp_min_start_gci_ = signal.word(1) + 1;
    // Every delete committed here from now on has a GCI above the one S commits from;
    // those before (the sweeps', the chain's while copying) went unlogged.
    for (auto& [table_id, table] : tables_) {
      for (auto& [fragment_id, fragment] : table->fragments) {
        fragment->set_enforce_unique(true);
        fragment->restart_delete_log(signal.word(1));
      }
    }
    DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": log part " << address().instance
                        << ": node restart done, copying state left";
  }
  send_or_log(signal.sender(), Signal(protocol::kNodeStartedConf, {node}));
}

// ---------------------------------------------------------------------------------------
// The starting node: writing copied rows.

void LocalQueryBlock::on_copy_rows(Signal& signal) {
  const uint16_t source_node = signal.sender().node_id;
  const uint32_t table_id = signal.word(0);
  const uint32_t version = signal.word(1);
  const uint32_t fragment_id = signal.word(2);
  const uint32_t batch = signal.word(3);
  auto refuse_rows = [&](const Status& status) {
    Signal ref(protocol::kCopyRowsRef,
               {table_id, fragment_id, batch, static_cast<uint32_t>(status.code())});
    ref.set_section(Bytes(status.message().begin(), status.message().end()));
    DUO_BLOCK_LOG(WARNING) << "copy batch " << batch << " of table " << table_id << " fragment "
                           << fragment_id << " from node " << source_node
                           << " refused: " << status.to_string();
    send_or_log(signal.sender(), std::move(ref));
  };
  const Table* table = find_table(table_id);
  if (table == nullptr || table->def.version != version ||
      !table->fragments.contains(fragment_id)) {
    return refuse_rows(
        Status(ErrorCode::kNoSuchTable, "table " + std::to_string(table_id) + " version " +
                                            std::to_string(version) + " fragment " +
                                            std::to_string(fragment_id) + " is not held here"));
  }
  if (!copying_) {
    return refuse_rows(Status(ErrorCode::kTransactionState, "this node is not copying"));
  }
  CopyWrite write;
  write.source = signal.sender();
  write.table_id = table_id;
  write.fragment_id = fragment_id;
  write.batch = batch;
  const uint32_t flags = signal.word(5);
  write.since_gci = signal.word(6);
  write.fragment_end = (flags & protocol::kCopyRowsFragmentEnd) != 0;
  write.deleted_keys = (flags & protocol::kCopyRowsDeletedKeys) != 0;
  write.deletes_sent = (flags & protocol::kCopyRowsDeletesSent) != 0;
  std::string_view rows_bytes = protocol::as_view(signal.section());
  Status decoded;
  if (flags & protocol::kCopyRowsWithGci) {
    // u32 n, n x u32 GCI (0: a key alone), then the RowBatch.
    protocol::ByteReader in(rows_bytes);
    uint32_t count = 0;
    if (!in.u32(&count) || in.remaining() / 4 < count) {
      decoded = Status(ErrorCode::kCorruption, "COPY_ROWSREQ: truncated GCI list");
    } else {
      write.gcis.resize(count);
      for (uint32_t& gci : write.gcis) in.u32(&gci);
      std::string_view rest;
      in.take(in.remaining(), &rest);
      rows_bytes = rest;
    }
  }
  if (decoded.ok() && !rows_bytes.empty()) {
    decoded = protocol::decode_row_batch(rows_bytes, &write.rows);
  }
  if (decoded.ok() && !write.gcis.empty() && write.gcis.size() != write.rows.rows()) {
    decoded = Status(ErrorCode::kCorruption, "COPY_ROWSREQ: GCI list and rows differ");
  }
  if (decoded.ok() && (write.deleted_keys || write.deletes_sent) && write.since_gci == 0) {
    decoded = Status(ErrorCode::kCorruption, "COPY_ROWSREQ: deleted keys of a full copy");
  }
  if (!decoded.ok()) {
    log_malformed(signal, decoded);
    return refuse_rows(decoded);
  }
  // The end's sweep and deleted keys wait for chain transactions to end: a longer bound.
  write.give_up_ns = clock().now_ns() + (write.fragment_end || write.deleted_keys ? 10 : 1) *
                                            options_.lock_wait_timeout_ms * kNanosPerMilli;
  write.generation = ++continue_generation_;
  // One batch per source and part at a time (the source waits for the answer).
  copy_writes_[source_node] = std::move(write);
  copy_write(source_node);
}

void LocalQueryBlock::copy_write(uint16_t source_node) {
  auto it = copy_writes_.find(source_node);
  if (it == copy_writes_.end()) return;
  CopyWrite& write = it->second;
  auto answer = [&](Signal out) {
    const BlockAddress source = write.source;
    copy_writes_.erase(it);
    send_or_log(source, std::move(out));
  };
  auto refuse_rows = [&](const Status& status) {
    DUO_BLOCK_LOG(WARNING) << "copy batch " << write.batch << " of table " << write.table_id
                           << " fragment " << write.fragment_id << " from node " << source_node
                           << " failed: " << status.to_string();
    Signal ref(protocol::kCopyRowsRef, {write.table_id, write.fragment_id, write.batch,
                                        static_cast<uint32_t>(status.code())});
    ref.set_section(Bytes(status.message().begin(), status.message().end()));
    answer(std::move(ref));
  };
  Fragment* fragment = find_fragment(write.table_id, write.fragment_id);
  if (fragment == nullptr) {
    return refuse_rows(Status(ErrorCode::kNoSuchTable,
                              "table " + std::to_string(write.table_id) + " was dropped"));
  }
  if (write.deleted_keys) {
    // Keys the source deleted since G: a row here still at most G is the one deleted
    // (see the file comment). A row a transaction holds is decided by its end.
    Result<Fragment::CopySweep> removed = fragment->remove_unchanged(write.rows, write.since_gci);
    resume_ready(write.table_id, write.fragment_id);
    if (!removed.ok()) return refuse_rows(removed.status());
    copy_rows_swept_ += removed->deleted;
    if (removed->busy > 0) {
      if (clock().now_ns() >= write.give_up_ns) {
        return refuse_rows(Status(ErrorCode::kTemporary,
                                  "a deleted key's row stayed locked by a transaction for too "
                                  "long"));
      }
      Status armed = send_delayed(
          address(), Signal(protocol::kLqhContinue, {kContinueCopyWrite, write.generation}),
          kCopyRetryMs);
      if (!armed.ok()) return refuse_rows(armed);
      return;
    }
    const uint32_t records = static_cast<uint32_t>(write.rows.rows());
    return answer(
        Signal(protocol::kCopyRowsConf, {write.table_id, write.fragment_id, write.batch, records}));
  }
  auto begun = fragment->begin();
  if (!begun.ok()) return refuse_rows(begun.status());
  const storage::TxId tx = *begun;
  AttrValues row;
  bool blocked = false;
  const size_t first = write.next;
  for (; write.next < write.rows.rows(); ++write.next) {
    copy_row(write.rows.row(write.next), &row);
    if (!write.gcis.empty() && write.gcis[write.next] == 0) {
      // Unchanged at the source since the GCI this node restored: the row here is the
      // same; it is only marked seen. Missing: a delete down the chain came first.
      Status marked = fragment->mark_copy_seen(row);
      if (!marked.ok() && !marked.is(ErrorCode::kNotFound)) {
        fragment->abort(tx).ignore_error();
        resume_ready(write.table_id, write.fragment_id);
        return refuse_rows(marked);
      }
      ++copy_key_rows_received_;
      continue;
    }
    // Insert-or-overwrite: the row may have come down the chain already (an insert),
    // and the copy's image is the committed one of the live replica.
    const OpResult result = fragment->write(tx, row);
    if (result.waiting) {
      // A transaction that is committing (or aborting) here holds the row: the copy
      // read the row only after that transaction let it go upstream.
      fragment->cancel_wait(result.op).ignore_error();
      blocked = true;
      break;
    }
    if (!result.status.ok()) {
      fragment->abort(tx).ignore_error();
      resume_ready(write.table_id, write.fragment_id);
      return refuse_rows(result.status);
    }
  }
  // Committed at once without the redo sink: the checkpoint this node takes after the
  // restart holds the rows.
  Status committed = fragment->commit(tx);
  const uint32_t table_id = write.table_id;
  const uint32_t fragment_id = write.fragment_id;
  if (!committed.ok()) {
    resume_ready(table_id, fragment_id);
    return refuse_rows(committed);
  }
  // A copied row keeps the GCI it has at the source (not this commit's, which may be
  // stale or 0): a later copy from this node compares it with a restore GCI, so it must
  // never be below the row's last change. Marked seen for the fragment's sweep.
  for (size_t i = first; i < write.next; ++i) {
    if (!write.gcis.empty() && write.gcis[i] == 0) continue;
    copy_row(write.rows.row(i), &row);
    Status set = fragment->set_copied_gci(row, write.gcis.empty() ? 1 : write.gcis[i]);
    if (!set.ok()) {
      resume_ready(table_id, fragment_id);
      return refuse_rows(set);
    }
    ++copy_full_rows_received_;
  }
  if (blocked) {
    if (clock().now_ns() >= write.give_up_ns) {
      resume_ready(table_id, fragment_id);
      return refuse_rows(Status(ErrorCode::kTemporary,
                                "a copied row stayed locked by a transaction for too long"));
    }
    const uint32_t generation = write.generation;
    Status armed =
        send_delayed(address(), Signal(protocol::kLqhContinue, {kContinueCopyWrite, generation}),
                     kCopyWriteRetryMs);
    if (!armed.ok()) {
      resume_ready(table_id, fragment_id);
      return refuse_rows(armed);
    }
    resume_ready(table_id, fragment_id);
    return;
  }
  if (write.fragment_end) {
    if (write.since_gci > 0 && !write.deletes_sent) {
      // The copy of this fragment is over: what the source no longer has and this node
      // restored unchanged since the GCI goes (see the file comment).
      Result<Fragment::CopySweep> swept = fragment->sweep_unseen(write.since_gci);
      if (!swept.ok()) {
        resume_ready(table_id, fragment_id);
        return refuse_rows(swept.status());
      }
      copy_rows_swept_ += swept->deleted;
      if (swept->busy > 0) {
        // A chain operation holds a candidate: its commit (newer GCI: kept) or abort
        // (old row: deleted) decides. Try again shortly, within a bound.
        resume_ready(table_id, fragment_id);
        if (clock().now_ns() >= write.give_up_ns) {
          return refuse_rows(Status(ErrorCode::kTemporary,
                                    "the sweep after the copy waited too long for a row "
                                    "a transaction holds"));
        }
        Status armed = send_delayed(
            address(), Signal(protocol::kLqhContinue, {kContinueCopyWrite, write.generation}),
            kCopyRetryMs);
        if (!armed.ok()) return refuse_rows(armed);
        return;
      }
    }
    if (write.since_gci > 0) fragment->clear_copy_marks();
    ++copy_fragments_received_;
    report_copy_progress();
  }
  const uint32_t rows = static_cast<uint32_t>(write.rows.rows());
  answer(Signal(protocol::kCopyRowsConf, {table_id, fragment_id, write.batch, rows}));
  resume_ready(table_id, fragment_id);
}

void LocalQueryBlock::report_copy_progress() {
  uint32_t fragments_held = 0;
  for (const auto& [table_id, table] : tables_) {
    fragments_held += static_cast<uint32_t>(table->fragments.size());
  }
  const BlockAddress distribution{node_id(), protocol::kDistributionBlock, 0};
  Signal rep(protocol::kCopyProgressRep,
             {address().instance, fragments_held, copy_fragments_received_,
              static_cast<uint32_t>(copy_full_rows_received_),
              static_cast<uint32_t>(copy_full_rows_received_ >> 32),
              static_cast<uint32_t>(copy_key_rows_received_),
              static_cast<uint32_t>(copy_key_rows_received_ >> 32)});
  // Progress only: a test without a distribution block has nobody to tell.
  send(distribution, std::move(rep)).ignore_error();
}

// ---------------------------------------------------------------------------------------
// The live replica: copying.

void LocalQueryBlock::on_copy_node(Signal& signal) {
  const uint16_t starting = static_cast<uint16_t>(signal.word(0));
  auto refuse_copy = [&](const Status& status) {
    DUO_BLOCK_LOG(WARNING) << "copy to node " << starting << " refused: " << status.to_string();
    Signal ref(protocol::kCopyNodeRef, {starting, static_cast<uint32_t>(status.code())});
    ref.set_section(Bytes(status.message().begin(), status.message().end()));
    send_or_log(signal.sender(), std::move(ref));
  };
  if (copy_ != nullptr) {
    return refuse_copy(
        Status(ErrorCode::kTemporary,
               "a copy to node " + std::to_string(copy_->starting_node) + " is running"));
  }
  // Unless every write of its fragments reaches it here, a copy would miss some.
  if (!listed(starting_nodes_, starting) || starting == node_id()) {
    return refuse_copy(Status(ErrorCode::kTransactionState,
                              "node " + std::to_string(starting) + " is not starting"));
  }
  auto run = std::make_unique<CopyRun>();
  run->starting_node = starting;
  run->requester = signal.sender();
  run->generation = ++copy_generation_;
  run->start_ns = clock().now_ns();
  run->last_log_ns = run->start_ns;
  // w1: the GCI the starting node restored its own disk to (0: none); the section
  // lists the (table id, version) pairs it restored rows of.
  run->since_gci = signal.word(1);
  protocol::ByteReader restored(protocol::as_view(signal.section()));
  uint32_t restored_id = 0, restored_version = 0;
  while (restored.u32(&restored_id) && restored.u32(&restored_version)) {
    run->restored_tables.emplace(restored_id, restored_version);
  }
  for (const auto& [table_id, table] : tables_) {
    for (const auto& [fragment_id, fragment] : table->fragments) {
      const protocol::FragmentPlacement live = protocol::place_fragment_live(
          topology_, fragment_id, table->def.fragment_count, dead_nodes_, starting_nodes_);
      if (live.replicas.empty() || live.replicas.front() != node_id()) continue;
      if (std::find(live.replicas.begin(), live.replicas.end(), starting) == live.replicas.end()) {
        continue;
      }
      run->todo.emplace_back(table_id, fragment_id);
    }
  }
  for (const auto& [transid, transaction] : transactions_) {
    const bool touches = std::any_of(
        transaction.fragments.begin(), transaction.fragments.end(), [&](const FragmentTx& ftx) {
          return std::find(run->todo.begin(), run->todo.end(),
                           std::make_pair(ftx.table_id, ftx.fragment_id)) != run->todo.end();
        });
    if (touches) run->older_transids.push_back(transid);
  }
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": log part " << address().instance << ": copying "
                      << run->todo.size() << " fragments to node " << starting
                      << (run->since_gci == 0
                              ? std::string(", every row")
                              : ", rows changed since GCI " + std::to_string(run->since_gci) +
                                    " (tables it restored; others every row)")
                      << (run->older_transids.empty()
                              ? std::string()
                              : ", after " + std::to_string(run->older_transids.size()) +
                                    " older transaction(s) end");
  copy_ = std::move(run);
  copy_slice();
}

void LocalQueryBlock::copy_next_fragment() {
  CopyRun& run = *copy_;
  run.started = false;
  run.scan.reset();
  run.keys.clear();
  while (run.next < run.todo.size()) {
    const auto [table_id, fragment_id] = run.todo[run.next++];
    Fragment* fragment = find_fragment(table_id, fragment_id);
    if (fragment == nullptr) continue;  // dropped meanwhile (the schema is locked: rare)
    // Rows of a table the starting node restored in this very version are there as of
    // since_gci; a table it does not have (dropped, re-created or altered meanwhile)
    // starts empty there and is copied whole.
    const Table* table = find_table(table_id);
    run.fragment_since_gci =
        run.restored_tables.contains({table_id, table->def.version}) ? run.since_gci : 0;
    run.send_deletes = false;
    run.deleted_keys.clear();
    run.deleted_next = 0;
    Fragment::ScanSpec spec;
    spec.columns = fragment->schema().primary_key;
    if (run.fragment_since_gci > 0) {
      // Taken now: every delete committed from here on comes down the chain to S.
      auto deleted = fragment->deleted_since(run.fragment_since_gci);
      if (deleted.ok()) {
        run.send_deletes = true;
        run.deleted_keys = std::move(deleted).value();
        // Unchanged rows are not even read (parts 0: no row passes regardless of GCI).
        spec.min_gci = run.fragment_since_gci + 1;
      } else {
        DUO_BLOCK_LOG(INFO) << "copy of table " << table_id << " fragment " << fragment_id
                            << " to node " << run.starting_node << ": "
                            << deleted.status().message()
                            << ", so the keys of unchanged rows go too";
      }
    }
    auto scan = fragment->open_scan(std::move(spec));
    if (!scan.ok()) return fail_copy(scan.status());
    run.table_id = table_id;
    run.fragment_id = fragment_id;
    run.scan = std::move(scan).value();
    run.started = true;
    return;
  }
}

void LocalQueryBlock::copy_slice() {
  CopyRun& run = *copy_;
  const uint32_t generation = run.generation;
  auto continue_later = [&](uint64_t delay_ms) {
    Signal next(protocol::kLqhContinue, {kContinueCopy, generation});
    Status armed = delay_ms == 0 ? send(address(), std::move(next))
                                 : send_delayed(address(), std::move(next), delay_ms);
    if (!armed.ok()) fail_copy(armed);
  };
  if (run.unsent) {
    // The batch is built and its rows locked; only the send is missing.
    Signal request = run.unsent->clone();
    Status sent =
        send(BlockAddress{run.starting_node, protocol::kLocalQueryBlock, address().instance},
             std::move(request));
    if (sent.ok()) {
      run.unsent.reset();
      run.batch_in_flight = true;
      return;  // COPY_ROWSCONF continues
    }
    if (clock().now_ns() - run.unsent_since_ns > kCopyLinkWaitNs) return fail_copy(sent);
    return continue_later(kCopyLinkRetryMs);
  }
  std::erase_if(run.older_transids,
                [&](uint64_t transid) { return !transactions_.contains(transid); });
  if (!run.older_transids.empty()) return continue_later(kCopyOlderTransactionsPollMs);

  if (!run.started) {
    copy_next_fragment();
    if (copy_ == nullptr) return;  // failed
    if (!run.started) return copy_finished();
  }
  Fragment* fragment = find_fragment(run.table_id, run.fragment_id);
  if (fragment == nullptr || run.scan == nullptr) {
    // Dropped meanwhile: copy_table_dropped() let go of everything of it.
    run.started = false;
    return continue_later(0);
  }
  if (run.tx == storage::kNullId) {
    auto begun = fragment->begin();
    if (!begun.ok()) return fail_copy(begun.status());
    run.tx = *begun;
  }
  storage::RowBatch batch;
  std::vector<uint32_t> gcis;  // per record: the row's GCI, or 0 for a key alone
  size_t bytes = 12;
  size_t whole_rows = 0;
  size_t examined = 0;
  bool blocked = false;
  AttrValues values;
  const size_t batch_rows = std::max<size_t>(1, options_.copy_batch_rows);
  // Keys alone hold no lock, so a batch may carry many more of them than whole rows.
  const size_t records_max = kCopyKeyRowsPerBatchFactor * batch_rows;
  while (whole_rows < batch_rows && batch.rows() < records_max &&
         examined < kCopyExaminedBatches * batch_rows) {
    if (run.keys.empty()) {
      if (run.scan->done()) break;
      storage::RowBatch keys;
      auto produced = run.scan->next(kCopyKeysPerFetch, &keys);
      if (!produced.ok()) return fail_copy(produced.status());
      if (*produced == 0) break;
      for (size_t i = 0; i < keys.rows(); ++i) {
        AttrValues key;
        copy_row(keys.row(i), &key);
        run.keys.push_back(std::move(key));
      }
      continue;
    }
    if (run.fragment_since_gci > 0) {
      Result<uint32_t> gci = fragment->committed_gci(run.keys.front());
      if (!gci.ok()) {
        if (!gci.status().is(ErrorCode::kNotFound)) return fail_copy(gci.status());
        run.keys.pop_front();  // deleted meanwhile: its delete reached S too
        continue;
      }
      if (*gci <= run.fragment_since_gci) {
        // Unchanged since the starting node's restore point: it holds this very row.
        // No lock: a writer holding it now writes down the chain to S, onto the same
        // row (see the file comment).
        const size_t key_bytes = encoded_bytes(run.keys.front()) + 4;
        if (batch.rows() > 0 && bytes + key_bytes > kCopyBatchBytes) break;
        AttrValues& out = batch.begin_row();
        const AttrValues& key = run.keys.front();
        for (size_t i = 0; i < key.size(); ++i) out.add(key.entry(i).column, key.value(i));
        gcis.push_back(0);
        bytes += key_bytes;
        run.keys.pop_front();
        continue;
      }
    }
    // The committed version the scan saw may have a writer: the shared lock waits for
    // none of them, so what is read is the latest committed row.
    values.clear();
    const OpResult result =
        fragment->read(run.tx, run.keys.front(), storage::LockMode::kShared, {}, &values);
    if (result.waiting) {
      fragment->cancel_wait(result.op).ignore_error();
      blocked = true;
      break;
    }
    ++examined;
    if (!result.status.ok()) {
      if (!result.status.is(ErrorCode::kNotFound)) return fail_copy(result.status);
      run.keys.pop_front();  // deleted meanwhile: its delete reached S too
      continue;
    }
    const size_t row_bytes = encoded_bytes(values) + 4;
    // The row stays first in line (its lock is released with the batch's).
    if (batch.rows() > 0 && bytes + row_bytes > kCopyBatchBytes) break;
    // Under the shared lock the committed version cannot change: its GCI goes along
    // (at least 1: a GCI of 0 would read as "a key alone").
    Result<uint32_t> gci = fragment->committed_gci(run.keys.front());
    if (!gci.ok()) return fail_copy(gci.status());
    AttrValues& out = batch.begin_row();
    for (size_t i = 0; i < values.size(); ++i) {
      const AttrValues::Entry& entry = values.entry(i);
      if (entry.is_null) {
        out.add_null(entry.column);
      } else {
        out.add(entry.column, values.value(i));
      }
    }
    gcis.push_back(std::max<uint32_t>(*gci, 1));
    ++whole_rows;
    bytes += row_bytes;
    run.keys.pop_front();
  }
  const Table* table = find_table(run.table_id);
  const bool scanned = !blocked && run.keys.empty() && run.scan->done();
  const bool deletes_left = run.deleted_next < run.deleted_keys.size();
  if (batch.rows() > 0 || scanned) {
    // A batch of rows; or, once every changed row went, the keys deleted since G; or
    // the fragment's end marker (no rows): the starting node sweeps then, unless the
    // deleted keys were sent.
    Bytes section;
    uint32_t flags = 0;
    size_t records = batch.rows();
    if (batch.rows() == 0 && deletes_left) {
      storage::RowBatch deleted;
      size_t deleted_bytes = 12;
      while (run.deleted_next < run.deleted_keys.size() && deleted.rows() < records_max) {
        const AttrValues& key = run.deleted_keys[run.deleted_next];
        const size_t key_bytes = encoded_bytes(key);
        if (deleted.rows() > 0 && deleted_bytes + key_bytes > kCopyBatchBytes) break;
        AttrValues& out = deleted.begin_row();
        for (size_t i = 0; i < key.size(); ++i) out.add(key.entry(i).column, key.value(i));
        deleted_bytes += key_bytes;
        ++run.deleted_next;
      }
      Status encoded = protocol::encode_row_batch(deleted, &section);
      if (!encoded.ok()) return fail_copy(encoded);
      flags = protocol::kCopyRowsDeletedKeys;
      records = deleted.rows();
      run.deleted_sent += records;
      copy_deleted_keys_sent_ += records;
    } else {
      protocol::put_u32(&section, static_cast<uint32_t>(gcis.size()));
      for (uint32_t gci : gcis) protocol::put_u32(&section, gci);
      if (batch.rows() > 0) {
        Status encoded = protocol::encode_row_batch(batch, &section);
        if (!encoded.ok()) return fail_copy(encoded);
      }
      flags = protocol::kCopyRowsWithGci;
      if (batch.rows() == 0) {
        flags |= protocol::kCopyRowsFragmentEnd;
        if (run.send_deletes) flags |= protocol::kCopyRowsDeletesSent;
      }
      run.full_rows += whole_rows;
      run.key_rows += batch.rows() - whole_rows;
      copy_full_rows_sent_ += whole_rows;
      copy_key_rows_sent_ += batch.rows() - whole_rows;
    }
    const bool end_marker = (flags & protocol::kCopyRowsFragmentEnd) != 0;
    run.bytes += section.size();
    copy_bytes_sent_ += section.size();
    Signal request(protocol::kCopyRowsReq,
                   {run.table_id, table->def.version, run.fragment_id, ++run.batch,
                    static_cast<uint32_t>(records), flags, run.fragment_since_gci});
    request.set_section(std::move(section));
    run.end_in_flight = end_marker;
    // Neither the end nor deleted keys hold a lock.
    if (batch.rows() == 0) end_copy_tx();
    Signal copy = request.clone();
    Status sent =
        send(BlockAddress{run.starting_node, protocol::kLocalQueryBlock, address().instance},
             std::move(request));
    if (!sent.ok()) {
      if (!sent.is(ErrorCode::kTemporary)) return fail_copy(sent);
      run.unsent = std::move(copy);
      run.unsent_since_ns = clock().now_ns();
      return continue_later(kCopyLinkRetryMs);
    }
    run.batch_in_flight = true;
    return;  // COPY_ROWSCONF continues
  }
  end_copy_tx();
  if (blocked) return continue_later(kCopyRetryMs);
  continue_later(0);
}

void LocalQueryBlock::end_copy_tx() {
  CopyRun& run = *copy_;
  if (run.tx == storage::kNullId) return;
  const storage::TxId tx = std::exchange(run.tx, storage::kNullId);
  Fragment* fragment = find_fragment(run.table_id, run.fragment_id);
  if (fragment == nullptr) return;
  // Only shared locks: nothing to install.
  Status ended = fragment->abort(tx);
  if (!ended.ok()) {
    DUO_BLOCK_LOG(ERROR) << "ending the copy transaction of table " << run.table_id << " fragment "
                         << run.fragment_id << " failed: " << ended.to_string();
  }
  // Writers that waited for the batch's rows go now.
  resume_ready(run.table_id, run.fragment_id);
  if (!pending_alters_.empty()) run_pending_alters();
}

void LocalQueryBlock::on_copy_rows_conf(Signal& signal) {
  if (copy_ == nullptr || !copy_->batch_in_flight ||
      signal.sender().node_id != copy_->starting_node || signal.word(0) != copy_->table_id ||
      signal.word(1) != copy_->fragment_id || signal.word(2) != copy_->batch) {
    return;  // of a copy that stopped (its node failed)
  }
  CopyRun& run = *copy_;
  run.batch_in_flight = false;
  run.rows += signal.word(3);
  rows_copied_ += signal.word(3);
  // S holds the rows: their writers may go, and reach S down the chain.
  end_copy_tx();
  if (run.end_in_flight) {
    // S has swept the fragment: it holds what this replica holds.
    run.end_in_flight = false;
    ++run.fragments;
    run.started = false;
  }
  if (clock().now_ns() - run.last_log_ns >= kCopyProgressIntervalNs) copy_log_progress(false);
  // One batch per signal: key operations queued meanwhile run before the next one.
  send_or_log(address(), Signal(protocol::kLqhContinue, {kContinueCopy, run.generation}));
}

void LocalQueryBlock::on_copy_rows_ref(Signal& signal) {
  if (copy_ == nullptr || !copy_->batch_in_flight ||
      signal.sender().node_id != copy_->starting_node || signal.word(2) != copy_->batch) {
    return;
  }
  const std::string message(signal.section().begin(), signal.section().end());
  fail_copy(Status(static_cast<ErrorCode>(signal.word(3)),
                   "node " + std::to_string(copy_->starting_node) + ": " + message));
}

void LocalQueryBlock::copy_log_progress(bool final) {
  CopyRun& run = *copy_;
  const uint64_t now_ns = clock().now_ns();
  const double seconds = static_cast<double>(now_ns - run.start_ns) / 1e9;
  const double interval = static_cast<double>(now_ns - run.last_log_ns) / 1e9;
  const uint64_t recent = run.rows - run.rows_at_last_log;
  run.last_log_ns = now_ns;
  run.rows_at_last_log = run.rows;
  char text[400];
  std::snprintf(
      text, sizeof(text),
      "Node %u: log part %u: %s node %u: %llu rows (%llu changed rows sent whole, "
      "%llu unchanged sent as keys, %llu deleted keys), %.1f MB, %u of %zu fragments "
      "(%.0f%%), %.0f rows/s",
      unsigned{node_id()}, unsigned{address().instance}, final ? "copied to" : "copying to",
      unsigned{run.starting_node}, static_cast<unsigned long long>(run.rows),
      static_cast<unsigned long long>(run.full_rows), static_cast<unsigned long long>(run.key_rows),
      static_cast<unsigned long long>(run.deleted_sent), static_cast<double>(run.bytes) / 1e6,
      run.fragments, run.todo.size(),
      run.todo.empty() ? 100.0 : 100.0 * run.fragments / run.todo.size(),
      final ? (seconds > 0 ? static_cast<double>(run.rows) / seconds : 0.0)
            : (interval > 0 ? static_cast<double>(recent) / interval : 0.0));
  DUO_BLOCK_LOG(INFO) << text;
}

void LocalQueryBlock::copy_finished() {
  copy_log_progress(true);
  const std::unique_ptr<CopyRun> run = std::move(copy_);
  send_or_log(run->requester,
              Signal(protocol::kCopyNodeConf,
                     {run->starting_node, run->fragments, static_cast<uint32_t>(run->rows),
                      static_cast<uint32_t>(run->rows >> 32)}));
}

void LocalQueryBlock::fail_copy(const Status& status) {
  end_copy_tx();
  const std::unique_ptr<CopyRun> run = std::move(copy_);
  DUO_BLOCK_LOG(ERROR) << "Node " << node_id() << ": log part " << address().instance
                       << ": copy to node " << run->starting_node
                       << " failed: " << status.to_string();
  Signal ref(protocol::kCopyNodeRef, {run->starting_node, static_cast<uint32_t>(status.code())});
  ref.set_section(Bytes(status.message().begin(), status.message().end()));
  send_or_log(run->requester, std::move(ref));
}

void LocalQueryBlock::copy_node_failed(uint16_t node) {
  copy_writes_.erase(node);
  if (copy_ == nullptr || copy_->starting_node != node) return;
  // Nobody waits for this copy any more (the restart failed); its locks go.
  end_copy_tx();
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": log part " << address().instance
                      << ": copy to node " << node << " stopped after " << copy_->rows
                      << " rows: the node failed";
  copy_.reset();
}

void LocalQueryBlock::copy_table_dropped(uint32_t table_id) {
  std::erase_if(copy_writes_,
                [table_id](const auto& entry) { return entry.second.table_id == table_id; });
  if (copy_ == nullptr || !copy_->started || copy_->table_id != table_id) return;
  // Before the fragment goes: nothing may point into it. The copy moves on at its next
  // slice (or at the answer of the batch in flight).
  end_copy_tx();
  copy_->scan.reset();
  copy_->keys.clear();
}

}  // namespace duo::local_query
