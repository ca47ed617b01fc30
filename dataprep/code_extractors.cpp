#include "dataprep/code_extractors.h"

#include "core/util/error.h"

#include <algorithm>
#include <regex>
#include <set>

namespace comera {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = s.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(s.substr(start));
      break;
    }
    lines.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool slash_comments(const std::string& language) { return language != "ruby" && language != "python"; }
bool hash_comments(const std::string& language) {
  return language == "ruby" || language == "php" || language == "python";
}

// Where the comment or literal starting at s[i] ends (one past it), or i when none starts there.
size_t skip_literal(const std::string& language, const std::string& s, size_t i) {
  const size_t n = s.size();
  const char c = s[i];
  const char next = i + 1 < n ? s[i + 1] : '\0';
  if ((slash_comments(language) && c == '/' && next == '/') ||
      (hash_comments(language) && c == '#' && !(language == "php" && next == '['))) {
    const size_t end = s.find('\n', i);
    return end == std::string::npos ? n : end;
  }
  if (slash_comments(language) && c == '/' && next == '*') {
    const size_t end = s.find("*/", i + 2);
    return end == std::string::npos ? n : end + 2;
  }
  if (c == '"' || c == '\'' || c == '`') {
    // Quotes end at the line's end (only backquoted strings span lines), so that a stray quote
    // (a Ruby $' or a regular expression) blanks no more than the rest of its line.
    const bool escapes = !(c == '`' && language == "go");
    size_t j = i + 1;
    while (j < n && s[j] != c && (c == '`' || s[j] != '\n')) j += (escapes && s[j] == '\\') ? 2 : 1;
    return j < n && s[j] == '\n' ? j : std::min(n, j + 1);
  }
  return i;
}

// Comments and literals replaced by spaces, newlines kept: positions and lines are unchanged.
std::string blank_literals(const std::string& language, const std::string& s) {
  std::string out = s;
  for (size_t i = 0; i < s.size();) {
    const size_t end = skip_literal(language, s, i);
    if (end == i) {
      ++i;
      continue;
    }
    for (size_t k = i; k < end; ++k)
      if (out[k] != '\n') out[k] = ' ';
    i = end;
  }
  return out;
}

// The end (one past the closing brace) of the body whose header ends at `from`, or npos: the
// first '{' outside the parameters' parentheses, a ';' before it meaning no body.
size_t body_end(const std::string& masked, size_t from) {
  int parens = 0;
  size_t i = from;
  for (; i < masked.size(); ++i) {
    const char c = masked[i];
    if (c == '(') ++parens;
    else if (c == ')') --parens;
    else if (parens <= 0 && c == ';') return std::string::npos;
    else if (parens <= 0 && c == '{') break;
  }
  int depth = 0;
  for (; i < masked.size(); ++i) {
    if (masked[i] == '{') ++depth;
    else if (masked[i] == '}' && --depth == 0) return i + 1;
  }
  return std::string::npos;
}

// Text of a /** ... */ block without its markers and leading asterisks.
std::string clean_block_comment(const std::string& block) {
  std::string body = block.substr(3, block.size() >= 5 ? block.size() - 5 : 0);
  std::string out;
  for (auto line : split_lines(body)) {
    line = trim(line);
    if (!line.empty() && line[0] == '*') line = line.substr(line.size() > 1 && line[1] == ' ' ? 2 : 1);
    out += line + "\n";
  }
  return trim(out);
}

// Text of the unbroken `marker` comment lines that end on the line before `header_line`.
std::string line_comment_above(const std::vector<std::string>& lines, size_t header_line,
                               const std::string& marker) {
  std::vector<std::string> found;
  for (size_t k = header_line; k-- > 0;) {
    const auto t = trim(lines[k]);
    if (t.rfind(marker, 0) != 0) break;
    auto text = t.substr(marker.size());
    if (!text.empty() && text[0] == ' ') text = text.substr(1);
    found.push_back(text);
  }
  std::reverse(found.begin(), found.end());
  std::string out;
  for (const auto& l : found) out += l + "\n";
  return trim(out);
}

