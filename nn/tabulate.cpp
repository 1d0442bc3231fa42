// tabulate's rendering: one row per module in the order calls start (parents before children),
// cells as Flax's yaml of value representations (float32[16,9]), a rich-style box table with a
// line between rows.
#include <linum/nn/tabulate.hpp>

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

namespace linum::nn::detail {

namespace {
using Path = std::vector<std::string>;

std::string join(const Path& p) {
  std::string s;
  for (const auto& e : p) s += (s.empty() ? "" : "/") + e;
  return s;
}

std::string value_repr(const Array& a) {
  std::string s(dtype_name(a.dtype()));
  s += '[';
  for (int i = 0; i < a.ndim(); ++i) {
    if (i) s += ',';
    s += std::to_string(a.shape(i));
  }
  s += ']';
  return s;
}

// PyYAML's block style as Flax's _as_yaml_str writes a value (safe_dump, indent=2): a sequence
// item "- x" (a nested sequence "- - x"), a mapping entry "k: x" with a nested mapping indented
// by two and a sequence under a key not indented; arrays as dtype[shape], None as None.
bool nonempty_container(const Tree& v) {
  const Tree& u = v.is_box() ? v.box_value() : v;
  return (u.is_tuple() || u.is_list() || u.is_dict() || u.is_frozen_dict()) && u.size() > 0;
}
std::vector<std::string> yaml_lines(const Tree& t) {
  if (t.is_box()) return yaml_lines(t.box_value());
  const bool seq = t.is_tuple() || t.is_list();
  const bool map = t.is_dict() || t.is_frozen_dict();
  if (!seq && !map) return {t.is_leaf() ? value_repr(t.leaf()) : std::string("None")};
  if (t.size() == 0) return {seq ? "[]" : "{}"};
  std::vector<std::string> out;
  if (seq) {
    for (const auto& v : t.items()) {
      const auto ls = yaml_lines(v);
      for (std::size_t i = 0; i < ls.size(); ++i) out.push_back((i ? "  " : "- ") + ls[i]);
    }
    return out;
  }
  for (const auto& [k, v] : t.as_mapping()) {
    const auto ls = yaml_lines(v);
    if (!nonempty_container(v)) {
      out.push_back(k + ": " + ls.front());
      continue;
    }
    out.push_back(k + ":");
    const Tree& u = v.is_box() ? v.box_value() : v;
    const std::string pad = u.is_dict() || u.is_frozen_dict() ? "  " : "";
    for (const auto& l : ls) out.push_back(pad + l);
  }
  return out;
}
// A cell's text: nothing for None or an empty container, as Flax's _as_yaml_str.
std::string yaml_text(const Tree& t) {
  const Tree& u = t.is_box() ? t.box_value() : t;
  if (u.is_none() || (!u.is_leaf() && !nonempty_container(u))) return "";
  std::string s;
  for (const auto& l : yaml_lines(t)) s += (s.empty() ? "" : "\n") + l;
  return s;
}

// flax.linen.summary._bytes_repr / _size_and_bytes_repr.
std::string size_bytes(std::int64_t size, std::int64_t bytes) {
  if (size == 0) return "";
  auto group = [](std::int64_t n) {  // 1234567 -> 1,234,567
    const std::string d = std::to_string(n);
    std::string s;
    for (std::size_t i = 0; i < d.size(); ++i) {
      if (i > 0 && (d.size() - i) % 3 == 0) s += ',';
      s += d[i];
    }
    return s;
  };
  char buf[64];
  std::string b;
  if (bytes > 1000000000)
    std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9), b = buf;
  else if (bytes > 1000000)
    std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6), b = buf;
  else if (bytes > 1000)
    std::snprintf(buf, sizeof buf, "%.1f KB", bytes / 1e3), b = buf;
  else
    b = group(bytes) + " B";
  return group(size) + " (" + b + ")";
}

const Tree* at_path(const Tree& t, const Path& p) {
  const Tree* n = &t;
  for (const auto& k : p) {
    if (!n->is_dict() || !n->contains(k)) return nullptr;
    n = &(*n)[k];
  }
  return n;
}

void count_leaves(const Tree& t, std::int64_t& size, std::int64_t& bytes) {
  for (const auto& a : pytree::tree_leaves<Array>(t)) {
    size += a.size();
    bytes += a.size() * static_cast<std::int64_t>(itemsize(a.dtype()));
  }
}

// The variables of one module, as Flax's _get_module_variables: what lies at `path`, less the
// entries that are modules with a recorded call (shown in their own rows); keys sorted, as Flax's
// tabulate sees them after jax.eval_shape.
Tree own_variables(const Tree& node, const Path& path, const std::set<Path>& call_paths) {
  std::vector<std::pair<std::string, Tree>> own;
  for (const auto& [k, v] : node.as_dict()) {
    Path sub = path;
    sub.push_back(k);
    if (!call_paths.contains(sub)) own.emplace_back(k, v);
  }
  std::sort(own.begin(), own.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  Tree out = Tree::dict();
  for (auto& [k, v] : own) out[k] = std::move(v);
  return out;
}

// Splits a cell's text into lines.
std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string l;
  while (std::getline(ss, l)) out.push_back(l);
  if (out.empty()) out.emplace_back();
  return out;
}

