#pragma once
// Deletes a folder and everything in it, symbolic links removed rather than followed.
//
// Why not std::filesystem::remove_all: pip's LibTorch 2.x (libtorch.so of PyTorch 2.11) exports
// its own copies of libstdc++'s std::filesystem functions, and a process linked against it can
// bind to them; that copy of remove_all jumps to address 0 (docs/building.md). POSIX nftw has
// no such twin.
#include <string>

namespace comera {

// Removes `path` (a file, link or folder tree). Returns false, leaving what it could not delete,
// if any entry could not be removed; a missing path is not an error.
bool remove_tree(const std::string& path);

}  // namespace comera
