// CuTe oracle: make_tiled_copy_C reports (see tv_cases.py, CopyCConfig).
//
// Inlined after tv_report.hpp (whose helpers it uses) as the preamble of the "tvc" case groups. A
// report is one JSON record {"id":..., "static":{...}, "threads":[{...}, ...]}: "static" holds the
// TiledCopy's Tiler_MN, TiledLayout_TV, get_layoutS_TV and get_layoutD_TV; each thread record (a
// threads the case lists, "t") holds, for the shared C tensor sC and the accumulator fragment acc:
//   sS / aS  partition_S(sC) layout / element offsets     sD / aD  partition_D(sC) likewise
//   vS / lS  retile_S(acc) layout / register slots        vD / lD  retile_D(acc) likewise
namespace tv {

template <class TC, class MMA, class LC, class CC, class SMN>
Report copy_c_report(MMA mma, LC lc, CC cc, SMN shape_mn, std::vector<int> threads) {
  return Report{[=]() {
    using namespace cute;
    static TC bufC[cosize_v<LC>];
    auto cpC = make_tiled_copy_C(cc, mma);
    printf(",\"static\":{");
    text("tiler", typename decltype(cpC)::Tiler_MN{}, true);
    text("tv", typename decltype(cpC)::TiledLayout_TV{});
    text("layoutS_TV", cpC.get_layoutS_TV());
    text("layoutD_TV", cpC.get_layoutD_TV());
    printf("},\"threads\":[");
    bool first = true;
    for (int t : threads) {
      auto tc = cpC.get_slice(t);
      auto sC = make_tensor(make_smem_ptr(bufC), lc);
      auto acc = partition_fragment_C(mma, shape_mn);
      printf(first ? "{" : ",{");
      first = false;
      printf("\"t\":%d", t);
      auto ps = tc.partition_S(sC);
      auto pd = tc.partition_D(sC);
      auto vs = tc.retile_S(acc);
      auto vd = tc.retile_D(acc);
      text("sS", ps.layout());
      offsets("aS", ps, bufC);
      text("sD", pd.layout());
      offsets("aD", pd, bufC);
      text("vS", vs.layout());
      offsets("lS", vs, acc.data());
      text("vD", vd.layout());
      offsets("lD", vd, acc.data());
      printf("}");
    }
    printf("]");
  }};
}

}  // namespace tv
