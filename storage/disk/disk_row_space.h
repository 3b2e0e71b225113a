// DiskRowSpace: the disk row parts of one table fragment — where they go, how space is
// reserved for transactions, and how a commit writes them (NDB's Dbtup disk allocation
// with its Disk_alloc_info, plus the page writes and undo of DBTUP's disk part).
//
// Space. The fragment gets whole extents from its Tablespace and places each row part
// (an entry of a disk row page, disk_row_page.h) on one of their pages. Per page it keeps
// in memory: free bytes (exact once this node touched the page, else the lower bound the
// page's class in the extent header promises), bytes reserved by prepared operations and
// bytes held (freed by a commit of a transaction that has not ended). Only
// free - reserved - held is available to new reservations.
//
// Lifecycle, shaped like an operation in Fragment / local_query:
//  - prepare_insert / prepare_update / prepare_delete, when the operation is prepared:
//    reserve what its commit needs — room on a page for the new version (in place when
//    the row's page has it, else on another page: the row moves) and the undo bytes of
//    its records. Errors are here and only here: kTablespaceFull (NDB 1601), kOutOfUndoSpace
//    (NDB 1501), and nothing is changed when they are returned.
//  - install, when the row's newest live version commits (one operation per row and
//    transaction installs; the others of that row just end): writes the page(s), appends
//    the undo records within the reservation, and returns the part's ref. Never fails.
//  - abort, when the operation is aborted (alone or with its transaction): its version
//    will never be installed; what it reserved stays taken until release.
//  - release, for every operation when its transaction ends (committed or aborted):
//    gives back what it reserved and what its install freed. Until then nothing an
//    operation reserved or freed can be taken by anyone, so an operation aborted while
//    another on the same row commits cannot lose or double-book space.
// An operation's reservation is relative to the row's committed part (the `current` ref
// passed at prepare), which no one changes while the transaction holds the row lock.
//
// Pages: every page pages_for() names, the current part's page at prepare, and the
// tablespace's extent-header pages must be pinned during the calls (disk_page_access.h).
// Allocation prefers, among pages with room (tightest fit first): a page the residency
// predicate says is in the cache; else a page never formatted (no read: target_fresh);
// else any page (a read); else a new extent.
//
// Limits: one in-memory record per live operation (the caller's operation records bound
// them), about 28 bytes per page of the fragment's extents and a map entry per extent.
//
// local_query should pin pages_for(op) right after prepare and keep them until release:
// then commit never waits for a read (NDB requests the page at prepare for the same
// reason).
//
// Thread-compatible: one owner (the fragment's LDM thread).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/disk/disk_page_access.h"
#include "storage/disk/disk_row_page.h"
#include "storage/disk/tablespace.h"
#include "storage/disk/undo_log.h"

namespace duo::storage::disk {

using DiskOpId = uint32_t;
inline constexpr DiskOpId kNoDiskOp = 0xFFFFFFFFu;

// True when a page is in the page cache (reading it costs no IO). Empty: none is.
using PageResidency = std::function<bool(DiskPageId)>;

// What an operation's install touches (pin these before install()).
struct DiskOpPages {
  DiskRef current;             // the committed part it rewrites, moves or frees (or none)
  bool has_target = false;     // the new version goes to `target` (insert or move)
  DiskPageId target;
  bool target_fresh = false;   // `target` was never formatted: no read is needed
};

struct DiskSpaceStats {
  size_t extents = 0;
  size_t pages = 0;
  uint64_t reserved_bytes = 0;  // held by prepared operations
  uint64_t held_bytes = 0;      // freed by commits of transactions not yet ended
  size_t live_operations = 0;
};

class DiskRowSpace {
 public:
  DiskRowSpace(FragmentOwner owner, Tablespace* tablespace, UndoLog* undo, DiskPageAccess* pages);
  DiskRowSpace(const DiskRowSpace&) = delete;
  DiskRowSpace& operator=(const DiskRowSpace&) = delete;

  // Restart: adopts an extent the tablespace's headers give this fragment (after the
  // undo pass); its pages' space comes from their classes.
  void attach_extent(ExtentId extent);

  // A new row part of `size_bytes` (kMinDiskPartBytes..kMaxDiskPartBytes).
  Result<DiskOpId> prepare_insert(uint32_t size_bytes, const PageResidency& resident);
  // The committed part `current` (its page pinned) becomes `new_size_bytes` long.
  Result<DiskOpId> prepare_update(DiskRef current, uint32_t new_size_bytes, const PageResidency& resident);
  // The committed part `current` goes (kNoDiskRef: the row has none; nothing to do).
  Result<DiskOpId> prepare_delete(DiskRef current);

