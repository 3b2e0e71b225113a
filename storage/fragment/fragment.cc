// Fragment: construction, row access, transactions, locks, key operations, commit/abort.
#include <algorithm>

#include "storage/fragment/fragment_records.h"

namespace duo::storage {

namespace {
// A read's projection when the caller gave none: every column. A named empty list (not
// a temporary), so choosing between it and the caller's list copies neither.
const std::vector<uint16_t> kAllColumns;
}  // namespace

// ---------------------------------------------------------------------------------------
// Construction.

Fragment::Fragment(const TableSchema* schema, GlobalMemory* memory)
    : schema_(schema),
      memory_(memory),
      layout_(*schema),
      fixed_(memory, layout_.fixed_size()),
      var_(memory),
      hash_(memory, MemoryArea::kDataMemory),
      ops_(memory, MemoryArea::kTransactionMemory),
      locks_(memory, MemoryArea::kTransactionMemory),
      txs_(memory, MemoryArea::kTransactionMemory),
      images_(memory, MemoryArea::kTransactionMemory) {}

Result<std::unique_ptr<Fragment>> Fragment::create(const TableSchema* schema, GlobalMemory* memory,
                                                   const FragmentDisk* disk) {
  DUO_RETURN_IF_ERROR(schema->validate());
  if (schema->ordered_indexes.size() > 64) {
    return Status(ErrorCode::kInvalidArgument, "Too many keys specified; max 64 keys allowed");
  }
  std::unique_ptr<Fragment> f(new Fragment(schema, memory));
  DUO_RETURN_IF_ERROR(f->init_indexes());
  if (disk != nullptr && f->layout_.has_disk_part()) {
    if (disk->tablespace == nullptr || disk->undo == nullptr || disk->pages == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "disk parts need a tablespace, an undo log and pages");
    }
    f->disk_ = std::make_unique<disk::DiskRowSpace>(disk->owner, disk->tablespace, disk->undo, disk->pages);
    f->disk_resident_ = disk->resident;
  }
  return f;
}

Status Fragment::init_indexes() {
  for (size_t i = 0; i < schema_->ordered_indexes.size(); ++i) {
    const IndexDef& def = schema_->ordered_indexes[i];
    comparators_.push_back(std::make_unique<IndexComparator>(this, static_cast<int>(i)));
    // Equal prefixes imply equal keys only for one NOT NULL integer column of <= 32 bits.
    bool exact = false;
    if (def.columns.size() == 1) {
      const ColumnDef& c = schema_->columns[def.columns[0]];
      const std::string zero(column_max_size(c), '\0');
      if (!c.nullable && !is_var_sized(c)) normalized_prefix(c, zero, &exact);
    }
    ordered_.push_back(std::make_unique<OrderedIndex>(memory_, comparators_.back().get(), exact));
  }
  return Status::OK();
}

Fragment::~Fragment() {
  // Abort what is still open so operation records (which own heap-allocated pending
  // requests) are destroyed; pages go back with the stores and pools.
  for (TxId tx = 0; tx < tx_active_.size(); ++tx) {
    if (tx_active_[tx]) abort(tx).ignore_error();
  }
}

// ---------------------------------------------------------------------------------------
// Row access helpers.

uint32_t Fragment::row_flags(RowRef row) const {
  uint32_t f;
  std::memcpy(&f, fixed_.row(row) + kRowFlagsOffset, 4);
  return f;
}
void Fragment::set_row_flags(RowRef row, uint32_t flags) {
  std::memcpy(fixed_.row(row) + kRowFlagsOffset, &flags, 4);
}
uint32_t Fragment::row_lock_id(RowRef row) const {
  uint32_t l;
  std::memcpy(&l, fixed_.row(row) + kRowLockOffset, 4);
  return l;
}
void Fragment::set_row_lock_id(RowRef row, uint32_t lock_id) {
  std::memcpy(fixed_.row(row) + kRowLockOffset, &lock_id, 4);
}

RowImage Fragment::slot_image(RowRef row) const {
  RowImage img;
  img.fixed = fixed_.row(row);
  if (layout_.has_var()) {
    VarRef v;
    std::memcpy(&v, img.fixed + layout_.var_ref_offset(), 4);
    img.var = var_.data(v);
    img.var_size = var_.size(v);
  }
  return img;
}

RowImage Fragment::op_image(const Operation& op) const {
  if (op.image_in_slot) return slot_image(op.row);
  RowImage img;
  img.fixed = op.image;
  img.var = op.image + layout_.fixed_size();
  img.var_size = op.image_var_size;
  return img;
}

RowRef Fragment::entry_row(uint32_t entry) const {
  if (entry & kOpEntryBit) return ops_.get(entry & ~kOpEntryBit)->row;
  return entry;
}

RowImage Fragment::entry_image(uint32_t entry) const {
  if (entry & kOpEntryBit) return op_image(*ops_.get(entry & ~kOpEntryBit));
  return slot_image(entry);
}

