#include "app/gui/model/replay_clock.h"

#include <gtest/gtest.h>

namespace shardlab::gui {
namespace {

ReplayClock ThreeSteps() {
  ReplayClock clock;
  clock.SetSteps({100, 250, 400}, 400);
  return clock;
}

TEST(ReplayClock, StepMovesToTheEndOfEachStepInTurn) {
  ReplayClock clock = ThreeSteps();
  EXPECT_EQ(clock.num_steps(), 3);
  EXPECT_EQ(clock.steps_shown(), 0);
  EXPECT_TRUE(clock.Step());
  EXPECT_EQ(clock.cursor_ns(), 100);
  EXPECT_EQ(clock.steps_shown(), 1);
  EXPECT_TRUE(clock.Step());
  EXPECT_EQ(clock.cursor_ns(), 250);
  EXPECT_TRUE(clock.Step());
  EXPECT_EQ(clock.cursor_ns(), 400);
  EXPECT_EQ(clock.steps_shown(), 3);
  EXPECT_TRUE(clock.at_end());
  EXPECT_FALSE(clock.Step());
}

TEST(ReplayClock, StepFromInsideAStepGoesToThatStepsEnd) {
  ReplayClock clock = ThreeSteps();
  clock.SeekNs(180);
  EXPECT_EQ(clock.steps_shown(), 1);
  EXPECT_TRUE(clock.Step());
  EXPECT_EQ(clock.cursor_ns(), 250);
}

TEST(ReplayClock, StepGoesToTheRunsEndAfterTheLastStep) {
  ReplayClock clock;
  clock.SetSteps({100}, 130);  // the last events end after the last full step
  clock.SeekNs(100);
  EXPECT_TRUE(clock.Step());
  EXPECT_EQ(clock.cursor_ns(), 130);
  EXPECT_FALSE(clock.Step());
}

TEST(ReplayClock, StepBackReturnsToThePreviousStepEndThenZero) {
  ReplayClock clock = ThreeSteps();
  clock.SeekNs(300);
  EXPECT_TRUE(clock.StepBack());
  EXPECT_EQ(clock.cursor_ns(), 250);
  EXPECT_TRUE(clock.StepBack());
  EXPECT_EQ(clock.cursor_ns(), 100);
  EXPECT_TRUE(clock.StepBack());
  EXPECT_EQ(clock.cursor_ns(), 0);
  EXPECT_FALSE(clock.StepBack());
}

TEST(ReplayClock, PlayAdvancesAtTheSpeedAndStopsAtTheEnd) {
  ReplayClock clock = ThreeSteps();
  clock.set_speed(100);  // 100 run-ns per wall second
  clock.Advance(1.0);
  EXPECT_EQ(clock.cursor_ns(), 0);  // paused: no movement
  clock.Play();
  EXPECT_TRUE(clock.playing());
  clock.Advance(1.5);
  EXPECT_DOUBLE_EQ(clock.cursor_ns(), 150);
  clock.Advance(10);
  EXPECT_EQ(clock.cursor_ns(), 400);
  EXPECT_FALSE(clock.playing());
  EXPECT_TRUE(clock.at_end());
  clock.Play();  // at the end: plays again from the start
  EXPECT_TRUE(clock.playing());
  EXPECT_EQ(clock.cursor_ns(), 0);
}

TEST(ReplayClock, StepPausesAPlayingClock) {
  ReplayClock clock = ThreeSteps();
  clock.Play();
  clock.Step();
  EXPECT_FALSE(clock.playing());
}

TEST(ReplayClock, SeekClampsAndResetReturnsToZero) {
  ReplayClock clock = ThreeSteps();
  clock.SeekNs(-5);
  EXPECT_EQ(clock.cursor_ns(), 0);
  clock.SeekNs(1e9);
  EXPECT_EQ(clock.cursor_ns(), 400);
  clock.Reset();
  EXPECT_EQ(clock.cursor_ns(), 0);
  EXPECT_FALSE(clock.playing());
}

TEST(ReplayClock, SpeedForDurationPlaysTheRunInThatTime) {
  EXPECT_DOUBLE_EQ(ReplayClock::SpeedForDuration(400'000, 4.0), 100'000);
  EXPECT_GT(ReplayClock::SpeedForDuration(0, 4.0), 0);
  EXPECT_GT(ReplayClock::SpeedForDuration(400, 0), 0);
  ReplayClock clock = ThreeSteps();
  clock.set_speed(ReplayClock::SpeedForDuration(clock.run_end_ns(), 2.0));
  clock.Play();
  clock.Advance(1.0);
  EXPECT_DOUBLE_EQ(clock.cursor_ns(), 200);
  clock.set_speed(-1);  // ignored
  EXPECT_DOUBLE_EQ(clock.speed(), 200);
}

TEST(ReplayClock, NewStepsKeepTheCursorInsideTheRun) {
  ReplayClock clock = ThreeSteps();
  clock.SeekNs(300);
  clock.SetSteps({100, 250, 400, 600}, 600);  // a live run grew
  EXPECT_EQ(clock.cursor_ns(), 300);
  clock.SetSteps({100}, 120);  // a new, shorter run
  EXPECT_EQ(clock.cursor_ns(), 120);
}

}  // namespace
}  // namespace shardlab::gui
