// The app's launch flags for scenario parameters come from the specs:
// in any order, every parameter of every scenario, the CLI's spellings and
// old-name notices. In process (ParseAppFlags); no window opens.
#include "app/gui/app/app_flags.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "app/gui/model/scenario_fields.h"
#include "engine/core/error.h"

namespace shardlab::gui {
namespace {

AppFlags Parse(std::vector<std::string> words) { return ParseAppFlags(words); }

TEST(AppFlagsFromSpecs, AFlagMeansTheSameBeforeOrAfterTheScenario) {
  const AppFlags before = Parse({"--tp", "4", "--scenario", "tp"});
  const AppFlags after = Parse({"--scenario", "tp", "--tp", "4"});
  EXPECT_EQ(before.settings, after.settings);
  EXPECT_EQ(after.settings.Int("tp"), 4);
  EXPECT_EQ(after.settings.scenario, "tp");
  // The same flag is the 3D grid's tensor-parallel degree there.
  const AppFlags three_d = Parse({"--tp", "4", "--dp", "1", "--scenario", "3d"});
  EXPECT_EQ(three_d.settings.Int("tp"), 4);
  EXPECT_EQ(three_d.settings, Parse({"--scenario", "3d", "--dp", "1", "--tp", "4"}).settings);
  // Without flags: the spec's defaults.
  EXPECT_EQ(Parse({"--scenario", "zero"}).settings, DefaultSettings("zero"));
  EXPECT_EQ(Parse({}).settings, DefaultSettings("allreduce"));
}

// Warm-up and timed runs, as the CLI's -w/-n: any scenario, in a worker
// too; a bad count is one line, as the CLI says it.
TEST(AppFlagsFromSpecs, WarmUpAndItersAreFlagsOfEveryScenario) {
  for (const std::string scenario : {"allreduce", "pipeline", "tp", "zero", "3d", "moe"}) {
    const AppFlags flags = Parse({"--warmup", "2", "--scenario", scenario, "--iters", "5"});
    EXPECT_EQ(flags.settings.warmup, 2) << scenario;
    EXPECT_EQ(flags.settings.iters, 5) << scenario;
    EXPECT_EQ(flags.settings.scenario, scenario);
  }
  const AppFlags plain = Parse({"--scenario", "moe"});
  EXPECT_EQ(plain.settings.warmup, -1);  // the backend's default
  EXPECT_EQ(plain.settings.iters, 1);
  const AppFlags worker = Parse({"--worker", "--iters", "3", "--warmup", "1"});
  EXPECT_TRUE(worker.settings.in_worker);
  EXPECT_EQ(worker.settings.iters, 3);
  EXPECT_EQ(worker.settings.warmup, 1);
  for (const auto& [flag, value, says] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--warmup", "-1", "--warmup: must be at least 0 (got -1)"},
           {"--iters", "0", "--iters: must be at least 1 (got 0)"}}) {
    try {
      Parse({flag, value});
      ADD_FAILURE() << flag << " " << value << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), says);
    }
  }
}

/// A valid value of `p` other than its default, or "".
std::string AnotherValue(const ParamSpec& p) {
  std::vector<std::string> candidates;
  switch (p.type) {
    case ParamType::kInteger: {
      const long long d = p.default_text == p.auto_word ? 1 : std::stoll(p.default_text);
      candidates = {std::to_string(d + 1), std::to_string(d - 1)};
      break;
    }
    case ParamType::kNumber: candidates = {"0.5", "2"}; break;
    case ParamType::kSize: candidates = {"3K", "5M"}; break;
    case ParamType::kCount: candidates = {"2M"}; break;
    case ParamType::kChoice: candidates = p.choices; break;
    case ParamType::kText: candidates = {"rank", "0,1"}; break;
    case ParamType::kTopology: candidates = {"dgx1-v100"}; break;
    case ParamType::kBool: candidates = {p.default_text == "true" ? "false" : "true"}; break;
  }
  for (const std::string& c : candidates) {
    if (c != p.default_text && CheckParamValue(p, c).empty()) return c;
  }
  return "";
}

