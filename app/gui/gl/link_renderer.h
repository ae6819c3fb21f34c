// LinkRenderer: the topology view's links, drawn with shaders/link.* inside
// ImGui's own render pass.
//
//   view, per frame:  AddLink(a, b, ...) × lanes ──► Flush(draw list, t)
//                                                      │ appends a batch and
//                                                      │ two draw callbacks
//   ImGui_ImplOpenGL3_RenderDrawData ... ─► DrawBatch (our program, our VAO)
//                                       ─► ImDrawCallback_ResetRenderState
//
// Each lane is one screen-space quad (two triangles) expanded on the CPU:
//
//     a + n·w ─────────────────────── b + n·w      across = +1
//        │  ░░▓▓██ pulse ──►  ░░▓▓██    │          w = thickness/2 + 1 px
//     a − n·w ─────────────────────── b − n·w      across = −1
//        along = 0 px                along = |b − a| px
//
// The fragment shader turns `across` into an anti-aliased edge and `along`
// plus time into pulses moving at a speed set by `flow`.
//
// Without GL (a headless benchmark, a driver that rejects GLSL 3.30) Init
// fails with a message, AddLink and Flush do nothing, and ready() is false:
// the view then draws plain ImDrawList lines instead.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/gui/app/theme.h"
#include "app/gui/gl/shader_program.h"

namespace shardlab::gui {

class LinkRenderer {
 public:
  LinkRenderer() = default;
  ~LinkRenderer();  // frees GL objects; call Shutdown() first if the context goes earlier
  LinkRenderer(const LinkRenderer&) = delete;
  LinkRenderer& operator=(const LinkRenderer&) = delete;

  /// Builds the program and buffers. Needs a current GL 3.3 core context.
  /// Returns false with a readable *error (compile log included) otherwise;
  /// the renderer then stays inert and safe to call.
  bool Init(std::string* error);
  /// Frees the GL objects while the context is still current.
  void Shutdown();
  bool ready() const { return program_.valid() && vao_ != 0; }

  /// Queues one lane from `a_px` to `b_px` (ImGui screen pixels), drawn
  /// `thickness_px` wide in `rgba`. `flow` in [-1, 1]: 0 draws it static,
  /// positive pulses travel a -> b, negative b -> a, faster with |flow|.
  void AddLink(ImVec2 a_px, ImVec2 b_px, float thickness_px, Color rgba, float flow);

  /// Hands the lanes queued since the last Flush to `list` as a draw
  /// callback at the list's current position (so later tiles draw on top),
  /// followed by a reset of ImGui's render state. `time_s` drives the pulses.
  void Flush(ImDrawList* list, double time_s);

  /// Lanes queued and not yet flushed (for tests and the benchmark).
  std::size_t pending_lanes() const { return pending_.size() / kVerticesPerLane; }

 private:
  /// Interleaved vertex, 28 bytes; attribute layout matches link.vert.
  struct LinkVertex {
    float x_px, y_px;
    std::uint32_t rgba;  // ImGui's packed ABGR: bytes r, g, b, a in memory
    float across;        // -1 .. 1
    float along_px;
    float half_width_px;
    float flow;
  };
  static constexpr std::size_t kVerticesPerLane = 6;

  /// One Flush: a range of this frame's vertices and the display it was
  /// recorded for (so the callback needs nothing from ImGui's globals).
  struct Batch {
    LinkRenderer* owner = nullptr;
    int first_vertex = 0;
    int vertex_count = 0;
    float time_s = 0;
    ImVec2 display_pos;
    ImVec2 display_size;
    ImVec2 framebuffer_scale;
  };

  static void DrawBatchCallback(const ImDrawList* list, const ImDrawCmd* cmd);
  void DrawBatch(const Batch& batch, const ImVec4& clip_rect);

  ShaderProgram program_;
  GLint u_projection_ = -1;
  GLint u_time_s_ = -1;
  GLuint vao_ = 0;
  GLuint vbo_ = 0;

  std::vector<LinkVertex> pending_;  // since the last Flush
  std::vector<LinkVertex> frame_;    // every batch flushed this frame
  std::deque<Batch> batches_;        // stable addresses: callbacks point at them
  int frame_number_ = -1;            // ImGui frame the batches belong to
  bool frame_uploaded_ = false;
};

}  // namespace shardlab::gui
