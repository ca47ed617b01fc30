#pragma once
// Running a helper program (no shell) and reading its output line by line as it comes.
#include <functional>
#include <string>
#include <vector>

namespace comera {

// Runs argv[0] (looked up on PATH) with `input` as its standard input and calls on_line for each
// line of its standard output; its standard error goes to ours. Throws comera::Error when it
// cannot start or exits non-zero, naming `what` (e.g. "python3 reading the sources").
void run_lines(const std::vector<std::string>& argv, const std::string& input,
               const std::function<void(const std::string& line)>& on_line,
               const std::string& what);

}  // namespace comera
