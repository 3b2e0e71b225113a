// The data-path signals as typed messages: each struct is one signal's payload, with
// to_signal() (id, words and section filled in; the caller sets the receiver and
// sends) and from_signal() (which moves the section out of the signal). Word layouts
// are in docs/formats/kernel-protocol.md; keep both in step.
//
// The flow (NDB's, simplified; docs/formats/kernel-protocol.md has the diagrams):
//   client --TC_KEYREQ*--> coordinator --LQH_KEYREQ--> primary local_query
//          --LQH_KEYREQ--> backup local_query --LQH_KEYCONF--> coordinator
//   coordinator --LQH_COMMITREQ--> every replica --LQH_COMMITCONF--> coordinator
//   coordinator --TC_KEYCONF--> client
//
// Thread-safety: values.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/protocol/wire_codec.h"
#include "ndb-kernel/runtime/kernel_check.h"
#include "ndb-kernel/runtime/signal.h"
#include "storage/fragment/fragment.h"

namespace duo::protocol {

using kernel::Signal;
using storage::LockMode;
using storage::OpType;

// ---------------------------------------------------------------------------------------
// Key operations.

// Operation flags (TC_KEYREQ / LQH_KEYREQ).
inline constexpr uint8_t kOpExecute = 1;      // last operation of a batch: run the batch
inline constexpr uint8_t kOpCommit = 2;       // with kOpExecute: commit after the batch
inline constexpr uint8_t kOpIgnoreError = 4;  // an error of this op does not abort the tx
// LQH_KEYREQ only, set by a replica: it forwards an interpreted update whose guard was
// not TRUE there, so a starting replica without the row yet (node restart) still
// answers kConfFiltered (local_query_node_restart.cc).
inline constexpr uint8_t kOpFilteredUpstream = 0x80;

// What an operation carries besides its header: the key (or the whole row for insert
// and write), the values to set (update), the columns to read (read; empty = all) and
// an interpreted-update program (storage/scan/interpreted_update.h wire format).
struct OpBody {
  storage::AttrValues key_or_row;
  storage::AttrValues values;
  std::vector<uint16_t> columns;
  std::string program;

  // Appends the body to *out, growing it at most once.
  Status encode(Bytes* out) const;
  static Result<OpBody> decode(std::string_view bytes);
  // Decodes into *out (emptied first), keeping its buffers: a block that decodes every
  // operation into one OpBody allocates only while its buffers grow.
  static Status decode_into(std::string_view bytes, OpBody* out);
  void clear();
};

struct TcKeyReq {
  uint64_t api_tx = 0;       // the client's transaction id (unique per API node)
  uint32_t op_index = 0;     // the client's number for this operation in its transaction
  uint32_t table_id = 0;
  uint32_t table_version = 0;
  OpType type = OpType::kRead;
  LockMode lock = LockMode::kCommittedRead;
  uint8_t flags = 0;
  Bytes body;                // OpBody, passed through to local_query untouched

  Signal to_signal() &&;
  static Result<TcKeyReq> from_signal(Signal& signal);
};

// A replica chain: the nodes holding a fragment, primary first.
inline constexpr uint32_t kMaxReplicas = 4;  // NoOfReplicas is at most 4

// A replica chain held inline: every key operation carries one (LQH_KEYREQ, the
// coordinator's operation record), so it must not cost a heap allocation. Holds at most
// kMaxReplicas nodes; more is a caller bug (the configuration allows no more) and aborts.
class ReplicaChain {
 public:
  using value_type = uint16_t;
  using const_iterator = const uint16_t*;
  using iterator = const uint16_t*;

