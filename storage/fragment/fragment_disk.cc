// Fragment: disk parts of rows — the disk reference in the slot, merging a committed
// row's disk part into its image, reserving a write's disk part at prepare and writing it
// at install (storage/disk DiskRowSpace does the space and the pages).
#include "storage/fragment/fragment_records.h"

namespace duo::storage {

disk::DiskRef Fragment::slot_disk_ref(RowRef row) const {
  uint64_t v;
  std::memcpy(&v, fixed_.row(row) + layout_.disk_ref_offset(), 8);
  return disk::DiskRef::decode(v);
}

void Fragment::set_slot_disk_ref(RowRef row, disk::DiskRef ref) {
  const uint64_t v = ref.encode();
  std::memcpy(fixed_.row(row) + layout_.disk_ref_offset(), &v, 8);
}

disk::DiskRef Fragment::committed_disk_ref(RowRef row) const {
  if (!(row_flags(row) & kRowCommitted)) return disk::kNoDiskRef;
  return slot_disk_ref(row);
}

RowImage Fragment::with_disk_part(RowRef row, const RowImage& image) const {
  const disk::DiskRef ref = slot_disk_ref(row);
  if (!ref.valid()) return image;  // committed before disk parts existed: all in memory
  const std::span<uint8_t> part = disk_->part(ref);
  // A page that passed its checksum yet holds no valid part here: never read past it.
  if (!layout_.valid_disk_part(part.data(), static_cast<uint32_t>(part.size()))) {
    invariant_failed("disk part of a committed row is malformed");
  }
  layout_.merge_disk_part(image.var, image.var_size, part.data(),
                          static_cast<uint32_t>(part.size()), &scratch_merged_var_);
  RowImage merged = image;
  merged.var = reinterpret_cast<const uint8_t*>(scratch_merged_var_.data());
  merged.var_size = static_cast<uint32_t>(scratch_merged_var_.size());
  return merged;
}

Status Fragment::prepare_disk(Operation* op, RowRef row, const RowImage* img) {
  if (op->disk_op != disk::kNoDiskOp) {
    // An earlier attempt of a resumed operation reserved for an older version.
    disk_->release(op->disk_op);
    op->disk_op = disk::kNoDiskOp;
  }
  const disk::DiskRef current = row == kNoRef ? disk::kNoDiskRef : committed_disk_ref(row);
  Result<disk::DiskOpId> prepared = disk::kNoDiskOp;
  if (img == nullptr) {
    prepared = disk_->prepare_delete(current);
  } else {
    layout_.split_disk_part(*img, disk::kMinDiskPartBytes, &scratch_memory_var_,
                            &scratch_disk_part_);
    const auto size = static_cast<uint32_t>(scratch_disk_part_.size());
    prepared = current.valid() ? disk_->prepare_update(current, size, disk_resident_)
                               : disk_->prepare_insert(size, disk_resident_);
  }
  if (!prepared.ok()) return prepared.take_status();
  op->disk_op = *prepared;
  return Status::OK();
}

void Fragment::install_disk_part(RowRef row, Operation* newest, const RowImage& full) {
  if (newest->disk_op == disk::kNoDiskOp) invariant_failed("write without a disk part reservation");
  if (newest->is_delete) {
    disk_->install(newest->disk_op, {});
    set_slot_disk_ref(row, disk::kNoDiskRef);
    return;
  }
  // Split first: `full` may be the slot's own var entry, rewritten below.
  layout_.split_disk_part(full, disk::kMinDiskPartBytes, &scratch_memory_var_, &scratch_disk_part_);
  const disk::DiskRef ref = disk_->install(
      newest->disk_op,
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(scratch_disk_part_.data()),
                               scratch_disk_part_.size()));
  const auto size = static_cast<uint32_t>(scratch_memory_var_.size());
  uint8_t* dst = fixed_.row(row);
  VarRef v;
  std::memcpy(&v, dst + layout_.var_ref_offset(), 4);
  if (var_.size(v) >= size) {
    var_.shrink(v, size);
  } else {
    if (newest->reserved_var == kNoVar) invariant_failed("var space not reserved");
    var_.free(v);
    v = newest->reserved_var;
    newest->reserved_var = kNoVar;
    var_.shrink(v, size);
    std::memcpy(dst + layout_.var_ref_offset(), &v, 4);
  }
  std::memcpy(var_.data(v), scratch_memory_var_.data(), size);
  set_slot_disk_ref(row, ref);
}

std::optional<disk::DiskPageId> Fragment::disk_page_for(
    OpType type, const AttrValues& key, const std::vector<uint16_t>& columns) const {
  if (!disk_) return std::nullopt;
  if (type == OpType::kRead && !layout_.needs_disk_part(columns)) return std::nullopt;
  Status status;
  const uint32_t hash = key_hash_of(key, &status);
  if (!status.ok()) return std::nullopt;
  const RowRef row = find_row(hash, key);
  if (row == kNoRef) return std::nullopt;
  const disk::DiskRef ref = committed_disk_ref(row);
  if (!ref.valid()) return std::nullopt;
  return ref.page_id();
}

disk::DiskOpPages Fragment::disk_pages_of(OpId op) const {
  const Operation* o = ops_.get(op);
  if (!disk_ || o->disk_op == disk::kNoDiskOp) return {};
  return disk_->pages_for(o->disk_op);
}

Status Fragment::check_disk_parts() const {
  if (!disk_) return Status::OK();
  size_t parts = 0;
  for (RowRef r = fixed_.next_position(0); r != FixedRowStore::kEnd;
       r = fixed_.next_position(r + 1)) {
    const uint32_t flags = row_flags(r);
    if (!(flags & kRowAllocated) || !(flags & kRowCommitted)) continue;
    const disk::DiskRef ref = slot_disk_ref(r);
    if (!ref.valid()) continue;
    ++parts;
    if (!disk_->is_live(ref)) {
      return Status(ErrorCode::kCorruption,
                    "row " + std::to_string(r) + ": its disk part is not a live entry");
    }
    const std::span<uint8_t> part = disk_->part(ref);
    if (!layout_.valid_disk_part(part.data(), static_cast<uint32_t>(part.size()))) {
      return Status(ErrorCode::kCorruption, "row " + std::to_string(r) + ": malformed disk part");
    }
  }
  const disk::DiskRowSpace::Usage usage = disk_->usage();
  if (usage.entries != parts) {
    return Status(ErrorCode::kCorruption, std::to_string(parts) +
                                              " rows name disk parts, the pages hold " +
                                              std::to_string(usage.entries));
  }
  return disk_->check_consistency();
}

Status Fragment::drop_disk_parts() {
  if (!disk_) return Status::OK();
  if (active_tx_count_ != 0)
    return Status(ErrorCode::kTransactionState, "fragment has active transactions");
  return disk_->drop();
}

disk::DiskSpaceStats Fragment::disk_stats() const {
  return disk_ ? disk_->stats() : disk::DiskSpaceStats{};
}

}  // namespace duo::storage
