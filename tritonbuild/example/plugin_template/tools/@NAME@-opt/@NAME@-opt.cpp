// A stand-in for a plugin's opt tool (triton-shared-opt): names itself and Triton's core value.
#include "triton/Core.h"
#include <iostream>

int main() {
  std::cout << "@NAME@-opt " << triton::coreValue() << "\n";
  return 0;
}
