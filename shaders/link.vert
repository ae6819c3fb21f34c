#version 330 core
// Link lanes as screen-space quads. The CPU (LinkRenderer::AddLink) has
// already expanded each lane into two triangles, so this stage only maps
// ImGui's pixel space to clip space and hands the lane coordinates on.

layout(location = 0) in vec2 a_position_px;  // ImGui display pixels, y down
layout(location = 1) in vec4 a_color;        // straight alpha, from a packed ImU32
// x: across the quad, -1 .. 1 (includes the anti-aliasing margin)
// y: distance along the lane from its start, in pixels
// z: half of the lane's visible width, in pixels
// w: flow: signed speed, -1 .. 1 (0: idle, drawn static)
layout(location = 2) in vec4 a_lane;

uniform mat4 u_projection;  // orthographic, from ImGui's DisplayPos / DisplaySize

out vec4 v_color;
out float v_across;
out float v_along_px;
flat out float v_half_width_px;
flat out float v_flow;

void main() {
  v_color = a_color;
  v_across = a_lane.x;
  v_along_px = a_lane.y;
  v_half_width_px = a_lane.z;
  v_flow = a_lane.w;
  gl_Position = u_projection * vec4(a_position_px, 0.0, 1.0);
}
