#include "storage/page_cache/page_header.h"

#include <cstring>
#include <string>

#include "ndb-kernel/common/crc32c.h"

namespace duo::storage {

namespace {

uint32_t load_u32(const uint8_t* at) {
  uint32_t value;
  std::memcpy(&value, at, sizeof value);  // little-endian hosts only (x86_64, aarch64)
  return value;
}
uint64_t load_u64(const uint8_t* at) {
  uint64_t value;
  std::memcpy(&value, at, sizeof value);
  return value;
}
void store_u32(uint8_t* at, uint32_t value) { std::memcpy(at, &value, sizeof value); }
void store_u64(uint8_t* at, uint64_t value) { std::memcpy(at, &value, sizeof value); }

bool all_zero(const uint8_t* page) {
  // Compare 8 bytes at a time; pages are kPageSize-aligned frames or vectors.
  for (size_t i = 0; i < kPageSize; i += 8) {
    if (load_u64(page + i) != 0) return false;
  }
  return true;
}

std::string page_text(PageId id) {
  return "disk page (file " + std::to_string(id.file_no) + ", page " +
         std::to_string(id.page_no) + ")";
}

}  // namespace

uint32_t page_stored_crc(const uint8_t* page) { return load_u32(page + kPageHeaderCrcOffset); }
uint32_t page_kind(const uint8_t* page) { return load_u32(page + kPageHeaderKindOffset); }
void set_page_kind(uint8_t* page, uint32_t kind_and_flags) {
  store_u32(page + kPageHeaderKindOffset, kind_and_flags);
}
uint64_t page_lsn(const uint8_t* page) { return load_u64(page + kPageHeaderLsnOffset); }
void set_page_lsn(uint8_t* page, uint64_t lsn) { store_u64(page + kPageHeaderLsnOffset, lsn); }
PageId page_name(const uint8_t* page) {
  return PageId{load_u32(page + kPageHeaderFileOffset), load_u32(page + kPageHeaderPageOffset)};
}
void set_page_name(uint8_t* page, PageId id) {
  store_u32(page + kPageHeaderFileOffset, id.file_no);
  store_u32(page + kPageHeaderPageOffset, id.page_no);
}

uint32_t compute_page_crc(const uint8_t* page) {
  return crc32c(page + kPageChecksumFrom, kPageSize - kPageChecksumFrom);
}

void seal_page(uint8_t* page, PageId id) {
  set_page_name(page, id);
  store_u32(page + kPageHeaderCrcOffset, compute_page_crc(page));
}

Status verify_page(const uint8_t* page, PageId id) {
  const uint32_t stored = page_stored_crc(page);
  const uint32_t computed = compute_page_crc(page);
  if (stored != computed) {
    if (stored == 0 && all_zero(page)) return Status::OK();  // unformatted
    return Status(ErrorCode::kCorruption, page_text(id) + ": checksum mismatch (stored " +
                                              std::to_string(stored) + ", computed " +
                                              std::to_string(computed) + ")");
  }
  const PageId named = page_name(page);
  if (!(named == id)) {
    return Status(ErrorCode::kCorruption, page_text(id) + ": header names " + page_text(named) +
                                              " (misdirected write or read)");
  }
  return Status::OK();
}

}  // namespace duo::storage
