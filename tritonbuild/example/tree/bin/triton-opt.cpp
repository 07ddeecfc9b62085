// A tiny stand-in for triton-opt: echoes its input without comments, each line prefixed, for lit tests.
#include "triton/Core.h"
#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: triton-opt FILE\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  std::string line;
  std::cout << "// core value " << triton::coreValue() << "\n";
  while (std::getline(in, line))
    if (line.rfind("//", 0) != 0) // comments (RUN/CHECK lines) are dropped, as a parser would
      std::cout << "opt: " << line << "\n";
  return 0;
}
