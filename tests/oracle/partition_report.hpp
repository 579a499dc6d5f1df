// CuTe oracle: tensors made by local_tile / local_partition (see partition_cases.py).
//
// Inlined as the preamble of the "part" case groups, so that its text is part of every TU's cache
// key. A report is one JSON record {"id":..., "items":[{"text":..., "values":[...]}, ...]}: per
// resulting tensor, the print() of its layout and the element offset of each element (in its 1-D
// order) from the start of the tensor it was cut from (the buffer of a memory tensor, the first
// register of a fragment).
#include <cstdio>
#include <functional>

namespace part {

struct Report {
  std::function<void()> body;
};

// A zero-filled buffer of 1 << 17 elements for memory tensors.
template <class T>
T* buf() {
  static T b[1 << 17];
  return b;
}

template <class Tensor, class T>
void item(Tensor const& t, T const* base, bool first) {
  printf(first ? "{\"text\":\"" : ",{\"text\":\"");
  cute::print(t.layout());
  printf("\",\"values\":[");
  for (int j = 0; j < int(cute::size(t)); ++j) {
    printf(j ? ",%ld" : "%ld", long(&t(j) - base));
  }
  printf("]}");
}

// op(t) for the tensor t = make().
template <class Make, class Op>
Report one(Make make, Op op) {
  return Report{[=]() {
    auto t = make();
    item(op(t), cute::raw_pointer_cast(t.data()), true);
  }};
}

// op(t, i) for every i < n (a run-time int, as threadIdx.x) and the tensor t = make().
template <class Make, class Op>
Report each(int n, Make make, Op op) {
  return Report{[=]() {
    auto t = make();
    for (int i = 0; i < n; ++i) {
      item(op(t, i), cute::raw_pointer_cast(t.data()), i == 0);
    }
  }};
}

}  // namespace part

namespace oracle {
inline void emit(const char* id, part::Report const& r) {
  printf("{\"id\":\"%s\",\"items\":[", id);
  r.body();
  printf("]}\n");
}
}  // namespace oracle
