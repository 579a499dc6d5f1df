// CuTe oracle: parsing dynamic operands from text (see tests/oracle/README.md).
//
// Integers read at run time are C++ `int`s (dynamic). Their nesting must match one of the
// PROFILES below, which are compiled in; a "@name" operand selects a compiled static object.
//   integer tuple   5   (4,2)   ((2,3),4)
//   layout          (4,2):(1,4)
#pragma once

#include "oracle.hpp"

#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace oracle {

struct Node {
  bool leaf = true;
  long long value = 0;
  std::vector<Node> kids;
};

inline bool parse_node(std::string const& s, size_t& pos, Node& out) {
  if (pos < s.size() && s[pos] == '(') {
    out.leaf = false;
    ++pos;
    if (pos < s.size() && s[pos] == ')') {
      ++pos;
      return true;
    }
    while (true) {
      Node kid;
      if (!parse_node(s, pos, kid)) return false;
      out.kids.push_back(kid);
      if (pos < s.size() && s[pos] == ',') { ++pos; continue; }
      if (pos < s.size() && s[pos] == ')') { ++pos; return true; }
      return false;
    }
  }
  size_t start = pos;
  if (pos < s.size() && s[pos] == '-') ++pos;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
  if (pos == start) return false;
  out.leaf = true;
  out.value = std::atoll(s.substr(start, pos - start).c_str());
  return true;
}

inline bool parse_full(std::string const& s, Node& out) {
  size_t pos = 0;
  return parse_node(s, pos, out) && pos == s.size();
}

// Fill a (nested) tuple of ints from a node of the same profile.
template <class P>
bool fill(P& p, Node const& n);

template <class P, size_t... I>
bool fill_tuple(P& p, Node const& n, std::index_sequence<I...>) {
  return (true && ... && fill(cute::get<I>(p), n.kids[I]));
}

template <class P>
bool fill(P& p, Node const& n) {
  if constexpr (cute::is_tuple<P>::value) {
    constexpr size_t R = cute::tuple_size<P>::value;
    if (n.leaf || n.kids.size() != R) return false;
    return fill_tuple(p, n, std::make_index_sequence<R>{});
  } else {
    if (!n.leaf) return false;
    p = int(n.value);
    return true;
  }
}

using cute::tuple;
using P0 = int;
using P2 = tuple<int, int>;
using P3 = tuple<int, int, int>;
using P5 = tuple<tuple<int, int>, int>;
using P6 = tuple<int, tuple<int, int>>;
using P7 = tuple<tuple<int, int>, tuple<int, int>>;

// Profiles of dynamic layouts (shape and stride share the profile).
using LayoutProfiles = std::tuple<P0, P2, P3, P5, P6, P7>;
// Profiles of a dynamic right operand (a layout or an integer tiler).
using OperandProfiles = std::tuple<P0, P2>;

template <class T>
struct type_tag {
  using type = T;
};

template <class Profiles, class F, size_t... I>
bool with_profile_impl(Node const& n, F&& f, std::index_sequence<I...>) {
  bool done = false;
  auto attempt = [&](auto tag) {
    using P = typename decltype(tag)::type;
    if (done) return;
    P p{};
    if (fill(p, n)) {
      done = true;
      f(p);
    }
  };
  (attempt(type_tag<std::tuple_element_t<I, Profiles>>{}), ...);
  return done;
}

// Call f(p) with p the first profile of Profiles that the node fits.
template <class Profiles, class F>
bool with_profile(Node const& n, F&& f) {
  return with_profile_impl<Profiles>(n, f, std::make_index_sequence<std::tuple_size_v<Profiles>>{});
}

// Call f(layout) for a dynamic layout "S:D" whose profile is in Profiles.
template <class Profiles, class F>
bool with_layout(std::string const& arg, F&& f) {
  size_t colon = arg.find(':');
  if (colon == std::string::npos) return false;
  Node s, d;
  if (!parse_full(arg.substr(0, colon), s) || !parse_full(arg.substr(colon + 1), d)) return false;
  bool ok = false;
  with_profile<Profiles>(s, [&](auto shape) {
    decltype(shape) stride{};
    if (fill(stride, d)) {
      ok = true;
      f(cute::make_layout(shape, stride));
    }
  });
  return ok;
}

// Call f(x) for an integer tuple operand whose profile is in Profiles.
template <class Profiles, class F>
bool with_int_tuple(std::string const& arg, F&& f) {
  Node n;
  if (!parse_full(arg, n)) return false;
  return with_profile<Profiles>(n, f);
}

}  // namespace oracle
