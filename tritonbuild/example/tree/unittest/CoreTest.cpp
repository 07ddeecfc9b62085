#include "triton/Core.h"
#include <cstdio>

int main() {
  if (triton::coreValue() != 42) {
    std::printf("FAIL: coreValue() = %d\n", triton::coreValue());
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}
