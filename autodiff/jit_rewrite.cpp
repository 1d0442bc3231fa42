// Rewrites that batch the contractions of a loop unrolled into a program (scan under jit records
// every step's ops). A step's GEMMs are small (a batch of rows by a weight matrix), so
// - the products of every slice of an unstacked array by one operand (the input projection of
//   all steps) become one product of the whole array, unstacked;
// - a sum of products contracting a common dim (the weight gradient accumulated over the steps
//   of the backward loop) becomes one product of the operands concatenated along that dim.
// Each GEMM then runs once with all the steps' rows, and the sum happens inside it instead of as
// adds of whole gradient matrices.
#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/jit_program.hpp>
#include <linum/autodiff/ops/recorded_params.hpp>

namespace linum::detail {

namespace {

// Beyond this, a batched result (every step's at once) would cost more memory than it saves time.
constexpr std::int64_t kMaxBatchedBytes = std::int64_t{256} << 20;

bool batched_size_ok(const ShapeDtype& one, std::size_t n) {
  return shape_size(one.shape) * static_cast<std::int64_t>(itemsize(one.dtype)) *
             static_cast<std::int64_t>(n) <=
         kMaxBatchedBytes;
}

bool same_dims(const DotDimensionNumbers& a, const DotDimensionNumbers& b) {
  return a.lhs_contract == b.lhs_contract && a.rhs_contract == b.rhs_contract &&
         a.lhs_batch == b.lhs_batch && a.rhs_batch == b.rhs_batch;
}

// The dimension numbers of a dot_general eqn without batch dims, else nullptr.
const DotDimensionNumbers* plain_dot(const Eqn& e) {
  const DotDimensionNumbers* d = dot_general_dims(*e.prim);
  return d && d->lhs_batch.empty() ? d : nullptr;
}

// Which eqn defines each var (-1: an input or capture), which read it, and whether it is output.
struct Uses {
  std::vector<int> def;
  std::vector<std::vector<int>> readers;
  std::vector<char> output;

  explicit Uses(const Program& p)
      : def(p.num_vars, -1), readers(p.num_vars), output(p.num_vars, 0) {
    for (std::size_t k = 0; k < p.eqns.size(); ++k) {
      for (const Ref& r : p.eqns[k].in)
        if (r.var >= 0) readers[r.var].push_back(static_cast<int>(k));
      for (int v : p.eqns[k].out) def[v] = static_cast<int>(k);
    }
    for (const Ref& r : p.outputs)
      if (r.var >= 0) output[r.var] = 1;
  }
  // Whether r is available before eqn `at`.
  bool ready_before(const Ref& r, int at) const { return r.var < 0 || def[r.var] < at; }
};

// One pass's edits, applied at once: eqns to insert before an eqn of the program, eqns to drop,
// and vars whose readers read another var instead.
struct Edits {
  std::vector<std::pair<int, std::vector<Eqn>>> inserts;
  std::vector<char> drop;
  std::unordered_map<int, Ref> rename;  // a var read after the edits as another value

  explicit Edits(const Program& p) : drop(p.eqns.size(), 0) {}

  // Runs `record` (linum ops on ed's values, which append eqns to the program) and moves the
  // eqns it appended to just before eqn `at`.
  template <class F>
  void record_before(ProgramEditor& ed, int at, F record) {
    std::vector<Eqn>& eqns = ed.program().eqns;
    const std::size_t from = eqns.size();
    record();
    std::vector<Eqn> added(
        std::make_move_iterator(eqns.begin() + static_cast<std::ptrdiff_t>(from)),
        std::make_move_iterator(eqns.end()));
    eqns.resize(from);
    inserts.emplace_back(at, std::move(added));
  }

