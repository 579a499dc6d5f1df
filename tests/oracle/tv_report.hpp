// CuTe oracle: per-thread reports of tiled MMA / tiled copy partitions (see tests/oracle/README.md).
//
// Inlined as the preamble of the "tv" case groups (tv_cases.py); not a header of its own, so that
// its text is part of every TU's cache key. A report is one JSON record:
//   {"id":..., "static":{...}, "threads":[{...}, ...]}
// "static" holds thread-independent texts (TV layouts, tilers); each thread record holds, per
// operand X in A, B, C:
//   pX  partition_X(sX) layout          fX  partition_fragment_X layout
//   sX  copy partition_S/D(sX) layout   vX  retile_D/S(fragment) layout (the copy view)
//   aX  element offsets (in elements from the buffer start) of the copy partition, in its order
//   lX  register slots of the copy view, in its order
//   cX  (row, col) of each element of partition_X(make_identity_tensor(M, N))
//   iX  print() of partition_X(make_identity_tensor(shape(sX))) (nested coordinates)
//   kX  the calls cute::copy makes for copy(tiled_copy, partition_S(sX), retile_D(fragment)):
//       per call, the byte offsets of its source registers, then of its destination registers
// and per configuration "gemm": the calls cute::gemm(tiled_mma, fA, fB, acc) makes (thread 0):
//       per call, the 32-bit register indices of D, then A, then B, then C.
// Calls are recorded by operations that inherit the real traits (layouts) and log their operands.
#include <cstdio>
#include <functional>
#include <vector>

