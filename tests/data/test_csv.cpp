// Numeric CSV: headers, delimiters, skipped and comment lines, dtypes, missing values, and errors
// naming the file, line, column and byte offset. (numpy_interop.py reads np.savetxt's files.)
#include <cmath>

#include "data_testing.hpp"

namespace test_csv {

namespace data = linum::data;
using namespace data_test;

namespace {

data::CsvTable read(const std::string& text, const data::CsvOptions& o = {}) {
  const std::string p = temp_path("t.csv");
  write_bytes(p, text);
  return data::read_csv(p, o);
}

std::string error(const std::string& text, const data::CsvOptions& o = {}) {
  return message_of<linum::Error>([&] { read(text, o); });
}

}  // namespace

TEST_CASE("read_csv: rows of numbers, a header, CRLF, blank and comment lines") {
  CHECK(values(data::load_csv((write_bytes(temp_path("t.csv"), "1,2\n"), temp_path("t.csv")))) ==
        Vec{1, 2});
  data::CsvOptions o;
  o.header = true;
  data::CsvTable t =
      read("x, y ,\"z\"\r\n1,2.5,-3\r\n\r\n# a comment\n+4, 5e-1 ,6 # trailing note\n", o);
  CHECK(t.columns == std::vector<std::string>{"x", "y", "z"});
  CHECK(t.values.dtype() == linum::float32);
  CHECK(t.values.shape() == linum::Shape{2, 3});
  CHECK(values(t.values) == Vec{1, 2.5, -3, 4, 0.5, 6});
  // Without a header, a single column is still 2-D; a last line without '\n' counts.
  t = read("7\n8");
  CHECK(t.columns.empty());
  CHECK(t.values.shape() == linum::Shape{2, 1});
  CHECK(values(t.values) == Vec{7, 8});
  // An empty file (or only a header) gives zero rows.
  CHECK(read("").values.shape() == linum::Shape{0, 0});
  CHECK(read("a,b\n", o).values.shape() == linum::Shape{0, 2});
}

TEST_CASE("read_csv: delimiter, skip_rows, dtypes and special values") {
  data::CsvOptions o;
  o.delimiter = '\t';
  o.skip_rows = 2;
  o.dtype = linum::float64;
  data::CsvTable t = read("junk line, not numbers\nmore junk\n0.1\t1e300\n-inf\tnan\n", o);
  REQUIRE(t.values.shape() == linum::Shape{2, 2});
  Vec v = values(t.values);
  CHECK(v[0] == 0.1);  // exact decimal-to-double conversion, not float32's
  CHECK(v[1] == 1e300);
  CHECK(v[2] == -INFINITY);
  CHECK(std::isnan(v[3]));
  o = {};
  o.dtype = linum::int32;
  CHECK(values(read("-2147483648,2147483647\n", o).values) == Vec{-2147483648.0, 2147483647.0});
  Array i = read("1,-2\n3,4\n", o).values;
  CHECK(i.dtype() == linum::int32);
  CHECK(values(i) == Vec{1, -2, 3, 4});
  o.dtype = linum::uint32;
  CHECK(values(read("4294967295\n", o).values) == Vec{4294967295.0});
  o.dtype = linum::bool_;
  Array b = read("0,1\n", o).values;
  CHECK(b.dtype() == linum::bool_);
  CHECK(values(b) == Vec{0, 1});
}

TEST_CASE("read_csv: missing values are errors unless CsvOptions::missing fills them") {
  const std::string p = temp_path("t.csv");
  check_error<linum::ValueError>(
      [] { read("1,2,3\n4,,6\n"); },
      {"read_csv: " + p + ": at byte 8: line 2, column 2: missing value"});
  data::CsvOptions o;
  o.missing = NAN;
  Vec v = values(read("1,2,3\n4,,\n", o).values);
  CHECK(v[0] == 1);
  CHECK(v[3] == 4);
  CHECK(std::isnan(v[4]));
  CHECK(std::isnan(v[5]));
  o.dtype = linum::int32;
  check_error<linum::ValueError>([&] { read("1\n", o); },
                                 {"missing value nan is not a valid int32"});
  o.missing = -1;
  CHECK(values(read("1,\n", o).values) == Vec{1, -1});
}

TEST_CASE("read_csv: ragged rows, non-numbers and out-of-range values name line, column, byte") {
  const std::string p = temp_path("t.csv");
  CHECK(error("1,2\n3,4,5\n")
            .find("read_csv: " + p +
                  ": at byte 4: line 2: a row of 3 fields where the rows have 2") == 0);
  data::CsvOptions h;
  h.header = true;
  CHECK(error("a,b\n1\n", h).find("line 2: a row of 1 fields where the header has 2") !=
        std::string::npos);
  CHECK(error("1,2\n3,abc\n").find("at byte 6: line 2, column 2: 'abc' is not a number") !=
        std::string::npos);
  CHECK(error("1,2x\n").find("'2x' is not a number") != std::string::npos);
  CHECK(error("1,--2\n").find("'--2' is not a number") != std::string::npos);
  CHECK(error("1e999\n").find("'1e999' is out of the range of float64") != std::string::npos);
  data::CsvOptions o;
  o.dtype = linum::int32;
  CHECK(error("1.5\n", o).find("'1.5' is not a valid int32 (not a whole number)") !=
        std::string::npos);
  CHECK(error("2147483648\n", o).find("is not a valid int32 (out of range)") != std::string::npos);
  o.dtype = linum::uint32;
  CHECK(error("-1\n", o).find("not a valid uint32 (out of range)") != std::string::npos);
  o.dtype = linum::bool_;
  CHECK(error("2\n", o).find("not a valid bool (bool takes 0 and 1)") != std::string::npos);
  o = {};
  o.skip_rows = -1;
  CHECK(error("1\n", o).find("skip_rows must be >= 0") != std::string::npos);
  std::filesystem::remove(p);
  check_error<linum::ValueError>([&] { data::load_csv(p + ".missing"); },
                                 {"read_csv: " + p + ".missing", "cannot open"});
}

}  // namespace test_csv
