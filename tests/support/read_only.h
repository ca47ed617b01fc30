#pragma once
// Runs the comera CLI while a file or folder is read-only. Tests often run as root, where chmod
// stops no write: there the target becomes a read-only bind mount in a private mount namespace
// (gone when the command ends); for other users chmod does. Cases that use it carry the tag
// [readonly]: ctest skips them, counted, where can_make_read_only.sh says neither way works.
#include "tests/support/cli_process.h"

#include <unistd.h>

#include <optional>
#include <string>

namespace comera::testing {

// `comera ARGS` (shell text without single quotes) with `target` read-only; nullopt where this
// machine allows neither way (root without mount rights).
inline std::optional<CliResult> run_cli_read_only(const std::string& target,
                                                  const std::string& args) {
  const std::string cli = cli_path() + " " + args;
  if (geteuid() != 0)
    return run_process({"/bin/sh", "-c",
                        "chmod a-w " + target + " && " + cli + "; rc=$?; chmod u+w " + target +
                            "; exit $rc"},
                       "comera", ErrorOutput::Merge);
  const auto r = run_process(
      {"/bin/sh", "-c",
       "unshare -m sh -c 'mount --bind " + target + " " + target + " && mount -o remount,ro,bind " +
           target + " " + target + " || exit 99; exec " + cli + "'"},
      "comera", ErrorOutput::Merge);
  if (r.status == 99 || r.status == 127) return std::nullopt;
  return r;
}

}  // namespace comera::testing
