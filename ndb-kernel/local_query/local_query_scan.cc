// LocalQueryBlock: fragment scans (SCAN_FRAGREQ / SCAN_FRAGNEXTREQ) in batches bounded
// in rows and in encoded bytes.
#include "ndb-kernel/local_query/local_query_block.h"

#include <algorithm>
#include <utility>

#include "ndb-kernel/protocol/signal_ids.h"
#include "storage/row/column.h"

namespace duo::local_query {

using kernel::BlockAddress;
using kernel::Signal;
using storage::Fragment;

namespace {

// Encoded size (encode_row_batch) of the values of one batch from entry `first` on:
// per value u16 column, and unless NULL u16 size + bytes.
size_t encoded_values_bytes(const storage::AttrValues& values, size_t first) {
  size_t bytes = 0;
  for (size_t i = first; i < values.size(); ++i) {
    const storage::AttrValues::Entry& entry = values.entry(i);
    bytes += entry.is_null ? 2 : 4 + entry.size;
  }
  return bytes;
}

// Bound on the encoded size of one row projected on `columns` (all when empty): its
// start index plus every value's framing and largest size, never more than a row can
// hold. It sizes the chunks a batch is filled in, so a batch passes its byte limit by
// at most one row.
size_t row_bytes_max(const storage::TableSchema& schema, const std::vector<uint16_t>& columns) {
  size_t framing = 4;
  size_t data = 0;
  auto add = [&](uint16_t column) {
    framing += 4;
    data += storage::column_max_size(schema.columns[column]);
  };
  if (columns.empty()) {
    for (size_t c = 0; c < schema.columns.size(); ++c) add(static_cast<uint16_t>(c));
  } else {
    for (uint16_t c : columns) {
      if (c < schema.columns.size()) add(c);
    }
  }
  return framing + std::min<size_t>(data, storage::kMaxRowSizeBytes);
}

}  // namespace

void LocalQueryBlock::refuse_scan(const BlockAddress& to, uint64_t transid, uint32_t scan_ptr,
                                  uint32_t fragment, ErrorCode error, std::string message) {
  protocol::ScanRef ref;
  ref.tx = transid;
  ref.id = scan_ptr;
  ref.fragment = fragment;
  ref.error = error;
  ref.message = std::move(message);
  send_or_log(to, std::move(ref).to_signal(protocol::kScanFragRef));
}

void LocalQueryBlock::on_scan_request(Signal& signal) {
  auto parsed = protocol::ScanFragReq::from_signal(signal);
  if (!parsed.ok()) return log_malformed(signal, parsed.status());
  const protocol::ScanFragReq& request = *parsed;
  const BlockAddress to = signal.sender();
  auto refuse = [&](ErrorCode error, std::string message) {
    refuse_scan(to, request.transid, request.scan_ptr, request.fragment, error, std::move(message));
  };
  if (request.log_part != address().instance) {
    return refuse(ErrorCode::kInvalidArgument,
                  "scan routed to the wrong log part " + address().to_string());
  }
  Table* table = find_table(request.table_id);
  if (table == nullptr) {
    return refuse(ErrorCode::kNoSuchTable, "no table " + std::to_string(request.table_id));
  }
  if (table->def.version != request.table_version) {
    return refuse(ErrorCode::kSchemaVersion, "table " + std::to_string(request.table_id) +
                                                 " is at version " +
                                                 std::to_string(table->def.version));
  }
  auto fragment_it = table->fragments.find(request.fragment);
  if (fragment_it == table->fragments.end()) {
    return refuse(ErrorCode::kNoSuchTable, "fragment " + std::to_string(request.fragment) +
                                               " of table " + std::to_string(request.table_id) +
                                               " is not held here");
  }
  Fragment* fragment = fragment_it->second.get();
  const ScanKey key{to.node_id, request.transid, request.scan_ptr, request.fragment};
  if (scans_.contains(key)) return refuse(ErrorCode::kInvalidArgument, "scan is already open");
  if (scans_.size() >= options_.concurrent_scans_max) {
    return refuse(ErrorCode::kTemporary, "too many concurrent scans on " + address().to_string());
  }
  auto body = protocol::ScanBody::decode(protocol::as_view(request.body));
  if (!body.ok()) return refuse(body.status().code(), body.status().message());

  auto record = std::make_unique<ScanRecord>();
  record->table_id = request.table_id;
  record->fragment_id = request.fragment;
  record->batch_rows =
      request.batch_rows == 0 ? options_.scan_batch_rows_default : request.batch_rows;
  record->batch_rows = std::max<uint32_t>(record->batch_rows, 1);
  // The coordinator divides its per-round budget over the fragments; a floor keeps a
  // batch from being all framing (a batch always holds at least one row anyway).
  record->batch_bytes = std::min(options_.scan_batch_bytes_max, kScanBatchBytesLimit);
  if (request.batch_bytes != 0) {
    record->batch_bytes =
        std::clamp<size_t>(request.batch_bytes, kScanBatchBytesMin, record->batch_bytes);
  }
  record->row_bytes_max = row_bytes_max(fragment->schema(), body->columns);
  if (!body->filter.empty()) {
    auto filter = storage::FilterProgram::decode(body->filter);
    if (!filter.ok()) return refuse(filter.status().code(), filter.status().message());
    record->filter = std::make_unique<storage::FilterProgram>(std::move(filter).value());
    Status bound = record->filter->bind(fragment->schema());
    if (!bound.ok()) return refuse(bound.code(), bound.message());
  }
  Fragment::ScanSpec spec;
  spec.tx = find_fragment_tx(request.transid, request.table_id, request.fragment);
  spec.filter = record->filter.get();
  spec.columns = std::move(body->columns);
  spec.index = request.index;
  spec.low = std::move(body->low);
  spec.high = std::move(body->high);
  spec.low_inclusive = (request.flags & protocol::kScanLowInclusive) != 0;
  spec.high_inclusive = (request.flags & protocol::kScanHighInclusive) != 0;
  spec.descending = (request.flags & protocol::kScanDescending) != 0;
  record->in_transaction = spec.tx != storage::kNullId;
  if (spec.index < -1) return refuse(ErrorCode::kInvalidArgument, "no such ordered index");
  auto scan = fragment->open_scan(std::move(spec));
  if (!scan.ok()) return refuse(scan.status().code(), scan.status().message());
  record->scan = std::move(scan).value();
  continue_scan(scans_.emplace(key, std::move(record)).first, to);
}

void LocalQueryBlock::on_scan_next(Signal& signal) {
  auto parsed = protocol::ScanNextReq::from_signal(signal);
  if (!parsed.ok()) return log_malformed(signal, parsed.status());
  const protocol::ScanNextReq& request = *parsed;
  const BlockAddress to = signal.sender();
  const ScanKey key{to.node_id, request.tx, request.id, request.fragment};
  auto it = scans_.find(key);
  if ((request.flags & protocol::kScanClose) != 0) {
    // Closing is idempotent: a scan that already finished (or was closed because its
    // transaction or table ended) closes fine.
    if (it != scans_.end()) scans_.erase(it);
    protocol::ScanBatch done;
    done.tx = request.tx;
    done.id = request.id;
    done.fragment = request.fragment;
    done.flags = protocol::kScanFragmentDone;
    storage::RowBatch empty;
    Status encoded = protocol::encode_row_batch(empty, &done.batch);
    if (!encoded.ok()) {
      return refuse_scan(to, request.tx, request.id, request.fragment, encoded.code(),
                         encoded.message());
    }
    return send_or_log(to, std::move(done).to_signal(protocol::kScanFragConf));
  }
  if (it == scans_.end()) {
    return refuse_scan(to, request.tx, request.id, request.fragment, ErrorCode::kTransactionState,
                       "no such open scan (finished, or its transaction or table ended)");
  }
  continue_scan(it, to);
}

void LocalQueryBlock::continue_scan(ScanMap::iterator it, const BlockAddress& to) {
  const ScanKey key = it->first;
  ScanRecord& record = *it->second;
  const size_t bytes_max = record.batch_bytes;
  storage::RowBatch batch;
  // Header: u32 row count and u32 value count; then a u32 start per row.
  size_t bytes = 8;
  Status failure;
  // Fill in chunks that cannot pass the byte limit, down to single rows near it.
  while (batch.rows() < record.batch_rows && !record.scan->done() && bytes <= bytes_max) {
    const size_t room_rows = (bytes_max - bytes) / record.row_bytes_max;
    const size_t chunk = std::clamp<size_t>(room_rows, 1, record.batch_rows - batch.rows());
    const size_t first_value = batch.values().size();
    auto produced = record.scan->next(chunk, &batch);
    if (!produced.ok()) {
      failure = produced.take_status();
      break;
    }
    bytes += 4 * *produced + encoded_values_bytes(batch.values(), first_value);
    if (*produced == 0) break;
  }
  if (!failure.ok()) {
    scans_.erase(it);
    return refuse_scan(to, key.transid, key.scan_ptr, key.fragment, failure.code(),
                       failure.message());
  }
  protocol::ScanBatch conf;
  conf.tx = key.transid;
  conf.id = key.scan_ptr;
  conf.fragment = key.fragment;
  conf.rows = static_cast<uint32_t>(batch.rows());
  const bool done = record.scan->done();
  conf.flags = done ? protocol::kScanFragmentDone : 0;
  Status encoded = protocol::encode_row_batch(batch, &conf.batch);
  if (done || !encoded.ok()) scans_.erase(it);
  if (!encoded.ok()) {
    return refuse_scan(to, key.transid, key.scan_ptr, key.fragment, encoded.code(),
                       encoded.message());
  }
  send_or_log(to, std::move(conf).to_signal(protocol::kScanFragConf));
}

}  // namespace duo::local_query
