// comera: rank-adaptive tensor-compressed training. Dispatches to registered subcommands.
#include "core/util/blas_kernels.h"
#include "core/util/error.h"
#include "core/util/home_dir.h"
#include "core/util/memory_meter.h"
#include "search/cli/command.h"

#include <iostream>
#include <string>
#include <vector>

namespace {

void list_commands(const std::string& prefix) {
  std::cout << "usage: comera <command> [options]   (comera <command> --help for details)\n\n"
            << "commands:\n";
  for (const auto& [name, cmd] : comera::cli::registry())
    if (name.rfind(prefix, 0) == 0) {
      std::string padded = name;
      padded.resize(std::max<size_t>(22, name.size() + 2), ' ');
      std::cout << "  " << padded << cmd.summary << "\n";
    }
  std::cout << "\nexperiments/ and data/ are read from " << comera::home_dir()
            << " (set COMERA_HOME to use another folder)\n"
            << "On a CPU with AVX-512 whose OpenBLAS picks slower kernels, comera restarts itself once with\n"
            << "OPENBLAS_CORETYPE=SkylakeX (docs/cpu-step.md); COMERA_BLAS_SWITCH=off keeps OpenBLAS's choice\n";
}

}  // namespace

int main(int argc, char** argv) {
  comera::use_best_blas_kernels();  // may re-execute this process, so before anything else
  comera::count_cpu_tensor_memory();  // before any tensor exists: peak tensor memory counts them all
  const auto& commands = comera::cli::registry();
  if (argc < 2 || std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help") {
    list_commands("");
    return argc < 2 ? 1 : 0;
  }
  // Longest match first: "bench layer" before "bench".
  int used = 0;
  const comera::cli::Command* cmd = nullptr;
  if (argc >= 3) {
    auto it = commands.find(std::string(argv[1]) + " " + argv[2]);
    if (it != commands.end()) cmd = &it->second, used = 2;
  }
  if (!cmd) {
    auto it = commands.find(argv[1]);
    if (it != commands.end()) cmd = &it->second, used = 1;
  }
  if (!cmd) {
    const std::string group = std::string(argv[1]) + " ";
    bool is_group = false;
    for (const auto& entry : commands) is_group |= entry.first.rfind(group, 0) == 0;
    if (is_group) {
      const std::string next = argc >= 3 ? argv[2] : "";
      if (next.empty() || next == "-h" || next == "--help") {
        list_commands(group);
        return next.empty() ? 1 : 0;
      }
      std::cerr << "comera: unknown command '" << argv[1] << " " << next << "'; run `comera " << argv[1]
                << " --help` for the list\n";
      return 2;
    }
    std::cerr << "comera: unknown command '" << argv[1] << "'; run `comera --help` for the list\n";
    return 2;
  }
  // The command sees argv[0] = its own name, then its options.
  std::vector<char*> args{argv[0]};
  for (int i = 1 + used; i < argc; ++i) args.push_back(argv[i]);
  try {
    return cmd->run(static_cast<int>(args.size()), args.data());
  } catch (const std::exception& e) {
    std::cerr << "comera " << cmd->name << ": error: " << comera::error_message(e) << "\n";
    return 1;
  }
}
