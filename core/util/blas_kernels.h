#pragma once
// Which BLAS kernels this process runs, and switching OpenBLAS to its AVX-512 kernels where the
// CPU has them but OpenBLAS does not pick them itself.
#include <string>

namespace comera {

struct BlasKernels {
  std::string core;       // OpenBLAS's kernel set ("SkylakeX", "Haswell", ...); "" for another BLAS
  std::string chosen_by;  // "comera", "user" (OPENBLAS_CORETYPE given) or "OpenBLAS" (its detection)
  // "OpenBLAS SkylakeX (chosen by comera)", or "not OpenBLAS".
  std::string describe() const;
};

// The kernels this process's OpenBLAS runs (asked through openblas_get_corename).
BlasKernels blas_kernels();

// The OPENBLAS_CORETYPE to force, or "" to keep OpenBLAS's own choice: SkylakeX on a CPU with
// AVX-512 (F, BW, VL, DQ) when OpenBLAS chose a kernel set without it (an OpenBLAS older than the
// CPU falls back to Haswell's AVX2 kernels).
std::string better_openblas_core(bool cpu_has_avx512, const std::string& current_core);

// Call first in main(). OpenBLAS picks its kernels when it is loaded, reading OPENBLAS_CORETYPE
// in a constructor, so setting the variable later is too late: when it is unset and
// better_openblas_core() names a core, this sets it and re-executes /proc/self/exe with the same
// arguments. The child has it set, so this happens once; a user's OPENBLAS_CORETYPE always
// wins, and COMERA_BLAS_SWITCH=off keeps OpenBLAS's own choice without re-executing. Returns
// when nothing needs changing or the re-exec failed.
void use_best_blas_kernels();

}  // namespace comera
