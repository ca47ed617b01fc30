#pragma once
// Compile-time dispatch shared by the thin GEMM kernels (thin_gemm.cpp, thin_gemm_bf16.cpp):
// their register blocks take vector counts and flags as template arguments, so GCC keeps the
// accumulators in registers; these turn run-time sizes into those arguments.
#include <c10/util/Exception.h>

#include <cstdint>
#include <type_traits>

namespace comera::thin {

// Rows per register block when each row holds NV accumulator vectors: MR·NV <= 24 leaves
// registers for the NV loads and the broadcast.
constexpr int block_rows(int nv) { return nv == 1 ? 16 : nv == 2 ? 12 : nv == 3 ? 8 : 6; }

// fn(std::integral_constant<int, rp / 16>) for a padded rank rp of 16, 32, 48 or 64.
template <typename Fn>
void with_vectors(int64_t rp, const Fn& fn) {
  TORCH_CHECK(rp > 0 && rp % 16 == 0 && rp <= 64,
              "thin GEMM: padded rank must be 16, 32, 48 or 64, got ", rp);
  switch (rp / 16) {
    case 1: return fn(std::integral_constant<int, 1>{});
    case 2: return fn(std::integral_constant<int, 2>{});
    case 3: return fn(std::integral_constant<int, 3>{});
    default: return fn(std::integral_constant<int, 4>{});
  }
}

// fn(std::bool_constant<b>).
template <typename Fn>
void with_flag(bool b, const Fn& fn) {
  if (b) return fn(std::true_type{});
  return fn(std::false_type{});
}

// fn(std::integral_constant<int, vectors>) for the 1 to 4 vectors that hold `rest` columns.
template <typename Fn>
void with_tail_vectors(int64_t rest, const Fn& fn) {
  switch ((rest + 15) / 16) {
    case 1: return fn(std::integral_constant<int, 1>{});
    case 2: return fn(std::integral_constant<int, 2>{});
    case 3: return fn(std::integral_constant<int, 3>{});
    default: return fn(std::integral_constant<int, 4>{});
  }
}

}  // namespace comera::thin
