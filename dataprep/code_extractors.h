#pragma once
// Functions and their doc comments found in a source file of Go, Java, JavaScript, PHP or Ruby
// by a simple, documented heuristic per language (docs/code-pretraining.md), not a parser:
//   - comments and string literals are blanked first, so braces and keywords are seen in code
//     only (JavaScript regular-expression literals and heredocs are not recognised);
//   - a function starts at a line that looks like a declaration (Go `func`, Java a method or
//     constructor header, JavaScript `function` / `x = function` / `x: function` / a class
//     method, PHP `function`, Ruby `def`) and, for the brace languages, ends at the brace that
//     closes the first `{` after its parameters (a `;` first means no body: skipped); a Ruby
//     `def` ends at the first `end` indented as the `def` is;
//   - its doc comment is the comment right above it: a `/** ... */` block (Java, JavaScript,
//     PHP; annotations and attributes between are allowed) or the unbroken `//` (Go) or `#`
//     (Ruby) lines.
// Python goes through python3's own parser instead (docstring_pairs.h).
#include <cstdint>
#include <string>
#include <vector>

namespace comera {

struct SourceFunction {
  std::string name;  // Go methods as Receiver.Name
  int64_t line = 0;  // 1-based line of the header
  std::string code;  // from the start of the header line to the end of the body, as in the file
  std::string doc;   // the doc comment's text without its markers; "" when there is none
};

// The languages extract_functions reads.
const std::vector<std::string>& heuristic_languages();

// Every function of `source` with a body, in file order. An unknown language is an error.
std::vector<SourceFunction> extract_functions(const std::string& language, const std::string& source);

// CodeSearchNet-like tokens: identifiers, numbers, each string literal whole, every other
// non-space character alone; comments are left out. Any of the six languages.
std::vector<std::string> code_tokens(const std::string& language, const std::string& code);
// The words and punctuation of a doc comment's first paragraph (up to a blank line or a tag
// line such as `@param`), as CodeSearchNet's docstring_tokens summarise a docstring.
std::vector<std::string> doc_tokens(const std::string& doc);

}  // namespace comera
