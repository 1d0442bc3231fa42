// Probes of the jax.scipy.special and jax.scipy.stats.norm names the coverage table marks present.
#include "probes.hpp"

namespace {

using namespace linum;
using namespace linum::coverage;

const Probes special("jax.scipy.special", [](Registrar& r) {
  r.add("beta", [] { return beta(pos(), pos()); });
  r.add("betaln", [] { return betaln(pos(), pos() + 10.0f); });
  r.add("boxcox", [] { return boxcox(pos(), 0.5f); });
  r.add("boxcox1p", [] { return boxcox1p(pos(), 0.0f); });
  r.add("comb", [] { return comb(array({5.0f}), array({2.0f})); });
  r.add("digamma", [] { return digamma(pos()); });
  r.add("entr", [] { return entr(unit()); });
  r.add("erf", [] { return erf(x()); });
  r.add("erfc", [] { return erfc(x()); });
  r.add("erfinv", [] { return erfinv(x()); });
  r.add("expit", [] { return sigmoid(x()); });
  r.add("factorial", [] { return factorial(array({3.0f})); });
  r.add("gamma", [] { return gamma(x()); });
  r.add("gammainc", [] { return gammainc(pos(), pos()); });
  r.add("gammaincc", [] { return gammaincc(pos(), pos()); });
  r.add("gammaln", [] { return gammaln(x()); });
  r.add("gammasgn", [] { return gammasgn(x()); });
  r.add("i0", [] { return i0(x()); });
  r.add("i0e", [] { return i0e(x()); });
  r.add("i1", [] { return i1(x()); });
  r.add("i1e", [] { return i1e(x()); });
  r.add("kl_div", [] { return kl_div(unit(), pos()); });
  r.add("log_ndtr", [] { return log_ndtr(x()); });
  r.add("log_softmax", [] { return log_softmax(x(), Axes{}); });
  r.add("loggamma", [] { return loggamma(pos()); });
  r.add("logit", [] { return logit(unit()); });
  r.add("logsumexp", [] { return logsumexp_with_sign(x(), {}, false, pos()); });
  r.add("multigammaln", [] { return multigammaln(pos() + 2.0f, 3); });
  r.add("ndtr", [] { return ndtr(x()); });
  r.add("ndtri", [] { return ndtri(unit()); });
  r.add("poch", [] { return poch(pos(), pos()); });
  r.add("polygamma", [] { return polygamma(array({1}), pos()); });
  r.add("rel_entr", [] { return rel_entr(unit(), pos()); });
  r.add("softmax", [] { return softmax(x(), Axes{}); });
  r.add("xlog1py", [] { return xlog1py(x(), pos()); });
  r.add("xlogy", [] { return xlogy(x(), pos()); });
  r.add("zeta", [] { return zeta(pos() + 1.5f, pos()); });
});

const Probes norm("jax.scipy.stats.norm", [](Registrar& r) {
  r.add("cdf", [] { return stats::norm::cdf(x()); });
  r.add("isf", [] { return stats::norm::isf(unit()); });
  r.add("logcdf", [] { return stats::norm::logcdf(x()); });
  r.add("logpdf", [] { return stats::norm::logpdf(x(), 1.0f, 2.0f); });
  r.add("logsf", [] { return stats::norm::logsf(x()); });
  r.add("pdf", [] { return stats::norm::pdf(x()); });
  r.add("ppf", [] { return stats::norm::ppf(unit(), 1.0f, 2.0f); });
  r.add("sf", [] { return stats::norm::sf(x()); });
});

}  // namespace
