#pragma once
// LibTorch 1.13 defaults to one intra-op thread on small machines (TOOLCHAIN.md), so every
// entry point sets the count itself.

namespace comera {

// n <= 0 means all hardware threads. Returns the count in force.
int configure_threads(int n);

}  // namespace comera
