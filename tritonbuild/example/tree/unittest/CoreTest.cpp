#include "triton/Core.h"
#include <cstdio>
#include <gtest/gtest.h>

int main() {
  if (triton::coreValue() != 42) {
    std::printf("FAIL: coreValue() = %d\n", triton::coreValue());
    return 1;
  }
  std::printf("PASS (googletest %s)\n", TB_GTEST_VERSION);
  return 0;
}
