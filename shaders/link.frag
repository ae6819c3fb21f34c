#version 330 core
// A link lane: a solid band with anti-aliased edges and, when the lane
// carries data, comet-shaped pulses that travel in the data's direction.
// The pulse speed grows with the load, so a busy link visibly hurries and
// an idle one stands still (a student reads "still" as "nothing moving").

in vec4 v_color;
in float v_across;
in float v_along_px;
flat in float v_half_width_px;
flat in float v_flow;

uniform float u_time_s;  // wall seconds, for the animation only

out vec4 o_color;

const float kAaMarginPx = 1.0;       // must match LinkRenderer's quad margin
const float kPulsePeriodPx = 30.0;   // distance between two pulses
const float kSlowPxPerS = 14.0;      // pulse speed of a barely used link
const float kFastPxPerS = 110.0;     // ... and of a saturated one

void main() {
  // Distance from the lane's centre line in pixels; coverage falls from 1 to
  // 0 over the last pixel of the band, which is the whole anti-aliasing.
  float dist_px = abs(v_across) * (v_half_width_px + kAaMarginPx);
  float coverage = clamp(v_half_width_px + 0.5 - dist_px, 0.0, 1.0);

  // A slight tube shading: the centre a little brighter than the rims.
  float centre = 1.0 - abs(v_across);
  vec3 rgb = v_color.rgb * (0.82 + 0.18 * centre);

  float load = clamp(abs(v_flow), 0.0, 1.0);
  if (load > 0.0) {
    float direction = v_flow > 0.0 ? 1.0 : -1.0;
    float speed_px_per_s = mix(kSlowPxPerS, kFastPxPerS, load);
    // phase rises along the direction of travel and wraps: the brightest
    // point (phase near 1) is the comet's head, the fade behind it its tail.
    float phase = fract((direction * v_along_px - u_time_s * speed_px_per_s) / kPulsePeriodPx);
    float pulse = smoothstep(0.15, 0.9, phase) * (1.0 - smoothstep(0.9, 1.0, phase));
    float strength = 0.18 + 0.32 * load;
    rgb = mix(rgb, vec3(1.0), pulse * strength * (0.6 + 0.4 * centre));
  }
  o_color = vec4(rgb, v_color.a * coverage);
}
