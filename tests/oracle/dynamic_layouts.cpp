// CuTe oracle: layout operations on dynamic operands read at run time (cute_oracle --stdin).
//
// Lines: "<id> <op> <A> [<B>]" where A is a dynamic layout "S:D" and B is a dynamic layout,
// a dynamic integer tuple, or a compiled static tiler "@name" (STATIC_TILERS below; the Python
// side keeps the same table in gen_cases.py).
#include "dynamic.hpp"

namespace {

using namespace cute;
using oracle::LayoutProfiles;
using oracle::OperandProfiles;

template <class F>
bool with_static_tiler(std::string const& name, F&& f) {
  if (name == "@2") { f(Int<2>{}); return true; }
  if (name == "@4") { f(Int<4>{}); return true; }
  if (name == "@(2,4)") { f(make_tile(Int<2>{}, Int<4>{})); return true; }
  if (name == "@(4,_)") { f(make_tile(Int<4>{}, _)); return true; }
  if (name == "@(_,2)") { f(make_tile(_, Int<2>{})); return true; }
  if (name == "@L4:2") { f(Layout<_4, _2>{}); return true; }
  if (name == "@(L2:2,L2:1)") { f(make_tile(Layout<_2, _2>{}, Layout<_2, _1>{})); return true; }
  return false;
}

template <class A, class T>
constexpr bool tiler_fits() {
  if constexpr (is_tuple<T>::value) {
    return tuple_size<T>::value <= A::rank;
  } else {
    return true;
  }
}

// Call f(tiler) for a dynamic integer tuple, a static tiler, or (when allowed) a dynamic layout.
template <bool AllowLayout, class F>
bool with_tiler(std::string const& arg, F&& f) {
  if (!arg.empty() && arg[0] == '@') return with_static_tiler(arg, f);
  if (arg.find(':') != std::string::npos) {
    if constexpr (AllowLayout) {
      return oracle::with_layout<OperandProfiles>(arg, f);
    } else {
      return false;
    }
  }
  return oracle::with_int_tuple<OperandProfiles>(arg, f);
}

template <class T>
constexpr bool has_underscore_v = cute::has_underscore<T>::value;

bool unary(std::string const& id, std::string const& op, std::vector<std::string> const& args) {
  if (args.size() != 1) return false;
  bool known = true;
  bool ok = oracle::with_layout<LayoutProfiles>(args[0], [&](auto a) {
    char const* c = id.c_str();
    if (op == "layout") oracle::emit(c, a);
    else if (op == "coalesce") oracle::emit(c, coalesce(a));
    else if (op == "filter") oracle::emit(c, filter(a));
    else if (op == "filter_zeros") oracle::emit(c, filter_zeros(a));
    else if (op == "flatten") oracle::emit(c, flatten(a));
    else if (op == "size") oracle::emit(c, size(a));
    else if (op == "cosize") oracle::emit(c, cosize(a));
    else if (op == "make_layout_shape") oracle::emit(c, make_layout(shape(a)));
    else if (op == "make_layout_right") oracle::emit(c, make_layout(shape(a), LayoutRight{}));
    else if (op == "make_ordered_layout") oracle::emit(c, make_ordered_layout(shape(a), stride(a)));
    else if (op == "make_layout_like") oracle::emit(c, make_layout_like(a));
    else if (op == "make_fragment_like") oracle::emit(c, make_fragment_like(a));
    else if (op == "right_inverse") oracle::emit(c, right_inverse(a));
    else if (op == "complement") {
      using F = decltype(filter(a));
      if constexpr (F::rank == 1) oracle::emit(c, complement(a));
      else oracle::emit_error(c, "complement: dynamic strides need rank 1");
    }
    else known = false;
  });
  return ok && known;
}

bool compose(std::string const& id, std::string const& op, std::vector<std::string> const& args) {
  if (args.size() != 2 || op != "composition") return false;
  return oracle::with_layout<LayoutProfiles>(args[0], [&](auto a) {
    using A = decltype(a);
    bool ok_b = with_tiler<true>(args[1], [&](auto b) {
      if constexpr (!tiler_fits<A, decltype(b)>()) {
        oracle::emit_error(id.c_str(), "tiler has more modes than the layout");
      } else {
        oracle::emit(id.c_str(), composition(a, b));
      }
    });
    if (!ok_b) oracle::emit_error(id.c_str(), "unsupported right operand");
  });
}

// Dynamic layouts are not tilers here: CuTe has no complement of a dynamic tiler of rank > 1.
// "_" in a tiler only for logical_divide (zip2_by needs a rank-2 mode there).
bool divide(std::string const& id, std::string const& op, std::vector<std::string> const& args) {
  if (args.size() != 2) return false;
  if (op != "logical_divide" && op != "zipped_divide" && op != "tiled_divide") return false;
  return oracle::with_layout<LayoutProfiles>(args[0], [&](auto a) {
    using A = decltype(a);
    bool ok_b = with_tiler<false>(args[1], [&](auto b) {
      using B = decltype(b);
      char const* c = id.c_str();
      if constexpr (!tiler_fits<A, B>()) {
        oracle::emit_error(c, "tiler has more modes than the layout");
      } else if (op == "logical_divide") {
        oracle::emit(c, logical_divide(a, b));
      } else if constexpr (has_underscore_v<B>) {
        oracle::emit_error(c, "_ in a zipped tiler");
      } else if (op == "zipped_divide") {
        oracle::emit(c, zipped_divide(a, b));
      } else {
        oracle::emit(c, tiled_divide(a, b));
      }
    });
    if (!ok_b) oracle::emit_error(id.c_str(), "unsupported right operand");
  });
}

bool products(std::string const& id, std::string const& op, std::vector<std::string> const& args) {
  if (args.size() != 2) return false;
  bool known = true;
  // The block must stay rank-1 after filtering (CuTe's complement of dynamic strides).
  bool ok = oracle::with_layout<std::tuple<oracle::P0>>(args[0], [&](auto a) {
    bool ok_b = oracle::with_layout<std::tuple<oracle::P0>>(args[1], [&](auto b) {
      char const* c = id.c_str();
      if (op == "logical_product") oracle::emit(c, logical_product(a, b));
      else if (op == "blocked_product") oracle::emit(c, blocked_product(a, b));
      else known = false;
    });
    if (!ok_b) known = false;
  });
  return ok && known;
}

ORACLE_DYNAMIC(unary);
ORACLE_DYNAMIC(compose);
ORACLE_DYNAMIC(divide);
ORACLE_DYNAMIC(products);

}  // namespace
