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

// The wide kernels' column blocks of n: fn(nb, tail, col, last) for blocks of 64 columns (nb a
// std::integral_constant<int, 4>, tail std::false_type), then one block of the 1 to 4 vectors
// that hold the rest (tail std::true_type), its last vector's lanes in `last`.
template <typename Fn>
void for_column_blocks(int64_t n, const Fn& fn) {
  constexpr int64_t kBlock = 64;
  int64_t col = 0;
  for (; col + kBlock <= n; col += kBlock)
    fn(std::integral_constant<int, 4>{}, std::false_type{}, col, uint16_t{0xFFFF});
  const int64_t rest = n - col;
  if (rest == 0) return;
  const auto last = static_cast<uint16_t>(rest % 16 ? (1u << (rest % 16)) - 1 : 0xFFFF);
  with_tail_vectors(rest, [&](auto nb) { fn(nb, std::true_type{}, col, last); });
}

}  // namespace comera::thin
