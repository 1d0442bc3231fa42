// XLA:CPU-exact special functions for jax.random. Every a*b+c that LLVM contracts on CPU is an
// explicit std::fma here; every other product and sum must round on its own, so the compiler
// is told not to contract (it would with -march=native otherwise).
#include <linum/autodiff/random/fp_contract_off.hpp>

#include <linum/autodiff/random/xla_math.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace linum::random::detail {

namespace {

// XLA's EvaluatePolynomial: p = 0; p = p * x + c for each coefficient (highest degree first),
// contracted to FMAs. The coefficients are the double constants rounded to T.
template <class T, std::size_t N>
T horner_from_zero(T x, const double (&c)[N]) {
  T p = 0;
  for (double ci : c) p = std::fma(p, x, static_cast<T>(ci));
  return p;
}

// StableHLO's Horner: p = c[0]; p = c[i] + p * w, contracted to FMAs.
template <class T, std::size_t N>
T horner(T w, const T (&c)[N]) {
  T p = c[0];
  for (std::size_t i = 1; i < N; ++i) p = std::fma(p, w, c[i]);
  return p;
}

template <class T>
T log1p_impl(T x, T large) {
  constexpr double kNum[] = {4.5270000862445199635215E-5, 4.9854102823193375972212E-1,
                             6.5787325942061044846969E0,  2.9911919328553073277375E1,
                             6.0949667980987787057556E1,  5.7112963590585538103336E1,
                             2.0039553499201281259648E1};
  constexpr double kDen[] = {1.,
                             1.5062909083469192043167E1,
                             8.3047565967967209469434E1,
                             2.2176239823732856465394E2,
                             3.0909872225312059774938E2,
                             2.1642788614495947685003E2,
                             6.0118660497603843919306E1};
  const T x2 = x * x;
  const T ratio = horner_from_zero(x, kNum) / horner_from_zero(x, kDen);
  const T cubic = (x * x2) * ratio;
  // fadd(fmul(-0.5, x2), cubic) contracts into one FMA; the final add of x does not.
  const T small = x + std::fma(static_cast<T>(-0.5), x2, cubic);
  return std::abs(x) < static_cast<T>(0.41421356237309504880) ? small : large;
}

}  // namespace

float xla_log(float in) {
  if (std::isnan(in) || in < 0) return std::numeric_limits<float>::quiet_NaN();
  if (in == 0) return -std::numeric_limits<float>::infinity();
  if (std::isinf(in)) return in;
  // Mantissa in [0.5, 1) and exponent, then shifted to [sqrt(1/2) - 1, sqrt(2) - 1).
  const std::uint32_t bits =
      std::bit_cast<std::uint32_t>(std::max(in, std::numeric_limits<float>::min()));
  float x = std::bit_cast<float>((bits & ~0x7f800000u) | 0x3f000000u);
  float e = static_cast<float>(static_cast<int>(bits >> 23) - 0x7f) + 1.0f;
  const bool below = x < 0.707106781186547524f;
  const float shift = below ? x : 0.0f;
  x = x - 1.0f;
  e = e - (below ? 1.0f : 0.0f);
  x = x + shift;
  const float x2 = x * x, x3 = x2 * x;
  // Cephes' degree-8 polynomial in three interleaved parts, as XLA evaluates it.
  float y = std::fma(x, 7.0376836292E-2f, -1.1514610310E-1f);
  float y1 = std::fma(x, -1.2420140846E-1f, +1.4249322787E-1f);
  float y2 = std::fma(x, +2.0000714765E-1f, -2.4999993993E-1f);
  y = std::fma(y, x, 1.1676998740E-1f);
  y1 = std::fma(y1, x, -1.6668057665E-1f);
  y2 = std::fma(y2, x, +3.3333331174E-1f);
  y = std::fma(y, x3, y1);
  y = std::fma(y, x3, y2);
  y = std::fma(y, x3, -2.12194440e-4f * e);
  x = std::fma(-x2, 0.5f, x);
  x = x + y;
  return std::fma(0.693359375f, e, x);
}

double xla_log(double x) { return std::log(x); }

float xla_log1p(float x) { return log1p_impl(x, xla_log(x + 1.0f)); }
double xla_log1p(double x) { return log1p_impl(x, std::log(x + 1.0)); }

float erf_inv(float x) {
  constexpr float kLt5[] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                            -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                            -0.00417768164f,  0.246640727f,    1.50140941f};
  constexpr float kGe5[] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                            -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                            0.00943887047f,   1.00167406f,     2.83297682f};
  float w = -xla_log1p(x * -x);
  const float p = w < 5.0f ? horner(w - 2.5f, kLt5) : horner(std::sqrt(w) - 3.0f, kGe5);
  if (std::abs(x) == 1.0f) return x * std::numeric_limits<float>::infinity();
  return p * x;
}

