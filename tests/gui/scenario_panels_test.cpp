// The scenario views hang off the specs: every panel a spec names has a
// view in the app's table, every view there is named by one spec, no spec
// has two views in one slot, and a run picks its views by its scenario's
// name (Session::run_scenario), so a new scenario brings its panels by
// listing their names. Pure: nothing is drawn, no display is needed.
#include "app/gui/views/scenario_panels.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "app/gui/model/scenario_fields.h"
#include "app/gui/model/session.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab::gui {
namespace {

TEST(ScenarioPanels, EveryNameASpecListsHasAViewAndEveryViewASpec) {
  std::map<std::string, int> named;  // panel -> specs naming it
  for (const ScenarioSpec& spec : Scenarios()) {
    if (spec.name.rfind("test-", 0) == 0) continue;  // a test's own (below)
    std::set<PanelSlot> slots;
    std::set<std::string> widget_params;
    for (const std::string& name : spec.panels) {
      SCOPED_TRACE(spec.name + " lists " + name);
      if (const ScenarioFieldWidget* widget = FindScenarioFieldWidget(name)) {
        // A field's own widget: for a parameter of this spec, one each.
        const ParamSpec* param = spec.FindParam(widget->param);
        ASSERT_NE(param, nullptr) << "a widget for a parameter the spec lacks";
        EXPECT_EQ(param->name, widget->param) << "a widget for an old name";
        EXPECT_TRUE(widget_params.insert(widget->param).second) << "a second widget for one parameter";
        EXPECT_NE(widget->draw, nullptr);
        ++named[name];
        continue;
      }
      const ScenarioPanel* panel = FindScenarioPanel(name);
      ASSERT_NE(panel, nullptr) << "no view or field widget of that name in scenario_panels.cpp";
      EXPECT_TRUE(slots.insert(panel->slot).second) << "a second view in one slot";
      EXPECT_NE(panel->draw, nullptr);
      ++named[name];
    }
  }
  for (const ScenarioPanel& panel : ScenarioPanelTable()) {
    SCOPED_TRACE(panel.name);
    EXPECT_EQ(named[panel.name], 1) << "a view no spec (or two specs) names";
    const bool shared = panel.slot == PanelSlot::kMetrics || panel.slot == PanelSlot::kBeside;
    EXPECT_EQ(panel.share > 0 && panel.share <= 1, shared) << "a width share only where a panel takes one";
    EXPECT_EQ(panel.title != nullptr, panel.slot == PanelSlot::kBeside) << "a window title only for a panel of its own";
    if (panel.title != nullptr) EXPECT_GT(std::string(panel.title()).size(), 0u);
  }
  for (const ScenarioFieldWidget& widget : ScenarioFieldWidgetTable()) {
    EXPECT_EQ(named[widget.name], 1) << widget.name << ": a field widget no spec (or two specs) names";
    EXPECT_EQ(FindScenarioPanel(widget.name), nullptr) << widget.name << ": a view and a widget of one name";
  }
}

TEST(ScenarioPanels, AFieldFindsTheWidgetItsSpecNames) {
  EXPECT_EQ(std::string(FieldWidgetOf("zero", "zero_stage")->name), "zero_stage_field");
  EXPECT_EQ(std::string(FieldWidgetOf("collective", "algo")->name), "collective_algo_field");
  // The same parameter name in a spec that names no widget for it: drawn from its type.
  EXPECT_EQ(FieldWidgetOf("3d", "zero_stage"), nullptr);
  EXPECT_EQ(FieldWidgetOf("zero", "ranks"), nullptr);
  EXPECT_EQ(FieldWidgetOf("no-such-scenario", "algo"), nullptr);
  ScenarioSpec spec;
  spec.name = "test-field-widget";
  spec.title = "Test field widget";
  spec.params = {Param("schedule", ParamType::kChoice, "1f1b", "a schedule").Choices({"gpipe", "1f1b"})};
  spec.panels = {"pipeline_schedule_field"};
  RegisterScenario(spec);
  EXPECT_EQ(FieldWidgetOf("test-field-widget", "schedule"), FindScenarioFieldWidget("pipeline_schedule_field"));
}

TEST(ScenarioPanels, EachScenarioFindsItsOwnPanels) {
  EXPECT_EQ(std::string(PanelOf("tp", PanelSlot::kBeside)->name), "tp_weights");
  EXPECT_EQ(std::string(PanelOf("zero", PanelSlot::kBeside)->name), "zero_memory");
  EXPECT_EQ(std::string(PanelOf("pipeline", PanelSlot::kMetrics)->name), "pipeline_metrics");
  EXPECT_EQ(PanelOf("pipeline", PanelSlot::kBeside), nullptr);
  // A collective and an opened trace (no scenario) keep the common views.
  for (PanelSlot slot : {PanelSlot::kMetrics, PanelSlot::kBeside, PanelSlot::kLegend, PanelSlot::kSummary,
                         PanelSlot::kHowToRead}) {
    EXPECT_EQ(PanelOf("collective", slot), nullptr);
    EXPECT_EQ(PanelOf("", slot), nullptr);
    EXPECT_EQ(PanelOf("no-such-scenario", slot), nullptr);
  }
}

TEST(ScenarioPanels, ANewScenarioBringsItsPanelsByNamingThem) {
  ScenarioSpec spec;
  spec.name = "test-panels";
  spec.title = "Test panels";
  spec.summary = "a scenario of this test only";
  spec.panels = {"zero_memory", "tp_legend"};
  RegisterScenario(spec);
  EXPECT_EQ(PanelOf("test-panels", PanelSlot::kBeside), FindScenarioPanel("zero_memory"));
  EXPECT_EQ(PanelOf("test-panels", PanelSlot::kLegend), FindScenarioPanel("tp_legend"));
  EXPECT_EQ(PanelOf("test-panels", PanelSlot::kMetrics), nullptr);
}

TEST(ScenarioPanels, ARunPicksItsViewsByItsScenarioName) {
  Session session;
  EXPECT_EQ(session.run_scenario(), "");
  ScenarioSettings settings;
  settings.scenario = "pipeline";
  ApplySpecDefaults(*SpecOf("pipeline"), &settings);
  ASSERT_TRUE(session.Start(settings)) << session.error();
  EXPECT_EQ(session.run_scenario(), "pipeline");
  ScenarioSettings ring;  // a collective kind: the collective spec
  ASSERT_TRUE(session.Start(ring)) << session.error();
  EXPECT_EQ(session.run_scenario(), "collective");
  session.Cancel();
}

}  // namespace
}  // namespace shardlab::gui