// Every parameter of every scenario is a flag of the app, spelled as the
// CLI spells it, and sets that parameter (whatever the flag's position).
TEST(AppFlagsFromSpecs, EveryParameterOfEveryScenarioIsAFlag) {
  const std::string help = AppHelpText();
  int set = 0;
  for (const ScenarioSpec& spec : Scenarios()) {
    const std::string app_name =
        spec.name == kCollectiveSpec ? spec.FindParam(kCollectiveKindParam)->default_text : spec.name;
    for (const ParamSpec& p : spec.params) {
      if (spec.name == kCollectiveSpec && p.name == kCollectiveKindParam) continue;  // --scenario
      SCOPED_TRACE(spec.name + "." + p.name);
      const bool negated = p.type == ParamType::kBool && p.default_text == "true";
      const std::string flag = negated ? "--no-" + p.Flag().substr(2) : p.Flag();
      EXPECT_NE(help.find(flag + (p.type == ParamType::kBool ? "" : " ")), std::string::npos) << flag;
      const std::string value = AnotherValue(p);
      if (value.empty()) continue;
      std::vector<std::string> words = {flag};
      if (p.type != ParamType::kBool) words.push_back(value);
      words.insert(words.end(), {"--scenario", app_name});
      AppFlags flags;
      try {
        flags = Parse(words);
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
        continue;
      }
      EXPECT_EQ(ParamText(flags.settings, spec, p), CanonicalParamValue(p, value));
      ++set;
    }
  }
  EXPECT_GT(set, 50);
}

TEST(AppFlagsFromSpecs, OldSpellingsWorkWithTheCliNotice) {
  const AppFlags flags = Parse({"--stage", "1", "--scenario", "zero"});
  EXPECT_EQ(flags.settings.Int("zero_stage"), 1);
  ASSERT_EQ(flags.notices.size(), 1u);
  EXPECT_EQ(flags.notices[0], "shardlab: --stage is now --zero-stage; the old spelling goes in the next release");
  const AppFlags width = Parse({"--scenario", "pipeline", "--model-width", "64"});
  EXPECT_EQ(width.settings.Int("width"), 64);
  ASSERT_EQ(width.notices.size(), 1u);
  EXPECT_NE(width.notices[0].find("--model-width is now --width"), std::string::npos);
  EXPECT_TRUE(Parse({"--scenario", "zero", "--zero-stage", "1"}).notices.empty());
}

TEST(AppFlagsFromSpecs, AnotherScenariosParameterIsAnError) {
  try {
    Parse({"--experts", "4"});
    ADD_FAILURE() << "--experts passed for all-reduce";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--experts: not a parameter of the collective allreduce"),
              std::string::npos)
        << e.what();
  }
  try {
    Parse({"--width", "1280"});  // the window's width was --width once
    ADD_FAILURE() << "--width passed for all-reduce";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--window-width"), std::string::npos) << e.what();
  }
  EXPECT_EQ(Parse({"--window-width", "1280"}).width_px, 1280);
}

// What a backend declares decides the backend flags (BackendTraits): one
// only a worker runs is refused in the app, and the mpi backend's own flags
// are checked by it and need its worker.
TEST(AppFlagsFromSpecs, BackendFlagsFollowWhatTheBackendDeclares) {
  auto message = [](std::vector<std::string> words) {
    try {
      Parse(std::move(words));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message({"--backend", "sim"}), "(accepted)");
  EXPECT_EQ(message({"--backend", "cuda", "--worker"}), "(accepted)");
  EXPECT_EQ(message({"--backend", "mpi", "--worker", "--mpi-timeout", "5s"}), "(accepted)");
  EXPECT_EQ(message({"--backend", "quantum"}).rfind("--backend: unknown backend 'quantum' (available: sim", 0), 0u);
  // In this build mpi may be one the app links; it still runs only in a worker.
  EXPECT_EQ(message({"--backend", "mpi"}), "--backend: backend 'mpi' runs only in a worker process here (add --worker)");
  EXPECT_EQ(message({"--backend", "cuda", "--worker", "--mpi-timeout", "5s"}),
            "--mpi-timeout: needs --backend mpi --worker");
  EXPECT_EQ(message({"--backend", "mpi", "--worker", "--mpi-timeout", "soon"}).rfind("--mpi-timeout: ", 0), 0u);
}

}  // namespace
}  // namespace shardlab::gui
