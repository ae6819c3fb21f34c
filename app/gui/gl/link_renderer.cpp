#include "app/gui/gl/link_renderer.h"

#include <cmath>
#include <cstddef>

namespace shardlab::gui {
namespace {

// Must match kAaMarginPx in link.frag: the quad is this much wider than the
// visible band on each side so the edge can fade over a whole pixel.
constexpr float kAaMarginPx = 1.0f;
// Lanes shorter than this are hidden behind their tiles anyway.
constexpr float kMinLaneLengthPx = 0.5f;

}  // namespace

LinkRenderer::~LinkRenderer() { Shutdown(); }

bool LinkRenderer::Init(std::string* error) {
  std::string ignored;
  if (error == nullptr) error = &ignored;
  Shutdown();
  // Without a current context glGetString returns null; checking first keeps
  // a headless caller away from undefined driver behaviour.
  if (glGetString(GL_VERSION) == nullptr) {
    *error = "link renderer: no current OpenGL context";
    return false;
  }
  if (!program_.BuildEmbedded("link.vert", "link.frag", error)) return false;
  u_projection_ = program_.Uniform("u_projection");
  u_time_s_ = program_.Uniform("u_time_s");

  // Remember the bindings we disturb: Init may run inside someone's frame.
  GLint last_vao = 0;
  GLint last_buffer = 0;
  glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &last_vao);
  glGetIntegerv(GL_ARRAY_BUFFER_BINDING, &last_buffer);

  glGenVertexArrays(1, &vao_);
  glGenBuffers(1, &vbo_);
  glBindVertexArray(vao_);
  glBindBuffer(GL_ARRAY_BUFFER, vbo_);
  const GLsizei stride = sizeof(LinkVertex);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, stride,
                        reinterpret_cast<const void*>(offsetof(LinkVertex, x_px)));
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 4, GL_UNSIGNED_BYTE, GL_TRUE, stride,
                        reinterpret_cast<const void*>(offsetof(LinkVertex, rgba)));
  glEnableVertexAttribArray(2);
  glVertexAttribPointer(2, 4, GL_FLOAT, GL_FALSE, stride,
                        reinterpret_cast<const void*>(offsetof(LinkVertex, across)));
  glBindVertexArray(static_cast<GLuint>(last_vao));
  glBindBuffer(GL_ARRAY_BUFFER, static_cast<GLuint>(last_buffer));

  if (GLenum gl_error = glGetError(); gl_error != GL_NO_ERROR) {
    *error = "link renderer: OpenGL error " + std::to_string(gl_error) + " while creating buffers";
    Shutdown();
    return false;
  }
  return true;
}

void LinkRenderer::Shutdown() {
  if (vbo_ != 0) glDeleteBuffers(1, &vbo_);
  if (vao_ != 0) glDeleteVertexArrays(1, &vao_);
  vbo_ = 0;
  vao_ = 0;
  program_.Destroy();
  pending_.clear();
  frame_.clear();
  batches_.clear();
}

void LinkRenderer::AddLink(ImVec2 a_px, ImVec2 b_px, float thickness_px, Color rgba, float flow) {
  if (!ready()) return;
  const float dx = b_px.x - a_px.x;
  const float dy = b_px.y - a_px.y;
  const float length_px = std::sqrt(dx * dx + dy * dy);
  if (length_px < kMinLaneLengthPx || thickness_px <= 0) return;
  // Unit normal of the lane; `across` = +1 lies on its side.
  const float nx = -dy / length_px;
  const float ny = dx / length_px;
  const float half_px = thickness_px * 0.5f;
  const float extent_px = half_px + kAaMarginPx;
  const float f = std::fmax(-1.0f, std::fmin(1.0f, flow));

  auto corner = [&](ImVec2 end, float side, float along_px) {
    return LinkVertex{end.x + nx * extent_px * side, end.y + ny * extent_px * side, rgba, side,
                      along_px, half_px, f};
  };
  const LinkVertex a_plus = corner(a_px, +1, 0);
  const LinkVertex a_minus = corner(a_px, -1, 0);
  const LinkVertex b_plus = corner(b_px, +1, length_px);
  const LinkVertex b_minus = corner(b_px, -1, length_px);
  // Two triangles; no index buffer, as lanes share no corners.
  pending_.insert(pending_.end(), {a_plus, a_minus, b_plus, b_plus, a_minus, b_minus});
}

