// Shared pieces of the disk row storage tests: a tablespace over in-memory datafiles and
// a transaction driver that uses DiskRowSpace the way local_query will (one version per
// row installed at commit, every operation released at transaction end), checked
// against a reference model of committed row parts.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "storage/disk/disk_row_space.h"
#include "storage/disk/memory_page_access.h"
#include "storage/disk/tablespace.h"
#include "storage/disk/undo_log.h"

namespace duo::storage::disk::testing {

struct DiskRig {
  MemoryPageAccess pages;
  std::unique_ptr<UndoLog> undo;
  std::unique_ptr<Tablespace> tablespace;

  // `files` datafiles (numbered 1..) of `file_pages` pages, extents of `extent_pages`.
  DiskRig(int files, uint32_t file_pages, uint32_t extent_pages, uint64_t undo_bytes) {
    undo = std::make_unique<UndoLog>(undo_bytes, 1);
    tablespace = std::make_unique<Tablespace>(1, extent_pages, &pages, undo.get());
    for (int f = 1; f <= files; ++f) {
      pages.add_file(static_cast<uint32_t>(f), file_pages);
      EXPECT_TRUE(tablespace->open_datafile(static_cast<uint32_t>(f), file_pages).ok());
    }
    tablespace->scan_extent_headers();
  }
};

inline std::string row_bytes(std::mt19937_64& rng, uint32_t size, uint32_t key) {
  std::string s(size, '\0');
  for (uint32_t i = 0; i < size; ++i) s[i] = static_cast<char>(rng() & 0xFF);
  std::memcpy(s.data(), &key, 4);  // parts are at least 8 bytes: they carry their key
  return s;
}

inline std::span<const uint8_t> as_span(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// Sizes from the minimum to a whole page, mostly small, with growth and shrinkage.
inline uint32_t random_part_size(std::mt19937_64& rng) {
  const uint32_t pick = static_cast<uint32_t>(rng() % 100);
  if (pick < 60) return kMinDiskPartBytes + static_cast<uint32_t>(rng() % 200);
  if (pick < 85) return 200 + static_cast<uint32_t>(rng() % 4000);
  if (pick < 97) return 4000 + static_cast<uint32_t>(rng() % 16000);
  return kMaxDiskPartBytes - static_cast<uint32_t>(rng() % 64);
}

// Transactions over one fragment's disk parts, with a model of the committed parts.
class DiskTxDriver {
 public:
  struct Committed {
    DiskRef ref;
    std::string bytes;
  };
  struct PendingOp {
    uint32_t key;
    DiskOpId op;
    bool is_delete;
    std::string bytes;
    bool aborted = false;
  };
  struct Tx {
    std::vector<PendingOp> ops;
  };

  explicit DiskTxDriver(DiskRowSpace* space) : space_(space) {}

  std::map<uint32_t, Committed>& committed() { return committed_; }

  // Whether `key` exists as `tx` sees it (its newest live op, else the committed row).
  bool exists_for(const Tx& tx, uint32_t key) const {
    for (auto it = tx.ops.rbegin(); it != tx.ops.rend(); ++it) {
      if (it->key == key && !it->aborted) return !it->is_delete;
    }
    return committed_.count(key) > 0;
  }

  // Prepares a write of `key` in `tx`: a new version of `bytes`, or a delete. The
  // reservation is relative to the committed part, as local_query will do it.
  Status write(Tx* tx, uint32_t key, bool is_delete, std::string bytes, const PageResidency& resident = {}) {
    auto c = committed_.find(key);
    const DiskRef current = c == committed_.end() ? kNoDiskRef : c->second.ref;
    Result<DiskOpId> op = is_delete ? space_->prepare_delete(current)
                          : current.valid()
                              ? space_->prepare_update(current, static_cast<uint32_t>(bytes.size()), resident)
                              : space_->prepare_insert(static_cast<uint32_t>(bytes.size()), resident);
    if (!op.ok()) return op.take_status();
    tx->ops.push_back({key, *op, is_delete, std::move(bytes)});
    return Status::OK();
  }

  // Aborts one operation of `tx` (its reservation stays until the end).
  void abort_op(Tx* tx, size_t i) {
    if (tx->ops[i].aborted) return;
    tx->ops[i].aborted = true;
    space_->abort(tx->ops[i].op);
  }

  // Commits: per row, the newest live version installs; then every op is released.
  // Counts installs that moved a part and rows where an aborted op sat beside the
  // installed one.
  void commit(Tx* tx) {
    std::map<uint32_t, size_t> newest;
    std::map<uint32_t, bool> had_abort;
    for (size_t i = 0; i < tx->ops.size(); ++i) {
      if (tx->ops[i].aborted) had_abort[tx->ops[i].key] = true;
      else newest[tx->ops[i].key] = i;
    }
    for (const auto& [key, i] : newest) {
      PendingOp& p = tx->ops[i];
      const DiskRef ref = space_->install(p.op, p.is_delete ? std::span<const uint8_t>() : as_span(p.bytes));
      auto c = committed_.find(key);
      if (p.is_delete) {
        EXPECT_FALSE(ref.valid());
        if (c != committed_.end()) committed_.erase(c);
      } else {
        if (c != committed_.end() && c->second.ref != ref) ++moves;
        committed_[key] = Committed{ref, p.bytes};
      }
      if (had_abort[key]) ++aborted_beside_installed;
    }
    committing_ = true;
    end(tx);
    committing_ = false;
  }
  // Ends the transaction: every operation not installed by commit() is aborted first.
  void end(Tx* tx) {
    for (size_t i = 0; i < tx->ops.size(); ++i) {
      if (!committing_) abort_op(tx, i);
    }
    for (PendingOp& p : tx->ops) space_->release(p.op);
    tx->ops.clear();
  }

  // Every committed part reads back as the model says.
  void verify() const {
    for (const auto& [key, c] : committed_) {
      const std::span<uint8_t> got = space_->part(c.ref);
      ASSERT_EQ(got.size(), c.bytes.size()) << "key " << key;
      ASSERT_EQ(std::memcmp(got.data(), c.bytes.data(), got.size()), 0) << "key " << key;
    }
  }
  uint64_t model_bytes() const {
    uint64_t n = 0;
    for (const auto& [key, c] : committed_) n += c.bytes.size();
    return n;
  }

  size_t moves = 0;
  size_t aborted_beside_installed = 0;

 private:
  DiskRowSpace* space_;
  std::map<uint32_t, Committed> committed_;
  bool committing_ = false;
};

}  // namespace duo::storage::disk::testing
