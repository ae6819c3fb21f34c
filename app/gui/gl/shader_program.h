// ShaderProgram: one linked GLSL program built from two sources, with the
// driver's log returned as text. A GUI must survive a broken shader (an old
// driver, a typo in shaders/): nothing here aborts, the caller falls back.
//
//   FindEmbeddedShader("link.vert") ─┐
//   FindEmbeddedShader("link.frag") ─┴─► ShaderProgram::Build ─► id() / Uniform()
#pragma once

#include <string>

#include <GL/gl.h>
#include <GL/glext.h>

namespace shardlab::gui {

/// The source of shaders/<name> ("link.vert") embedded at build time by
/// cmake/EmbedShaders.cmake, or nullptr when there is no such file.
const char* FindEmbeddedShader(const char* name);

class ShaderProgram {
 public:
  ShaderProgram() = default;
  ~ShaderProgram();  // deletes the program; needs the GL context it was built in
  ShaderProgram(const ShaderProgram&) = delete;
  ShaderProgram& operator=(const ShaderProgram&) = delete;

  /// Compiles and links `vertex_source` and `fragment_source` (their names
  /// are only for messages). Returns false and sets *error to
  /// "link.frag: 0:12(3): error: ..." on failure; the old program, if any,
  /// is replaced only on success. Needs a current GL 3.3 context.
  bool Build(const char* vertex_name, const char* vertex_source, const char* fragment_name,
             const char* fragment_source, std::string* error);

  /// As Build, with both sources looked up by name among the embedded shaders.
  bool BuildEmbedded(const char* vertex_name, const char* fragment_name, std::string* error);

  /// Deletes the program now (while the context is still current).
  void Destroy();

  bool valid() const { return program_ != 0; }
  GLuint id() const { return program_; }
  /// Location of a uniform, or -1 (the optimizer may drop unused ones).
  GLint Uniform(const char* name) const;

 private:
  GLuint program_ = 0;
};

}  // namespace shardlab::gui