  void apply(Program& p) {
    std::stable_sort(inserts.begin(), inserts.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Eqn> out;
    std::size_t next = 0;
    auto insert_until = [&](std::size_t k) {
      for (; next < inserts.size() && static_cast<std::size_t>(inserts[next].first) <= k; ++next)
        for (Eqn& e : inserts[next].second) out.push_back(std::move(e));
    };
    for (std::size_t k = 0; k < p.eqns.size(); ++k) {
      insert_until(k);
      if (!drop[k]) out.push_back(std::move(p.eqns[k]));
    }
    insert_until(p.eqns.size());
    auto renamed = [&](Ref& r) {
      for (auto it = rename.find(r.var); r.var >= 0 && it != rename.end(); it = rename.find(r.var))
        r = it->second;
    };
    for (Eqn& e : out)
      for (Ref& r : e.in) renamed(r);
    for (Ref& r : p.outputs) renamed(r);
    p.eqns = std::move(out);
  }
};

// dims shifted past a new leading axis.
std::vector<int> shifted(std::vector<int> dims) {
  for (int& d : dims) ++d;
  return dims;
}

// The products of the slices of one unstack eqn by one other operand (`side`: the slice's
// position), with the same dimension numbers: eqn_of_slice[t] reads slice t (-1: none does).
struct SliceProducts {
  int side;
  Ref other;
  const DotDimensionNumbers* dims;
  std::vector<int> eqn_of_slice;
};

std::vector<SliceProducts> slice_products(const Program& p, const Uses& uses, const Eqn& u) {
  const std::size_t n = u.out.size();
  std::vector<SliceProducts> groups;
  for (std::size_t t = 0; t < n; ++t) {
    for (int r : uses.readers[u.out[t]]) {
      const Eqn& e = p.eqns[r];
      const DotDimensionNumbers* d = plain_dot(e);
      if (!d || e.in[0] == e.in[1]) continue;
      const int side = e.in[0].var == u.out[t] ? 0 : 1;
      const Ref& other = e.in[1 - side];
      auto g = std::find_if(groups.begin(), groups.end(), [&](const SliceProducts& g) {
        return g.side == side && g.other == other && same_dims(*g.dims, *d);
      });
      if (g == groups.end())
        g = groups.insert(groups.end(), SliceProducts{side, other, d, std::vector<int>(n, -1)});
      if (g->eqn_of_slice[t] < 0) g->eqn_of_slice[t] = r;
    }
  }
  return groups;
}

// dot_general(x, w) (or (w, x)) with g's dimension numbers shifted past x's leading axis, that
// axis first in the result: every slice's product at once.
Array product_of_all_slices(const Array& x, const Array& w, const SliceProducts& g) {
  DotDimensionNumbers d = *g.dims;
  if (g.side == 0) {
    d.lhs_contract = shifted(d.lhs_contract);
    return linum::dot_general(x, w, d);
  }
  // The slices' free dims follow w's in the product: the new axis comes after those.
  d.rhs_contract = shifted(d.rhs_contract);
  const int w_free = w.ndim() - static_cast<int>(d.lhs_contract.size());
  return linum::moveaxis(linum::dot_general(w, x, d), w_free, 0);
}

// Products dot_general(x[t], w) (or (w, x[t])) for every slice t of one whole unstack of x, with
// the same w and dimension numbers, become dot_general(x, w), unstacked: one GEMM with every
// slice's rows.
void batch_slice_products(ProgramEditor& ed) {
  Program& p = ed.program();
  const Uses uses(p);
  Edits edits(p);
  const std::size_t n_eqns = p.eqns.size();
  for (std::size_t k = 0; k < n_eqns; ++k) {
    const std::size_t n = p.eqns[k].out.size();
    if (std::string_view(p.eqns[k].prim->name()) != "unstack" || n < 2) continue;
    const Ref x_ref = p.eqns[k].in[0];
    const ShapeDtype xa = ed.aval(x_ref);
    if (xa.shape.empty() || xa.shape[0] != static_cast<std::int64_t>(n)) continue;  // a chunk
    for (const SliceProducts& g : slice_products(p, uses, p.eqns[k])) {
      if (std::count(g.eqn_of_slice.begin(), g.eqn_of_slice.end(), -1) > 0) continue;
      const int at = *std::min_element(g.eqn_of_slice.begin(), g.eqn_of_slice.end());
      const int out0 = p.eqns[g.eqn_of_slice[0]].out[0];
      if (!uses.ready_before(g.other, at) || !batched_size_ok(ed.aval(Ref{out0, -1}), n)) continue;
      std::vector<int> old_out;
      for (int e : g.eqn_of_slice) {
        old_out.push_back(p.eqns[e].out[0]);
        edits.drop[e] = 1;
      }
      edits.record_before(ed, at, [&] {
        const Arrays ys =
            unstack(product_of_all_slices(ed.value(x_ref), ed.value(g.other), g), "jit");
        for (std::size_t t = 0; t < n; ++t) edits.rename[old_out[t]] = ed.recorded(ys[t]);
      });
    }
  }
  edits.apply(p);
}

// The permutation that lays out side `side` of a product with dims d as its GEMM reads it without
// transposing (batch dims, then the free dims and the contracted ones of the lhs, the contracted
// dims and the free ones of the rhs), and d for the operand so permuted.
std::pair<std::vector<int>, DotDimensionNumbers> gemm_layout(const DotDimensionNumbers& d, int side,
                                                             int ndim) {
  const std::vector<int>& contract = side ? d.rhs_contract : d.lhs_contract;
  std::vector<int> free;
  for (int i = 0; i < ndim; ++i)
    if (std::find(contract.begin(), contract.end(), i) == contract.end()) free.push_back(i);
  std::vector<int> perm = side ? contract : free;
  const std::vector<int>& second = side ? free : contract;
  perm.insert(perm.end(), second.begin(), second.end());
  DotDimensionNumbers laid = d;
  std::vector<int>& c = side ? laid.rhs_contract : laid.lhs_contract;
  const int first = side ? 0 : static_cast<int>(free.size());
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = first + static_cast<int>(i);
  return {perm, laid};
}

// An operand that several products with the same dimension numbers read transposed (a weight
// every step of a loop multiplies by its transpose, as the backward pass of x·W does) is
// transposed once, so that each step's GEMM reads it as laid out instead of transposing or
// packing it again.
void lay_out_shared_operands(ProgramEditor& ed) {
  Program& p = ed.program();
  const Uses uses(p);
  Edits edits(p);
  struct Group {
    Ref operand;
    int side;
    const DotDimensionNumbers* dims;
    std::vector<int> eqns;
  };
  std::vector<Group> groups;
  for (std::size_t k = 0; k < p.eqns.size(); ++k) {
    const DotDimensionNumbers* d = plain_dot(p.eqns[k]);
    for (int side = 0; d && side < 2; ++side) {
      const Ref r = p.eqns[k].in[side];
      const std::vector<int> perm =
          gemm_layout(*d, side, static_cast<int>(ed.aval(r).shape.size())).first;
      bool identity = true;
      for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int(i);
      if (identity) continue;
      auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
        return g.operand == r && g.side == side && same_dims(*g.dims, *d);
      });
      if (g == groups.end()) g = groups.insert(groups.end(), Group{r, side, d, {}});
      g->eqns.push_back(static_cast<int>(k));
    }
  }
  for (const Group& g : groups) {
    if (g.eqns.size() < 2 || !uses.ready_before(g.operand, g.eqns[0])) continue;
    const auto [perm, laid] =
        gemm_layout(*g.dims, g.side, static_cast<int>(ed.aval(g.operand).shape.size()));
    Ref transposed;
    edits.record_before(ed, g.eqns[0], [&] {
      transposed = ed.recorded(linum::transpose(ed.value(g.operand), perm));
    });
    for (int k : g.eqns) {
      if (edits.drop[k]) continue;  // both operands of a product qualified: the first wins
      edits.drop[k] = 1;
      const Ref other = p.eqns[k].in[1 - g.side];
      const int old_out = p.eqns[k].out[0];
      edits.record_before(ed, k, [&] {
        const Array o = ed.value(other), t = ed.value(transposed);
        const Array y = g.side ? linum::dot_general(o, t, laid) : linum::dot_general(t, o, laid);
        edits.rename[old_out] = ed.recorded(y);
      });
    }
  }
  edits.apply(p);
}

// A term of a sum: a product eqn whose only reader is the sum.
struct Term {
  int eqn;
  Ref lhs, rhs;
};

// Sums (trees of adds whose inner values have no other reader) of products with the same
// dimension numbers and operand shapes, contracting some dims i of the lhs and j of the rhs,
// become one product of the lhs operands concatenated along i and the rhs ones along j.
class SummedProducts {
 public:
  explicit SummedProducts(ProgramEditor& ed) : ed_(ed), p_(ed.program()), uses_(p_), edits_(p_) {}

