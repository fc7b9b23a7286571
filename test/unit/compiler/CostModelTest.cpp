// Tests rule 1's cost model: the built-in profile, mechanism choices and their reasons.
#include "pk/CostModel/CostModel.h"
#include <gtest/gtest.h>

namespace {

TEST(CostModel, BuiltinProfileHasEveryMechanism) {
  const pk::MachineProfile &p = pk::builtinProfile();
  EXPECT_GT(p.bandwidth(pk::Mechanism::copy_engine, 1ll << 30, 0), 300);
  EXPECT_GT(p.bandwidth(pk::Mechanism::ldst, 256ll << 20, 132), 300);
  EXPECT_GT(p.bandwidth(pk::Mechanism::tma, 256ll << 20, 132), 0);
  EXPECT_GT(p.intra_sm_ns, 0);
  EXPECT_GT(p.inter_sm_ns, p.intra_sm_ns);
}

TEST(CostModel, ReductionsReadThroughRegisters) {
  pk::TransferQuery q;
  q.bytes = 1 << 20;
  q.reducesOnRead = true;
  pk::TransportChoice c = pk::chooseTransport(pk::builtinProfile(), q);
  EXPECT_EQ(c.mechanism, "ldst");
  EXPECT_NE(c.reason.find("reduces on read"), std::string::npos);
  q.multicastAllowed = true;
  EXPECT_EQ(pk::chooseTransport(pk::builtinProfile(), q).mechanism, "multimem");
}

TEST(CostModel, UnknownSizeFallsBackToLdst) {
  pk::TransferQuery q;
  pk::TransportChoice c = pk::chooseTransport(pk::builtinProfile(), q);
  EXPECT_EQ(c.mechanism, "ldst");
  EXPECT_NE(c.reason.find("run time"), std::string::npos);
}

TEST(CostModel, CopyEngineOnlyForHostDrivenTransfers) {
  pk::TransferQuery q;
  q.bytes = 1ull << 30;
  EXPECT_NE(pk::chooseTransport(pk::builtinProfile(), q).mechanism, "copy_engine");
  q.deviceInitiated = false;
  EXPECT_EQ(pk::chooseTransport(pk::builtinProfile(), q).mechanism, "copy_engine");
}

// A profile in which TMA beats ld/st at 1 MiB, whatever the measured one says.
pk::MachineProfile crossoverProfile() {
  auto p = pk::MachineProfile::parse("version 1\nldst 4096 132 2\nldst 1048576 132 190\n"
                                     "ldst 268435456 132 369\ntma 65536 16 28\n"
                                     "tma 1048576 16 200\ntma 268435456 16 354\n");
  EXPECT_TRUE(p.is_ok());
  return p.is_ok() ? p.value() : pk::MachineProfile{};
}

TEST(CostModel, TmaNeedsSixteenByteMultiples) {
  pk::TransferQuery q;
  q.bytes = 1ull << 20;
  EXPECT_EQ(pk::chooseTransport(crossoverProfile(), q).mechanism, "tma");
  q.bytes = (1ull << 20) + 2;
  pk::TransportChoice c = pk::chooseTransport(crossoverProfile(), q);
  EXPECT_EQ(c.mechanism, "ldst");
  EXPECT_NE(c.reason.find("16 bytes"), std::string::npos);
}

TEST(CostModel, SmsFor90PercentGrowsWithBandwidthDemand) {
  int sms = pk::smsFor90Percent(pk::builtinProfile(), pk::Mechanism::ldst, 256ll << 20);
  EXPECT_GE(sms, 8);
  EXPECT_LE(sms, 132);
  EXPECT_EQ(pk::smsFor90Percent(pk::MachineProfile{}, pk::Mechanism::ldst, 1024), 0);
}

TEST(CostModel, ProfileErrorsNameTheFile) {
  std::string error;
  EXPECT_FALSE(pk::loadProfileOrBuiltin("/nonexistent/x.profile", error));
  EXPECT_NE(error.find("/nonexistent/x.profile"), std::string::npos);
  EXPECT_TRUE(pk::loadProfileOrBuiltin("", error));
}

TEST(CostModel, SmallTransfersAreLatencyBound) {
  const pk::MachineProfile &p = pk::builtinProfile();
  EXPECT_LT(pk::effectiveBandwidth(p, pk::Mechanism::tma, 1024), 1.0);
  EXPECT_LT(pk::effectiveBandwidth(p, pk::Mechanism::ldst, 1024),
            pk::effectiveBandwidth(p, pk::Mechanism::ldst, 1 << 20));
}

TEST(CostModel, FormatsBytes) {
  EXPECT_EQ(pk::formatBytes(4096), "4 KiB");
  EXPECT_EQ(pk::formatBytes(3 << 20), "3 MiB");
  EXPECT_EQ(pk::formatBytes(100), "100 B");
}

} // namespace
