#include "core/data/unicode.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace comera::unicode {
namespace {

struct CodeRange {
  char32_t first, last;
};
struct CodeMap {
  char32_t from, to;
};
struct CodeMultiMap {
  char32_t from;
  char32_t to[3];  // 0-padded
};

#include "core/data/unicode_tables.inc"

// Entry for `c` in a table sorted by `from`, or nullptr.
template <class Map, size_t N>
const Map* find(const Map (&table)[N], char32_t c) {
  auto it = std::lower_bound(std::begin(table), std::end(table), c,
                             [](const Map& m, char32_t value) { return m.from < value; });
  return it != std::end(table) && it->from == c ? &*it : nullptr;
}

template <size_t N>
bool in(const CodeRange (&table)[N], char32_t c) {
  auto it = std::upper_bound(std::begin(table), std::end(table), c,
                             [](char32_t value, const CodeRange& r) { return value < r.first; });
  return it != std::begin(table) && c <= std::prev(it)->last;
}

constexpr char32_t kReplacement = 0xFFFD;

// Hangul syllables decompose algorithmically (Unicode ch. 3.12) into conjoining jamo.
constexpr char32_t kHangulFirst = 0xAC00, kJamoL = 0x1100, kJamoV = 0x1161, kJamoT = 0x11A7;
constexpr char32_t kHangulCount = 11172, kJamoVCount = 21, kJamoTCount = 28;

bool is_mark(char32_t c) { return in(kNonspacingMark, c); }

// Latin, Greek and Cyrillic letters: the cased letters the final-sigma rule looks for.
bool is_cased(char32_t c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= 0x00C0 && c <= 0x024F && c != 0x00D7 && c != 0x00F7) ||
         (c >= 0x0370 && c <= 0x04FF && !is_mark(c)) || (c >= 0x1E00 && c <= 0x1FFF);
}

void append_fold(std::u32string& out, char32_t c) {
  if (c >= 'A' && c <= 'Z') {  // ASCII without a table search
    out += static_cast<char32_t>(c + ('a' - 'A'));
  } else if (c < 0x80) {
    out += c;
  } else if (c >= kHangulFirst && c < kHangulFirst + kHangulCount) {
    const char32_t s = c - kHangulFirst, t = s % kJamoTCount;
    out += kJamoL + s / (kJamoVCount * kJamoTCount);
    out += kJamoV + (s % (kJamoVCount * kJamoTCount)) / kJamoTCount;
    if (t) out += kJamoT + t;
  } else if (const auto* one = find(kFold, c)) {
    out += one->to;
  } else if (const auto* many = find(kFoldMulti, c)) {
    for (char32_t d : many->to)
      if (d) out += d;
  } else if (!is_mark(c)) {
    out += c;
  }
}

}  // namespace

std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char b = s[i];
    int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    char32_t c = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    bool ok = len > 0 && i + len <= n;
    for (int k = 1; ok && k < len; ++k) {
      ok = (s[i + k] & 0xC0) == 0x80;
      c = (c << 6) | (s[i + k] & 0x3F);
    }
    // Reject overlong forms, surrogates and values past U+10FFFF.
    static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && c >= kMin[len] && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF);
    out += ok ? c : kReplacement;
    i += ok ? len : 1;
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string encode_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) append_utf8(out, c);
  return out;
}

// ASCII answers come without a table search: most text is ASCII.
bool is_whitespace(char32_t c) {
  if (c < 0x80) return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  return in(kSpaceSeparator, c);
}

bool is_control(char32_t c) {
  if (c < 0x80) return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F;
  return in(kControl, c);
}

bool is_punctuation(char32_t c) {
  // BERT counts all non-alphanumeric ASCII as punctuation ("$", "^", "`" are symbols in Unicode).
  if (c < 0x80)
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
  return in(kPunctuation, c);
}

bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::u32string lower_strip_accents(std::u32string_view token) {
  // Python's lower() maps capital sigma to final sigma at the end of a word (Final_Sigma);
  // here "word" is approximated by the cased letters of the folded blocks, skipping marks.
  auto cased_before = [&](size_t i) {
    while (i-- > 0)
      if (!is_mark(token[i])) return is_cased(token[i]);
    return false;
  };
  auto cased_after = [&](size_t i) {
    while (++i < token.size())
      if (!is_mark(token[i])) return is_cased(token[i]);
    return false;
  };
  std::u32string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == 0x03A3 && cased_before(i) && !cased_after(i))
      out += char32_t{0x03C2};
    else
      append_fold(out, token[i]);
  }
  return out;
}

}  // namespace comera::unicode
