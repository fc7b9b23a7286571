// Tests the machine-profile format: parsing, errors with line numbers, lookup, round trip.
#include <gtest/gtest.h>

#include <pk/runtime/profile.h>

namespace {

const char* kText = R"(# test profile
version 1
device Test GPU
handoff intra_sm_ns 64
handoff inter_sm_ns 832
copy_engine 1024 0 0.4
copy_engine 1048576 0 225   # comment after a record
ldst 268435456 1 39
ldst 268435456 8 301
ldst 1024 8 10
tma 4096 16 200
)";

TEST(Profile, Parses) {
  auto p = pk::MachineProfile::parse(kText);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->device, "Test GPU");
  EXPECT_DOUBLE_EQ(p->intra_sm_ns, 64);
  EXPECT_DOUBLE_EQ(p->inter_sm_ns, 832);
  EXPECT_EQ(p->points.size(), 6u);
}

TEST(Profile, Lookup) {
  auto p = pk::MachineProfile::parse(kText);
  ASSERT_TRUE(p.is_ok());
  EXPECT_DOUBLE_EQ(p->bandwidth(pk::Mechanism::copy_engine, 1048576, 0), 225);
  EXPECT_DOUBLE_EQ(p->bandwidth(pk::Mechanism::copy_engine, 1 << 30, 0), 225);  // clamped
  EXPECT_DOUBLE_EQ(p->bandwidth(pk::Mechanism::copy_engine, 16, 0), 0.4);
  // Halfway in log2 between 1 KiB and 1 MiB is 32 KiB.
  EXPECT_NEAR(p->bandwidth(pk::Mechanism::copy_engine, 32768, 0), (0.4 + 225) / 2, 1e-9);
  EXPECT_DOUBLE_EQ(p->bandwidth(pk::Mechanism::ldst, 268435456, 4), 39);   // 1-SM curve
  EXPECT_DOUBLE_EQ(p->bandwidth(pk::Mechanism::ldst, 268435456, 132), 301);  // 8-SM curve
  EXPECT_DOUBLE_EQ(p->bandwidth(pk::Mechanism::tma, 4096, 1), 200);  // smallest SM curve
}

TEST(Profile, RoundTrip) {
  auto p = pk::MachineProfile::parse(kText);
  ASSERT_TRUE(p.is_ok());
  auto q = pk::MachineProfile::parse(p->serialize());
  ASSERT_TRUE(q.is_ok()) << q.status().message();
  EXPECT_EQ(q->device, p->device);
  EXPECT_EQ(q->points.size(), p->points.size());
  EXPECT_DOUBLE_EQ(q->bandwidth(pk::Mechanism::ldst, 268435456, 8), 301);
}

TEST(Profile, Errors) {
  auto no_version = pk::MachineProfile::parse("ldst 1 1 1\n");
  EXPECT_FALSE(no_version.is_ok());
  auto bad = pk::MachineProfile::parse("version 1\nldst 1024 x 3\n");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos);
  EXPECT_FALSE(pk::MachineProfile::parse("version 1\nwarp_drive 1 1 1\n").is_ok());
  EXPECT_FALSE(pk::MachineProfile::parse("version 2\n").is_ok());
  EXPECT_FALSE(pk::MachineProfile::parse("version 1\nhandoff sideways_ns 3\n").is_ok());
}

TEST(Profile, ShippedH200Profile) {
  auto p = pk::MachineProfile::load(PK_H200_PROFILE);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  // The shipped profile is measured (runtime/profiles/h200.md); it must agree with the
  // independent figures of shared/HARDWARE.md within the noise of a shared machine.
  EXPECT_NEAR(p->bandwidth(pk::Mechanism::copy_engine, 1ll << 30, 0), 397, 15);
  EXPECT_NEAR(p->bandwidth(pk::Mechanism::ldst, 256ll << 20, 132), 369, 20);
  EXPECT_GT(p->bandwidth(pk::Mechanism::tma, 1 << 20, 16), 0);
  EXPECT_GT(p->intra_sm_ns, 0);
  EXPECT_GT(p->inter_sm_ns, p->intra_sm_ns);
  EXPECT_LT(p->inter_sm_ns, 5000);
}

}  // namespace

// Roofline ceilings: parsed, kept through serialize, and errors for unknown or non-positive ones.
TEST(Profile, Peaks) {
  auto p = pk::MachineProfile::parse("version 1\npeak tensor_bf16_tflops 989\npeak hbm_gbs 4800\n"
                                     "peak link_gbs 478\npeak tensor_fp8_tflops 1979\n");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_DOUBLE_EQ(p->tensor_bf16_tflops, 989);
  EXPECT_DOUBLE_EQ(p->tensor_f16_tflops, 0);
  auto q = pk::MachineProfile::parse(p->serialize());
  ASSERT_TRUE(q.is_ok());
  EXPECT_DOUBLE_EQ(q->tensor_fp8_tflops, 1979);
  EXPECT_DOUBLE_EQ(q->hbm_gbs, 4800);
  EXPECT_DOUBLE_EQ(q->link_gbs, 478);
  EXPECT_FALSE(pk::MachineProfile::parse("version 1\npeak flops 1\n").is_ok());
  EXPECT_FALSE(pk::MachineProfile::parse("version 1\npeak hbm_gbs 0\n").is_ok());
  EXPECT_GT(pk::builtin_profile().tensor_bf16_tflops, 0);  // the shipped profile has them
}

// Fixed costs: parsed, kept through serialize, and errors for unknown or non-positive ones.
TEST(Profile, FixedCosts) {
  auto p = pk::MachineProfile::parse("version 1\nfixed launch_us 2.5\nfixed link_hop_us 1.25\n");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_DOUBLE_EQ(p->launch_us, 2.5);
  auto q = pk::MachineProfile::parse(p->serialize());
  ASSERT_TRUE(q.is_ok());
  EXPECT_DOUBLE_EQ(q->launch_us, 2.5);
  EXPECT_DOUBLE_EQ(q->link_hop_us, 1.25);
  EXPECT_FALSE(pk::MachineProfile::parse("version 1\nfixed boot_us 1\n").is_ok());
  EXPECT_FALSE(pk::MachineProfile::parse("version 1\nfixed launch_us -1\n").is_ok());
}
