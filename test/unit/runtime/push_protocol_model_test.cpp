// A model check of the collectives' three-path protocol (pk/device/push_small.cuh: the LL
// path and the flag path, and the direct path pk-lower-collectives emits), on the CPU: W ranks
// run the same sequence of launches, each taking one of the paths by size; every block is
// a process of atomic steps, interleaved at random, and a rank's next launch starts only when
// all its blocks finished (stream order). It checks that no wait deadlocks, that every landing
// slot a block reads holds this launch's data from the right source, and that every peer input
// the direct path reads is the one of this launch. An LL read is a wait for this launch's tag in
// the word (a word overwritten by a later launch first never matches: a deadlock). Memory is
// sequentially consistent here: the model tests the counting and reuse logic (per-source lane
// slots, the per-block launch counts, landing parity, LL tokens), not the hardware ordering the
// fences give. Seeded-bug variants show that the checks can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

struct Bugs {
  bool signal_before_push = false;   // lane adds before the pushes they publish
  bool one_parity = false;           // always landing parity 0
  bool direct_counts_epoch = false;  // direct waits use the launch count, not direct launches
  bool ll_no_tokens = false;         // rooted LL launches send no tokens where no data flows
  bool ll_root_links_only = false;   // rooted LL tokens only between the root and the others
  bool direct_ignores_ll = false;    // direct waits subtract flag-path launches only
};

struct Model {
  int W, G, lanes;
  bool rooted;  // LL data flows only from the root (rank 0), as in a broadcast
  Bugs bugs;
  // flags[rank][slot name] (only grows), and each rank's landing and input tags.
  std::vector<std::map<std::string, long>> flags;
  std::vector<std::map<std::string, long>> landing;  // "parity/src/chunk" -> launch that wrote it
  std::vector<std::map<std::string, long>> ll;       // LL words: "parity/src/chunk" -> tag
  std::vector<long> input;                           // launch whose input the rank holds
  std::string error;

  Model(int w, int g, bool root, Bugs b)
      : W(w), G(g), lanes(std::min(g, 32)), rooted(root), bugs(b), flags(w), landing(w), ll(w), input(w, 0) {}
  long& flag(int r, const std::string& s) { return flags[r][s]; }
  std::string lane_slot(int src, int lane) {
    return "lane/" + std::to_string(src) + "/" + std::to_string(lane);
  }
};

// One block of one launch on one rank: a resumable sequence of steps.
struct Block {
  int rank, b;
  long e;       // this launch's number (1-based, all paths)
  int path;     // the path every rank takes for this launch: 0 direct, 1 flag, 2 LL
  int P;        // lanes (flag path) or blocks (LL path) carrying data
  long k = 0;   // push path: its launch count with this one (from the block's counter)
  long d = 0;   // direct path: direct launches with this one
  int pc = 0;   // next step
  int peer = 0; // steps that address peers do it one peer per step, as separate stores do
  bool done = false;
};

// The push path's lane adds on peer blk.peer: its own lane and the idle lanes it covers.
void add_lanes(Model& m, Block& blk) {
  if (blk.peer == blk.rank) return;
  m.flag(blk.peer, m.lane_slot(blk.rank, blk.b))++;
  for (int l = blk.b + blk.P; l < m.lanes; l += blk.P) m.flag(blk.peer, m.lane_slot(blk.rank, l))++;
}

// Adds one to `slot` on the block's next peer; true while peers remain for later steps.
bool signal_next_peer(Model& m, Block& blk, const std::string& slot) {
  if (blk.peer != blk.rank) m.flag(blk.peer, slot)++;
  if (++blk.peer < m.W) return true;
  blk.peer = 0;
  return false;
}

// LL links and directions: every pair of ranks is linked; in the rooted case (a broadcast)
// data flows from the root (0) and the other directions carry tokens.
bool ll_linked(const Model& m, int a, int b) {
  return a != b && (!m.rooted || !m.bugs.ll_root_links_only || a == 0 || b == 0);
}
bool ll_data(const Model& m, int from) { return !m.rooted || from == 0; }