  void run() {
    for (std::size_t k = 0; k < p_.eqns.size(); ++k)
      if (is_add(static_cast<int>(k)) && inner_add(p_.eqns[k].out[0]) < 0)
        collect(static_cast<int>(k));
    // Groups with an unstacked side first: their order (the slices') is then the one the others
    // reuse for a side they share, so that side is concatenated once.
    std::stable_partition(pending_.begin(), pending_.end(),
                          [&](const Pending& g) { return unstacked_side(g.terms) >= 0; });
    for (Pending& g : pending_)
      trees_[g.tree].sums.push_back(batch(g.terms, *g.dims, trees_[g.tree].root));
    for (Tree& t : trees_) {
      const int root_out = p_.eqns[t.root].out[0];
      edits_.record_before(ed_, t.root, [&] {
        Array sum = ed_.value(t.sums[0]);
        for (std::size_t i = 1; i < t.sums.size(); ++i) sum = linum::add(sum, ed_.value(t.sums[i]));
        for (const Ref& r : t.rest) sum = linum::add(sum, ed_.value(r));
        edits_.rename[root_out] = ed_.recorded(sum);
      });
    }
    edits_.apply(p_);
  }

 private:
  struct Tree {
    int root;
    std::vector<Ref> rest;  // leaves that are not batched terms
    std::vector<Ref> sums;  // the batched products, once recorded
  };
  struct Pending {
    std::size_t tree;
    std::vector<Term> terms;
    const DotDimensionNumbers* dims;
  };

