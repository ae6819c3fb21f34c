// The small file-name popup behind File > Export screenshot... and
// File > Export Chrome trace...: a text field with a default name in the
// current directory, Save and Cancel. The App does the writing.
#pragma once

#include <string>

#include "app/gui/app/theme.h"

namespace shardlab::gui {

enum class ExportKind { kScreenshot, kTrace };

class ExportDialog {
 public:
  /// Opens the popup at the next Draw, with `default_name` in the field.
  void Open(ExportKind kind, const std::string& default_name);
  /// Draws the popup while open. Call once per frame at the top level.
  /// Returns true in the frame the user confirms; then kind() and path()
  /// say what to write.
  bool Draw(const Theme& theme);

  ExportKind kind() const { return kind_; }
  const std::string& path() const { return path_; }

 private:
  ExportKind kind_ = ExportKind::kScreenshot;
  std::string path_;
  bool open_requested_ = false;
  bool focus_field_ = false;
};

}  // namespace shardlab::gui
