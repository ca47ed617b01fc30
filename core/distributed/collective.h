#pragma once
// The collectives a data-parallel run needs, on PyTorch's c10d: a TCPStore rendezvous served by
// rank 0 (as torchrun's c10d backend does) and a Gloo process group over it (CPU tensors). The
// only file that includes c10d's headers, so a LibTorch without them (or a later one with other
// internals) changes this file alone. A collective that a lost rank breaks, or that a rank does
// not join within the timeout, throws LostRank naming the ranks that stopped answering.
#include "core/distributed/world.h"
#include "core/util/error.h"

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace comera {

class LostRank : public Error {
 public:
  using Error::Error;
};

// What the collectives cost so far: calls, bytes handed to all-reduce, seconds waited.
struct CommStats {
  int64_t all_reduces = 0;
  int64_t all_reduce_bytes = 0;
  double all_reduce_seconds = 0;
};

// True when this build has c10d with Gloo (Debian's LibTorch with libgloo-dev).
bool collectives_available();

class Collective {
 public:
  // Rendezvous of all world.size ranks; throws when one does not arrive within `timeout`.
  Collective(const World& world, std::chrono::milliseconds timeout);
  ~Collective();
  Collective(const Collective&) = delete;
  Collective& operator=(const Collective&) = delete;

  const World& world() const { return world_; }
  // Rank 0's values into every rank's tensors (CPU, contiguous), in place.
  void broadcast(std::vector<at::Tensor>& tensors);
  // Element-wise sum (or max) over the ranks, in place (CPU, contiguous).
  void all_reduce(at::Tensor& tensor, bool max = false);
  // Each rank's 1-D tensor (any length, one dtype) concatenated in rank order.
  at::Tensor all_gather(const at::Tensor& tensor);
  void barrier();
  const CommStats& stats() const { return stats_; }

 private:
  struct Impl;
  // Finds which ranks stopped answering (a roll call through the store) and throws LostRank.
  [[noreturn]] void lost(const std::string& during, const std::string& error);

  World world_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<Impl> impl_;  // shared with the rendezvous thread, which may outlive a timeout
  CommStats stats_;
  int64_t calls_ = 0;
};

}  // namespace comera
