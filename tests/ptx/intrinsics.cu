#include <cstdio>
__global__ void intr(unsigned* out, unsigned long long* out64, const unsigned* in) {
  unsigned t = threadIdx.x, x = in[t], y = in[t + 64];
  unsigned long long X = ((unsigned long long)x << 32) | y;
  __syncwarp();
  unsigned ballot = __ballot_sync(0xffffffffu, x & 1);
  unsigned same = __match_any_sync(0xffffffffu, x & 3);
  unsigned long long same64 = __match_any_sync(0xffffffffu, X & 7ull);
  unsigned rot = __funnelshift_l(x, y, t);
  unsigned rotc = __funnelshift_rc(x, y, t);
  unsigned long long hi = __umul64hi(X, X + 12345);
  long long shi = __mul64hi((long long)X, -(long long)y);
  unsigned perm = __byte_perm(x, y, t * 0x1111u);
  int ffs = __ffs(x), clzl = __clzll(X);
  unsigned red = __reduce_add_sync(0xffffffffu, x & 0xff);
  atomicMax(out + 500, x);
  unsigned old = atomicCAS(out + 501, 0u, t + 1);
  out[t * 7 + 0] = ballot; out[t * 7 + 1] = same; out[t * 7 + 2] = rot; out[t * 7 + 3] = rotc;
  out[t * 7 + 4] = perm; out[t * 7 + 5] = ffs + 64 * clzl; out[t * 7 + 6] = red + (old != 0 ? 0 : 1000);
  out64[t * 3 + 0] = hi; out64[t * 3 + 1] = (unsigned long long)shi; out64[t * 3 + 2] = same64;
}