// The LL word (chunk) block blk sends to or polls from a linked rank, or -1 for none: data
// chunk b where data flows and b < P; else a token in chunk 0, sent and polled by block 0.
int ll_chunk(const Model& m, const Block& blk, int from) {
  if (ll_data(m, from)) return blk.b < blk.P ? blk.b : -1;
  if (m.bugs.ll_no_tokens) return -1;
  return blk.b == 0 ? 0 : -1;
}

// One step of an LL-path block.
bool step_ll(Model& m, Block& blk, const std::string& par) {
  const int me = blk.rank, W = m.W;
  const std::string llcnt = "llcount/" + std::to_string(blk.b);
  switch (blk.pc) {
    case 0:  // send this block's word to the next linked peer
      if (ll_linked(m, me, blk.peer)) {
        const int c = ll_chunk(m, blk, me);
        if (c >= 0) m.ll[blk.peer][par + "/" + std::to_string(me) + "/" + std::to_string(c)] = blk.e;
      }
      if (++blk.peer < W) return true;
      blk.peer = 0;
      break;
    case 1:  // poll every linked source's word until it carries this launch's tag
      for (int s = 0; s < W; ++s) {
        if (!ll_linked(m, s, me)) continue;
        const int c = ll_chunk(m, blk, s);
        if (c >= 0 && m.ll[me][par + "/" + std::to_string(s) + "/" + std::to_string(c)] != blk.e)
          return false;
      }
      m.flag(me, llcnt)++;
      blk.done = true;
      return true;
  }
  ++blk.pc;
  return true;
}

// Runs one step of `blk` if it can; returns false when it is blocked on a wait.
bool step(Model& m, Block& blk) {
  const int me = blk.rank, W = m.W;
  const std::string cnt = "count/" + std::to_string(blk.b);
  const std::string par = std::to_string(m.bugs.one_parity ? 0 : blk.e & 1);
  if (blk.path == 2) return step_ll(m, blk, par);
  if (blk.path == 1) {
    switch (blk.pc) {
      case 0:  // read the block's own launch counter
        blk.k = m.flag(me, cnt) + 1;
        if (blk.b >= blk.P) {
          m.flag(me, cnt) = blk.k;
          blk.done = true;
          return true;
        }
        blk.peer = 0;
        break;
      case 1:  // push chunk b to the next peer (with the seeded bug: lane adds first)
        if (m.bugs.signal_before_push) {
          add_lanes(m, blk);
        } else if (blk.peer != me)
          m.landing[blk.peer][par + "/" + std::to_string(me) + "/" + std::to_string(blk.b)] = blk.e;
        if (++blk.peer < W) return true;
        blk.peer = 0;
        break;
      case 2:  // own lane slot, and the idle lanes this lane covers, on the next peer
        if (m.bugs.signal_before_push) {
          if (blk.peer != me)
            m.landing[blk.peer][par + "/" + std::to_string(me) + "/" + std::to_string(blk.b)] = blk.e;
        } else {
          add_lanes(m, blk);
        }
        if (++blk.peer < W) return true;
        blk.peer = 0;
        break;
      case 3:  // wait for every peer's lane b
        for (int s = 0; s < W; ++s)
          if (s != me && m.flag(me, m.lane_slot(s, blk.b)) < blk.k) return false;
        break;
      case 4:  // assemble: every source's chunk b must be this launch's
        for (int s = 0; s < W; ++s) {
          if (s == me) continue;
          const long got = m.landing[me][par + "/" + std::to_string(s) + "/" + std::to_string(blk.b)];
          if (got != blk.e && m.error.empty())
            m.error = "rank " + std::to_string(me) + " block " + std::to_string(blk.b) +
                      " launch " + std::to_string(blk.e) + " read landing data of launch " +
                      std::to_string(got) + " from rank " + std::to_string(s);
        }
        m.flag(me, cnt) = blk.k;
        blk.done = true;
        return true;
    }
    ++blk.pc;
    return true;
  }
  const std::string arrive = "arrive/" + std::to_string(blk.b), depart = "depart/" + std::to_string(blk.b);
  switch (blk.pc) {
    case 0:  // the direct-launch count: launches so far minus the block's push-path count
      blk.d = m.bugs.direct_counts_epoch
                  ? blk.e
                  : blk.e - m.flag(me, cnt) -
                        (m.bugs.direct_ignores_ll ? 0 : m.flag(me, "llcount/" + std::to_string(blk.b)));
      break;
    case 1:  // arrive, one peer per step
      if (signal_next_peer(m, blk, arrive)) return true;
      break;
    case 2:
      if (m.flag(me, arrive) < blk.d * (W - 1)) return false;
      break;
    case 3:  // read every peer's input: it must be the input of this launch
      for (int s = 0; s < W; ++s)
        if (s != me && m.input[s] != blk.e && m.error.empty())
          m.error = "rank " + std::to_string(me) + " launch " + std::to_string(blk.e) +
                    " read rank " + std::to_string(s) + "'s input of launch " + std::to_string(m.input[s]);
      break;
    case 4:  // depart, one peer per step
      if (signal_next_peer(m, blk, depart)) return true;
      break;
    case 5:
      if (m.flag(me, depart) < blk.d * (W - 1)) return false;
      blk.done = true;
      return true;
  }
  ++blk.pc;
  return true;
}