// The /** */ block ending on the line above line `header_line` (annotations or attributes may
// stand between).
std::string block_comment_above(const std::string& source, const std::vector<std::string>& lines,
                                size_t header_line) {
  size_t k = header_line;
  while (k > 0) {
    const auto t = trim(lines[k - 1]);
    if (!t.empty() && (t[0] == '@' || t.rfind("#[", 0) == 0)) {
      --k;
      continue;
    }
    break;
  }
  // Offset of the start of line k.
  size_t offset = 0;
  for (size_t j = 0; j < k; ++j) offset += lines[j].size() + 1;
  size_t end = offset;
  while (end > 0 && is_space(source[end - 1])) --end;
  if (end < 2 || source.compare(end - 2, 2, "*/") != 0) return "";
  const size_t start = source.rfind("/*", end - 2);
  if (start == std::string::npos || source.compare(start, 3, "/**") != 0 || end - start < 5) return "";
  // The comment must end on the line above (a blank line between breaks the link).
  if (std::count(source.begin() + static_cast<std::ptrdiff_t>(end), source.begin() + static_cast<std::ptrdiff_t>(offset), '\n') > 1)
    return "";
  return clean_block_comment(source.substr(start, end - start));
}

const std::set<std::string>& statement_words() {
  static const std::set<std::string> words{"if", "for", "while", "switch", "catch", "return", "new",
                                           "else", "case", "throw", "assert", "yield", "do", "try",
                                           "synchronized", "function", "await", "typeof", "delete"};
  return words;
}

std::string first_word(const std::string& line) {
  const auto t = trim(line);
  size_t e = 0;
  while (e < t.size() && is_word(t[e])) ++e;
  return t.substr(0, e);
}

// The header's function name in a line of masked code, or "" when the line is no header.
std::string header_name(const std::string& language, const std::string& line) {
  static const std::regex go(R"(^func\s+(\(\s*(?:\w+\s+)?\*?\s*(\w+)[^)]*\)\s*)?(\w+)\s*[\[(])");
  static const std::regex java(
      R"(^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|protected|private|static|final|abstract|synchronized|native|default|strictfp)\s+)*(?:<[^>]*>\s+)?(?:[\w.]+(?:<[\w<>,.?\s\[\]]*>)?(?:\[\])*\s+)?(\w+)\s*\()");
  static const std::regex js_function(R"(^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([\w$]+)\s*\()");
  static const std::regex js_assigned(
      R"(^\s*(?:(?:var|let|const)\s+)?(?:[\w$]+\.)*([\w$]+)\s*[:=]\s*(?:async\s+)?function\b\s*\*?\s*[\w$]*\s*\()");
  static const std::regex js_method(R"(^\s*(?:static\s+)?(?:async\s+)?\*?\s*([\w$]+)\s*\([^()]*\)\s*\{)");
  static const std::regex php(
      R"(^\s*(?:(?:public|protected|private|static|final|abstract)\s+)*function\s+&?\s*(\w+)\s*\()");
  // Cheap tests first: most lines are no header, and minified code is not read.
  if (line.size() > 400 || line.find('(') == std::string::npos) return "";
  if ((language == "go" && line.rfind("func", 0) != 0) ||
      (language == "php" && line.find("function") == std::string::npos))
    return "";
  std::smatch m;
  if (language == "go") {
    if (!std::regex_search(line, m, go)) return "";
    return m[2].matched ? m[2].str() + "." + m[3].str() : m[3].str();
  }
  if (language == "java") {
    if (statement_words().count(first_word(line)) || !std::regex_search(line, m, java)) return "";
    return statement_words().count(m[1].str()) ? "" : m[1].str();
  }
  if (language == "javascript") {
    if (std::regex_search(line, m, js_function) || std::regex_search(line, m, js_assigned)) return m[1].str();
    if (statement_words().count(first_word(line)) || !std::regex_search(line, m, js_method)) return "";
    return statement_words().count(m[1].str()) ? "" : m[1].str();
  }
  return std::regex_search(line, m, php) ? m[1].str() : "";
}

