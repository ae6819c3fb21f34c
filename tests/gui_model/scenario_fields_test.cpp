// The app's scenario settings read the scenario specs: for every scenario
// and parameter the field shows the spec's default, range and unit; a
// scenario registered by this file alone is in the app's list with its
// fields; settings travel through a worker and come back equal.
#include "app/gui/model/scenario_fields.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <thread>

#include "engine/core/error.h"
#include "engine/io/worker_protocol.h"
#include "engine/scenarios/scenario_record.h"
#include "tests/gui_model/ring_settings.h"
#include "tests/gui_model/poll_session.h"

namespace shardlab::gui {
namespace {

// A scenario only this test binary has, registered as a scenario's own file
// registers it: nothing else in the app names it.
struct TestScenario {
  TestScenario() {
    ScenarioSpec spec;
    spec.name = "gui-test-scenario";
    spec.title = "A scenario of the app's test";
    spec.summary = "registered by tests/gui_model/scenario_fields_test.cpp";
    spec.params = {
        Param("widgets", ParamType::kInteger, "5", "widgets per GPU").Range(1, 9).Unit("widgets"),
        Param("colour", ParamType::kChoice, "blue", "the widgets' colour").Choices({"blue", "green"}),
        Param("budget", ParamType::kSize, "2K", "bytes to spend").Min(1).Unit("bytes"),
        Param("fast", ParamType::kBool, "false", "hurry"),
        TopologyParam(),
    };
    RegisterScenario(spec);
  }
} const test_scenario;

/// The app's name of a spec's scenario: the default kind for the collectives.
std::string AppName(const ScenarioSpec& spec) {
  if (spec.name != kCollectiveSpec) return spec.name;
  return spec.FindParam(kCollectiveKindParam)->default_text;
}

// One test over the spec table: every scenario, every parameter.
TEST(ScenarioFields, EveryFieldShowsItsSpecsDefaultRangeAndUnit) {
  int checked = 0;
  for (const ScenarioSpec& spec : Scenarios()) {
    SCOPED_TRACE(spec.name);
    const ScenarioSettings settings = DefaultSettings(AppName(spec));
    ASSERT_EQ(SpecOf(settings.scenario), &spec);
    // The settings' parameters are the spec's defaults, each one.
    const ScenarioParams params = ParamsOf(settings);
    EXPECT_EQ(params.All(), ScenarioParams(spec).All());
    for (const ParamSpec& p : spec.params) {
      EXPECT_EQ(ParamText(settings, spec, p), p.default_text) << p.name;
      ++checked;
    }
    // The panel's fields: the spec's default, range, unit and help, with no
    // machine to narrow a count of GPUs.
    ScenarioSettings all_shown = settings;
    if (spec.FindParam("schedule") != nullptr) {
      SetParamText(&all_shown, spec, *spec.FindParam("schedule"), "interleaved");  // shows chunks
    }
    for (const PanelField& f : PanelFields(all_shown, 0)) {
      SCOPED_TRACE(f.name);
      const ParamSpec* p = spec.FindParam(f.name);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(f.default_text, p->default_text);
      EXPECT_EQ(f.unit, p->unit);
      EXPECT_EQ(f.choices, p->choices);
      EXPECT_EQ(f.help.rfind(p->help, 0), 0u) << f.help;
      if (p->type == ParamType::kInteger || p->type == ParamType::kNumber) {
        EXPECT_EQ(f.min, p->auto_word.empty() ? p->min : 0);  // 0: the word ("all")
        EXPECT_EQ(f.max, p->max);
      }
      EXPECT_EQ(f.value, ParamText(all_shown, spec, *p));
    }
  }
  EXPECT_GT(checked, 60);
}

TEST(ScenarioFields, EachScenarioKeepsItsValuesAsTypedAndNoDefaults) {
  const ScenarioSpec& pipeline = *FindScenario("pipeline");
  const ParamSpec& stages = *pipeline.FindParam("stages");
  const ParamSpec& width = *pipeline.FindParam("width");
  ScenarioSettings s = DefaultSettings("pipeline");
  EXPECT_TRUE(s.params.empty());  // absent: the spec's default
  const int more = static_cast<int>(std::stoi(stages.default_text) + 1);
  s.SetParam("stages", "0" + std::to_string(more));  // a whole number as the spec reads it
  EXPECT_EQ(s.Param("stages"), std::to_string(more));
  EXPECT_EQ(s.Int("stages"), more);
  EXPECT_EQ(s.params.at("pipeline.stages"), std::to_string(more));
  EXPECT_EQ(ParamsOf(s).Int("stages"), more);
  s.SetParam("stages", stages.default_text);  // back to the default: nothing kept
  EXPECT_EQ(s, DefaultSettings("pipeline"));

  // Another scenario's values wait while it is not chosen, under its own name.
  const std::string wider = std::to_string(std::stoi(width.default_text) * 2);
  s.SetParam("width", wider);
  s.scenario = "zero";
  EXPECT_EQ(s.Param("width"), FindScenario("zero")->FindParam("width")->default_text);
  s.scenario = "pipeline";
  EXPECT_EQ(s.Param("width"), wider);
  EXPECT_EQ(ParamsOf(s).Text("width"), wider);

  // A count with a word for 0 ("all") reads the word back.
  ScenarioSettings ring = DefaultSettings("allreduce");
  const ParamSpec& ranks = *FindScenario(kCollectiveSpec)->FindParam("ranks");
  ASSERT_FALSE(ranks.auto_word.empty());
  ring.SetParam("ranks", "4");
  ring.SetParam("ranks", "0");
  EXPECT_EQ(ring.Param("ranks"), ranks.auto_word);
  EXPECT_EQ(ring.Int("ranks"), 0);
  EXPECT_EQ(ParamsOf(ring).Text("ranks"), ParamsOf(DefaultSettings("allreduce")).Text("ranks"));
}

TEST(ScenarioFields, ACountOfGpusIsBoundedByTheMachine) {
  ScenarioSettings s = DefaultSettings("zero");
  for (const PanelField& f : PanelFields(s, 8)) {
    if (f.name != "ranks") continue;
    EXPECT_EQ(f.max, 8);
    EXPECT_EQ(f.widget, FieldWidget::kSlider);
    EXPECT_EQ(f.format, "%d GPUs");
    return;
  }
  ADD_FAILURE() << "zero has no ranks field";
}

TEST(ScenarioFields, ThisMachineHidesTheFieldsItsModelSets) {
  // On a preset the collective's placement and issue-cost fields are shown;
  // on "This machine" the model of the machine sets them, so they are not.
  const auto names = [](const ScenarioSettings& s) {
    std::set<std::string> out;
    for (const PanelField& f : PanelFields(s, 8)) out.insert(f.name);
    return out;
  };
  ScenarioSettings s = DefaultSettings("allreduce");
  const std::set<std::string> preset = names(s);
  s.topology = "this";
  const std::set<std::string> this_machine = names(s);
  for (const char* hidden : {"on_gpus", "issue_us", "graph_op_us"}) {
    EXPECT_EQ(preset.count(hidden), 1u) << hidden;
    EXPECT_EQ(this_machine.count(hidden), 0u) << hidden;
  }
  EXPECT_EQ(preset.size(), this_machine.size() + 3);
}

TEST(ScenarioFields, ZeroSaysWhatItMeansWhereTheSpecSaysSo) {
  const ScenarioSettings s = DefaultSettings("allreduce");
  int found = 0;
  for (const PanelField& f : PanelFields(s, 8)) {
    if (f.name == "ranks") {
      EXPECT_EQ(f.zero_text, "every GPU of the topology");
      ++found;
    }
    if (f.name == "root") {
      EXPECT_EQ(f.zero_text, "");  // its help gives 0 no meaning
    }
  }
  EXPECT_EQ(found, 1);
}

TEST(ScenarioFields, TheTestsOwnScenarioIsInTheAppsListWithItsFields) {
  const std::vector<ScenarioChoice> choices = ScenarioChoices();
  const auto mine = std::find_if(choices.begin(), choices.end(),
                                 [](const ScenarioChoice& c) { return c.name == "gui-test-scenario"; });
  ASSERT_NE(mine, choices.end());
  EXPECT_EQ(mine->title, "A scenario of the app's test");
  EXPECT_FALSE(mine->runs_in_app);  // listed and checked, run by the CLI
  // The built-ins are there too, the collectives by kind, each name once.
  std::set<std::string> names;
  for (const ScenarioChoice& c : choices) EXPECT_TRUE(names.insert(c.name).second) << c.name;
  for (const char* name : {"allreduce", "alltoall", "pipeline", "tp", "zero", "3d", "moe"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
  EXPECT_EQ(names.count("collective"), 0u);

  // Its settings: the spec's defaults, edited and checked by the spec.
  ScenarioSettings s = DefaultSettings("gui-test-scenario");
  EXPECT_EQ(s.scenario, "gui-test-scenario");
  const std::vector<PanelField> fields = PanelFields(s, 8);
  ASSERT_EQ(fields.size(), 4u);  // topology is the panel's own field
  EXPECT_EQ(fields[0].name, "widgets");
  EXPECT_EQ(fields[0].widget, FieldWidget::kSlider);
  EXPECT_EQ(fields[0].format, "%d widgets");
  EXPECT_EQ(fields[1].widget, FieldWidget::kChoice);
  EXPECT_EQ(fields[2].widget, FieldWidget::kText);
  EXPECT_EQ(fields[3].widget, FieldWidget::kCheckbox);
  const ScenarioSpec& spec = *FindScenario("gui-test-scenario");
  SetParamText(&s, spec, *spec.FindParam("colour"), "green");
  EXPECT_EQ(ParamsOf(s).Text("colour"), "green");
  SetParamText(&s, spec, *spec.FindParam("widgets"), "10");
  try {
    ParamsOf(s);
    ADD_FAILURE() << "widgets = 10 passed the spec's range 1 .. 9";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("widgets: ", 0), 0u) << e.what();
  }
  // The app lists it but does not run it, and says so.
  Session session;
  EXPECT_NE(session.Check(DefaultSettings("gui-test-scenario")).find("does not run"), std::string::npos);
}

TEST(ScenarioFields, MessagesNameTheFlag) {
  const ScenarioSettings zero = DefaultSettings("zero");
  EXPECT_EQ(AsFlagMessage(zero, "zero_stage: must be at most 3 (got 4)"), "--zero-stage: must be at most 3 (got 4)");
  EXPECT_EQ(AsFlagMessage(zero, "stage: 4 is no stage"), "--zero-stage: 4 is no stage");  // an old name
  EXPECT_EQ(AsFlagMessage(zero, "ranks: 16 ranks but"), "--ranks: 16 ranks but");
  EXPECT_EQ(AsFlagMessage(DefaultSettings("allreduce"), "ring order: a ring"), "--ring-order: a ring");
  EXPECT_EQ(AsFlagMessage(DefaultSettings("3d"), "grid: 16 GPUs"), "--dp/--pp/--tp: 16 GPUs");
  EXPECT_EQ(AsFlagMessage(zero, "something else"), "something else");
}

using test::PollUntilDone;

// A worker run's settings go out as the spec's parameters and come back in
// its scenario record equal, the non-default ones included.
TEST(ScenarioFields, SettingsSentToAWorkerComeBackEqual) {
  Session session;
  session.SetWorkerProgram(SHARDLAB_CLI_PATH);
  ScenarioSettings s = test::RingAllReduce4x1K();
  s.in_worker = true;
  s.SetParam("size", "2K");
  s.scenario = "reducescatter";
  s.params["collective.dtype"] = "bf16";
  ASSERT_TRUE(session.Start(s)) << session.error();
  ASSERT_TRUE(PollUntilDone(session));
  ASSERT_EQ(session.state(), SessionState::kDone) << session.error();
  EXPECT_EQ(session.worker_echo(), session.worker_sent());
  const ScenarioParams back = ParamsFromScenarioRecord(session.worker_echo());
  EXPECT_EQ(back.All(), ParamsOf(s).All());
  EXPECT_EQ(back.Text("size"), "2K");
  EXPECT_EQ(back.Text("kind"), "reducescatter");
  EXPECT_EQ(back.Text("ring_order"), "rank");
  EXPECT_EQ(back.Text("dtype"), "bf16");
  EXPECT_EQ(back.Text("ranks"), "4");
}

}  // namespace
}  // namespace shardlab::gui