// Runs a launch plan (one entry per launch: > 0 the flag path with that many lanes, < 0 the LL
// path with that many data blocks, 0 the direct path) on W ranks with G blocks; returns the
// first violation, "deadlock" or "" when every launch completed correctly.
std::string run(int W, int G, bool rooted, const std::vector<int>& P_of_launch, Bugs bugs,
                unsigned seed) {
  Model m(W, G, rooted, bugs);
  std::mt19937 rng(seed);
  std::vector<std::vector<Block>> live(W);
  std::vector<size_t> next(W, 0);
  auto start = [&](int r) {
    const size_t e = next[r]++;
    m.input[r] = long(e) + 1;  // the host writes this launch's input once the previous ended
    const int p = P_of_launch[e];
    for (int b = 0; b < G; ++b)
      live[r].push_back({r, b, long(e) + 1, p > 0 ? 1 : (p < 0 ? 2 : 0), std::max(1, std::abs(p))});
  };
  for (int r = 0; r < W; ++r) start(r);
  for (long steps = 0; steps < 10'000'000; ++steps) {
    std::vector<std::pair<int, int>> ready;
    bool any = false;
    for (int r = 0; r < W; ++r) {
      for (size_t i = 0; i < live[r].size(); ++i) {
        any = true;
        Block probe = live[r][i];
        Model copy_free = m;  // cheap enough at these sizes: decide runnability without effects
        if (step(copy_free, probe)) ready.push_back({r, int(i)});
      }
    }
    if (!any) return m.error;
    if (ready.empty()) return "deadlock";
    auto [r, i] = ready[rng() % ready.size()];
    step(m, live[r][i]);
    if (!m.error.empty()) return m.error;
    if (live[r][i].done) live[r].erase(live[r].begin() + i);
    if (live[r].empty() && next[r] < P_of_launch.size()) start(r);
  }
  return "too many steps";
}

// Launch plans: > 0 = flag path with that many data lanes, < 0 = LL path with that many data
// blocks, 0 = direct path; `ll` mixes LL launches in.
std::vector<int> random_plan(std::mt19937& rng, int launches, int lanes, bool ll = false) {
  std::vector<int> plan;
  for (int i = 0; i < launches; ++i) {
    const int kind = int(rng() % (ll ? 4 : 3));
    plan.push_back(kind == 0 ? 0 : kind == 3 ? -(1 + int(rng() % lanes)) : 1 + int(rng() % lanes));
  }
  return plan;
}

