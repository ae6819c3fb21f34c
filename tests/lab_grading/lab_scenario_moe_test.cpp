// The "moe" lab scenario: its bytes, capacity and drops equal the counts
// made here by hand from the routing rules (moe_layer.h), independently of
// the engine's own hand count; the phases add up to the step; a hot expert
// makes rank 0 the straggler by its share of rows; bad parameters name the
// lab's spelling of the parameter.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "engine/core/error.h"
#include "engine/lab/lab_scenario.h"

namespace shardlab {
namespace {

LabParam Text(const std::string& name, const std::string& value) {
  return {name, LabParamType::kString, value, 0, false, 0};
}
LabParam Number(const std::string& name, double value) {
  return {name, LabParamType::kNumber, "", value, false, 0};
}
LabParam Flag(const std::string& name, bool value) {
  return {name, LabParamType::kBool, "", 0, value, 0};
}

constexpr int kRanks = 4, kExperts = 8, kTopK = 2, kTokens = 1024, kHidden = 128;

std::vector<LabParam> Layer(const std::string& skew, double capacity_factor) {
  return {Number("ranks", kRanks),   Number("experts", kExperts), Number("top_k", kTopK),
          Number("tokens", kTokens), Number("hidden", kHidden),   Number("ffn", 256),
          Number("capacity_factor", capacity_factor), Text("skew", skew)};
}

TEST(LabScenarioMoe, UniformRoutingSendsTheRemoteShareOfEveryChoice) {
  const LabRunResult r = RunLabScenario("moe", Layer("uniform", 1.25));
  const LabValues& m = r.measured;
  // Token t's choice j is expert (t*k + j) mod E: each rank's k*T/N choices
  // cover the experts evenly, (N-1)/N of them on other ranks.
  const double rows_out = double(kTopK) * kTokens / kRanks;
  const double per_rank = rows_out * (kRanks - 1) / kRanks * kHidden * 4;
  EXPECT_EQ(m.at("dispatch_bytes_per_rank"), per_rank);
  EXPECT_EQ(m.at("dispatch_bytes"), kRanks * per_rank);
  EXPECT_EQ(m.at("combine_bytes"), m.at("dispatch_bytes"));
  EXPECT_EQ(m.at("capacity_per_rank"), std::ceil(1.25 * kTopK * (kTokens / kRanks) / kExperts));
  EXPECT_EQ(m.at("dropped"), 0);
  EXPECT_EQ(m.at("kept"), double(kTokens) * kTopK);
  EXPECT_EQ(m.at("max_rank_rows"), rows_out);
  EXPECT_EQ(m.at("mean_rank_rows"), rows_out);
  EXPECT_DOUBLE_EQ(m.at("straggler_load"), 1.0);
  // The four phases cut the step without gaps or overlaps.
  EXPECT_NEAR(m.at("router_us") + m.at("dispatch_us") + m.at("experts_us") + m.at("combine_us"),
              m.at("time_us"), 1e-9 * m.at("time_us"));
  EXPECT_GT(m.at("dispatch_us"), 0);
  EXPECT_DOUBLE_EQ(m.at("time_ms") * 1e3, m.at("time_us"));
  EXPECT_NE(r.summary.find("dropped 0 of 2048"), std::string::npos) << r.summary;
}

TEST(LabScenarioMoe, AHotExpertDropsWhatExceedsItsCapacityAndBecomesTheStraggler) {
  const LabValues capped = RunLabScenario("moe", Layer("hot", 1.25)).measured;
  // Half of each rank's T/N tokens name expert 0 first; C of them fit.
  const double capacity = std::ceil(1.25 * kTopK * (kTokens / kRanks) / kExperts);
  const double dropped = kRanks * (kTokens / kRanks / 2 - capacity);
  EXPECT_EQ(capped.at("dropped"), dropped);
  EXPECT_EQ(capped.at("kept") + capped.at("dropped"), double(kTokens) * kTopK);
  EXPECT_DOUBLE_EQ(capped.at("dropped_fraction"), dropped / (double(kTokens) * kTopK));
  EXPECT_EQ(capped.at("max_expert_rows"), kRanks * capacity);
  EXPECT_EQ(capped.at("straggler"), 0);

  // E/k never drops: expert 0 keeps all T/2 of its first choices.
  const LabValues free = RunLabScenario("moe", Layer("hot", double(kExperts) / kTopK)).measured;
  EXPECT_EQ(free.at("dropped"), 0);
  EXPECT_EQ(free.at("max_expert_rows"), kTokens / 2);
  EXPECT_EQ(free.at("straggler"), 0);
  EXPECT_NEAR(free.at("straggler_load"), free.at("max_rank_rows") / free.at("mean_rank_rows"),
              1e-12);
  EXPECT_GT(free.at("straggler_time"), 1.2);
  EXPECT_GT(free.at("experts_us"), capped.at("experts_us"));
}

TEST(LabScenarioMoe, TimingOnlyRunsAPaperSizedLayer) {
  std::vector<LabParam> p = Layer("uniform", 1.25);
  p.push_back(Number("ranks", 8));
  p.push_back(Number("tokens", 32768));
  p.push_back(Number("hidden", 4096));
  p.push_back(Number("ffn", 14336));
  p.push_back(Flag("timing_only", true));
  EXPECT_THROW(CheckLabScenario("moe", std::vector<LabParam>(p.begin(), p.end() - 1)), Error);
  const LabValues m = RunLabScenario("moe", p).measured;
  // Two experts per rank; each rank computes its k*T/N rows, 4*rows*H*F flops.
  EXPECT_EQ(m.at("mean_rank_rows"), 2.0 * 32768 / 8);
  EXPECT_GT(m.at("experts_us"), 10 * m.at("dispatch_us"));
}

TEST(LabScenarioMoe, BadParametersNameTheLabsSpelling) {
  auto message = [](std::vector<LabParam> p) {
    try {
      CheckLabScenario("moe", p);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::vector<LabParam> p = Layer("uniform", 1.25);
  p.push_back(Number("top_k", 9));
  EXPECT_EQ(message(p).rfind("top_k: ", 0), 0u) << message(p);
  p = Layer("uniform", 1.25);
  p.push_back(Number("experts", 6));
  EXPECT_EQ(message(p).rfind("experts: ", 0), 0u) << message(p);
  p = Layer("uniform", 1.25);
  p.push_back(Number("ranks", 16));
  p.push_back(Number("experts", 16));
  EXPECT_EQ(message(p).rfind("ranks: ", 0), 0u) << message(p);
  p = Layer("uniform", 1.25);
  p.push_back(Number("capacity_factor", 0));
  EXPECT_EQ(message(p).rfind("capacity_factor: ", 0), 0u) << message(p);
  p = Layer("uniform", 1.25);
  p.push_back(Text("skew", "lumpy"));
  EXPECT_EQ(message(p).rfind("skew: ", 0), 0u) << message(p);
}

}  // namespace
}  // namespace shardlab
