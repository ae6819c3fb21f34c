// An XML field file parsed with pugixml (Debian's libpugixml-dev), with
// what the readers need around it: errors as "file:line:column: what",
// the line of any element, and a cap on how deep the readers descend.
//
// pugixml parses without recursion (its parser keeps its own stack of open
// elements), so 10^6 nested elements cost memory, not the C stack; the
// readers walk only the elements they know, and refuse nesting deeper than
// kMaxXmlDepth before they recurse. A parse that fails at the end of the
// text is reported as a file that stops there, naming the element left
// open: "topo.xml:9:1: the file stops inside <pci> opened at line 4 (truncated?)".
#pragma once

#include <pugixml.hpp>

#include <string>
#include <string_view>

#include "engine/field/field_file.h"

namespace shardlab {

/// The deepest element nesting the field readers follow.
inline constexpr int kMaxXmlDepth = 64;

class XmlDocument {
 public:
  /// Parses `file`'s text; throws Error naming file:line:column.
  explicit XmlDocument(const FieldFile& file);

  const pugi::xml_document& doc() const { return doc_; }
  /// The root element (the first element child of the document).
  pugi::xml_node root() const { return doc_.document_element(); }
  /// The line (from 1) where `node` starts.
  int LineOf(const pugi::xml_node& node) const;
  /// "file:line: " for `node`.
  std::string At(const pugi::xml_node& node) const;
  const FieldFile& file() const { return file_; }

 private:
  const FieldFile& file_;
  pugi::xml_document doc_;
};

/// `node`'s attribute as an int; `fallback` when absent; throws naming the
/// attribute when present and not a whole number.
int XmlInt(const XmlDocument& xml, const pugi::xml_node& node, const char* name, int fallback);
/// `node`'s attribute as a number; `fallback` when absent or empty.
double XmlDouble(const XmlDocument& xml, const pugi::xml_node& node, const char* name, double fallback);

/// The name of a text's root element, skipping a BOM, the XML declaration,
/// comments and a DOCTYPE; "" when the text does not start like XML.
std::string XmlRootName(std::string_view head);

}  // namespace shardlab