std::string repeat(const std::string& s, std::size_t n) {
  std::string r;
  for (std::size_t i = 0; i < n; ++i) r += s;
  return r;
}
}  // namespace

std::string render_tabulate(const std::vector<TabulateCall>& calls, const Tree& variables,
                            const TabulateOptions& opts) {
  std::vector<std::string> cols;
  for (const auto& [c, v] : variables.as_dict())
    if (c != "intermediates") cols.push_back(c);
  std::set<Path> call_paths;
  for (const auto& c : calls) call_paths.insert(c.path);

  // One row per module, its first call in call order (Flax's show_repeated=False). A function-form
  // transform's body (nn::scan(fn)(cell, ...), as RNN runs its cell) is no method of the module:
  // Flax skips those calls.
  std::vector<const TabulateCall*> rows;
  std::set<Path> shown;
  for (const auto& c : calls) {
    if (c.method == "<lambda>" || shown.contains(c.path)) continue;
    if (opts.depth && static_cast<int>(c.path.size()) > *opts.depth) continue;
    shown.insert(c.path);
    rows.push_back(&c);
  }

  const std::string root_type = rows.empty() ? std::string() : rows.front()->type;
  std::vector<std::string> header{"path", "module", "inputs", "outputs"};
  header.insert(header.end(), cols.begin(), cols.end());
  std::vector<std::vector<std::string>> table;
  for (const TabulateCall* r : rows) {
    std::vector<std::string> cells;
    cells.push_back(join(r->path));
    // Flax names a method other than __call__ in the module column: "Foo (encode)".
    cells.push_back(r->type + (r->method == "__call__" ? "" : " (" + r->method + ")"));
    cells.push_back(yaml_text(r->inputs));
    cells.push_back(yaml_text(r->outputs));
    const bool folded = opts.depth && static_cast<int>(r->path.size()) == *opts.depth;
    for (const auto& col : cols) {
      const Tree* node = at_path(variables[col], r->path);
      std::string cell;
      if (node && node->is_dict()) {
        const Tree own = own_variables(*node, r->path, call_paths);
        cell = yaml_text(own);
        // A row cut by depth counts everything below it.
        std::int64_t size = 0, bytes = 0;
        count_leaves(folded ? *node : own, size, bytes);
        if (size > 0) cell += (cell.empty() ? "" : "\n\n") + size_bytes(size, bytes);
      }
      cells.push_back(cell);
    }
    table.push_back(std::move(cells));
  }
  // Totals per collection (the footer) and over all of them (the caption).
  std::vector<std::string> footer{"", "", "", "Total"};
  std::int64_t all_size = 0, all_bytes = 0;
  for (const auto& col : cols) {
    std::int64_t size = 0, bytes = 0;
    count_leaves(variables[col], size, bytes);
    all_size += size;
    all_bytes += bytes;
    footer.push_back(size_bytes(size, bytes));
  }

  // Column widths over header, rows and footer (cells are ASCII; borders are box drawing).
  const std::size_t ncol = header.size();
  std::vector<std::size_t> w(ncol, 0);
  auto widen = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < ncol; ++c)
      for (const auto& l : lines_of(cells[c])) w[c] = std::max(w[c], l.size());
  };
  widen(header);
  for (const auto& r : table) widen(r);
  widen(footer);
  auto rule = [&](const char* l, const char* m, const char* r, const char* h) {
    std::string s = l;
    for (std::size_t c = 0; c < ncol; ++c) s += repeat(h, w[c] + 2) + (c + 1 < ncol ? m : r);
    return s + "\n";
  };
  auto line = [&](const std::vector<std::string>& cells, const char* bar, bool right_last_text) {
    std::vector<std::vector<std::string>> ls;
    std::size_t h = 1;
    for (const auto& c : cells) {
      ls.push_back(lines_of(c));
      h = std::max(h, ls.back().size());
    }
    std::string s;
    for (std::size_t i = 0; i < h; ++i) {
      s += bar;
      for (std::size_t c = 0; c < ncol; ++c) {
        const std::string t = i < ls[c].size() ? ls[c][i] : "";
        const std::string pad(w[c] - t.size(), ' ');
        // The footer's "Total" is right-justified in its column, as Flax's.
        s += ' ';
        s += right_last_text && c == 3 ? pad + t : t + pad;
        s += ' ';
        s += bar;
      }
      s += "\n";
    }
    return s;
  };
  std::size_t width = 1;
  for (auto x : w) width += x + 3;
  auto centered = [&](const std::string& text) {
    const std::size_t pad = text.size() < width ? (width - text.size()) / 2 : 0;
    return std::string(pad, ' ') + text + "\n";
  };

  // Flax returns '\n' + the rendered table + '\n'.
  std::string s = "\n" + centered(root_type + " Summary");
  s += rule("┏", "┳", "┓", "━");
  s += line(header, "┃", false);
  s += rule("┡", "╇", "┩", "━");
  for (std::size_t i = 0; i < table.size(); ++i) {
    s += line(table[i], "│", false);
    s += rule("├", "┼", "┤", "─");
  }
  s += line(footer, "│", true);
  s += rule("└", "┴", "┘", "─");
  s += "\n" + centered("Total Parameters: " + size_bytes(all_size, all_bytes));
  return s + "\n";
}

}  // namespace linum::nn::detail
