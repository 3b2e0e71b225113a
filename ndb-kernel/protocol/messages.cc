#include "ndb-kernel/protocol/messages.h"

#include <cstring>
#include <utility>

namespace duo::protocol {

namespace {

void set_u64(Signal* signal, size_t index, uint64_t value) {
  signal->set_word(index, static_cast<uint32_t>(value));
  signal->set_word(index + 1, static_cast<uint32_t>(value >> 32));
}

uint64_t get_u64(const Signal& signal, size_t index) {
  return uint64_t{signal.word(index)} | (uint64_t{signal.word(index + 1)} << 32);
}

Status malformed(const Signal& signal) {
  return Status(ErrorCode::kInvalidArgument, "malformed signal " + signal.describe());
}

bool valid_op(uint32_t type, uint32_t lock) {
  return type <= static_cast<uint32_t>(OpType::kInterpretedUpdate) &&
         lock <= static_cast<uint32_t>(LockMode::kExclusive);
}

bool valid_error(uint32_t code) {
  return code <= static_cast<uint32_t>(ErrorCode::kInternal);
}

std::string section_text(const Signal& signal) {
  return std::string(as_view(signal.section()));
}

Bytes text_section(std::string_view text) {
  return Bytes(text.begin(), text.end());
}

// Moves the last `trailer_bytes` of *section into *trailer; false if it is shorter.
bool split_trailer(Bytes* section, uint32_t trailer_bytes, Bytes* trailer) {
  if (trailer_bytes > section->size()) return false;
  if (trailer_bytes == 0) return true;
  const auto start = section->end() - trailer_bytes;
  trailer->assign(start, section->end());
  section->erase(start, section->end());
  return true;
}

}  // namespace

// ---- OpBody ----

Status OpBody::encode(Bytes* out) const {
  out->reserve(out->size() + encoded_size(key_or_row) + encoded_size(values) +
               encoded_columns_size(columns) + 4 + program.size());
  DUO_RETURN_IF_ERROR(encode_attr_values(key_or_row, out));
  DUO_RETURN_IF_ERROR(encode_attr_values(values, out));
  encode_columns(columns, out);
  put_u32(out, static_cast<uint32_t>(program.size()));
  append(out, program);
  return Status::OK();
}

void OpBody::clear() {
  key_or_row.clear();
  values.clear();
  columns.clear();
  program.clear();
}

Status OpBody::decode_into(std::string_view bytes, OpBody* out) {
  out->clear();
  ByteReader in(bytes);
  uint32_t program_size = 0;
  std::string_view program;
  if (!decode_attr_values(&in, &out->key_or_row) || !decode_attr_values(&in, &out->values) ||
      !decode_columns(&in, &out->columns) || !in.u32(&program_size) ||
      !in.take(program_size, &program) || !in.done()) {
    return Status(ErrorCode::kInvalidArgument, "malformed operation body");
  }
  out->program.assign(program);
  return Status::OK();
}

Result<OpBody> OpBody::decode(std::string_view bytes) {
  OpBody body;
  DUO_RETURN_IF_ERROR(decode_into(bytes, &body));
  return body;
}

// ---- TC_KEYREQ ----

Signal TcKeyReq::to_signal() && {
  Signal signal(kTcKeyReq);
  set_u64(&signal, 0, api_tx);
  signal.set_word(2, op_index);
  signal.set_word(3, table_id);
  signal.set_word(4, table_version);
  signal.set_word(5, static_cast<uint32_t>(type) | (static_cast<uint32_t>(lock) << 8) |
                         (uint32_t{flags} << 16));
  signal.set_section(std::move(body));
  return signal;
}

Result<TcKeyReq> TcKeyReq::from_signal(Signal& signal) {
  const uint32_t packed = signal.word(5);
  if (!valid_op(packed & 0xFF, (packed >> 8) & 0xFF)) return malformed(signal);
  TcKeyReq req;
  req.api_tx = get_u64(signal, 0);
  req.op_index = signal.word(2);
  req.table_id = signal.word(3);
  req.table_version = signal.word(4);
  req.type = static_cast<OpType>(packed & 0xFF);
  req.lock = static_cast<LockMode>((packed >> 8) & 0xFF);
  req.flags = static_cast<uint8_t>(packed >> 16);
  req.body = signal.take_section();
  return req;
}

// ---- LQH_KEYREQ ----

Signal LqhKeyReq::to_signal() && {
  Signal signal(kLqhKeyReq);
  set_u64(&signal, 0, transid);
  signal.set_word(2, tc_op);
  signal.set_word(3, table_id);
  signal.set_word(4, table_version);
  signal.set_word(5, fragment);
  signal.set_word(6, static_cast<uint32_t>(type) | (static_cast<uint32_t>(lock) << 8) |
                         (uint32_t{flags} << 16));
  signal.set_word(7, uint32_t{log_part} | (uint32_t{api_node} << 16));
  signal.set_word(8, uint32_t{coordinator.node_id} | (uint32_t{coordinator.instance} << 16));
  signal.set_word(9, coordinator.block);
  signal.set_word(10, static_cast<uint32_t>(chain.size()) | (position << 16));
  for (size_t i = 0; i < chain.size(); ++i) signal.set_word(11 + i, chain[i]);
  // Word 15, only when there are some: bytes of index changes after the body.
  if (!index_changes.empty()) {
    signal.set_word(11 + kMaxReplicas, static_cast<uint32_t>(index_changes.size()));
    body.insert(body.end(), index_changes.begin(), index_changes.end());
  }
  signal.set_section(std::move(body));
  return signal;
}

Result<LqhKeyReq> LqhKeyReq::from_signal(Signal& signal) {
  const uint32_t packed = signal.word(6);
  const uint32_t chain_word = signal.word(10);
  const uint32_t length = chain_word & 0xFFFF;
  const uint32_t position = chain_word >> 16;
  if (!valid_op(packed & 0xFF, (packed >> 8) & 0xFF) || length == 0 || length > kMaxReplicas ||
      position >= length) {
    return malformed(signal);
  }
  LqhKeyReq req;
  req.transid = get_u64(signal, 0);
  req.tc_op = signal.word(2);
  req.table_id = signal.word(3);
  req.table_version = signal.word(4);
  req.fragment = signal.word(5);
  req.type = static_cast<OpType>(packed & 0xFF);
  req.lock = static_cast<LockMode>((packed >> 8) & 0xFF);
  req.flags = static_cast<uint8_t>(packed >> 16);
  req.log_part = static_cast<uint16_t>(signal.word(7));
  req.api_node = static_cast<uint16_t>(signal.word(7) >> 16);
  req.coordinator.node_id = static_cast<uint16_t>(signal.word(8));
  req.coordinator.instance = static_cast<uint16_t>(signal.word(8) >> 16);
  req.coordinator.block = static_cast<uint16_t>(signal.word(9));
  req.position = position;
  for (uint32_t i = 0; i < length; ++i) {
    req.chain.push_back(static_cast<uint16_t>(signal.word(11 + i)));
  }
  req.body = signal.take_section();
  if (!split_trailer(&req.body, signal.word(11 + kMaxReplicas), &req.index_changes)) {
    return malformed(signal);
  }
  return req;
}

// ---- LQH_KEYCONF / LQH_KEYREF ----

Signal LqhKeyConf::to_signal() && {
  Signal signal(kLqhKeyConf);
  set_u64(&signal, 0, transid);
  signal.set_word(2, tc_op);
  signal.set_word(3, flags);
  // Word 4, only when there are some: bytes of index changes after the values.
  if (!index_changes.empty()) {
    signal.set_word(4, static_cast<uint32_t>(index_changes.size()));
    values.insert(values.end(), index_changes.begin(), index_changes.end());
  }
  signal.set_section(std::move(values));
  return signal;
}

Result<LqhKeyConf> LqhKeyConf::from_signal(Signal& signal) {
  LqhKeyConf conf;
  conf.transid = get_u64(signal, 0);
  conf.tc_op = signal.word(2);
  conf.flags = static_cast<uint8_t>(signal.word(3));
  conf.values = signal.take_section();
  if (!split_trailer(&conf.values, signal.word(4), &conf.index_changes)) return malformed(signal);
  return conf;
}

Signal LqhKeyRef::to_signal() && {
  Signal signal(kLqhKeyRef);
  set_u64(&signal, 0, transid);
  signal.set_word(2, tc_op);
  signal.set_word(3, static_cast<uint32_t>(error));
  signal.set_section(text_section(message));
  return signal;
}

Result<LqhKeyRef> LqhKeyRef::from_signal(Signal& signal) {
  if (!valid_error(signal.word(3))) return malformed(signal);
  LqhKeyRef ref;
  ref.transid = get_u64(signal, 0);
  ref.tc_op = signal.word(2);
  ref.error = static_cast<ErrorCode>(signal.word(3));
  ref.message = section_text(signal);
  return ref;
}

Signal transaction_signal(kernel::SignalId id, uint64_t transid) {
  Signal signal(id);
  set_u64(&signal, 0, transid);
  return signal;
}

uint64_t transaction_of(const Signal& signal) {
  return get_u64(signal, 0);
}

Signal api_transaction_signal(kernel::SignalId id, uint64_t api_tx) {
  return transaction_signal(id, api_tx);
}

// ---- TC_KEYCONF ----

Signal TcKeyConf::encode(uint64_t api_tx, uint32_t flags, ErrorCode tx_error, uint32_t gci,
                         std::string_view tx_message, std::span<const OpResultMsg> results) {
  Signal signal(kTcKeyConf);
  set_u64(&signal, 0, api_tx);
  signal.set_word(2, flags);
  signal.set_word(3, static_cast<uint32_t>(tx_error));
  signal.set_word(4, static_cast<uint32_t>(results.size()));
  signal.set_word(5, gci);
  // Messages are short texts; an over-long one is cut rather than failing the reply.
  const std::string_view message = tx_message.substr(0, 1024);
  // Nothing to say (a commit's or an empty batch's answer): no section at all.
  if (message.empty() && results.empty()) return signal;
  size_t bytes = 2 + message.size();
  for (const OpResultMsg& result : results) bytes += encoded_size(result);
  // Written through a pointer into a section sized once: this is every batch's answer.
  Bytes section(bytes);
  uint8_t* p = section.data();
  const auto put = [&p](uint64_t v, size_t width) {
    for (size_t i = 0; i < width; ++i) *p++ = static_cast<uint8_t>(v >> (8 * i));
  };
  put(message.size(), 2);
  if (!message.empty()) std::memcpy(p, message.data(), message.size());
  p += message.size();
  for (const OpResultMsg& result : results) {
    put(result.op_index, 4);
    put(static_cast<uint16_t>(result.error), 2);
    put(result.flags, 1);
    put(result.data.size(), 4);
    if (!result.data.empty()) std::memcpy(p, result.data.data(), result.data.size());
    p += result.data.size();
  }
  signal.set_section(std::move(section));
  return signal;
}

Signal TcKeyConf::to_signal() && {
  return encode(api_tx, flags, tx_error, gci, tx_message, results);
}

Status TcKeyConfView::parse_into(const Signal& signal, TcKeyConfView* out) {
  if (!valid_error(signal.word(3))) return malformed(signal);
  TcKeyConfView& conf = *out;
  conf.api_tx = get_u64(signal, 0);
  conf.flags = signal.word(2);
  conf.tx_error = static_cast<ErrorCode>(signal.word(3));
  const uint32_t count = signal.word(4);
  conf.gci = signal.word(5);
  conf.tx_message = {};
  conf.results.clear();
  // No section: no message and no result (TcKeyConf::encode).
  if (signal.section().empty()) {
    if (count != 0) return malformed(signal);
    return Status::OK();
  }
  ByteReader in(as_view(signal.section()));
  uint16_t message_size = 0;
  if (!in.u16(&message_size) || !in.take(message_size, &conf.tx_message) ||
      count > in.remaining() / 11) {
    return malformed(signal);
  }
  conf.results.resize(count);
  for (OpResult& result : conf.results) {
    uint16_t error = 0;
    uint32_t size = 0;
    if (!in.u32(&result.op_index) || !in.u16(&error) || !valid_error(error) ||
        !in.u8(&result.flags) || !in.u32(&size) || !in.take(size, &result.data)) {
      return malformed(signal);
    }
    result.error = static_cast<ErrorCode>(error);
  }
  if (!in.done()) return malformed(signal);
  return Status::OK();
}

Result<TcKeyConfView> TcKeyConfView::parse(const Signal& signal) {
  TcKeyConfView conf;
  DUO_RETURN_IF_ERROR(parse_into(signal, &conf));
  return conf;
}

Result<TcKeyConf> TcKeyConf::from_signal(Signal& signal) {
  DUO_ASSIGN_OR_RETURN(TcKeyConfView view, TcKeyConfView::parse(signal));
  TcKeyConf conf;
  conf.api_tx = view.api_tx;
  conf.flags = view.flags;
  conf.tx_error = view.tx_error;
  conf.gci = view.gci;
  conf.tx_message.assign(view.tx_message);
  conf.results.resize(view.results.size());
  for (size_t i = 0; i < view.results.size(); ++i) {
    const TcKeyConfView::OpResult& from = view.results[i];
    OpResultMsg& to = conf.results[i];
    to.op_index = from.op_index;
    to.error = from.error;
    to.flags = from.flags;
    to.data.assign(from.data.begin(), from.data.end());
  }
  return conf;
}

// ---- Scans ----

Status ScanBody::encode(Bytes* out) const {
  put_u32(out, static_cast<uint32_t>(filter.size()));
  append(out, filter);
  encode_columns(columns, out);
  DUO_RETURN_IF_ERROR(encode_attr_values(low, out));
  return encode_attr_values(high, out);
}

Result<ScanBody> ScanBody::decode(std::string_view bytes) {
  ByteReader in(bytes);
  ScanBody body;
  uint32_t filter_size = 0;
  std::string_view filter;
  if (!in.u32(&filter_size) || !in.take(filter_size, &filter) ||
      !decode_columns(&in, &body.columns) || !decode_attr_values(&in, &body.low) ||
      !decode_attr_values(&in, &body.high) || !in.done()) {
    return Status(ErrorCode::kInvalidArgument, "malformed scan body");
  }
  body.filter.assign(filter);
  return body;
}

Signal ScanTabReq::to_signal() && {
  Signal signal(kScanTabReq);
  set_u64(&signal, 0, api_tx);
  signal.set_word(2, scan_id);
  signal.set_word(3, table_id);
  signal.set_word(4, table_version);
  signal.set_word(5, static_cast<uint32_t>(index));
  signal.set_word(6, flags);
  signal.set_word(7, batch_rows);
  signal.set_section(std::move(body));
  return signal;
}

Result<ScanTabReq> ScanTabReq::from_signal(Signal& signal) {
  ScanTabReq req;
  req.api_tx = get_u64(signal, 0);
  req.scan_id = signal.word(2);
  req.table_id = signal.word(3);
  req.table_version = signal.word(4);
  req.index = static_cast<int32_t>(signal.word(5));
  req.flags = signal.word(6);
  req.batch_rows = signal.word(7);
  req.body = signal.take_section();
  return req;
}

Signal ScanFragReq::to_signal() && {
  Signal signal(kScanFragReq);
  set_u64(&signal, 0, transid);
  signal.set_word(2, scan_ptr);
  signal.set_word(3, table_id);
  signal.set_word(4, table_version);
  signal.set_word(5, fragment);
  signal.set_word(6, log_part);
  signal.set_word(7, static_cast<uint32_t>(index));
  signal.set_word(8, flags);
  signal.set_word(9, batch_rows);
  signal.set_word(10, batch_bytes);
  signal.set_section(std::move(body));
  return signal;
}

Result<ScanFragReq> ScanFragReq::from_signal(Signal& signal) {
  ScanFragReq req;
  req.transid = get_u64(signal, 0);
  req.scan_ptr = signal.word(2);
  req.table_id = signal.word(3);
  req.table_version = signal.word(4);
  req.fragment = signal.word(5);
  req.log_part = static_cast<uint16_t>(signal.word(6));
  req.index = static_cast<int32_t>(signal.word(7));
  req.flags = signal.word(8);
  req.batch_rows = signal.word(9);
  req.batch_bytes = signal.word(10);
  req.body = signal.take_section();
  return req;
}

Signal ScanBatch::to_signal(kernel::SignalId id_of_signal) && {
  Signal signal(id_of_signal);
  set_u64(&signal, 0, tx);
  signal.set_word(2, id);
  signal.set_word(3, fragment);
  signal.set_word(4, rows);
  signal.set_word(5, flags);
  signal.set_section(std::move(batch));
  return signal;
}

Result<ScanBatch> ScanBatch::from_signal(Signal& signal) {
  ScanBatch batch;
  batch.tx = get_u64(signal, 0);
  batch.id = signal.word(2);
  batch.fragment = signal.word(3);
  batch.rows = signal.word(4);
  batch.flags = signal.word(5);
  batch.batch = signal.take_section();
  return batch;
}

void ScanTabConf::add(uint32_t fragment, uint32_t fragment_flags, std::string_view batch) {
  put_u32(&section, fragment);
  put_u32(&section, fragment_flags);
  put_u32(&section, static_cast<uint32_t>(batch.size()));
  append(&section, batch);
  ++fragments;
}

Signal ScanTabConf::to_signal() && {
  Signal signal(kScanTabConf);
  set_u64(&signal, 0, api_tx);
  signal.set_word(2, scan_id);
  signal.set_word(3, fragments);
  signal.set_word(4, flags);
  signal.set_section(std::move(section));
  return signal;
}

Result<ScanTabConf> ScanTabConf::from_signal(Signal& signal) {
  ScanTabConf conf;
  conf.api_tx = get_u64(signal, 0);
  conf.scan_id = signal.word(2);
  conf.fragments = signal.word(3);
  conf.flags = signal.word(4);
  conf.section = signal.take_section();
  return conf;
}

Status ScanTabConf::entries(std::vector<Entry>* out) const {
  out->clear();
  ByteReader in(as_view(section));
  // Each entry takes at least its header: a count beyond that is malformed, and
  // reserving for it is bounded by the section's size.
  if (fragments > in.remaining() / kEntryHeaderBytes) {
    return Status(ErrorCode::kInvalidArgument, "malformed SCAN_TABCONF: too many entries");
  }
  out->reserve(fragments);
  for (uint32_t i = 0; i < fragments; ++i) {
    Entry entry;
    uint32_t size = 0;
    if (!in.u32(&entry.fragment) || !in.u32(&entry.flags) || !in.u32(&size) ||
        !in.take(size, &entry.batch)) {
      return Status(ErrorCode::kInvalidArgument, "malformed SCAN_TABCONF: short entry");
    }
    out->push_back(entry);
  }
  if (!in.done()) {
    return Status(ErrorCode::kInvalidArgument, "malformed SCAN_TABCONF: trailing bytes");
  }
  return Status::OK();
}

Signal ScanRef::to_signal(kernel::SignalId id_of_signal) && {
  Signal signal(id_of_signal);
  set_u64(&signal, 0, tx);
  signal.set_word(2, id);
  signal.set_word(3, fragment);
  signal.set_word(4, static_cast<uint32_t>(error));
  signal.set_section(text_section(message));
  return signal;
}

Result<ScanRef> ScanRef::from_signal(Signal& signal) {
  if (!valid_error(signal.word(4))) return malformed(signal);
  ScanRef ref;
  ref.tx = get_u64(signal, 0);
  ref.id = signal.word(2);
  ref.fragment = signal.word(3);
  ref.error = static_cast<ErrorCode>(signal.word(4));
  ref.message = section_text(signal);
  return ref;
}

Signal ScanNextReq::to_signal(kernel::SignalId id_of_signal) const {
  Signal signal(id_of_signal);
  set_u64(&signal, 0, tx);
  signal.set_word(2, id);
  signal.set_word(3, fragment);
  signal.set_word(4, flags);
  return signal;
}

Result<ScanNextReq> ScanNextReq::from_signal(const Signal& signal) {
  ScanNextReq req;
  req.tx = get_u64(signal, 0);
  req.id = signal.word(2);
  req.fragment = signal.word(3);
  req.flags = signal.word(4);
  return req;
}

// ---- Dictionary ----

Result<Signal> TableMsg::to_signal(kernel::SignalId id) const {
  Signal signal(id);
  signal.set_word(0, request_id);
  signal.set_word(1, kind);
  Bytes section;
  DUO_RETURN_IF_ERROR(encode_table_def(table, &section));
  signal.set_section(std::move(section));
  return signal;
}

Result<TableMsg> TableMsg::from_signal(const Signal& signal) {
  TableMsg msg;
  msg.request_id = signal.word(0);
  msg.kind = signal.word(1);
  DUO_ASSIGN_OR_RETURN(msg.table, decode_table_def(as_view(signal.section())));
  return msg;
}

Signal DictMsg::to_signal(kernel::SignalId id) const {
  Signal signal(id);
  signal.set_word(0, request_id);
  signal.set_word(1, a);
  signal.set_word(2, b);
  signal.set_word(3, c);
  signal.set_section(text_section(text));
  return signal;
}

DictMsg DictMsg::from_signal(const Signal& signal) {
  DictMsg msg;
  msg.request_id = signal.word(0);
  msg.a = signal.word(1);
  msg.b = signal.word(2);
  msg.c = signal.word(3);
  msg.text = section_text(signal);
  return msg;
}

Result<Signal> list_tables_conf(uint32_t request_id, const std::vector<TableListEntry>& tables) {
  Signal signal(kListTablesConf);
  signal.set_word(0, request_id);
  signal.set_word(1, static_cast<uint32_t>(tables.size()));
  Bytes section;
  for (const TableListEntry& table : tables) {
    put_u32(&section, table.table_id);
    put_u32(&section, table.version);
    DUO_RETURN_IF_ERROR(put_string(&section, table.name));
  }
  signal.set_section(std::move(section));
  return signal;
}

Result<std::vector<TableListEntry>> decode_table_list(const Signal& signal) {
  const uint32_t count = signal.word(1);
  ByteReader in(as_view(signal.section()));
  if (count > in.remaining() / 10) return malformed(signal);
  std::vector<TableListEntry> tables(count);
  for (TableListEntry& table : tables) {
    if (!in.u32(&table.table_id) || !in.u32(&table.version) || !get_string(&in, &table.name)) {
      return malformed(signal);
    }
  }
  if (!in.done()) return malformed(signal);
  return tables;
}

// ---- ndbinfo ----

void encode_dbinfo_operations(const std::vector<DbinfoOperation>& rows, Bytes* out) {
  for (const DbinfoOperation& row : rows) {
    put_u64(out, row.transid);
    put_u32(out, row.table_id);
    put_u32(out, row.fragment);
    put_u16(out, row.api_node);
    put_u8(out, static_cast<uint8_t>(row.type));
    put_u8(out, static_cast<uint8_t>(row.lock));
    put_u8(out, row.waiting ? 1 : 0);
  }
}

bool decode_dbinfo_operations(std::string_view bytes, std::vector<DbinfoOperation>* out) {
  ByteReader in(bytes);
  while (!in.done()) {
    DbinfoOperation row;
    uint8_t type = 0, lock = 0, waiting = 0;
    if (!in.u64(&row.transid) || !in.u32(&row.table_id) || !in.u32(&row.fragment) ||
        !in.u16(&row.api_node) || !in.u8(&type) || !in.u8(&lock) || !in.u8(&waiting) ||
        !valid_op(type, lock) || waiting > 1) {
      return false;
    }
    row.type = static_cast<OpType>(type);
    row.lock = static_cast<LockMode>(lock);
    row.waiting = waiting == 1;
    out->push_back(row);
  }
  return true;
}

}  // namespace duo::protocol
