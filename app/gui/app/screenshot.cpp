#include "app/gui/app/screenshot.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include <GL/gl.h>
// libstb-dev's libstb already holds the implementation: only declarations here.
#include <stb_image_write.h>

namespace shardlab::gui {

std::string SaveFramebufferPng(const std::string& path, int width_px, int height_px) {
  if (width_px <= 0 || height_px <= 0) return path + ": nothing to save (window has no pixels)";
  const auto width = static_cast<std::size_t>(width_px);
  const auto height = static_cast<std::size_t>(height_px);
  const std::size_t row_bytes = width * 3;
  std::vector<unsigned char> bottom_up(row_bytes * height);
  // Tight rows: GL pads rows to 4 bytes by default, which RGB rows are not.
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width_px, height_px, GL_RGB, GL_UNSIGNED_BYTE, bottom_up.data());
  if (const GLenum gl_error = glGetError(); gl_error != GL_NO_ERROR) {
    char code[16];
    std::snprintf(code, sizeof code, "0x%04X", gl_error);
    return path + ": reading the window's pixels failed (GL error " + code + ")";
  }
  // GL's first row is the bottom one; PNG's is the top one.
  std::vector<unsigned char> top_down(bottom_up.size());
  for (std::size_t y = 0; y < height; ++y) {
    std::memcpy(&top_down[y * row_bytes], &bottom_up[(height - 1 - y) * row_bytes], row_bytes);
  }

  const std::string tmp = path + ".tmp";
  errno = 0;
  if (stbi_write_png(tmp.c_str(), width_px, height_px, 3, top_down.data(),
                     static_cast<int>(row_bytes)) == 0) {
    const int saved = errno;
    std::remove(tmp.c_str());
    return path + ": cannot write PNG" +
           (saved != 0 ? std::string(" (") + std::strerror(saved) + ")" : std::string());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    std::remove(tmp.c_str());
    return path + ": cannot write PNG (" + std::strerror(saved) + ")";
  }
  return "";
}

}  // namespace shardlab::gui
