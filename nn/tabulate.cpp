// tabulate's rendering: one row per module in the order calls start (parents before children),
// cells as Flax's yaml of value representations (float32[16,9]), a rich-style box table with a
// line between rows.
#include <linum/nn/tabulate.hpp>

#include <linum/nn/serialization.hpp>

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
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
  // A keyword argument's Python scalar (keyword_bool) prints as its text.
  if (auto text = serialization::str_value(t)) return {*text};
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

// Characters on the console: every character here is one column wide (UTF-8 continuation bytes
// do not count).
std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// rich's Console width: $COLUMNS, else the terminal on stdin, stdout or stderr, else 80.
std::size_t console_width(const std::optional<int>& width) {
  if (width) {
    if (*width < 1)
      throw ValueError("nn::tabulate: width must be positive, got " + std::to_string(*width));
    return static_cast<std::size_t>(*width);
  }
  if (const char* env = std::getenv("COLUMNS"); env && *env) {
    const std::string v(env);
    if (std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); }) &&
        v.size() < 6 && std::stoi(v) > 0)
      return static_cast<std::size_t>(std::stoi(v));
  }
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    winsize ws{};
    if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  }
  return 80;
}

// rich.text's measure of a cell's widest extent: its longest line (the fitting below uses only
// the maximum of rich's (longest word, longest line) measure).
std::size_t longest_line(const std::string& text) {
  std::size_t longest = 0, line = 0;
  for (char c : text + "\n") {
    if (c == '\n') {
      longest = std::max(longest, line);
      line = 0;
    } else {
      ++line;
    }
  }
  return longest;
}

// rich's ratio_reduce: takes `total` off `values` in proportion to `ratios`, at most `maximums`
// each (Python's round: halves to even).
std::vector<std::size_t> ratio_reduce(std::size_t total, std::vector<std::size_t> ratios,
                                      const std::vector<std::size_t>& maximums,
                                      const std::vector<std::size_t>& values) {
  for (std::size_t i = 0; i < ratios.size(); ++i)
    if (!maximums[i]) ratios[i] = 0;
  std::size_t total_ratio = 0;
  for (auto r : ratios) total_ratio += r;
  if (!total_ratio) return values;
  std::size_t remaining = total;
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (ratios[i] && total_ratio > 0) {
      const double share = static_cast<double>(ratios[i]) * static_cast<double>(remaining) /
                           static_cast<double>(total_ratio);
      const auto distributed =
          std::min(maximums[i], static_cast<std::size_t>(std::nearbyint(share)));
      out.push_back(values[i] - distributed);
      remaining -= distributed;
      total_ratio -= ratios[i];
    } else {
      out.push_back(values[i]);
    }
  }
  return out;
}

// rich's Table._calculate_column_widths for a table of wrappable columns with one space of
// padding on each side and a border between and around them: each column as wide as its
// longest line; while too wide, the widest columns are narrowed towards the next widest
// (_collapse_widths), then all columns evenly. Returns the text widths (without padding).
std::vector<std::size_t> fit_column_widths(const std::vector<const std::vector<std::string>*>& rows,
                                           std::size_t console) {
  const std::size_t ncol = rows.front()->size();
  const std::size_t extra = ncol + 1;  // the borders
  const std::size_t max_width = console > extra ? console - extra : 0;
  std::vector<std::size_t> natural(ncol, 0);
  for (const auto* r : rows)
    for (std::size_t c = 0; c < ncol; ++c)
      natural[c] = std::max(natural[c], std::min(longest_line((*r)[c]) + 2, max_width));
  std::vector<std::size_t> widths = natural;
  for (auto& x : widths) x = std::max<std::size_t>(x, 1);
  auto sum = [](const std::vector<std::size_t>& v) {
    return std::accumulate(v.begin(), v.end(), std::size_t{0});
  };
  if (std::size_t total = sum(widths); total > max_width) {
    while (total > max_width) {
      const std::size_t excess = total - max_width;
      const std::size_t widest = *std::max_element(widths.begin(), widths.end());
      std::size_t second = 0;
      for (auto x : widths)
        if (x != widest) second = std::max(second, x);
      const std::size_t difference = widest - second;
      if (!difference) break;
      std::vector<std::size_t> ratios(ncol);
      for (std::size_t c = 0; c < ncol; ++c) ratios[c] = widths[c] == widest;
      widths = ratio_reduce(excess, ratios,
                            std::vector<std::size_t>(ncol, std::min(excess, difference)), widths);
      total = sum(widths);
    }
    if (total > max_width)
      widths = ratio_reduce(total - max_width, std::vector<std::size_t>(ncol, 1), widths, widths);
    for (std::size_t c = 0; c < ncol; ++c) widths[c] = std::min(widths[c], natural[c]);
  }
  for (auto& x : widths) x = x >= 2 ? x - 2 : 0;
  return widths;
}