uint32_t Fragment::key_hash_of(const AttrValues& values, Status* status) const {
  uint64_t h = kHashSeed;
  for (uint16_t col : schema_->primary_key) {
    const int i = values.find(col);
    if (i < 0 || values.entry(static_cast<size_t>(i)).is_null) {
      *status = Status(ErrorCode::kInvalidArgument,
                       "primary key column '" + schema_->columns[col].name + "' missing");
      return 0;
    }
    h = hash_value(schema_->columns[col], values.value(static_cast<size_t>(i)), h);
  }
  return static_cast<uint32_t>(h ^ (h >> 32));
}

uint32_t Fragment::row_key_hash(const RowImage& image) const {
  uint64_t h = kHashSeed;
  for (uint16_t col : schema_->primary_key) {
    h = hash_value(schema_->columns[col], layout_.get(image, col).data, h);
  }
  return static_cast<uint32_t>(h ^ (h >> 32));
}

RowRef Fragment::find_row(uint32_t hash, const AttrValues& key) const {
  return hash_.find(hash, [&](uint32_t ref) {
    const RowImage img = slot_image(ref);
    for (uint16_t col : schema_->primary_key) {
      const int i = key.find(col);
      const ColumnValue v = layout_.get(img, col);
      if (compare_values(schema_->columns[col], v.data, key.value(static_cast<size_t>(i))) != 0) {
        return false;
      }
    }
    return true;
  });
}

// ---------------------------------------------------------------------------------------
// Locks.

Fragment::LockOutcome Fragment::acquire_lock(TxId tx, RowRef row, LockMode mode, OpId op,
                                             uint32_t* lock_id, Status* error) {
  uint32_t id = row_lock_id(row);
  if (id == kNullId) {
    auto created = locks_.create();
    if (!created.ok()) {
      *error = created.take_status();
      return LockOutcome::kFailed;
    }
    id = *created;
    locks_.get(id)->row = row;
    set_row_lock_id(row, id);
  }
  RowLock* lock = locks_.get(id);
  *lock_id = id;
  // A resumed operation may already hold this lock (it waited on another row's key).
  if (ops_.get(op)->lock_id == id) return LockOutcome::kGranted;
  bool conflict = false;
  bool mine = false;
  for (OpId h = lock->holders; h != kNullId; h = ops_.get(h)->next_holder) {
    const Operation* holder = ops_.get(h);
    if (holder->tx == tx) {
      mine = true;
    } else if (mode == LockMode::kExclusive || holder->mode == LockMode::kExclusive) {
      conflict = true;
    }
  }
  // FIFO fairness: a newcomer queues behind earlier waiters unless it already holds the row.
  if (conflict || (!mine && lock->waiters_head != kNullId)) return LockOutcome::kMustWait;
  Operation* o = ops_.get(op);
  o->lock_id = id;
  o->next_holder = lock->holders;
  lock->holders = op;
  return LockOutcome::kGranted;
}

void Fragment::wake_waiters(RowLock* lock) {
  // Every waiter retries from its key (the row may be gone or changed); the first to
  // retry gets the lock, the others queue again in the same order.
  for (OpId w = lock->waiters_head; w != kNullId;) {
    Operation* op = ops_.get(w);
    w = op->next_waiter;
    op->next_waiter = kNullId;
    op->wait_lock_id = kNullId;
    op->state = OpState::kReady;
    ready_.push_back(op->id);
  }
  lock->waiters_head = lock->waiters_tail = kNullId;
}

// ---------------------------------------------------------------------------------------
// Transactions.

Result<TxId> Fragment::begin() {
  DUO_ASSIGN_OR_RETURN(TxId tx, txs_.create());
  if (tx >= tx_active_.size()) tx_active_.resize(tx + 1024, 0);
  tx_active_[tx] = 1;
  ++active_tx_count_;
  return tx;
}

Result<OpId> Fragment::new_operation(TxId tx, OpType type, LockMode mode, RowRef row) {
  DUO_ASSIGN_OR_RETURN(OpId id, ops_.create());
  Operation* op = ops_.get(id);
  op->id = id;
  op->tx = tx;
  op->type = type;
  op->mode = mode;
  op->row = row;
  LocalTx* t = txs_.get(tx);
  op->next_in_tx = t->ops_head;
  t->ops_head = id;
  return id;
}

OpResult Fragment::park(OpId op_id, uint32_t lock_id, TxId tx, OpType type,
                        const AttrValues& key_or_row, const AttrValues* values,
                        const InterpretedUpdate* program, LockMode mode,
                        const std::vector<uint16_t>* columns) {
  Operation* op = ops_.get(op_id);
  if (!op->pending) {
    op->pending = std::make_unique<PendingRequest>();
    PendingRequest& p = *op->pending;
    p.type = type;
    p.mode = mode;
    p.key_or_row = key_or_row;
    if (values) {
      p.values = *values;
      p.has_values = true;
    }
    if (program) {
      p.program = program->encode();
      p.has_program = true;
    }
    if (columns) p.columns = *columns;
  }
  (void)tx;
  op->state = OpState::kWaiting;
  op->wait_lock_id = lock_id;
  RowLock* lock = locks_.get(lock_id);
  op->next_waiter = kNullId;
  if (lock->waiters_tail != kNullId) ops_.get(lock->waiters_tail)->next_waiter = op_id;
  else lock->waiters_head = op_id;
  lock->waiters_tail = op_id;
  OpResult r;
  r.op = op_id;
  r.waiting = true;
  return r;
}