  // The sum whose root is the add `root`: its leaves, grouped into batchable products.
  void collect(int root) {
    std::vector<int> nodes{root};
    std::vector<Ref> leaves;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      for (const Ref& r : p_.eqns[nodes[i]].in) {
        const int inner = r.var >= 0 ? inner_add(r.var) : -1;
        if (inner >= 0)
          nodes.push_back(inner);
        else
          leaves.push_back(r);
      }
    Tree tree{root, {}, {}};
    std::vector<Pending> groups;
    for (const Ref& l : leaves) {
      const DotDimensionNumbers* d = product_term(l);
      if (!d) {
        tree.rest.push_back(l);
        continue;
      }
      auto g = std::find_if(groups.begin(), groups.end(),
                            [&](const Pending& g) { return like(g, l, *d); });
      if (g == groups.end()) g = groups.insert(groups.end(), Pending{trees_.size(), {}, d});
      g->terms.push_back(term_of(l));
    }
    std::vector<Pending> kept;
    for (Pending& g : groups) {
      if (g.terms.size() >= 2 && distinct_sides(g.terms) &&
          batched_size_ok(ed_.aval(g.terms[0].rhs), g.terms.size()) &&
          batched_size_ok(ed_.aval(g.terms[0].lhs), g.terms.size()))
        kept.push_back(std::move(g));
      else
        for (const Term& t : g.terms) tree.rest.push_back(Ref{p_.eqns[t.eqn].out[0], -1});
    }
    if (kept.empty()) return;
    for (Pending& g : kept) pending_.push_back(std::move(g));
    for (int node : nodes) edits_.drop[node] = 1;
    trees_.push_back(std::move(tree));
  }

