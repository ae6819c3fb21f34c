#include "app/gui/views/run_key.h"

#include <imgui.h>

namespace shardlab::gui {

bool RunKeyChanged(const char* slot_name, std::uint64_t run_id) {
  ImGuiStorage* storage = ImGui::GetStateStorage();
  const ImGuiID id = ImGui::GetID(slot_name);
  // Stored as a pointer-sized value; a never-set slot reads as null, and
  // ids start at 1 (Session increments before the first run).
  void* stored = storage->GetVoidPtr(id);
  void* wanted = reinterpret_cast<void*>(static_cast<std::uintptr_t>(run_id == 0 ? 1 : run_id));
  if (stored == wanted) return false;
  storage->SetVoidPtr(id, wanted);
  return true;
}

}  // namespace shardlab::gui
