// Datafile layout, fresh-file detection, extent entries, undo record codec and undo log
// space accounting.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "storage/disk/datafile_format.h"
#include "storage/disk/memory_page_access.h"
#include "storage/disk/tablespace.h"
#include "storage/disk/undo_log.h"
#include "storage/disk/undo_record.h"

namespace duo::storage::disk {
namespace {

TEST(DatafileLayout, ExtentsFitTheFileWithTheirHeaderPages) {
  // 1 MiB extents (32 pages) in a 64 MiB file: 2048 pages.
  auto l = DatafileLayout::compute(3, 2048, 32);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->entry_bytes, 32u);  // 16 fixed + 16 bytes of nibbles
  EXPECT_EQ(l->entries_per_page, (32768u - 64) / 32);
  EXPECT_EQ(l->extent_header_pages, 1u);
  EXPECT_EQ(l->first_extent_page, 2u);
  EXPECT_EQ(l->extent_count, (2048u - 2) / 32);
  EXPECT_LE(l->first_extent_page + l->extent_count * 32, 2048u);
  // Many small extents need several header pages; everything still fits.
  auto many = DatafileLayout::compute(1, 20000, 1);
  ASSERT_TRUE(many.ok());
  EXPECT_GT(many->extent_header_pages, 1u);
  EXPECT_LE(many->first_extent_page + many->extent_count, 20000u);
  EXPECT_EQ(many->extent_header_pages, (many->extent_count + many->entries_per_page - 1) / many->entries_per_page);
  EXPECT_EQ(DatafileLayout::compute(1, 2, 4).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(DatafileLayout::compute(1, 100, 0).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ExtentEntry, ClassNibblesAndOwner) {
  std::vector<uint8_t> bytes(64, 0);
  ExtentEntry e(bytes.data(), 7);
  EXPECT_FALSE(e.allocated());
  for (uint32_t i = 0; i < 7; ++i) EXPECT_EQ(e.page_class(i), 0);
  e.set_owner(12, 3);
  for (uint32_t i = 0; i < 7; ++i) e.set_page_class(i, static_cast<uint8_t>((i * 5 + 1) % 16));
  EXPECT_TRUE(e.allocated());
  EXPECT_EQ(e.table(), 12u);
  EXPECT_EQ(e.fragment(), 3u);
  for (uint32_t i = 0; i < 7; ++i) EXPECT_EQ(e.page_class(i), (i * 5 + 1) % 16);
  EXPECT_EQ(e.class_bytes_size(), 4u);
  e.set_free();
  EXPECT_FALSE(e.allocated());
  for (uint32_t i = 0; i < 7; ++i) EXPECT_EQ(e.page_class(i), 0);
  EXPECT_EQ(bytes[16 + 4], 0);  // nothing written past the entry's nibbles
}

TEST(Datafile, AllZeroFileIsFreshAndGetsItsHeaderOnce) {
  MemoryPageAccess pages;
  pages.add_file(5, 100);
  UndoLog undo(1 << 20, 1);
  {
    Tablespace ts(9, 4, &pages, &undo);
    ASSERT_TRUE(ts.open_datafile(5, 100).ok());
    ts.scan_extent_headers();
    EXPECT_EQ(ts.extent_count(), ts.free_extent_count());
    EXPECT_EQ(ts.extent_count(), (100u - 2) / 4);
  }
  EXPECT_FALSE(is_fresh_file_header(pages.page({5, 0})));
  auto header = read_file_header(pages.page({5, 0}));
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->filegroup_id, 9u);
  EXPECT_EQ(header->file_no, 5u);
  EXPECT_EQ(header->extent_pages, 4u);
  EXPECT_EQ(header->file_pages, 100u);
  EXPECT_EQ(header->kind, DiskFileKind::kDatafile);
  EXPECT_EQ(page_kind(pages.page({5, 0})), DiskPageKind::kDatafileHeader);
  // Opening again reads the header instead of writing it.
  const auto before = pages.copy({5, 0});
  Tablespace again(9, 4, &pages, &undo);
  ASSERT_TRUE(again.open_datafile(5, 100).ok());
  EXPECT_EQ(pages.copy({5, 0}), before);
  // A header of another tablespace or geometry is refused, not overwritten.
  Tablespace other(10, 4, &pages, &undo);
  EXPECT_EQ(other.open_datafile(5, 100).code(), ErrorCode::kCorruption);
  Tablespace other_extents(9, 8, &pages, &undo);
  EXPECT_EQ(other_extents.open_datafile(5, 100).code(), ErrorCode::kCorruption);
  EXPECT_EQ(pages.copy({5, 0}), before);
  // Garbage in page 0 is corruption, not a fresh file.
  pages.add_file(6, 100);
  pages.page({6, 0})[kPageSize - 1] = 1;
  Tablespace garbage(9, 4, &pages, &undo);
  EXPECT_EQ(garbage.open_datafile(6, 100).code(), ErrorCode::kCorruption);
}

TEST(Undofile, AllZeroHeaderIsFreshAndAnotherFilesHeaderIsRefused) {
  std::vector<uint8_t> page(kPageSize, 0);
  bool fresh = false;
  ASSERT_TRUE(open_undofile_header(page.data(), 4, 2, 512, &fresh).ok());
  EXPECT_TRUE(fresh);
  EXPECT_EQ(page_kind(page.data()), DiskPageKind::kUndofileHeader);
  auto h = read_file_header(page.data());
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->kind, DiskFileKind::kUndofile);
  EXPECT_EQ(h->filegroup_id, 4u);
  EXPECT_EQ(h->file_pages, 512u);
  const std::vector<uint8_t> written = page;
  ASSERT_TRUE(open_undofile_header(page.data(), 4, 2, 512, &fresh).ok());
  EXPECT_FALSE(fresh);
  EXPECT_EQ(open_undofile_header(page.data(), 5, 2, 512, &fresh).code(), ErrorCode::kCorruption);
  EXPECT_EQ(open_undofile_header(page.data(), 4, 3, 512, &fresh).code(), ErrorCode::kCorruption);
  EXPECT_EQ(page, written);
  // A datafile's header is not an undofile's.
  std::vector<uint8_t> data(kPageSize, 0);
  write_file_header(data.data(), DatafileLayout::compute(2, 512, 4)->header(4));
  EXPECT_EQ(open_undofile_header(data.data(), 4, 2, 512, &fresh).code(), ErrorCode::kCorruption);
}

TEST(UndoRecord, RoundTripsAtBoundaryImageSizesAndDetectsDamage) {
  const uint32_t sizes[] = {0, 1, 3, 4, 5, 127, 128, 255, 4096, 32692};
  std::vector<uint8_t> log;
  for (uint32_t size : sizes) {
    std::vector<uint8_t> image(size);
    for (uint32_t i = 0; i < size; ++i) image[i] = static_cast<uint8_t>(i * 7 + size);
    UndoRecord r;
    r.type = UndoType::kEntryFree;
    r.lsn = (uint64_t{1} << 40) + size;
    r.page = {7, 123456};
    r.slot = 4095;
    r.table = 77;
    r.fragment = 2;
    r.before = image;
    const size_t at = log.size();
    encode_undo_record(r, &log);
    EXPECT_EQ(log.size() - at, undo_record_bytes(size));
  }
  UndoReader reader(log);
  for (size_t i = std::size(sizes); i-- > 0;) {
    auto r = reader.next();
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->type, UndoType::kEntryFree);
    EXPECT_EQ(r->lsn, (uint64_t{1} << 40) + sizes[i]);
    EXPECT_EQ(r->page, (DiskPageId{7, 123456}));
    EXPECT_EQ(r->slot, 4095u);
    EXPECT_EQ(r->table, 77u);
    EXPECT_EQ(r->fragment, 2u);
    ASSERT_EQ(r->before.size(), sizes[i]);
    for (uint32_t j = 0; j < sizes[i]; ++j) ASSERT_EQ(r->before[j], static_cast<uint8_t>(j * 7 + sizes[i]));
  }
  EXPECT_TRUE(reader.done());
  // Any flipped byte of the last record is caught.
  for (size_t k = log.size() - undo_record_bytes(32692); k < log.size(); k += 997) {
    std::vector<uint8_t> bad = log;
    bad[k] ^= 0x40;
    UndoReader r(bad);
    EXPECT_FALSE(r.next().ok()) << "flip at " << k;
  }
}