  DiskOpPages pages_for(DiskOpId op) const;
  // Writes the operation's version (`bytes`, of the size it was prepared with; empty for
  // a delete) and returns where the part now is (kNoDiskRef after a delete). At most
  // once per operation.
  DiskRef install(DiskOpId op, std::span<const uint8_t> bytes);
  // The operation is aborted: installing it later is a bug (aborts the node).
  void abort(DiskOpId op);
  // The operation's transaction has ended: everything it held is available again.
  void release(DiskOpId op);

  // The bytes of a committed part (its page pinned).
  std::span<uint8_t> part(DiskRef ref) const;
  // True when `ref` names a live entry of a row page of this fragment (its page pinned).
  bool is_live(DiskRef ref) const;

  // Gives every extent back to the tablespace (DROP TABLE). No operation may be live;
  // kOutOfUndoSpace (nothing changed) when the undo records do not fit.
  Status drop();

  DiskSpaceStats stats() const;
  // Live entries and their bytes, read from the pages (every formatted page pinned).
  struct Usage {
    size_t entries = 0;
    uint64_t bytes = 0;
  };
  Usage usage() const;
  // Checks the in-memory accounting against the pages and extent headers (every page
  // pinned); for tests and ndbinfo-style checks.
  Status check_consistency() const;

 private:
  struct PageSpace {
    DiskPageId id;
    uint32_t free_bytes = 0;  // VarPage free bytes: exact when `exact`, else a lower bound
    uint32_t reserved = 0;
    uint32_t held = 0;
    bool exact = true;
    bool formatted = false;   // written as a row page since its extent came to us
    int8_t bucket = -1;       // availability bucket it is listed in, -1 none
    uint32_t bucket_pos = 0;
  };
  enum class OpKind : uint8_t { kNone, kInsert, kUpdateInPlace, kUpdateMove, kDelete };
  struct Op {
    OpKind kind = OpKind::kNone;
    bool installed = false;
    bool aborted = false;
    DiskRef current;
    uint32_t current_index = kNoPage;  // local page index of `current`
    uint32_t current_size = 0;
    uint32_t new_size = 0;
    uint32_t target_index = kNoPage;   // local page index of the new version (may be current's)
    uint32_t target_reserved = 0;      // bytes still reserved on the target page
    uint32_t target_held = 0;          // bytes held on the target page after install
    uint32_t current_held = 0;         // bytes held on the current page after install
    uint32_t undo_reserved = 0;        // undo bytes still reserved
  };
  static constexpr uint32_t kNoPage = 0xFFFFFFFFu;
  static constexpr int kBuckets = 11;  // bucket b lists pages with [16 << b, 32 << b) available

  static int bucket_of(uint32_t available);
  uint32_t available(const PageSpace& p) const;
  void rebucket(uint32_t index);
  uint32_t index_of(DiskPageId id) const;
  // A page with `need` bytes available, preferring resident ones; kNoPage if none.
  uint32_t find_page(uint32_t need, const PageResidency& resident, bool exhaustive) const;
  // Finds or makes (with a new extent) a page for `need` bytes and reserves them there;
  // `undo_bytes` more are already reserved for the operation.
  Result<uint32_t> reserve_room(uint32_t need, const PageResidency& resident);
  void add_extent_pages(ExtentId extent, bool from_headers);
  Result<DiskOpId> new_op(const Op& op);
  Result<uint32_t> committed_size(DiskRef ref, uint32_t* index) const;
  // Writes `bytes` as a new entry on page `index` (formatting it first if needed).
  DiskRef place(Op* op, uint32_t index, std::span<const uint8_t> bytes);
  // Adds a page's free-byte change to what `op` holds there, given the reservation it
  // used up; records the page's exact free bytes and class.
  uint32_t settle(uint32_t index, uint32_t reservation_used, uint32_t free_before, uint64_t lsn);
  uint64_t append_undo(Op* op, const UndoRecord& record);
  // Logs the before-image of the op's committed entry (an update in place or a free of
  // it), before the caller changes the page; what the caller needs to finish the change.
  struct CurrentEntryChange {
    uint8_t* page = nullptr;
    uint32_t free_before = 0;
    uint64_t lsn = 0;
  };
  CurrentEntryChange log_current_entry(Op* op, UndoType type);

  const FragmentOwner owner_;
  Tablespace* const tablespace_;
  UndoLog* const undo_;
  DiskPageAccess* const pages_;
  std::vector<ExtentId> extents_;
  std::vector<PageSpace> spaces_;
  std::unordered_map<uint64_t, uint32_t> position_by_extent_;  // (file, extent) -> index in extents_
  std::vector<std::vector<uint32_t>> buckets_;
  std::vector<Op> ops_;
  std::vector<DiskOpId> free_ops_;
  size_t live_ops_ = 0;
};

}  // namespace duo::storage::disk
