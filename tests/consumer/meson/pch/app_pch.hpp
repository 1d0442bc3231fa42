#include <linum/linum.hpp>
