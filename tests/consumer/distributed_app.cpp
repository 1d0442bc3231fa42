// Links linum::distributed: without mpirun and initialize(), it reports that it is not initialized.
#include <cstdio>

#include <linum/distributed/distributed.hpp>

int main() {
  const bool up = linum::distributed::is_initialized();
  std::printf("linum::distributed linked; initialized: %s\n", up ? "yes" : "no");
  return up ? 1 : 0;
}
