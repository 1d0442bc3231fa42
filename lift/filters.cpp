// Filter algebra, rule for rule as flax/core/scope.py.
#include <linum/lift/filters.hpp>

#include <algorithm>
#include <sstream>

#include <linum/lift/errors.hpp>

namespace linum::lift {

namespace {

using Names = std::set<std::string>;

bool is_true(const Filter& f) { return f.kind() == Filter::Kind::Bool && f.value(); }
bool is_deny(const Filter& f) { return f.kind() == Filter::Kind::Deny; }

// filter_to_set: the finite set of names a filter stands for (never for True or a DenyList).
Names to_set(const Filter& f, const char* fn) {
  if (is_true(f) || is_deny(f)) {
    std::ostringstream os;
    os << fn << ": infinite set " << f;
    throw InvalidFilterError(os.str());
  }
  return f.kind() == Filter::Kind::Bool ? Names{} : f.names();
}

// A set operation on two finite filters: the names n of a or b with keep(n in a, n in b).
template <class Keep>
Names set_op(const Filter& a, const Filter& b, const char* fn, const Keep& keep) {
  const Names na = to_set(a, fn), nb = to_set(b, fn);
  Names r = na;
  r.insert(nb.begin(), nb.end());
  std::erase_if(r, [&](const std::string& n) { return !keep(na.contains(n), nb.contains(n)); });
  return r;
}

}  // namespace

Filter::Filter(const char* name) : kind_(Kind::Str) {
  if (!name) throw InvalidFilterError("Invalid Filter: \"None\"");
  names_.insert(name);
}

Filter Filter::deny_list(Filter deny) {
  Filter f;
  f.kind_ = Kind::Deny;
  f.deny_ = std::make_shared<const Filter>(std::move(deny));
  return f;
}

bool operator==(const Filter& a, const Filter& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Filter::Kind::Bool:
      return a.value_ == b.value_;
    case Filter::Kind::Deny:
      return *a.deny_ == *b.deny_;
    default:
      return a.names_ == b.names_;
  }
}

std::ostream& operator<<(std::ostream& os, const Filter& f) {
  switch (f.kind()) {
    case Filter::Kind::Bool:
      return os << (f.value() ? "True" : "False");
    case Filter::Kind::Str:
      return os << '\'' << *f.names().begin() << '\'';
    case Filter::Kind::Set: {
      if (f.names().empty()) return os << "set()";
      os << '{';
      const char* sep = "";
      for (const auto& n : f.names()) os << std::exchange(sep, ", ") << '\'' << n << '\'';
      return os << '}';
    }
    case Filter::Kind::Deny:
      return os << "DenyList(deny=" << f.deny() << ')';
  }
  return os;
}

bool in_filter(const Filter& f, const std::string& col) {
  switch (f.kind()) {
    case Filter::Kind::Bool:
      return f.value();
    case Filter::Kind::Deny:
      return !in_filter(f.deny(), col);
    default:
      return f.names().contains(col);
  }
}

bool is_filter_empty(const Filter& f) {
  switch (f.kind()) {
    case Filter::Kind::Bool:
      return !f.value();
    case Filter::Kind::Str:
      return false;
    case Filter::Kind::Set:
      return f.names().empty();
    case Filter::Kind::Deny:
      return in_filter(f.deny(), "__flax_internal_stub__");
  }
  return false;
}

Filter union_filters(const Filter& a, const Filter& b) {
  if (is_true(a) || is_true(b)) return true;
  if (is_deny(a) && is_deny(b)) return DenyList(intersect_filters(a.deny(), b.deny()));
  if (is_deny(b)) return DenyList(subtract_filters(b.deny(), a));
  if (is_deny(a)) return DenyList(subtract_filters(a.deny(), b));
  return set_op(a, b, "union_filters", [](bool x, bool y) { return x || y; });
}

Filter subtract_filters(const Filter& a, const Filter& b) {
  if (is_true(b)) return false;
  if (is_true(a)) return DenyList(b);
  if (is_deny(a) && is_deny(b)) return subtract_filters(b.deny(), a.deny());
  if (is_deny(a)) return DenyList(union_filters(a.deny(), b));
  if (is_deny(b)) return intersect_filters(a, b.deny());
  return set_op(a, b, "subtract_filters", [](bool x, bool y) { return x && !y; });
}

Filter intersect_filters(const Filter& a, const Filter& b) {
  if (is_true(a)) return b;
  if (is_true(b)) return a;
  if (is_deny(a) && is_deny(b)) return DenyList(union_filters(b.deny(), a.deny()));
  if (is_deny(b)) return subtract_filters(a, b.deny());
  if (is_deny(a)) return subtract_filters(b, a.deny());
  return set_op(a, b, "intersect_filters", [](bool x, bool y) { return x && y; });
}

std::vector<Tree> group_collections(const Tree& xs, const std::vector<Filter>& filters) {
  if (!xs.is_dict() && !xs.is_none()) {
    throw ApplyScopeInvalidVariablesTypeError(
        "The first argument passed to an apply function should be a dictionary of collections. "
        "Each collection should be a dictionary with string keys.");
  }
  std::vector<Tree> groups;
  std::vector<std::string> remaining =
      xs.is_dict() ? xs.as_dict().keys() : std::vector<std::string>{};
  for (const auto& f : filters) {
    Tree group = Tree::dict();
    std::vector<std::string> rest;
    for (auto& col : remaining) {
      if (in_filter(f, col))
        group[col] = xs[col];
      else
        rest.push_back(std::move(col));
    }
    remaining = std::move(rest);
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace linum::lift
