// Tests host-side launch checks: bad shapes, dtypes, world sizes and alignment are errors.
#include <gtest/gtest.h>

#include <vector>

#include <pk/runtime/checks.h>
#include <pk/runtime/kernel_args.h>

namespace {

TEST(Checks, World) {
  EXPECT_TRUE(pk::check_world(2).is_ok());
  EXPECT_TRUE(pk::check_world(PK_MAX_RANKS).is_ok());
  EXPECT_FALSE(pk::check_world(0).is_ok());
  EXPECT_FALSE(pk::check_world(PK_MAX_RANKS + 1).is_ok());
  EXPECT_FALSE(pk::check_world(1, 2).is_ok());
  auto s = pk::check_world(3, 1, 2);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("not a multiple of 2"), std::string::npos);
}

TEST(Checks, Dtype) {
  EXPECT_TRUE(pk::check_dtype("x", pk::DType::bf16, pk::dtype_of<pk::bf16>()).is_ok());
  auto s = pk::check_dtype("x", pk::DType::f32, pk::DType::bf16);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(), "tensor 'x': expected dtype bf16, got f32");
  EXPECT_EQ(pk::dtype_size(pk::DType::bf16), 2u);
}

TEST(Checks, Shape) {
  EXPECT_TRUE(pk::check_shape("a", {128, 256}, {128, -1}).is_ok());
  auto s = pk::check_shape("a", {128, 256}, {64, 256});
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(), "tensor 'a': expected shape [64, 256], got [128, 256]");
  EXPECT_FALSE(pk::check_shape("a", {128}, {128, 1}).is_ok());
}

TEST(Checks, AlignmentAndDivisibility) {
  alignas(16) char buf[32];
  EXPECT_TRUE(pk::check_alignment("p", buf, 16).is_ok());
  EXPECT_FALSE(pk::check_alignment("p", buf + 2, 16).is_ok());
  EXPECT_TRUE(pk::check_divisible("M", 256, 128).is_ok());
  EXPECT_FALSE(pk::check_divisible("M", 200, 128).is_ok());
}

TEST(Checks, SymTensorViews) {
  alignas(16) static char a[1024], b[1024];
  std::vector<void*> peers = {a, b};
  auto t = pk::make_sym_tensor<pk::bf16>(peers, 1024, {16, 32});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->numel, 512);
  EXPECT_EQ(t->shape[1], 32);
  EXPECT_EQ(static_cast<void*>(t->peer[1]), static_cast<void*>(b));
  EXPECT_FALSE(pk::make_sym_tensor<float>(peers, 1024, {16, 32}).is_ok());  // too big
  EXPECT_FALSE(pk::make_sym_tensor<float>(peers, 1024, {-1, 4}).is_ok());  // negative
  // Empty views are tensors too (a collective on them is a no-op), even over 0 bytes.
  auto empty = pk::make_sym_tensor<float>(peers, 0, {0, 4});
  ASSERT_TRUE(empty.is_ok()) << empty.status().message();
  EXPECT_EQ(empty->numel, 0);
  EXPECT_EQ(empty->shape[0], 0);
  EXPECT_EQ(empty->shape[1], 4);
  EXPECT_FALSE(pk::make_sym_tensor<float>(peers, 0, {1}).is_ok());  // 4 bytes over 0
  EXPECT_FALSE(pk::make_sym_tensor<float>(peers, 1024, {1, 1, 1, 1, 1}).is_ok());
  std::vector<void*> misaligned = {a, b + 2};
  EXPECT_FALSE(pk::make_sym_tensor<float>(misaligned, 1000, {4}).is_ok());
  std::vector<void*> too_many(PK_MAX_RANKS + 1, a);
  EXPECT_FALSE(pk::make_sym_tensor<float>(too_many, 1024, {4}).is_ok());
  auto local = pk::make_tensor<float>(a, 1024, {256});
  ASSERT_TRUE(local.is_ok());
  EXPECT_FALSE(pk::make_tensor<float>(a, 1024, {257}).is_ok());
}

TEST(KernelArgs, AlignsAndCounts) {
  pk::KernelArgs args;
  args.add(static_cast<char>(1)).add(static_cast<long long>(2)).add(pk::LaunchContext{});
  EXPECT_TRUE(args.ok());
  EXPECT_EQ(args.count(), 3u);
  void** p = args.pointers();
  EXPECT_EQ(*static_cast<char*>(p[0]), 1);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p[1]) % alignof(long long), 0u);
  EXPECT_EQ(*static_cast<long long*>(p[1]), 2);
  struct Huge { char b[40000]; };
  static Huge h;
  args.add(h);
  EXPECT_FALSE(args.ok());
}

}  // namespace