void LinkRenderer::Flush(ImDrawList* list, double time_s) {
  if (!ready() || list == nullptr || pending_.empty()) {
    pending_.clear();
    return;
  }
  // The first Flush of a frame starts a new vertex set: the previous frame
  // has been rendered by now, so nothing points at the old batches anymore.
  const int frame = ImGui::GetFrameCount();
  if (frame != frame_number_) {
    frame_number_ = frame;
    frame_.clear();
    batches_.clear();
    frame_uploaded_ = false;
  }
  const ImGuiIO& io = ImGui::GetIO();
  Batch batch;
  batch.owner = this;
  batch.first_vertex = static_cast<int>(frame_.size());
  batch.vertex_count = static_cast<int>(pending_.size());
  // Keep float precision for the pulse phase: wrap the wall clock once an
  // hour (a visible hiccup once an hour is acceptable).
  batch.time_s = static_cast<float>(std::fmod(time_s, 3600.0));
  batch.display_pos = ImGui::GetMainViewport()->Pos;
  batch.display_size = io.DisplaySize;
  batch.framebuffer_scale = io.DisplayFramebufferScale;
  frame_.insert(frame_.end(), pending_.begin(), pending_.end());
  pending_.clear();
  batches_.push_back(batch);
  list->AddCallback(&LinkRenderer::DrawBatchCallback, &batches_.back());
  list->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

void LinkRenderer::DrawBatchCallback(const ImDrawList* /*list*/, const ImDrawCmd* cmd) {
  const auto* batch = static_cast<const Batch*>(cmd->UserCallbackData);
  if (batch != nullptr && batch->owner != nullptr) batch->owner->DrawBatch(*batch, cmd->ClipRect);
}

void LinkRenderer::DrawBatch(const Batch& batch, const ImVec4& clip_rect) {
  if (!ready()) return;
  const float fb_width = batch.display_size.x * batch.framebuffer_scale.x;
  const float fb_height = batch.display_size.y * batch.framebuffer_scale.y;
  if (fb_width <= 0 || fb_height <= 0) return;

  // Clip rect (display pixels) -> scissor box (framebuffer pixels, y up).
  const float x0 = (clip_rect.x - batch.display_pos.x) * batch.framebuffer_scale.x;
  const float y0 = (clip_rect.y - batch.display_pos.y) * batch.framebuffer_scale.y;
  const float x1 = (clip_rect.z - batch.display_pos.x) * batch.framebuffer_scale.x;
  const float y1 = (clip_rect.w - batch.display_pos.y) * batch.framebuffer_scale.y;
  if (x1 <= x0 || y1 <= y0) return;

  glViewport(0, 0, static_cast<GLsizei>(fb_width), static_cast<GLsizei>(fb_height));
  glEnable(GL_SCISSOR_TEST);
  glScissor(static_cast<GLint>(x0), static_cast<GLint>(fb_height - y1),
            static_cast<GLsizei>(x1 - x0), static_cast<GLsizei>(y1 - y0));
  glEnable(GL_BLEND);
  glBlendEquation(GL_FUNC_ADD);
  glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  glDisable(GL_CULL_FACE);
  glDisable(GL_DEPTH_TEST);

  // Orthographic projection of ImGui's display rect, y down, as the ImGui
  // backend uses, so our pixels land exactly on its pixels.
  const float l = batch.display_pos.x;
  const float r = batch.display_pos.x + batch.display_size.x;
  const float t = batch.display_pos.y;
  const float b = batch.display_pos.y + batch.display_size.y;
  const float projection[16] = {
      2.0f / (r - l),    0.0f,              0.0f,  0.0f,  //
      0.0f,              2.0f / (t - b),    0.0f,  0.0f,  //
      0.0f,              0.0f,              -1.0f, 0.0f,  //
      (r + l) / (l - r), (t + b) / (b - t), 0.0f,  1.0f,
  };
  glUseProgram(program_.id());
  glUniformMatrix4fv(u_projection_, 1, GL_FALSE, projection);
  glUniform1f(u_time_s_, batch.time_s);
  glBindVertexArray(vao_);
  glBindBuffer(GL_ARRAY_BUFFER, vbo_);
  // Upload once per frame, at render time: the context is current here for
  // sure, and all of the frame's batches are known by now.
  if (!frame_uploaded_) {
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(frame_.size() * sizeof(LinkVertex)),
                 frame_.data(), GL_STREAM_DRAW);
    frame_uploaded_ = true;
  }
  glDrawArrays(GL_TRIANGLES, batch.first_vertex, batch.vertex_count);
}

}  // namespace shardlab::gui
