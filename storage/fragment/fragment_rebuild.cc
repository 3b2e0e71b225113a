// Fragment: rebuilding the ordered indexes after the table's index list changed
// (CREATE/DROP INDEX on a table with rows; NDB's DBTUX index build). Indexes are derived
// data, so a rebuild from the committed rows is always correct; the caller guarantees
// the fragment is quiet (see fragment.h), which keeps the build a plain loop.
#include "storage/fragment/fragment_records.h"

namespace duo::storage {

namespace {
constexpr size_t kOrderedIndexesMax = 64;  // Operation::entry_bits has one bit per index
}  // namespace

Status Fragment::rebuild_ordered_indexes() {
  if (active_tx_count_ != 0) {
    return Status(ErrorCode::kTemporary, "index build needs a fragment without transactions");
  }
  if (schema_->ordered_indexes.size() > kOrderedIndexesMax) {
    return Status(ErrorCode::kInvalidArgument, "Too many keys specified; max 64 keys allowed");
  }
  // Comparators name their index by number, so the old ones go with the old trees.
  ordered_.clear();
  comparators_.clear();
  DUO_RETURN_IF_ERROR(init_indexes());
  for (RowRef r = fixed_.next_position(0); r != FixedRowStore::kEnd;
       r = fixed_.next_position(r + 1)) {
    const uint32_t flags = row_flags(r);
    if (!(flags & kRowAllocated)) continue;
    set_row_flags(r, flags & ~kRowIndexed);
    if (!(flags & kRowCommitted)) continue;
    const RowImage img = slot_image(r);
    for (size_t i = 0; i < ordered_.size(); ++i) {
      const IndexDef& def = schema_->ordered_indexes[i];
      if (!def.unique) continue;
      bool has_null = false;
      for (uint16_t c : def.columns) has_null |= layout_.get(img, c).is_null;
      if (has_null) continue;  // NULLs never conflict, as in MySQL
      IndexProbe probe(this, static_cast<int>(i), nullptr, &img);
      auto c = ordered_[i]->lower_bound(probe, true);
      if (!c.valid() || probe.compare_to(c.ref()) != 0) continue;
      std::string key_text;
      for (uint16_t col : def.columns) {
        if (!key_text.empty()) key_text += "-";
        key_text += format_value(schema_->columns[col], layout_.get(img, col).data);
      }
      return Status(ErrorCode::kDuplicateKey,
                    "Duplicate entry '" + key_text + "' for key '" + def.name + "'");
    }
    DUO_RETURN_IF_ERROR(add_slot_entries(r));
  }
  return Status::OK();
}

}  // namespace duo::storage
