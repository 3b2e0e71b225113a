#include "storage/page_cache/page_header.h"

#include <gtest/gtest.h>

#include <vector>

#include "ndb-kernel/common/crc32c.h"

namespace duo::storage {
namespace {

TEST(PageHeader, SealedPageVerifiesAndNamesItself) {
  std::vector<uint8_t> page(kPageSize, 0x5a);
  set_page_kind(page.data(), 7);
  set_page_lsn(page.data(), 123456789012345ull);
  seal_page(page.data(), PageId{3, 99});
  EXPECT_TRUE(verify_page(page.data(), PageId{3, 99}).ok());
  EXPECT_EQ(page_kind(page.data()), 7u);
  EXPECT_EQ(page_lsn(page.data()), 123456789012345ull);
  EXPECT_EQ(page_name(page.data()), (PageId{3, 99}));
  // The CRC is the plain crc32c of bytes 4..end, little-endian at offset 0.
  EXPECT_EQ(page_stored_crc(page.data()), crc32c(page.data() + 4, kPageSize - 4));
  EXPECT_EQ(page[0], page_stored_crc(page.data()) & 0xff);
}

TEST(PageHeader, EveryFlippedBitIsCorruption) {
  std::vector<uint8_t> page(kPageSize, 0);
  seal_page(page.data(), PageId{1, 2});
  for (size_t at : {size_t{0}, size_t{3}, size_t{4}, size_t{8}, size_t{63}, size_t{64},
                    kPageSize / 2, kPageSize - 1}) {
    page[at] ^= 1;
    Status status = verify_page(page.data(), PageId{1, 2});
    EXPECT_TRUE(status.is(ErrorCode::kCorruption)) << "byte " << at;
    page[at] ^= 1;
  }
  EXPECT_TRUE(verify_page(page.data(), PageId{1, 2}).ok());
}

TEST(PageHeader, MisdirectedPageIsCorruption) {
  std::vector<uint8_t> page(kPageSize, 1);
  seal_page(page.data(), PageId{1, 2});
  Status status = verify_page(page.data(), PageId{1, 3});
  ASSERT_TRUE(status.is(ErrorCode::kCorruption));
  EXPECT_NE(status.message().find("misdirected"), std::string::npos) << status.message();
}

TEST(PageHeader, AllZeroPageIsUnformattedButNotANonZeroOne) {
  std::vector<uint8_t> page(kPageSize, 0);
  EXPECT_TRUE(verify_page(page.data(), PageId{5, 6}).ok());
  EXPECT_EQ(page_kind(page.data()), 0u);
  page[kPageSize - 1] = 1;  // stored CRC 0 does not excuse a page with data
  EXPECT_TRUE(verify_page(page.data(), PageId{5, 6}).is(ErrorCode::kCorruption));
}

}  // namespace
}  // namespace duo::storage