  ReplicaChain() = default;
  ReplicaChain(std::initializer_list<uint16_t> nodes) { assign(nodes.begin(), nodes.end()); }
  // From a placement's replicas (protocol/distribution.h).
  ReplicaChain(const std::vector<uint16_t>& nodes) {  // NOLINT(google-explicit-constructor)
    assign(nodes.data(), nodes.data() + nodes.size());
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint16_t operator[](size_t i) const { return nodes_[i]; }
  uint16_t at(size_t i) const {
    DUO_KERNEL_CHECK(i < size_, "replica chain index out of range");
    return nodes_[i];
  }
  uint16_t front() const { return at(0); }
  uint16_t back() const { return at(size_ - 1); }
  const uint16_t* begin() const { return nodes_.data(); }
  const uint16_t* end() const { return nodes_.data() + size_; }
  void clear() { size_ = 0; }
  void push_back(uint16_t node) {
    DUO_KERNEL_CHECK(size_ < kMaxReplicas, "replica chain longer than kMaxReplicas");
    nodes_[size_++] = node;
  }
  std::vector<uint16_t> to_vector() const { return {begin(), end()}; }
  // For holders of a chain as a vector (placements, tests); this one allocates.
  operator std::vector<uint16_t>() const { return to_vector(); }  // NOLINT

  friend bool operator==(const ReplicaChain& a, const ReplicaChain& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const ReplicaChain& a, const std::vector<uint16_t>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  void assign(const uint16_t* first, const uint16_t* last) {
    size_ = 0;
    for (; first != last; ++first) push_back(*first);
  }

  std::array<uint16_t, kMaxReplicas> nodes_{};
  uint8_t size_ = 0;
};

struct LqhKeyReq {
  uint64_t transid = 0;      // the coordinator's transaction id (unique per TC node)
  uint32_t tc_op = 0;        // the coordinator's operation record
  uint32_t table_id = 0;
  uint32_t table_version = 0;
  uint32_t fragment = 0;
  uint16_t log_part = 0;     // local_query instance on every replica
  OpType type = OpType::kRead;
  LockMode lock = LockMode::kCommittedRead;
  uint8_t flags = 0;
  kernel::BlockAddress coordinator;  // where the last replica answers
  uint16_t api_node = 0;
  ReplicaChain chain;                // replica nodes, primary first
  uint32_t position = 0;             // index of the receiver in chain
  Bytes body;
  // Set by the primary of a write on a table with unique indexes: the IndexChanges
  // (protocol/unique_index.h) the coordinator runs before the operation is done.
  Bytes index_changes;

  Signal to_signal() &&;
  static Result<LqhKeyReq> from_signal(Signal& signal);
};

inline constexpr uint8_t kConfFiltered = 1;  // interpreted update's guard was not TRUE

struct LqhKeyConf {
  uint64_t transid = 0;
  uint32_t tc_op = 0;
  uint8_t flags = 0;
  Bytes values;         // reads: encoded AttrValues of the row
  Bytes index_changes;  // writes: the primary's IndexChanges, passed down the chain

  Signal to_signal() &&;
  static Result<LqhKeyConf> from_signal(Signal& signal);
};

struct LqhKeyRef {
  uint64_t transid = 0;
  uint32_t tc_op = 0;
  ErrorCode error = ErrorCode::kOk;
  std::string message;

  Signal to_signal() &&;
  static Result<LqhKeyRef> from_signal(Signal& signal);
};

// LQH_COMMITREQ / LQH_COMMITCONF / LQH_ABORTREQ / LQH_ABORTCONF: the transaction id is
// the whole payload; the answer goes to the request's sender.
Signal transaction_signal(kernel::SignalId id, uint64_t transid);
uint64_t transaction_of(const Signal& signal);

// Flags of TC_KEYCONF.
inline constexpr uint32_t kTcBatchDone = 1;  // last TC_KEYCONF of the executed batch
inline constexpr uint32_t kTcCommitted = 2;  // the transaction committed
inline constexpr uint32_t kTcAborted = 4;    // the transaction aborted (tx_error says why)

struct OpResultMsg {
  uint32_t op_index = 0;
  ErrorCode error = ErrorCode::kOk;
  uint8_t flags = 0;      // kConfFiltered
  Bytes data;             // read values (encoded AttrValues), or the error message
};

struct TcKeyConf {
  uint64_t api_tx = 0;
  uint32_t flags = 0;
  ErrorCode tx_error = ErrorCode::kOk;  // with kTcAborted
  uint32_t gci = 0;                      // with kTcCommitted: the GCI it committed in
  std::string tx_message;
  std::vector<OpResultMsg> results;

  // Bytes of a result in the section, for the sender's splitting.
  static size_t encoded_size(const OpResultMsg& result) { return 11 + result.data.size(); }
  Signal to_signal() &&;
  static Result<TcKeyConf> from_signal(Signal& signal);
  // A TC_KEYCONF built from its parts, so a sender keeps its results where they are (the
  // coordinator's transaction record). The section is sized once; with neither a
  // message nor a result there is none (docs/formats/kernel-protocol.md).
  static Signal encode(uint64_t api_tx, uint32_t flags, ErrorCode tx_error, uint32_t gci,
                       std::string_view tx_message, std::span<const OpResultMsg> results);
};

// TC_KEYCONF read in place, for the client library's hot path: texts and row values
// point into the signal's section, which must outlive the view (from_signal copies).
struct TcKeyConfView {
  struct OpResult {
    uint32_t op_index = 0;
    ErrorCode error = ErrorCode::kOk;
    uint8_t flags = 0;
    std::string_view data;
  };
  uint64_t api_tx = 0;
  uint32_t flags = 0;
  ErrorCode tx_error = ErrorCode::kOk;
  uint32_t gci = 0;
  std::string_view tx_message;
  std::vector<OpResult> results;

  static Result<TcKeyConfView> parse(const Signal& signal);
  // parse() into *out, keeping the buffer of its results: a receiver that parses every
  // TC_KEYCONF into one view allocates only while that buffer grows. *out is undefined
  // after an error.
  static Status parse_into(const Signal& signal, TcKeyConfView* out);
};

// TC_COMMITREQ / TC_ROLLBACKREQ: the client's transaction id.
Signal api_transaction_signal(kernel::SignalId id, uint64_t api_tx);

// ---------------------------------------------------------------------------------------
// ndbinfo.cluster_operations: one live operation at a local_query instance
// (DBINFO_SCANCONF rows: u64 transid, u32 table, u32 fragment, u16 API node, u8 type,
// u8 lock mode, u8 waiting; 23 bytes each).
struct DbinfoOperation {
  uint16_t node_id = 0;         // not on the wire: the receiver fills in the sender's
  uint16_t block_instance = 0;  // node and local_query instance
  uint64_t transid = 0;
  uint32_t table_id = 0;
  uint32_t fragment = 0;
  uint16_t api_node = 0;
  OpType type = OpType::kRead;
  LockMode lock = LockMode::kCommittedRead;
  bool waiting = false;
};
inline constexpr size_t kDbinfoRowsMax = 2500;  // 57.5 KiB: one section
void encode_dbinfo_operations(const std::vector<DbinfoOperation>& rows, Bytes* out);
bool decode_dbinfo_operations(std::string_view bytes, std::vector<DbinfoOperation>* out);

// ---------------------------------------------------------------------------------------
// Scans.

inline constexpr uint32_t kScanDescending = 1;
inline constexpr uint32_t kScanLowInclusive = 2;
inline constexpr uint32_t kScanHighInclusive = 4;

struct ScanBody {
  std::string filter;  // FilterProgram wire format; empty = every row
  std::vector<uint16_t> columns;
  storage::AttrValues low, high;

  Status encode(Bytes* out) const;
  static Result<ScanBody> decode(std::string_view bytes);
};

struct ScanTabReq {
  uint64_t api_tx = 0;
  uint32_t scan_id = 0;
  uint32_t table_id = 0;
  uint32_t table_version = 0;
  int32_t index = -1;          // ordered index number; -1 = full scan
  uint32_t flags = 0;          // kScan*
  uint32_t batch_rows = 0;     // rows per fragment batch (0 = default)
  Bytes body;                  // ScanBody

  Signal to_signal() &&;
  static Result<ScanTabReq> from_signal(Signal& signal);
};

struct ScanFragReq {
  uint64_t transid = 0;
  uint32_t scan_ptr = 0;       // the coordinator's scan record
  uint32_t table_id = 0;
  uint32_t table_version = 0;
  uint32_t fragment = 0;
  uint16_t log_part = 0;
  int32_t index = -1;
  uint32_t flags = 0;
  uint32_t batch_rows = 0;
  uint32_t batch_bytes = 0;  // encoded bytes per batch (0 = local_query's default)
  Bytes body;

  Signal to_signal() &&;
  static Result<ScanFragReq> from_signal(Signal& signal);
};

inline constexpr uint32_t kScanFragmentDone = 1;  // no more rows from this fragment
inline constexpr uint32_t kScanAllDone = 2;       // SCAN_TABCONF: the whole scan is done
// SCAN_TABCONF: the last answer of a round: every fragment the round asked has answered,
// so the client may ask for the next round (SCAN_TABNEXTREQ) once it consumed the rows.
inline constexpr uint32_t kScanRoundDone = 4;

// SCAN_FRAGCONF (local_query -> coordinator): one fragment's batch. `id` is the
// coordinator's scan record.
struct ScanBatch {
  uint64_t tx = 0;  // transid
  uint32_t id = 0;
  uint32_t fragment = 0;
  uint32_t rows = 0;
  uint32_t flags = 0;          // kScanFragmentDone
  Bytes batch;                 // encoded RowBatch

  Signal to_signal(kernel::SignalId id_of_signal) &&;
  static Result<ScanBatch> from_signal(Signal& signal);
};

// SCAN_TABCONF (coordinator -> client): the batches of every fragment that answered
// since the last SCAN_TABCONF, so one round of a scan over many fragments costs the
// client one signal (NDB's TC, too, confirms several fragments in one SCAN_TABCONF).
// Section: per fragment u32 fragment, u32 flags (kScanFragmentDone), u32 size n, n
// bytes of encoded RowBatch; `fragments` entries exactly.
struct ScanTabConf {
  struct Entry {
    uint32_t fragment = 0;
    uint32_t flags = 0;
    std::string_view batch;  // encoded RowBatch: a view into the section it came from
  };
  static constexpr size_t kEntryHeaderBytes = 12;

  uint64_t api_tx = 0;
  uint32_t scan_id = 0;
  uint32_t flags = 0;      // kScanAllDone, kScanRoundDone
  uint32_t fragments = 0;  // entries in `section`
  Bytes section;

  // Appends one fragment's batch. The caller keeps the section within
  // kernel::kSectionBytesMax (kEntryHeaderBytes + batch size per entry).
  void add(uint32_t fragment, uint32_t fragment_flags, std::string_view batch);
  Signal to_signal() &&;
  static Result<ScanTabConf> from_signal(Signal& signal);
  // The entries of `section` (views into it); kInvalidArgument unless exactly
  // `fragments` well-formed entries fill it.
  Status entries(std::vector<Entry>* out) const;
};

// SCAN_FRAGREF / SCAN_TABREF.
struct ScanRef {
  uint64_t tx = 0;
  uint32_t id = 0;
  uint32_t fragment = 0;
  ErrorCode error = ErrorCode::kOk;
  std::string message;

  Signal to_signal(kernel::SignalId id_of_signal) &&;
  static Result<ScanRef> from_signal(Signal& signal);
};

inline constexpr uint32_t kScanClose = 1;

// SCAN_FRAGNEXTREQ / SCAN_TABNEXTREQ.
struct ScanNextReq {
  uint64_t tx = 0;
  uint32_t id = 0;
  uint32_t fragment = 0;
  uint32_t flags = 0;  // kScanClose

  Signal to_signal(kernel::SignalId id_of_signal) const;
  static Result<ScanNextReq> from_signal(const Signal& signal);
};

// ---------------------------------------------------------------------------------------
// Dictionary.

// CREATE_TABLEREQ, SCHEMA_PREPAREREQ, TABLE_ADDREQ, GET_TABLECONF: a request id (or
// schema transaction id) and a table definition.
struct TableMsg {
  uint32_t request_id = 0;
  uint32_t kind = 0;  // SCHEMA_PREPAREREQ: kSchemaCreate / kSchemaDrop
  TableDef table;

  Result<Signal> to_signal(kernel::SignalId id) const;
  static Result<TableMsg> from_signal(const Signal& signal);
};
inline constexpr uint32_t kSchemaCreate = 1;
inline constexpr uint32_t kSchemaDrop = 2;
// A new definition of an existing table (same id, columns and primary key; new version).
// Local blocks get it as a TABLE_ADDREQ of a table they hold with a higher version.
inline constexpr uint32_t kSchemaAlter = 3;
// The master's undo of a failed kSchemaAlter (back to the previous definition): like it,
// but a local_query never gives up waiting for the table's transactions.
inline constexpr uint32_t kSchemaAlterBack = 4;
// TABLE_ADDREQ kind word: 0, or kTableAddMayGiveUp when an alter may be refused after
// LocalQueryOptions::alter_wait_ms of waiting for the table's transactions.
inline constexpr uint32_t kTableAddMayGiveUp = 1;

// Every other dictionary signal: request id, three numbers and a name/message. The
// meaning per signal is in docs/formats/kernel-protocol.md (e.g. CREATE_TABLECONF:
// a = table id, b = version; *_REF: a = error code, text = message; DROP_TABLEREQ and
// GET_TABLEREQ: a = table id, or 0 and text = name).
struct DictMsg {
  uint32_t request_id = 0;
  uint32_t a = 0, b = 0, c = 0;
  std::string text;

  Signal to_signal(kernel::SignalId id) const;
  static DictMsg from_signal(const Signal& signal);
};

// LIST_TABLESCONF: the tables a dictionary knows.
struct TableListEntry {
  uint32_t table_id = 0;
  uint32_t version = 0;
  std::string name;
};
Result<Signal> list_tables_conf(uint32_t request_id, const std::vector<TableListEntry>& tables);
Result<std::vector<TableListEntry>> decode_table_list(const Signal& signal);

}  // namespace duo::protocol
