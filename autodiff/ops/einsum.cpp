// jnp.einsum for one or two operands: indices summed out of one operand are reduced first, the
// rest becomes one dot_general (shared output indices as batch dims) and a transpose.
#include <algorithm>
#include <cctype>
#include <map>

#include <linum/autodiff/ops/linalg.hpp>
#include <linum/autodiff/ops/reduction.hpp>
#include <linum/autodiff/ops/shape.hpp>

namespace linum {

namespace {

// An index is a letter ('a'..'z', 'A'..'Z') or an ellipsis dim counted from the right: the
// ellipsis dims of every operand align on the right, as numpy broadcasts them.
using Index = int;
constexpr Index kEllipsis = 1000;
using Term = std::vector<Index>;

[[noreturn]] void fail(const std::string& subscripts, const std::string& why) {
  throw ValueError("einsum: " + why + " (subscripts '" + subscripts + "')");
}

// One operand's (or the output's) subscripts, with `...` replaced by `ellipsis_dims` indices.
Term parse_term(const std::string& subscripts, const std::string& t, int ellipsis_dims) {
  Term out;
  bool seen_ellipsis = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '.') {
      if (t.compare(i, 3, "...") != 0 || seen_ellipsis)
        fail(subscripts, "'.' must appear only as one '...' per term");
      seen_ellipsis = true;
      for (int k = ellipsis_dims; k > 0; --k) out.push_back(kEllipsis + k);
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      out.push_back(c);
    } else {
      fail(subscripts, std::string("unexpected character '") + c + "'");
    }
  }
  return out;
}

int letters_in(const std::string& t) {
  return static_cast<int>(std::count_if(
      t.begin(), t.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }));
}

std::string index_name(Index i) { return i >= kEllipsis ? "..." : std::string(1, char(i)); }

}  // namespace

Array einsum(const std::string& subscripts_in, const Arrays& operands) {
  std::string s;
  for (char c : subscripts_in)
    if (c != ' ') s += c;
  if (operands.empty() || operands.size() > 2)
    fail(subscripts_in,
         "linum contracts one or two operands, got " + std::to_string(operands.size()));
  const auto arrow = s.find("->");
  const std::string lhs = s.substr(0, arrow);
  std::vector<std::string> terms;
  for (std::size_t start = 0;;) {
    const auto comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != operands.size())
    fail(subscripts_in, std::to_string(terms.size()) + " operand terms for " +
                            std::to_string(operands.size()) + " operands");

  // Parse each operand's term; count its ellipsis dims from its rank.
  std::vector<Term> in;
  int ellipsis = 0;
  std::map<Index, std::int64_t> size;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    const Array& x = operands[k];
    const bool has_ellipsis = terms[k].find("...") != std::string::npos;
    const int named = letters_in(terms[k]);
    const int e = x.ndim() - named;
    if (e < 0 || (e > 0 && !has_ellipsis))
      fail(subscripts_in, "operand " + std::to_string(k) + " has shape " + shape_str(x.shape()) +
                              " but its term '" + terms[k] + "' names " + std::to_string(named) +
                              " axes");
    in.push_back(parse_term(subscripts_in, terms[k], e));
    ellipsis = std::max(ellipsis, e);
    for (int a = 0; a < x.ndim(); ++a) {
      const Index id = in[k][a];
      if (std::count(in[k].begin(), in[k].end(), id) > 1)
        fail(subscripts_in, "index '" + index_name(id) + "' repeats within operand " +
                                std::to_string(k) + " (diagonals are not supported)");
      const std::int64_t d = x.shape(a);
      auto [it, fresh] = size.emplace(id, d);
      if (!fresh && it->second != d && it->second != 1 && d != 1)
        fail(subscripts_in, "index '" + index_name(id) + "' has sizes " +
                                std::to_string(it->second) + " and " + std::to_string(d));
      if (!fresh) it->second = std::max(it->second, d);
    }
  }

  // The output: explicit, or numpy's implicit form (ellipsis dims, then once-used letters sorted).
  Term out;
  if (arrow != std::string::npos) {
    const std::string ot = s.substr(arrow + 2);
    if (ot.find("...") == std::string::npos && ellipsis > 0)
      fail(subscripts_in, "the output must keep the '...' dims of the operands");
    out = parse_term(subscripts_in, ot, ellipsis);
    for (Index id : out) {
      if (!size.contains(id))
        fail(subscripts_in, "output index '" + index_name(id) + "' is in no operand");
      if (std::count(out.begin(), out.end(), id) > 1)
        fail(subscripts_in, "output index '" + index_name(id) + "' repeats");
    }
  } else {
    for (int k = ellipsis; k > 0; --k) out.push_back(kEllipsis + k);
    std::map<Index, int> uses;
    for (const auto& t : in)
      for (Index id : t) ++uses[id];
    for (const auto& [id, n] : uses)
      if (id < kEllipsis && n == 1) out.push_back(id);
  }
  auto in_term = [](const Term& t, Index id) {
    return std::find(t.begin(), t.end(), id) != t.end();
  };

  // Broadcast size-1 axes, then sum out what only this operand has and the output drops.
  Arrays xs;
  std::vector<Term> ts;
  for (std::size_t k = 0; k < in.size(); ++k) {
    Array x = operands[k];
    Shape full;
    for (Index id : in[k]) full.push_back(size[id]);
    if (full != x.shape()) x = broadcast_to(x, full);
    std::vector<int> drop;
    Term kept;
    for (int a = 0; a < x.ndim(); ++a) {
      const Index id = in[k][a];
      const bool elsewhere = in.size() == 2 && in_term(in[1 - k], id);
      if (!in_term(out, id) && !elsewhere)
        drop.push_back(a);
      else
        kept.push_back(id);
    }
    if (!drop.empty()) x = sum(x, Axes(drop));
    xs.push_back(x);
    ts.push_back(kept);
  }

  Array r;
  Term rt;
  if (xs.size() == 1) {
    r = xs[0];
    rt = ts[0];
  } else {
    DotDimensionNumbers d;
    for (int a = 0; a < xs[0].ndim(); ++a) {
      const Index id = ts[0][a];
      const auto b = std::find(ts[1].begin(), ts[1].end(), id);
      if (b == ts[1].end()) continue;
      const int bi = static_cast<int>(b - ts[1].begin());
      if (in_term(out, id)) {
        d.lhs_batch.push_back(a);
        d.rhs_batch.push_back(bi);
        rt.push_back(id);
      } else {
        d.lhs_contract.push_back(a);
        d.rhs_contract.push_back(bi);
      }
    }
    for (int k = 0; k < 2; ++k)
      for (Index id : ts[k])
        if (!in_term(ts[1 - k], id)) rt.push_back(id);
    r = dot_general(xs[0], xs[1], d);
  }
  std::vector<int> perm;
  for (Index id : out)
    perm.push_back(static_cast<int>(std::find(rt.begin(), rt.end(), id) - rt.begin()));
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int(i);
  return identity ? r : transpose(r, perm);
}

Array einsum(const std::string& subscripts, const Array& a) {
  return einsum(subscripts, Arrays{a});
}
Array einsum(const std::string& subscripts, const Array& a, const Array& b) {
  return einsum(subscripts, Arrays{a, b});
}

}  // namespace linum
