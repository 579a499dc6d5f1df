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
#include <cstdio>
#include <functional>

namespace tv {

struct None {};

struct Report {
  std::function<void()> body;
};

inline void key(const char* k, bool first = false) { printf(first ? "\"%s\":" : ",\"%s\":", k); }

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
  Tensor s = make_tensor(make_smem_ptr(buf), layout);
  Tensor sf = make_tensor(make_smem_ptr(buf), frag_layout);
  auto ident = make_identity_tensor(make_shape(size<0>(layout), size<1>(layout)));
  char k[4] = {'p', name[0], 0, 0};
  if constexpr (Op == 0) {
    auto p = thr.partition_A(s);
    auto f = thr.partition_fragment_A(sf);
    auto cp = make_tiled_copy_A(copy_atom, mma);
    auto tc = cp.get_slice(t);
    auto ps = tc.partition_S(s);
    auto v = tc.retile_D(f);
    k[0] = 'p'; text(k, p.layout());
    k[0] = 'f'; text(k, f.layout());
    k[0] = 's'; text(k, ps.layout());
    k[0] = 'v'; text(k, v.layout());
    k[0] = 'a'; offsets(k, ps, buf);
    k[0] = 'l'; offsets(k, v, f.data());
    k[0] = 'c'; coords(k, thr.partition_A(ident));
  } else {
    auto p = thr.partition_B(s);
    auto f = thr.partition_fragment_B(sf);
    auto cp = make_tiled_copy_B(copy_atom, mma);
    auto tc = cp.get_slice(t);
    auto ps = tc.partition_S(s);
    auto v = tc.retile_D(f);
    k[0] = 'p'; text(k, p.layout());
    k[0] = 'f'; text(k, f.layout());
    k[0] = 's'; text(k, ps.layout());
    k[0] = 'v'; text(k, v.layout());
    k[0] = 'a'; offsets(k, ps, buf);
    k[0] = 'l'; offsets(k, v, f.data());
    k[0] = 'c'; coords(k, thr.partition_B(ident));
  }
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
