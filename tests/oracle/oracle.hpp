// CuTe oracle: shared helpers for every case file (see tests/oracle/README.md).
//
// Each generated translation unit defines one function per case group and registers it with
// ORACLE_GROUP; the main program (cute_oracle.cpp) runs every registered group and prints one
// JSON line per case:
//   {"id":"...","text":"<what cute::print writes>","values":[f(0),f(1),...]}
// "values" is present when the result is a layout (or a (layout, offset) pair): the layout's
// value at every 1-D index.
#pragma once

#include <cute/tensor.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace oracle {

using GroupFn = void (*)();

struct GroupEntry {
  const char* name;
  GroupFn fn;
};

inline std::vector<GroupEntry>& groups() {
  static std::vector<GroupEntry> g;
  return g;
}

struct Register {
  Register(const char* name, GroupFn fn) { groups().push_back(GroupEntry{name, fn}); }
};

// A handler for one dynamic (stdin) operation; returns false if it does not know the op.
using DynamicFn = bool (*)(std::string const& id, std::string const& op, std::vector<std::string> const& args);

inline std::vector<DynamicFn>& dynamic_handlers() {
  static std::vector<DynamicFn> h;
  return h;
}

struct RegisterDynamic {
  explicit RegisterDynamic(DynamicFn fn) { dynamic_handlers().push_back(fn); }
};

template <class L>
void print_values(L const& layout) {
  printf(",\"values\":[");
  if constexpr (decltype(cute::rank(layout))::value == 0) {
    printf("%lld", 0LL);
  } else {
    int n = int(cute::size(layout));
    for (int i = 0; i < n; ++i) {
      printf(i ? ",%lld" : "%lld", (long long)(layout(i)));
    }
  }
  printf("]");
}

template <class T>
struct is_layout_pair : cute::false_type {};
template <class A, class B>
struct is_layout_pair<cute::tuple<A, B>> : cute::bool_constant<cute::is_layout<A>::value> {};

// Print one case: id, cute::print text, and values where the result is a layout.
template <class X>
void emit(const char* id, X const& x) {
  printf("{\"id\":\"%s\",\"text\":\"", id);
  cute::print(x);
  printf("\"");
  if constexpr (cute::is_layout<X>::value) {
    print_values(x);
  } else if constexpr (is_layout_pair<X>::value) {
    print_values(cute::get<0>(x));
  }
  printf("}\n");
}

inline void emit_error(const char* id, const char* msg) {
  printf("{\"id\":\"%s\",\"error\":\"%s\"}\n", id, msg);
}

}  // namespace oracle

#define ORACLE_CONCAT2(a, b) a##b
#define ORACLE_CONCAT(a, b) ORACLE_CONCAT2(a, b)
#define ORACLE_GROUP(name, fn) static ::oracle::Register ORACLE_CONCAT(oracle_group_, __LINE__)(name, fn)
#define ORACLE_DYNAMIC(fn) static ::oracle::RegisterDynamic ORACLE_CONCAT(oracle_dynamic_, __LINE__)(fn)