bool Fragment::is_waiting(OpId op) const {
  const OpState s = ops_.get(op)->state;
  return s == OpState::kWaiting || s == OpState::kReady;
}

std::vector<OpId> Fragment::take_ready() {
  std::vector<OpId> out;
  out.swap(ready_);
  return out;
}

OpResult Fragment::resume(OpId op_id, AttrValues* out) {
  Operation* op = ops_.get(op_id);
  if (op->state != OpState::kReady || !op->pending) {
    OpResult r;
    r.status = Status(ErrorCode::kTransactionState, "operation is not ready to resume");
    return r;
  }
  // Keep the request alive while execute() may re-park the same operation.
  std::unique_ptr<PendingRequest> p = std::move(op->pending);
  std::unique_ptr<InterpretedUpdate> program;
  if (p->has_program) {
    auto decoded = InterpretedUpdate::decode(p->program);
    if (!decoded.ok()) {
      OpResult r;
      r.status = decoded.take_status();
      return r;
    }
    program = std::make_unique<InterpretedUpdate>(std::move(decoded).value());
    Status bound = program->bind(*schema_);
    if (!bound.ok()) {
      OpResult r;
      r.status = std::move(bound);
      return r;
    }
  }
  op->pending = std::move(p);
  PendingRequest& req = *op->pending;
  return execute(op->tx, req.type, req.key_or_row, req.has_values ? &req.values : nullptr,
                 program.get(), req.mode, &req.columns, out, op_id);
}

Status Fragment::cancel_wait(OpId op_id) {
  Operation* op = ops_.get(op_id);
  if (op->state == OpState::kWaiting) {
    RowLock* lock = locks_.get(op->wait_lock_id);
    OpId prev = kNullId;
    for (OpId w = lock->waiters_head; w != kNullId; prev = w, w = ops_.get(w)->next_waiter) {
      if (w != op_id) continue;
      const OpId next = op->next_waiter;
      if (prev == kNullId) lock->waiters_head = next;
      else ops_.get(prev)->next_waiter = next;
      if (lock->waiters_tail == op_id) lock->waiters_tail = prev;
      break;
    }
    op->wait_lock_id = kNullId;
  } else if (op->state == OpState::kReady) {
    ready_.erase(std::remove(ready_.begin(), ready_.end(), op_id), ready_.end());
  } else {
    return Status(ErrorCode::kTransactionState, "operation is not waiting");
  }
  op->state = OpState::kAborted;
  op->pending.reset();
  return Status(ErrorCode::kLockWaitTimeout, "Lock wait timeout exceeded; try restarting transaction");
}

// ---------------------------------------------------------------------------------------
// Key operations.

OpResult Fragment::insert(TxId tx, const AttrValues& row) {
  return execute(tx, OpType::kInsert, row, nullptr, nullptr, LockMode::kExclusive, nullptr, nullptr,
                 kNullId);
}
OpResult Fragment::update(TxId tx, const AttrValues& key, const AttrValues& changes) {
  return execute(tx, OpType::kUpdate, key, &changes, nullptr, LockMode::kExclusive, nullptr, nullptr,
                 kNullId);
}
OpResult Fragment::write(TxId tx, const AttrValues& row) {
  return execute(tx, OpType::kWrite, row, nullptr, nullptr, LockMode::kExclusive, nullptr, nullptr,
                 kNullId);
}
OpResult Fragment::remove(TxId tx, const AttrValues& key) {
  return execute(tx, OpType::kDelete, key, nullptr, nullptr, LockMode::kExclusive, nullptr, nullptr,
                 kNullId);
}
OpResult Fragment::interpreted_update(TxId tx, const AttrValues& key, const InterpretedUpdate& program) {
  if (!program.is_bound()) {
    OpResult r;
    r.status = Status(ErrorCode::kInvalidArgument, "interpreted update is not bound to the table");
    return r;
  }
  return execute(tx, OpType::kInterpretedUpdate, key, nullptr, &program, LockMode::kExclusive,
                 nullptr, nullptr, kNullId);
}
OpResult Fragment::read(TxId tx, const AttrValues& key, LockMode mode,
                        const std::vector<uint16_t>& columns, AttrValues* out) {
  return execute(tx, OpType::kRead, key, nullptr, nullptr, mode, &columns, out, kNullId);
}

