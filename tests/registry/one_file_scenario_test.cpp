// Issue 38's proof that a scenario is one object: the scenario below is
// defined in this file and nowhere else, and every front end runs it with
// nothing of its own added. `shardlab-cli run` lists it, takes its flags
// from its spec and gives --json, --plan and --trace; the app lists it with
// its fields, checks and runs it and shows its summary; a lab names it,
// and the grader answers its questions from its run. The last test checks
// that no other file of the project names it.
//
// The scenario: a ring all-reduce over `ranks` GPUs of a uniform ring of
// `gbps` links with `hop_us` per hop. Its time has a closed form the tests
// hold the runs against: 2(n-1)(a + M/(nB)) on a uniform ring, which the
// simulator adds nothing to.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/gui/model/lab_settings.h"
#include "app/gui/model/scenario_fields.h"
#include "app/gui/model/session.h"
#include "engine/algorithms/collective.h"
#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/lab/lab_grader.h"
#include "engine/lab/lab_loader.h"
#include "engine/lab/lab_scenario.h"
#include "engine/run/metrics.h"
#include "engine/scenarios/scenario.h"
#include "engine/scenarios/scenario_spec.h"
#include "engine/topology/presets.h"
#include "tests/common/in_process.h"
#include "tests/common/run_program.h"
#include "tests/gui_model/poll_session.h"

