#include "ndb-kernel/common/status.h"

#include <gtest/gtest.h>

namespace duo {
namespace {

Result<int> half(int x) {
  if (x % 2) return Status(ErrorCode::kInvalidArgument, "odd");
  return x / 2;
}

Status quarter(int x, int* out) {
  DUO_ASSIGN_OR_RETURN(int h, half(x));
  DUO_ASSIGN_OR_RETURN(*out, half(h));
  return Status::OK();
}

TEST(Status, OkAllocatesNothingAndMapsToZero) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kOk);
  EXPECT_EQ(s.to_string(), "OK");
}

TEST(Status, ErrorCarriesCodeMessageAndMysqlMapping) {
  Status s(ErrorCode::kTableFull, "The table 't1' is full");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(error_info(s.code()).mysql_errno, 1114);
  EXPECT_STREQ(error_info(ErrorCode::kDuplicateKey).sqlstate, "23000");
  EXPECT_EQ(error_info(ErrorCode::kLockWaitTimeout).mysql_errno, 1205);
  EXPECT_EQ(s.to_string(), "TableFull: The table 't1' is full");
  Status copy = s;
  EXPECT_EQ(copy.message(), s.message());
}

TEST(Status, ResultPropagates) {
  int out = 0;
  EXPECT_TRUE(quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status bad = quarter(6, &out);
  EXPECT_EQ(bad.code(), ErrorCode::kInvalidArgument);
  Result<std::string> r(std::string("x"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "x");
}

#ifndef NDEBUG
TEST(StatusDeathTest, UncheckedErrorAbortsInDebug) {
  EXPECT_DEATH({ Status s(ErrorCode::kInternal, "boom"); }, "unchecked error status");
}
#endif

}  // namespace
}  // namespace duo
