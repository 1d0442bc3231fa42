// tabulate's rendering: rows in call order (parents before children), cells as Flax's yaml-ish
// value representations (float32[16,9]), a rich-style box table with a line between rows.
#include <linum/nn/tabulate.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
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
  s += "[";
  for (int i = 0; i < a.ndim(); ++i) s += (i ? "," : "") + std::to_string(a.shape(i));
  return s + "]";
}

// The leaves of a value, one per line ("- " before each when there are several).
std::vector<std::string> value_lines(const Tree& t) {
  std::vector<std::string> out;
  const auto leaves = pytree::tree_leaves<Array>(t);
  for (const auto& a : leaves) out.push_back((leaves.size() > 1 ? "- " : "") + value_repr(a));
  return out;
}

// flax.linen.summary._bytes_repr / _size_and_bytes_repr.
std::string size_bytes(std::int64_t size, std::int64_t bytes) {
  if (size == 0) return "";
  auto group = [](std::int64_t n) {
    std::string s = std::to_string(n);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
      s.insert(static_cast<std::size_t>(i), ",");
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

// Module paths that own a leaf in a collection (a dict holding a non-dict entry).
void owner_paths(const Tree& t, Path& cur, std::vector<Path>& out) {
  if (!t.is_dict()) return;
  bool owns = false;
  for (const auto& [k, v] : t.as_dict()) {
    if (v.is_dict()) {
      cur.push_back(k);
      owner_paths(v, cur, out);
      cur.pop_back();
    } else {
      owns = true;
    }
  }
  if (owns && std::find(out.begin(), out.end(), cur) == out.end()) out.push_back(cur);
}

struct Row {
  Path path;
  std::string type, method;
};

// Parents before children, siblings in the order their calls returned (post-order in, pre-order
// out: Flax numbers calls as they start).
std::vector<Row> preorder(std::vector<Row> rows) {
  std::map<Path, std::size_t> first;  // a path's position in the post-order list
  for (std::size_t i = 0; i < rows.size(); ++i) first.emplace(rows[i].path, i);
  auto rank = [&](const Path& p) {
    auto it = first.find(p);
    return it == first.end() ? rows.size() : it->second;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    const std::size_t n = std::min(a.path.size(), b.path.size());
    for (std::size_t d = 0; d < n; ++d) {
      if (a.path[d] == b.path[d]) continue;
      // Siblings at depth d: by when the subtree rooted there finished.
      const Path pa(a.path.begin(), a.path.begin() + static_cast<std::ptrdiff_t>(d + 1));
      const Path pb(b.path.begin(), b.path.begin() + static_cast<std::ptrdiff_t>(d + 1));
      return rank(pa) < rank(pb);
    }
    return a.path.size() < b.path.size();
  });
  return rows;
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
                            const std::vector<TabulateInputs>& inputs,
                            const TabulateOptions& opts) {
  std::vector<std::string> cols;
  for (const auto& [c, v] : variables.as_dict())
    if (c != "intermediates") cols.push_back(c);
  const Tree* im = variables.contains("intermediates") ? &variables["intermediates"] : nullptr;

  std::vector<Row> rows;
  for (const auto& c : calls) {
    // Repeated calls of a module (any method) are shown once, as Flax's show_repeated=False.
    const bool seen =
        std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return r.path == c.path; });
    if (!seen) rows.push_back({c.path, c.type, c.method});
  }
  // Modules holding variables whose calls were not captured (outputs that are not arrays).
  for (const auto& col : cols) {
    std::vector<Path> owners;
    Path cur;
    owner_paths(variables[col], cur, owners);
    for (const auto& p : owners)
      if (std::none_of(rows.begin(), rows.end(), [&](const Row& r) { return r.path == p; }))
        rows.push_back({p, "", "__call__"});
  }
  rows = preorder(std::move(rows));
  if (opts.depth) {
    std::erase_if(rows,
                  [&](const Row& r) { return static_cast<int>(r.path.size()) > *opts.depth; });
  }

  const std::string root_type = rows.empty() ? std::string() : rows.front().type;
  std::vector<std::string> header{"path", "module", "inputs", "outputs"};
  header.insert(header.end(), cols.begin(), cols.end());
  std::vector<std::vector<std::string>> table;
  for (const auto& r : rows) {
    std::vector<std::string> cells;
    cells.push_back(join(r.path) + (r.method == "__call__" ? "" : " (" + r.method + ")"));
    cells.push_back(r.type);
    // A module's first __call__ shows its inputs (other methods' arguments are not recorded).
    std::string in;
    const auto rec = std::find_if(inputs.begin(), inputs.end(),
                                  [&](const TabulateInputs& i) { return i.path == r.path; });
    if (r.method == "__call__" && rec != inputs.end()) {
      for (const auto& a : rec->inputs)
        in += (in.empty() ? "" : "\n") + std::string(rec->inputs.size() > 1 ? "- " : "") +
              value_repr(a);
    }
    cells.push_back(in);
    std::string out;
    if (im) {
      const Tree* node = at_path(*im, r.path);
      if (node && node->contains(r.method)) {
        const Tree& outs = (*node)[r.method];
        const Tree& first = outs.is_tuple() && outs.size() > 0 ? outs.items().front() : outs;
        for (const auto& l : value_lines(first)) out += (out.empty() ? "" : "\n") + l;
      }
    }
    cells.push_back(out);
    const bool folded = opts.depth && static_cast<int>(r.path.size()) == *opts.depth;
    for (const auto& col : cols) {
      const Tree* node = at_path(variables[col], r.path);
      std::string cell;
      std::int64_t size = 0, bytes = 0;
      if (node && node->is_dict()) {
        std::vector<std::string> own;
        for (const auto& [k, v] : node->as_dict()) {
          if (v.is_dict()) continue;
          for (const auto& l : value_lines(v)) own.push_back(k + ": " + l);
          count_leaves(v, size, bytes);
        }
        std::sort(own.begin(), own.end());
        for (const auto& l : own) cell += (cell.empty() ? "" : "\n") + l;
        // A row cut by depth shows the totals of everything below it.
        if (folded) {
          size = bytes = 0;
          count_leaves(*node, size, bytes);
        }
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