OpResult Fragment::execute(TxId tx, OpType type, const AttrValues& key_or_row,
                           const AttrValues* values, const InterpretedUpdate* program,
                           LockMode mode, const std::vector<uint16_t>* columns, AttrValues* out,
                           OpId resumed) {
  OpResult result;
  // A resumed operation that fails is aborted (it stays in its transaction).
  auto fail = [&](Status s) {
    if (resumed != kNullId) {
      Operation* op = ops_.get(resumed);
      op->state = OpState::kAborted;
      op->pending.reset();
    }
    result.status = std::move(s);
    return std::move(result);
  };
  const bool locking = mode != LockMode::kCommittedRead;
  if (tx == kNullId ? locking : !is_active(tx)) {
    return fail(Status(ErrorCode::kTransactionState, "operation needs an active transaction"));
  }
  if (tx != kNullId && txs_.get(tx)->committing && resumed == kNullId) {
    return fail(Status(ErrorCode::kTransactionState, "transaction is committing"));
  }
  Status status;
  const uint32_t hash = key_hash_of(key_or_row, &status);
  if (!status.ok()) return fail(std::move(status));
  // An insert builds its row while the hash bucket is on its way from memory.
  bool image_built = false;
  if (type == OpType::kInsert) {
    hash_.prefetch(hash);
    status = layout_.build_image(nullptr, key_or_row, true, &scratch_fixed_, &scratch_var_);
    if (!status.ok()) return fail(std::move(status));
    image_built = true;
  }
  const RowRef row = find_row(hash, key_or_row);

  // Committed read: no operation record, no lock.
  if (type == OpType::kRead && !locking) {
    if (row == kNoRef) return fail(Status(ErrorCode::kNotFound, "Can't find record"));
    View v = view_of(tx, row);
    if (!v.exists) return fail(Status(ErrorCode::kNotFound, "Can't find record"));
    if (out) {
      const std::vector<uint16_t>& cols = columns ? *columns : kAllColumns;
      if (v.op == nullptr && disk_ && layout_.needs_disk_part(cols)) v.image = with_disk_part(row, v.image);
      layout_.project(v.image, cols, out);
    }
    return result;
  }

  // Every other request is an operation of the transaction.
  OpId op_id = resumed;
  if (op_id == kNullId) {
    auto created = new_operation(tx, type, mode, row);
    if (!created.ok()) return fail(created.take_status());
    op_id = *created;
  }
  result.op = op_id;
  Operation* op = ops_.get(op_id);
  op->state = OpState::kPrepared;
  op->row = row;

  if (row == kNoRef) {
    if (type != OpType::kInsert && type != OpType::kWrite) {
      return fail(Status(ErrorCode::kNotFound, "Can't find record"));
    }
    // Fresh insert: build the version straight into a new slot (invisible until commit).
    Status s;
    if (!image_built) s = layout_.build_image(nullptr, key_or_row, true, &scratch_fixed_, &scratch_var_);
    if (!s.ok()) return fail(std::move(s));
    RowImage img{reinterpret_cast<uint8_t*>(scratch_fixed_.data()),
                 reinterpret_cast<const uint8_t*>(scratch_var_.data()),
                 static_cast<uint32_t>(scratch_var_.size())};
    uint32_t wait_row;
    s = check_unique(tx, kNoRef, img, nullptr, false, img, &wait_row);
    if (!s.ok()) return fail(std::move(s));
    if (wait_row != kNoRef) {
      // Another transaction's uncommitted version holds the key: wait for its outcome.
      return park(op_id, row_lock_id(wait_row), tx, type, key_or_row, values, program, mode, columns);
    }
    if (disk_) {
      s = prepare_disk(op, kNoRef, &img);
      if (!s.ok()) return fail(std::move(s));
    }
    auto slot = fixed_.allocate();
    if (!slot.ok()) return fail(slot.take_status());
    const RowRef r = *slot;
    VarRef v = kNoVar;
    if (layout_.has_var()) {
      auto ve = var_.allocate(img.var_size);
      if (!ve.ok()) {
        fixed_.free(r);
        return fail(ve.take_status());
      }
      v = *ve;
      std::memcpy(var_.data(v), img.var, img.var_size);
    }
    uint8_t* dst = fixed_.row(r);
    std::memcpy(dst, img.fixed, layout_.fixed_size());
    const uint32_t flags = kRowAllocated;
    std::memcpy(dst + kRowFlagsOffset, &flags, 4);
    std::memset(dst + kRowLockOffset, 0, 8);
    if (layout_.has_var()) std::memcpy(dst + layout_.var_ref_offset(), &v, 4);
    if (disk_) set_slot_disk_ref(r, disk::kNoDiskRef);
    Status hs = hash_.insert(hash, r);
    if (!hs.ok()) {
      if (v != kNoVar) var_.free(v);
      fixed_.free(r);
      return fail(std::move(hs));
    }
    uint32_t lock_id;
    Status lerr;
    if (acquire_lock(tx, r, LockMode::kExclusive, op_id, &lock_id, &lerr) != LockOutcome::kGranted) {
      hash_.erase(hash, r);
      if (v != kNoVar) var_.free(v);
      fixed_.free(r);
      return fail(lerr.ok() ? Status(ErrorCode::kInternal, "fresh row lock") : std::move(lerr));
    }
    Status es = add_slot_entries(r);
    if (!es.ok()) {
      // The row stays allocated (and locked) until the transaction ends; the op fails.
      op->row = r;
      return fail(std::move(es));
    }
    op = ops_.get(op_id);
    op->row = r;
    op->writes = true;
    op->image_in_slot = true;
    RowLock* lock = locks_.get(lock_id);
    op->prev_write = lock->write_head;
    lock->write_head = op_id;
    return result;
  }

  // The row exists in some form: lock it first.
  uint32_t lock_id;
  Status lerr;
  const LockMode need = type == OpType::kRead ? mode : LockMode::kExclusive;
  const LockOutcome lo = acquire_lock(tx, row, need, op_id, &lock_id, &lerr);
  if (lo == LockOutcome::kFailed) return fail(std::move(lerr));
  if (lo == LockOutcome::kMustWait) {
    return park(op_id, lock_id, tx, type, key_or_row, values, program, mode, columns);
  }
  op = ops_.get(op_id);
  View cur = view_of(tx, row);

  if (type == OpType::kRead) {
    if (!cur.exists) return fail(Status(ErrorCode::kNotFound, "Can't find record"));
    if (out) {
      const std::vector<uint16_t>& cols = columns ? *columns : kAllColumns;
      if (cur.op == nullptr && disk_ && layout_.needs_disk_part(cols)) cur.image = with_disk_part(row, cur.image);
      layout_.project(cur.image, cols, out);
    }
    return result;
  }
  // A write builds its version from every value of the current one.
  if (cur.exists && cur.op == nullptr && disk_) cur.image = with_disk_part(row, cur.image);
  OpType effective = type;
  if (type == OpType::kWrite) effective = cur.exists ? OpType::kUpdate : OpType::kInsert;
  if (effective == OpType::kInsert && cur.exists) {
    // MySQL quotes the value being inserted, which under a case-insensitive collation
    // may differ from the stored one ('ETE' against 'été').
    std::string key_text;
    for (uint16_t col : schema_->primary_key) {
      if (!key_text.empty()) key_text += "-";
      const int i = key_or_row.find(col);
      key_text += format_value(schema_->columns[col], key_or_row.value(static_cast<size_t>(i)));
    }
    return fail(Status(ErrorCode::kDuplicateKey, "Duplicate entry '" + key_text + "' for key 'PRIMARY'"));
  }
  if (effective != OpType::kInsert && !cur.exists) {
    return fail(Status(ErrorCode::kNotFound, "Can't find record"));
  }

  Status s;
  if (effective == OpType::kDelete) {
    if (disk_) {
      s = prepare_disk(op, row, nullptr);
      if (!s.ok()) return fail(std::move(s));
    }
    op->writes = true;
    op->is_delete = true;
  } else {
    // Build the new version: insert from nothing, update from the current version.
    AttrValues computed;
    const AttrValues* changes = values;
    if (effective == OpType::kInsert || type == OpType::kWrite) changes = &key_or_row;
    if (type == OpType::kInterpretedUpdate) {
      ImageAccessor acc(layout_, cur.image);
      auto applied = program->apply(acc, &computed);
      if (!applied.ok()) return fail(applied.take_status());
      if (*applied == UpdateOutcome::kGuardNotMet) {
        // Guard not TRUE: the row is locked but unchanged; the op is a no-op read.
        result.filtered = true;
        return result;
      }
      changes = &computed;
    }
    if (effective == OpType::kUpdate) {
      for (const AttrValues::Entry& e : changes->entries()) {
        if (e.column < schema_->columns.size() &&
            std::find(schema_->primary_key.begin(), schema_->primary_key.end(), e.column) !=
                schema_->primary_key.end() &&
            type == OpType::kUpdate) {
          // Primary key changes are delete + insert at the SQL layer.
          const int i = key_or_row.find(e.column);
          if (e.is_null || i < 0 ||
              compare_values(schema_->columns[e.column], changes->value(&e - &changes->entries()[0]),
                             key_or_row.value(static_cast<size_t>(i))) != 0) {
            return fail(Status(ErrorCode::kInvalidArgument, "primary key columns cannot be updated"));
          }
        }
      }
    }
    s = layout_.build_image(effective == OpType::kInsert ? nullptr : &cur.image, *changes,
                            effective == OpType::kInsert, &scratch_fixed_, &scratch_var_);
    if (!s.ok()) return fail(std::move(s));
    RowImage img{reinterpret_cast<uint8_t*>(scratch_fixed_.data()),
                 reinterpret_cast<const uint8_t*>(scratch_var_.data()),
                 static_cast<uint32_t>(scratch_var_.size())};
    uint32_t wait_row;
    s = check_unique(tx, row, img, cur.op, cur.exists, cur.image, &wait_row);
    if (!s.ok()) return fail(std::move(s));
    if (wait_row != kNoRef) {
      // Park on the conflicting row without taking it; our own row lock stays held.
      return park(op_id, row_lock_id(wait_row), tx, type, key_or_row, values, program, mode, columns);
    }
    // Reserve everything commit needs: the disk part, the image, and var space if the
    // row will grow.
    if (disk_) {
      s = prepare_disk(op, row, &img);
      if (!s.ok()) return fail(std::move(s));
    }
    auto block = images_.allocate(layout_.fixed_size() + img.var_size);
    if (!block.ok()) return fail(block.take_status());
    op = ops_.get(op_id);
    op->image = static_cast<uint8_t*>(*block);
    op->image_var_size = img.var_size;
    std::memcpy(op->image, img.fixed, layout_.fixed_size());
    std::memcpy(op->image + layout_.fixed_size(), img.var, img.var_size);
    if (layout_.has_var()) {
      // Every allocated slot owns a var entry; growing past it needs space reserved now.
      if (img.var_size > slot_image(row).var_size) {
        auto ve = var_.allocate(img.var_size);
        if (!ve.ok()) return fail(ve.take_status());
        op->reserved_var = *ve;
      }
    }
    op->writes = true;
  }
  RowLock* lock = locks_.get(lock_id);
  op->prev_write = lock->write_head;
  lock->write_head = op_id;
  if (!op->is_delete) {
    s = add_op_entries(op_id, row);
    if (!s.ok()) {
      // Unlink from the write chain; the op is aborted and keeps its resources until
      // the transaction ends.
      lock->write_head = op->prev_write;
      op->prev_write = kNullId;
      op->writes = false;
      return fail(std::move(s));
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------
// Commit, abort, end.

void Fragment::install(RowRef row) {
  const uint32_t lock_id = row_lock_id(row);
  if (lock_id == kNullId) return;
  RowLock* lock = locks_.get(lock_id);
  // Install only when every live write on the row is committed.
  Operation* newest = nullptr;
  for (OpId id = lock->write_head; id != kNullId; id = ops_.get(id)->prev_write) {
    Operation* op = ops_.get(id);
    if (op->state == OpState::kAborted) continue;
    if (op->state != OpState::kCommitted) return;
    if (!newest) newest = op;
  }
  if (!newest) return;
  const bool was_committed = row_flags(row) & kRowCommitted;
  if (newest->is_delete || newest->image_in_slot) {
    // Op-image entries name images that retire now; the slot's entries are right for
    // a fresh insert and go for a delete.
    for (OpId id = lock->write_head; id != kNullId; id = ops_.get(id)->prev_write) remove_op_entries(id);
    if (disk_) install_disk_part(row, newest, slot_image(row));
    if (newest->is_delete) {
      if (was_committed) log_delete(row);
      remove_slot_entries(row);
      set_row_flags(row, row_flags(row) & ~kRowCommitted);
      if (was_committed) --committed_rows_;
    } else {
      set_row_flags(row, row_flags(row) | kRowCommitted);
      if (!was_committed) ++committed_rows_;
    }
  } else {
    // The new version comes from a TransactionMemory image. For each index, the entry
    // that will name the row is either the slot's (key unchanged) or the op entry that
    // already carries the new key (one entry per row and key, ordered by (key, row)):
    // commit swaps that entry's ref in place and so never allocates.
    const RowImage next = op_image(*newest);
    const bool indexed = row_flags(row) & kRowIndexed;
    OpId keeper[64];
    for (size_t i = 0; i < ordered_.size(); ++i) {
      const int ix = static_cast<int>(i);
      keeper[i] = kNullId;
      if (indexed && compare_index_keys(ix, slot_image(row), next) == 0) continue;
      for (OpId id = lock->write_head; id != kNullId; id = ops_.get(id)->prev_write) {
        const Operation* op = ops_.get(id);
        if ((op->entry_bits >> i & 1) && compare_index_keys(ix, op_image(*op), next) == 0) keeper[i] = id;
      }
      if (keeper[i] == kNullId) invariant_failed("no index entry carries the committed key");
      if (indexed && !ordered_[i]->erase(index_prefix(ix, slot_image(row)), row)) {
        invariant_failed("installed row missing from ordered index");
      }
    }
    // Retire every other op entry while the images are intact.
    for (OpId id = lock->write_head; id != kNullId; id = ops_.get(id)->prev_write) {
      Operation* op = ops_.get(id);
      const RowImage img = op_image(*op);
      for (size_t i = 0; i < ordered_.size(); ++i) {
        if (!(op->entry_bits >> i & 1) || keeper[i] == id) continue;
        if (!ordered_[i]->erase(index_prefix(static_cast<int>(i), img), id | kOpEntryBit)) {
          invariant_failed("op entry missing from ordered index");
        }
        op->entry_bits &= ~(uint64_t{1} << i);
      }
    }
    uint8_t* dst = fixed_.row(row);
    uint8_t header[16];
    const uint32_t keep = layout_.has_var() ? 16 : kRowHeaderBytes;
    std::memcpy(header, dst, keep);
    std::memcpy(dst + keep, next.fixed + keep, layout_.fixed_size() - keep);
    std::memcpy(dst, header, keep);
    if (disk_) {
      // The disk part goes to its page; the slot keeps the var part without it.
      install_disk_part(row, newest, next);
    } else if (layout_.has_var()) {
      VarRef v;
      std::memcpy(&v, dst + layout_.var_ref_offset(), 4);
      if (var_.size(v) >= next.var_size) {
        var_.shrink(v, next.var_size);
      } else {
        if (newest->reserved_var == kNoVar) invariant_failed("var space not reserved");
        var_.free(v);
        v = newest->reserved_var;
        newest->reserved_var = kNoVar;
        var_.shrink(v, next.var_size);
        std::memcpy(dst + layout_.var_ref_offset(), &v, 4);
      }
      std::memcpy(var_.data(v), next.var, next.var_size);
    }
    for (size_t i = 0; i < ordered_.size(); ++i) {
      if (keeper[i] == kNullId) continue;
      const RowImage slot = slot_image(row);
      if (!ordered_[i]->replace_ref(index_prefix(static_cast<int>(i), slot), keeper[i] | kOpEntryBit, row)) {
        invariant_failed("op entry to install missing from ordered index");
      }
      ops_.get(keeper[i])->entry_bits &= ~(uint64_t{1} << i);
    }
    set_row_flags(row, row_flags(row) | kRowCommitted | kRowIndexed);
    if (!was_committed) ++committed_rows_;
  }
  std::memcpy(fixed_.row(row) + kRowGciOffset, &commit_gci_, 4);
  if (change_sink_ != nullptr) report_change(row, newest->is_delete);
}

void Fragment::report_change(RowRef row, bool deleted) {
  // A deleted row's slot still holds its bytes until the transaction ends.
  scratch_change_.clear();
  RowImage image = slot_image(row);
  if (!deleted && disk_) image = with_disk_part(row, image);
  if (deleted) {
    layout_.project(image, schema_->primary_key, &scratch_change_);
    change_sink_->row_deleted(scratch_change_);
  } else {
    static const std::vector<uint16_t> kAllColumns;
    layout_.project(image, kAllColumns, &scratch_change_);
    change_sink_->row_written(scratch_change_);
  }
}

Status Fragment::commit_operation(OpId op_id) {
  Operation* op = ops_.get(op_id);
  if (op->state == OpState::kAborted || op->state == OpState::kCommitted) return Status::OK();
  if (op->state != OpState::kPrepared) {
    return Status(ErrorCode::kTransactionState, "operation is still waiting for a lock");
  }
  txs_.get(op->tx)->committing = true;
  op->state = OpState::kCommitted;
  if (op->writes) install(op->row);
  return Status::OK();
}

Status Fragment::abort_operation(OpId op_id) {
  Operation* op = ops_.get(op_id);
  if (op->state == OpState::kCommitted) {
    return Status(ErrorCode::kTransactionState, "operation already committed");
  }
  if (op->state == OpState::kWaiting || op->state == OpState::kReady) {
    cancel_wait(op_id).ignore_error();
    return Status::OK();
  }
  if (op->state == OpState::kAborted) return Status::OK();
  op->state = OpState::kAborted;
  if (op->disk_op != disk::kNoDiskOp) disk_->abort(op->disk_op);  // released at the end
  if (op->writes) {
    // The op's index entries stay until the transaction ends: later versions of the
    // row may rely on them for their key (one entry per row and key), and removing
    // entries here would mean re-adding some, which could fail for memory.
    // Other ops of the row may now be the newest live write and be complete.
    install(op->row);
  }
  return Status::OK();
}

void Fragment::release_row_if_dead(RowRef row) {
  const uint32_t flags = row_flags(row);
  if (!(flags & kRowAllocated) || (flags & kRowCommitted)) return;
  if (row_lock_id(row) != kNullId) return;  // someone still holds it
  remove_slot_entries(row);
  const RowImage img = slot_image(row);
  if (!hash_.erase(row_key_hash(img), row)) invariant_failed("dead row missing from hash index");
  if (layout_.has_var()) {
    VarRef v;
    std::memcpy(&v, fixed_.row(row) + layout_.var_ref_offset(), 4);
    var_.free(v);
  }
  fixed_.free(row);
}

Status Fragment::end(TxId tx) {
  if (!is_active(tx)) return Status(ErrorCode::kTransactionState, "no such transaction");
  LocalTx* t = txs_.get(tx);
  for (OpId id = t->ops_head; id != kNullId; id = ops_.get(id)->next_in_tx) {
    const OpState s = ops_.get(id)->state;
    if (s == OpState::kPrepared || s == OpState::kWaiting || s == OpState::kReady) {
      return Status(ErrorCode::kTransactionState, "transaction has unfinished operations");
    }
  }
  // 1. Drop index entries of every image, then release row locks (waking waiters).
  std::vector<RowRef>& rows = scratch_rows_;
  rows.clear();
  for (OpId id = t->ops_head; id != kNullId; id = ops_.get(id)->next_in_tx) {
    Operation* op = ops_.get(id);
    if (op->writes) remove_op_entries(id);
    // Only rows this transaction holds locked can die with it; an op that waited or
    // failed before locking names a row that may already be gone.
    if (op->lock_id != kNullId) rows.push_back(op->row);
  }
  for (OpId id = t->ops_head; id != kNullId; id = ops_.get(id)->next_in_tx) {
    Operation* op = ops_.get(id);
    if (op->lock_id == kNullId) continue;
    RowLock* lock = locks_.get(op->lock_id);
    OpId prev = kNullId;
    for (OpId h = lock->holders; h != kNullId; prev = h, h = ops_.get(h)->next_holder) {
      if (h != id) continue;
      if (prev == kNullId) lock->holders = op->next_holder;
      else ops_.get(prev)->next_holder = op->next_holder;
      break;
    }
    if (lock->write_head != kNullId && ops_.get(lock->write_head)->tx == tx) lock->write_head = kNullId;
    if (lock->holders == kNullId) {
      wake_waiters(lock);
      set_row_lock_id(lock->row, kNullId);
      locks_.destroy(op->lock_id);
    }
    op->lock_id = kNullId;
  }
  // 2. Rows that ended without a committed version are freed.
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  for (RowRef r : rows) release_row_if_dead(r);
  // 3. Images, reserved var space, records.
  for (OpId id = t->ops_head; id != kNullId;) {
    Operation* op = ops_.get(id);
    const OpId next = op->next_in_tx;
    if (op->image) images_.free(op->image);
    if (op->reserved_var != kNoVar) var_.free(op->reserved_var);
    // Disk space: nothing reserved or freed is available before the transaction ends.
    if (op->disk_op != disk::kNoDiskOp) disk_->release(op->disk_op);
    ops_.destroy(id);
    id = next;
  }
  txs_.destroy(tx);
  tx_active_[tx] = 0;
  --active_tx_count_;
  return Status::OK();
}

Status Fragment::commit(TxId tx) {
  if (!is_active(tx)) return Status(ErrorCode::kTransactionState, "no such transaction");
  for (OpId id = txs_.get(tx)->ops_head; id != kNullId; id = ops_.get(id)->next_in_tx) {
    if (is_waiting(id)) {
      return Status(ErrorCode::kTransactionState, "cannot commit while an operation waits for a lock");
    }
  }
  for (OpId id = txs_.get(tx)->ops_head; id != kNullId; id = ops_.get(id)->next_in_tx) {
    DUO_RETURN_IF_ERROR(commit_operation(id));
  }
  return end(tx);
}

Status Fragment::abort(TxId tx) {
  if (!is_active(tx)) return Status(ErrorCode::kTransactionState, "no such transaction");
  for (OpId id = txs_.get(tx)->ops_head; id != kNullId; id = ops_.get(id)->next_in_tx) {
    Operation* op = ops_.get(id);
    if (op->state == OpState::kCommitted) continue;
    DUO_RETURN_IF_ERROR(abort_operation(id));
  }
  return end(tx);
}

// ---------------------------------------------------------------------------------------
// Statistics and checks.

std::vector<Fragment::OperationInfo> Fragment::operations_of(TxId tx) const {
  std::vector<OperationInfo> out;
  if (!is_active(tx)) return out;
  for (OpId id = txs_.get(tx)->ops_head; id != kNullId; id = ops_.get(id)->next_in_tx) {
    const Operation* op = ops_.get(id);
    if (op->state == OpState::kCommitted || op->state == OpState::kAborted) continue;
    out.push_back(OperationInfo{op->type, op->mode,
                                op->state == OpState::kWaiting || op->state == OpState::kReady});
  }
  // The list is newest first (operations are pushed at its head).
  std::reverse(out.begin(), out.end());
  return out;
}

FragmentStats Fragment::stats() const {
  FragmentStats s;
  s.rows = committed_rows_;
  s.fixed_pages = fixed_.pages();
  s.var_pages = var_.pages();
  s.hash_index_bytes = hash_.memory_bytes();
  for (const auto& t : ordered_) s.ordered_index_bytes += t->memory_bytes();
  s.image_bytes = images_.memory_bytes();
  s.transaction_bytes = ops_.memory_bytes() + locks_.memory_bytes() + txs_.memory_bytes() +
                        s.image_bytes;
  return s;
}

Status Fragment::check_consistency() const {
  size_t committed = 0;
  size_t allocated = 0;
  for (RowRef r = fixed_.next_position(0); r != FixedRowStore::kEnd; r = fixed_.next_position(r + 1)) {
    const uint32_t flags = row_flags(r);
    if (!(flags & kRowAllocated)) continue;
    ++allocated;
    if (flags & kRowCommitted) ++committed;
    const RowImage img = slot_image(r);
    const uint32_t h = row_key_hash(img);
    bool found = false;
    hash_.find(h, [&](uint32_t ref) {
      if (ref == r) found = true;
      return ref == r;
    });
    if (!found) return Status(ErrorCode::kCorruption, "row " + std::to_string(r) + " not in hash index");
    if (flags & kRowIndexed) {
      for (size_t i = 0; i < ordered_.size(); ++i) {
        IndexProbe probe(this, static_cast<int>(i), nullptr, &img);
        auto c = ordered_[i]->lower_bound(probe, true);
        bool hit = false;
        for (; c.valid() && probe.compare_to(c.ref()) == 0; c.next()) hit |= c.ref() == r;
        if (!hit) return Status(ErrorCode::kCorruption, "row missing from ordered index " + std::to_string(i));
      }
    }
  }
  if (committed != committed_rows_) return Status(ErrorCode::kCorruption, "committed row count drift");
  if (hash_.size() != allocated) return Status(ErrorCode::kCorruption, "hash index size differs from rows");
  if (active_tx_count_ == 0) {
    for (const auto& t : ordered_) {
      if (t->size() != committed) return Status(ErrorCode::kCorruption, "ordered index size differs");
      DUO_RETURN_IF_ERROR(t->check_invariants());
    }
  }
  return Status::OK();
}


}  // namespace duo::storage