double erf_inv(double x) {
  constexpr double kLt625[] = {
      -3.6444120640178196996e-21, -1.685059138182016589e-19,  1.2858480715256400167e-18,
      1.115787767802518096e-17,   -1.333171662854620906e-16,  2.0972767875968561637e-17,
      6.6376381343583238325e-15,  -4.0545662729752068639e-14, -8.1519341976054721522e-14,
      2.6335093153082322977e-12,  -1.2975133253453532498e-11, -5.4154120542946279317e-11,
      1.051212273321532285e-09,   -4.1126339803469836976e-09, -2.9070369957882005086e-08,
      4.2347877827932403518e-07,  -1.3654692000834678645e-06, -1.3882523362786468719e-05,
      0.0001867342080340571352,   -0.00074070253416626697512, -0.0060336708714301490533,
      0.24015818242558961693,     1.6536545626831027356};
  constexpr double kLt16[] = {
      2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
      1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
      2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
      6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
      0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
      -0.0037512085075692412107, 0.005370914553590063617,   1.0052589676941592334,
      3.0838856104922207635};
  constexpr double kGe16[] = {
      -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
      -3.7894654401267369937e-09, 7.6157012080783393804e-09,  -1.4960026627149240478e-08,
      2.9147953450901080826e-08,  -6.7711997758452339498e-08, 2.2900482228026654717e-07,
      -9.9298272942317002539e-07, 4.5260625972231537039e-06,  -1.9681778105531670567e-05,
      7.5995277030017761139e-05,  -0.00021503011930044477347, -0.00013871931833623122026,
      1.0103004648645343977,      4.8499064014085844221};
  const double w = -xla_log1p(x * -x);
  double p;
  if (w < 6.25)
    p = horner(w - 3.125, kLt625);
  else if (w < 16)
    p = horner(std::sqrt(w) - 3.25, kLt16);
  else
    p = horner(std::sqrt(w) - 5.0, kGe16);
  if (std::abs(x) == 1.0) return x * std::numeric_limits<double>::infinity();
  return p * x;
}

float erf(float x) {
  constexpr double kAlpha[] = {-2.72614225801306e-10, 2.77068142495902e-08,  -2.10102402082508e-06,
                               -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                               -1.60960333262415e-02};
  constexpr double kBeta[] = {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                              -7.37332916720468e-03, -1.42647390514189e-02};
  x = std::clamp(x, -4.0f, 4.0f);
  const float x2 = x * x;
  const float e = (x * horner_from_zero(x2, kAlpha)) / horner_from_zero(x2, kBeta);
  return std::clamp(e, -1.0f, 1.0f);
}

double erf(double x) {
  const double ax = std::abs(x);
  if (ax < 1) {
    constexpr double kT[] = {9.60497373987051638749E0, 9.00260197203842689217E1,
                             2.23200534594684319226E3, 7.00332514112805075473E3,
                             5.55923013010394962768E4};
    constexpr double kU[] = {1.00000000000000000000E0, 3.35617141647503099647E1,
                             5.21357949780152679795E2, 4.59432382970980127987E3,
                             2.26290000613890934246E4, 4.92673942608635921086E4};
    const double x2 = x * x;
    return (x * horner_from_zero(x2, kT)) / horner_from_zero(x2, kU);
  }
  // erf = 1 - erfc, with Cephes' erfc for |x| >= 1 (P/Q below 8, R/S above).
  constexpr double kP[] = {
      2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
      4.86371970985681366614E1,   1.96520832956077098242E2,  5.26445194995477358631E2,
      9.34528527171957607540E2,   1.02755188689515710272E3,  5.57535335369399327526E2};
  constexpr double kQ[] = {
      1.00000000000000000000E0, 1.32281951154744992508E1, 8.67072140885989742329E1,
      3.54937778887819891062E2, 9.75708501743205489753E2, 1.82390916687909736289E3,
      2.24633760818710981792E3, 1.65666309194161350182E3, 5.57535340817727675546E2};
  constexpr double kR[] = {5.64189583547755073984E-1, 1.27536670759978104416E0,
                           5.01905042251180477414E0,  6.16021097993053585195E0,
                           7.40974269950448939160E0,  2.97886665372100240670E0};
  constexpr double kS[] = {1.00000000000000000000E0, 2.26052863220117276590E0,
                           9.39603524938001434673E0, 1.20489539808096656605E1,
                           1.70814450747565897222E1, 9.60896809063285878198E0,
                           3.36907645100081516050E0};
  constexpr double kMaxlog = 7.09782712893383996843E2;
  const double z = -(x * x);
  const double ez = std::exp(z);
  double erfc = ax < 8 ? (ez * horner_from_zero(ax, kP)) / horner_from_zero(ax, kQ)
                       : (ez * horner_from_zero(ax, kR)) / horner_from_zero(ax, kS);
  if (z < -kMaxlog) erfc = 0;
  if (x < 0) erfc = 2 - erfc;
  return 1 - erfc;
}

}  // namespace linum::random::detail
