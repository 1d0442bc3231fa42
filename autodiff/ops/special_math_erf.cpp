// The error-function family of special_math.hpp: Cephes erfc as StableHLO decomposes it, the
// Cephes Bessel i0e / i1e series, and the normal distribution's ndtr, ndtri and log_ndtr.
// Constants are the double literals of the JAX / StableHLO sources, rounded to the dtype where
// the graph creates them.
#include <linum/autodiff/ops/special_math.hpp>

#include <cmath>
#include <limits>
#include <numbers>

namespace linum::detail::special {

namespace {

// Clenshaw's recurrence for a Chebyshev series (Cephes' chbevl, as XLA and jax evaluate it).
template <class T, std::size_t N>
T chebyshev(T x, const double (&c)[N]) {
  T b0 = 0, b1 = 0, b2 = 0;
  for (double ci : c) {
    b2 = b1;
    b1 = b0;
    b0 = x * b1 - b2 + static_cast<T>(ci);
  }
  return T(0.5) * (b0 - b2);
}
// ---- erfc (Cephes) ----------------------------------------------------------------------------

float erfc_ge_one(float x) {
  constexpr double kP[] = {+2.326819970068386E-2, -1.387039388740657E-1, +3.687424674597105E-1,
                           -5.824733027278666E-1, +6.210004621745983E-1, -4.944515323274145E-1,
                           +3.404879937665872E-1, -2.741127028184656E-1, +5.638259427386472E-1};
  constexpr double kR[] = {-1.047766399936249E+1, +1.297719955372516E+1, -7.495518717768503E+0,
                           +2.921019019210786E+0, -1.015265279202700E+0, +4.218463358204948E-1,
                           -2.820767439740514E-1, +5.641895067754075E-1};
  const float x2 = x * x, z = -x2, ax = std::abs(x);
  const float e = std::exp(z) * (1.0f / ax);
  const float p = ax < 2.0f ? poly(1.0f / x2, kP) : poly(1.0f / x2, kR);
  float r = e * p;
  if (z < static_cast<float>(-88.72283905206835)) r = 0;
  return x < 0 ? 2.0f - r : r;
}

double erfc_ge_one(double x) {
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
  const double z = -(x * x), ez = std::exp(z), ax = std::abs(x);
  double r = ax < 8 ? (ez * poly(ax, kP)) / poly(ax, kQ) : (ez * poly(ax, kR)) / poly(ax, kS);
  if (z < -7.09782712893383996843E2) r = 0;
  return x < 0 ? 2 - r : r;
}

float erf_le_one(float x) {
  constexpr double kT[] = {+7.853861353153693E-5, -8.010193625184903E-4, +5.188327685732524E-3,
                           -2.685381193529856E-2, +1.128358514861418E-1, -3.761262582423300E-1,
                           +1.128379165726710E+0};
  return x * poly(x * x, kT);
}

double erf_le_one(double x) {
  constexpr double kT[] = {9.60497373987051638749E0, 9.00260197203842689217E1,
                           2.23200534594684319226E3, 7.00332514112805075473E3,
                           5.55923013010394962768E4};
  constexpr double kU[] = {1.00000000000000000000E0, 3.35617141647503099647E1,
                           5.21357949780152679795E2, 4.59432382970980127987E3,
                           2.26290000613890934246E4, 4.92673942608635921086E4};
  const double x2 = x * x;
  return (x * poly(x2, kT)) / poly(x2, kU);
}

template <class T>
T erfc_impl(T x) {
  return std::abs(x) < T(1) ? T(1) - erf_le_one(x) : erfc_ge_one(x);
}

// ---- Bessel i0e, i1e (Cephes Chebyshev series on |x| <= 8 and 32 / |x|)

constexpr double kI0eA32[] = {
    -1.30002500998624804212E-8, 6.04699502254191894932E-8,  -2.67079385394061173391E-7,
    1.11738753912010371815E-6,  -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4,  -5.76375574538582365885E-4,
    1.63947561694133579842E-3,  -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2,  -9.49010970480476444210E-2,
    1.71620901522208775349E-1,  -3.04682672343198398683E-1, 6.76795274409476084995E-1};
constexpr double kI0eB32[] = {3.39623202570838634515E-9, 2.26666899049817806459E-8,
                              2.04891858946906374183E-7, 2.89137052083475648297E-6,
                              6.88975834691682398426E-5, 3.36911647825569408990E-3,
                              8.04490411014108831608E-1};
constexpr double kI0eA64[] = {
    -4.41534164647933937950E-18, 3.33079451882223809783E-17,  -2.43127984654795469359E-16,
    1.71539128555513303061E-15,  -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12,  -1.72682629144155570723E-11,
    9.67580903537323691224E-11,  -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8,  6.04699502254191894932E-8,   -2.67079385394061173391E-7,
    1.11738753912010371815E-6,   -4.41673835845875056359E-6,  1.64484480707288970893E-5,
    -5.75419501008210370398E-5,  1.88502885095841655729E-4,   -5.76375574538582365885E-4,
    1.63947561694133579842E-3,   -4.32430999505057594430E-3,  1.05464603945949983183E-2,
    -2.37374148058994688156E-2,  4.93052842396707084878E-2,   -9.49010970480476444210E-2,
    1.71620901522208775349E-1,   -3.04682672343198398683E-1,  6.76795274409476084995E-1};
constexpr double kI0eB64[] = {
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17,  -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15,  3.81168066935262242075E-15,  -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14,  3.85277838274214270114E-13,
    7.18012445138366623367E-13,  -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11,  4.94060238822496958910E-10,
    3.39623202570838634515E-9,   2.26666899049817806459E-8,   2.04891858946906374183E-7,
    2.89137052083475648297E-6,   6.88975834691682398426E-5,   3.36911647825569408990E-3,
    8.04490411014108831608E-1};
constexpr double kI1eA32[] = {
    9.38153738649577178388E-9,  -4.44505912879632808065E-8, 2.00329475355213526229E-7,
    -8.56872026469545474066E-7, 3.47025130813767847674E-6,  -1.32731636560394358279E-5,
    4.78156510755005422638E-5,  -1.61760815825896745588E-4, 5.12285956168575772895E-4,
    -1.51357245063125314899E-3, 4.15642294431288815669E-3,  -1.05640848946261981558E-2,
    2.47264490306265168283E-2,  -5.29459812080949914269E-2, 1.02643658689847095384E-1,
    -1.76416518357834055153E-1, 2.52587186443633654823E-1};
constexpr double kI1eB32[] = {-3.83538038596423702205E-9, -2.63146884688951950684E-8,
                              -2.51223623787020892529E-7, -3.88256480887769039346E-6,
                              -1.10588938762623716291E-4, -9.76109749136146840777E-3,
                              7.78576235018280120474E-1};
constexpr double kI1eA64[] = {
    2.77791411276104639959E-18,  -2.11142121435816608115E-17, 1.55363195773620046921E-16,
    -1.10559694773538630805E-15, 7.60068429473540693410E-15,  -5.04218550472791168711E-14,
    3.22379336594557470981E-13,  -1.98397439776494371520E-12, 1.17361862988909016308E-11,
    -6.66348972350202774223E-11, 3.62559028155211703701E-10,  -1.88724975172282928790E-9,
    9.38153738649577178388E-9,   -4.44505912879632808065E-8,  2.00329475355213526229E-7,
    -8.56872026469545474066E-7,  3.47025130813767847674E-6,   -1.32731636560394358279E-5,
    4.78156510755005422638E-5,   -1.61760815825896745588E-4,  5.12285956168575772895E-4,
    -1.51357245063125314899E-3,  4.15642294431288815669E-3,   -1.05640848946261981558E-2,
    2.47264490306265168283E-2,   -5.29459812080949914269E-2,  1.02643658689847095384E-1,
    -1.76416518357834055153E-1,  2.52587186443633654823E-1};
constexpr double kI1eB64[] = {
    7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17,
    -3.20952592199342395980E-17, 2.96262899764595013876E-16,  3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
    4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,
    3.25260358301548823856E-11,  -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9,  -2.63146884688951950684E-8,  -2.51223623787020892529E-7,
    -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
    7.78576235018280120474E-1};

template <class T, std::size_t NA, std::size_t NB>
T i0e_impl(T x, const double (&ca)[NA], const double (&cb)[NB]) {
  x = std::abs(x);
  const T le8 = chebyshev(T(0.5) * x - T(2), ca);
  const T gt8 = chebyshev(T(32) / x - T(2), cb) / std::sqrt(x);
  return x <= T(8) ? le8 : gt8;
}

template <class T, std::size_t NA, std::size_t NB>
T i1e_impl(T x, const double (&ca)[NA], const double (&cb)[NB]) {
  const T z = std::abs(x);
  const T le8 = chebyshev(T(0.5) * z - T(2), ca) * z;
  const T gt8 = chebyshev(T(32) / z - T(2), cb) / std::sqrt(z);
  const T s = x > 0 ? T(1) : x < 0 ? T(-1) : x;  // lax.sign: keeps 0 and NaN
  return s * (z <= T(8) ? le8 : gt8);
}

// ---- the normal distribution --------------------------------------------------------------------

// lax.special.ndtr: 1 + erf near 0, erfc in the tails, with XLA's erf.
template <class T>
T ndtr_impl(T x) {
  const T half_sqrt_2 = T(0.5) * static_cast<T>(std::numbers::sqrt2);
  const T w = x * half_sqrt_2, z = std::abs(w);
  const T y = z < half_sqrt_2 ? T(1) + random::detail::erf(w)
                              : (w > T(0) ? T(2) - erfc_impl(z) : erfc_impl(z));
  return T(0.5) * y;
}

// jax.scipy.special.ndtri (Cephes' rational approximations in three regions).
template <class T>
T ndtri_impl(T p) {
  constexpr double p0[] = {-59.96335010141079, 98.00107541859997, -56.67628574690703,
                           13.931260938727968, -1.2391658386738125};
  constexpr double q0[] = {1.0,
                           1.9544885833814176,
                           4.676279128988815,
                           86.36024213908905,
                           -225.46268785411937,
                           200.26021238006066,
                           -82.03722561683334,
                           15.90562251262117,
                           -1.1833162112133};
  constexpr double p1[] = {4.0554489230596245,  31.525109459989388,   57.16281922464213,
                           44.08050738932008,   14.684956192885803,   2.1866330685079025,
                           -0.1402560791713545, -0.03504246268278482, -0.0008574567851546854};
  constexpr double q1[] = {1.0,
                           15.779988325646675,
                           45.39076351288792,
                           41.3172038254672,
                           15.04253856929075,
                           2.504649462083094,
                           -0.14218292285478779,
                           -0.03808064076915783,
                           -0.0009332594808954574};
  constexpr double p2[] = {3.2377489177694603,     6.915228890689842,      3.9388102529247444,
                           1.3330346081580755,     0.20148538954917908,    0.012371663481782003,
                           0.00030158155350823543, 2.6580697468673755e-06, 6.239745391849833e-09};
  constexpr double q2[] = {1.0,
                           6.02427039364742,
                           3.6798356385616087,
                           1.3770209948908132,
                           0.21623699359449663,
                           0.013420400608854318,
                           0.00032801446468212774,
                           2.8924786474538068e-06,
                           6.790194080099813e-09};
  // jnp.polyval: y = 0; y = y * x + c.
  auto polyval = [](const auto& c, T x) {
    T y = 0;
    for (double ci : c) y = y * x + static_cast<T>(ci);
    return y;
  };
  const T mcp = p > static_cast<T>(0.8646647167633873) ? T(1) - p : p;  // -expm1(-2)
  const T sp = mcp == T(0) ? T(0.5) : mcp;
  const T w = sp - T(0.5), ww = w * w;
  T x_big = w + w * ww * (polyval(p0, ww) / polyval(q0, ww));
  x_big = x_big * -static_cast<T>(std::sqrt(2.0 * std::numbers::pi));
  const T z = std::sqrt(T(-2) * xlog(sp));
  const T first = z - xlog(z) / z;
  const T x_small = first - polyval(p2, T(1) / z) / polyval(q2, T(1) / z) / z;
  const T x_other = first - polyval(p1, T(1) / z) / polyval(q1, T(1) / z) / z;
  T x =
      sp > static_cast<T>(0.1353352832366127) ? x_big : (z >= T(8) ? x_small : x_other);  // exp(-2)
  x = p > static_cast<T>(0.8646647167633873) ? x : -x;  // 1 - exp(-2)
  if (p == T(0)) return -lim<T>::infinity();
  if (p == T(1)) return lim<T>::infinity();
  return x;
}

// jax.scipy.special.log_ndtr: -ndtr(-x) above `upper`, log(ndtr(x)) in the middle, and the
// asymptotic series of order series_order below `lower`.
template <class T>
T log_ndtr_impl(T x, int series_order) {
  const T lower = std::is_same_v<T, float> ? T(-10) : T(-20);
  const T upper = std::is_same_v<T, float> ? T(5) : T(8);
  if (x > upper) return -ndtr_impl(-x);
  if (x > lower) return xlog(ndtr_impl(x));
  const T x2 = x * x;
  const T log_scale =
      T(-0.5) * x2 - xlog(-x) - static_cast<T>(0.5 * std::log(2.0 * std::numbers::pi));
  T series = 1;
  if (series_order > 0) {
    T even = 0, odd = 0, x_2n = x2;
    double double_factorial = 1;  // (2n - 1)!!
    for (int n = 1; n <= series_order; ++n) {
      if (n > 1) double_factorial *= 2 * n - 1;
      const T y = static_cast<T>(double_factorial) / x_2n;
      if (n % 2)
        odd = odd + y;
      else
        even = even + y;
      x_2n = x_2n * x2;
    }
    series = T(1) + even - odd;
  }
  return log_scale + xlog(series);
}

}  // namespace

float erfc(float x) { return erfc_impl(x); }
double erfc(double x) { return erfc_impl(x); }
float bessel_i0e(float x) { return i0e_impl(x, kI0eA32, kI0eB32); }
double bessel_i0e(double x) { return i0e_impl(x, kI0eA64, kI0eB64); }
float bessel_i1e(float x) { return i1e_impl(x, kI1eA32, kI1eB32); }
double bessel_i1e(double x) { return i1e_impl(x, kI1eA64, kI1eB64); }
float ndtr(float x) { return ndtr_impl(x); }
double ndtr(double x) { return ndtr_impl(x); }
float ndtri(float p) { return ndtri_impl(p); }
double ndtri(double p) { return ndtri_impl(p); }
float log_ndtr(float x, int series_order) { return log_ndtr_impl(x, series_order); }
double log_ndtr(double x, int series_order) { return log_ndtr_impl(x, series_order); }

}  // namespace linum::detail::special
