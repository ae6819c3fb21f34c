#include "app/gui/gl/shader_program.h"

#include <vector>

namespace shardlab::gui {
namespace {

// The info log of a shader or program, trimmed of the driver's trailing
// newline so it reads well inside one message.
std::string ShaderLog(GLuint shader) {
  GLint length = 0;
  glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &length);
  if (length <= 1) return "(no log)";
  std::vector<char> log(static_cast<std::size_t>(length));
  glGetShaderInfoLog(shader, length, nullptr, log.data());
  std::string text(log.data());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

std::string ProgramLog(GLuint program) {
  GLint length = 0;
  glGetProgramiv(program, GL_INFO_LOG_LENGTH, &length);
  if (length <= 1) return "(no log)";
  std::vector<char> log(static_cast<std::size_t>(length));
  glGetProgramInfoLog(program, length, nullptr, log.data());
  std::string text(log.data());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// Compiles one stage; returns 0 and fills *error on failure.
GLuint CompileStage(GLenum stage, const char* name, const char* source, std::string* error) {
  GLuint shader = glCreateShader(stage);
  if (shader == 0) {
    *error = std::string(name) + ": glCreateShader failed (no GL context?)";
    return 0;
  }
  glShaderSource(shader, 1, &source, nullptr);
  glCompileShader(shader);
  GLint ok = GL_FALSE;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (ok != GL_TRUE) {
    *error = std::string(name) + ": " + ShaderLog(shader);
    glDeleteShader(shader);
    return 0;
  }
  return shader;
}

}  // namespace

ShaderProgram::~ShaderProgram() { Destroy(); }

void ShaderProgram::Destroy() {
  if (program_ != 0) glDeleteProgram(program_);
  program_ = 0;
}

bool ShaderProgram::Build(const char* vertex_name, const char* vertex_source,
                          const char* fragment_name, const char* fragment_source,
                          std::string* error) {
  std::string ignored;
  if (error == nullptr) error = &ignored;
  if (vertex_source == nullptr || fragment_source == nullptr) {
    *error = std::string(vertex_source == nullptr ? vertex_name : fragment_name) +
             ": no such shader source";
    return false;
  }
  GLuint vertex = CompileStage(GL_VERTEX_SHADER, vertex_name, vertex_source, error);
  if (vertex == 0) return false;
  GLuint fragment = CompileStage(GL_FRAGMENT_SHADER, fragment_name, fragment_source, error);
  if (fragment == 0) {
    glDeleteShader(vertex);
    return false;
  }
  GLuint program = glCreateProgram();
  glAttachShader(program, vertex);
  glAttachShader(program, fragment);
  glLinkProgram(program);
  // The program keeps what it linked; the stage objects can go now.
  glDetachShader(program, vertex);
  glDetachShader(program, fragment);
  glDeleteShader(vertex);
  glDeleteShader(fragment);
  GLint ok = GL_FALSE;
  glGetProgramiv(program, GL_LINK_STATUS, &ok);
  if (ok != GL_TRUE) {
    *error = std::string(vertex_name) + " + " + fragment_name + ": link: " + ProgramLog(program);
    glDeleteProgram(program);
    return false;
  }
  Destroy();
  program_ = program;
  return true;
}

bool ShaderProgram::BuildEmbedded(const char* vertex_name, const char* fragment_name,
                                  std::string* error) {
  return Build(vertex_name, FindEmbeddedShader(vertex_name), fragment_name,
               FindEmbeddedShader(fragment_name), error);
}

GLint ShaderProgram::Uniform(const char* name) const {
  return program_ != 0 ? glGetUniformLocation(program_, name) : -1;
}

}  // namespace shardlab::gui
