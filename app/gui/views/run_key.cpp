#include "app/gui/views/run_key.h"

#include <functional>
#include <string>

#include <imgui.h>

namespace shardlab::gui {
namespace {

std::size_t Combine(std::size_t seed, std::size_t value) {
  // The boost-style mix: cheap, and good enough to tell runs apart.
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

}  // namespace

std::size_t RunKey(const PreparedCollective& prepared) {
  std::size_t key = std::hash<const void*>{}(&prepared);
  key = Combine(key, std::hash<std::string>{}(prepared.plan.name));
  key = Combine(key, std::hash<std::string>{}(prepared.topology.name));
  key = Combine(key, prepared.plan.ops.size());
  key = Combine(key, prepared.topology.nodes.size());
  key = Combine(key, prepared.topology.links.size());
  key = Combine(key, std::hash<std::string>{}(prepared.scenario.ring_order));
  return key;
}

bool RunKeyChanged(const char* slot_name, std::size_t key) {
  ImGuiStorage* storage = ImGui::GetStateStorage();
  const ImGuiID id = ImGui::GetID(slot_name);
  // Stored as a pointer-sized value; a never-set slot reads as null, and a
  // key of 0 is nudged so that it never looks like "never set".
  void* stored = storage->GetVoidPtr(id);
  void* wanted = reinterpret_cast<void*>(key == 0 ? 1 : key);
  if (stored == wanted) return false;
  storage->SetVoidPtr(id, wanted);
  return true;
}

}  // namespace shardlab::gui