namespace shardlab {
namespace {

using test_util::InProcess;

constexpr const char* kName = "one-file-ring";

/// 2(n-1)(a + M/(nB)) in microseconds: M bytes per rank, B GB/s (= bytes
/// per ns), a microseconds per hop.
double FormulaUs(double n, double bytes, double gbps, double hop_us) {
  return 2 * (n - 1) * (hop_us + bytes / n / gbps / 1e3);
}

/// The scenario's own state, for its summary: the ring's links.
struct RingLinks {
  double gbps = 0;
  double hop_us = 0;
};

const bool kRegistered = [] {
  ScenarioSpec s;
  s.name = kName;
  s.title = "One-file ring";
  s.summary = "a ring all-reduce that only the registry proof test defines";
  s.params = {Param("ranks", ParamType::kInteger, "4", "GPUs in the ring").Range(2, 16).Unit("GPUs"),
              Param("size", ParamType::kSize, "1M", "bytes per rank").Range(4, 1 << 30).Unit("bytes"),
              Param("gbps", ParamType::kNumber, "100", "each link's bandwidth").Range(1, 1000).Unit("GB/s"),
              Param("hop_us", ParamType::kNumber, "1", "each hop's latency").Range(0, 100).Unit("us")};
  s.measured = {{"time_us", "us", "the run's span"},
                {"formula_us", "us", "2(n-1)(a + M/(nB))"},
                {"bytes_sent_per_rank", "bytes", "what one GPU sends"}};
  // What Prepare refuses, said without building the plan (the app checks as you type).
  s.check = [](const ScenarioParams& p) {
    if (p.Size("size") % (4 * p.Int("ranks")) != 0)
      throw Error("size: must be a multiple of 4 x ranks bytes", ErrorKind::kInvalidInput);
  };
  s.prepare = [check = s.check](const ScenarioParams& p, const Topology*) {
    check(p);
    auto out = std::make_unique<Prepared>();
    const int n = static_cast<int>(p.Int("ranks"));
    out->topology = MakeUniformRing(n, p.Number("gbps"), static_cast<TimeNs>(std::llround(p.Number("hop_us") * 1e3)));
    CollectiveParams c;
    c.ranks = n;
    c.count = p.Size("size") / 4;
    out->plan = BuildCollective(c);
    out->title = std::to_string(n) + " GPUs";
    out->detail = std::make_shared<RingLinks>(RingLinks{p.Number("gbps"), p.Number("hop_us")});
    return out;
  };
  s.summarize = [](const Prepared& prepared, const FinishedRun& run, Summary& out) {
    const double n = run.plan.num_ranks;
    const double bytes = static_cast<double>(run.plan.buffers.at(0).count) * 4;
    const RingLinks& links = prepared.Detail<RingLinks>();
    out.values["time_us"] = RunSpanNs(run.events) / 1e3;
    out.values["formula_us"] = FormulaUs(n, bytes, links.gbps, links.hop_us);
    out.values["bytes_sent_per_rank"] = 2 * (n - 1) / n * bytes;
    out.line = "one-file ring of " + std::to_string(run.plan.num_ranks) + " GPUs";
    out.verdict = NotChecked("the proof's scenario checks no data");
  };
  RegisterScenario(std::move(s));
  return true;
}();

TEST(OneFileScenario, TheCliListsItAndRunsItWithJsonPlanAndTrace) {
  ASSERT_TRUE(kRegistered);
  EXPECT_NE(InProcess(cli::RunMain, {"--help"}).find(kName), std::string::npos);

  const std::string help = InProcess(cli::RunMain, {kName, "--help"});
  for (const char* flag : {"--ranks", "--size", "--gbps", "--hop-us", "--json", "--trace", "--plan"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag << "\n" << help;
  EXPECT_NE(help.find("(default: 4; GPUs; 2 .. 16)"), std::string::npos) << help;

  const std::string text = InProcess(cli::RunMain, {kName, "--ranks", "8", "--size", "64K"});
  EXPECT_NE(text.find("One-file ring: 8 GPUs"), std::string::npos) << text;
  EXPECT_NE(text.find("time_us = "), std::string::npos) << text;

  const std::string json = InProcess(cli::RunMain, {kName, "--ranks", "8", "--gbps", "50", "--json"});
  const JsonValue v = ParseJson(json, "run --json");
  EXPECT_EQ(v.Find("scenario")->string, kName);
  const double time_us = v.Find("values")->Find("time_us")->number;
  EXPECT_NEAR(time_us, FormulaUs(8, 1 << 20, 50, 1), 1e-3 * time_us);
  EXPECT_EQ(v.Find("units")->Find("bytes_sent_per_rank")->string, "bytes");

  EXPECT_NE(InProcess(cli::RunMain, {kName, "--ranks", "2", "--plan"}).find("send"), std::string::npos);

  test_util::TempDir dir;
  const std::string trace = (dir.path() / "ring.json").string();
  InProcess(cli::RunMain, {kName, "--trace", trace});
  std::ifstream in(trace);
  std::stringstream whole;
  whole << in.rdbuf();
  EXPECT_GE(ParseJson(whole.str(), trace).Find("traceEvents")->items.size(), 12u);  // 2(n-1) sends per rank

  // Its spec's range and its own check both refuse, as bad input.
  EXPECT_THROW(InProcess(cli::RunMain, {kName, "--ranks", "17"}), Error);
  EXPECT_THROW(InProcess(cli::RunMain, {kName, "--size", "1000"}), Error);  // not a multiple of 16
}

TEST(OneFileScenario, TheAppListsItsFieldsChecksAndRunsIt) {
  using namespace gui;
  bool listed = false;
  for (const ScenarioChoice& c : ScenarioChoices()) {
    if (c.name != kName) continue;
    listed = true;
    EXPECT_EQ(c.title, "One-file ring");
    EXPECT_TRUE(c.runs_in_app);
  }
  EXPECT_TRUE(listed);

  ScenarioSettings settings = DefaultSettings(kName);
  settings.topology = "dgx-a100";  // the scenario builds its own ring; the app's field is ignored
  const std::vector<PanelField> fields = PanelFields(settings, 8);
  std::vector<std::string> names;
  for (const PanelField& f : fields) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ranks", "size", "gbps", "hop_us"}));
  EXPECT_EQ(fields[0].value, "4");
  EXPECT_EQ(fields[0].max, 8);  // a count of GPUs, bounded by the machine's
  EXPECT_EQ(fields[2].unit, "GB/s");

  Session session;
  const ScenarioSpec& spec = *FindScenario(kName);
  SetParamText(&settings, spec, *spec.FindParam("size"), "1000");
  EXPECT_NE(session.Check(settings).find("size: must be a multiple"), std::string::npos);
  SetParamText(&settings, spec, *spec.FindParam("size"), "192K");
  SetParamText(&settings, spec, *spec.FindParam("ranks"), "6");
  EXPECT_EQ(session.Check(settings), "");

  ASSERT_TRUE(session.Start(settings)) << session.error();
  ASSERT_TRUE(test::PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_EQ(session.run_scenario(), kName);
  const Summary& summary = session.summary();
  EXPECT_NEAR(summary.values.at("time_us"), FormulaUs(6, 192 << 10, 100, 1), 1e-3 * summary.values.at("time_us"));
  EXPECT_EQ(summary.line, "one-file ring of 6 GPUs");
}

constexpr const char* kLab = R"LAB(format = 1
title = "A lab on the one-file ring"
summary = "the registry proof's lab"
minutes = 5
goals = ["time a ring"]

[[step]]
id = "ring"
title = "Time the ring"
text = "Run it."
scenario = "one-file-ring"
locked = ["ranks"]

[step.params]
ranks = 8
size = "8M"
gbps = 25

[[step.question]]
id = "sent"
prompt = "How many bytes does each GPU send?"
expected = "2*(ranks-1)/ranks*size"
units = "bytes"
tolerance = 0

[[step.question]]
id = "time"
prompt = "How long does it take?"
measured = "time_us"
units = "us"
tolerance = 0.01
)LAB";

TEST(OneFileScenario, ALabNamesItAndGradesFromItsRun) {
  ASSERT_NE(FindLabScenario(kName), nullptr);
  EXPECT_NE(LabScenarioNames().find(kName), std::string::npos);

  const LabLoadResult loaded = ReadLabText(kLab, "labs/97-one-file/lab.toml");
  ASSERT_TRUE(loaded.ok()) << loaded.ProblemsText();
  const LabStep& step = loaded.lab.steps.at(0);
  const LabStepValues values = RunLabStep(step);
  ASSERT_TRUE(values.ran);
  const double formula = FormulaUs(8, 8 << 20, 25, 1);
  EXPECT_NEAR(values.values.at("time_us"), formula, 1e-3 * formula);
  EXPECT_EQ(values.values.at("ranks"), 8);

  LabAnswer right{.question_id = "time", .is_number = true, .number = formula};
  LabAnswer wrong{.question_id = "time", .is_number = true, .number = formula * 2};
  EXPECT_EQ(CheckLabAnswer(step, step.questions.at(1), values.values, &right).verdict, LabVerdict::kCorrect);
  EXPECT_EQ(CheckLabAnswer(step, step.questions.at(1), values.values, &wrong).verdict, LabVerdict::kWrong);
  LabAnswer sent{.question_id = "sent", .is_number = true, .number = 7.0 / 4 * (8 << 20)};
  EXPECT_EQ(CheckLabAnswer(step, step.questions.at(0), values.values, &sent).verdict, LabVerdict::kCorrect);

  // The app's lab panel opens the step as the scenario's settings.
  const gui::LabSettings app = gui::LabStepSettings(kName, step.params, gui::ScenarioSettings());
  EXPECT_TRUE(app.runs_in_app);
  EXPECT_EQ(app.settings.scenario, kName);
  const ScenarioSpec& spec = *FindScenario(kName);
  EXPECT_EQ(gui::ParamText(app.settings, spec, *spec.FindParam("gbps")), "25");

  // A bad value is the lab's problem, with its line.
  std::string bad = kLab;
  bad.replace(bad.find("ranks = 8"), 9, "ranks = 99");
  const LabLoadResult refused = ReadLabText(bad, "labs/97-one-file/lab.toml");
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.ProblemsText().find("ranks"), std::string::npos) << refused.ProblemsText();
}

TEST(OneFileScenario, NoOtherFileOfTheProjectNamesIt) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(SHARDLAB_TEST_DATA_DIR).parent_path().parent_path();
  const fs::path self = fs::path(__FILE__).filename();
  int read = 0;
  for (const char* dir : {"app", "engine", "labs", "docs", "tests", "scripts"}) {
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(root / dir)) {
      if (!e.is_regular_file() || e.path().filename() == self || e.file_size() > (1 << 20)) continue;
      std::ifstream in(e.path());
      std::stringstream text;
      text << in.rdbuf();
      ++read;
      EXPECT_EQ(text.str().find(kName), std::string::npos) << e.path() << " names the scenario";
    }
  }
  EXPECT_GT(read, 100);  // it read the project, not an empty folder
}

}  // namespace
}  // namespace shardlab
