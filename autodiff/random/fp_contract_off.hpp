// Included first by the sources that must round like XLA:CPU: no a*b+c is contracted to an FMA
// unless the code writes std::fma (the compiler would contract with -march=native otherwise).
// Private to those .cpp files: a public header including it would change its includer's math.
#pragma once

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