TEST(UndoLog, ReservationsLimitSpaceAndCheckpointsFreeIt) {
  const uint32_t rec = undo_record_bytes(0);
  UndoLog log(3 * rec, 10);
  ASSERT_TRUE(log.reserve(2 * rec).ok());
  EXPECT_EQ(log.reserve(2 * rec).code(), ErrorCode::kOutOfUndoSpace);
  EXPECT_EQ(log.reserved_bytes(), 2u * rec);  // a refused reservation takes nothing
  UndoRecord r;
  r.type = UndoType::kEntryAlloc;
  EXPECT_EQ(log.append(r), 10u);
  EXPECT_EQ(log.append(r), 11u);
  EXPECT_EQ(log.used_bytes(), 2u * rec);
  EXPECT_EQ(log.reserved_bytes(), 0u);
  ASSERT_TRUE(log.reserve(rec).ok());
  EXPECT_EQ(log.reserve(rec).code(), ErrorCode::kOutOfUndoSpace);
  EXPECT_EQ(log.append(r), 12u);
  log.release_through(11);
  EXPECT_EQ(log.used_bytes(), rec);
  // The bytes of released records stay until their chunk is wholly released.
  EXPECT_EQ(log.start_offset(), 0u);
  EXPECT_EQ(log.end_offset(), 3u * rec);
  UndoReader reader(log.bytes());
  auto last = reader.next();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->lsn, 12u);
  const UndoChunk chunk = log.chunk(0);
  EXPECT_EQ(chunk.data.size(), 3u * rec);
  EXPECT_EQ(chunk.records_end, 3u * rec);
  EXPECT_EQ(chunk.last_lsn, 12u);
  ASSERT_TRUE(log.reserve(2 * rec).ok());
  log.unreserve(2 * rec);
  EXPECT_EQ(log.next_lsn(), 13u);
}

}  // namespace
}  // namespace duo::storage::disk