namespace tv {

struct None {};

inline void key(const char* k, bool first = false) { printf(first ? "\"%s\":" : ",\"%s\":", k); }

// -- recording operations ------------------------------------------------------------------------
inline std::vector<long>& calls() { static std::vector<long> v; return v; }
inline char const*& base(int i) { static char const* p[4]; return p[i]; }
template <class P>
inline void rec(int i, P const* p, long unit) { calls().push_back(long((char const*)p - base(i)) / unit); }

template <class S, class D, int N> struct RecCopyBase;
template <class S, class D> struct RecCopyBase<S, D, 1> {
  static void copy(S const& s, D& d0) { rec(0, &s, 1); rec(1, &d0, 1); }
};
template <class S, class D> struct RecCopyBase<S, D, 2> {
  static void copy(S const& s, D& d0, D& d1) { rec(0, &s, 1); rec(1, &d0, 1); rec(1, &d1, 1); }
};
template <class S, class D> struct RecCopyBase<S, D, 4> {
  static void copy(S const& s, D& d0, D& d1, D& d2, D& d3) {
    rec(0, &s, 1); rec(1, &d0, 1); rec(1, &d1, 1); rec(1, &d2, 1); rec(1, &d3, 1);
  }
};
template <class Real>
struct RecCopy : RecCopyBase<typename cute::remove_extent<typename Real::SRegisters>::type,
                             typename cute::remove_extent<typename Real::DRegisters>::type,
                             cute::extent<typename Real::DRegisters>::value> {
  static_assert(cute::extent<typename Real::SRegisters>::value == 1, "recording copies take one source register");
  using SRegisters = typename Real::SRegisters;
  using DRegisters = typename Real::DRegisters;
  static constexpr int regs = 1 + cute::extent<DRegisters>::value;   // logged offsets per call
};
template <class Atom> struct rec_atom;
template <class Op, class T> struct rec_atom<cute::Copy_Atom<Op, T>> {
  using op = RecCopy<Op>;
  using type = cute::Copy_Atom<op, T>;
};

template <class D, class A, class B, class C, int ND, int NA, int NB, int NC> struct RecMMABase;
// m16n8k16, f32 accumulators
template <class D, class A, class B, class C> struct RecMMABase<D, A, B, C, 4, 4, 2, 4> {
  static void fma(D& d0, D& d1, D& d2, D& d3, A const& a0, A const& a1, A const& a2, A const& a3,
                  B const& b0, B const& b1, C const& c0, C const& c1, C const& c2, C const& c3) {
    rec(0, &d0, 4); rec(0, &d1, 4); rec(0, &d2, 4); rec(0, &d3, 4);
    rec(1, &a0, 4); rec(1, &a1, 4); rec(1, &a2, 4); rec(1, &a3, 4);
    rec(2, &b0, 4); rec(2, &b1, 4);
    rec(3, &c0, 4); rec(3, &c1, 4); rec(3, &c2, 4); rec(3, &c3, 4);
  }
};
// m16n8k16, f16 accumulators
template <class D, class A, class B, class C> struct RecMMABase<D, A, B, C, 2, 4, 2, 2> {
  static void fma(D& d0, D& d1, A const& a0, A const& a1, A const& a2, A const& a3,
                  B const& b0, B const& b1, C const& c0, C const& c1) {
    rec(0, &d0, 4); rec(0, &d1, 4);
    rec(1, &a0, 4); rec(1, &a1, 4); rec(1, &a2, 4); rec(1, &a3, 4);
    rec(2, &b0, 4); rec(2, &b1, 4);
    rec(3, &c0, 4); rec(3, &c1, 4);
  }
};
// m16n8k8, f32 accumulators
template <class D, class A, class B, class C> struct RecMMABase<D, A, B, C, 4, 2, 1, 4> {
  static void fma(D& d0, D& d1, D& d2, D& d3, A const& a0, A const& a1, B const& b0,
                  C const& c0, C const& c1, C const& c2, C const& c3) {
    rec(0, &d0, 4); rec(0, &d1, 4); rec(0, &d2, 4); rec(0, &d3, 4);
    rec(1, &a0, 4); rec(1, &a1, 4);
    rec(2, &b0, 4);
    rec(3, &c0, 4); rec(3, &c1, 4); rec(3, &c2, 4); rec(3, &c3, 4);
  }
};
// m16n8k8, f16 accumulators
template <class D, class A, class B, class C> struct RecMMABase<D, A, B, C, 2, 2, 1, 2> {
  static void fma(D& d0, D& d1, A const& a0, A const& a1, B const& b0, C const& c0, C const& c1) {
    rec(0, &d0, 4); rec(0, &d1, 4);
    rec(1, &a0, 4); rec(1, &a1, 4);
    rec(2, &b0, 4);
    rec(3, &c0, 4); rec(3, &c1, 4);
  }
};
template <class Real>
struct RecMMA : RecMMABase<typename cute::remove_extent<typename Real::DRegisters>::type, typename cute::remove_extent<typename Real::ARegisters>::type,
                           typename cute::remove_extent<typename Real::BRegisters>::type, typename cute::remove_extent<typename Real::CRegisters>::type,
                           cute::extent<typename Real::DRegisters>::value, cute::extent<typename Real::ARegisters>::value,
                           cute::extent<typename Real::BRegisters>::value, cute::extent<typename Real::CRegisters>::value> {
  using DRegisters = typename Real::DRegisters;
  using ARegisters = typename Real::ARegisters;
  using BRegisters = typename Real::BRegisters;
  using CRegisters = typename Real::CRegisters;
  static constexpr int regs = cute::extent<DRegisters>::value + cute::extent<ARegisters>::value +
                              cute::extent<BRegisters>::value + cute::extent<CRegisters>::value;
};
template <class TM> struct rec_mma;
template <class Real, class L, class P>
struct rec_mma<cute::TiledMMA<cute::MMA_Atom<Real>, L, P>> {
  using type = cute::TiledMMA<cute::MMA_Atom<RecMMA<Real>>, L, P>;
};

inline void print_calls(const char* k, int per_call) {
  key(k);
  printf("[");
  auto const& v = calls();
  for (size_t i = 0; i < v.size(); ++i) {
    printf(i == 0 ? "[%ld" : (i % per_call == 0 ? "],[%ld" : ",%ld"), v[i]);
  }
  printf(v.empty() ? "]" : "]]");
}
}  // namespace tv

namespace cute {
template <class Real> struct Copy_Traits<tv::RecCopy<Real>> : Copy_Traits<Real> {};
template <class Real> struct MMA_Traits<tv::RecMMA<Real>> : MMA_Traits<Real> {};
}  // namespace cute

