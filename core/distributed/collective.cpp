#include "core/distributed/collective.h"

#include "core/util/format.h"

#include <ATen/ATen.h>

#include <atomic>
#include <future>
#include <thread>

#ifdef COMERA_WITH_C10D
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif

namespace comera {

namespace {

using Clock = std::chrono::steady_clock;

std::string message_of(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return c->what_without_backtrace();
  return e.what();
}

}  // namespace

#ifdef COMERA_WITH_C10D

bool collectives_available() { return true; }

struct Collective::Impl {
  c10::intrusive_ptr<c10d::TCPStore> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
};

Collective::Collective(const World& world, std::chrono::milliseconds timeout)
    : world_(world), timeout_(timeout) {
  const std::string where = world.master_addr + ":" + std::to_string(world.master_port);
  const std::string who = "rank " + std::to_string(world.rank) + " of " + std::to_string(world.size);
  // The store's own timeout does not cover a peer that accepts the connection and never answers
  // (another program on MASTER_PORT): the rendezvous runs on a thread of its own, waited for here
  // no longer than the timeout. A thread still stuck then is left behind, holding only
  // what it shares with it.
  auto impl = std::make_shared<Impl>();
  auto stage = std::make_shared<std::atomic<int>>(0);  // 0: the store, 1: the process group
  std::packaged_task<void()> connect([impl, stage, world, timeout] {
    c10d::TCPStoreOptions o;
    o.port = static_cast<std::uint16_t>(world.master_port);
    o.isServer = world.is_root();
    o.numWorkers = world.size;
    o.timeout = timeout;
    impl->store = c10::make_intrusive<c10d::TCPStore>(world.master_addr, o);
    *stage = 1;
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(world.master_addr));
    impl->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, world.rank, world.size, options);
  });
  auto done = connect.get_future();
  std::thread(std::move(connect)).detach();
  if (done.wait_for(timeout) != std::future_status::ready)
    throw Error(who + ": the rendezvous at " + where + " (MASTER_ADDR:MASTER_PORT) did not complete in " +
                number_text(std::chrono::duration<double>(timeout).count()) + " s (--timeout): " +
                (*stage == 0 ? "something answers there but does not speak to ranks (is another program "
                               "using MASTER_PORT? choose another), or rank 0 is not running"
                             : "not every rank joined the process group (is every rank running?)"));
  try {
    done.get();
  } catch (const std::exception& e) {
    if (*stage == 1) lost("connecting the process group", message_of(e));
    throw Error(who + ": the rendezvous at " + where + " (MASTER_ADDR:MASTER_PORT) failed: " + message_of(e) +
                (world.is_root() ? " (is the port in use? choose another MASTER_PORT)"
                                 : " (is rank 0 running, and is the address reachable?)"));
  }
  impl_ = std::move(impl);
}

Collective::~Collective() = default;

void Collective::broadcast(std::vector<at::Tensor>& tensors) {
  ++calls_;
  try {
    // One tensor per call: Gloo's broadcast takes one per process and device.
    for (auto& t : tensors) {
      std::vector<at::Tensor> one{t};
      impl_->group->broadcast(one)->wait();
    }
  } catch (const std::exception& e) {
    lost("broadcasting rank 0's parameters", message_of(e));
  }
}

void Collective::all_reduce(at::Tensor& tensor, bool max) {
  ++calls_;
  const auto t0 = Clock::now();
  try {
    std::vector<at::Tensor> one{tensor};
    c10d::AllreduceOptions o;
    o.reduceOp = max ? c10d::ReduceOp(c10d::ReduceOp::MAX) : c10d::ReduceOp(c10d::ReduceOp::SUM);
    impl_->group->allreduce(one, o)->wait();
  } catch (const std::exception& e) {
    lost("an all-reduce", message_of(e));
  }
  ++stats_.all_reduces;
  stats_.all_reduce_bytes += static_cast<int64_t>(tensor.numel() * tensor.element_size());
  stats_.all_reduce_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

at::Tensor Collective::all_gather(const at::Tensor& tensor) {
  auto lengths = at::zeros({world_.size}, at::kLong);
  lengths[world_.rank] = tensor.numel();
  all_reduce(lengths);
  const int64_t longest = lengths.max().item<int64_t>();
  auto padded = at::zeros({longest}, tensor.options());
  padded.narrow(0, 0, tensor.numel()).copy_(tensor.reshape({-1}));
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < world_.size; ++r) out[0].push_back(at::empty_like(padded));
  std::vector<at::Tensor> in{padded};
  ++calls_;
  try {
    impl_->group->allgather(out, in)->wait();
  } catch (const std::exception& e) {
    lost("gathering evaluation scores", message_of(e));
  }
  std::vector<at::Tensor> parts;
  for (int r = 0; r < world_.size; ++r) parts.push_back(out[0][r].narrow(0, 0, lengths[r].item<int64_t>()));
  return at::cat(parts);
}

void Collective::barrier() {
  ++calls_;
  try {
    impl_->group->barrier()->wait();
  } catch (const std::exception& e) {
    lost("a barrier", message_of(e));
  }
}

void Collective::lost(const std::string& during, const std::string& error) {
  // Every survivor checks in under its rank; whoever has not within a few seconds is named.
  const auto grace = std::min<std::chrono::milliseconds>(timeout_, std::chrono::seconds(5));
  std::vector<int> missing;
  std::string store_error;
  try {
    impl_->store->set("comera/roll-call/" + std::to_string(world_.rank), std::vector<uint8_t>{1});
    const auto deadline = Clock::now() + grace;
    do {
      missing.clear();
      for (int r = 0; r < world_.size; ++r)
        if (r != world_.rank && !impl_->store->check({"comera/roll-call/" + std::to_string(r)}))
          missing.push_back(r);
      if (missing.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (Clock::now() < deadline);
  } catch (const std::exception& e) {
    // The store lives in rank 0: without it, rank 0 is the one lost.
    missing = {0};
    store_error = message_of(e);
  }
  std::string names;
  for (const int r : missing) names += (names.empty() ? "" : ", ") + std::to_string(r);
  const std::string who =
      missing.empty() ? "a rank" : (missing.size() == 1 ? "rank " : "ranks ") + names;
  throw LostRank("rank " + std::to_string(world_.rank) + " of " + std::to_string(world_.size) +
                 ": lost " + who + " during " + during + " (collective " + std::to_string(calls_) +
                 "): " + error + (store_error.empty() ? "" : "; the rendezvous store at rank 0: " + store_error) +
                 ". It died, was killed or stopped answering within " +
                 std::to_string(timeout_.count() / 1000) + " s; the run stops here and resumes "
                 "from its checkpoint (--resume)");
}

#else

bool collectives_available() { return false; }

struct Collective::Impl {};

Collective::Collective(const World& world, std::chrono::milliseconds timeout)
    : world_(world), timeout_(timeout) {
  throw Error("this build of comera has no c10d collectives (its LibTorch lacks the Gloo process "
              "group, or the Gloo headers were missing at configure time): install libgloo-dev "
              "(scripts/setup.sh does) and rebuild, or train with one process");
}
Collective::~Collective() = default;
void Collective::broadcast(std::vector<at::Tensor>&) {}
void Collective::all_reduce(at::Tensor&, bool) {}
at::Tensor Collective::all_gather(const at::Tensor& tensor) { return tensor; }
void Collective::barrier() {}
void Collective::lost(const std::string& during, const std::string& error) {
  throw LostRank(during + ": " + error);
}

#endif

}  // namespace comera
