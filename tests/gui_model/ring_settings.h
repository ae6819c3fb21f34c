// The scenario most session tests start: ring all-reduce of 1 KiB over 4
// GPUs of a DGX A100, ring position p on rank p (so ring chunk k is buffer
// chunk k). Tests change the backend, worker mode or size from here.
#pragma once

#include "app/gui/model/session.h"

namespace shardlab::gui::test {

inline ScenarioSettings RingAllReduce4x1K() {
  ScenarioSettings s;
  s.scenario = "allreduce";
  s.SetParam("algo", "ring");
  s.SetParam("ranks", "4");
  s.SetParam("size", "1K");
  s.topology = "dgx-a100";
  s.SetParam("ring_order", "rank");
  return s;
}

}  // namespace shardlab::gui::test