std::vector<SourceFunction> extract_braced(const std::string& language, const std::string& source) {
  const auto masked = blank_literals(language, source);
  const auto lines = split_lines(source), masked_lines = split_lines(masked);
  std::vector<SourceFunction> out;
  size_t offset = 0;
  for (size_t k = 0; k < masked_lines.size(); offset += masked_lines[k].size() + 1, ++k) {
    const auto name = header_name(language, masked_lines[k]);
    if (name.empty()) continue;
    const size_t paren = masked.find('(', offset);
    const size_t end = paren == std::string::npos ? paren : body_end(masked, paren);
    if (end == std::string::npos) continue;
    SourceFunction f;
    f.name = name;
    f.line = static_cast<int64_t>(k) + 1;
    f.code = source.substr(offset, end - offset);
    f.doc = language == "go" ? line_comment_above(lines, k, "//") : block_comment_above(source, lines, k);
    out.push_back(std::move(f));
  }
  return out;
}

size_t indent_of(const std::string& line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  return i;
}

std::vector<SourceFunction> extract_ruby(const std::string& source) {
  static const std::regex def(R"(^(\s*)def\s+((?:self\.)?[\w.]+[?!=]?|[\[\]<>=+\-*/%!~]+))");
  static const std::regex end_line(R"(^\s*end\b)");
  static const std::regex one_line(R"((;\s*end|\bend)$)"), endless(R"(^def\s+[^\s(]+(?:\([^)]*\)\s*|\s+)=(?![=~>]))");
  const auto lines = split_lines(source), masked = split_lines(blank_literals("ruby", source));
  std::vector<SourceFunction> out;
  for (size_t k = 0; k < masked.size(); ++k) {
    std::smatch m;
    if (!std::regex_search(masked[k], m, def)) continue;
    const auto header = trim(masked[k]);
    // One-line and endless definitions have no body of their own lines.
    if (std::regex_search(header, one_line) || std::regex_search(header, endless)) continue;
    const size_t indent = indent_of(lines[k]);
    size_t e = k + 1;
    for (; e < masked.size(); ++e)
      if (std::regex_search(masked[e], end_line) && indent_of(masked[e]) == indent) break;
    if (e == masked.size()) continue;
    SourceFunction f;
    f.name = m[2].str();
    f.line = static_cast<int64_t>(k) + 1;
    for (size_t j = k; j <= e; ++j) f.code += lines[j] + (j < e ? "\n" : "");
    f.doc = line_comment_above(lines, k, "#");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

const std::vector<std::string>& heuristic_languages() {
  static const std::vector<std::string> languages{"go", "java", "javascript", "php", "ruby"};
  return languages;
}

std::vector<SourceFunction> extract_functions(const std::string& language, const std::string& source) {
  const auto& known = heuristic_languages();
  if (std::find(known.begin(), known.end(), language) == known.end())
    throw Error("no function extractor for language '" + language + "' (go, java, javascript, php, ruby)");
  if (language == "ruby") return extract_ruby(source);
  return extract_braced(language, source);
}

std::vector<std::string> code_tokens(const std::string& language, const std::string& code) {
  std::vector<std::string> tokens;
  for (size_t i = 0; i < code.size();) {
    const char c = code[i];
    if (is_space(c)) {
      ++i;
      continue;
    }
    const size_t end = skip_literal(language, code, i);
    if (end != i) {
      if (c == '"' || c == '\'' || c == '`') tokens.push_back(code.substr(i, end - i));
      i = end;
      continue;
    }
    size_t j = i;
    while (j < code.size() && is_word(code[j])) ++j;
    if (j == i) j = i + 1;
    tokens.push_back(code.substr(i, j - i));
    i = j;
  }
  return tokens;
}

std::vector<std::string> doc_tokens(const std::string& doc) {
  std::string paragraph;
  for (const auto& line : split_lines(doc)) {
    const auto t = trim(line);
    if (t.empty() || t[0] == '@') break;
    paragraph += t + " ";
  }
  std::vector<std::string> tokens;
  for (size_t i = 0; i < paragraph.size();) {
    if (is_space(paragraph[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < paragraph.size() && is_word(paragraph[j])) ++j;
    if (j == i) j = i + 1;
    tokens.push_back(paragraph.substr(i, j - i));
    i = j;
  }
  return tokens;
}

}  // namespace comera
