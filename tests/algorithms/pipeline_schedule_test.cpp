// Pipeline schedule orders: the hand-derived orders of 1F1B and interleaved
// 1F1B, slot bookkeeping, deadlock freedom and the bubble formulas checked
// against a small time-stepped executor of the orders.
#include "engine/algorithms/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace shardlab {
namespace {

constexpr PipelineSchedule kAllSchedules[] = {PipelineSchedule::kGPipe, PipelineSchedule::k1F1B,
                                              PipelineSchedule::kInterleaved1F1B,
                                              PipelineSchedule::kZeroBubbleH1};

PipelineSlot F(int mb, int chunk = 0) { return {PipelinePass::kForward, mb, chunk}; }
PipelineSlot B(int mb, int chunk = 0) { return {PipelinePass::kBackward, mb, chunk}; }
PipelineSlot W(int mb) { return {PipelinePass::kWeight, mb, 0}; }
int PassIndex(const PipelineSlot& slot) { return static_cast<int>(slot.pass); }

std::string Describe(PipelineSchedule s, const PipelineShape& shape) {
  return std::string(PipelineScheduleName(s)) + " p=" + std::to_string(shape.stages) +
         " m=" + std::to_string(shape.microbatches) + " v=" + std::to_string(shape.chunks);
}

// Every shape the sweeping tests walk: p 1..8, m 1..17, v 2..4 when interleaved.
template <typename Fn>
void ForEachShape(Fn fn) {
  for (const PipelineSchedule s : kAllSchedules) {
    const bool interleaved = s == PipelineSchedule::kInterleaved1F1B;
    for (int p = 1; p <= 8; ++p)
      for (int m = 1; m <= 17; ++m)
        for (int v = interleaved ? 2 : 1; v <= (interleaved ? 4 : 1); ++v)
          fn(s, PipelineShape{p, m, v});
  }
}

struct Execution {
  bool deadlock = false;
  long makespan = 0;
  std::vector<long> busy;  // per stage
};

// Runs the orders: each stage takes its slots in order, a slot starts as soon
// as the stage is free and its inputs are done, communication is free.
// F(mb, g) needs F(mb, g-1); B(mb, g) needs F(mb, g) and B(mb, g+1), where g
// is the global chunk; W(mb, g) needs B(mb, g). Finish times follow from the
// stage order and the dependencies alone, so any sweep that reaches the
// fixed point gives them.
Execution Execute(const PipelineShape& shape, const std::vector<std::vector<PipelineSlot>>& orders,
                  long forward_time, long backward_time, long weight_time = 1) {
  const int p = shape.stages, m = shape.microbatches, chunks_total = p * shape.chunks;
  // done[pass][mb * chunks_total + g] = finish time, -1 while not run.
  std::vector<std::vector<long>> done(
      3, std::vector<long>(static_cast<std::size_t>(m * chunks_total), -1));
  auto finish = [&](PipelinePass pass, int mb, int g) -> long& {
    return done[static_cast<int>(pass)][static_cast<std::size_t>(mb * chunks_total + g)];
  };
  constexpr PipelinePass kF = PipelinePass::kForward, kB = PipelinePass::kBackward;
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  std::vector<long> free_at(static_cast<std::size_t>(p), 0);
  Execution out;
  out.busy.assign(static_cast<std::size_t>(p), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < p; ++s) {
      while (next[s] < orders[s].size()) {
        const PipelineSlot& slot = orders[s][next[s]];
        const int g = GlobalChunk(shape, s, slot.chunk);
        long ready = free_at[s];
        std::vector<long> deps;
        if (slot.pass == kF && g > 0) deps.push_back(finish(kF, slot.microbatch, g - 1));
        if (slot.pass == kB) deps.push_back(finish(kF, slot.microbatch, g));
        if (slot.pass == kB && g + 1 < chunks_total) deps.push_back(finish(kB, slot.microbatch, g + 1));
        if (slot.pass == PipelinePass::kWeight) deps.push_back(finish(kB, slot.microbatch, g));
        if (std::any_of(deps.begin(), deps.end(), [](long t) { return t < 0; })) break;
        for (const long t : deps) ready = std::max(ready, t);
        const long duration = slot.pass == kF   ? forward_time
                              : slot.pass == kB ? backward_time
                                                : weight_time;
        free_at[s] = finish(slot.pass, slot.microbatch, g) = ready + duration;
        out.busy[s] += duration;
        out.makespan = std::max(out.makespan, free_at[s]);
        ++next[s];
        progress = true;
      }
    }
  }
  for (int s = 0; s < p; ++s) out.deadlock |= next[s] < orders[s].size();
  return out;
}

