// Test doubles for PageCache's owner: an in-memory "disk" with IO that completes only
// when the test says so (in any order), and an undo log whose durable LSN the test
// advances. Real components, not mocks of the cache: the cache under test is the real
// one; these stand in for the file system block and the logfile group.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "storage/page_cache/page_cache.h"

namespace duo::storage::testing {

// A sealed page whose body is `version` repeated: what a test writes into a page.
inline void fill_page(uint8_t* page, PageId id, uint64_t version) {
  std::memset(page, 0, kPageHeaderBytes);
  for (size_t at = kPageHeaderBytes; at < kPageSize; at += sizeof version) {
    std::memcpy(page + at, &version, sizeof version);
  }
  seal_page(page, id);
}
// The version fill_page wrote, or UINT64_MAX if the body is not one version repeated.
inline uint64_t page_version(const uint8_t* page) {
  uint64_t version;
  std::memcpy(&version, page + kPageHeaderBytes, sizeof version);
  for (size_t at = kPageHeaderBytes; at < kPageSize; at += sizeof version) {
    uint64_t word;
    std::memcpy(&word, page + at, sizeof word);
    if (word != version) return UINT64_MAX;
  }
  return version;
}

class FakeDiskIo final : public PageIo {
 public:
  struct Pending {
    bool write = false;
    PageId id;
    uint8_t* frame = nullptr;
    std::vector<uint8_t> written;  // a write: the frame's bytes when it started
  };

  void start_read(PageId id, uint8_t* frame) override {
    pending.push_back(Pending{false, id, frame, {}});
    ++reads_started;
  }
  void start_write(PageId id, const uint8_t* frame) override {
    EXPECT_EQ(verify_page(frame, id).ok(), true) << "a write of an unsealed page";
    pending.push_back(
        Pending{true, id, const_cast<uint8_t*>(frame), std::vector<uint8_t>(frame, frame + kPageSize)});
    ++writes_started;
  }

  // Completes pending IO number `index`: a read copies the disk's page into the frame
  // (a page never written reads as zeros), a write stores the frame.
  void complete(PageCache& cache, size_t index, Status status = Status::OK()) {
    Pending io = std::move(pending[index]);
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(index));
    if (io.write) {
      // The cache promised not to touch the frame while it is written.
      EXPECT_EQ(std::memcmp(io.frame, io.written.data(), kPageSize), 0)
          << "frame changed during its write";
      if (status.ok()) disk[io.id.key()] = std::move(io.written);
      ++writes_done;
      cache.on_write_done(io.id, std::move(status));
    } else {
      auto it = disk.find(io.id.key());
      if (it == disk.end()) {
        std::memset(io.frame, 0, kPageSize);
      } else {
        std::memcpy(io.frame, it->second.data(), kPageSize);
      }
      if (corrupt_next_read) {
        io.frame[kPageSize / 2] ^= 0x40;
        corrupt_next_read = false;
      }
      ++reads_done;
      cache.on_read_done(io.id, std::move(status));
    }
  }
  void complete_all(PageCache& cache) {
    while (!pending.empty()) complete(cache, 0);
  }

  std::unordered_map<uint64_t, std::vector<uint8_t>> disk;
  std::vector<Pending> pending;
  bool corrupt_next_read = false;
  uint64_t reads_started = 0, writes_started = 0, reads_done = 0, writes_done = 0;
};

class FakeUndo final : public UndoDurability {
 public:
  uint64_t durable_undo_lsn() const override { return durable; }
  void request_undo_flush(uint64_t lsn) override {
    requested = std::max(requested, lsn);
    ++flush_requests;
  }
  // The undo log reached what was asked.
  void make_durable(PageCache& cache) {
    durable = std::max(durable, requested);
    cache.on_undo_durable();
  }
  uint64_t durable = 0;
  uint64_t requested = 0;
  uint64_t flush_requests = 0;
};

}  // namespace duo::storage::testing