// A cell's lines at `width` columns as rich wraps a Text (overflow "ellipsis"): each line split
// before the word that no longer fits; a line still too wide loses its trailing spaces, then is
// cut to width - 1 characters and "…".
std::vector<std::string> wrap_cell(const std::string& text, std::size_t width) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string l;
  std::vector<std::string> source;
  while (std::getline(ss, l)) source.push_back(l);
  if (source.empty()) source.emplace_back();
  for (const std::string& line : source) {
    // Words as rich's regex \s*\S+\s*: leading spaces stay with the first word; a word is
    // measured without its trailing spaces and moves the offset with them (divide_line).
    std::vector<std::size_t> breaks;
    std::size_t offset = 0, i = 0;
    while (i < line.size()) {
      const std::size_t start = i;
      while (i < line.size() && line[i] == ' ') ++i;
      while (i < line.size() && line[i] != ' ') ++i;
      const std::size_t word_length = i - start;
      while (i < line.size() && line[i] == ' ') ++i;
      const std::size_t with_spaces = i - start;
      if (offset <= width && width - offset >= word_length) {
        offset += with_spaces;
      } else if (word_length > width || offset) {
        if (start) {
          breaks.push_back(start);
          offset = with_spaces;
        } else if (word_length > width) {
          offset = with_spaces;
        }
      }
    }
    breaks.push_back(line.size());
    std::size_t from = 0;
    for (std::size_t b : breaks) {
      std::string piece = line.substr(from, b - from);
      from = b;
      while (piece.size() > width && !piece.empty() && piece.back() == ' ') piece.pop_back();
      if (piece.size() > width) piece = piece.substr(0, width ? width - 1 : 0) + (width ? "…" : "");
      out.push_back(piece);
    }
  }
  return out;
}

std::string repeat(const std::string& s, std::size_t n) {
  std::string r;
  for (std::size_t i = 0; i < n; ++i) r += s;
  return r;
}
}  // namespace

Tree keyword_bool(bool b) { return serialization::str_leaf(b ? "True" : "False"); }

Tree inputs_with_keywords(Tree::seq_type args, std::vector<std::pair<std::string, Tree>> keywords) {
  std::sort(keywords.begin(), keywords.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  Tree kw = Tree::dict();
  for (auto& [k, v] : keywords) kw[k] = std::move(v);
  args.push_back(std::move(kw));
  return Tree::tuple(std::move(args));
}

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

  // Column widths fitted to the console as rich fits them (cells are ASCII but for the "…" of a
  // cut word; borders are box drawing).
  const std::size_t ncol = header.size();
  std::vector<const std::vector<std::string>*> all_rows{&header};
  for (const auto& r : table) all_rows.push_back(&r);
  all_rows.push_back(&footer);
  const std::vector<std::size_t> w = fit_column_widths(all_rows, console_width(opts.width));
  auto rule = [&](const char* l, const char* m, const char* r, const char* h) {
    std::string s = l;
    for (std::size_t c = 0; c < ncol; ++c) s += repeat(h, w[c] + 2) + (c + 1 < ncol ? m : r);
    return s + "\n";
  };
  auto line = [&](const std::vector<std::string>& cells, const char* bar, bool right_last_text) {
    std::vector<std::vector<std::string>> ls;
    std::size_t h = 1;
    for (const auto& c : cells) {
      ls.push_back(wrap_cell(c, w[ls.size()]));
      h = std::max(h, ls.back().size());
    }
    std::string s;
    for (std::size_t i = 0; i < h; ++i) {
      s += bar;
      for (std::size_t c = 0; c < ncol; ++c) {
        const std::string t = i < ls[c].size() ? ls[c][i] : "";
        const std::string pad(w[c] - display_width(t), ' ');
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