namespace tv {

struct Report {
  std::function<void()> body;
};

template <class X>
void text(const char* k, X const& x, bool first = false) {
  key(k, first);
  printf("\"");
  cute::print(x);
  printf("\"");
}

template <class Tensor, class Base>
void offsets(const char* k, Tensor const& t, Base const* base) {
  key(k);
  printf("[");
  for (int j = 0; j < int(cute::size(t)); ++j) {
    printf(j ? ",%ld" : "%ld", long(&t(j) - base));
  }
  printf("]");
}

template <class Tensor>
void coords(const char* k, Tensor const& t) {
  key(k);
  printf("[");
  for (int j = 0; j < int(cute::size(t)); ++j) {
    auto c = t(j);
    printf(j ? ",[%d,%d]" : "[%d,%d]", int(cute::get<0>(c)), int(cute::get<1>(c)));
  }
  printf("]");
}

// One operand (0 = A, 1 = B) of one thread.
template <int Op, class T, class MMA, class L, class LF, class CA>
void operand(char const* name, MMA const& mma, int t, L const& layout, LF const& frag_layout, CA const& copy_atom,
             T* buf) {
  using namespace cute;
  auto thr = mma.get_slice(t);
  auto part = [&](auto const& x) {
    if constexpr (Op == 0) { return thr.partition_A(x); } else { return thr.partition_B(x); }
  };
  auto tiled_copy = [&](auto const& atom) {
    if constexpr (Op == 0) { return make_tiled_copy_A(atom, mma); } else { return make_tiled_copy_B(atom, mma); }
  };
  Tensor s = make_tensor(make_smem_ptr(buf), layout);
  Tensor sf = make_tensor(make_smem_ptr(buf), frag_layout);
  auto f = [&]() {
    if constexpr (Op == 0) { return thr.partition_fragment_A(sf); } else { return thr.partition_fragment_B(sf); }
  }();
  auto tc = tiled_copy(copy_atom).get_slice(t);
  auto ps = tc.partition_S(s);
  auto v = tc.retile_D(f);
  char k[3] = {'p', name[0], 0};
  k[0] = 'p'; text(k, part(s).layout());
  k[0] = 'f'; text(k, f.layout());
  k[0] = 's'; text(k, ps.layout());
  k[0] = 'v'; text(k, v.layout());
  k[0] = 'a'; offsets(k, ps, buf);
  k[0] = 'l'; offsets(k, v, f.data());
  k[0] = 'c'; coords(k, part(make_identity_tensor(make_shape(size<0>(layout), size<1>(layout)))));
  k[0] = 'i'; text(k, part(make_identity_tensor(shape(layout))));
  auto rcp = tiled_copy(typename rec_atom<CA>::type{});
  auto rtc = rcp.get_slice(t);
  auto rsrc = rtc.partition_S(s);
  auto rdst = rtc.retile_D(f);
  calls().clear();
  base(0) = (char const*)buf;
  base(1) = (char const*)f.data();
  copy(rcp, rsrc, rdst);
  k[0] = 'k'; print_calls(k, rec_atom<CA>::op::regs);
}

// A tiled MMA with copies for A and B (and optionally a store of C through a tiled copy).
template <class TA, class TB, class TC, class MMA, class LA, class LAF, class CA, class LB, class LBF, class CB,
          class SMN, class LC, class CC>
Report mma_report(MMA mma, LA la, LAF laf, CA ca, LB lb, LBF lbf, CB cb, SMN shape_mn, LC lc, CC cc) {
  return Report{[=]() {
    using namespace cute;
    static TA bufA[cosize_v<LA> > cosize_v<LAF> ? cosize_v<LA> : cosize_v<LAF>];
    static TB bufB[cosize_v<LB> > cosize_v<LBF> ? cosize_v<LB> : cosize_v<LBF>];
    printf(",\"static\":{");
    text("layoutA_TV", mma.get_layoutA_TV(), true);
    text("layoutB_TV", mma.get_layoutB_TV());
    text("layoutC_TV", mma.get_layoutC_TV());
    text("vmnk", mma.get_thr_layout_vmnk());
    auto cpA = make_tiled_copy_A(ca, mma);
    auto cpB = make_tiled_copy_B(cb, mma);
    text("tilerA", typename decltype(cpA)::Tiler_MN{});
    text("tvA", typename decltype(cpA)::TiledLayout_TV{});
    text("tilerB", typename decltype(cpB)::Tiler_MN{});
    text("tvB", typename decltype(cpB)::TiledLayout_TV{});
    text("fC", partition_fragment_C(mma, shape_mn).layout());
    text("sLayoutA", la);
    text("sLayoutB", lb);
    {
      using RM = typename rec_mma<MMA>::type;
      RM rmma{};
      auto thr = rmma.get_slice(0);
      auto fA = thr.partition_fragment_A(make_tensor(make_smem_ptr(bufA), laf));
      auto fB = thr.partition_fragment_B(make_tensor(make_smem_ptr(bufB), lbf));
      auto acc = partition_fragment_C(rmma, shape_mn);
      calls().clear();
      base(0) = (char const*)acc.data();
      base(1) = (char const*)fA.data();
      base(2) = (char const*)fB.data();
      base(3) = (char const*)acc.data();
      gemm(rmma, fA, fB, acc);
      using Op = typename decltype(rmma)::MMA_Op;
      print_calls("gemm", Op::regs);
    }
    printf("},\"threads\":[");
    for (int t = 0; t < int(size(mma)); ++t) {
      printf(t ? ",{" : "{");
      printf("\"t\":%d", t);
      operand<0, TA>("A", mma, t, la, laf, ca, bufA);
      operand<1, TB>("B", mma, t, lb, lbf, cb, bufB);
      auto thr = mma.get_slice(t);
      auto identC = make_identity_tensor(shape_mn);
      text("pfC", thr.partition_fragment_C(identC).layout());
      coords("cC", thr.partition_C(identC));
      if constexpr (!cute::is_same<CC, None>::value) {
        static TC bufC[cosize_v<LC>];
        auto acc = partition_fragment_C(mma, shape_mn);
        auto cpC = make_tiled_copy_C(cc, mma);
        auto tc = cpC.get_slice(t);
        auto sC = make_tensor(make_smem_ptr(bufC), lc);
        auto pd = tc.partition_D(sC);
        auto v = tc.retile_S(acc);
        text("sC", pd.layout());
        text("vC", v.layout());
        offsets("aC", pd, bufC);
        offsets("lC", v, acc.data());
        auto rcp = make_tiled_copy_C(typename rec_atom<CC>::type{}, mma);
        auto rtc = rcp.get_slice(t);
        auto rsrc = rtc.retile_S(acc);
        auto rdst = rtc.partition_D(sC);
        calls().clear();
        base(0) = (char const*)acc.data();
        base(1) = (char const*)bufC;
        copy(rcp, rsrc, rdst);
        print_calls("kC", rec_atom<CC>::op::regs);
      }
      printf("}");
    }
    printf("]");
  }};
}

// A tiled copy from make_tiled_copy: partition_S of a source and partition_D of a destination.
template <class T, class Atom, class ThrL, class ValL, class LS, class LD>
Report copy_report(Atom atom, ThrL thr_layout, ValL val_layout, LS ls, LD ld) {
  return Report{[=]() {
    using namespace cute;
    static T bufS[cosize_v<LS>];
    static T bufD[cosize_v<LD>];
    auto tc = make_tiled_copy(atom, thr_layout, val_layout);
    printf(",\"static\":{");
    text("tiler", typename decltype(tc)::Tiler_MN{}, true);
    text("tv", typename decltype(tc)::TiledLayout_TV{});
    text("layoutS_TV", tc.get_layoutS_TV());
    text("layoutD_TV", tc.get_layoutD_TV());
    printf("},\"threads\":[");
    for (int t = 0; t < int(size(tc)); ++t) {
      auto thr = tc.get_slice(t);
      auto ps = thr.partition_S(make_tensor(make_gmem_ptr(bufS), ls));
      auto pd = thr.partition_D(make_tensor(make_smem_ptr(bufD), ld));
      auto frag = make_fragment_like(ps);
      printf(t ? ",{" : "{");
      printf("\"t\":%d", t);
      text("sS", ps.layout());
      text("sD", pd.layout());
      text("fS", frag.layout());
      offsets("aS", ps, bufS);
      offsets("aD", pd, bufD);
      auto rtc = make_tiled_copy(typename rec_atom<Atom>::type{}, thr_layout, val_layout);
      auto rthr = rtc.get_slice(t);
      auto rsrc = rthr.partition_S(make_tensor(make_gmem_ptr(bufS), ls));
      auto rdst = rthr.partition_D(make_tensor(make_smem_ptr(bufD), ld));
      calls().clear();
      base(0) = (char const*)bufS;
      base(1) = (char const*)bufD;
      copy(rtc, rsrc, rdst);
      print_calls("kS", rec_atom<Atom>::op::regs);
      printf("}");
    }
    printf("]");
  }};
}

}  // namespace tv

namespace oracle {
inline void emit(const char* id, tv::Report const& r) {
  printf("{\"id\":\"%s\"", id);
  r.body();
  printf("}\n");
}
}  // namespace oracle
