// File > Open trace...: a popup with a path field (ImGui has no file
// dialog), the traces opened recently in this session, Open and Cancel.
// The App reads the file; a bad one leaves the popup open with the reason,
// so the user can fix the path without losing it.
#pragma once

#include <string>
#include <vector>

#include "app/gui/app/theme.h"

namespace shardlab::gui {

/// Which trace the dialog asks for.
enum class TraceDialogPurpose {
  kShow,     // File > Open trace...: instead of the run shown
  kCompare,  // File > Open trace to compare...: a second run of the shown plan, laid over it
};

class OpenTraceDialog {
 public:
  explicit OpenTraceDialog(TraceDialogPurpose purpose = TraceDialogPurpose::kShow) : purpose_(purpose) {}
  /// Opens the popup at the next Draw.
  void Open();
  /// Draws the popup while open (once per frame, at the top level).
  /// Returns true in the frame the user asks to open path().
  bool Draw(const Theme& theme);
  const std::string& path() const { return path_; }

  /// After a successful open: closes the popup and remembers the path.
  void Opened(const std::string& path);
  /// After a failed open: the popup stays and shows `message`.
  void Failed(const std::string& message) { error_ = message; }

  static constexpr std::size_t kMaxRecent = 8;

 private:
  TraceDialogPurpose purpose_;
  std::string path_;
  std::string error_;
  std::vector<std::string> recent_;  // newest first
  bool open_requested_ = false;
  bool close_requested_ = false;
  bool focus_field_ = false;
};

}  // namespace shardlab::gui
