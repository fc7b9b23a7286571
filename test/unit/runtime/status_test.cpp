// Tests Status / Result and the early-return macros.
#include <gtest/gtest.h>

#include <pk/runtime/status.h>

namespace {

pk::Result<int> half(int x) {
  if (x % 2) return pk::Status::error("odd");
  return x / 2;
}

pk::Result<int> quarter(int x) {
  PK_ASSIGN_OR_RETURN(int h, half(x));
  PK_ASSIGN_OR_RETURN(int q, half(h));
  return q;
}

pk::Status check_positive(int x) {
  if (x <= 0) return pk::Status::error("not positive");
  return pk::Status::ok();
}

pk::Status both(int a, int b) {
  PK_RETURN_IF_ERROR(check_positive(a));
  PK_RETURN_IF_ERROR(check_positive(b));
  return pk::Status::ok();
}

TEST(Status, OkAndError) {
  EXPECT_TRUE(pk::Status::ok().is_ok());
  pk::Status e = pk::Status::error("boom");
  EXPECT_FALSE(e.is_ok());
  EXPECT_EQ(e.message(), "boom");
  EXPECT_EQ(e.with_context("loading").message(), "loading: boom");
  EXPECT_TRUE(pk::Status::ok().with_context("x").is_ok());
}

TEST(Status, Result) {
  auto r = quarter(12);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(*r, 3);
  auto bad = quarter(6);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().message(), "odd");
  // A Result cannot be built from an ok Status without a value.
  pk::Result<int> confused{pk::Status::ok()};
  EXPECT_FALSE(confused.is_ok());
}

TEST(Status, ReturnIfError) {
  EXPECT_TRUE(both(1, 2).is_ok());
  EXPECT_EQ(both(1, -2).message(), "not positive");
}

}  // namespace
