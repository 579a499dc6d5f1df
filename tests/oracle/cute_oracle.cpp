// CuTe oracle main program.
//
//   cute_oracle            run every compiled case group, one JSON line per case
//   cute_oracle --stdin    read dynamic cases, one per line, answer one JSON line each
//
// Dynamic case lines are "<id> <op> <arg> ..." (see dynamic_layouts.cpp for the ops).
#include "oracle.hpp"

#include <iostream>
#include <sstream>

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--stdin") {
    std::string line;
    while (std::getline(std::cin, line)) {
      std::istringstream in(line);
      std::string id, op, arg;
      in >> id >> op;
      if (id.empty()) {
        continue;
      }
      std::vector<std::string> args;
      while (in >> arg) {
        args.push_back(arg);
      }
      bool handled = false;
      for (auto fn : oracle::dynamic_handlers()) {
        if (fn(id, op, args)) {
          handled = true;
          break;
        }
      }
      if (!handled) {
        oracle::emit_error(id.c_str(), "unknown operation or unsupported operand profile");
      }
      fflush(stdout);
    }
    return 0;
  }
  for (auto const& g : oracle::groups()) {
    g.fn();
  }
  return 0;
}