TEST(PipelineScheduleTest, NamesRoundTrip) {
  for (const PipelineSchedule s : kAllSchedules)
    EXPECT_EQ(ParsePipelineSchedule(PipelineScheduleName(s)), s);
  EXPECT_STREQ(PipelineScheduleName(PipelineSchedule::kInterleaved1F1B), "interleaved");
  EXPECT_STREQ(PipelineScheduleTitle(PipelineSchedule::kGPipe), "GPipe");
  EXPECT_STREQ(PipelineScheduleTitle(PipelineSchedule::k1F1B), "1F1B (PipeDream-Flush)");
  EXPECT_STREQ(PipelineScheduleTitle(PipelineSchedule::kInterleaved1F1B), "interleaved 1F1B");
}

void ExpectInvalid(const std::function<void()>& fn, const std::string& prefix) {
  try {
    fn();
    ADD_FAILURE() << "no error, expected one starting '" << prefix << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

TEST(PipelineScheduleTest, BadInputThrowsWithField) {
  ExpectInvalid([] { ParsePipelineSchedule("zb"); },
                "schedule: unknown schedule 'zb' (choose gpipe, 1f1b, interleaved, zb-h1, naive)");
  const auto order = [](PipelineSchedule s, PipelineShape shape) {
    return [=] { PipelineOrder(s, shape); };
  };
  ExpectInvalid(order(PipelineSchedule::k1F1B, {4, 0, 1}), "microbatches: ");
  ExpectInvalid(order(PipelineSchedule::kGPipe, {4, 65537, 1}), "microbatches: ");
  ExpectInvalid(order(PipelineSchedule::kGPipe, {0, 8, 1}), "stages: ");
  ExpectInvalid(order(PipelineSchedule::kGPipe, {4097, 8, 1}), "stages: ");
  ExpectInvalid(order(PipelineSchedule::kInterleaved1F1B, {4, 8, 1}), "chunks: ");
  ExpectInvalid(order(PipelineSchedule::k1F1B, {4, 8, 2}),
                "chunks: only the interleaved schedule splits a stage into model chunks");
  EXPECT_NO_THROW(CheckPipelineShape(PipelineSchedule::kInterleaved1F1B, {4, 8, 2}));
  EXPECT_NO_THROW(CheckPipelineShape(PipelineSchedule::kGPipe, {1, 1, 1}));
}

TEST(PipelineScheduleTest, OneFOneBMatchesMegatron) {
  const auto orders = PipelineOrder(PipelineSchedule::k1F1B, {4, 8, 1});
  const std::vector<PipelineSlot> stage0 = {F(0), F(1), F(2), F(3), B(0), F(4), B(1), F(5),
                                            B(2), F(6), B(3), F(7), B(4), B(5), B(6), B(7)};
  EXPECT_EQ(orders[0], stage0);
  std::vector<PipelineSlot> last;
  for (int mb = 0; mb < 8; ++mb) last.insert(last.end(), {F(mb), B(mb)});
  EXPECT_EQ(orders[3], last);
}

TEST(PipelineScheduleTest, GPipeRunsAllForwardsFirst) {
  const auto orders = PipelineOrder(PipelineSchedule::kGPipe, {3, 3, 1});
  const std::vector<PipelineSlot> expected = {F(0), F(1), F(2), B(0), B(1), B(2)};
  for (const auto& order : orders) EXPECT_EQ(order, expected);
}

// p = 2, v = 2, m = 4 by hand from Megatron's rule. Groups of p = 2
// micro-batches; forward slot k: chunk (k % 4) / 2, micro-batch 2*(k/4) + k%2;
// backward the same with chunk 1 - that. Stage 0's warm-up is
// 2*(p-0-1) + (v-1)*p = 4, then 4 x (F, B), then the last 4 backwards.
TEST(PipelineScheduleTest, InterleavedMatchesMegatronByHand) {
  const auto orders = PipelineOrder(PipelineSchedule::kInterleaved1F1B, {2, 4, 2});
  // clang-format off
  const std::vector<PipelineSlot> stage0 = {
      F(0, 0), F(1, 0), F(0, 1), F(1, 1),                                      // warm-up
      F(2, 0), B(0, 1), F(3, 0), B(1, 1), F(2, 1), B(0, 0), F(3, 1), B(1, 0),  // steady
      B(2, 1), B(3, 1), B(2, 0), B(3, 0)};                                     // cool-down
  // clang-format on
  EXPECT_EQ(orders[0], stage0);
  // Stage 1 (last): warm-up (v-1)*p = 2.
  const std::vector<PipelineSlot> stage1 = {F(0, 0), F(1, 0), F(0, 1), B(0, 1), F(1, 1), B(1, 1),
                                            F(2, 0), B(0, 0), F(3, 0), B(1, 0), F(2, 1), B(2, 1),
                                            F(3, 1), B(3, 1), B(2, 0), B(3, 0)};
  EXPECT_EQ(orders[1], stage1);
}

// A partial last group (m = 3, p = 2) cycles over its one micro-batch.
TEST(PipelineScheduleTest, InterleavedPartialGroup) {
  const auto orders = PipelineOrder(PipelineSchedule::kInterleaved1F1B, {2, 3, 2});
  std::vector<PipelineSlot> forwards;
  for (const PipelineSlot& slot : orders[0])
    if (slot.pass == PipelinePass::kForward) forwards.push_back(slot);
  EXPECT_EQ(forwards,
            (std::vector<PipelineSlot>{F(0, 0), F(1, 0), F(0, 1), F(1, 1), F(2, 0), F(2, 1)}));
}

// All forwards first when m == p, as Megatron does.
TEST(PipelineScheduleTest, InterleavedAllWarmupWhenMicrobatchesEqualStages) {
  const PipelineShape shape{4, 4, 3};
  const auto orders = PipelineOrder(PipelineSchedule::kInterleaved1F1B, shape);
  for (const auto& order : orders)
    for (std::size_t i = 0; i < order.size(); ++i)
      EXPECT_EQ(order[i].pass == PipelinePass::kBackward, i >= order.size() / 2);
}

TEST(PipelineScheduleTest, EverySlotOnceForwardBeforeBackward) {
  ForEachShape([](PipelineSchedule s, const PipelineShape& shape) {
    SCOPED_TRACE(Describe(s, shape));
    const auto orders = PipelineOrder(s, shape);
    ASSERT_EQ(orders.size(), static_cast<std::size_t>(shape.stages));
    const int m = shape.microbatches, v = shape.chunks;
    const int passes = SplitsBackward(s) ? 3 : 2;
    for (const auto& order : orders) {
      ASSERT_EQ(order.size(), static_cast<std::size_t>(passes * m * v));
      // position[pass][mb*v + chunk], -1 = not seen.
      std::vector<std::vector<int>> position(3,
                                             std::vector<int>(static_cast<std::size_t>(m * v), -1));
      for (int i = 0; i < static_cast<int>(order.size()); ++i) {
        const PipelineSlot& slot = order[i];
        ASSERT_TRUE(slot.microbatch >= 0 && slot.microbatch < m && slot.chunk >= 0 &&
                    slot.chunk < v);
        ASSERT_TRUE(passes == 3 || slot.pass != PipelinePass::kWeight);
        int& seen = position[PassIndex(slot)][slot.microbatch * v + slot.chunk];
        ASSERT_EQ(seen, -1) << "slot twice at " << i;
        seen = i;
      }
      for (int k = 0; k < m * v; ++k) {
        EXPECT_LT(position[0][k], position[1][k]);
        if (passes == 3) {
          EXPECT_LT(position[1][k], position[2][k]);
        }
      }
    }
  });
}

TEST(PipelineScheduleTest, NoDeadlock) {
  ForEachShape([](PipelineSchedule s, const PipelineShape& shape) {
    const auto orders = PipelineOrder(s, shape);
    EXPECT_FALSE(Execute(shape, orders, 1, 1).deadlock) << Describe(s, shape);
    EXPECT_FALSE(Execute(shape, orders, 1, 2).deadlock) << Describe(s, shape);
  });
}

// The same stage's forwards and backwards, re-interleaved with `warmup`
// forwards before the steady state.
std::vector<PipelineSlot> WithWarmup(const std::vector<PipelineSlot>& order, int warmup) {
  std::vector<PipelineSlot> forwards, backwards, out;
  for (const PipelineSlot& slot : order)
    (slot.pass == PipelinePass::kBackward ? backwards : forwards).push_back(slot);
  const std::size_t total = forwards.size();
  std::size_t f = 0, b = 0;
  while (f < std::min<std::size_t>(static_cast<std::size_t>(warmup), total))
    out.push_back(forwards[f++]);
  while (f < total) {
    out.push_back(forwards[f++]);
    out.push_back(backwards[b++]);
  }
  while (b < total) out.push_back(backwards[b++]);
  return out;
}

// Megatron's warm-up 2*(p-s-1) + (v-1)*p deadlocks with a partial last group
// (m > p, m % p > 0); the generator raises every stage's warm-up to at least
// (v-1)*p + min((v-1)*q - 1, p-q-2). Check that Megatron's counts do
// deadlock there, and that a floor one lower does too (the raise is the least).
TEST(PipelineScheduleTest, InterleavedPartialGroupWarmupIsLeastThatWorks) {
  int raised = 0;
  for (int p = 1; p <= 8; ++p) {
    for (int m = p + 1; m <= 17; ++m) {
      for (int v = 2; v <= 4; ++v) {
        const int q = m % p;
        if (q == 0) continue;
        const PipelineShape shape{p, m, v};
        SCOPED_TRACE(Describe(PipelineSchedule::kInterleaved1F1B, shape));
        const auto orders = PipelineOrder(PipelineSchedule::kInterleaved1F1B, shape);
        const int floor = (v - 1) * p + std::min((v - 1) * q - 1, p - q - 2);
        auto with_floor = [&](int least) {
          auto out = orders;
          for (int s = 0; s < p; ++s)
            out[s] = WithWarmup(orders[s], std::max(least, 2 * (p - s - 1) + (v - 1) * p));
          return out;
        };
        EXPECT_EQ(with_floor(floor), orders);
        if (with_floor(floor - 1) == orders) continue;  // nothing raised: Megatron's counts work
        ++raised;
        EXPECT_TRUE(Execute(shape, with_floor(0), 1, 1).deadlock);
        EXPECT_TRUE(Execute(shape, with_floor(floor - 1), 1, 1).deadlock);
      }
    }
  }
  EXPECT_GT(raised, 50);
}

// Measured bubble: (makespan - busy) / busy, the same on every stage.
double MeasuredBubble(const PipelineShape& shape, PipelineSchedule s, long forward_time,
                      long backward_time) {
  const Execution run = Execute(shape, PipelineOrder(s, shape), forward_time, backward_time);
  EXPECT_FALSE(run.deadlock);
  for (const long busy : run.busy) EXPECT_EQ(busy, run.busy[0]);
  return static_cast<double>(run.makespan - run.busy[0]) / static_cast<double>(run.busy[0]);
}

TEST(PipelineScheduleTest, BubbleMatchesFormula) {
  for (const PipelineSchedule s : {PipelineSchedule::kGPipe, PipelineSchedule::k1F1B}) {
    for (int p = 1; p <= 8; ++p) {
      for (int m = 1; m <= 17; ++m) {
        const PipelineShape shape{p, m, 1};
        SCOPED_TRACE(Describe(s, shape));
        const double formula = FormulaBubbleOverUseful(s, shape);
        EXPECT_DOUBLE_EQ(formula, static_cast<double>(p - 1) / m);
        EXPECT_DOUBLE_EQ(MeasuredBubble(shape, s, 1, 1), formula);
        EXPECT_DOUBLE_EQ(MeasuredBubble(shape, s, 1, 2), formula);
      }
    }
  }
  // Interleaved when m is a multiple of p (a partial last group adds idle
  // slots: each wrap-around of its q micro-batches waits p-q slots).
  for (int p = 1; p <= 8; ++p) {
    for (int m = p; m <= 17; m += p) {
      for (int v = 2; v <= 4; ++v) {
        const PipelineShape shape{p, m, v};
        SCOPED_TRACE(Describe(PipelineSchedule::kInterleaved1F1B, shape));
        const double formula = FormulaBubbleOverUseful(PipelineSchedule::kInterleaved1F1B, shape);
        EXPECT_DOUBLE_EQ(formula, static_cast<double>(p - 1) / (v * m));
        EXPECT_DOUBLE_EQ(MeasuredBubble(shape, PipelineSchedule::kInterleaved1F1B, 1, 1), formula);
        EXPECT_DOUBLE_EQ(MeasuredBubble(shape, PipelineSchedule::kInterleaved1F1B, 1, 2), formula);
      }
    }
  }
}

TEST(PipelineScheduleTest, BubbleOfStep) {
  EXPECT_DOUBLE_EQ(FormulaBubbleOfStep(PipelineSchedule::kGPipe, {4, 8, 1}), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(FormulaBubbleOfStep(PipelineSchedule::k1F1B, {4, 8, 1}), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(FormulaBubbleOfStep(PipelineSchedule::kInterleaved1F1B, {4, 8, 2}), 3.0 / 19.0);
  EXPECT_DOUBLE_EQ(FormulaBubbleOverUseful(PipelineSchedule::kInterleaved1F1B, {4, 8, 2}),
                   3.0 / 16.0);
  EXPECT_DOUBLE_EQ(FormulaBubbleOfStep(PipelineSchedule::kGPipe, {1, 8, 1}), 0.0);
}

TEST(PipelineScheduleTest, PeakInFlight) {
  ForEachShape([](PipelineSchedule s, const PipelineShape& shape) {
    SCOPED_TRACE(Describe(s, shape));
    const auto orders = PipelineOrder(s, shape);
    for (int stage = 0; stage < shape.stages; ++stage) {
      const int peak = PeakInFlight(orders[stage]);
      EXPECT_EQ(peak, FormulaPeakInFlight(s, shape, stage));
      if (s == PipelineSchedule::kGPipe) {
        EXPECT_EQ(peak, shape.microbatches);
      } else if (s == PipelineSchedule::k1F1B) {
        EXPECT_EQ(peak, std::min(shape.microbatches, shape.stages - stage));
      } else if (s == PipelineSchedule::kZeroBubbleH1) {  // 1F1B's stage-0 peak, freed at W
        EXPECT_EQ(peak, std::min(shape.microbatches, shape.stages));
      } else {
        EXPECT_LE(peak, shape.microbatches * shape.chunks);
      }
    }
  });
  EXPECT_EQ(PeakInFlight({}), 0);
  EXPECT_EQ(PeakInFlight({F(0), B(0), F(1), F(2), B(1), B(2)}), 2);
}

// ZB-H1 with F, B and W one tick each: the bubble is (p-1)/(3m) of the
// useful time once m >= p (fill and drain cost p-1 ticks instead of 1F1B's
// 3(p-1)), and the step is shorter than 1F1B's with B+W fused for every m.
TEST(PipelineScheduleTest, ZeroBubbleH1CutsTheBubbleToAThird) {
  for (int p = 2; p <= 8; ++p) {
    for (int m = 1; m <= 3 * p; ++m) {
      const PipelineShape shape{p, m, 1};
      SCOPED_TRACE(Describe(PipelineSchedule::kZeroBubbleH1, shape));
      const Execution zb = Execute(shape, PipelineOrder(PipelineSchedule::kZeroBubbleH1, shape), 1, 1, 1);
      ASSERT_FALSE(zb.deadlock);
      const double busy = 3.0 * m;
      for (const long b : zb.busy) EXPECT_EQ(b, 3 * m);
      const double bubble = (zb.makespan - busy) / busy;
      if (m >= p) {
        EXPECT_DOUBLE_EQ(bubble, FormulaBubbleOverUseful(PipelineSchedule::kZeroBubbleH1, shape));
      }
      const Execution one_f_one_b =
          Execute(shape, PipelineOrder(PipelineSchedule::k1F1B, shape), 1, 2);
      EXPECT_LT(zb.makespan, one_f_one_b.makespan);
      // Unequal passes: F 2, B 1, W 1 still never loses to 1F1B (F 2, B+W 2).
      EXPECT_LE(Execute(shape, PipelineOrder(PipelineSchedule::kZeroBubbleH1, shape), 2, 1, 1).makespan,
                Execute(shape, PipelineOrder(PipelineSchedule::k1F1B, shape), 2, 2).makespan);
    }
  }
  // p = 2, m = 2 by hand: the last stage defers both W's to the drain, where
  // stage 0 would otherwise wait for B1; 7 ticks against 1F1B's 9.
  const auto orders = PipelineOrder(PipelineSchedule::kZeroBubbleH1, {2, 2, 1});
  EXPECT_EQ(orders[0], (std::vector<PipelineSlot>{F(0), F(1), B(0), W(0), B(1), W(1)}));
  EXPECT_EQ(orders[1], (std::vector<PipelineSlot>{F(0), B(0), F(1), B(1), W(0), W(1)}));
  EXPECT_EQ(Execute({2, 2, 1}, orders, 1, 1, 1).makespan, 7);
}

TEST(PipelineScheduleTest, GlobalChunk) {
  const PipelineShape shape{4, 8, 3};
  EXPECT_EQ(GlobalChunk(shape, 0, 0), 0);
  EXPECT_EQ(GlobalChunk(shape, 3, 0), 3);
  EXPECT_EQ(GlobalChunk(shape, 1, 1), 5);
  EXPECT_EQ(GlobalChunk(shape, 2, 2), 10);
}

}  // namespace
}  // namespace shardlab
