// The linum half of numpy_interop.py: loads every file numpy wrote and checks it against the
// manifest (dtype, shape, exact values), checks that the files linum must refuse are refused
// with the right words, then writes linum's own files for numpy to check. Needs LINUM_NUMPY_DIR.
#include <cstdlib>
#include <sstream>

#include "data_testing.hpp"

namespace data = linum::data;
using namespace data_test;

namespace {

std::string dir() {
  const char* d = std::getenv("LINUM_NUMPY_DIR");
  REQUIRE_MESSAGE(d != nullptr, "run through numpy_interop.py, which sets LINUM_NUMPY_DIR");
  return d;
}

linum::DType dtype_named(const std::string& s) {
  for (linum::DType d :
       {linum::float16, linum::float32, linum::float64, linum::int32, linum::uint32, linum::bool_})
    if (linum::dtype_name(d) == s) return d;
  FAIL("unknown dtype " << s);
  return linum::float32;
}

// One manifest line: kind file key dtype shape values...
struct Expect {
  std::string kind, file, key;
  linum::DType dtype = linum::float32;
  linum::Shape shape;
  Vec values;
  std::string words;  // refused files: what the error must say
};

std::vector<Expect> manifest() {
  std::ifstream in(dir() + "/manifest.txt");
  REQUIRE(in.good());
  std::vector<Expect> out;
  std::string text;
  while (std::getline(in, text)) {
    std::istringstream ss(text);
    Expect e;
    ss >> e.kind >> e.file >> e.key;
    if (e.kind == "refused") {
      std::getline(ss >> std::ws, e.words);
    } else {
      std::string dtype, shape;
      ss >> dtype >> shape;
      e.dtype = dtype_named(dtype);
      if (shape != "-") {
        std::istringstream dims(shape);
        for (std::string d; std::getline(dims, d, ',');) e.shape.push_back(std::stoll(d));
      }
      // Python's repr: exact decimals, nan, inf, -inf (strtod reads them all).
      for (std::string v; ss >> v;) e.values.push_back(std::strtod(v.c_str(), nullptr));
    }
    out.push_back(e);
  }
  return out;
}

// Equality that takes NaN as equal to NaN and tells -0.0 from 0.0.
bool same(const Vec& a, const Vec& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (a[i] != b[i] || std::signbit(a[i]) != std::signbit(b[i])) return false;
  }
  return true;
}

// numpy_interop.py's vals: k*37 % 101 - 50 (int32), k*37 % 101 (uint32), /8 (floats), k%3==0.
Array vals(linum::DType d, const linum::Shape& shape) {
  const std::int64_t n = linum::shape_size(shape);
  Vec v;
  for (std::int64_t k = 0; k < n; ++k) {
    const double u = static_cast<double>(k * 37 % 101);
    v.push_back(d == linum::bool_    ? k % 3 == 0
                : d == linum::uint32 ? u
                : d == linum::int32  ? u - 50
                                     : (u - 50) / 8);
  }
  return linum::astype(linum::array(v, shape), d);
}

}  // namespace

TEST_CASE(
    "numpy's .npy, .npz and CSV files load as numpy wrote them; unsupported ones are refused") {
  std::map<std::string, std::map<std::string, Array>> archives;
  int checked = 0;
  for (const Expect& e : manifest()) {
    const std::string path = dir() + "/" + e.file;
    CAPTURE(path);
    CAPTURE(e.key);
    if (e.kind == "refused") {
      const std::string msg = message_of<linum::Error>([&] { data::load_npy(path); });
      CHECK(msg.find("load_npy: " + path + ": at byte ") == 0);
      CHECK(msg.find(e.words) != std::string::npos);
      continue;
    }
    Array a;
    if (e.kind == "npy") {
      a = data::load_npy(path);
    } else if (e.kind == "npz") {
      if (!archives.count(e.file)) archives[e.file] = data::load_npz(path);
      REQUIRE(archives[e.file].count(e.key));
      a = archives[e.file].at(e.key);
    } else {
      data::CsvOptions o;
      o.dtype = e.dtype;
      if (e.key == "header") {
        o.delimiter = ';';
        o.header = true;
      }
      const data::CsvTable t = data::read_csv(path, o);
      if (e.key == "header") CHECK(t.columns == std::vector<std::string>{"a", "b", "c"});
      a = t.values;
    }
    CHECK(a.dtype() == e.dtype);
    CHECK(a.shape() == e.shape);
    CHECK(same(values(a), e.values));
    ++checked;
  }
  MESSAGE("checked " << checked << " arrays numpy wrote");
  CHECK(checked > 150);
}

TEST_CASE("linum writes .npy and .npz files for numpy to check") {
  linum::Shape wide = {1, 10, 10};  // numpy_interop.py's SHAPES, in order
  wide.resize(14, 1);
  const std::vector<linum::Shape> shapes = {{}, {0}, {7}, {2, 3}, {2, 3, 4}, {0, 3}, wide};
  std::map<std::string, Array> members;
  for (linum::DType d :
       {linum::float32, linum::float64, linum::int32, linum::uint32, linum::bool_}) {
    const std::string name(linum::dtype_name(d));
    for (std::size_t s = 0; s < shapes.size(); ++s)
      data::save_npy(dir() + "/linum_" + name + "_" + std::to_string(s) + ".npy",
                     vals(d, shapes[s]));
    members[name] = vals(d, {2, 3, 4});
  }
  data::savez(dir() + "/linum_stored.npz", members);
  data::savez_compressed(dir() + "/linum_deflated.npz", members);
  // What linum wrote, linum reads back.
  for (const auto& [name, a] : data::load_npz(dir() + "/linum_deflated.npz"))
    CHECK(values(a) == values(members.at(name)));
}