TEST(PushProtocolModel, MixedPathsAreCorrectForTwoToFiveRanks) {
  std::mt19937 rng(7);
  for (int W = 2; W <= 5; ++W)
    for (int trial = 0; trial < 40; ++trial) {
      const int G = 2 + int(rng() % 4);
      const auto plan = random_plan(rng, 8, std::min(G, 32));
      const std::string r = run(W, G, false, plan, {}, unsigned(trial * 31 + W));
      ASSERT_EQ(r, "") << "W=" << W << " G=" << G << " trial " << trial;
    }
}

TEST(PushProtocolModel, LLMixedWithTheOtherPathsIsCorrect) {
  std::mt19937 rng(9);
  for (int W = 2; W <= 5; ++W)
    for (bool rooted : {false, true})
      for (int trial = 0; trial < 20; ++trial) {
        const int G = 2 + int(rng() % 3);
        const auto plan = random_plan(rng, 10, G, true);
        const std::string r = run(W, G, rooted, plan, {}, unsigned(trial * 17 + W));
        ASSERT_EQ(r, "") << "W=" << W << " G=" << G << " rooted " << rooted << " trial " << trial;
      }
}

// The checks are not vacuous: each seeded bug is caught in some interleaving.
bool caught(Bugs bugs, int W, bool ll = false, bool rooted = false) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 400; ++trial) {
    const auto plan = random_plan(rng, 8, 2, ll);
    if (!run(W, 2, rooted, plan, bugs, unsigned(trial)).empty()) return true;
  }
  return false;
}

TEST(PushProtocolModel, CatchesOneLandingParity) { EXPECT_TRUE(caught({false, true, false}, 2)); }

// Is a fixed launch plan with a seeded bug caught in one of `trials` random interleavings?
bool caught_plan(const std::vector<int>& plan, int W, int G, bool rooted, Bugs bugs, int trials) {
  for (int trial = 0; trial < trials; ++trial)
    if (!run(W, G, rooted, plan, bugs, unsigned(trial)).empty()) return true;
  return false;
}

// LL words of one parity: a fast rank overwrites words its peer has not polled yet.
TEST(PushProtocolModel, CatchesOneLLParity) {
  Bugs b;
  b.one_parity = true;
  EXPECT_TRUE(caught_plan(std::vector<int>(8, -1), 2, 2, false, b, 400));  // LL only
}

// Rooted LL without tokens: the root never waits, runs ahead and overwrites unread words.
TEST(PushProtocolModel, CatchesRootedLLWithoutTokens) {
  Bugs b;
  b.ll_no_tokens = true;
  EXPECT_TRUE(caught_plan(std::vector<int>(8, -1), 2, 2, true, b, 400));
}

// Rooted LL launches that link non-roots to nobody but the root: two non-roots pass each other
// through such a launch, and one overwrites landing data the other still reads (found by
// LLMixedWithTheOtherPathsIsCorrect before push_small linked every pair).
TEST(PushProtocolModel, CatchesRootedLLThatLinksOnlyTheRoot) {
  Bugs b;
  b.ll_root_links_only = true;
  EXPECT_TRUE(caught_plan({1, -1, 1, -1, 1, -1, 1, -1}, 3, 1, true, b, 2000));  // flag, LL, ...
}

// Direct waits that do not subtract LL launches wait for signals that never come.
TEST(PushProtocolModel, CatchesDirectWaitsThatIgnoreLLLaunches) {
  Bugs b;
  b.direct_ignores_ll = true;
  EXPECT_TRUE(caught_plan({-1, 0, -1, 0}, 2, 2, false, b, 50));
}

TEST(PushProtocolModel, CatchesSignalsBeforeTheirData) {
  EXPECT_TRUE(caught({true, false, false}, 3));
}

TEST(PushProtocolModel, CatchesDirectWaitsThatCountPushLaunches) {
  EXPECT_TRUE(caught({false, false, true}, 2));
}

}  // namespace
