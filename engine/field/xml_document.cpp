#include "engine/field/xml_document.h"

#include <cctype>
#include <charconv>
#include <cstdlib>

#include "engine/core/error.h"

namespace shardlab {
namespace {

std::string LineColumn(const FieldFile& file, std::size_t offset) {
  const auto [line, column] = file.LineColumnAt(offset);
  return file.path + ":" + std::to_string(line) + ":" + std::to_string(column);
}

/// The innermost element still open in a partial parse, or an empty node.
pugi::xml_node LastOpenElement(const pugi::xml_document& doc) {
  pugi::xml_node open;
  pugi::xml_node node = doc.document_element();
  for (int depth = 0; node && depth < (1 << 22); ++depth) {  // the last child, down the tree
    open = node;
    pugi::xml_node last = node.last_child();
    while (last && last.type() != pugi::node_element) last = last.previous_sibling();
    node = last;
  }
  return open;
}

}  // namespace

XmlDocument::XmlDocument(const FieldFile& file) : file_(file) {
  const pugi::xml_parse_result result =
      doc_.load_buffer(file.text.data(), file.text.size(), pugi::parse_default, pugi::encoding_utf8);
  if (result) {
    if (!root()) throw Error(file.path + ":1: no XML element in the file");
    return;
  }
  const auto offset = static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, result.offset));
  // pugixml reports an unclosed element at the end of the text: the file stops there.
  // No whole tag after the fault: the text ends inside a tag or with elements open.
  const bool at_end = file.text.find('>', offset) == std::string::npos;
  if (at_end && result.status != pugi::status_io_error && result.status != pugi::status_out_of_memory) {
    const pugi::xml_node open = LastOpenElement(doc_);
    std::string inside;
    if (open) {
      inside = " inside <" + std::string(open.name()) + "> opened at line " +
               std::to_string(file.LineColumnAt(static_cast<std::size_t>(open.offset_debug())).first);
    }
    throw Error(LineColumn(file, file.text.size()) + ": the file stops" + inside + " (truncated?)");
  }
  throw Error(LineColumn(file, offset) + ": broken XML: " + result.description());
}

int XmlDocument::LineOf(const pugi::xml_node& node) const {
  const std::ptrdiff_t offset = node.offset_debug();
  return offset < 0 ? 0 : file_.LineColumnAt(static_cast<std::size_t>(offset)).first;
}

std::string XmlDocument::At(const pugi::xml_node& node) const {
  return file_.path + ":" + std::to_string(LineOf(node)) + ": ";
}

int XmlInt(const XmlDocument& xml, const pugi::xml_node& node, const char* name, int fallback) {
  const pugi::xml_attribute a = node.attribute(name);
  if (!a) return fallback;
  const std::string_view text = a.value();
  if (text.empty()) return fallback;
  int value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    begin += 2;
    base = 16;
  }
  const auto [ptr, ec] = std::from_chars(begin, end, value, base);
  if (ec != std::errc() || ptr != end) {
    throw Error(xml.At(node) + "<" + node.name() + "> " + name + "=\"" + std::string(text) +
                "\" is not a whole number");
  }
  return value;
}

double XmlDouble(const XmlDocument& xml, const pugi::xml_node& node, const char* name, double fallback) {
  const pugi::xml_attribute a = node.attribute(name);
  if (!a || *a.value() == '\0') return fallback;
  char* end = nullptr;
  const double value = std::strtod(a.value(), &end);
  if (end == a.value() || *end != '\0') {
    throw Error(xml.At(node) + "<" + node.name() + "> " + name + "=\"" + a.value() +
                "\" is not a number");
  }
  return value;
}

std::string XmlRootName(std::string_view head) {
  std::size_t i = 0;
  if (head.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // UTF-8 byte order mark
  for (;;) {
    i = head.find_first_not_of(" \t\r\n", i);
    if (i == std::string_view::npos || head[i] != '<') return "";
    if (head.substr(i, 4) == "<!--") {
      const std::size_t end = head.find("-->", i + 4);
      if (end == std::string_view::npos) return "";
      i = end + 3;
    } else if (head.substr(i, 2) == "<?" || head.substr(i, 2) == "<!") {
      const std::size_t end = head.find('>', i + 2);
      if (end == std::string_view::npos) return "";
      i = end + 1;
    } else {
      std::size_t end = i + 1;
      while (end < head.size() && (std::isalnum(static_cast<unsigned char>(head[end])) != 0 ||
                                   head[end] == '_' || head[end] == '-' || head[end] == ':')) {
        ++end;
      }
      return std::string(head.substr(i + 1, end - i - 1));
    }
  }
}

}  // namespace shardlab
