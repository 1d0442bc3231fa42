// Numeric CSV files (np.loadtxt / np.genfromtxt for numbers): one row per line, fields split by a
// delimiter, optionally a header line of column names, loaded as a [rows, columns] array.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <linum/autodiff/array.hpp>

namespace linum::data {

struct CsvOptions {
  char delimiter = ',';
  std::int64_t skip_rows = 0;  // lines dropped before anything else (np.loadtxt's skiprows)
  bool header = false;         // the first line after them names the columns
  char comment = '#';          // a line starting with it (after spaces) is skipped; '\0': none
  DType dtype = float32;       // integers must be whole and in range; bool takes 0 and 1
  // The value of an empty field (np.genfromtxt's filling_values, e.g. NaN); without one an
  // empty field is an error.
  std::optional<double> missing{};
};

struct CsvTable {
  std::vector<std::string> columns;  // from the header line; empty without one
  Array values;                      // [rows, columns]
};

// Blank lines are skipped; numbers are C-locale decimals ("1.5e-3", "-2", "+4", "nan", "inf").
// Ragged rows, non-numbers and missing values are ValueErrors naming the file, the line, the
// column and the byte offset.
CsvTable read_csv(const std::string& path, const CsvOptions& options = {});
// read_csv(...).values.
Array load_csv(const std::string& path, const CsvOptions& options = {});

}  // namespace linum::data