  bool is_add(int k) const {
    const Eqn& e = p_.eqns[k];
    if (std::string_view(e.prim->name()) != "add" || e.in.size() != 2) return false;
    const ShapeDtype o = ed_.aval(Ref{e.out[0], -1});
    return ed_.aval(e.in[0]) == o && ed_.aval(e.in[1]) == o;
  }
  // The add defining v when v's only reader is another add (v is inside a sum), else -1.
  int inner_add(int v) const {
    if (uses_.output[v] || uses_.readers[v].size() != 1) return -1;
    const int k = uses_.def[v];
    return k >= 0 && is_add(k) && is_add(uses_.readers[v][0]) ? k : -1;
  }
  // The dims of the product defining leaf l when l is read only by its sum and the product
  // contracts something, else nullptr.
  const DotDimensionNumbers* product_term(const Ref& l) const {
    if (l.var < 0 || uses_.readers[l.var].size() != 1 || uses_.def[l.var] < 0) return nullptr;
    const DotDimensionNumbers* d = plain_dot(p_.eqns[uses_.def[l.var]]);
    return d && !d->lhs_contract.empty() ? d : nullptr;
  }
  Term term_of(const Ref& l) const {
    const Eqn& e = p_.eqns[uses_.def[l.var]];
    return {uses_.def[l.var], e.in[0], e.in[1]};
  }
  template <class G>
  bool like(const G& g, const Ref& l, const DotDimensionNumbers& d) const {
    const Term a = g.terms.front(), b = term_of(l);
    return same_dims(*g.dims, d) && ed_.aval(a.lhs) == ed_.aval(b.lhs) &&
           ed_.aval(a.rhs) == ed_.aval(b.rhs);
  }

  // Whether no operand repeats on either side: a sum of x[t]·w is cheaper as (Σ x[t])·w than as
  // a product with w concatenated once per term.
  static bool distinct_sides(const std::vector<Term>& terms) {
    for (int side : {0, 1}) {
      std::vector<std::pair<int, int>> refs;
      for (const Term& t : terms) {
        const Ref& r = side ? t.rhs : t.lhs;
        refs.emplace_back(r.var, r.constant);
      }
      std::sort(refs.begin(), refs.end());
      if (std::adjacent_find(refs.begin(), refs.end()) != refs.end()) return false;
    }
    return true;
  }

  // The slice index of r when it is an output of an unstack eqn covering its whole input.
  std::pair<int, std::size_t> slice_of(const Ref& r) const {
    if (r.var < 0 || uses_.def[r.var] < 0) return {-1, 0};
    const Eqn& e = p_.eqns[uses_.def[r.var]];
    if (std::string_view(e.prim->name()) != "unstack") return {-1, 0};
    const ShapeDtype xa = ed_.aval(e.in[0]);
    if (xa.shape.empty() || xa.shape[0] != static_cast<std::int64_t>(e.out.size())) return {-1, 0};
    const auto t = std::find(e.out.begin(), e.out.end(), r.var) - e.out.begin();
    return {uses_.def[r.var], static_cast<std::size_t>(t)};
  }
  // 0 or 1 when that side of every term is a distinct slice of one whole unstack, else -1.
  int unstacked_side(const std::vector<Term>& terms) const {
    for (int side : {0, 1}) {
      const int u = slice_of(side ? terms[0].rhs : terms[0].lhs).first;
      if (u < 0 || p_.eqns[u].out.size() != terms.size()) continue;
      std::vector<char> seen(terms.size(), 0);
      bool all = true;
      for (const Term& t : terms) {
        const auto [v, i] = slice_of(side ? t.rhs : t.lhs);
        all = all && v == u && !seen[i];
        if (all) seen[i] = 1;
      }
      if (all) return side;
    }
    return -1;
  }

  // The concatenation of `refs` along `axis`, recorded once (after its last operand is defined)
  // and shared by every sum that needs it.
  Ref concatenated(const std::vector<Ref>& refs, int axis) {
    std::pair<std::vector<int>, int> key{{}, axis};
    for (const Ref& r : refs) key.first.push_back(r.var >= 0 ? r.var : -1 - r.constant);
    auto hit = concatenations_.find(key);
    if (hit != concatenations_.end()) return hit->second.second;
    int at = 0;
    for (const Ref& r : refs)
      if (r.var >= 0) at = std::max(at, uses_.def[r.var] + 1);
    Ref out;
    edits_.record_before(ed_, at, [&] {
      Arrays xs;
      for (const Ref& r : refs) xs.push_back(ed_.value(r));
      out = ed_.recorded(linum::concatenate(xs, axis));
    });
    concatenations_.emplace(std::move(key), std::make_pair(refs, out));
    return out;
  }

