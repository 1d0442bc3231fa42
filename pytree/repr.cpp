// Python's repr rules for floats and strings, pprint's line-breaking algorithm, and type-name
// demangling for struct reprs.
#include <linum/pytree/repr.hpp>

#include <cxxabi.h>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace linum::pytree {
namespace {

// Python's float_repr_style 'short': the shortest digits that round-trip, positional when the
// decimal exponent is in [-4, 16), scientific otherwise (PyOS_double_to_string with 'r').
template <class F>
std::string py_float_repr(F x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  bool neg = false;
  if (!sci.empty() && sci.front() == '-') {
    neg = true;
    sci.remove_prefix(1);
  }
  const std::size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  const int exp10 = std::atoi(std::string(sci.substr(e + 1)).c_str());
  const int decpt = exp10 + 1;  // value = 0.DIGITS * 10^decpt
  std::string out = neg ? "-" : "";
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-decpt), '0');
      out += digits;
    } else if (static_cast<std::size_t>(decpt) >= digits.size()) {
      out += digits;
      out.append(static_cast<std::size_t>(decpt) - digits.size(), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<std::size_t>(decpt));
      out += '.';
      out.append(digits, static_cast<std::size_t>(decpt));
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) {
      out += '.';
      out.append(digits, 1);
    }
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    out += ebuf;
  }
  return out;
}

// --- pprint -------------------------------------------------------------------------------------

using detail::PNode;

std::string flat_repr(const PNode& n) {
  switch (n.kind) {
    case PNode::Atom:
      return n.text;
    case PNode::Dict: {
      std::string s = "{";
      for (std::size_t i = 0; i < n.items.size(); ++i) {
        if (i) s += ", ";
        s += n.keys[i] + ": " + flat_repr(n.items[i]);
      }
      return s + "}";
    }
    case PNode::List:
    case PNode::Tuple: {
      const bool tuple = n.kind == PNode::Tuple;
      std::string s = tuple ? "(" : "[";
      for (std::size_t i = 0; i < n.items.size(); ++i) {
        if (i) s += ", ";
        s += flat_repr(n.items[i]);
      }
      if (tuple && n.items.size() == 1) s += ",";
      return s + (tuple ? ")" : "]");
    }
  }
  return n.text;
}

// A transcription of CPython's PrettyPrinter._format / _pprint_dict / _pprint_list /
// _pprint_tuple with indent=1, sort_dicts=True, compact=False.
std::string delimiter(int indent) {
  std::string d = ",\n";
  d.append(static_cast<std::size_t>(indent), ' ');
  return d;
}

struct Printer {
  int width;
  std::string out;

  void format(const PNode& n, int indent, int allowance) {
    std::string rep = flat_repr(n);
    const int max_width = width - indent - allowance;
    if (static_cast<int>(rep.size()) > max_width && n.kind != PNode::Atom) {
      if (n.kind == PNode::Dict) {
        out += '{';
        if (!n.items.empty()) format_dict_items(n, indent, allowance + 1);
        out += '}';
      } else if (n.kind == PNode::List) {
        out += '[';
        format_items(n, indent, allowance + 1);
        out += ']';
      } else {
        out += '(';
        const std::string endchar = n.items.size() == 1 ? ",)" : ")";
        format_items(n, indent, allowance + static_cast<int>(endchar.size()));
        out += endchar;
      }
      return;
    }
    out += rep;
  }

  void format_dict_items(const PNode& n, int indent, int allowance) {
    indent += 1;
    const std::string delimnl = delimiter(indent);
    for (std::size_t i = 0; i < n.items.size(); ++i) {
      const bool last = i + 1 == n.items.size();
      out += n.keys[i] + ": ";
      format(n.items[i], indent + static_cast<int>(n.keys[i].size()) + 2, last ? allowance : 1);
      if (!last) out += delimnl;
    }
  }

  void format_items(const PNode& n, int indent, int allowance) {
    indent += 1;
    const std::string delimnl = delimiter(indent);
    for (std::size_t i = 0; i < n.items.size(); ++i) {
      const bool last = i + 1 == n.items.size();
      if (i) out += delimnl;
      format(n.items[i], indent, last ? allowance : 1);
    }
  }
};

}  // namespace

std::string float_repr(double x) { return py_float_repr(x); }
std::string float_repr(float x) { return py_float_repr(x); }

// Python's str.__repr__: single quotes unless the text holds a single quote and no double one.
std::string str_repr(std::string_view s) {
  const bool dq = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == q || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);  // UTF-8 bytes pass through, as Python prints printable text
    }
  }
  out += q;
  return out;
}

namespace detail {

std::string pformat_node(const PNode& node, int width) {
  Printer p{width, {}};
  p.format(node, 0, 0);
  return std::move(p.out);
}

std::string short_type_name(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> dem(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && dem ? std::string(dem.get()) : std::string(mangled);
  // Keep the last component of the qualified name, without its template arguments; scan from the
  // end so that "f<int>()::Local" and "ns::S<ns::T>" both come out right.
  std::size_t end = name.size();
  if (end && name[end - 1] == '>') {
    int depth = 0;
    for (std::size_t i = end; i-- > 0;) {
      if (name[i] == '>') ++depth;
      if (name[i] == '<' && --depth == 0) {
        end = i;
        break;
      }
    }
  }
  std::size_t begin = 0;
  int depth = 0;
  for (std::size_t i = end; i-- > 1;) {
    const char c = name[i];
    if (c == '>' || c == ')') ++depth;
    if (c == '<' || c == '(') --depth;
    if (depth == 0 && c == ':' && name[i - 1] == ':') {
      begin = i + 1;
      break;
    }
  }
  return name.substr(begin, end - begin);
}

}  // namespace detail
}  // namespace linum::pytree
