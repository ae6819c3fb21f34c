// Screenshot: the window as a PNG, for slides and for the GUI tests.
#pragma once

#include <string>

namespace shardlab::gui {

/// Reads the current context's default framebuffer (call after rendering a
/// frame and before swapping buffers), flips it to top-down rows and writes
/// an RGB PNG to `path` through `path`.tmp renamed into place, so a failed
/// write never leaves half a file. Returns "" or a message naming the path
/// and the reason ("out.png: No such file or directory").
std::string SaveFramebufferPng(const std::string& path, int width_px, int height_px);

}  // namespace shardlab::gui