  // The sum of the terms as one product, recorded before eqn `at`; returns its value.
  Ref batch(std::vector<Term>& terms, const DotDimensionNumbers& d, int at) {
    // The contracted pair to concatenate along: the leading one when there is one, so that each
    // term's operand is one block of the concatenation.
    std::size_t q = 0;
    for (std::size_t i = 0; i < d.lhs_contract.size(); ++i)
      if (d.lhs_contract[i] == 0 && d.rhs_contract[i] == 0) q = i;
    const int i_ax = d.lhs_contract[q], j_ax = d.rhs_contract[q];
    const int side = unstacked_side(terms);
    if (side >= 0) {
      std::sort(terms.begin(), terms.end(), [&](const Term& a, const Term& b) {
        return slice_of(side ? a.rhs : a.lhs).second < slice_of(side ? b.rhs : b.lhs).second;
      });
    } else {
      adopt_shared_order(terms, i_ax, j_ax);
    }
    std::vector<Ref> lhs, rhs;
    for (const Term& t : terms) {
      lhs.push_back(t.lhs);
      rhs.push_back(t.rhs);
      edits_.drop[t.eqn] = 1;
    }
    // A whole unstack concatenated in slice order along the leading axis is its input, reshaped.
    auto operand = [&](int s, const std::vector<Ref>& refs, int axis) -> std::function<Array()> {
      if (s == side && axis == 0) {
        const Ref x = p_.eqns[slice_of(refs[0]).first].in[0];
        return [this, x] {
          const Array v = ed_.value(x);
          Shape merged(v.shape().begin() + 1, v.shape().end());
          merged[0] *= v.shape(0);
          return linum::reshape(v, merged);
        };
      }
      const Ref c = concatenated(refs, axis);
      return [this, c] { return ed_.value(c); };
    };
    const auto a = operand(0, lhs, i_ax), b = operand(1, rhs, j_ax);
    Ref out;
    edits_.record_before(ed_, at, [&] {
      out = ed_.recorded(linum::dot_general(a(), b(), d));
    });
    return out;
  }

  // Orders the terms as an earlier concatenation of one of their sides, when there is one.
  void adopt_shared_order(std::vector<Term>& terms, int i_ax, int j_ax) {
    for (int s : {1, 0}) {
      std::vector<Ref> mine;
      for (const Term& t : terms) mine.push_back(s ? t.rhs : t.lhs);
      for (const auto& [key, value] : concatenations_) {
        const std::vector<Ref>& theirs = value.first;
        if (key.second != (s ? j_ax : i_ax) || theirs.size() != mine.size() ||
            !std::is_permutation(theirs.begin(), theirs.end(), mine.begin()))
          continue;
        std::vector<Term> ordered;
        for (const Ref& r : theirs)
          for (const Term& t : terms)
            if ((s ? t.rhs : t.lhs) == r) ordered.push_back(t);
        if (ordered.size() == terms.size()) {
          terms = std::move(ordered);
          return;
        }
      }
    }
  }

  ProgramEditor& ed_;
  Program& p_;
  const Uses uses_;
  Edits edits_;
  std::vector<Tree> trees_;       // the sums with batched products
  std::vector<Pending> pending_;  // their groups of products
  // Concatenations recorded so far, by operands (var, or -1 - constant) and axis.
  std::map<std::pair<std::vector<int>, int>, std::pair<std::vector<Ref>, Ref>> concatenations_;
};

}  // namespace

void batch_contractions(ProgramEditor& ed) {
  batch_slice_products(ed);
  SummedProducts(ed).run();
  lay_out_shared_operands(ed);
}

}  // namespace linum::detail
