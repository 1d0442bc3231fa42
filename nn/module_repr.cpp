// What a module prints: Flax-style class names of C++ types, attribute values as Python's repr
// writes them, and Flax's _module_repr of a module with its bound children.
#include <linum/nn/module_repr.hpp>

#include <cxxabi.h>

#include <charconv>
#include <cstdlib>
#include <string_view>

#include <linum/pytree/repr.hpp>

namespace linum::nn {

namespace detail {
namespace {
// Flax-style class name of a demangled C++ type: unqualified, template arguments appended
// (linum::nn::Dense -> Dense; linum::nn::Vmap<linum::nn::Dense> -> VmapDense; a class local to
// a function, f()::M -> M).
std::string flax_class_name(std::string_view full) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i + 1 < full.size(); ++i) {
    const char c = full[i];
    if (c == '<' || c == '(')
      ++depth;
    else if (c == '>' || c == ')')
      --depth;
    else if (depth == 0 && c == ':' && full[i + 1] == ':')
      start = i + 2;
  }
  std::string_view base = full.substr(start);
  const auto lt = base.find('<');
  if (lt == std::string_view::npos) return std::string(base);
  std::string out(base.substr(0, lt));
  depth = 0;
  std::size_t arg_start = lt + 1;
  for (std::size_t i = lt; i < base.size(); ++i) {
    const char c = base[i];
    if (c == '<' || c == '(') {
      ++depth;
    } else if (c == '>' || c == ')') {
      if (--depth == 0) out += flax_class_name(base.substr(arg_start, i - arg_start));
    } else if (c == ',' && depth == 1) {
      out += flax_class_name(base.substr(arg_start, i - arg_start));
      arg_start = i + 1;
      while (arg_start < base.size() && base[arg_start] == ' ') ++arg_start;
    }
  }
  return out;
}
}  // namespace

std::string demangled_type_name(const std::type_info& t) {
  int status = 0;
  char* raw = abi::__cxa_demangle(t.name(), nullptr, nullptr, &status);
  std::string full = status == 0 && raw ? raw : t.name();
  std::free(raw);
  return flax_class_name(full);
}
}  // namespace detail

std::string attr_repr(bool v) { return v ? "True" : "False"; }
std::string attr_repr(std::int64_t v) { return std::to_string(v); }
std::string attr_repr(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string out(buf, end);
  // Python prints a float with a fraction or an exponent: 3.0, 1e+16, inf.
  if (out.find_first_of(".eninf") == std::string::npos) out += ".0";
  return out;
}
std::string attr_repr(const std::string& v) { return pytree::str_repr(v); }
std::string attr_repr(const std::vector<std::int64_t>& v) {
  std::string out = "(";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + (v.size() == 1 ? ",)" : ")");
}
std::string attr_repr(std::nullopt_t) { return "None"; }

namespace {
// Flax's _indent: every line (the text ends with a newline) moved right by n spaces.
std::string indent(const std::string& text, int n) {
  std::string out, pad(static_cast<std::size_t>(n), ' ');
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    out += pad + text.substr(start, nl - start + 1);
    start = nl + 1;
  }
  return out;
}
}  // namespace

std::string detail::module_repr(const std::string& type, const Attributes& attrs,
                                const ChildList& children) {
  std::string rep;
  if (!attrs.empty()) {
    rep += "# attributes\n";
    for (const auto& [k, v] : attrs) rep += k + " = " + v + "\n";
  }
  if (!children.empty()) {
    rep += "# children\n";
    for (const auto& [k, c] : children)
      rep += k + " = " + module_repr(c->type, c->attributes, *c->children) + "\n";
  }
  return rep.empty() ? type + "()" : type + "(\n" + indent(rep, 4) + ")";
}

}  // namespace linum::nn
