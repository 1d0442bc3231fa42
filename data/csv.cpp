// Numeric CSV: the file is read whole, split into lines and fields, and each field parsed with
// from_chars (locale-independent), then checked against the requested dtype.
#include <linum/data/csv.hpp>

#include <charconv>
#include <cmath>
#include <limits>

#include "file_io.hpp"

namespace linum::data {
namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s, std::size_t& shift) {
  shift = 0;
  while (!s.empty() && blank(s.front())) {
    s.remove_prefix(1);
    ++shift;
  }
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

// A parsed row's fields with their file offsets.
struct Field {
  std::string_view text;
  std::uint64_t offset;
};

std::vector<Field> split(std::string_view line, std::uint64_t offset, char delimiter) {
  std::vector<Field> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = line.find(delimiter, start);
    std::size_t shift = 0;
    const std::string_view f =
        trim(line.substr(start, end == std::string_view::npos ? end : end - start), shift);
    fields.push_back({f, offset + start + shift});
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return fields;
}

class Reader {
 public:
  Reader(const std::string& path, const CsvOptions& o) : where_{"read_csv", path}, o_(o) {}

  // "line L, column C" before the offset: a CSV user counts lines, a debugger bytes.
  [[noreturn]] void fail(std::uint64_t offset, std::int64_t column, const std::string& what) const {
    where_.fail(offset, "line " + std::to_string(line_) +
                            (column ? ", column " + std::to_string(column) : std::string()) + ": " +
                            what);
  }

  // The field's value in the requested dtype, as a double that converts exactly.
  double value(const Field& f, std::int64_t column) const {
    if (f.text.empty()) {
      if (!o_.missing) fail(f.offset, column, "missing value (set CsvOptions::missing to fill it)");
      return *o_.missing;  // checked against the dtype in read()
    }
    // from_chars takes no leading '+', which numpy accepts.
    std::string_view t = f.text;
    if (t.size() > 1 && t[0] == '+' && t[1] != '-' && t[1] != '+') t.remove_prefix(1);
    double v;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec == std::errc::result_out_of_range)
      fail(f.offset, column, detail::quoted(f.text) + " is out of the range of float64");
    if (ec != std::errc() || end != t.data() + t.size())
      fail(f.offset, column, detail::quoted(f.text) + " is not a number");
    if (const char* why = invalid(v))
      fail(f.offset, column,
           detail::quoted(f.text) + " is not a valid " + std::string(dtype_name(o_.dtype)) + " (" +
               why + ")");
    return v;
  }

  // Why v is not a value of the requested dtype, or nullptr.
  const char* invalid(double v) const {
    const DType d = o_.dtype;
    if (d == DType::int32 || d == DType::uint32) {
      const double lo = d == DType::int32 ? std::numeric_limits<std::int32_t>::min() : 0.0;
      const double hi = d == DType::int32 ? std::numeric_limits<std::int32_t>::max()
                                          : std::numeric_limits<std::uint32_t>::max();
      if (!std::isfinite(v) || v != std::trunc(v)) return "not a whole number";
      if (v < lo || v > hi) return "out of range";
    } else if (d == DType::bool_ && v != 0 && v != 1) {
      return "bool takes 0 and 1";
    }
    return nullptr;
  }

  CsvTable read() {
    if (o_.skip_rows < 0)
      throw ValueError("read_csv: skip_rows must be >= 0, got " + std::to_string(o_.skip_rows));
    if (o_.missing)
      if (const char* why = invalid(*o_.missing))
        throw ValueError("read_csv: the missing value " + std::to_string(*o_.missing) +
                         " is not a valid " + std::string(dtype_name(o_.dtype)) + " (" + why + ")");
    const auto file = detail::read_file("read_csv", where_.file);
    const std::string_view text = *file;
    CsvTable table;
    std::vector<double> values;
    std::int64_t columns = -1, rows = 0;
    bool header_pending = o_.header;
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(pos, end - pos);
      const std::uint64_t offset = pos;
      pos = end + 1;
      ++line_;
      if (line_ <= o_.skip_rows) continue;
      if (o_.comment) {
        const std::size_t c = line.find(o_.comment);
        if (c != std::string_view::npos) line = line.substr(0, c);
      }
      std::size_t shift;
      if (trim(line, shift).empty()) continue;
      std::vector<Field> fields = split(line, offset, o_.delimiter);
      const auto n = static_cast<std::int64_t>(fields.size());
      if (header_pending) {
        header_pending = false;
        for (const Field& f : fields) {
          std::string_view name = f.text;
          if (name.size() >= 2 && name.front() == '"' && name.back() == '"')
            name = name.substr(1, name.size() - 2);
          table.columns.emplace_back(name);
        }
        columns = n;
        continue;
      }
      if (columns >= 0 && n != columns)
        fail(offset, 0,
             "a row of " + std::to_string(n) + " fields where " +
                 (o_.header && rows == 0 ? "the header has " : "the rows have ") +
                 std::to_string(columns));
      columns = n;
      for (std::int64_t c = 0; c < n; ++c) values.push_back(value(fields[c], c + 1));
      ++rows;
    }
    table.values = linum::detail::from_buffer(
        values.data(), {rows, std::max<std::int64_t>(columns, 0)}, float64, o_.dtype);
    return table;
  }

 private:
  detail::Where where_;
  const CsvOptions& o_;
  std::int64_t line_ = 0;
};

}  // namespace

CsvTable read_csv(const std::string& path, const CsvOptions& options) {
  return Reader(path, options).read();
}

Array load_csv(const std::string& path, const CsvOptions& options) {
  return read_csv(path, options).values;
}

}  // namespace linum::data
